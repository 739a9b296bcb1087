"""wikigym: offline, deterministic Wikipedia search environments for RL on LLM agents."""

from __future__ import annotations

__version__ = "0.1.0"
