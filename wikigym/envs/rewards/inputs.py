"""What a reward component scores: the outcome, the settings, and the facts components share."""

from __future__ import annotations

from dataclasses import dataclass

from wikigym.codes import ErrorCode
from wikigym.envs.metrics import best_match, normalize_answer
from wikigym.envs.rewards.outcome import EpisodeOutcome
from wikigym.envs.rewards.settings import RewardSettings
from wikigym.tasks.refs import passage_ref

__all__ = [
    "INVALID_ARGUMENTS",
    "PARSE_ERROR",
    "UNKNOWN_TOOL",
    "AnswerMatch",
    "CitationCheck",
    "RewardInput",
    "RubricSupport",
    "answer_match",
    "check_citations",
    "episode_metrics",
    "rubric_support",
    "step_decay",
]

# Stable tool error codes the penalties and metrics read (other codes are accepted and ignored).
UNKNOWN_TOOL = ErrorCode.UNKNOWN_TOOL
INVALID_ARGUMENTS = ErrorCode.INVALID_ARGUMENTS
PARSE_ERROR = ErrorCode.PARSE_ERROR


@dataclass(frozen=True)
class AnswerMatch:
    """The answer against the golds.

    Attributes:
        score: The undecayed outcome score under the config's ``outcome`` kind, in [0, 1].
        em: Exact match with one gold (HotpotQA normalisation).
        f1: Best token F1 over the golds.
    """

    score: float
    em: bool
    f1: float


@dataclass(frozen=True)
class CitationCheck:
    """The agent's citations, deduplicated in the agent's order.

    Attributes:
        cited: Distinct cited ids.
        valid: Cited ids that tools showed to the agent.
        nonexistent: Cited, unseen ids that do not exist in the snapshot.
        unseen: Cited, unseen ids that exist or whose existence is unknown.
    """

    cited: tuple[str, ...]
    valid: tuple[str, ...]
    nonexistent: int
    unseen: int


@dataclass(frozen=True)
class RubricSupport:
    """Rubric entries connected to the answer (``counted``) and those supported."""

    supported: int
    counted: int

    @property
    def share(self) -> float | None:
        """``supported / counted``; None when no entry counts."""
        return self.supported / self.counted if self.counted else None


def answer_match(outcome: EpisodeOutcome, settings: RewardSettings) -> AnswerMatch:
    """The answer's undecayed score, exact match and F1 (all 0 without an answer)."""
    if outcome.answer is None:
        return AnswerMatch(score=0.0, em=False, f1=0.0)
    if outcome.abstained or outcome.unanswerable:
        # Only an abstention answers an unanswerable task, and it answers nothing else.
        right = outcome.abstained and outcome.unanswerable
        return AnswerMatch(score=float(right), em=right, f1=float(right))
    em, f1 = best_match(outcome.answer, outcome.golds)
    if settings.outcome == "binary":
        score = 1.0 if em else 0.0
    elif settings.outcome == "f1":
        score = f1
    else:
        score = 1.0 if f1 >= settings.f1_threshold else 0.0
    return AnswerMatch(score=score, em=em, f1=f1)


def step_decay(outcome: EpisodeOutcome, settings: RewardSettings) -> float:
    """``gamma ** (steps_used - 1)``, or 1.0 with ``per_step`` (the decay then goes into the
    step rewards)."""
    if settings.per_step:
        return 1.0
    return settings.gamma ** max(outcome.steps_used - 1, 0)


def check_citations(outcome: EpisodeOutcome) -> CitationCheck:
    """Which citations were shown to the agent, and why the others are bad."""
    cited = tuple(dict.fromkeys(outcome.citations))  # dedupe, keep the agent's order
    valid = tuple(c for c in cited if c in outcome.seen_passages)
    nonexistent = unseen = 0
    for cid in cited:
        if cid in outcome.seen_passages:
            continue
        if outcome.existing is not None and not outcome.existing(cid):
            nonexistent += 1
        else:
            unseen += 1
    return CitationCheck(cited=cited, valid=valid, nonexistent=nonexistent, unseen=unseen)


def _contains_entity(normalized_text: str, entity: str) -> bool:
    needle = normalize_answer(entity)
    # An entity that normalises to nothing ("The") cannot be checked: not supported.
    return bool(needle) and f" {needle} " in f" {normalized_text} "


def rubric_support(outcome: EpisodeOutcome, valid: tuple[str, ...]) -> RubricSupport:
    """Rubric support by the valid citations: a passage of the entry, or all its entities in
    the text of one valid citation (normalised, on word boundaries)."""
    valid_set = frozenset(valid)
    passage_text = outcome.passage_text
    texts: list[str] | None = None  # normalised texts of valid citations, built on demand
    counted = supported = 0
    for entry in outcome.rubric:
        if not entry.connected_to_answer:
            continue
        counted += 1
        if any(passage_ref(pid) in valid_set for pid in entry.passage_ids):
            supported += 1
            continue
        if not entry.entities or passage_text is None:
            continue
        if texts is None:
            texts = []
            for ref in valid:
                text = passage_text(ref)
                if text is not None:
                    texts.append(normalize_answer(text))
        if any(all(_contains_entity(t, e) for e in entry.entities) for t in texts):
            supported += 1
    return RubricSupport(supported=supported, counted=counted)


@dataclass(frozen=True)
class RewardInput:
    """One finished episode under one config, as every component sees it.

    The shared facts are computed once, in :meth:`build`, so components that read the same
    fact (the citation check, the answer match) agree and do not pay for it again.

    Attributes:
        outcome: What happened in the episode.
        settings: The components' settings (the :class:`RewardConfig` itself).
        match: :func:`answer_match`.
        decay: :func:`step_decay`.
        citations: :func:`check_citations`.
        rubric_support: :func:`rubric_support` over the valid citations.
    """

    outcome: EpisodeOutcome
    settings: RewardSettings
    match: AnswerMatch
    decay: float
    citations: CitationCheck
    rubric_support: RubricSupport

    @classmethod
    def build(cls, outcome: EpisodeOutcome, settings: RewardSettings) -> RewardInput:
        """The input of every component for ``outcome`` under ``settings``."""
        citations = check_citations(outcome)
        return cls(
            outcome=outcome,
            settings=settings,
            match=answer_match(outcome, settings),
            decay=step_decay(outcome, settings),
            citations=citations,
            rubric_support=rubric_support(outcome, citations.valid),
        )


def episode_metrics(inp: RewardInput) -> dict[str, float]:
    """The diagnostics every breakdown carries, whichever components the config lists.

    Returns:
        ``em``, ``f1``, ``decay``, the hallucination counts (``unknown_tool``,
        ``invalid_arguments``, ``citation_nonexistent``, ``citation_unseen``),
        ``parse_error``, ``citations``, ``citations_valid``, ``rubric_items`` and
        ``rubric_supported``, in this order.
    """
    errors = inp.outcome.tool_errors
    match, cites, rubric = inp.match, inp.citations, inp.rubric_support
    return {
        "em": 1.0 if match.em else 0.0,
        "f1": match.f1,
        "decay": inp.decay,
        UNKNOWN_TOOL: float(errors.get(UNKNOWN_TOOL, 0)),
        INVALID_ARGUMENTS: float(errors.get(INVALID_ARGUMENTS, 0)),
        "citation_nonexistent": float(cites.nonexistent),
        "citation_unseen": float(cites.unseen),
        PARSE_ERROR: float(errors.get(PARSE_ERROR, 0)),
        "citations": float(len(cites.cited)),
        "citations_valid": float(len(cites.valid)),
        "rubric_items": float(rubric.counted),
        "rubric_supported": float(rubric.supported),
    }
