"""GEM (``gem-llm``): wikigym envs as ``gem.Env`` classes for ``gem.make`` and ``make_vec``.

``import wikigym.integrations.gem`` registers ``"wikigym:WikiSearch-v0"`` and
``"wikigym:Calc-v0"``. GEM's ``make_vec`` passes ``seed=`` (base seed + env index) to the
constructor: it seeds the first reset that names no seed, so every env of a vector draws
its own, reproducible episodes. Install with ``wikigym[gem]``.
"""

from __future__ import annotations

import functools
import pickle
from typing import Any

from wikigym.envs import ENV_IDS
from wikigym.integrations.common import DEFAULT_ENV_ID, env_kwargs, make_env

try:
    import gem
    from gem.envs.registration import ENV_REGISTRY
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError(
        f"wikigym.integrations.gem needs gem-llm ({exc}); pip install 'wikigym[gem]'"
    ) from exc

PREFIX = "wikigym:"


class WikigymGemEnv(gem.Env):
    """A wikigym env with GEM's interface (``reset(seed)``, ``step``, ``spawn``).

    Args:
        env_id: ``WikiSearch-v0`` or ``Calc-v0``.
        seed: Seed of the first reset that names none (GEM's ``make_vec`` sets it per env).
        **kwargs: The env's arguments (``corpus``, ``tasks``, ``max_steps``, ...).
    """

    def __init__(self, env_id: str = DEFAULT_ENV_ID, seed: int | None = None, **kwargs: Any):
        super().__init__()
        self.wikigym_id = env_id
        self.kwargs = env_kwargs(env_id, kwargs)
        self.seed = seed
        self.env = make_env(env_id, **self.kwargs)
        self._seeded = False

    def reset(self, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        """A new episode; the first unseeded reset uses the constructor's ``seed``."""
        if seed is None and not self._seeded:
            seed = self.seed
        self._seeded = self._seeded or seed is not None
        return self.env.reset(seed=seed)

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
        return WikigymGemEnv(self.wikigym_id, **{"seed": self.seed, **self.kwargs, **kwargs})

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
