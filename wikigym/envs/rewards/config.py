"""How an episode is scored: the components and their weights, and the components' settings."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from wikigym.envs.rewards.registry import component
from wikigym.errors import RewardConfigError

__all__ = ["DEFAULT_WEIGHTS", "PRESETS", "OutcomeKind", "RewardConfig", "check_finite"]

OutcomeKind = Literal["binary", "f1", "threshold"]
_OUTCOME_KINDS: tuple[str, ...] = ("binary", "f1", "threshold")
PRESETS: tuple[str, ...] = ("binary", "f1", "shaped")

DEFAULT_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("outcome", 1.0),
    ("citation", 0.0),
    ("format", 0.0),
    ("penalty", 1.0),
)
"""The components every preset lists, in this order; weight 0 still computes and logs one."""


def check_finite(name: str, value: object, *, low: float, high: float = math.inf) -> None:
    """Raise unless ``value`` is a finite number in ``[low, high]``.

    Raises:
        TypeError: If ``value`` is not an int or float (bool included).
        RewardConfigError: If it is out of range or not finite; the message names ``name``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}: {value!r}")
    if not (math.isfinite(value) and low <= value <= high):
        bound = f"[{low}, {high}]" if math.isfinite(high) else f">= {low} and finite"
        raise RewardConfigError(f"{name} must be {bound}, got {value!r}; fix the reward config")


def _check_weights(weights: object) -> dict[str, float]:
    if not isinstance(weights, Mapping):
        raise TypeError(
            f"weights must map component names to numbers, got {type(weights).__name__}"
        )
    checked: dict[str, float] = {}
    for name, weight in weights.items():
        if not isinstance(name, str):
            raise TypeError(f"weights must have str keys, got {type(name).__name__}: {name!r}")
        component(name)  # unknown name: UnknownRewardComponentError naming the known ones
        check_finite(f"weights[{name!r}]", weight, low=0.0)
        checked[name] = weight
    return checked


@dataclass(frozen=True)
class RewardConfig:
    """How an episode is scored. See the package docstring for the exact formulas.

    Attributes:
        weights: Component name -> weight (>= 0), in the order the components are computed and
            reported. Listed components are computed and logged even at weight 0; others are
            not computed. Every name must be registered (see
            :func:`~wikigym.envs.rewards.reward_component`). Read-only: derive a new config
            with :meth:`with_weights`.
        outcome: ``binary`` (exact match), ``f1`` (best token F1) or ``threshold``
            (1.0 when best F1 >= ``f1_threshold``).
        f1_threshold: Threshold for ``outcome="threshold"``, in [0, 1].
        gamma: Step decay factor in (0, 1]; 1.0 disables the decay.
        per_step: When True, the outcome is not decayed in the total and
            ``RewardBreakdown.step_rewards`` holds ``total * gamma ** (T - i)`` for steps
            ``i = 1..T``, for trainers that assign a reward to each turn.
        citation_gate: Multiply the citation component by the undecayed outcome score.
        penalty_unknown_tool: Subtracted per call of a tool that does not exist (>= 0).
        penalty_invalid_arguments: Subtracted per tool call with invalid arguments (>= 0).
        penalty_bad_citation: Subtracted per distinct cited id that does not exist or was never
            returned to the agent (>= 0).
        penalty_cap: Largest magnitude of a penalty component (>= 0); the penalty component is
            ``-min(sum of penalties, penalty_cap)``.

    Raises:
        UnknownRewardComponentError: If ``weights`` names an unregistered component.
        RewardConfigError: If a number is out of range (TypeError if it is not a number).
    """

    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    outcome: OutcomeKind = "binary"
    f1_threshold: float = 0.5
    gamma: float = 1.0
    per_step: bool = False
    citation_gate: bool = False
    penalty_unknown_tool: float = 0.0
    penalty_invalid_arguments: float = 0.0
    penalty_bad_citation: float = 0.0
    penalty_cap: float = 1.0

    def __post_init__(self) -> None:
        # A copy: the caller's dict cannot change a config after the fact.
        object.__setattr__(self, "weights", _check_weights(self.weights))
        if self.outcome not in _OUTCOME_KINDS:
            raise RewardConfigError(
                f"outcome must be one of {_OUTCOME_KINDS}, got {self.outcome!r}; "
                "binary is the stable default"
            )
        check_finite("f1_threshold", self.f1_threshold, low=0.0, high=1.0)
        check_finite("gamma", self.gamma, low=0.0, high=1.0)
        if self.gamma == 0.0:
            raise RewardConfigError("gamma must be in (0, 1], got 0; use 1.0 to disable the decay")
        for name in (
            "penalty_unknown_tool",
            "penalty_invalid_arguments",
            "penalty_bad_citation",
            "penalty_cap",
        ):
            check_finite(name, getattr(self, name), low=0.0)

    def __hash__(self) -> int:
        # Consistent with the generated __eq__, which compares weights as dicts (order-free).
        rest = tuple(getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "weights")
        return hash((frozenset(self.weights.items()), rest))

    def with_weights(self, **weights: float) -> RewardConfig:
        """This config with the given component weights set (new names are appended)."""
        return dataclasses.replace(self, weights={**self.weights, **weights})

    def _sum_weights(self, kind: str) -> float:
        return math.fsum(w for name, w in self.weights.items() if component(name).kind == kind)

    @property
    def max_total(self) -> float:
        """Largest possible total: the sum of the score weights."""
        return self._sum_weights("score")

    @property
    def min_total(self) -> float:
        """Smallest possible total: minus the penalty weights times the cap (0.0 without
        penalty rates)."""
        has_penalty = (
            self.penalty_unknown_tool or self.penalty_invalid_arguments or self.penalty_bad_citation
        )
        return 0.0 - self._sum_weights("penalty") * self.penalty_cap if has_penalty else 0.0

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
            weights={**dict(DEFAULT_WEIGHTS), "citation": 0.5},
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
            RewardConfigError: If there is no such preset.
        """
        if name not in PRESETS:
            raise RewardConfigError(f"unknown reward preset {name!r}; expected one of {PRESETS}")
        preset: Callable[[], RewardConfig] = getattr(cls, name)
        return preset()
