"""``answer(text, citations, abstain)``: the final answer; it ends the episode."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from wikigym.tasks.limits import MAX_ANSWER_CHARS, MAX_CITATION_CHARS, MAX_CITATIONS
from wikigym.tools.base import AnswerOutput, Tag, Tool, ToolArgs, ToolBox, ToolResult

CitationId = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_CITATION_CHARS)
]


class AnswerArgs(ToolArgs):
    """Arguments of `answer`. Answering ends the episode."""

    text: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_ANSWER_CHARS)
    ] = Field(description="The answer.")
    citations: list[CitationId] = Field(
        default_factory=list,
        max_length=MAX_CITATIONS,
        description=f"Ids of the passages or pages that support the answer (at most {MAX_CITATIONS}).",
    )
    abstain: bool = Field(
        default=False,
        description="True to state that the snapshot holds no answer (nothing satisfies every "
        "condition); text then says why.",
    )


def run(box: ToolBox, args: AnswerArgs, seed: int) -> ToolResult:
    """The answer as given (the env scores it)."""
    return ToolResult(AnswerOutput(args.text, tuple(args.citations), args.abstain))


TOOL = Tool(
    name="answer",
    description=(
        "Give the final answer and end the episode. Keep it short (a name, a number, a date). "
        "citations: the passage ids (like p123) or page ids that support it. "
        "If the pages show that nothing satisfies every condition of the question, say so "
        "with abstain=true (text: why) instead of guessing."
    ),
    args=AnswerArgs,
    example={"text": "Paris", "citations": ["p123"]},
    run=run,
    order=100,
    tag=Tag("text", search_r1=True),
    ends_episode=True,
)
