"""Resolve redirects and link/fact targets in memory that does not grow with the corpus.

Every join of the resolution is an equality of titles. The titles (articles and redirects)
are split into ``P`` partitions by DuckDB's 64-bit ``hash(title) % P``, with ``P`` chosen
from the title count so that one partition holds about :data:`PARTITION_TITLES` titles; the
rows that look a title up (redirect targets, link and fact targets) are split by the same
hash of the title they look up. Equal titles have equal hashes, so each join runs partition
by partition and its hash table holds ``1/P`` of the titles; two titles whose hashes
collide only share a partition, and the join itself compares the strings. Each partition's
``(id, value)`` result goes to a Parquet file; the final ``ORDER BY id`` over them is
DuckDB's external sort, which spills beyond ``memory_limit``. The wide staged rows (article
texts, anchors, fact values) never enter DuckDB: they are streamed from the staged Parquet
in id order and zipped with the sorted resolved column.

The result does not depend on ``P`` (``tests/test_build_resolve.py``), and its bytes are
those of the single-query resolution it replaced (pinned snapshot ids in
``tests/test_build_scale.py``).
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from wikigym.corpora.tables import ARTICLES, FACTS, LINKS, TableWriter
from wikigym.errors import BuildError

# Titles per partition: the hash tables of one partition's joins stay ~30-60 MB.
PARTITION_TITLES = 1 << 18
RESOLVE_BATCH_ROWS = 16_384


def partitions_for(titles: int, per_partition: int = PARTITION_TITLES) -> int:
    """How many hash partitions keep each one near ``per_partition`` titles (at least 1)."""
    if per_partition < 1:
        raise ValueError(f"per_partition must be >= 1, got {per_partition}")
    return max(1, math.ceil(titles / per_partition))


class _Column:
    """Values of one resolved column, taken in order in slices of any length."""

    def __init__(self, reader: pa.RecordBatchReader, key: str, name: str) -> None:
        self._batches = iter(reader)
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
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, stage: Path, parts: int) -> None:
        if parts < 1:
            raise ValueError(f"parts must be >= 1, got {parts}")
        self.con = con
        self.stage = stage
        self.parts = parts
        self.work = stage / "resolve"
        self.work.mkdir()

    # -- files -------------------------------------------------------------------------

    def _staged(self, name: str) -> duckdb.DuckDBPyRelation:
        return self.con.read_parquet(str(self.stage / f"{name}.parquet"))

    def _split(self, rel: duckdb.DuckDBPyRelation, key: str, name: str) -> None:
        """Write ``rel`` as ``name/part=P/*.parquet`` by the hash of column ``key``."""
        self.con.execute("DROP VIEW IF EXISTS split_input")
        rel.create_view("split_input")
        columns = ", ".join(f'"{c}"' for c in rel.columns)
        # $parts is a value; the column names are ours (the staged schemas), never input.
        self.con.sql(
            f'SELECT {columns}, hash("{key}") % $parts AS part FROM split_input',
            params={"parts": self.parts},
        ).write_parquet(str(self.work / name), partition_by=["part"], write_partition_columns=False)
        self.con.execute("DROP VIEW split_input")

    def _view(self, view: str, name: str, part: int, empty: str) -> None:
        """Make ``view`` the rows of partition ``part`` of ``name`` (``empty`` if none)."""
        files = sorted((self.work / name / f"part={part}").glob("*.parquet"))
        self.con.execute(f"DROP VIEW IF EXISTS {view}")
        if files:
            self.con.read_parquet([str(f) for f in files]).create_view(view)
        else:
            self.con.sql(empty).create_view(view)

    def _write(self, sql: str, name: str, part: int) -> None:
        out = self.work / name
        out.mkdir(exist_ok=True)
        self.con.sql(sql).write_parquet(str(out / f"{part}.parquet"))

    def _all(self, name: str) -> duckdb.DuckDBPyRelation:
        return self.con.read_parquet(str(self.work / name / "*.parquet"))

    # -- steps -------------------------------------------------------------------------

    def redirect_map(self) -> None:
        """Resolve redirect titles to doc ids (at most two hops), partitioned by title.

        One row per redirect title that is not also an article; duplicate redirect titles
        keep the smallest target, so the result does not depend on input order. Two hops:
        MediaWiki itself follows one; double redirects are common in dumps and cheap here.
        """
        titles = "SELECT NULL::VARCHAR AS title, NULL::BIGINT AS doc_id WHERE false"
        pairs = "SELECT NULL::VARCHAR AS title, NULL::VARCHAR AS target WHERE false"
        self._split(self._staged("articles").select("title, doc_id"), "title", "a")
        self._split(self._staged("redirects").select("title, target"), "title", "r")
        for p in range(self.parts):
            self._view("a_p", "a", p, titles)
            self._view("r_p", "r", p, pairs)
            self._write(
                "SELECT r.title, min(r.target) AS target FROM r_p r "
                "ANTI JOIN a_p a ON a.title = r.title GROUP BY r.title",
                "r1",
                p,
            )
        # r1 by target: the first hop looks the target up among articles and redirects.
        self._split(self._all("r1"), "target", "r1_by_target")
        hop = "SELECT NULL::VARCHAR AS title, NULL::BIGINT AS d1, NULL::VARCHAR AS t2 WHERE false"
        for p in range(self.parts):
            self._view("a_p", "a", p, titles)
            self._view("g_p", "r1_by_target", p, pairs)
            files = self.work / "r1" / f"{p}.parquet"
            self.con.execute("DROP VIEW IF EXISTS r1_p")
            self.con.read_parquet(str(files)).create_view("r1_p")
            self._write(
                "SELECT g.title, a.doc_id AS d1, r2.target AS t2 FROM g_p g "
                "LEFT JOIN a_p a ON a.title = g.target "
                "LEFT JOIN r1_p r2 ON r2.title = g.target",
                "hop1",
                p,
            )
        # The second hop: targets that are redirects, looked up by their own target.
        self._split(self._all("hop1").filter("d1 IS NULL AND t2 IS NOT NULL"), "t2", "hop2_in")
        for p in range(self.parts):
            self._view("a_p", "a", p, titles)
            self._view("h_p", "hop2_in", p, hop)
            self._write(
                "SELECT h.title, a.doc_id FROM h_p h JOIN a_p a ON a.title = h.t2", "hop2", p
            )
        self.con.execute("DROP VIEW IF EXISTS hop1_all")
        self._all("hop1").filter("d1 IS NOT NULL").select("title, d1 AS doc_id").create_view(
            "hop1_all"
        )
        self.con.execute("DROP VIEW IF EXISTS hop2_all")
        self._all("hop2").create_view("hop2_all")
        self._split(
            self.con.sql("SELECT title, doc_id FROM hop1_all UNION ALL SELECT * FROM hop2_all"),
            "title",
            "m",
        )

    def _lookup(self, table: str, key: str, title: str) -> duckdb.DuckDBPyRelation:
        """``(key, doc_id)`` of every staged ``table`` row, its ``title`` looked up among
        articles and resolved redirects, sorted by ``key``."""
        self._split(self._staged(table).select(f'"{key}", "{title}"'), title, f"{table}_in")
        titles = "SELECT NULL::VARCHAR AS title, NULL::BIGINT AS doc_id WHERE false"
        rows = f'SELECT NULL::BIGINT AS "{key}", NULL::VARCHAR AS "{title}" WHERE false'
        for p in range(self.parts):
            self._view("a_p", "a", p, titles)
            self._view("m_p", "m", p, titles)
            self._view("q_p", f"{table}_in", p, rows)
            self._write(
                f'SELECT q."{key}", t.doc_id FROM q_p q LEFT JOIN '
                "(SELECT title, doc_id FROM a_p UNION ALL SELECT title, doc_id FROM m_p) t "
                f'ON t.title = q."{title}"',
                f"{table}_out",
                p,
            )
        return self._all(f"{table}_out").order(f'"{key}"')

    def redirects_from(self) -> duckdb.DuckDBPyRelation:
        """``(doc_id, redirects_from)`` of every article, sorted by doc_id."""
        self.con.execute("DROP VIEW IF EXISTS redirect_map")
        files = sorted((self.work / "m").glob("part=*/*.parquet"))
        if files:
            self.con.read_parquet([str(f) for f in files]).create_view("redirect_map")
        else:
            self.con.sql(
                "SELECT NULL::VARCHAR AS title, NULL::BIGINT AS doc_id WHERE false"
            ).create_view("redirect_map")
        self.con.execute("DROP VIEW IF EXISTS s_articles")
        self._staged("articles").select("doc_id").create_view("s_articles")
        return self.con.sql(
            """
            SELECT a.doc_id, coalesce(rf.titles, []::VARCHAR[]) AS redirects_from
            FROM s_articles a
            LEFT JOIN (SELECT doc_id, list(title ORDER BY title) AS titles
                       FROM redirect_map GROUP BY doc_id) rf USING (doc_id)
            ORDER BY a.doc_id
            """
        )

    def write(self, out: Path, table: str, group_rows: int) -> None:
        """Write the final ``table`` (articles, links or facts) to ``out``."""
        key, name, schema, resolved = {
            "articles": ("doc_id", "redirects_from", ARTICLES, self.redirects_from),
            "links": (
                "link_id",
                "target_doc_id",
                LINKS,
                lambda: self._lookup("links", "link_id", "target_title"),
            ),
            "facts": (
                "fact_id",
                "object_doc_id",
                FACTS,
                lambda: self._lookup("facts", "fact_id", "object_title"),
            ),
        }[table]
        rel = resolved()
        if name not in rel.columns:
            rel = rel.select(f'"{key}", doc_id AS "{name}"')
        _zip(
            rel.to_arrow_reader(RESOLVE_BATCH_ROWS),
            self.stage / f"{table}.parquet",
            out,
            key,
            name,
            schema,
            group_rows,
            table,
        )

    def close(self) -> None:
        """Remove the intermediate files."""
        shutil.rmtree(self.work, ignore_errors=True)


def _zip(
    reader: pa.RecordBatchReader,
    staged: Path,
    out: Path,
    key: str,
    name: str,
    schema: pa.Schema,
    group_rows: int,
    table: str,
) -> None:
    """Stream the staged rows in id order, add the resolved column, write the table."""
    column = _Column(reader, key, name)
    writer = TableWriter(out, schema, group_rows)
    source = pq.ParquetFile(staged)
    for batch in source.iter_batches(batch_size=RESOLVE_BATCH_ROWS):
        ids, values = column.take(batch.num_rows)
        if not ids.equals(batch.column(key).cast(pa.int64())):
            raise BuildError(f"resolution of {table}.{name}: ids out of step (a bug)")
        writer.append_batch(batch.append_column(name, values.cast(schema.field(name).type)))
    column.finish()
    writer.close()
