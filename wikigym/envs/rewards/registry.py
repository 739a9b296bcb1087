"""The one registry of reward components: plain callables, each registered under its name.

A component is a function ``fn(inp, log_metric) -> float | None`` over a
:class:`~wikigym.envs.rewards.inputs.RewardInput` (the episode outcome, the components'
settings and the facts they share). ``log_metric(name, value)`` adds a diagnostic number to the
breakdown's ``metrics``, as TRL's reward functions do with their ``log_metric`` keyword. A
``score`` returns a value in [0, 1], or None when it has nothing to score (the component is
then absent and its weight is shared, see the package docstring); a ``penalty`` returns a value
in [-penalty_cap, 0] and is never absent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from wikigym.envs.rewards.inputs import RewardInput
from wikigym.errors import UnknownRewardComponentError

__all__ = [
    "ComponentFn",
    "ComponentKind",
    "LogMetric",
    "RewardComponent",
    "component",
    "component_names",
    "reward_component",
]

ComponentKind = Literal["score", "penalty"]
LogMetric = Callable[[str, float], None]
ComponentFn = Callable[[RewardInput, LogMetric], float | None]
_Fn = TypeVar("_Fn", bound=ComponentFn)

_KINDS: tuple[str, ...] = ("score", "penalty")


@dataclass(frozen=True)
class RewardComponent:
    """A registered component.

    Attributes:
        name: The key in the config's ``weights`` and in ``info["reward_components"]``.
        fn: The function that scores an episode.
        kind: ``score`` (in [0, 1], may be absent) or ``penalty`` (in [-penalty_cap, 0]).
    """

    name: str
    fn: ComponentFn
    kind: ComponentKind


_REGISTRY: dict[str, RewardComponent] = {}


def reward_component(name: str, *, kind: ComponentKind = "score") -> Callable[[_Fn], _Fn]:
    """Register the decorated function as the reward component ``name``.

    Args:
        name: A new component name.
        kind: ``score`` or ``penalty``.

    Returns:
        A decorator that registers the function and returns it unchanged.

    Raises:
        ValueError: If ``name`` is taken or ``kind`` is unknown (a programming error).
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")

    def register(fn: _Fn) -> _Fn:
        if name in _REGISTRY:
            raise ValueError(f"reward component {name!r} is already registered")
        _REGISTRY[name] = RewardComponent(name=name, fn=fn, kind=kind)
        return fn

    return register


def component_names() -> tuple[str, ...]:
    """The registered names, in registration order."""
    return tuple(_REGISTRY)


def component(name: str) -> RewardComponent:
    """The component registered as ``name``.

    Raises:
        UnknownRewardComponentError: If there is none; the message names the known ones.
    """
    found = _REGISTRY.get(name)
    if found is None:
        raise UnknownRewardComponentError(
            f"unknown reward component {name!r}; expected one of {component_names()} "
            "(register new ones with wikigym.envs.rewards.reward_component)"
        )
    return found
