"""wikigym.envs: Gymnasium environments (registered when ``wikigym`` is imported).

- ``WikiSearch-v0``: :class:`wikigym.envs.wiki_search.WikiSearchEnv`
- ``Calc-v0``: :class:`wikigym.envs.calc.CalcEnv`

Registration only records string entry points: nothing is opened or built until
``gymnasium.make`` is called.
"""

from __future__ import annotations

import gymnasium as gym

ENV_IDS: tuple[str, ...] = ("WikiSearch-v0", "Calc-v0")


def register_envs() -> None:
    """Register the environments with Gymnasium (idempotent)."""
    registry = gym.envs.registration.registry
    if "WikiSearch-v0" not in registry:
        # No TimeLimit: the env spends its own step budget so that it can mark the
        # truncated episode as masked (a TimeLimit truncation would carry no mask).
        gym.register(
            id="WikiSearch-v0",
            entry_point="wikigym.envs.wiki_search:WikiSearchEnv",
            disable_env_checker=False,
        )
    if "Calc-v0" not in registry:
        gym.register(id="Calc-v0", entry_point="wikigym.envs.calc:CalcEnv")


__all__ = ["ENV_IDS", "register_envs"]
