"""Read-only access to a built snapshot: search, pages, passages and SQL.

One :class:`Snapshot` is meant to be shared by every environment of a process: the
Tantivy searcher is thread-safe, DuckDB is used through one cursor per thread, and the
title table is built once, on first use, under a lock.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import duckdb
import pyarrow as pa

from wikigym.corpora.index import Hit, IndexConfig, PassageSearcher
from wikigym.corpora.lookup import SortedTableReader
from wikigym.corpora.manifest import INDEX_DIR, TABLE_FILES, read_manifest
from wikigym.corpora.tables import OPTIONAL_FACT_COLUMNS
from wikigym.corpora.titles import normalize_title, title_key
from wikigym.corpora.verify import verify_snapshot
from wikigym.errors import (
    ConfigError,
    SnapshotCorruptedError,
    SnapshotError,
    SnapshotMismatchError,
)

FULL_VERIFY_MAX_BYTES = 128 * 1024 * 1024
#: DuckDB's threads for Snapshot.sql unless told otherwise (lookups are small queries).
SQL_THREADS = 1
#: The least memory limit Snapshot.sql takes, in MiB (DuckDB needs some to run at all).
MIN_SQL_MEMORY_MB = 16
Verify = Literal["auto", "full", "sizes", "none"]
READ_STATEMENTS = frozenset({duckdb.StatementType.SELECT})


@dataclass(frozen=True, slots=True)
class Passage:
    """One passage with its article."""

    passage_id: int
    doc_id: int
    title: str
    section: tuple[str, ...]
    ordinal: int
    text: str


@dataclass(frozen=True, slots=True)
class PagePassage:
    """A passage of a page, with its span in the article text."""

    passage_id: int
    section: tuple[str, ...]
    ordinal: int
    text: str
    char_start: int
    char_end: int


@dataclass(frozen=True, slots=True)
class PageLink:
    """A link of a page."""

    anchor: str
    target_title: str
    target_doc_id: int | None
    passage_id: int


@dataclass(frozen=True, slots=True)
class PageSection:
    """A section of a page: its heading path, text and passage ids."""

    path: tuple[str, ...]
    text: str
    passage_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Page:
    """An article as the ``open`` tool shows it."""

    doc_id: int
    title: str
    url: str | None
    text: str
    sections: tuple[PageSection, ...]
    links: tuple[PageLink, ...]
    categories: tuple[str, ...]
    redirects_from: tuple[str, ...]
    is_disambiguation: bool
    resolved_from: str | None = None  # the title asked for, when a redirect or case fold led here
    passages: tuple[PagePassage, ...] = ()  # every passage, in order (what sections are cut from)


class Snapshot:
    """A snapshot directory opened read-only: ``Snapshot.open(path)`` (``Snapshot(path)``
    does the same with the default checks); usable as a context manager (``close`` at the
    end)."""

    def __init__(
        self,
        path: str | Path,
        manifest: dict[str, Any] | None = None,
        *,
        sql_memory_mb: int | None = None,
        sql_threads: int = SQL_THREADS,
        search_threads: int = 1,
    ) -> None:
        path = Path(path)
        if manifest is None:  # Snapshot("dir"): opened as Snapshot.open("dir") opens it
            manifest = checked_manifest(path, "auto")
        self.path = path
        self.manifest = manifest
        self.snapshot_id: str = manifest["snapshot_id"]
        index_cfg = manifest.get("content_config", {}).get("index", {})
        try:
            self.index_config = IndexConfig.from_dict(index_cfg)
        except ValueError as exc:
            raise SnapshotCorruptedError(f"{path / 'manifest.json'}: {exc}") from exc
        layout = manifest.get("index_layout", {})
        try:
            self._searcher = PassageSearcher(
                path / INDEX_DIR,
                self.index_config,
                doc_order=layout.get("doc_order"),
                threads=search_threads,
            )
        except ValueError as exc:
            raise SnapshotCorruptedError(
                f"{path / INDEX_DIR}: cannot open the index ({exc})"
            ) from exc
        segments = self._searcher.searcher.num_segments
        if "segments" in layout and layout["segments"] != segments:
            raise SnapshotCorruptedError(
                f"snapshot {path} does not match its manifest: index_layout.segments: "
                f"manifest {layout['segments']!r}, the index has {segments}; rebuild it"
            )
        self._db = _read_only_db(path, memory_mb=sql_memory_mb, threads=sql_threads)
        self._articles = SortedTableReader(
            path / TABLE_FILES["articles"],
            "doc_id",
            ["title", "url", "categories", "redirects_from", "is_disambiguation"],
        )
        self._article_text = SortedTableReader(
            path / TABLE_FILES["articles"], "doc_id", ["text"], cache_groups=4
        )
        self._passages_by_doc = SortedTableReader(
            path / TABLE_FILES["passages"],
            "doc_id",
            ["passage_id", "section", "ordinal", "text", "char_start", "char_end"],
        )
        self._passages_by_id = SortedTableReader(
            path / TABLE_FILES["passages"], "passage_id", ["doc_id", "section", "ordinal", "text"]
        )
        self._links = SortedTableReader(
            path / TABLE_FILES["links"],
            "src_doc_id",
            ["link_id", "src_passage_id", "anchor", "target_title", "target_doc_id"],
        )
        self._local = threading.local()
        self._lock = threading.Lock()
        self._titles: dict[str, int] | None = None
        self._folded: dict[str, int] | None = None

    @classmethod
    def open(
        cls,
        path: str | Path,
        verify: Verify = "auto",
        *,
        sql_memory_mb: int | None = None,
        sql_threads: int = SQL_THREADS,
        search_threads: int = 1,
    ) -> Snapshot:
        """Open a snapshot.

        Args:
            path: Snapshot directory.
            verify: ``full`` recomputes every sha256; ``sizes`` checks presence and sizes;
                ``auto`` does ``full`` up to 128 MB of files and ``sizes`` beyond (run
                ``wikigym corpus verify`` for a full check of a large snapshot); ``none``.
            sql_memory_mb: DuckDB's memory limit for :meth:`sql` in MiB, with no spilling
                to disk (a query past it fails); None: DuckDB's default (80% of RAM).
                DuckDB does not count every allocation (one huge string escapes it): a
                process that runs untrusted SQL caps itself too (``wikigym corpus sql``).
            sql_threads: DuckDB's threads for :meth:`sql`.
            search_threads: Threads that search the index's runs of one query in
                parallel (1, the default, searches them in one call; on 2 cores at 10.19M
                passages two threads were slower, and more cores are not measured, see
                ``benchmarks/results/scale.md``). Never changes the results.

        Raises:
            SnapshotError: Not a snapshot, or of another format version.
            SnapshotCorruptedError: Files differ from the manifest (each one named).
            ConfigError: ``sql_memory_mb``, ``sql_threads`` or ``search_threads`` below 1.
        """
        if sql_memory_mb is not None and sql_memory_mb < MIN_SQL_MEMORY_MB:
            raise ConfigError(
                f"sql_memory_mb must be at least {MIN_SQL_MEMORY_MB} (MiB), got {sql_memory_mb}"
            )
        if sql_threads < 1:
            raise ConfigError(f"sql_threads must be >= 1, got {sql_threads}")
        if search_threads < 1:
            raise ConfigError(f"search_threads must be >= 1, got {search_threads}")
        path = Path(path)
        manifest = checked_manifest(path, verify)
        return cls(
            path,
            manifest,
            sql_memory_mb=sql_memory_mb,
            sql_threads=sql_threads,
            search_threads=search_threads,
        )

    # ---- search -------------------------------------------------------------------
    def search(self, query: str, k: int = 10) -> list[Hit]:
        """BM25 top-k passages; never raises on model-written text.

        The query is read as plain words: query-language syntax (quotes, ``+``/``-``,
        ``field:``, ranges) is treated as separators, at most 64 terms are used, and an
        empty query returns no hits. Ties are broken by passage_id ascending.
        """
        if not isinstance(query, str):
            raise TypeError(f"query must be str, got {type(query).__name__}")
        k = min(int(k), self.num_passages)  # a huge k must not size a huge heap
        return self._searcher.search(query, k)

    @property
    def index_segments(self) -> int:
        """Segments of the index (``index_layout.segments``)."""
        return int(self._searcher.searcher.num_segments)

    @property
    def search_paths(self) -> dict[str, int]:
        """How this process's searches were answered: counts by way (``corpora.prune``)."""
        return self._searcher.paths

    # ---- lookup -------------------------------------------------------------------
    def _cursor(self) -> duckdb.DuckDBPyConnection:
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            with self._lock:
                cur = self._db.cursor()
            self._local.cursor = cur
        return cur

    def sql(self, query: str, params: list[Any] | None = None) -> pa.Table:
        """Run a read-only query over the views ``articles``, ``passages``, ``links``, ``facts``.

        DuckDB enforces it: its file system reaches the four table files and nothing else
        (``enable_external_access=false`` with ``allowed_paths``), its configuration is
        locked, and statements that DuckDB's own parser does not type as SELECT are refused
        (``DESCRIBE``, ``SHOW``, ``SUMMARIZE`` and table-function ``PRAGMA`` are SELECTs;
        COPY is not, and could otherwise write over an allowed table file).

        Raises:
            SnapshotError: A statement other than SELECT (COPY, ATTACH, INSTALL, SET...).
            duckdb.Error: The query fails (syntax, unknown column, refused file access).
        """
        cur = self._cursor()
        for statement in cur.extract_statements(query):
            if statement.type not in READ_STATEMENTS:
                kind = statement.type.name
                raise SnapshotError(
                    f"snapshot SQL is read-only: a {kind} statement was refused; "
                    "run SELECT queries over articles, passages, links and facts"
                )
        return cur.execute(query, params or []).to_arrow_table()

    def _load_titles(self) -> tuple[dict[str, int], dict[str, int]]:
        with self._lock:
            if self._titles is None or self._folded is None:
                exact: dict[str, int] = {}
                folded: dict[str, int] = {}
                rows = self._db.cursor().execute(
                    "SELECT doc_id, title, redirects_from FROM articles ORDER BY doc_id"
                )
                # Articles first, then redirects; lower doc_id wins a case-fold clash.
                redirects: list[tuple[str, int]] = []
                for doc_id, title, aliases in rows.fetchall():
                    exact[title] = doc_id
                    folded.setdefault(title_key(title), doc_id)
                    redirects.extend((a, doc_id) for a in aliases)
                for alias, doc_id in redirects:
                    exact.setdefault(alias, doc_id)
                for alias, doc_id in redirects:
                    folded.setdefault(title_key(alias), doc_id)
                self._titles, self._folded = exact, folded
            return self._titles, self._folded

    def resolve(self, page: str | int) -> int | None:
        """doc_id of a page, or None if unknown.

        An int is a doc id. A str is a title: exact (after MediaWiki normalisation), then a
        redirect, then case-insensitive; only when no title matches is an all-digit string
        read as a doc id (so the article "1998" wins over doc 1998).
        """
        if isinstance(page, bool):
            return None
        n_docs = self.num_articles
        if isinstance(page, int):
            return page if 0 <= page < n_docs else None
        text = page.strip()
        exact, folded = self._load_titles()
        title = normalize_title(text)
        if title in exact:
            return exact[title]
        doc = folded.get(title_key(text))
        if doc is None and text.isascii() and text.isdigit() and len(text) <= 18:
            doc = int(text) if int(text) < n_docs else None
        return doc

    def page(self, page: str | int) -> Page | None:
        """The article for a title or doc id (redirects and case resolved), or None."""
        doc_id = self.resolve(page)
        if doc_id is None:
            return None
        meta = self._articles.rows(doc_id).to_pylist()
        if not meta:
            return None
        row = meta[0]
        text = self._article_text.rows(doc_id).column("text")[0].as_py()
        groups: list[tuple[tuple[str, ...], int, int, list[int]]] = []  # path, start, end, ids
        passages = self.passages_of(doc_id)
        for p in passages:
            if groups and groups[-1][0] == p.section:
                path, start, _, ids = groups[-1]
                groups[-1] = (path, start, p.char_end, [*ids, p.passage_id])
            else:
                groups.append((p.section, p.char_start, p.char_end, [p.passage_id]))
        sections = [PageSection(path, text[s:e], tuple(ids)) for path, s, e, ids in groups]
        links = tuple(
            PageLink(r["anchor"], r["target_title"], r["target_doc_id"], r["src_passage_id"])
            for r in self._links.rows(doc_id).to_pylist()
        )
        title = row["title"]
        asked = None if isinstance(page, int) or normalize_title(str(page)) == title else str(page)
        return Page(
            doc_id=doc_id,
            title=title,
            url=row["url"],
            text=text,
            sections=tuple(sections),
            links=links,
            categories=tuple(row["categories"] or ()),
            redirects_from=tuple(row["redirects_from"] or ()),
            is_disambiguation=bool(row["is_disambiguation"]),
            resolved_from=asked,
            passages=tuple(passages),
        )

    def passages_of(self, doc_id: int) -> list[PagePassage]:
        """The passages of one article, in order (empty for an unknown doc id)."""
        return [
            PagePassage(
                r["passage_id"],
                tuple(r["section"]),
                r["ordinal"],
                r["text"],
                r["char_start"],
                r["char_end"],
            )
            for r in self._passages_by_doc.rows(doc_id).to_pylist()
        ]

    def passage(self, passage_id: int) -> Passage | None:
        """One passage by id, or None."""
        if isinstance(passage_id, bool) or not isinstance(passage_id, int) or passage_id < 0:
            return None
        rows = self._passages_by_id.rows(passage_id).to_pylist()
        if not rows:
            return None
        r = rows[0]
        title = self.title_of(r["doc_id"])
        return Passage(
            passage_id, r["doc_id"], title or "", tuple(r["section"]), r["ordinal"], r["text"]
        )

    def title_of(self, doc_id: int) -> str | None:
        """The title of a doc id, or None."""
        rows = self._articles.rows(doc_id)
        return rows.column("title")[0].as_py() if rows.num_rows else None

    @property
    def num_passages(self) -> int:
        """Rows of the passages table (read from the table, not from the manifest)."""
        return self._passages_by_id.num_rows

    @property
    def num_articles(self) -> int:
        """Rows of the articles table (read from the table, not from the manifest)."""
        return self._articles.num_rows

    def close(self) -> None:
        self._db.close()
        self._searcher.close()

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        # Pickled by reference: reopened (and checked by id) where it is loaded.
        return reduce_snapshot(self)

    def __repr__(self) -> str:
        return f"Snapshot({str(self.path)!r}, id={self.snapshot_id[:12]}, articles={self.num_articles})"


def checked_manifest(path: Path, verify: Verify) -> dict[str, Any]:
    """The manifest of the snapshot at ``path``, its files checked as ``verify`` says (see
    :meth:`Snapshot.open`).

    Raises:
        SnapshotError: Not a snapshot, or of another format version.
        SnapshotCorruptedError: Files differ from the manifest (each one named).
    """
    if not path.is_dir():
        raise SnapshotError(f"snapshot directory {path} does not exist")
    manifest = read_manifest(path)
    if verify != "none":
        sizes = manifest.get("file_sizes", {})
        total = sum(sizes.values()) if isinstance(sizes, dict) else 0
        full = verify == "full" or (verify == "auto" and total <= FULL_VERIFY_MAX_BYTES)
        problems = verify_snapshot(path, manifest, full=full)
        if problems:
            raise SnapshotCorruptedError(
                f"snapshot {path} does not match its manifest: {'; '.join(problems[:10])}"
                f"{' ...' if len(problems) > 10 else ''}; rebuild it or restore the files"
            )
    return manifest


_SQL_TYPES = {pa.string(): "VARCHAR", pa.int64(): "BIGINT"}


def _read_only_db(
    path: Path, *, memory_mb: int | None = None, threads: int = SQL_THREADS
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the four tables as views, that can read nothing else.

    Paths reach DuckDB as values (the relation API, a parameter), never as SQL text. With
    ``memory_mb``, DuckDB holds at most that and spills nothing (it would write into the
    working directory's ``.tmp``).
    """
    files = [str((path / fname).resolve()) for fname in TABLE_FILES.values()]
    config: dict[str, Any] = {"threads": threads}
    if memory_mb is not None:
        config |= {"memory_limit": f"{memory_mb}MiB", "temp_directory": ""}
    db = duckdb.connect(config=config)
    try:
        db.execute("SET allowed_paths = ?", [files])
        for name, fname in TABLE_FILES.items():
            rel = db.read_parquet(str((path / fname).resolve()))
            if name == "facts":  # a world's facts (and older ones) lack real facts' columns
                missing = [(c, t) for c, t in OPTIONAL_FACT_COLUMNS if c not in rel.columns]
                if missing:
                    # Names and types are ours (tables.OPTIONAL_FACT_COLUMNS): no input.
                    extra = ", ".join(f'CAST(NULL AS {_SQL_TYPES[t]}) AS "{c}"' for c, t in missing)
                    rel = rel.select(f"*, {extra}")
            rel.create_view(name)
        db.execute("SET enable_external_access = false")
        db.execute("SET lock_configuration = true")
    except BaseException:
        db.close()
        raise
    return db


__all__ = ["Hit", "Page", "PageLink", "PagePassage", "PageSection", "Passage", "Snapshot"]


# Pickling by reference: a pickle names a snapshot by its absolute path and id; loading opens
# the snapshot there (verified as Snapshot.open does), checks the id, and shares one open
# snapshot per (path, snapshot_id) in the process, including the one pickled there (so a
# round trip in one process gives back the same object).
_REOPEN_LOCK = threading.Lock()
_OPEN: weakref.WeakValueDictionary[tuple[str, str], Snapshot] = weakref.WeakValueDictionary()


def reduce_snapshot(snapshot: Snapshot) -> tuple[Callable[[str, str], Snapshot], tuple[str, str]]:
    """The ``__reduce__`` value of ``snapshot``: :func:`reopen_snapshot` of its path and id."""
    key = (str(Path(snapshot.path).resolve()), snapshot.snapshot_id)
    with _REOPEN_LOCK:
        _OPEN.setdefault(key, snapshot)
    return reopen_snapshot, key


def reopen_snapshot(path: str, snapshot_id: str) -> Snapshot:
    """The open snapshot at ``path``, which must have ``snapshot_id``.

    Raises:
        SnapshotError: Nothing readable at ``path`` (the message says what is missing).
        SnapshotCorruptedError: Its files differ from its manifest.
        SnapshotMismatchError: The snapshot there has another id.
    """
    key = (path, snapshot_id)
    with _REOPEN_LOCK:
        snapshot = _OPEN.get(key)
        if snapshot is None:
            snapshot = Snapshot.open(path)
            if snapshot.snapshot_id != snapshot_id:
                found = snapshot.snapshot_id
                snapshot.close()
                raise SnapshotMismatchError(
                    f"the pickled snapshot {snapshot_id[:16]}... was expected at {path}, but the "
                    f"snapshot there is {found[:16]}...; copy the same snapshot to that path "
                    "on this machine before loading"
                )
            _OPEN[key] = snapshot
        return snapshot
