"""wikigym: offline, deterministic Wikipedia search environments for RL on LLM agents.

Importing ``wikigym`` registers ``WikiSearch-v0`` and ``Calc-v0`` with Gymnasium (string
entry points only: no I/O at import time).
"""

from __future__ import annotations

__version__ = "0.1.0"

from wikigym.envs import ENV_IDS, register_envs

register_envs()

__all__ = ["ENV_IDS", "__version__"]
