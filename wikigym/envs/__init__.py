"""wikigym.envs: Gymnasium environments (registered when ``wikigym`` is imported).

- ``WikiSearch-v1``: :class:`wikigym.envs.wiki_search.WikiSearchEnv`
- ``Calc-v0``: :class:`wikigym.envs.calc.CalcEnv`

Registration (:mod:`wikigym.envs.registration`) records string entry points only: nothing is
opened or built, and Gymnasium itself is not loaded, until it is needed.
"""

from __future__ import annotations

from wikigym.envs.registration import ENV_IDS, register_envs, register_when_gymnasium_loads

__all__ = ["ENV_IDS", "register_envs", "register_when_gymnasium_loads"]
