"""``find(page, text)``: the passages of a page that contain a text (case-insensitive)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field, StringConstraints

from wikigym.codes import ErrorCode
from wikigym.tasks.limits import MAX_FIND_CHARS
from wikigym.tasks.refs import page_ref, passage_ref
from wikigym.tools.base import Tool, ToolArgs, ToolBox, ToolResult
from wikigym.tools.pages import PageRef, page_or_error


class FindArgs(ToolArgs):
    """Arguments of `find`."""

    page: PageRef
    text: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_FIND_CHARS)
    ] = Field(description="The text to look for.")


@dataclass(frozen=True)
class FindMatch:
    """A passage of the page that contains the text, as a snippet around the first match."""

    passage_id: int
    snippet: str


@dataclass(frozen=True)
class FindOutput:
    """A find: the page, the text looked for and the matches shown (none: no occurrence).

    Attributes:
        total: How many passages match (more than ``matches`` when the list was cut).
    """

    doc_id: int
    title: str
    text: str
    matches: tuple[FindMatch, ...]
    total: int

    @property
    def doc(self) -> str:
        """The page's citation id (``d3``)."""
        return page_ref(self.doc_id)

    def render(self) -> str:
        """``find('t') in Title (dN): N passages`` and the snippets; or the miss line."""
        if not self.matches:
            return f"find: {self.text!r} does not occur in {self.title!r} ({self.doc})."
        lines = [f"find({self.text!r}) in {self.title} ({self.doc}): {self.total} passages"]
        lines += [f"[{passage_ref(m.passage_id)}] {m.snippet}" for m in self.matches]
        if self.total > len(self.matches):
            lines.append(f"... {self.total - len(self.matches)} more")
        return "\n".join(lines)


def run(box: ToolBox, args: FindArgs, seed: int) -> ToolResult:
    """The first ``find_max_hits`` passages that contain the text, as snippets around it."""
    page = page_or_error(box, args.page)
    if isinstance(page, ToolResult):
        return page
    needle = args.text.casefold()
    hits = []
    for passage in page.passages:
        at = passage.text.casefold().find(needle)
        if at >= 0:
            hits.append((passage.passage_id, passage.text, at))
    if not hits:
        return ToolResult(
            FindOutput(page.doc_id, page.title, args.text, (), 0),
            error=ErrorCode.NOT_FOUND,
            seen=(page_ref(page.doc_id),),
        )
    half = box.config.snippet_chars // 2
    matches = []
    for pid, text, at in hits[: box.config.find_max_hits]:
        start = max(0, at - half)
        end = min(len(text), at + len(needle) + half)
        snippet = ("..." if start else "") + text[start:end] + ("..." if end < len(text) else "")
        matches.append(FindMatch(pid, snippet))
    output = FindOutput(page.doc_id, page.title, args.text, tuple(matches), len(hits))
    return ToolResult(
        output, seen=(page_ref(page.doc_id), *(passage_ref(m.passage_id) for m in matches))
    )


TOOL = Tool(
    name="find",
    description=(
        "Find a text in a page (case-insensitive). Returns the passages of the page that "
        "contain it, with their passage ids."
    ),
    args=FindArgs,
    example={"page": "Paris", "text": "population"},
    run=run,
    order=30,
)
