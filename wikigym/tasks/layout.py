"""How ``open`` lays out a page: one block per passage, blocks packed into parts.

The ``open`` tool renders these parts, and task sources place oracle citations by them (a
citation must name a passage the agent was shown), so the layout has one home below both.
Blocks never split: a part holds whole passages, at most ``page_chars`` characters of them
(one block more when a single block is larger).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wikigym.corpora.snapshot import Page, PageSection
from wikigym.tasks.refs import passage_ref

DEFAULT_PAGE_CHARS = 6000


@dataclass(frozen=True)
class PageBlock:
    """One passage as ``open`` shows it.

    Attributes:
        passage_id: The passage.
        heading: The section path printed above it (the section changed here), or ``()``.
        text: The passage text.
    """

    passage_id: int
    heading: tuple[str, ...]
    text: str

    @property
    def ref(self) -> str:
        """The citation id of the passage."""
        return passage_ref(self.passage_id)

    def render(self) -> str:
        """The block's text: ``## heading`` (when it changes) and ``[p12] text``."""
        prefix = f"## {' > '.join(self.heading)}\n" if self.heading else ""
        return f"{prefix}[{self.ref}] {self.text}"


def page_blocks(page: Page, sections: Sequence[PageSection]) -> list[PageBlock]:
    """The blocks of the passages of ``sections``, in page order."""
    paths = {pid: s.path for s in sections for pid in s.passage_ids}
    blocks: list[PageBlock] = []
    last_path: tuple[str, ...] | None = None
    for passage in page.passages:
        pid = passage.passage_id
        if pid not in paths:
            continue
        path = paths[pid]
        heading: tuple[str, ...] = ()
        if path != last_path:
            heading = path
            last_path = path
        blocks.append(PageBlock(pid, heading, passage.text))
    return blocks


def paginate(blocks: Sequence[PageBlock], page_chars: int) -> list[list[PageBlock]]:
    """Blocks packed in order into parts of at most ``page_chars`` characters (never empty)."""
    parts: list[list[PageBlock]] = [[]]
    size = 0
    for block in blocks:
        n = len(block.render())
        if parts[-1] and size + n > page_chars:
            parts.append([])
            size = 0
        parts[-1].append(block)
        size += n + 1
    return parts
