"""Resolve redirects and link/fact targets in memory that does not grow with the corpus.

Every join of the resolution is an equality of titles. The titles (articles and redirects)
are split into ``P`` partitions by DuckDB's 64-bit ``hash(title) % P``, with ``P`` chosen
from the title count so that one partition holds about :data:`PARTITION_TITLES` titles; the
rows that look a title up (redirect targets, link and fact targets) are split by the same
hash of the title they look up. Equal titles have equal hashes, so each join runs partition
by partition and its hash table holds ``1/P`` of the titles; two titles whose hashes
collide only share a partition, and the join itself compares the strings. Each partition's
``(id, value)`` result goes to a Parquet file; the final order by id is taken in ranges of
:data:`ORDER_IDS` ids, one ``ORDER BY`` each, so a sort holds one range whatever the corpus
(one sort over every row held them all, up to ``memory_limit``: it grew with the corpus).
The wide staged rows (article texts, anchors, fact values) never enter DuckDB: they are
streamed from the staged Parquet in id order, one row group at a time, and zipped with the
sorted resolved column.

The result does not depend on ``P`` (``tests/test_build_resolve.py``), and its bytes are
those of the single-query resolution it replaced (pinned snapshot ids in
``tests/test_build_scale.py``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from wikigym.corpora.tables import ARTICLES, FACTS, LINKS, TableWriter
from wikigym.errors import BuildError

# Titles per partition: the hash tables of one partition's joins stay ~30-60 MB.
PARTITION_TITLES = 1 << 18
RESOLVE_BATCH_ROWS = 16_384
# Ids per range of the final ordering: each range is one DuckDB sort of (id, value) rows
# (ids are dense, so about this many rows, ~20 MB).
ORDER_IDS = 1 << 19


def partitions_for(titles: int, per_partition: int = PARTITION_TITLES) -> int:
    """How many hash partitions keep each one near ``per_partition`` titles (at least 1)."""
    if per_partition < 1:
        raise ValueError(f"per_partition must be >= 1, got {per_partition}")
    return max(1, math.ceil(titles / per_partition))


class _Column:
    """Values of one resolved column, taken in order in slices of any length."""

    def __init__(self, batches: Iterable[pa.RecordBatch], key: str, name: str) -> None:
        self._batches = iter(batches)
        self._key = key
        self._name = name
        self._ids = pa.array([], pa.int64())
        self._values: pa.Array | None = None

    def take(self, n: int) -> tuple[pa.Array, pa.Array]:
        """The next ``n`` (ids, values)."""
        ids, values = [self._ids], [] if self._values is None else [self._values]
        have = len(self._ids)
        while have < n:
            batch = next(self._batches, None)
            if batch is None:
                raise BuildError(f"resolution of {self._name}: {have} rows, expected {n} (a bug)")
            ids.append(batch.column(self._key))
            values.append(batch.column(self._name))
            have += batch.num_rows
        all_ids = pa.concat_arrays([a.cast(pa.int64()) for a in ids])
        all_values = pa.concat_arrays(values)
        self._ids, self._values = all_ids.slice(n), all_values.slice(n)
        return all_ids.slice(0, n), all_values.slice(0, n)

    def finish(self) -> None:
        """Check that every value was taken.

        Raises:
            BuildError: DuckDB returned more rows than were staged (a bug).
        """
        if len(self._ids) or next(self._batches, None) is not None:
            raise BuildError(f"resolution of {self._name}: more rows than staged (a bug)")


class Resolver:
    """The partitioned resolution of one build's staged tables.

    Args:
        con: A DuckDB connection (its memory limit and temp directory bound the sorts).
        stage: The build's staging folder (``articles``, ``redirects``, ``links``,
            ``facts`` ``.parquet``); intermediate files go under ``stage/resolve``.
        parts: Number of hash partitions (>= 1).
        order_ids: Ids per range of the final ordering (default :data:`ORDER_IDS`).
    """

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        stage: Path,
        parts: int,
        order_ids: int | None = None,
        facts_schema: pa.Schema = FACTS,
    ) -> None:
        if parts < 1:
            raise ValueError(f"parts must be >= 1, got {parts}")
        order_ids = ORDER_IDS if order_ids is None else order_ids
        if order_ids < 1:
            raise ValueError(f"order_ids must be >= 1, got {order_ids}")
        self.con = con
        self.stage = stage
        self.parts = parts
        self.order_ids = order_ids
        self.work = stage / "resolve"
        self.facts_schema = facts_schema
        self.work.mkdir()

    # -- files -------------------------------------------------------------------------

    def staged_files(self, name: str) -> list[Path]:
        """The staged files of table ``name`` in id order (facts: the articles', then those
        joined from Wikidata when the build had ``--facts``)."""
        files = [self.stage / f"{name}.parquet"]
        extra = self.stage / f"{name}_wikidata.parquet"
        return [*files, extra] if extra.is_file() else files

    def _staged(self, name: str) -> duckdb.DuckDBPyRelation:
        return self.con.read_parquet([str(f) for f in self.staged_files(name)])

    def redirect_files(self) -> list[str]:
        """The resolved redirect map's files (``title, doc_id``), after :meth:`redirect_map`."""
        return sorted(str(f) for f in (self.work / "m").glob("*.parquet"))

    def _view(self, view: str, rel: duckdb.DuckDBPyRelation, key: str, part: int) -> None:
        """Make ``view`` the rows of ``rel`` whose ``key`` falls in partition ``part``.

        A filtered scan per partition: the inputs are read ``P`` times, but nothing but the
        partition's join is held (DuckDB's partitioned writes buffer every partition).
        """
        self.con.execute(f"DROP VIEW IF EXISTS {view}")
        # The column names are ours (the staged schemas) and the numbers ints: no input.
        rel.filter(f'hash("{key}") % {self.parts} = {int(part)}').create_view(view)

    def _write(self, sql: str, name: str, part: int) -> None:
        out = self.work / name
        out.mkdir(exist_ok=True)
        self.con.sql(sql).write_parquet(str(out / f"{part}.parquet"))

    def _all(self, name: str) -> duckdb.DuckDBPyRelation:
        # The files listed, not globbed: the build folder's name is the user's, and DuckDB's
        # glob would read a backslash or bracket in it as a pattern (a list of existing
        # files is read as named). One scan over the list, not a chain of per-file unions:
        # under the final ORDER BY, the unions ran out of the 128 MB limit at 4.5M passages.
        files = sorted(str(f) for f in (self.work / name).glob("*.parquet"))
        if not files:
            raise BuildError(f"resolution step {name!r} wrote no partition (a bug)")
        return self.con.read_parquet(files)

    # -- steps -------------------------------------------------------------------------

    def redirect_map(self) -> None:
        """Resolve redirect titles to doc ids (at most two hops) into ``m/``.

        One row per redirect title that is not also an article; duplicate redirect titles
        keep the smallest target, so the result does not depend on input order. Two hops:
        MediaWiki itself follows one; double redirects are common in dumps and cheap here.
        """
        articles = self._staged("articles").select("title, doc_id")
        redirects = self._staged("redirects").select("title, target")
        for p in range(self.parts):
            self._view("a_p", articles, "title", p)
            self._view("r_p", redirects, "title", p)
            self._write(
                "SELECT r.title, min(r.target) AS target FROM r_p r "
                "ANTI JOIN a_p a ON a.title = r.title GROUP BY r.title",
                "r1",
                p,
            )
        # The first hop looks each target up among articles and (for the second hop)
        # redirects: r1 by the hash of its target, against partition p of both.
        for p in range(self.parts):
            self._view("a_p", articles, "title", p)
            self._view("g_p", self._all("r1"), "target", p)
            self.con.execute("DROP VIEW IF EXISTS r1_p")
            self.con.read_parquet(str(self.work / "r1" / f"{p}.parquet")).create_view("r1_p")
            self._write(
                "SELECT g.title, a.doc_id AS d1, r2.target AS t2 FROM g_p g "
                "LEFT JOIN a_p a ON a.title = g.target "
                "LEFT JOIN r1_p r2 ON r2.title = g.target",
                "hop1",
                p,
            )
        # The second hop: targets that are redirects, looked up by their own target.
        second = self._all("hop1").filter("d1 IS NULL AND t2 IS NOT NULL")
        for p in range(self.parts):
            self._view("a_p", articles, "title", p)
            self._view("h_p", second, "t2", p)
            self._write(
                "SELECT h.title, a.doc_id FROM h_p h JOIN a_p a ON a.title = h.t2", "hop2", p
            )
        self.con.execute("DROP VIEW IF EXISTS hop1_all")
        self._all("hop1").filter("d1 IS NOT NULL").select("title, d1 AS doc_id").create_view(
            "hop1_all"
        )
        self.con.execute("DROP VIEW IF EXISTS hop2_all")
        self._all("hop2").create_view("hop2_all")
        self._write("SELECT title, doc_id FROM hop1_all UNION ALL SELECT * FROM hop2_all", "m", 0)

    def _lookup(self, table: str, key: str, title: str) -> duckdb.DuckDBPyRelation:
        """``(key, doc_id)`` of every staged ``table`` row, its ``title`` looked up among
        articles and resolved redirects, in no order."""
        articles = self._staged("articles").select("title, doc_id")
        redirects = self._all("m")
        rows = self._staged(table).select(f'"{key}", "{title}"')
        for p in range(self.parts):
            self._view("a_p", articles, "title", p)
            self._view("m_p", redirects, "title", p)
            self._view("q_p", rows, title, p)
            self._write(
                f'SELECT q."{key}", t.doc_id FROM q_p q LEFT JOIN '
                "(SELECT title, doc_id FROM a_p UNION ALL SELECT title, doc_id FROM m_p) t "
                f'ON t.title = q."{title}"',
                f"{table}_out",
                p,
            )
        return self._all(f"{table}_out")

    def _id_ranges(self, table: str, key: str) -> Iterator[tuple[int, int]]:
        """``[low, high)`` ranges of ``order_ids`` ids that cover the staged ``table``'s
        ``key`` values."""
        bounds = self._staged(table).aggregate(f'min("{key}"), max("{key}")').fetchone()
        if bounds is None or bounds[0] is None:
            return
        low, top = int(bounds[0]), int(bounds[1])
        while low <= top:
            yield low, low + self.order_ids
            low += self.order_ids

    def _in_order(
        self, table: str, key: str, rows: duckdb.DuckDBPyRelation
    ) -> Iterator[pa.RecordBatch]:
        """``rows`` sorted by ``key``, one ``ORDER BY`` per range of ids: each sort holds
        ``order_ids`` ids, however many rows there are (ids are unique, so the ranges'
        concatenation is the whole sort)."""
        for low, high in self._id_ranges(table, key):
            part = rows.filter(f'"{key}" >= {int(low)} AND "{key}" < {int(high)}')
            part = part.order(f'"{key}"')
            yield from part.to_arrow_reader(RESOLVE_BATCH_ROWS)

    def redirects_from(self) -> Iterator[pa.RecordBatch]:
        """``(doc_id, redirects_from)`` of every article, sorted by doc_id."""
        self.con.execute("DROP VIEW IF EXISTS redirect_map")
        self._all("m").create_view("redirect_map")
        self.con.execute("DROP VIEW IF EXISTS s_articles")
        self._staged("articles").select("doc_id").create_view("s_articles")
        for low, high in self._id_ranges("articles", "doc_id"):
            # The numbers are ints: no input reaches the SQL text.
            yield from self.con.sql(
                f"""
                SELECT a.doc_id, coalesce(rf.titles, []::VARCHAR[]) AS redirects_from
                FROM (SELECT doc_id FROM s_articles
                      WHERE doc_id >= {int(low)} AND doc_id < {int(high)}) a
                LEFT JOIN (SELECT doc_id, list(title ORDER BY title) AS titles
                           FROM redirect_map
                           WHERE doc_id >= {int(low)} AND doc_id < {int(high)}
                           GROUP BY doc_id) rf USING (doc_id)
                ORDER BY a.doc_id
                """
            ).to_arrow_reader(RESOLVE_BATCH_ROWS)

    def resolved(self, table: str) -> Iterator[pa.RecordBatch]:
        """``(id, resolved value)`` batches of every staged row of ``table``, sorted by id."""
        if table == "articles":
            return self.redirects_from()
        key, name, title = _LOOKUPS[table]
        rows = self._lookup(table, key, title).select(f'"{key}", doc_id AS "{name}"')
        return self._in_order(table, key, rows)

    def write(self, out: Path, table: str, group_rows: int) -> None:
        """Write the final ``table`` (articles, links or facts) to ``out``."""
        key, name, schema = _FINAL[table]
        if table == "facts":
            schema = self.facts_schema
        batches = self.resolved(table)
        _zip(batches, self.staged_files(table), out, (key, name, table), schema, group_rows)


# Final table -> (id column, resolved column, schema); looked-up table -> its title column.
_FINAL = {
    "articles": ("doc_id", "redirects_from", ARTICLES),
    "links": ("link_id", "target_doc_id", LINKS),
    "facts": ("fact_id", "object_doc_id", FACTS),
}
_LOOKUPS = {
    "links": ("link_id", "target_doc_id", "target_title"),
    "facts": ("fact_id", "object_doc_id", "object_title"),
}


def _zip(
    batches: Iterable[pa.RecordBatch],
    staged: list[Path],
    out: Path,
    names: tuple[str, str, str],
    schema: pa.Schema,
    group_rows: int,
) -> None:
    """Stream the staged rows in id order, add the resolved column, write the table."""
    key, name, table = names
    column = _Column(batches, key, name)
    writer = TableWriter(out, schema, group_rows)
    for batch in (b for path in staged for b in staged_batches(path)):
        ids, values = column.take(batch.num_rows)
        if not ids.equals(batch.column(key).cast(pa.int64())):
            raise BuildError(f"resolution of {table}.{name}: ids out of step (a bug)")
        writer.append_batch(batch.append_column(name, values.cast(schema.field(name).type)))
    column.finish()
    writer.close()


def staged_batches(path: Path) -> Iterator[pa.RecordBatch]:
    """The rows of a staged table, one row group at a time, decoded on this thread.

    ``ParquetFile.iter_batches`` decodes several row groups ahead on Arrow's thread pool:
    at 16k-row batches of 1024-row article groups it held ~150 MB more than this, and
    the pool threads kept what they allocated after the file was closed.
    """
    source = pq.ParquetFile(path)
    for i in range(source.metadata.num_row_groups):
        yield from source.read_row_group(i, use_threads=False).to_batches()
