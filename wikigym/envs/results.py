"""What tools return: structured results, one type per kind of output.

A tool call yields data (hits with ids, titles, scores and texts; a page part with its
blocks; find matches; a program's output; an error with its code). The observation text is
one rendering of it (:mod:`wikigym.envs.render`); wrappers, agents and importers read these
objects, never the text.
"""

from __future__ import annotations

from dataclasses import dataclass

from wikigym.codes import ErrorCode
from wikigym.corpora.index import Hit
from wikigym.tasks.layout import PageBlock
from wikigym.tasks.refs import page_ref


@dataclass(frozen=True)
class SearchOutput:
    """A search: the query as validated and the hits, best first (none: no match)."""

    query: str
    hits: tuple[Hit, ...]


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


SHOWN_LINKS = 30


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


@dataclass(frozen=True)
class PythonOutput:
    """A program's run in the sandbox (outputs already cut to the shown length)."""

    exit_code: int | None
    stdout: str
    stderr: str
    error: str | None = None  # a SandboxCode value


@dataclass(frozen=True)
class AnswerOutput:
    """The final answer (ends the episode); ``abstain``: the agent says there is none."""

    text: str
    citations: tuple[str, ...]
    abstain: bool = False


@dataclass(frozen=True)
class ToolErrorOutput:
    """A valid call that the tool could not serve.

    Attributes:
        code: Why.
        message: What the agent is told (what was wrong, what to do).
        suggestions: Page titles offered instead (an unknown page), best first.
    """

    code: ErrorCode
    message: str
    suggestions: tuple[str, ...] = ()


@dataclass(frozen=True)
class ActionErrorOutput:
    """An action that is not a valid tool call (see :mod:`wikigym.envs.actions`)."""

    code: ErrorCode
    message: str


@dataclass(frozen=True)
class NoticeOutput:
    """A line from the env itself (the episode is over, the step budget is spent)."""

    text: str


ToolOutput = SearchOutput | PageOutput | FindOutput | PythonOutput | AnswerOutput | ToolErrorOutput
"""What one tool call returns."""

StepOutput = ToolOutput | ActionErrorOutput | NoticeOutput
"""One part of a step's observation, in order."""
