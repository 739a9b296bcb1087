"""Build a snapshot: stream sources, parse in worker processes, write tables and index.

Data flow (bounded memory):

1. Readers stream records in a fixed order; batches go to N worker processes
   (:func:`wikigym.corpora.pagebuild.process_batch`) with at most ``2 * N`` batches in
   flight, and come back in submission order, so ids never depend on worker timing.
2. The main process assigns dense ``doc_id`` and ``passage_id`` in that order, appends
   passages to ``passages.parquet`` and the Tantivy index, and stages articles,
   redirects, links and facts.
3. DuckDB resolves redirects and link/fact targets out of core and writes the final
   tables in a total order, in fixed row groups (see :mod:`wikigym.corpora.tables`).
4. Hashes, manifest, modes by the umask (the snapshot is for every user who may read it),
   and an atomic rename of the temporary sibling directory. Siblings left by killed builds
   are removed by the next build (see :mod:`wikigym.corpora.staging`).
"""

from __future__ import annotations

import os
import shutil
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import duckdb
from tqdm import tqdm

from wikigym.corpora.analysis import language_code
from wikigym.corpora.factsources import vocabulary_versions
from wikigym.corpora.index import (
    INDEX_HEAP_MB,
    MIN_INDEX_MEMORY_MB,
    IndexConfig,
    PassageIndexWriter,
    write_champions,
)
from wikigym.corpora.manifest import (
    FORMAT_VERSION,
    INDEX_DIR,
    MAX_SKIPPED_NAMED,
    TABLE_FILES,
    compute_snapshot_id,
    file_sizes,
    hash_files,
    provenance_sha256,
    write_manifest,
)
from wikigym.corpora.memory import give_back_freed_memory, keep_large_blocks_mapped
from wikigym.corpora.pagebuild import (
    REDIRECT,
    SKIPPED,
    WireRecord,
    WireResult,
    encode_record,
    process_batch,
)
from wikigym.corpora.records import ParsedPage, RawPage, SkippedPage
from wikigym.corpora.resolve import PARTITION_TITLES, Resolver, partitions_for
from wikigym.corpora.source_report import SourceCounts
from wikigym.corpora.sources import WORLD_FORMAT, BuildSource
from wikigym.corpora.staging import (
    apply_modes,
    clean_stale_siblings,
    make_sibling,
    remove_tree,
    sibling_name,
)
from wikigym.corpora.tables import (
    ARTICLES_STAGE,
    FACTS,
    FACTS_STAGE,
    LINKS_STAGE,
    PASSAGES,
    REDIRECTS_STAGE,
    WORLD_FACTS,
    WORLD_FACTS_STAGE,
    TableWriter,
)
from wikigym.corpora.titleset import TitleSet
from wikigym.corpora.verify import count_rows
from wikigym.corpora.wikidata import WikidataFile, join_wikidata, property_map, stage_wikidata
from wikigym.corpora.workers import Workers
from wikigym.errors import BuildError
from wikigym.version import __version__

# Small row groups keep point look-ups cheap (see wikigym.corpora.lookup); their sizes are
# fixed so the files' bytes depend on the rows alone.
ARTICLE_GROUP_ROWS = 1024
PASSAGE_GROUP_ROWS = 4096
LINK_GROUP_ROWS = 8192
WORKER_DEPTH = 4  # batches queued per worker: keeps it busy while the main process writes


@dataclass(frozen=True)
class BuildConfig:
    """How to build a snapshot.

    Attributes:
        passage_words: Target words per passage (changes the content and the id).
        threads: Processes that build: the main process (reading, ids, tables, index) plus
            ``threads - 1`` parsing workers; also DuckDB's threads. Never changes
            the content or the search results.
        index: Index settings (part of the id).
        batch_pages: Pages per batch sent to a worker.
        batch_chars: Wikitext characters after which a batch is cut before ``batch_pages``.
        duckdb_memory: Memory limit of the resolution step (its sorts spill to disk
            beyond it). Its joins hold one hash partition of the titles at a time.
        partition_titles: Titles per hash partition of the resolution joins (never
            changes the content).
        language: The wiki's language code, or ``"auto"``: the first language a source
            declares (a dump's siteinfo), else English. It picks the index analyzer
            (:meth:`IndexConfig.with_language`) and the locale of infobox values.
        index_memory_mb: The index writer's heap: each segment holds what fits in it (at
            most ``index.SEGMENT_DOCS`` passages), so it bounds the build's memory and sets
            the segment count (fewer, larger segments search faster). Never changes the
            content or the search results.
    """

    passage_words: int = 100
    threads: int = 1
    index: IndexConfig = field(default_factory=IndexConfig)
    batch_pages: int = 64
    batch_chars: int = 256 * 1024
    duckdb_memory: str = "128MB"
    partition_titles: int = PARTITION_TITLES
    language: str = "auto"
    index_memory_mb: int = INDEX_HEAP_MB

    def content_config(self, facts: dict[str, str] | None = None) -> dict[str, Any]:
        """The settings that change a snapshot's content: passage size, index settings and,
        for real wikis, the versions of the vocabularies that typed its facts."""
        out: dict[str, Any] = {"passage_words": self.passage_words, "index": self.index.to_dict()}
        if facts:
            out["facts"] = dict(sorted(facts.items()))
        return out


def build_language(config: BuildConfig, sources: Sequence[BuildSource]) -> str:
    """The language of a build: the configured one, else the first a source declares."""
    if config.language != "auto":
        return language_code(config.language)
    for source in sources:
        declared = source.language()
        if declared:
            return language_code(declared)
    return "en"


def _with_language(records: Iterable[Record], language: str) -> Iterator[Record]:
    """Raw pages that do not name their wiki's language get the build's."""
    for record in records:
        if isinstance(record, RawPage) and record.language is None:
            yield replace(record, language=language)
        else:
            yield record


@dataclass
class BuildReport:
    """Counts of one build; the skipped pages are named (up to 10,000)."""

    pages_read: int = 0
    pages_skipped: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)
    redirects: int = 0
    articles: int = 0
    passages: int = 0
    links: int = 0
    links_resolved: int = 0
    facts: int = 0
    input_bytes: int = 0
    seconds: float = 0.0
    snapshot_id: str = ""
    out: str = ""
    sources: list[SourceCounts] = field(default_factory=list)

    @property
    def mb_per_s(self) -> float:
        return self.input_bytes / 1e6 / self.seconds if self.seconds > 0 else 0.0

    def counts(self) -> dict[str, int]:
        return {
            "pages_read": self.pages_read,
            "pages_skipped": self.pages_skipped,
            "redirects": self.redirects,
            "articles": self.articles,
            "passages": self.passages,
            "links": self.links,
            "links_resolved": self.links_resolved,
            "facts": self.facts,
        }

    def summary(self) -> str:
        """A short human report."""
        lines = [
            f"snapshot {self.snapshot_id[:16]} -> {self.out}",
            f"pages read {self.pages_read:,}  skipped {self.pages_skipped:,}  "
            f"redirects {self.redirects:,}  articles {self.articles:,}",
            f"passages {self.passages:,}  links {self.links:,} "
            f"(resolved {self.links_resolved:,})  facts {self.facts:,}",
            f"{self.seconds:.1f} s, {self.input_bytes / 1e6:.1f} MB in, {self.mb_per_s:.2f} MB/s",
        ]
        for counts in self.sources:
            lines.extend(f"  {note}" for note in counts.notes())
        for item in self.skipped[:5]:
            lines.append(f"  skipped: {item['title']!r} ({item['reason']}) in {item['source']}")
        if self.pages_skipped > 5:
            lines.append(
                f"  ... {self.pages_skipped - 5:,} more skipped pages named in manifest.json"
            )
        return "\n".join(lines)


Record = RawPage | ParsedPage | SkippedPage


def _batches(records: Iterable[Record], pages: int, chars: int) -> Iterator[list[WireRecord]]:
    """Batches of at most ``pages`` records, cut early once they hold ``chars`` characters of
    wikitext: real articles are 100x the size of generated ones, and a few huge batches
    would leave processes idle at the end of a small dump."""
    batch: list[WireRecord] = []
    size = 0
    for record in records:
        batch.append(encode_record(record))
        if isinstance(record, RawPage):
            size += len(record.wikitext)
        if len(batch) >= pages or size >= chars:
            yield batch
            batch = []
            size = 0
    if batch:
        yield batch


def _ordered_results(
    records: Iterable[Record], config: BuildConfig, source: str, workers: Workers | None
) -> Iterator[WireResult]:
    """Process batches with bounded in-flight work, yielding in input order.

    Each worker holds at most ``WORKER_DEPTH`` batches. When all are full and the oldest
    batch is not done, the main process parses the next batch itself instead of waiting:
    with 2 processes on 2 cores the main process is otherwise idle for a third of the time
    (it reads, assigns ids and writes, but does not parse). Results still come out in input
    order, so nothing depends on who parsed.
    """
    words = config.passage_words
    if workers is None:
        for batch in _batches(records, config.batch_pages, config.batch_chars):
            yield from process_batch(batch, words, source)
        return
    # Who took each batch, oldest first: a worker index, or the finished list parsed here.
    pending: deque[int | list[WireResult]] = deque()
    in_flight = [0] * len(workers)
    max_pending = 4 * WORKER_DEPTH * len(workers)

    def pop() -> list[WireResult]:
        item = pending.popleft()
        if isinstance(item, list):
            return item
        in_flight[item] -= 1
        return workers.result(item)

    for batch in _batches(records, config.batch_pages, config.batch_chars):
        while pending and (isinstance(pending[0], list) or workers.ready(pending[0])):
            yield from pop()
        idle = min(range(len(workers)), key=in_flight.__getitem__)
        if in_flight[idle] < WORKER_DEPTH:
            workers.submit(idle, batch, words, source)
            in_flight[idle] += 1
            pending.append(idle)
        elif len(pending) < max_pending:
            pending.append(process_batch(batch, words, source))
        else:
            yield from pop()
            pending.append(process_batch(batch, words, source))
    while pending:
        yield from pop()


class _Writers:
    """The streaming writers of one build (stage tables, passages, index)."""

    def __init__(self, tmp: Path, config: BuildConfig, real: bool = True) -> None:
        stage = tmp / "stage"
        stage.mkdir()
        self.stage = stage
        self.articles = TableWriter(stage / "articles.parquet", ARTICLES_STAGE, ARTICLE_GROUP_ROWS)
        self.redirects = TableWriter(stage / "redirects.parquet", REDIRECTS_STAGE)
        self.links = TableWriter(stage / "links.parquet", LINKS_STAGE)
        # A world's facts keep format 2's columns (no statement, restates: see tables).
        self.real = real
        schema = FACTS_STAGE if real else WORLD_FACTS_STAGE
        self.facts = TableWriter(stage / "facts.parquet", schema)
        self.passages = TableWriter(tmp / TABLE_FILES["passages"], PASSAGES, PASSAGE_GROUP_ROWS)
        self.index = PassageIndexWriter(
            tmp / INDEX_DIR, config.index, threads=1, heap_mb=config.index_memory_mb
        )

    def close_tables(self) -> None:
        for w in (self.articles, self.redirects, self.links, self.facts, self.passages):
            w.close()


class _Assembler:
    """Assigns ids in stream order and feeds the writers."""

    def __init__(self, writers: _Writers, report: BuildReport, language: str = "en") -> None:
        self.w = writers
        self.language = language
        self.report = report
        self.titles = TitleSet()  # 16 B per article, not ~100 (see titleset)
        self.next_doc = 0
        self.next_passage = 0
        self.next_link = 0
        self.next_fact = 0
        self.counts = SourceCounts("", "")

    def start(self, source: BuildSource) -> None:
        """Count what follows under ``source``."""
        self.counts = SourceCounts(source.name, source.format, language=self.language)
        self.report.sources.append(self.counts)

    def skip(self, title: str, reason: str, source: str) -> None:
        self.report.pages_skipped += 1
        self.counts.drop(reason)
        if len(self.report.skipped) < MAX_SKIPPED_NAMED:
            self.report.skipped.append({"title": title, "reason": reason, "source": source})

    def add(self, result: WireResult, source: str) -> None:
        """Take one encoded result (see :func:`wikigym.corpora.pagebuild.process_batch`)."""
        self.report.pages_read += 1
        self.counts.pages_read += 1
        kind = result[0]
        if kind == SKIPPED:
            self.skip(result[1], result[2], result[3])
        elif kind == REDIRECT:
            _, title, target = result
            if target and target != title:
                self.w.redirects.append_row(title, target)
                self.report.redirects += 1
                self.counts.redirects += 1
            else:
                self.skip(title, "redirect without a valid target", source)
        elif result[1] in self.titles:
            self.skip(result[1], "duplicate title (the first page with it was kept)", source)
        elif not result[8]:
            self.skip(result[1], "no prose left after markup removal", source)
        else:
            self.titles.add(result[1])
            self._add_article(result)

    def _add_article(self, art: WireResult) -> None:
        _, title, url, source_id, text, categories, is_dab, infobox_type, passages, links, facts = (
            art
        )
        doc_id = self.next_doc
        self.next_doc += 1
        first = self.next_passage
        self.w.articles.append_row(
            doc_id, title, url, text, list(categories), is_dab, infobox_type, source_id
        )
        n = len(passages)
        pids = list(range(first, first + n))
        self.w.passages.extend(
            pids,
            [doc_id] * n,
            [list(p[0]) for p in passages],
            list(range(n)),
            [p[1] for p in passages],
            [p[2] for p in passages],
            [p[3] for p in passages],
            [p[4] for p in passages],
        )
        for pid, p in zip(pids, passages, strict=True):
            self.w.index.add(pid, doc_id, title, p[1], p[4])
        self.next_passage += n
        if links:
            m = len(links)
            self.w.links.extend(
                list(range(self.next_link, self.next_link + m)),
                [doc_id] * m,
                [first + link[0] for link in links],
                [link[1] for link in links],
                [link[2] for link in links],
            )
            self.next_link += m
        if facts:
            m = len(facts)
            self.w.facts.extend(
                list(range(self.next_fact, self.next_fact + m)),
                [doc_id] * m,
                [f[0] for f in facts],
                [f[1] for f in facts],
                [f[2] for f in facts],
                [f[3] for f in facts],
                [f[4] for f in facts],
                [None if f[5] is None else first + f[5] for f in facts],
                [f[6] for f in facts],
                [f[7] for f in facts],
                [f[8] for f in facts],
                *(
                    (
                        [f[9] for f in facts],
                        [None if f[10] is None else self.next_fact + f[10] for f in facts],
                    )
                    if self.w.real
                    else ()
                ),
            )
            for f in facts:
                if f[8]:
                    self.counts.typed[f[4]] += 1
            self.next_fact += m
        self.report.articles += 1
        self.report.passages += n
        self.report.links += len(links)
        self.report.facts += len(facts)
        self.counts.articles += 1
        self.counts.passages += n
        self.counts.source_passages += sum(1 for p in passages if p[4] is not None)
        self.counts.facts += len(facts)


_GROUP_ROWS = {"articles": ARTICLE_GROUP_ROWS, "links": LINK_GROUP_ROWS, "facts": 65_536}


def _resolve(
    tmp: Path,
    config: BuildConfig,
    report: BuildReport,
    wikidata: tuple[SourceCounts, int, str] | None = None,
    real: bool = True,
) -> None:
    """Resolve redirects and link/fact targets with DuckDB; write the final tables.

    The joins run in hash partitions of the titles (:mod:`wikigym.corpora.resolve`), as
    many as keep each near ``config.partition_titles`` titles: memory does not grow with
    the corpus.
    """
    stage = tmp / "stage"
    # Settings and paths go in as values (config, relation API), never into SQL text: a
    # quote in the output path must not change what the queries read.
    con = duckdb.connect(
        config={
            "threads": max(1, config.threads),
            "memory_limit": config.duckdb_memory,
            "temp_directory": str(stage / "duckdb"),
            "preserve_insertion_order": False,  # every query that writes sorts by an id
        }
    )
    parts = partitions_for(report.articles + report.redirects, config.partition_titles)
    try:
        resolver = Resolver(con, stage, parts, facts_schema=FACTS if real else WORLD_FACTS)
        resolver.redirect_map()
        if wikidata is not None:  # statements of the articles' items, joined by sitelink
            counts, first_fact, language = wikidata
            n = join_wikidata(
                con, stage, resolver.redirect_files(), tmp / TABLE_FILES["passages"],
                first_fact, language,
            )  # fmt: skip
            counts.facts += n
            counts.typed["wikidata"] += n
            report.facts += n
        for name in ("articles", "links", "facts"):
            resolver.write(tmp / TABLE_FILES[name], name, _GROUP_ROWS[name])
        report.links_resolved = count_rows(tmp / TABLE_FILES["links"]).resolved
    finally:
        con.close()
    shutil.rmtree(stage)


def _install(tmp: Path, out: Path, overwrite: bool) -> None:
    """Atomically move the finished build into place (replacing ``out`` if allowed)."""
    if out.exists():
        if not overwrite:
            raise BuildError(f"{out} exists; pass overwrite=True (--overwrite) to replace it")
        old = sibling_name(out, "old")
        os.replace(out, old)
        os.replace(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, out)


def build_snapshot(
    sources: Sequence[BuildSource],
    out: str | Path,
    config: BuildConfig | None = None,
    *,
    overwrite: bool = False,
    progress: bool = True,
    facts: WikidataFile | None = None,
) -> BuildReport:
    """Build a snapshot directory from sources.

    Args:
        sources: Opened sources (see :func:`wikigym.corpora.sources.open_build_source`).
        out: Snapshot directory to create.
        config: Build settings.
        overwrite: Replace ``out`` if it exists.
        progress: Show a progress bar on stderr.
        facts: A Wikidata dump whose statements become facts of the articles their items
            have sitelinks to (:mod:`wikigym.corpora.wikidata`).

    Returns:
        The build report (also summarised in ``manifest.json``).

    Raises:
        BuildError: ``out`` exists, or no article was read.
        SourceError: A source is truncated or not what its format says; nothing is left
            behind.
    """
    config = config or BuildConfig()
    if config.passage_words < 10:
        raise BuildError(f"passage_words must be >= 10, got {config.passage_words}")
    if config.threads < 1:
        raise BuildError(f"threads must be >= 1, got {config.threads}")
    if config.index_memory_mb < MIN_INDEX_MEMORY_MB:
        raise BuildError(
            f"index_memory_mb must be >= {MIN_INDEX_MEMORY_MB} (Tantivy's smallest writer "
            f"heap), got {config.index_memory_mb}"
        )
    if not sources:
        raise BuildError("no source given: pass at least one dump, folder or corpus file")
    out = Path(out).resolve()
    if out.parent.is_dir():
        clean_stale_siblings(out.parent)  # what builds killed here left behind
    if out.exists() and not overwrite:
        raise BuildError(f"{out} exists; pass --overwrite to replace it")
    language = build_language(config, sources)
    config = replace(config, language=language, index=config.index.with_language(language))
    out.parent.mkdir(parents=True, exist_ok=True)
    # Before the workers fork and the index writer's threads start: large blocks stay
    # mapped, so each index run gives its memory back (see keep_large_blocks_mapped).
    keep_large_blocks_mapped()
    report = BuildReport(out=str(out))
    started = time.perf_counter()
    tmp = make_sibling(out, "building")
    workers = None
    writers: _Writers | None = None
    try:
        if config.threads > 1:
            # The main process is busy too (reading, ids, tables, index): with N cores it
            # takes one and N - 1 workers parse. Fork before Tantivy's writer threads exist.
            workers = Workers(config.threads - 1)
        real = any(s.format != WORLD_FORMAT for s in sources) or facts is not None
        writers = _Writers(tmp, config, real)
        assembler = _Assembler(writers, report, language)
        total = sum(s.total_bytes() for s in sources)
        with tqdm(
            total=total, unit="B", unit_scale=True, desc="build", disable=not progress, leave=False
        ) as bar:

            def advance(n: int) -> None:
                report.input_bytes += n
                bar.update(n)

            for src in sources:
                assembler.start(src)
                records = _with_language(src.records(advance), language)
                for result in _ordered_results(records, config, src.name, workers):
                    assembler.add(result, src.name)
                    if report.pages_read % 1000 == 0:
                        bar.set_postfix(pages=report.pages_read, passages=report.passages)
        if workers is not None:
            workers.close()
            workers = None
        writers.close_tables()
        assembler.titles.clear()  # not needed past the stream
        wikidata = None
        if facts is not None and report.articles:
            counts = SourceCounts(facts.name, facts.format, language=language)
            report.sources.append(counts)
            stage_wikidata(facts, writers.stage, language, None)
            wikidata = (counts, assembler.next_fact, language)
        if report.articles == 0:
            writers.index.close()
            raise BuildError(
                f"no article was read from {', '.join(s.name for s in sources)} "
                f"({report.pages_read} pages, {report.pages_skipped} skipped); "
                "check the --format and the files"
            )
        # Tantivy's last commit and merges, then DuckDB's resolution, one after the other:
        # together they held the writer heap and the resolution's memory at once (the
        # build's peak); apart, the peak is the larger of the two.
        layout = writers.index.close()
        give_back_freed_memory()  # the stream's, before the champion lists and resolution
        write_champions(
            tmp / INDEX_DIR, config.index, tmp / TABLE_FILES["passages"], layout.doc_order
        )
        _resolve(tmp, config, report, wikidata, real)
        give_back_freed_memory()
        report.input_bytes = report.input_bytes or total
        files = hash_files(tmp)
        table_hashes = {name: files[fname] for name, fname in TABLE_FILES.items()}
        # A generated world's facts are its own; every other source is typed by the
        # vocabularies, whose versions the id then covers.
        versions = vocabulary_versions()
        if facts is not None:
            versions["wikidata"] = property_map().version
        content_config = config.content_config(versions if real else None)
        report.snapshot_id = compute_snapshot_id(table_hashes, content_config)
        report.seconds = time.perf_counter() - started
        manifest = {
            "format_version": FORMAT_VERSION,
            "snapshot_id": report.snapshot_id,
            "package_version": __version__,
            "content_config": content_config,
            "language": language,
            "build_config": {
                "language": language,
                "passage_words": config.passage_words,
                "threads": config.threads,
                "formats": [s.format for s in sources] + ([facts.format] if facts else []),
            },
            "sources": [s.describe() for s in sources]
            + ([facts.describe()] if facts is not None else []),
            "counts": report.counts(),
            "source_counts": [c.to_dict() for c in report.sources],
            "tables": {
                name: {"file": fname, "sha256": files[fname]} for name, fname in TABLE_FILES.items()
            },
            "skipped": report.skipped,
            "index_layout": layout.to_dict(),
            "files": files,
            "file_sizes": file_sizes(tmp),
        }
        manifest["provenance_sha256"] = provenance_sha256(manifest)
        write_manifest(tmp, manifest)
        apply_modes(tmp)
        _install(tmp, out, overwrite)
    except BaseException:
        if workers is not None:
            workers.terminate()
        if writers is not None:
            writers.index.abort()  # its thread writes into tmp until it is joined
        remove_tree(tmp)
        raise
    return report
