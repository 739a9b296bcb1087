"""``open(page, section?, part?)``: read a page (or one section) in parts, with passage ids."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field, StringConstraints

from wikigym.codes import ErrorCode
from wikigym.tasks.layout import PageBlock, page_blocks, paginate
from wikigym.tasks.limits import MAX_PART, MAX_SECTION_CHARS
from wikigym.tasks.refs import page_ref
from wikigym.tools.base import Tool, ToolArgs, ToolBox, ToolResult, failure
from wikigym.tools.pages import PageRef, page_or_error

SHOWN_LINKS = 30
"""Distinct linked titles listed under part 1 of a whole page."""


class OpenArgs(ToolArgs):
    """Arguments of `open`. Long pages are split into parts of bounded length; `part` is 1-based."""

    page: PageRef
    section: (
        Annotated[
            str,
            StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_SECTION_CHARS),
        ]
        | None
    ) = Field(default=None, description="A section heading of the page; omit for the whole page.")
    part: Annotated[int, Field(ge=1, le=MAX_PART)] = Field(
        default=1, description="Which part of a long page to read, starting at 1."
    )


@dataclass(frozen=True)
class PageOutput:
    """One part of a page that ``open`` shows.

    Attributes:
        doc_id: The page.
        title: Its title.
        resolved_from: The title asked for, when a redirect or case fold led here.
        is_disambiguation: Whether it is a disambiguation page.
        part: The part shown (1-based).
        parts: How many parts the page (or section) has.
        blocks: The passages of the part, in order.
        links: Titles of linked pages shown under part 1 of a whole page (distinct, at most
            :data:`SHOWN_LINKS`); empty otherwise.
        more_links: Whether the page links to more distinct pages than shown.
    """

    doc_id: int
    title: str
    resolved_from: str | None
    is_disambiguation: bool
    part: int
    parts: int
    blocks: tuple[PageBlock, ...]
    links: tuple[str, ...] = ()
    more_links: bool = False

    @property
    def doc(self) -> str:
        """The page's citation id (``d3``)."""
        return page_ref(self.doc_id)

    @property
    def next_part(self) -> int | None:
        """The part to ask for to read on, or None on the last part."""
        return self.part + 1 if self.part < self.parts else None

    def head(self) -> str:
        """The first line: ``# Title (dN)`` and its notes."""
        head = f"# {self.title} ({self.doc})"
        if self.resolved_from:
            head += f" [from {self.resolved_from!r}]"
        if self.is_disambiguation:
            head += " [disambiguation page]"
        if self.parts > 1:
            head += f" part {self.part}/{self.parts}"
        return head

    def render(self) -> str:
        """The head line, the blocks, the hint to read on and the links line."""
        body = "\n".join(b.render() for b in self.blocks)
        tail = ""
        if self.next_part is not None:
            tail = (
                f"\n... (part {self.part}/{self.parts}; open with part={self.next_part} to read on)"
            )
        if self.links:
            tail += "\nLinks: " + "; ".join(self.links) + (" ..." if self.more_links else "")
        return f"{self.head()}\n{body}{tail}"


def run(box: ToolBox, args: OpenArgs, seed: int) -> ToolResult:
    """The part asked for of the page (or of its section), with its passage ids."""
    page = page_or_error(box, args.page)
    if isinstance(page, ToolResult):
        return page
    sections = list(page.sections)
    if args.section is not None:
        wanted = args.section.casefold()
        chosen = [s for s in sections if any(h.casefold() == wanted for h in s.path)]
        if not chosen:
            chosen = [s for s in sections if s.path and wanted in " > ".join(s.path).casefold()]
        if not chosen:
            names = [" > ".join(s.path) for s in sections if s.path]
            listing = "; ".join(dict.fromkeys(names)) or "(the page has only a lead section)"
            return failure(
                ErrorCode.NOT_FOUND,
                f"open: page {page.title!r} has no section {args.section!r}. Sections: {listing}",
            )
        sections = chosen
    parts = paginate(page_blocks(page, sections), box.config.page_chars)
    if args.part > len(parts):
        return failure(
            ErrorCode.INVALID_PART,
            f"open: page {page.title!r} has {len(parts)} part(s); part={args.part} does not exist.",
        )
    shown = tuple(parts[args.part - 1])
    links: tuple[str, ...] = ()
    more_links = False
    if args.part == 1 and args.section is None:
        uniq = list(
            dict.fromkeys(k.target_title for k in page.links if k.target_doc_id is not None)
        )
        links, more_links = tuple(uniq[:SHOWN_LINKS]), len(uniq) > SHOWN_LINKS
    output = PageOutput(
        doc_id=page.doc_id,
        title=page.title,
        resolved_from=page.resolved_from,
        is_disambiguation=page.is_disambiguation,
        part=args.part,
        parts=len(parts),
        blocks=shown,
        links=links,
        more_links=more_links,
    )
    return ToolResult(output, seen=(page_ref(page.doc_id), *(b.ref for b in shown)))


TOOL = Tool(
    name="open",
    description=(
        "Open a page by title or doc id and read its text with passage ids. Give section to read "
        "only that section. Long pages come in parts: the result says how many; ask for part=2, "
        "3, ... to read on."
    ),
    args=OpenArgs,
    example={"page": "Paris", "section": "History"},
    run=run,
    order=20,
)
