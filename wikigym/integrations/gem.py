"""GEM (``gem-llm``): wikigym envs as ``gem.Env`` classes for ``gem.make`` and ``make_vec``.

``import wikigym.integrations.gem`` registers ``"wikigym:WikiSearch-v1"`` and
``"wikigym:Calc-v0"``. GEM's ``make_vec`` passes ``seed=`` (base seed + env index) to the
constructor: it seeds the first reset that names no seed, so every env of a vector draws
its own, reproducible episodes. A task is chosen the way GEM's envs take options:
``env.reset(seed, task_id="...")``, or ``task_id=`` in the constructor (per env of a vector
through ``make_vec(..., vec_kwargs=[{"task_id": ...}, ...])``). Install from a wikigym
checkout with ``pip install -e '.[gem]'``.
"""

from __future__ import annotations

import functools
import pickle
from typing import Any

from wikigym.envs import ENV_IDS
from wikigym.integrations.common import (
    DEFAULT_ENV_ID,
    IntegrationConfigError,
    env_kwargs,
    make_env,
    reset_row,
)

try:
    import gem
    from gem.envs.registration import ENV_REGISTRY
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError(
        f"wikigym.integrations.gem needs gem-llm ({exc}); from a wikigym checkout: "
        "pip install -e '.[gem]'"
    ) from exc

PREFIX = "wikigym:"


class WikigymGemEnv(gem.Env):
    """A wikigym env with GEM's interface (``reset(seed, ...)``, ``step``, ``spawn``).

    Args:
        env_id: ``WikiSearch-v1`` or ``Calc-v0``.
        seed: Seed of the first reset that names none (GEM's ``make_vec`` sets it per env).
        task_id: The task every reset plays unless the reset names another (WikiSearch-v1;
            with ``make_vec``'s ``vec_kwargs`` each env of a vector can have its own, e.g.
            a group of envs on one task). None: the env draws a task from the seed.
        **kwargs: The env's arguments (``corpus``, ``tasks``, ``max_steps``, ...).

    Raises:
        IntegrationConfigError: A task id for Calc-v0, or an unknown env argument.
    """

    def __init__(
        self,
        env_id: str = DEFAULT_ENV_ID,
        seed: int | None = None,
        task_id: str | None = None,
        **kwargs: Any,
    ):
        super().__init__()
        self.wikigym_id = env_id
        self.kwargs = env_kwargs(env_id, kwargs)
        self.seed = seed
        self.env = make_env(env_id, **self.kwargs)
        self.task_id = self._checked(task_id)
        self._seeded = False

    def _checked(self, task_id: str | None) -> str | None:
        if task_id is not None and getattr(self.env.unwrapped, "tasks", None) is None:
            raise IntegrationConfigError(
                f"{self.wikigym_id} has no tasks to choose from, got task_id={task_id!r}; "
                "drop task_id (its problem is drawn from the seed)"
            )
        return task_id

    def reset(
        self, seed: int | None = None, task_id: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        """A new episode: of ``task_id`` (else the constructor's; else one drawn from the
        seed), the way GEM's envs take their options (``MathEnv.reset(seed, idx)``). The first
        unseeded reset uses the constructor's ``seed``.

        Raises:
            TaskSetError: ``task_id`` is not a task of the env's TaskSet.
        """
        if seed is None and not self._seeded:
            seed = self.seed
        self._seeded = self._seeded or seed is not None
        chosen = self._checked(task_id) or self.task_id
        return reset_row(self.env, chosen, seed)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, float(reward), bool(terminated), bool(truncated), info

    def sample_random_action(self) -> str:
        return str(self.env.action_space.sample())

    def spawn(self, same_state: bool = False, **kwargs: Any) -> WikigymGemEnv:
        """A new env of the same config (``kwargs`` override it); with ``same_state`` a copy
        in the same episode (the env pickles by reference to its snapshot)."""
        if same_state and not kwargs:
            return pickle.loads(pickle.dumps(self))
        base = {"seed": self.seed, "task_id": self.task_id, **self.kwargs}
        return WikigymGemEnv(self.wikigym_id, **{**base, **kwargs})

    def close(self) -> None:
        self.env.close()


def register() -> None:
    """Register every wikigym id as ``wikigym:<id>`` with GEM (idempotent; done on import)."""
    for env_id in ENV_IDS:
        if PREFIX + env_id not in ENV_REGISTRY:
            # A partial, not kwargs: gem.register's own first parameter is named env_id.
            gem.register(PREFIX + env_id, functools.partial(WikigymGemEnv, env_id))


register()

__all__ = ["PREFIX", "WikigymGemEnv", "register"]
