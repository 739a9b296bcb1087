"""``RolloutPool``: N Ray actors running episodes of one env recipe, results in episode order.

Each actor holds one env built from the recipe over the snapshot at the recipe's corpus path
on its node, checked against the driver's ``snapshot_id`` when the actor starts. Episodes
go to whichever actor is free in chunks (one Ray call per chunk, at most ``in_flight``
chunks queued per actor); the trajectories come back sorted by episode index, so the order
and the content never depend on which actor finished first. Every episode runs on a fresh
copy of the policy, so the results equal :func:`run_serial`'s, and an actor that dies is
replaced and its unfinished chunks run again with the same result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from wikigym.envs.recipe import env_spec, make_env
from wikigym.envs.registration import WIKI_SEARCH
from wikigym.errors import RolloutError
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
        f"wikigym.integrations.ray needs ray ({exc}); from a wikigym checkout: "
        "pip install -e '.[ray]'"
    ) from exc


def _recipe(env_id: str, kwargs: dict[str, Any]) -> Any:
    """The env recipe of a pool, with the corpus/tasks paths as given (each node resolves
    them on its own file system: they must be the same absolute paths everywhere)."""
    return env_spec(env_id, **env_kwargs(env_id, kwargs))


ACTOR_LOST: tuple[type[BaseException], ...] = (
    ray.exceptions.RayActorError,  # the actor's process died (ActorDiedError is one)
    ray.exceptions.ActorUnavailableError,  # ... or cannot be reached for now
)


class RolloutPool:
    """N Ray actors, each with an env of ``env_id`` built from ``env_kwargs``.

    Args:
        num_actors: How many actors (each one process, one env).
        env_id: ``WikiSearch-v1`` or ``Calc-v0``.
        snapshot_id: The snapshot every actor must find at the corpus path. None: the
            driver opens the env once itself and takes its snapshot's id (the driver then
            needs a copy too; with an id it needs none and the first actor lists the tasks).
        num_cpus: CPUs Ray reserves per actor.
        in_flight: Chunks of episodes queued per actor (2 keeps an actor busy while the
            driver collects a result).
        chunk: Episodes per actor call (None: a run's episodes split in about 4 chunks per
            actor, at most 64 each). A Ray call costs far more than an episode of a fast
            policy; a chunk amortises it, and an actor that dies loses only its chunks.
        max_restarts: How many times in all the pool replaces a dead actor before a run
            raises :class:`~wikigym.errors.RolloutError`.
        start_timeout_s: How long the actors may take to start (Ray waits for free CPUs).
        **env_kwargs: The env's arguments (``corpus``, ``tasks``, ``max_steps``, ...); paths
            must be absolute and the same on every node.

    Raises:
        IntegrationConfigError: Unknown env id or argument, the cluster has fewer CPUs in
            all than the actors ask (at once, before waiting), or the actors did not start in
            time (too few free CPUs).
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
        chunk: int | None = None,
        max_restarts: int = 3,
        start_timeout_s: float = 300.0,
        **env_kwargs: Any,
    ) -> None:
        if num_actors < 1 or in_flight < 1 or (chunk is not None and chunk < 1):
            raise IntegrationConfigError(
                f"num_actors, in_flight and chunk must be >= 1, got {num_actors}, {in_flight} "
                f"and {chunk}"
            )
        self.spec = _recipe(env_id, env_kwargs)
        self.in_flight = in_flight
        self.chunk = chunk
        self.max_restarts = max_restarts
        self.restarts = 0
        self.num_cpus = num_cpus
        self.start_timeout_s = start_timeout_s
        self.actors: list[Any] = []
        # Without an expected id the driver opens the env once (validating the recipe here)
        # and takes its snapshot's id; with one, the driver needs no copy of the data.
        self.local: gym.Env[str, str] | None = None
        self.snapshot_id = snapshot_id
        if not snapshot_id:
            self.local = make_env(self.spec)
            self.snapshot_id = ids_of(self.local)["snapshot_id"]
        if not ray.is_initialized():
            ray.init(num_cpus=max(2, num_actors), include_dashboard=False, log_to_driver=False)
        need, total = num_actors * num_cpus, ray.cluster_resources().get("CPU", 0.0)
        if need > total:
            self.close()
            raise IntegrationConfigError(
                f"{num_actors} actors of {num_cpus:g} CPU each need {need:g} CPUs; the Ray "
                f"cluster has {total:g} in all: pass num_cpus={total / num_actors:g} or less, "
                "fewer actors, or add nodes"
            )
        self._actor_cls = ray.remote(num_cpus=num_cpus)(RolloutWorker)
        # Typed Any: Ray's stubs do not see the .remote of an actor's methods.
        self.actors = [
            self._actor_cls.remote(self.spec, self.snapshot_id, i) for i in range(num_actors)
        ]
        self.workers = self._started(list(range(num_actors)))

    def _started(self, slots: list[int]) -> list[dict[str, Any]]:
        """Wait for the actors of ``slots`` to start; fail now (one line naming the node)
        rather than at the first episode."""
        try:
            workers = ray.get(
                [self.actors[i].describe.remote() for i in slots], timeout=self.start_timeout_s
            )
        except ray.exceptions.GetTimeoutError:
            self.close()
            raise IntegrationConfigError(
                f"{len(slots)} actors of {self.num_cpus:g} CPU each did not start within "
                f"{self.start_timeout_s:g} s; the cluster has "
                f"{ray.available_resources().get('CPU', 0):g} CPUs free: close other pools, "
                "pass num_cpus= lower, or add nodes"
            ) from None
        for info in workers:
            if info["failure"] is not None:
                self.close()
                raise info["failure"]
        return list(workers)

    def restart(self, slot: int) -> Any:
        """Replace the actor of ``slot`` (dead or unreachable) with a new one on the same
        recipe and snapshot check; returns its handle (also in :attr:`actors`)."""
        ray.kill(self.actors[slot], no_restart=True)
        self.actors[slot] = self._actor_cls.remote(self.spec, self.snapshot_id, slot)
        self.workers[slot] = self._started([slot])[0]
        self.restarts += 1
        return self.actors[slot]

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

        An actor that dies mid-run is replaced and only its unfinished episodes run again
        (same tasks and seeds, a fresh copy of the policy: the results are the same).

        Args:
            policy: An :class:`OpenAIPolicy`, an eval agent or a callable ``(turn) -> str``;
                it must pickle (cloudpickle: lambdas and local functions do).
            episodes: How many (default: one per task, or 100 Calc-v0 problems).
            seed: Episode ``i`` resets with ``seed + i``.
            task_ids: The tasks, in order (default: the TaskSet's order).
            version: The policy version recorded in the trajectories.

        Raises:
            RolloutError: Actors died more than ``max_restarts`` times (its
                ``trajectories`` are the episodes that finished).
        """
        specs = self.episodes(episodes, seed, task_ids)
        size = self.chunk or max(1, min(64, -(-len(specs) // (4 * len(self.actors)))))
        queue = [specs[i : i + size] for i in range(0, len(specs), size)]
        queue.reverse()  # pop() takes the earliest chunk
        ref = ray.put(policy)
        pending: dict[Any, tuple[int, list[EpisodeSpec]]] = {}
        load = [0] * len(self.actors)
        results: dict[int, Trajectory] = {}
        while queue or pending:
            for a, actor in enumerate(self.actors):
                while queue and load[a] < self.in_flight:
                    part = queue.pop()
                    pending[actor.run_many.remote(part, ref, version)] = (a, part)
                    load[a] += 1
            done, _ = ray.wait(list(pending), num_returns=1)
            obj = done[0]
            a, part = pending.pop(obj)
            load[a] -= 1
            try:
                trajectories: list[Trajectory] = ray.get(obj)
            except ACTOR_LOST as exc:
                pending[obj] = (a, part)  # lost with the actor's other calls in flight
                self._recover(a, pending, load, queue, results, exc)
                continue
            for trajectory in trajectories:
                results[trajectory.index] = trajectory
        return [results[s.index] for s in specs]

    def _recover(
        self,
        slot: int,
        pending: dict[Any, tuple[int, list[EpisodeSpec]]],
        load: list[int],
        queue: list[list[EpisodeSpec]],
        results: dict[int, Trajectory],
        exc: BaseException,
    ) -> None:
        """The actor of ``slot`` is lost: give up on its calls in flight, put their chunks
        back at the front of the queue and start a new actor in its place."""
        lost = sorted((part for a, part in pending.values() if a == slot), key=lambda p: p[0].index)
        for obj in [obj for obj, (a, _) in pending.items() if a == slot]:
            del pending[obj]
        load[slot] = 0
        queue.extend(reversed(lost))  # they run next, before the later chunks
        if self.restarts >= self.max_restarts:
            raise RolloutError(
                f"rollout actors died {self.restarts + 1} times (max_restarts="
                f"{self.max_restarts}); last: {type(exc).__name__}: {str(exc).splitlines()[0]}; "
                f"{len(results)} finished episodes are in the error's trajectories",
                results,
            ) from exc
        self.restart(slot)

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
