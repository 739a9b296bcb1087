"""Episode rewards as named components and one documented total.

What the env hands over at the end of an episode is an :class:`EpisodeOutcome`; a
:class:`RewardConfig` says how to score it; :func:`compute_reward` returns a
:class:`RewardBreakdown` whose ``components`` go to ``info["reward_components"]``.

Components (each unweighted, as reported in ``components``):

``outcome`` in [0, 1]
    The answer against the gold answer and its aliases (:func:`~wikigym.envs.metrics.best_match`,
    HotpotQA normalisation). ``binary``: 1.0 on exact match; ``f1``: the best token F1;
    ``threshold``: 1.0 when the best F1 is ``>= f1_threshold``. A missing answer scores 0.
    Gamma-decay (``per_step=False``): the score is multiplied by
    ``gamma ** (steps_used - 1)``, so an answer given on the first step keeps the full score and
    each further step costs a factor ``gamma``. With ``per_step=True`` the outcome is not decayed;
    the decay goes into ``step_rewards`` instead (see :func:`per_step_rewards`).
``citation`` in [0, 1], present only when the task has a rubric
    CaRR-style rubric support without a judge model. Valid citations are the cited ids that
    tools returned to the agent during the episode (cited and seen). A rubric item is supported
    when one of its ``passage_ids`` is a valid citation or, as a fallback, when every one of its
    ``entities`` occurs (normalised, on word boundaries) in the text of one valid citation.
    Only items with ``connected_to_answer=True`` count; the component is
    ``supported / counted``. With ``citation_gate=True`` it is multiplied by the undecayed
    outcome score, so well-cited wrong answers earn nothing (``rubric_support`` in ``metrics``
    keeps the ungated share). A task with no counted rubric item has no ``citation`` component
    (absent, not 0): its weight is shared among the present components (see Total).
``format`` in {0, 1}
    1.0 when the episode ended with a non-blank answer and no action failed to parse.
``penalty`` in [-penalty_cap, 0]
    Minus the sum of per-event penalties: ``penalty_unknown_tool`` per call of an unknown tool,
    ``penalty_invalid_arguments`` per call with invalid arguments, ``penalty_bad_citation`` per
    distinct cited id that does not exist or was never shown to the agent. The sum is capped at
    ``penalty_cap`` so that the total stays in a fixed range however long the episode.

Total:
    ``total = w_outcome' * outcome + w_citation' * citation + w_format' * format + penalty``
    where the primed weights are the configured ones when every component is present; when
    ``citation`` is absent, ``w_outcome`` and ``w_format`` are scaled by
    ``W / (w_outcome + w_format)`` with ``W = w_outcome + w_citation + w_format``, so every task
    has the same reward range ``[-penalty_cap, W]``. The weights actually used are in
    ``RewardBreakdown.weights`` (``penalty`` has weight 1.0), and ``total`` is their dot product
    with ``components`` (summed with ``math.fsum``, so the result does not depend on order).

Truncated episodes (step budget spent without an answer):
    ``mask=True`` and ``total=0.0`` whatever the components say (they are still computed, for
    logging). Trainers should drop masked episodes from the loss (conservative negative
    filtering): punishing a long but reasonable trajectory for being cut off teaches the model
    to stop using tools.

The default, :meth:`RewardConfig.binary`, is the binary outcome alone, the setting practice found
most stable; :meth:`RewardConfig.shaped` adds citations and hallucination penalties.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from wikigym.envs.metrics import best_match, normalize_answer

__all__ = [
    "PRESETS",
    "EpisodeOutcome",
    "RewardBreakdown",
    "RewardConfig",
    "RubricItem",
    "compute_reward",
    "per_step_rewards",
]

OutcomeKind = Literal["binary", "f1", "threshold"]
_OUTCOME_KINDS: tuple[str, ...] = ("binary", "f1", "threshold")
PRESETS: tuple[str, ...] = ("binary", "f1", "shaped")

# Stable tool error codes the penalties and metrics read (other codes are accepted and ignored).
UNKNOWN_TOOL = "unknown_tool"
INVALID_ARGUMENTS = "invalid_arguments"
PARSE_ERROR = "parse_error"


def _check_finite(name: str, value: float, *, low: float, high: float = math.inf) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}: {value!r}")
    if not (math.isfinite(value) and low <= value <= high):
        bound = f"[{low}, {high}]" if math.isfinite(high) else f">= {low} and finite"
        raise ValueError(f"{name} must be {bound}, got {value!r}; fix the reward config")


@dataclass(frozen=True)
class RewardConfig:
    """How an episode is scored. See the module docstring for the exact formulas.

    Attributes:
        outcome: ``binary`` (exact match), ``f1`` (best token F1) or ``threshold``
            (1.0 when best F1 >= ``f1_threshold``).
        f1_threshold: Threshold for ``outcome="threshold"``, in [0, 1].
        gamma: Step decay factor in (0, 1]; 1.0 disables the decay.
        per_step: When True, the outcome is not decayed in the total and
            ``RewardBreakdown.step_rewards`` holds ``total * gamma ** (T - i)`` for steps
            ``i = 1..T``, for trainers that assign a reward to each turn.
        w_outcome: Weight of the outcome component (>= 0).
        w_citation: Weight of the citation/rubric component (>= 0).
        w_format: Weight of the format component (>= 0).
        citation_gate: Multiply the citation component by the undecayed outcome score.
        penalty_unknown_tool: Subtracted per call of a tool that does not exist (>= 0).
        penalty_invalid_arguments: Subtracted per tool call with invalid arguments (>= 0).
        penalty_bad_citation: Subtracted per distinct cited id that does not exist or was never
            returned to the agent (>= 0).
        penalty_cap: Largest total penalty (>= 0); the penalty component is
            ``-min(sum of penalties, penalty_cap)``.
    """

    outcome: OutcomeKind = "binary"
    f1_threshold: float = 0.5
    gamma: float = 1.0
    per_step: bool = False
    w_outcome: float = 1.0
    w_citation: float = 0.0
    w_format: float = 0.0
    citation_gate: bool = False
    penalty_unknown_tool: float = 0.0
    penalty_invalid_arguments: float = 0.0
    penalty_bad_citation: float = 0.0
    penalty_cap: float = 1.0

    def __post_init__(self) -> None:
        if self.outcome not in _OUTCOME_KINDS:
            raise ValueError(
                f"outcome must be one of {_OUTCOME_KINDS}, got {self.outcome!r}; "
                "binary is the stable default"
            )
        _check_finite("f1_threshold", self.f1_threshold, low=0.0, high=1.0)
        _check_finite("gamma", self.gamma, low=0.0, high=1.0)
        if self.gamma == 0.0:
            raise ValueError("gamma must be in (0, 1], got 0; use 1.0 to disable the decay")
        for name in (
            "w_outcome",
            "w_citation",
            "w_format",
            "penalty_unknown_tool",
            "penalty_invalid_arguments",
            "penalty_bad_citation",
            "penalty_cap",
        ):
            _check_finite(name, getattr(self, name), low=0.0)

    @property
    def max_total(self) -> float:
        """Largest possible total: the sum of the component weights."""
        return math.fsum((self.w_outcome, self.w_citation, self.w_format))

    @property
    def min_total(self) -> float:
        """Smallest possible total: minus the penalty cap (0.0 when no penalty is set)."""
        has_penalty = (
            self.penalty_unknown_tool or self.penalty_invalid_arguments or self.penalty_bad_citation
        )
        return -self.penalty_cap if has_penalty else 0.0

    @classmethod
    def binary(cls) -> RewardConfig:
        """Exact match of the answer, 1.0 or 0.0, nothing else: the stable default."""
        return cls()

    @classmethod
    def f1(cls) -> RewardConfig:
        """Best token F1 of the answer: denser signal, rewards partial answers."""
        return cls(outcome="f1")

    @classmethod
    def shaped(cls) -> RewardConfig:
        """Binary outcome plus gated rubric support and hallucination penalties.

        Weights: outcome 1.0, citation 0.5 (gated on a correct answer, so it ranks correct
        trajectories by their evidence and cannot be farmed by citing without answering);
        penalties 0.1 per unknown tool, 0.05 per invalid arguments, 0.2 per bad citation,
        capped at 0.5. Range: [-0.5, 1.5].
        """
        return cls(
            w_citation=0.5,
            citation_gate=True,
            penalty_unknown_tool=0.1,
            penalty_invalid_arguments=0.05,
            penalty_bad_citation=0.2,
            penalty_cap=0.5,
        )

    @classmethod
    def from_name(cls, name: str) -> RewardConfig:
        """The preset called ``name`` (one of :data:`PRESETS`).

        Raises:
            ValueError: If there is no such preset.
        """
        if name not in PRESETS:
            raise ValueError(f"unknown reward preset {name!r}; expected one of {PRESETS}")
        preset: Callable[[], RewardConfig] = getattr(cls, name)
        return preset()


@dataclass(frozen=True)
class RubricItem:
    """One atomic fact an answer should be supported by.

    Attributes:
        text: The fact, as shown to people (placeholders allowed).
        passage_ids: Passages that state the fact; citing one of them supports the item.
        entities: Surface names that must all appear in one cited passage for the fallback
            check (used when the agent cites another passage stating the same fact).
        connected_to_answer: Whether the fact lies on the chain from the answer entity; items
            not connected are left out of the citation component entirely.
    """

    text: str
    passage_ids: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    connected_to_answer: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "passage_ids", _str_tuple(self.passage_ids, "passage_ids"))
        object.__setattr__(self, "entities", _str_tuple(self.entities, "entities"))


def _str_tuple(values: object, name: str) -> tuple[str, ...]:
    if isinstance(values, str):
        raise TypeError(f"{name} must be a sequence of str, got the str {values!r}; wrap it")
    try:
        items = tuple(values)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name} must be a sequence of str, got {type(values).__name__}") from None
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"{name} must hold only str, got {type(item).__name__}: {item!r}")
    return items


@dataclass(frozen=True)
class EpisodeOutcome:
    """What the env knows when an episode ends.

    All ids (``citations``, ``seen_passages``, rubric ``passage_ids``, the arguments of
    ``existing`` and ``passage_text``) must be in one id space, compared as exact strings.

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
        rubric: Atomic facts the answer should be supported by.
        passage_text: Text of an id (None when unknown), for the entity fallback.
        tool_errors: Counts by stable code (``unknown_tool``, ``invalid_arguments``,
            ``parse_error``, ``not_found``, ``sandbox_error``, ...).
    """

    answer: str | None
    golds: tuple[str, ...]
    steps_used: int
    max_steps: int
    truncated: bool = False
    citations: tuple[str, ...] = ()
    seen_passages: frozenset[str] = frozenset()
    existing: Callable[[str], bool] | None = None
    rubric: tuple[RubricItem, ...] = ()
    passage_text: Callable[[str], str | None] | None = None
    tool_errors: Mapping[str, int] = field(default_factory=dict)

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
            if not isinstance(item, RubricItem):
                raise TypeError(f"rubric must hold RubricItem, got {type(item).__name__}")
        object.__setattr__(self, "rubric", rubric)
        errors = dict(self.tool_errors)
        for code, count in errors.items():
            if not isinstance(code, str) or isinstance(count, bool) or not isinstance(count, int):
                raise TypeError(f"tool_errors must map str to int, got {code!r}: {count!r}")
            if count < 0:
                raise ValueError(f"tool_errors[{code!r}] must be >= 0, got {count}")
        object.__setattr__(self, "tool_errors", errors)


@dataclass(frozen=True)
class RewardBreakdown:
    """The scored episode.

    Attributes:
        total: The reward (0.0 when masked); always finite.
        components: Unweighted component scores by name (``outcome``, ``format``,
            ``penalty``, and ``citation`` when the task has a rubric).
        weights: The weight each component got in ``total`` (after renormalisation).
        mask: True for a truncated episode: leave it out of the loss.
        metrics: Diagnostic numbers: ``em``, ``f1``, ``decay``, hallucination counts
            (``unknown_tool``, ``invalid_arguments``, ``citation_nonexistent``,
            ``citation_unseen``), ``parse_error``, ``citations``, ``citations_valid``,
            ``rubric_items``, ``rubric_supported``, and ``rubric_support`` when defined.
        step_rewards: ``per_step_rewards(total, steps_used, gamma)`` when the config has
            ``per_step=True``, else None.
    """

    total: float
    components: dict[str, float]
    weights: dict[str, float]
    mask: bool
    metrics: dict[str, float]
    step_rewards: tuple[float, ...] | None = None

    def to_info(self) -> dict[str, object]:
        """The breakdown as plain values for a Gymnasium ``info`` dict."""
        return {
            "reward": self.total,
            "reward_components": dict(self.components),
            "reward_metrics": dict(self.metrics),
            "mask": self.mask,
        }


def per_step_rewards(final: float, steps: int, gamma: float) -> list[float]:
    """Gamma-decayed rewards for the steps of one episode: ``final * gamma ** (T - i)``.

    Args:
        final: The episode reward ``r``.
        steps: The number of steps ``T`` (>= 0).
        gamma: Decay factor in (0, 1].

    Returns:
        ``[r * gamma**(T-1), ..., r * gamma, r]``: the last step gets the full reward; empty for
        ``T = 0``.

    Raises:
        ValueError: On a non-finite reward, negative steps or gamma outside (0, 1].
    """
    _check_finite("final", final, low=-math.inf)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be an int >= 0, got {steps!r}")
    _check_finite("gamma", gamma, low=0.0, high=1.0)
    if gamma == 0.0:
        raise ValueError("gamma must be in (0, 1], got 0; use 1.0 to disable the decay")
    return [final * gamma ** (steps - i) for i in range(1, steps + 1)]


def _contains_entity(normalized_text: str, entity: str) -> bool:
    needle = normalize_answer(entity)
    # An entity that normalises to nothing ("The") cannot be checked: not supported.
    return bool(needle) and f" {needle} " in f" {normalized_text} "


def _rubric_support(
    rubric: tuple[RubricItem, ...],
    valid: tuple[str, ...],
    passage_text: Callable[[str], str | None] | None,
) -> tuple[int, int]:
    """(supported, counted) over the rubric items connected to the answer."""
    valid_set = frozenset(valid)
    texts: list[str] | None = None  # normalised texts of valid citations, built on demand
    counted = supported = 0
    for item in rubric:
        if not item.connected_to_answer:
            continue
        counted += 1
        if any(pid in valid_set for pid in item.passage_ids):
            supported += 1
            continue
        if not item.entities or passage_text is None:
            continue
        if texts is None:
            texts = []
            for pid in valid:
                text = passage_text(pid)
                if text is not None:
                    texts.append(normalize_answer(text))
        if any(all(_contains_entity(t, e) for e in item.entities) for t in texts):
            supported += 1
    return supported, counted


def _outcome_score(
    answer: str | None, golds: tuple[str, ...], cfg: RewardConfig
) -> tuple[float, bool, float]:
    if answer is None:
        return 0.0, False, 0.0
    em, f1 = best_match(answer, golds)
    if cfg.outcome == "binary":
        score = 1.0 if em else 0.0
    elif cfg.outcome == "f1":
        score = f1
    else:
        score = 1.0 if f1 >= cfg.f1_threshold else 0.0
    return score, em, f1


def compute_reward(outcome: EpisodeOutcome, config: RewardConfig) -> RewardBreakdown:
    """Score one finished episode (formulas in the module docstring).

    Args:
        outcome: What happened in the episode.
        config: How to score it.

    Returns:
        The breakdown: total, components, weights, mask, metrics, step rewards.
    """
    score, em, f1 = _outcome_score(outcome.answer, outcome.golds, config)
    decay = 1.0 if config.per_step else config.gamma ** max(outcome.steps_used - 1, 0)

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

    errors = outcome.tool_errors
    n_unknown = errors.get(UNKNOWN_TOOL, 0)
    n_invalid = errors.get(INVALID_ARGUMENTS, 0)
    n_parse = errors.get(PARSE_ERROR, 0)
    raw_penalty = math.fsum(
        (
            config.penalty_unknown_tool * n_unknown,
            config.penalty_invalid_arguments * n_invalid,
            config.penalty_bad_citation * (nonexistent + unseen),
        )
    )

    components: dict[str, float] = {"outcome": score * decay}
    supported, counted = _rubric_support(outcome.rubric, valid, outcome.passage_text)
    support = supported / counted if counted else None
    if support is not None:
        components["citation"] = support * score if config.citation_gate else support
    answered = outcome.answer is not None and bool(outcome.answer.strip())
    components["format"] = 1.0 if answered and n_parse == 0 else 0.0
    components["penalty"] = 0.0 - min(raw_penalty, config.penalty_cap)  # never -0.0

    if support is not None:
        weights = {
            "outcome": config.w_outcome,
            "citation": config.w_citation,
            "format": config.w_format,
        }
    else:  # no citation component: share its weight so the range is the same for every task
        present = config.w_outcome + config.w_format

        def share(w: float) -> float:
            # w / present first: in [0, 1], so subnormal weights cannot overflow to inf/nan.
            return config.max_total * (w / present) if present > 0 else 0.0

        weights = {"outcome": share(config.w_outcome), "format": share(config.w_format)}
    weights["penalty"] = 1.0

    total = math.fsum(weights[name] * value for name, value in components.items())
    mask = outcome.truncated
    if mask:
        total = 0.0
    total += 0.0  # turn -0.0 into 0.0

    metrics: dict[str, float] = {
        "em": 1.0 if em else 0.0,
        "f1": f1,
        "decay": decay,
        UNKNOWN_TOOL: float(n_unknown),
        INVALID_ARGUMENTS: float(n_invalid),
        "citation_nonexistent": float(nonexistent),
        "citation_unseen": float(unseen),
        PARSE_ERROR: float(n_parse),
        "citations": float(len(cited)),
        "citations_valid": float(len(valid)),
        "rubric_items": float(counted),
        "rubric_supported": float(supported),
    }
    if support is not None:
        metrics["rubric_support"] = support
    step_rewards = None
    if config.per_step:
        step_rewards = tuple(per_step_rewards(total, outcome.steps_used, config.gamma))
    return RewardBreakdown(
        total=total,
        components=components,
        weights=weights,
        mask=mask,
        metrics=metrics,
        step_rewards=step_rewards,
    )
