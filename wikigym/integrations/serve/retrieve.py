"""Search-R1's retriever protocol: ``POST /retrieve`` over the snapshot's BM25 search.

Search-R1's ``search_r1/search/retrieval_server.py`` (the server that Search-R1, verl's
search tool, ASearcher and GEM call) takes ``{"queries": [...], "topk": k, "return_scores":
b}`` and answers ``{"result": [hits of query 1, hits of query 2, ...]}``, where a hit is the
corpus row ``{"id", "contents"}`` (with ``return_scores``: ``{"document": row, "score":
s}``); ``contents`` is the wiki-18 line ``"Title"\\ntext`` that its clients split on the first
newline. SkyRL's copy of the server (``examples/train/search/retriever``) takes one
``"query"`` instead of ``"queries"``; both are accepted. A missing or zero ``topk`` is the
server's default (3, Search-R1's ``--topk``). The hits are :meth:`Snapshot.search`'s for the
same query and k, in its order (BM25, ties by passage id); a passage's id is its id in its
source (wiki-18's, for a DPR/KILT snapshot) when it has one, else the snapshot's passage id.
A batch is spread over the server's search threads.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, ValidationError

from wikigym.corpora.snapshot import Snapshot
from wikigym.integrations.serve.protocol import clip, quote

BATCH_CHUNK = 16
"""Queries of one batch searched in one task (a batch is cut into chunks of this many)."""


class RetrieveRequest(BaseModel):
    """The body of ``POST /retrieve``: Search-R1's ``QueryRequest`` (``queries``), or SkyRL's
    (``query``). Lax types and ignored extra fields, as FastAPI's model of it has."""

    queries: list[str] | None = None
    query: str | None = None
    topk: int | None = None
    return_scores: bool = False


class RetrieveError(Exception):
    """A request the retriever cannot answer: its FastAPI-style 422 ``detail`` list.

    Attributes:
        detail: ``[{"loc": [...], "msg": ..., "type": ...}]`` (never the input itself).
    """

    def __init__(self, detail: list[dict[str, Any]]) -> None:
        super().__init__(detail[0]["msg"] if detail else "invalid request")
        self.detail = detail


def _invalid(loc: list[Any], message: str, kind: str = "value_error") -> RetrieveError:
    return RetrieveError([{"loc": loc, "msg": clip(message), "type": kind}])


def parse_request(
    body: Any, *, default_topk: int, max_topk: int, max_queries: int
) -> tuple[list[str], int, bool, bool]:
    """``(queries, topk, return_scores, batched)`` of a request body.

    ``batched`` is False for SkyRL's one-``query`` form (its reply holds one hit list all the
    same: ``{"result": [[...]]}``).

    Raises:
        RetrieveError: Not the request's shape, or past the server's bounds.
    """
    if not isinstance(body, dict):
        raise _invalid(["body"], f"expected a JSON object, got {type(body).__name__}")
    try:
        request = RetrieveRequest.model_validate(body)
    except ValidationError as exc:
        detail = [
            {"loc": ["body", *e["loc"]], "msg": clip(e["msg"]), "type": e["type"]}
            for e in exc.errors(include_input=False, include_url=False, include_context=False)
        ]
        raise RetrieveError(detail) from None
    if (request.queries is None) == (request.query is None):
        raise _invalid(
            ["body", "queries"],
            "give 'queries' (a list of strings, Search-R1) or 'query' (one string, SkyRL)",
            "missing",
        )
    batched = request.queries is not None
    queries = request.queries if request.queries is not None else [str(request.query)]
    if len(queries) > max_queries:
        raise _invalid(
            ["body", "queries"], f"at most {max_queries} queries a request, got {len(queries)}"
        )
    topk = request.topk or default_topk  # Search-R1: `if not request.topk` takes the default
    if not 1 <= topk <= max_topk:
        raise _invalid(["body", "topk"], f"topk must be 1 to {max_topk}, got {quote(topk)}")
    return queries, topk, request.return_scores, batched


def contents(title: str, text: str) -> str:
    """A passage as a wiki-18 corpus line holds it: the title in double quotes, a newline,
    the text (Search-R1's clients take the first line as the title)."""
    return f'"{title}"\n{text}'


def search_rows(
    snapshot: Snapshot, queries: list[str], topk: int, return_scores: bool
) -> list[list[dict[str, Any]]]:
    """Each query's hits as Search-R1's server lists them (runs in a search thread)."""
    out = []
    for query in queries:
        rows = []
        for hit in snapshot.search(query, topk):
            pid = hit.source_passage_id if hit.source_passage_id is not None else hit.passage_id
            document = {"id": str(pid), "contents": contents(hit.title, hit.text)}
            rows.append({"document": document, "score": hit.score} if return_scores else document)
        out.append(rows)
    return out


class Retriever:
    """``/retrieve`` over one snapshot, a batch spread over ``threads`` search threads.

    Tantivy's search runs without the GIL, so a batch of many queries uses several cores;
    the rows are built under the GIL. Results never depend on the thread count: each query
    is one :meth:`Snapshot.search`, and the reply keeps the request's order.
    """

    def __init__(self, snapshot: Snapshot, threads: int) -> None:
        self.snapshot = snapshot
        self.threads = threads
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="wikigym-search")

    def chunks(
        self, queries: list[str], topk: int, return_scores: bool
    ) -> list[tuple[Any, list[str], int, bool]]:
        """The batch cut into one call per chunk: ``(fn, queries, topk, return_scores)``."""
        size = max(1, min(BATCH_CHUNK, -(-len(queries) // self.threads)))
        return [
            (self._search, queries[i : i + size], topk, return_scores)
            for i in range(0, len(queries), size)
        ]

    def _search(
        self, queries: list[str], topk: int, return_scores: bool
    ) -> list[list[dict[str, Any]]]:
        return search_rows(self.snapshot, queries, topk, return_scores)

    @property
    def executor(self) -> ThreadPoolExecutor:
        return self._executor

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
