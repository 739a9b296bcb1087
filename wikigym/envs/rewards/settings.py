"""The components' settings: outcome kind, step decay, citation gate, penalty rates and cap."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from wikigym.errors import RewardConfigError

__all__ = ["OutcomeKind", "RewardSettings", "check_finite"]

OutcomeKind = Literal["binary", "f1", "threshold"]
_OUTCOME_KINDS: tuple[str, ...] = ("binary", "f1", "threshold")


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


@dataclass(frozen=True)
class RewardSettings:
    """What the components read from the config (its base class; weights live there).

    Attributes:
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
        RewardConfigError: If a number is out of range (TypeError if it is not a number).
    """

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

    @property
    def has_penalty(self) -> bool:
        """Whether any penalty rate is set (else penalties are 0 whatever happens)."""
        return bool(
            self.penalty_unknown_tool or self.penalty_invalid_arguments or self.penalty_bad_citation
        )
