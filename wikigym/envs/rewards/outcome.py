"""What an env hands over at the end of an episode: the input of every reward component."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from wikigym.tasks.taskset import RubricEntry

__all__ = ["EpisodeOutcome"]


def _str_tuple(values: object, name: str) -> tuple[str, ...]:
    """``values`` as a tuple of str, or a TypeError naming ``name``."""
    if isinstance(values, str):
        raise TypeError(f"{name} must be a sequence of str, got the str {values!r}; wrap it")
    if not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of str, got {type(values).__name__}")
    items = tuple(values)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"{name} must hold only str, got {type(item).__name__}: {item!r}")
    return items


@dataclass(frozen=True)
class EpisodeOutcome:
    """What the env knows when an episode ends.

    Citation ids (``citations``, ``seen_passages``, the arguments of ``existing`` and
    ``passage_text``) are in one id space, compared as exact strings; a rubric entry's
    ``passage_ids`` are passage numbers, cited as ``p<number>`` (``passage_ref``).

    Attributes:
        answer: The final answer text, None when the agent never answered.
        golds: The gold answer and its aliases (at least one).
        steps_used: Steps taken (the answer call included), 0 <= steps_used <= max_steps.
        max_steps: The step budget (>= 1).
        truncated: The episode was cut off by the budget without an answer.
        citations: Ids the agent cited, in order (duplicates are counted once).
        seen_passages: Ids that tools returned to the agent during the episode.
        existing: Whether an id exists in the snapshot; None when unknown (unseen citations
            then count as ``citation_unseen``).
        rubric: The task's rubric: atomic facts the answer should be supported by.
        passage_text: Text of an id (None when unknown), for the entity fallback.
        tool_errors: Counts by stable code (``unknown_tool``, ``invalid_arguments``,
            ``parse_error``, ``not_found``, ``sandbox_error``, ...).
        abstained: The agent answered with ``abstain=true`` (there is no answer).
        unanswerable: The task's query has no answer in the snapshot (the golds are then
            only a placeholder: abstaining is the one correct answer).
    """

    answer: str | None
    golds: tuple[str, ...]
    steps_used: int
    max_steps: int
    truncated: bool = False
    citations: tuple[str, ...] = ()
    seen_passages: frozenset[str] = frozenset()
    existing: Callable[[str], bool] | None = None
    rubric: tuple[RubricEntry, ...] = ()
    passage_text: Callable[[str], str | None] | None = None
    tool_errors: Mapping[str, int] = field(default_factory=dict)
    abstained: bool = False
    unanswerable: bool = False

    def __post_init__(self) -> None:
        if self.answer is not None and not isinstance(self.answer, str):
            raise TypeError(f"answer must be a str or None, got {type(self.answer).__name__}")
        golds = _str_tuple(self.golds, "golds")
        if not golds:
            raise ValueError("golds is empty: a task needs at least one reference answer")
        object.__setattr__(self, "golds", golds)
        for name in ("steps_used", "max_steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, got {type(value).__name__}: {value!r}")
        if self.max_steps < 1 or not 0 <= self.steps_used <= self.max_steps:
            raise ValueError(
                f"expected 0 <= steps_used <= max_steps and max_steps >= 1, got "
                f"steps_used={self.steps_used}, max_steps={self.max_steps}"
            )
        object.__setattr__(self, "citations", _str_tuple(self.citations, "citations"))
        object.__setattr__(
            self, "seen_passages", frozenset(_str_tuple(self.seen_passages, "seen_passages"))
        )
        rubric = tuple(self.rubric)
        for item in rubric:
            if not isinstance(item, RubricEntry):
                raise TypeError(f"rubric must hold RubricEntry, got {type(item).__name__}")
        object.__setattr__(self, "rubric", rubric)
        errors = dict(self.tool_errors)
        for code, count in errors.items():
            if not isinstance(code, str) or isinstance(count, bool) or not isinstance(count, int):
                raise TypeError(f"tool_errors must map str to int, got {code!r}: {count!r}")
            if count < 0:
                raise ValueError(f"tool_errors[{code!r}] must be >= 0, got {count}")
        object.__setattr__(self, "tool_errors", errors)
