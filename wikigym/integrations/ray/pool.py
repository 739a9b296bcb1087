"""``RolloutPool``: N Ray actors running episodes of one env recipe, results in episode order.

Each actor holds one env built from the recipe over the snapshot at the recipe's corpus path
on its node, checked against the driver's ``snapshot_id`` when the actor starts. Episodes
are handed to whichever actor is free (at most ``in_flight`` queued per actor); the
trajectories come back sorted by episode index, so the order and the content never depend on
which actor finished first. Every episode runs on a fresh copy of the policy, so the results
equal :func:`run_serial`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from wikigym.envs.recipe import env_spec, make_env
from wikigym.envs.registration import WIKI_SEARCH
from wikigym.integrations.common import IntegrationConfigError, env_kwargs, ids_of
from wikigym.integrations.ray.episodes import (
    EpisodeSpec,
    Policy,
    Trajectory,
    episode_specs,
    run_episode,
)
from wikigym.integrations.ray.worker import RolloutWorker

try:
    import ray
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError(
        f"wikigym.integrations.ray needs ray ({exc}); pip install 'wikigym[ray]'"
    ) from exc


def _recipe(env_id: str, kwargs: dict[str, Any]) -> Any:
    """The env recipe of a pool, with the corpus/tasks paths as given (each node resolves
    them on its own file system: they must be the same absolute paths everywhere)."""
    return env_spec(env_id, **env_kwargs(env_id, kwargs))


class RolloutPool:
    """N Ray actors, each with an env of ``env_id`` built from ``env_kwargs``.

    Args:
        num_actors: How many actors (each one process, one env).
        env_id: ``WikiSearch-v0`` or ``Calc-v0``.
        snapshot_id: The snapshot every actor must find at the corpus path. None: the
            driver opens the env once itself and takes its snapshot's id (the driver then
            needs a copy too; with an id it needs none and the first actor lists the tasks).
        num_cpus: CPUs Ray reserves per actor.
        in_flight: Episodes queued per actor (2 keeps an actor busy while the driver
            collects a result).
        start_timeout_s: How long the actors may take to start (Ray waits for free CPUs).
        **env_kwargs: The env's arguments (``corpus``, ``tasks``, ``max_steps``, ...); paths
            must be absolute and the same on every node.

    Raises:
        IntegrationConfigError: Unknown env id or argument, or the actors did not start in
            time (the cluster has too few free CPUs).
        SnapshotError: An actor's node has no readable snapshot at the corpus path.
        SnapshotMismatchError: An actor's node holds another snapshot at the corpus path.
    """

    def __init__(
        self,
        num_actors: int,
        env_id: str = WIKI_SEARCH,
        *,
        snapshot_id: str | None = None,
        num_cpus: float = 1.0,
        in_flight: int = 2,
        start_timeout_s: float = 300.0,
        **env_kwargs: Any,
    ) -> None:
        if num_actors < 1 or in_flight < 1:
            raise IntegrationConfigError(
                f"num_actors and in_flight must be >= 1, got {num_actors} and {in_flight}"
            )
        self.spec = _recipe(env_id, env_kwargs)
        self.in_flight = in_flight
        # Without an expected id the driver opens the env once (validating the recipe here)
        # and takes its snapshot's id; with one, the driver needs no copy of the data.
        self.local: gym.Env[str, str] | None = None
        self.snapshot_id = snapshot_id
        if not snapshot_id:
            self.local = make_env(self.spec)
            self.snapshot_id = ids_of(self.local)["snapshot_id"]
        if not ray.is_initialized():
            ray.init(num_cpus=max(2, num_actors), include_dashboard=False, log_to_driver=False)
        actor_cls = ray.remote(num_cpus=num_cpus)(RolloutWorker)
        # Typed Any: Ray's stubs do not see the .remote of an actor's methods.
        self.actors: list[Any] = [
            actor_cls.remote(self.spec, self.snapshot_id, i) for i in range(num_actors)
        ]
        # Fail now (one line naming the node) rather than at the first episode.
        try:
            self.workers = ray.get(
                [a.describe.remote() for a in self.actors], timeout=start_timeout_s
            )
        except ray.exceptions.GetTimeoutError:
            self.close()
            raise IntegrationConfigError(
                f"{num_actors} actors of {num_cpus:g} CPU each did not start within "
                f"{start_timeout_s:g} s; the cluster has {ray.available_resources().get('CPU', 0):g} "
                "CPUs free: close other pools, pass num_cpus= lower, or add nodes"
            ) from None
        for info in self.workers:
            if info["failure"] is not None:
                self.close()
                raise info["failure"]

    def episodes(
        self, episodes: int | None = None, seed: int = 0, task_ids: Sequence[str] | None = None
    ) -> list[EpisodeSpec]:
        """The episodes a run would play (see :func:`episode_specs`), listed by the driver's
        env, or by the first actor's when the driver has none."""
        if self.local is not None:
            return episode_specs(self.local, episodes, seed, task_ids)
        return list(ray.get(self.actors[0].plan.remote(episodes, seed, task_ids)))

    def run(
        self,
        policy: Policy,
        episodes: int | None = None,
        *,
        seed: int = 0,
        task_ids: Sequence[str] | None = None,
        version: int = 0,
    ) -> list[Trajectory]:
        """Run ``policy`` on the episodes of a run; trajectories sorted by episode index.

        Args:
            policy: An :class:`OpenAIPolicy`, an eval agent or a callable ``(turn) -> str``;
                it must pickle (cloudpickle: lambdas and local functions do).
            episodes: How many (default: one per task, or 100 Calc-v0 problems).
            seed: Episode ``i`` resets with ``seed + i``.
            task_ids: The tasks, in order (default: the TaskSet's order).
            version: The policy version recorded in the trajectories.
        """
        specs = self.episodes(episodes, seed, task_ids)
        ref = ray.put(policy)
        pending: dict[Any, int] = {}
        load = [0] * len(self.actors)
        results: dict[int, Trajectory] = {}
        queue = list(specs)
        queue.reverse()
        while queue or pending:
            for a, actor in enumerate(self.actors):
                while queue and load[a] < self.in_flight:
                    spec = queue.pop()
                    pending[actor.run_with.remote(spec, ref, version)] = a
                    load[a] += 1
            done, _ = ray.wait(list(pending), num_returns=1)
            for obj in done:
                load[pending.pop(obj)] -= 1
                trajectory: Trajectory = ray.get(obj)
                results[trajectory.index] = trajectory
        return [results[s.index] for s in specs]

    def close(self) -> None:
        """Stop the actors (the Ray cluster stays up); closing twice is harmless."""
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        if self.local is not None:
            self.local.close()
            self.local = None

    def __enter__(self) -> RolloutPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_serial(
    policy: Policy,
    env_id: str = WIKI_SEARCH,
    episodes: int | None = None,
    *,
    seed: int = 0,
    task_ids: Sequence[str] | None = None,
    version: int = 0,
    **env_kwargs: Any,
) -> list[Trajectory]:
    """The same run as :meth:`RolloutPool.run`, in this process, one episode after another."""
    env = make_env(_recipe(env_id, env_kwargs))
    try:
        specs = episode_specs(env, episodes, seed, task_ids)
        return [run_episode(env, s, policy, version) for s in specs]
    finally:
        env.close()


__all__ = ["RolloutPool", "run_serial"]
