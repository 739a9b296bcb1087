"""The scored episode: run the listed components and combine them into the documented total."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from wikigym.envs.rewards.config import RewardConfig
from wikigym.envs.rewards.inputs import RewardInput, episode_metrics
from wikigym.envs.rewards.outcome import EpisodeOutcome
from wikigym.envs.rewards.registry import RewardComponent, component
from wikigym.envs.rewards.settings import check_finite

__all__ = ["RewardBreakdown", "compute_reward", "per_step_rewards"]


@dataclass(frozen=True)
class RewardBreakdown:
    """The scored episode.

    Attributes:
        total: The reward (0.0 when masked); always finite.
        components: Unweighted component values by name, in the config's order (absent
            scores left out: ``citation`` without a rubric).
        weights: The weight each component got in ``total`` (after renormalisation).
        mask: True for a truncated episode: leave it out of the loss.
        metrics: Diagnostic numbers: those of
            :func:`~wikigym.envs.rewards.inputs.episode_metrics`, then what components log
            (``rubric_support`` when defined).
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
    check_finite("final", final, low=-math.inf)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be an int >= 0, got {steps!r}")
    check_finite("gamma", gamma, low=0.0, high=1.0)
    if gamma == 0.0:
        raise ValueError("gamma must be in (0, 1], got 0; use 1.0 to disable the decay")
    return [final * gamma ** (steps - i) for i in range(1, steps + 1)]


def _checked(comp: RewardComponent, value: object, cap: float) -> float | None:
    """The component's value, or a ValueError: a component that breaks its range is a bug."""
    if value is None and comp.kind == "score":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"reward component {comp.name!r} returned {value!r}, not a finite float")
    low, high = (0.0, 1.0) if comp.kind == "score" else (-cap, 0.0)
    if not low <= value <= high:
        raise ValueError(
            f"reward component {comp.name!r} ({comp.kind}) returned {value!r}, "
            f"outside [{low}, {high}]"
        )
    return float(value)


def _weights(config: RewardConfig, components: Mapping[str, float]) -> dict[str, float]:
    """The weights used in the total: the configured ones, or, when a listed score is absent,
    the present scores' weights scaled to keep the score weights' sum."""
    kinds = {name: component(name).kind for name in config.weights}
    scores = [(n, w) for n, w in config.weights.items() if kinds[n] == "score"]
    if all(n in components for n, _ in scores):
        return {n: w for n, w in config.weights.items() if n in components}
    full = math.fsum(w for _, w in scores)
    present = math.fsum(w for n, w in scores if n in components)

    def share(w: float) -> float:
        # w / present first: in [0, 1], so subnormal weights cannot overflow to inf/nan.
        return full * (w / present) if present > 0 else 0.0

    return {
        n: share(w) if kinds[n] == "score" else w
        for n, w in config.weights.items()
        if n in components
    }


def compute_reward(outcome: EpisodeOutcome, config: RewardConfig) -> RewardBreakdown:
    """Score one finished episode (formulas in the package docstring).

    Args:
        outcome: What happened in the episode.
        config: How to score it: the components to run, their weights and settings.

    Returns:
        The breakdown: total, components, weights, mask, metrics, step rewards.

    Raises:
        ValueError: If a component logs a metric name already taken or returns a value outside
            its range (a bug in that component).
    """
    inp = RewardInput.build(outcome, config)
    metrics = episode_metrics(inp)

    def log_metric(name: str, value: float) -> None:
        if name in metrics:
            raise ValueError(f"reward metric {name!r} is logged twice; give it another name")
        metrics[name] = float(value)

    components: dict[str, float] = {}
    for name in config.weights:
        comp = component(name)
        value = _checked(comp, comp.fn(inp, log_metric), config.penalty_cap)
        if value is not None:
            components[name] = value
    weights = _weights(config, components)

    total = math.fsum(weights[name] * value for name, value in components.items())
    mask = outcome.truncated
    if mask:
        total = 0.0
    total += 0.0  # turn -0.0 into 0.0
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
