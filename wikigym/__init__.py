"""wikigym: offline, deterministic Wikipedia search environments for RL on LLM agents.

Importing ``wikigym`` registers ``WikiSearch-v1`` and ``Calc-v0`` with Gymnasium (string
entry points only, and only once Gymnasium is loaded: no I/O at import time, and a user who
only builds snapshots never loads Gymnasium), and installs the defaults (:mod:`wikigym.defaults`).
"""

from __future__ import annotations

from wikigym.defaults import install
from wikigym.envs.registration import ENV_IDS
from wikigym.version import __version__

install()

__all__ = ["ENV_IDS", "__version__"]
