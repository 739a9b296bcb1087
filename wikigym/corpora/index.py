"""The Tantivy BM25 index over passages, and deterministic top-k search.

Tantivy's scores use index-wide statistics, so they do not depend on segment layout;
the order among equal scores does: Tantivy's top-k keeps ties in ascending doc address
(segment ordinal, doc). The build therefore writes an index whose docs, read in that order,
are in ascending passage_id, checks that it did, and records it (:class:`IndexLayout`).
Over such an index Tantivy's own order is (score desc, passage_id asc) up to two segments;
past two, its merge of the segments' lists can drop a tied doc for a later one, and
:class:`~wikigym.corpora.topk.TopK` repairs that from one more search restricted to a run
(the ``run`` field). Over any other layout (e.g. an index written by several threads) the
search fetches past k while the k-th score repeats and orders ties by passage_id itself:
same results, slower when scores tie.

How the ordered layout stays at any size with a bounded writer heap and flat memory
(tantivy-py exposes neither a forced merge nor a merge policy, and a merge by Tantivy's
policy stacks the segments in hash-map order, which loses passage_id order): one writer
thread writes each run of passages into a run directory of its own, commits it as one
segment and is dropped; the run's segment files then move into the index and its
``meta.json`` lists the runs' segments in write order, which is passage_id order. A run
ends at ``SEGMENT_DOCS`` passages or when its text fills its share of the writer heap
(``HEAP_PER_TEXT_BYTE``), so the heap, not the corpus, bounds the build's memory, and the
heap sets the segment count: larger segments search faster (the tie repair and Tantivy's
per-segment work; ``benchmarks/results/scale.md``). No segment is ever merged.
:func:`order_segments` then lists the segments by their first passage_id, and the layout
is checked on the written index, so a Tantivy that writes otherwise only costs the fast
path, never correctness.

Search cost: tantivy-py scores every passage that matches any query term (its collector
runs no block-max WAND), so a query costs the postings of its terms. Queries of several
terms score only the passages that can reach the top k (:mod:`wikigym.corpora.prune`);
one-word queries on frequent terms are answered from champion lists written with the
index (:mod:`wikigym.corpora.champions`). Both give the full query's hits and scores.

Analysis: tantivy's ``en_stem`` chain (simple tokenizer, long tokens removed, lower case,
English Snowball stemmer) with Lucene's 33 English stop words removed before stemming, as
Lucene's EnglishAnalyzer and Pyserini's BM25 do. Stop words occur in nearly every passage,
carry almost no BM25 weight, and cost most of the query time (1M passages: p50 4.4 ms with
them, 0.6 ms without; HotpotQA recall within 0.01, see benchmarks/results). Other languages
get their own stemmer or none, no stop words, and CJK bigrams for Chinese, Japanese and
Korean (:mod:`wikigym.corpora.analysis`); the language is part of the config and the id.

The title is indexed inside the ``body`` field (``title + "\n" + passage text``) rather than
as a second, boosted field: a query over one field is a flat union of term queries, which
Tantivy answers with block-max WAND, while a multi-field or boosted query is a nested union
it must score exhaustively (measured on 1M passages: ~2x slower). Retrieval quality is on
par (HotpotQA recall@5, see benchmarks/results). The passage text is stored separately
(``text``, bytes, not indexed) so hits return it without the title.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import os
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import tantivy

from wikigym.corpora import champions
from wikigym.corpora.analysis import (
    STEMMERS,
    cjk_bigrams,
    language_code,
    stemmer_for,
    uses_bigrams,
)
from wikigym.corpora.champions import ChampionLists
from wikigym.corpora.memory import give_back_freed_memory
from wikigym.corpora.prune import Pruner
from wikigym.corpora.readonly import ReadOnlyIndex
from wikigym.corpora.topk import RUN_FIELD, Scored, TopK
from wikigym.errors import SnapshotError

TOKENIZER = "en_stem"
# Lucene's EnglishAnalyzer stop set (also bm25s's "en" list and Pyserini's default).
ENGLISH_STOPWORDS: tuple[str, ...] = (
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
)  # fmt: skip
DOC_ORDER_PASSAGE_ID = "passage_id"
SOURCE_ID_FIELD = "source_passage_id"
TITLE_BOOST = 0.5  # measured on HotpotQA: recall@5 0.788 at 0.5, 0.718 at 2.0, 0.725 at 0
MAX_QUERY_TERMS = 64
MAX_TOKEN_BYTES = 40  # tantivy's en_stem drops tokens of this many UTF-8 bytes or more
# A run (one segment) ends at SEGMENT_DOCS passages or once its passage text (title and
# body, UTF-8 bytes) reaches its writer heap / HEAP_PER_TEXT_BYTE, whichever comes first.
# Tantivy's writer holds ~1.4 heap bytes per text byte (1.04M passages of the generated
# world in one segment: +136 MB), so a run fits its heap and is one segment; the heap, and
# so the build's memory, does not grow with the corpus. Fewer, larger segments search
# faster (``benchmarks/results/scale.md``): the defaults are measured there.
SEGMENT_DOCS = 1 << 22
INDEX_HEAP_MB = 1024
MIN_INDEX_MEMORY_MB = 16  # Tantivy refuses a writer heap below ~15 MB
HEAP_PER_TEXT_BYTE = 2
# Everything that is not a letter, digit or mark separates terms. This removes the query
# language (quotes, +/-, field:, ranges, parentheses, wildcards) from model-written text.
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_T = TypeVar("_T")


@dataclass(frozen=True)
class IndexConfig:
    """Index settings that change search results (part of ``snapshot_id``).

    Attributes:
        tokenizer: Tantivy's built-in English chain, the analyzer of English indexes (kept
            under its name so English snapshots read as before).
        stopwords: Stop words removed from the body (English only; see
            :mod:`wikigym.corpora.analysis`).
        title_in_body: The title is indexed inside ``body``.
        title_boost: Boost of the separate title field (indexes without ``title_in_body``).
        max_query_terms: Terms of a query that are used.
        language: Base language code of the wiki (``en``, ``de``, ``ja``, ...).
        stemmer: Tantivy stemmer name, or None (no stemming).
        cjk_bigrams: Runs of CJK characters are indexed and queried as bigrams.
    """

    tokenizer: str = TOKENIZER
    stopwords: tuple[str, ...] = ENGLISH_STOPWORDS
    title_in_body: bool = True
    title_boost: float = TITLE_BOOST
    max_query_terms: int = MAX_QUERY_TERMS
    language: str = "en"
    stemmer: str | None = "english"
    cjk_bigrams: bool = False

    def __post_init__(self) -> None:
        if self.stopwords and (self.tokenizer != TOKENIZER or not self.english):
            raise ValueError(
                f"stop words are supported with the English {TOKENIZER!r} analyzer only, got "
                f"language={self.language!r}, tokenizer={self.tokenizer!r}; pass stopwords=() "
                "to use it without them"
            )

    @classmethod
    def for_language(cls, language: str, stopwords: bool = True) -> IndexConfig:
        """The analyzer of a wiki in ``language`` (stop words only exist for English)."""
        return cls().with_language(language, stopwords=stopwords)

    def with_language(self, language: str, stopwords: bool | None = None) -> IndexConfig:
        """This config for ``language``: its stemmer (or none), CJK bigrams where the script
        has no spaces, English stop words kept only for English (``stopwords=None`` keeps
        whether this config had them)."""
        language = language_code(language)
        keep = bool(self.stopwords) if stopwords is None else stopwords
        return replace(
            self,
            language=language,
            stemmer=stemmer_for(language),
            cjk_bigrams=uses_bigrams(language),
            stopwords=(self.stopwords or ENGLISH_STOPWORDS) if keep and language == "en" else (),
        )

    @property
    def english(self) -> bool:
        """The built-in English chain (``en_stem``) is the analyzer."""
        return self.language == "en" and self.stemmer == "english" and not self.cjk_bigrams

    @property
    def analyzer_name(self) -> str:
        """The tokenizer name of ``body`` in the schema."""
        if self.english:
            return f"{self.tokenizer}_stop" if self.stopwords else self.tokenizer
        return f"wg_{self.language}_{self.stemmer or 'nostem'}"

    @property
    def title_analyzer_name(self) -> str:
        """The tokenizer name of ``title`` (the body's, without stop words)."""
        return self.tokenizer if self.english else self.analyzer_name

    def analyzer(self) -> tantivy.TextAnalyzer | None:
        """The custom analyzer (None when the built-in tokenizer is used as is)."""
        if self.english and not self.stopwords:
            return None
        builder = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
            .filter(tantivy.Filter.lowercase())
        )
        if self.stopwords:
            builder = builder.filter(tantivy.Filter.custom_stopword(list(self.stopwords)))
        if self.stemmer:
            builder = builder.filter(tantivy.Filter.stemmer(self.stemmer))
        return builder.build()

    def token_analyzer(self) -> tantivy.TextAnalyzer:
        """The body's analyzer as an object (Tantivy's built-in ``en_stem`` rebuilt when it
        is used as is), to analyze query words the way the query parser does."""
        analyzer = self.analyzer()
        if analyzer is not None:
            return analyzer
        return (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.stemmer("english"))
            .build()
        )

    def register(self, index: tantivy.Index) -> None:
        """Register the custom analyzer on ``index`` (needed for every opened Index)."""
        analyzer = self.analyzer()
        if analyzer is not None:
            index.register_tokenizer(self.analyzer_name, analyzer)

    def prepare(self, text: str) -> str:
        """Text as the analyzer is fed it: CJK runs as bigrams when ``cjk_bigrams``."""
        return cjk_bigrams(text) if self.cjk_bigrams else text

    def to_dict(self) -> dict[str, object]:
        return {
            "tokenizer": self.tokenizer,
            "stopwords": list(self.stopwords),
            "title_in_body": self.title_in_body,
            "title_boost": self.title_boost,
            "max_query_terms": self.max_query_terms,
            "language": self.language,
            "stemmer": self.stemmer,
            "cjk_bigrams": self.cjk_bigrams,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> IndexConfig:
        """Read a manifest's index config (snapshots from before ``title_in_body`` had a
        separate, boosted title field; from before ``stopwords``, none; from before
        ``language``, English)."""
        stopwords = data.get("stopwords", [])
        if not isinstance(stopwords, list) or not all(isinstance(w, str) for w in stopwords):
            raise ValueError(f"index config: stopwords must be a list of words, got {stopwords!r}")
        language = data.get("language", "en")
        stemmer = data.get("stemmer", "english")
        if not isinstance(language, str) or language_code(language) != language:
            raise ValueError(f"index config: language must be a base code, got {language!r}")
        if stemmer is not None and (
            not isinstance(stemmer, str) or stemmer not in STEMMERS.values()
        ):
            raise ValueError(
                f"index config: stemmer must be one of {sorted(set(STEMMERS.values()))} or "
                f"null, got {stemmer!r}"
            )
        return cls(
            tokenizer=str(data.get("tokenizer", TOKENIZER)),
            stopwords=tuple(stopwords),
            title_in_body=bool(data.get("title_in_body", False)),
            title_boost=float(_numeric(data, "title_boost", TITLE_BOOST)),
            max_query_terms=int(_numeric(data, "max_query_terms", MAX_QUERY_TERMS)),
            language=language,
            stemmer=stemmer,
            cjk_bigrams=bool(data.get("cjk_bigrams", False)),
        )


def _numeric(data: dict[str, object], key: str, default: float) -> float | str:
    """A numeric field of a manifest's index config, as ``float()``/``int()`` accept it.

    Raises:
        ValueError: The field holds something else (a list, null, ...).
    """
    value = data.get(key, default)
    if not isinstance(value, int | float | str):
        raise ValueError(f"index config: {key} must be a number, got {value!r}")
    return value


def passage_schema(config: IndexConfig) -> tantivy.Schema:
    """Schema: passage_id (fast, stored), doc_id (fast, stored), title, body (stemmed),
    with ``title_in_body`` the stored passage text, the source's passage id and the run
    marker (indexed only)."""
    builder = (
        tantivy.SchemaBuilder()
        .add_integer_field("passage_id", stored=True, indexed=True, fast=True)
        .add_integer_field("doc_id", stored=True, indexed=False, fast=True)
        # The title keeps its stop words: it answers queries made of stop words only ("A").
        .add_text_field("title", stored=True, tokenizer_name=config.title_analyzer_name)
    )
    if config.title_in_body:
        builder = builder.add_text_field("body", stored=False, tokenizer_name=config.analyzer_name)
        builder = builder.add_bytes_field("text", stored=True, indexed=False, fast=False)
    else:
        builder = builder.add_text_field("body", stored=True, tokenizer_name=config.analyzer_name)
    # The source's own passage id (DPR/KILT), returned with hits; absent for other sources.
    builder = builder.add_bytes_field(SOURCE_ID_FIELD, stored=True, indexed=False, fast=False)
    # The run (segment) a passage was written in, as the run's first passage_id: a search
    # restricted to one segment (corpora.topk).
    builder = builder.add_unsigned_field(RUN_FIELD, stored=False, indexed=True, fast=False)
    return builder.build()


@dataclass(frozen=True)
class IndexLayout:
    """How the built index lies on disk (recorded in the manifest, not in ``snapshot_id``).

    Attributes:
        segments: Number of Tantivy segments.
        doc_order: ``"passage_id"`` when the docs, in (segment ordinal, doc) order, are in
            strictly ascending passage_id order (checked on the written index), else
            ``"none"``.
    """

    segments: int
    doc_order: str

    def to_dict(self) -> dict[str, object]:
        return {"segments": self.segments, "doc_order": self.doc_order}


class PassageIndexWriter:
    """Writes the passage index under ``path``.

    Args:
        path: Empty directory for the index.
        config: Index settings.
        threads: Tantivy writer threads. Results do not depend on it (see module doc); one
            thread fed in passage_id order gives the layout that searches fastest.
        heap_mb: Writer heap (per run; a run's text is capped at heap / HEAP_PER_TEXT_BYTE).
        segment_docs: Most passages per segment, each written by a writer of its own and
            never merged (one writer thread only; see the module doc).
    """

    def __init__(
        self,
        path: Path,
        config: IndexConfig,
        threads: int = 1,
        heap_mb: int = INDEX_HEAP_MB,
        segment_docs: int = SEGMENT_DOCS,
    ) -> None:
        if segment_docs < 1:
            raise ValueError(f"segment_docs must be >= 1, got {segment_docs}")
        path.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._config = config
        self._index = tantivy.Index(passage_schema(config), path=str(path), reuse=False)
        config.register(self._index)
        self._threads = max(1, threads)
        self._heap = max(heap_mb * 1024 * 1024, 16 * 1024 * 1024 * self._threads)
        self._title_in_body = config.title_in_body
        # Several threads interleave docs across segments anyway: one writer then, whose
        # segments Tantivy merges as it likes.
        self._segment_docs = segment_docs if self._threads == 1 else 0
        self._runs = 0
        self._segments: list[dict[str, object]] = []
        self._run: Path | None = None
        self._in_run = 0
        self._run_bytes = 0
        self._run_budget = self._heap // HEAP_PER_TEXT_BYTE
        self._run_first = 0
        self._writer: tantivy.IndexWriter | None = (
            None if self._segment_docs else self._index.writer(self._heap, self._threads)
        )

    def _open_run(self) -> tantivy.IndexWriter:
        """A writer of its own for the next ``segment_docs`` passages."""
        self._run = self._path / f".run-{self._runs:06d}"
        self._run.mkdir()
        index = tantivy.Index(passage_schema(self._config), path=str(self._run), reuse=False)
        self._config.register(index)
        self._runs += 1
        self._in_run = 0
        self._run_bytes = 0
        return index.writer(self._heap, 1)

    def _close_run(self) -> None:
        """Commit the run, move its segment files into the index and keep their meta."""
        assert self._writer is not None and self._run is not None
        self._writer.commit()
        self._writer.wait_merging_threads()
        self._writer = None
        run = self._run
        meta = json.loads((run / META_FILE).read_text(encoding="utf-8"))
        self._segments.extend(meta["segments"])
        names = {s["segment_id"].replace("-", "") for s in meta["segments"]}
        for file in sorted(run.iterdir()):
            if file.name.split(".", 1)[0] in names:
                os.replace(file, self._path / file.name)
        shutil.rmtree(run)
        self._run = None
        # The next run's writer does not reuse all of what this one freed (glibc arenas):
        # without this the build kept ~30 MB more per 2^19-passage run (+204 MB at 4.58M).
        give_back_freed_memory()

    def add(
        self, passage_id: int, doc_id: int, title: str, body: str, source_id: str | None = None
    ) -> None:
        """Index one passage (``source_id``: its id in the source, stored with it)."""
        if self._title_in_body:
            doc = tantivy.Document(
                passage_id=passage_id,
                doc_id=doc_id,
                title=title,
                body=self._config.prepare(f"{title}\n{body}"),
                text=body.encode("utf-8"),
            )
        else:
            doc = tantivy.Document(passage_id=passage_id, doc_id=doc_id, title=title, body=body)
        if source_id is not None:
            doc.add_bytes(SOURCE_ID_FIELD, source_id.encode("utf-8"))
        if self._writer is None:
            self._writer = self._open_run()
            self._run_first = passage_id
        # One marker per run (several writer threads: one run, no usable markers).
        doc.add_unsigned(RUN_FIELD, self._run_first if self._segment_docs else 0)
        self._writer.add_document(doc)
        self._in_run += 1
        # Characters, not bytes: the UTF-8 size of non-ASCII text is at most 4x, and the
        # measured 1.4 heap bytes per byte leave room under HEAP_PER_TEXT_BYTE; a run that
        # overfills its heap only becomes two segments with one marker (see _run_markers).
        self._run_bytes += len(title) + len(body)
        if self._segment_docs and (
            self._in_run >= self._segment_docs or self._run_bytes >= self._run_budget
        ):
            self._close_run()

    def abort(self) -> None:
        """Stop the writer's indexing thread without committing (a build that is given up).

        Tantivy indexes on a thread of its own that keeps writing segment files after
        ``add_document`` returns: the folder can only be removed once that thread has
        finished. Safe to call twice or after :meth:`close`.
        """
        writer, self._writer = self._writer, None
        if writer is not None:
            # RuntimeError: consumed already (a commit failed half-way).
            with contextlib.suppress(RuntimeError):
                writer.wait_merging_threads()

    def close(self) -> IndexLayout:
        """Commit, list the runs' segments in ``meta.json``, order them, and report the
        written layout."""
        if not self._segment_docs:
            assert self._writer is not None
            self._writer.commit()
            self._writer.wait_merging_threads()
        else:
            if self._writer is not None:
                self._close_run()
            if self._segments:
                self._list_segments()
        order_segments(self._path)
        return read_layout(self._path)

    def _list_segments(self) -> None:
        """The index's ``meta.json`` (and Tantivy's list of the files it manages) name every
        run's segment, in write order (written atomically)."""
        meta = json.loads((self._path / META_FILE).read_text(encoding="utf-8"))
        meta["segments"] = self._segments
        meta["opstamp"] = sum(int(str(s["max_doc"])) for s in self._segments)
        _write_json(self._path / META_FILE, meta, indent=2)
        managed = sorted(
            f.name for f in self._path.iterdir() if f.is_file() and not f.name.startswith(".")
        )
        _write_json(self._path / MANAGED_FILE, managed)


META_FILE = "meta.json"
MANAGED_FILE = ".managed.json"  # the files Tantivy may garbage-collect around


def _write_json(path: Path, data: object, indent: int | None = None) -> None:
    """Write ``data`` as JSON to ``path`` atomically (a sibling file, then a rename)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=indent), encoding="utf-8")
    os.replace(tmp, path)


def _segment_sizes(path: Path) -> list[int] | None:
    """``max_doc`` of each segment as ``meta.json`` lists them (the segment ordinals' order),
    or None when the file does not hold a list of segments with sizes."""
    try:
        meta = json.loads((path / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    segments = meta.get("segments") if isinstance(meta, dict) else None
    if not isinstance(segments, list):
        return None
    sizes = [s.get("max_doc") if isinstance(s, dict) else None for s in segments]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in sizes):
        return None
    return [int(n) for n in sizes if isinstance(n, int)]


def _first_ids(searcher: tantivy.Searcher, sizes: list[int]) -> list[int | float | bool | None]:
    """The passage_id of each segment's first doc (None for an empty segment)."""
    return [
        searcher.fast_field_values("passage_id", [tantivy.DocAddress(o, 0)])[0] if n else None
        for o, n in enumerate(sizes)
    ]


def _run_markers(searcher: tantivy.Searcher, sizes: list[int] | None) -> list[int] | None:
    """Each segment's run marker (the first passage_id of its run), when every run is one
    segment or two (Tantivy flushes a run early if its heap fills): a search restricted to
    a marker then spans at most two segments, whose merge is exact (``corpora.topk``).
    None otherwise (an index written before markers, by several threads, or a run split
    more)."""
    if sizes is None or len(sizes) != searcher.num_segments or 0 in sizes:
        return None
    firsts = _first_ids(searcher, sizes)
    runs: list[int] = []
    ordinal = 0
    while ordinal < len(sizes):
        first = firsts[ordinal]
        if not isinstance(first, int) or isinstance(first, bool):
            return None
        try:
            held = searcher.doc_freq(RUN_FIELD, first)
        except ValueError:  # no run field
            return None
        span = 1 if held == sizes[ordinal] else 2
        if span == 2 and (ordinal + 1 >= len(sizes) or held != sizes[ordinal] + sizes[ordinal + 1]):
            return None
        runs += [first] * span
        ordinal += span
    return runs


def _segment_starts(searcher: tantivy.Searcher, sizes: list[int] | None) -> list[int] | None:
    """Each segment's first passage_id when the segments hold consecutive ids in order
    (segment i: ids ``starts[i] .. starts[i] + size - 1``), else None."""
    if sizes is None or len(sizes) != searcher.num_segments or 0 in sizes:
        return None
    firsts = _first_ids(searcher, sizes)
    lasts = [
        searcher.fast_field_values("passage_id", [tantivy.DocAddress(o, n - 1)])[0]
        for o, n in enumerate(sizes)
    ]
    if not all(isinstance(f, int) and not isinstance(f, bool) for f in firsts):
        return None
    starts = [int(str(f)) for f in firsts]
    expected = starts[0]
    for first, last, size in zip(starts, lasts, sizes, strict=True):
        if first != expected or last != expected + size - 1:
            return None
        expected += size
    return starts


def write_champions(path: Path, config: IndexConfig, passages: Path, doc_order: str) -> int:
    """Write the champion lists of the index at ``path`` (``corpora.champions``): the terms
    of a sample of ``passages`` (the snapshot's passages table) that at least
    ``champions.MIN_DOC_FREQ`` passages hold, each with its exact top passages. Returns the
    number of terms (0, and no file, for an index whose title is a field of its own)."""
    if not config.title_in_body:
        return 0
    searcher = PassageSearcher(path, config, doc_order, prune=False)
    analyzer = config.token_analyzer()
    seen: set[str] = set()
    for text in champions.sampled_texts(passages, searcher.searcher.num_docs):
        seen.update(analyzer.analyze(config.prepare(text)))
    schema = searcher.index.schema
    lists = []
    for term in sorted(seen):
        if searcher.searcher.doc_freq("body", term) < champions.MIN_DOC_FREQ:
            continue
        query = tantivy.Query.term_query(schema, "body", term, index_option="freq")
        hits = searcher.topk.top(query, champions.CHAMPIONS)
        ids = searcher.searcher.fast_field_values("passage_id", [a for _, a in hits])
        lists.append((term, [_stored_int(i) for i in ids], [score for score, _ in hits]))
    return champions.write(path / champions.FILE, lists)


def order_segments(path: Path) -> None:
    """List the segments in ``meta.json`` by their first passage_id (written atomically).

    Tantivy numbers a searcher's segments in ``meta.json``'s list order, which is otherwise
    arbitrary; this order makes (segment ordinal, doc) follow passage_id when each segment is
    a run of ascending ids. Only the list order changes: the same segments, the same index.
    """
    sizes = _segment_sizes(path)
    if sizes is None or len(sizes) < 2:
        return
    opened = ReadOnlyIndex(path)
    searcher = opened.index.searcher()
    if searcher.num_segments != len(sizes):
        return
    firsts = _first_ids(searcher, sizes)
    del searcher, opened
    meta = json.loads((path / META_FILE).read_text(encoding="utf-8"))
    rank = [
        (not isinstance(f, int), f if isinstance(f, int) else 0, i) for i, f in enumerate(firsts)
    ]
    meta["segments"] = [meta["segments"][i] for *_, i in sorted(rank)]
    _write_json(path / META_FILE, meta, indent=2)


def read_layout(path: Path) -> IndexLayout:
    """Inspect an index: its segment count and whether its docs, in (segment ordinal, doc)
    order, are in strictly ascending passage_id order."""
    opened = ReadOnlyIndex(path)  # alive until the scan is done
    searcher = opened.index.searcher()
    segments = searcher.num_segments
    sizes = _segment_sizes(path)
    # The sizes address the docs: they must be the ones the searcher loaded.
    ordered = sizes is not None and len(sizes) == segments and sum(sizes) == searcher.num_docs
    previous = -1
    step = 1 << 16
    for ordinal, size in enumerate(sizes if ordered and sizes else []):
        for start in range(0, size, step):
            addresses = [
                tantivy.DocAddress(ordinal, d) for d in range(start, min(size, start + step))
            ]
            for pid in searcher.fast_field_values("passage_id", addresses):
                if not isinstance(pid, int) or pid <= previous:  # no id, or out of order
                    ordered = False
                    break
                previous = pid
            if not ordered:
                break
        if not ordered:
            break
    return IndexLayout(segments, DOC_ORDER_PASSAGE_ID if ordered else "none")


def query_terms(text: str, max_terms: int = MAX_QUERY_TERMS, bigrams: bool = False) -> list[str]:
    """The plain terms of a model-written query (lower-cased; operators removed; CJK runs
    as their bigrams when ``bigrams``)."""
    if bigrams:
        text = cjk_bigrams(text)
    terms = [t for t in _NON_WORD.split(text.lower()) if t]
    return terms[:max_terms]


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result."""

    passage_id: int
    doc_id: int
    title: str
    score: float
    text: str
    source_passage_id: str | None = None  # the passage's id in its source (DPR, KILT)


class PassageSearcher:
    """Read-only, thread-safe searcher over a built index.

    Results are the exact top k by (score desc, passage_id asc) on any layout
    (:mod:`wikigym.corpora.topk`); queries of several terms score only the documents that
    can reach the top k (:mod:`wikigym.corpora.prune`), with the same hits and scores.

    Args:
        path: The index directory.
        config: The index settings it was built with.
        doc_order: The layout's ``doc_order`` from the manifest; ``"passage_id"`` enables
            the single-search path.
        threads: Threads that search the segments of one query in parallel (1: one search
            over all segments; see ``corpora.topk``). Never changes the results.
        prune: Score only the documents that can reach the top k (MaxScore); never changes
            the results.
    """

    def __init__(
        self,
        path: Path,
        config: IndexConfig,
        doc_order: str | None = None,
        threads: int = 1,
        prune: bool = True,
    ) -> None:
        self.config = config
        self._opened = ReadOnlyIndex(path)  # keeps a read-only mount's private folder alive
        self.index = self._opened.index
        config.register(self.index)
        self._stopwords = frozenset(config.stopwords)
        self.searcher = self.index.searcher()
        # Any segment count: the build checked that (segment, doc) order is passage_id order.
        self.ordered = doc_order == DOC_ORDER_PASSAGE_ID
        sizes = _segment_sizes(path)
        runs = _run_markers(self.searcher, sizes) if self.ordered else None
        self.topk = TopK(self.searcher, self.index.schema, self.ordered, runs, threads)
        # Champion lists answer one-word queries; they name passage ids, which an ordered
        # index of consecutive ids maps to addresses without a lookup.
        self._starts = _segment_starts(self.searcher, sizes) if self.ordered else None
        self._champions: ChampionLists | None = None
        if self._starts is not None and config.title_in_body and (path / champions.FILE).is_file():
            try:
                self._champions = ChampionLists(path / champions.FILE)
            except (OSError, ValueError) as exc:
                raise SnapshotError(f"{path}: unreadable champion lists ({exc})") from exc
        # The bound needs Tantivy's document count: no deleted documents (ours never have).
        exact_count = sizes is not None and sum(sizes) == self.searcher.num_docs
        self._pruner = (
            Pruner(self.searcher, self.index.schema, self.topk, "body", self._champions)
            if prune and exact_count and config.title_in_body
            else None
        )
        self._analyzer = config.token_analyzer()

    @property
    def paths(self) -> dict[str, int]:
        """Queries by the way the pruner answered them (``corpora.prune``; for benchmarks)."""
        return dict(self._pruner.paths) if self._pruner is not None else {}

    def build_query(self, text: str) -> tantivy.Query | None:
        """The query for model-written ``text``; None when no term can match."""
        plan = self._plan(text)
        return None if plan is None else plan[0]

    def _plan(self, text: str) -> tuple[tantivy.Query, list[str] | None] | None:
        """The query for ``text`` and, when it is a flat union of one term per word on the
        body, those terms in clause order (what :class:`Pruner` scores); None when no term
        can match.

        Every term (a run of Python word characters, all alphanumeric to Tantivy's simple
        tokenizer too) is exactly one token to Tantivy; the analyzer then drops tokens of
        ``MAX_TOKEN_BYTES`` bytes or more, and stop words. Doing that here gives the same
        terms without a call into the analyzer, and no query that analyses to nothing
        (Tantivy turns such a query into one that matches every document).
        """
        terms = [
            t
            for t in query_terms(text, self.config.max_query_terms, self.config.cjk_bigrams)
            if len(t) * 4 < MAX_TOKEN_BYTES or len(t.encode("utf-8")) < MAX_TOKEN_BYTES
        ]
        if not terms:
            return None
        kept = [t for t in terms if t not in self._stopwords] if self._stopwords else terms
        if not kept:
            # Only stop words ("A", "It", "The The"): the body has none of them indexed; the
            # title field keeps them.
            return self._parse(" ".join(terms), ["title"], None), None
        text = " ".join(kept)
        if not self.config.title_in_body:
            return self._parse(text, ["title", "body"], {"title": self.config.title_boost}), None
        try:
            query = self.index.parse_query(text, ["body"])
        except ValueError:
            return self._parse(text, ["body"], None), None
        # The parser makes one clause per distinct word, in order; a word that analyses to
        # several tokens becomes a phrase, which the pruner does not score.
        clauses = [self._analyzer.analyze(word) for word in dict.fromkeys(kept)]
        if any(len(tokens) != 1 for tokens in clauses):
            return query, None
        return query, [tokens[0] for tokens in clauses]

    def _parse(
        self, text: str, fields: list[str], boosts: dict[str, float] | None
    ) -> tantivy.Query:
        # The strict parser builds a flat union of term queries; the lenient one nests each
        # term and is ~2x slower on 1M passages. The terms are plain words, so strict
        # parsing fails only on input the lenient parser then handles.
        try:
            if boosts is None:
                return self.index.parse_query(text, fields)
            return self.index.parse_query(text, fields, field_boosts=boosts)
        except ValueError:
            query, _errors = self.index.parse_query_lenient(text, fields, field_boosts=boosts or {})
        return query

    def search(self, text: str, k: int) -> list[Hit]:
        """Top ``k`` passages by BM25, ties by passage_id ascending."""
        return [self._hit(score, address) for score, address in self.top(text, k)]

    def top(self, text: str, k: int) -> list[Scored]:
        """Scores and addresses of the top ``k`` (what :meth:`search` fetches)."""
        if k <= 0:
            return []
        plan = self._plan(text)
        if plan is None:
            return []
        query, clauses = plan
        if clauses is not None and len(clauses) == 1 and self._champions is not None:
            listed = self._champions.top(clauses[0], k)
            if listed is not None:
                return [(score, self._address(pid)) for score, pid in listed]
        if clauses is not None and self._pruner is not None:
            return self._pruner.top(query, clauses, k)
        return self.topk.top(query, k)

    def close(self) -> None:
        """Stop the search threads (``threads > 1``)."""
        self.topk.close()

    def _address(self, passage_id: int) -> tantivy.DocAddress:
        """The address of a passage in an ordered index of consecutive ids."""
        assert self._starts is not None
        ordinal = bisect.bisect_right(self._starts, passage_id) - 1
        return tantivy.DocAddress(ordinal, passage_id - self._starts[ordinal])

    def _hit(self, score: float, address: tantivy.DocAddress) -> Hit:
        doc = self.searcher.doc(address)
        if self.config.title_in_body:
            text = _stored(doc, "text", bytes).decode("utf-8")
        else:
            text = _stored(doc, "body", str)
        origin = doc.get_first(SOURCE_ID_FIELD)
        return Hit(
            _stored(doc, "passage_id", int),
            _stored(doc, "doc_id", int),
            _stored(doc, "title", str),
            score,
            text,
            origin.decode("utf-8") if origin is not None else None,
        )


def _stored_int(value: object) -> int:
    """A passage_id read from the fast field (every document of our index has one)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise SnapshotError(f"index document: passage_id {value!r} is not an integer")
    return value


def _stored(doc: tantivy.Document, name: str, kind: type[_T]) -> _T:
    """The value of a stored field every document of our index has.

    ``get_first`` is used, not ``doc[name]``, which builds a list per access.

    Raises:
        SnapshotError: The document lacks the field, or holds another type there.
    """
    value = doc.get_first(name)
    if not isinstance(value, kind):
        raise SnapshotError(
            f"index document: expected a {kind.__name__} in field {name!r}, got "
            f"{type(value).__name__}; the index is not a wikigym index: rebuild the snapshot"
        )
    return value
