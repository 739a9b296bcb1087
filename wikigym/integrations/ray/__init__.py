"""Ray: a rollout pool over each node's snapshot copy, and the seed's async rollout service.

- :class:`RolloutPool` (``pool``): N Ray actors running episodes of one env recipe for a
  policy (an OpenAI-compatible endpoint, an eval agent or a callable); trajectories come
  back in episode order, equal to :func:`run_serial`'s.
- :class:`RolloutService` (``service``) and :class:`ReplayBuffer` (``buffer``): actors keep
  generating while a trainer takes batches from a bounded buffer of trajectories tagged with
  their policy version, with a staleness bound.

The pool and the service need Ray (from a wikigym checkout: ``pip install -e '.[ray]'``) and import it when first
named; the buffer and the episode code do not. See docs/ray.md for multi-node clusters.
"""

from __future__ import annotations

from typing import Any

from wikigym.integrations.ray.buffer import Batch, ReplayBuffer
from wikigym.integrations.ray.episodes import (
    EpisodeSpec,
    OpenAIPolicy,
    Policy,
    Trajectory,
    Turn,
    run_episode,
)

_NEEDS_RAY = {
    "RolloutPool": "wikigym.integrations.ray.pool",
    "run_serial": "wikigym.integrations.ray.pool",
    "RolloutService": "wikigym.integrations.ray.service",
    "trl_rows": "wikigym.integrations.ray.service",
}


def __getattr__(name: str) -> Any:
    """Load the Ray-backed names on first use (so the buffer works without Ray)."""
    if name in _NEEDS_RAY:
        import importlib

        return getattr(importlib.import_module(_NEEDS_RAY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Batch",
    "EpisodeSpec",
    "OpenAIPolicy",
    "Policy",
    "ReplayBuffer",
    "RolloutPool",
    "RolloutService",
    "Trajectory",
    "Turn",
    "run_episode",
    "run_serial",
    "trl_rows",
]
