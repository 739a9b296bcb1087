"""``search(query, k)``: BM25 over the snapshot's passages, best first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field, StringConstraints

from wikigym.corpora.index import Hit
from wikigym.tasks.limits import DEFAULT_K, MAX_K, MAX_QUERY_CHARS
from wikigym.tasks.refs import page_ref, passage_ref
from wikigym.tools.base import Tag, Tool, ToolArgs, ToolBox, ToolResult


class SearchArgs(ToolArgs):
    """Arguments of `search`."""

    query: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUERY_CHARS)
    ] = Field(description="Keywords or a question.")
    k: Annotated[int, Field(ge=1, le=MAX_K)] = Field(
        default=DEFAULT_K, description=f"How many passages to return (1 to {MAX_K})."
    )


@dataclass(frozen=True)
class SearchOutput:
    """A search: the query as validated and the hits, best first (none: no match)."""

    query: str
    hits: tuple[Hit, ...]

    def render(self) -> str:
        """``search('q'): N results``, then per hit ``1. [pN] Title (dN)`` and its text, indented."""
        if not self.hits:
            return f"search({self.query!r}): no passage matches. Try other or fewer words."
        lines = [f"search({self.query!r}): {len(self.hits)} results"]
        for rank, h in enumerate(self.hits, 1):
            lines.append(f"{rank}. [{passage_ref(h.passage_id)}] {h.title} ({page_ref(h.doc_id)})")
            lines.append(f"   {h.text}")
        return "\n".join(lines)


def run(box: ToolBox, args: SearchArgs, seed: int) -> ToolResult:
    """The hits; a call that names no ``k`` gets the env's count (the schema's default says 5)."""
    k = args.k if "k" in args.model_fields_set else box.config.search_k
    hits = tuple(box.snapshot.search(args.query, k))
    return ToolResult(
        SearchOutput(args.query, hits), seen=tuple(passage_ref(h.passage_id) for h in hits)
    )


TOOL = Tool(
    name="search",
    description=(
        "Search the encyclopedia (BM25 over passages). Returns up to k passages, best first, "
        "each with its passage id (like p123), page title, doc id and text."
    ),
    args=SearchArgs,
    example={"query": "capital of France", "k": 5},
    run=run,
    order=10,
    tag=Tag("query", search_r1=True),
)
