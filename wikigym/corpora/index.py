"""The Tantivy BM25 index over passages, and deterministic top-k search.

Tantivy's scores use index-wide statistics, so they do not depend on segment layout;
the order among equal scores does. :meth:`PassageSearcher.search` therefore fetches past k
while the k-th score repeats and orders ties by passage_id.

The title is indexed inside the ``body`` field (``title + "\n" + passage text``) rather than
as a second, boosted field: a query over one field is a flat union of term queries, which
Tantivy answers with block-max WAND, while a multi-field or boosted query is a nested union
it must score exhaustively (measured on 1M passages: ~2x slower). Retrieval quality is on
par (HotpotQA recall@5, see benchmarks/results). The passage text is stored separately
(``text``, bytes, not indexed) so hits return it without the title.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import tantivy

TOKENIZER = "en_stem"
TITLE_BOOST = 0.5  # measured on HotpotQA: recall@5 0.788 at 0.5, 0.718 at 2.0, 0.725 at 0
MAX_QUERY_TERMS = 64
# Everything that is not a letter, digit or mark separates terms. This removes the query
# language (quotes, +/-, field:, ranges, parentheses, wildcards) from model-written text.
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


@dataclass(frozen=True)
class IndexConfig:
    """Index settings that change search results (part of ``snapshot_id``)."""

    tokenizer: str = TOKENIZER
    title_in_body: bool = True
    title_boost: float = TITLE_BOOST
    max_query_terms: int = MAX_QUERY_TERMS

    def to_dict(self) -> dict[str, object]:
        return {
            "tokenizer": self.tokenizer,
            "title_in_body": self.title_in_body,
            "title_boost": self.title_boost,
            "max_query_terms": self.max_query_terms,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> IndexConfig:
        """Read a manifest's index config (snapshots from before ``title_in_body`` had a
        separate, boosted title field)."""
        return cls(
            tokenizer=str(data.get("tokenizer", TOKENIZER)),
            title_in_body=bool(data.get("title_in_body", False)),
            title_boost=float(data.get("title_boost", TITLE_BOOST)),  # type: ignore[arg-type]
            max_query_terms=int(data.get("max_query_terms", MAX_QUERY_TERMS)),  # type: ignore[call-overload]
        )


def passage_schema(config: IndexConfig) -> tantivy.Schema:
    """Schema: passage_id (fast, stored), doc_id (fast, stored), title, body (stemmed) and,
    with ``title_in_body``, the stored passage text."""
    builder = (
        tantivy.SchemaBuilder()
        .add_integer_field("passage_id", stored=True, indexed=True, fast=True)
        .add_integer_field("doc_id", stored=True, indexed=False, fast=True)
        .add_text_field("title", stored=True, tokenizer_name=config.tokenizer)
    )
    if config.title_in_body:
        builder = builder.add_text_field("body", stored=False, tokenizer_name=config.tokenizer)
        builder = builder.add_bytes_field("text", stored=True, indexed=False, fast=False)
    else:
        builder = builder.add_text_field("body", stored=True, tokenizer_name=config.tokenizer)
    return builder.build()


class PassageIndexWriter:
    """Writes the passage index under ``path``.

    Args:
        path: Empty directory for the index.
        config: Index settings.
        threads: Tantivy writer threads (does not change results, see module doc).
        heap_mb: Total writer heap.
    """

    def __init__(
        self, path: Path, config: IndexConfig, threads: int = 1, heap_mb: int = 256
    ) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self._index = tantivy.Index(passage_schema(config), path=str(path), reuse=False)
        threads = max(1, threads)
        heap = max(heap_mb * 1024 * 1024, 16 * 1024 * 1024 * threads)
        self._writer = self._index.writer(heap, threads)
        self._title_in_body = config.title_in_body

    def add(self, passage_id: int, doc_id: int, title: str, body: str) -> None:
        if self._title_in_body:
            doc = tantivy.Document(
                passage_id=passage_id,
                doc_id=doc_id,
                title=title,
                body=f"{title}\n{body}",
                text=body.encode("utf-8"),
            )
        else:
            doc = tantivy.Document(passage_id=passage_id, doc_id=doc_id, title=title, body=body)
        self._writer.add_document(doc)

    def close(self) -> None:
        self._writer.commit()
        self._writer.wait_merging_threads()


def query_terms(text: str, max_terms: int = MAX_QUERY_TERMS) -> list[str]:
    """The plain terms of a model-written query (lower-cased; operators removed)."""
    terms = [t for t in _NON_WORD.split(text.lower()) if t]
    return terms[:max_terms]


@dataclass(frozen=True, slots=True)
class RawHit:
    passage_id: int
    doc_id: int
    score: float
    title: str
    text: str


class PassageSearcher:
    """Read-only, thread-safe searcher over a built index."""

    def __init__(self, path: Path, config: IndexConfig) -> None:
        self.config = config
        self.index = tantivy.Index.open(str(path))
        self.searcher = self.index.searcher()

    def build_query(self, text: str) -> tantivy.Query | None:
        terms = query_terms(text, self.config.max_query_terms)
        if not terms:
            return None
        text = " ".join(terms)
        fields = ["body"] if self.config.title_in_body else ["title", "body"]
        boosts = None if self.config.title_in_body else {"title": self.config.title_boost}
        # The strict parser builds a flat union of term queries (block-max WAND); the lenient
        # one nests each term and is ~2x slower on 1M passages. The terms are plain words, so
        # strict parsing fails only on input the lenient parser then handles.
        try:
            return self.index.parse_query(text, fields, field_boosts=boosts or {})
        except ValueError:
            query, _errors = self.index.parse_query_lenient(text, fields, field_boosts=boosts or {})
        return query

    def search(self, text: str, k: int) -> list[RawHit]:
        """Top ``k`` passages by BM25, ties by passage_id ascending."""
        if k <= 0:
            return []
        query = self.build_query(text)
        if query is None:
            return []
        # k + 1 hits tell whether the k-th score continues past the cut; fetch more only then.
        limit = k + 1
        while True:
            hits = self.searcher.search(query, limit, count=False).hits
            if len(hits) < limit or len(hits) <= k or hits[-1][0] < hits[k - 1][0]:
                break
            limit *= 8  # the k-th score is still repeating at the cut: look further
        if not hits:
            return []
        ids = self.searcher.fast_field_values("passage_id", [a for _, a in hits])
        ranked = sorted(zip(hits, ids, strict=True), key=lambda h: (-h[0][0], h[1]))[:k]
        out = []
        for (score, address), pid in ranked:
            doc = self.searcher.doc(address)
            out.append(
                RawHit(
                    passage_id=int(pid),
                    doc_id=int(doc["doc_id"][0]),
                    score=float(score),
                    title=doc["title"][0],
                    text=doc["text"][0].decode("utf-8")
                    if self.config.title_in_body
                    else doc["body"][0],
                )
            )
        return out
