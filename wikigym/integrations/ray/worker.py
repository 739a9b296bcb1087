"""The rollout worker: envs of one recipe over its node's snapshot, checked by id.

A worker is a plain class; the pool and the service run it as a Ray actor. It builds its
env once through the env recipe (:mod:`wikigym.envs.recipe`); the defaults resolver opens
the snapshot once per process (memory-mapped, so a node's workers share its pages), and the
worker refuses to run when that snapshot is not the one the driver expects.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec

from wikigym.envs.recipe import make_env
from wikigym.errors import SnapshotMismatchError, WikigymError
from wikigym.integrations.common import ids_of
from wikigym.integrations.ray.episodes import (
    EpisodeSpec,
    Policy,
    Trajectory,
    episode_specs,
    run_episode,
)

_KEEP_VERSIONS = 8


class RolloutWorker:
    """Runs episodes of any policy in one env built from ``spec``.

    Args:
        spec: The env recipe (plain data: id and keyword arguments, paths included).
        snapshot_id: The snapshot the driver expects (None: Calc-v0, or no check).
        worker: This worker's number (recorded in trajectories, not in their equality).

    A worker whose env cannot be made (no snapshot at the corpus path on its node) or whose
    snapshot has another id than ``snapshot_id`` keeps the error: :meth:`describe` reports
    it and every episode raises it.
    """

    def __init__(self, spec: EnvSpec, snapshot_id: str | None, worker: int = 0) -> None:
        self.worker = worker
        self.policies: dict[int, Policy] = {}
        self.env: gym.Env[Any, Any] | None = None
        # A node without the snapshot (or with another) is reported by describe(), so the
        # driver raises the wikigym error itself (Ray keeps only the text of an actor's
        # constructor error).
        self.failure: WikigymError | None = None
        self.ids: dict[str, str | None] = {}
        try:
            self.env = make_env(spec)
        except WikigymError as exc:
            self.failure = exc
            return
        self.ids = ids_of(self.env)
        if snapshot_id is not None and self.ids["snapshot_id"] != snapshot_id:
            self.failure = SnapshotMismatchError(
                f"worker {worker} on {socket.gethostname()} expected snapshot "
                f"{snapshot_id[:16]}... at {spec.kwargs.get('corpus')}, found "
                f"{str(self.ids['snapshot_id'])[:16]}...; copy the same snapshot to that path "
                "on every node (see docs/ray.md)"
            )

    def describe(self) -> dict[str, Any]:
        """The ids the worker's env runs on, its host and process, and its failure (None
        when it can run)."""
        return {
            **self.ids,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "failure": self.failure,
        }

    def _env(self) -> gym.Env[Any, Any]:
        if self.failure is not None:
            raise self.failure
        assert self.env is not None  # set whenever there is no failure
        return self.env

    def plan(
        self, episodes: int | None, seed: int, task_ids: Sequence[str] | None
    ) -> list[EpisodeSpec]:
        """The episodes of a run over this worker's env (see ``episode_specs``)."""
        return episode_specs(self._env(), episodes, seed, task_ids)

    def set_policy(self, version: int, policy: Policy) -> None:
        """Keep ``policy`` as ``version`` (older versions are forgotten)."""
        # Episodes of a few older versions may still be queued behind this call.
        self.policies = {v: p for v, p in self.policies.items() if v > version - _KEEP_VERSIONS}
        self.policies[version] = policy

    def run(self, spec: EpisodeSpec, version: int) -> Trajectory:
        """Run one episode with the policy of ``version`` (set before by :meth:`set_policy`)."""
        policy = self.policies.get(version)
        if policy is None:
            raise KeyError(f"worker {self.worker} has no policy of version {version}")
        return run_episode(self._env(), spec, policy, version, self.worker)

    def run_with(self, spec: EpisodeSpec, policy: Policy, version: int = 0) -> Trajectory:
        """Run one episode with ``policy`` passed along."""
        return run_episode(self._env(), spec, policy, version, self.worker)

    def run_many(
        self, specs: Sequence[EpisodeSpec], policy: Policy, version: int = 0
    ) -> list[Trajectory]:
        """Run a chunk of episodes with ``policy`` passed along, one call for all (a Ray call
        costs far more than an episode of a fast policy)."""
        env = self._env()
        return [run_episode(env, spec, policy, version, self.worker) for spec in specs]

    def close(self) -> None:
        if self.env is not None:
            self.env.close()


__all__ = ["RolloutWorker"]
