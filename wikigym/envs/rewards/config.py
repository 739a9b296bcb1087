"""How an episode is scored: the components to run with their weights, and their settings."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from wikigym.envs.rewards.registry import component
from wikigym.envs.rewards.settings import RewardSettings, check_finite
from wikigym.errors import RewardConfigError

__all__ = ["DEFAULT_WEIGHTS", "PRESETS", "RewardConfig"]

PRESETS: tuple[str, ...] = ("binary", "f1", "shaped")

DEFAULT_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("outcome", 1.0),
    ("citation", 0.0),
    ("format", 0.0),
    ("penalty", 1.0),
)
"""The components every preset lists, in this order; weight 0 still computes and logs one."""


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
        checked[name] = float(weight)
    return checked


@dataclass(frozen=True)
class RewardConfig(RewardSettings):
    """How an episode is scored: the components' settings (see :class:`RewardSettings`) and
    which components run with which weight. Formulas in the package docstring.

    Attributes:
        weights: Component name -> weight (>= 0), in the order the components are computed and
            reported. Listed components are computed and logged even at weight 0; others are
            not computed. Every name must be registered (see
            :func:`~wikigym.envs.rewards.reward_component`). Read-only: derive a new config
            with :meth:`with_weights`.

    Raises:
        UnknownRewardComponentError: If ``weights`` names an unregistered component.
        RewardConfigError: If a number is out of range (TypeError if it is not a number).
    """

    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))

    def __post_init__(self) -> None:
        super().__post_init__()
        # A copy: the caller's dict cannot change a config after the fact.
        object.__setattr__(self, "weights", _check_weights(self.weights))

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
        if not self.has_penalty:
            return 0.0
        return 0.0 - self._sum_weights("penalty") * self.penalty_cap

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
