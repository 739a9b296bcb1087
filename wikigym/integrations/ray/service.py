"""The seed's asynchronous rollout service (rLLM): actors keep generating while a trainer
consumes, through a bounded, version-tagged replay buffer.

A driver thread keeps every actor of a :class:`RolloutPool` busy: it reserves the next
episode index in the :class:`ReplayBuffer` (none when full: generation waits), sends it to a
free actor with the current policy version, and puts the finished trajectory in the buffer.
The trainer calls :meth:`RolloutService.take` for a batch, learns, then
:meth:`RolloutService.update_policy`, which hands the new policy (or just a new version, for
an endpoint whose weights were reloaded) to every actor and advances the version; the buffer
drops or down-weights what is more than ``max_staleness`` versions old.

Deterministic: episode ``i``'s task and seed, and the order of trajectories in batches
(episode order). Not deterministic: which policy version ran episode ``i`` (it depends on
when the trainer updated relative to the actors), hence which episodes are stale. With a
policy whose actions do not depend on its version the batches are identical run to run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from wikigym.cliutil import interrupt_on_sigterm
from wikigym.errors import RolloutError
from wikigym.integrations.ray.buffer import Batch, ReplayBuffer
from wikigym.integrations.ray.episodes import EpisodeSpec, Policy, Trajectory
from wikigym.integrations.ray.pool import ACTOR_LOST, RolloutPool

try:
    import ray
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError(
        f"wikigym.integrations.ray needs ray ({exc}); from a wikigym checkout: "
        "pip install -e '.[ray]'"
    ) from exc

_POLL_S = 0.05


def _nothing() -> None:
    return None


class RolloutService:
    """Generate episodes on ``pool`` into ``buffer`` until :meth:`stop`.

    Args:
        pool: The actors (their env recipe and snapshot check).
        policy: The policy of version 0 (see :class:`~.episodes.Turn` for callables).
        buffer: The bounded replay buffer (its capacity bounds episodes in flight too).
        seed: Episode ``i`` resets with ``seed + i``.
        task_ids: The tasks, cycled in this order (default: the TaskSet's order).
    """

    def __init__(
        self,
        pool: RolloutPool,
        policy: Policy,
        buffer: ReplayBuffer,
        *,
        seed: int = 0,
        task_ids: Sequence[str] | None = None,
    ) -> None:
        self.pool = pool
        self.buffer = buffer
        self.seed = seed
        plan = pool.episodes(None if task_ids is None else len(task_ids), seed, task_ids)
        self._task_ids = [s.task_id for s in plan]
        self.version = buffer.version
        self.error: BaseException | None = None
        self.generated = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._push(self.version, policy)
        self._policy = policy
        self._thread = threading.Thread(target=self._loop, name="wikigym-rollouts", daemon=True)
        self._restore_sigterm: Callable[[], None] = _nothing

    def episode(self, index: int) -> EpisodeSpec:
        """The task and seed of episode ``index`` (fixed, whatever the timing)."""
        return EpisodeSpec(index, self._task_ids[index % len(self._task_ids)], self.seed + index)

    def start(self) -> RolloutService:
        """Start generating (returns self).

        Until :meth:`stop`, SIGTERM (Slurm, Kubernetes) raises
        :class:`~wikigym.errors.Terminated`, a ``KeyboardInterrupt``, in the main thread
        (Ray's own handler would ``sys.exit(15)``): the trainer's loop unwinds as on Ctrl-C,
        through ``with`` blocks that stop generation and the pool's actors.
        """
        self._restore_sigterm = interrupt_on_sigterm()
        self._thread.start()
        return self

    def _push(self, version: int, policy: Policy) -> None:
        ref = ray.put(policy)
        ray.get([a.set_policy.remote(version, ref) for a in self.pool.actors])

    def _loop(self) -> None:
        actors = self.pool.actors  # the pool replaces a dead actor in this list, in place
        load = [0] * len(actors)
        pending: dict[Any, tuple[int, int]] = {}  # call -> (actor slot, episode index)
        retry: list[int] = []  # episodes of a lost actor, to run again first
        try:
            while not self._stop.is_set():
                for a, actor in enumerate(actors):
                    while load[a] < self.pool.in_flight:
                        index = retry.pop() if retry else self.buffer.reserve()
                        if index is None:
                            break
                        with self._lock:
                            version = self.version
                        pending[actor.run.remote(self.episode(index), version)] = (a, index)
                        load[a] += 1
                if not pending:
                    self.buffer.wait_for_room(_POLL_S)
                    continue
                done, _ = ray.wait(list(pending), num_returns=1, timeout=_POLL_S)
                for obj in done:
                    if obj not in pending:
                        continue  # a call of an actor lost earlier in this batch
                    a, index = pending.pop(obj)
                    load[a] -= 1
                    try:
                        trajectory: Trajectory = ray.get(obj)
                    except ACTOR_LOST as exc:
                        pending[obj] = (a, index)  # lost with the actor's other calls
                        retry += self._replace(a, pending, exc)
                        load[a] = 0
                        continue
                    self.buffer.put(trajectory)
                    self.generated += 1
        except BaseException as exc:  # noqa: BLE001 - handed to the trainer by take()
            self.error = exc
        finally:
            for obj in pending:
                ray.cancel(obj)

    def _replace(
        self, slot: int, pending: dict[Any, tuple[int, int]], exc: BaseException
    ) -> list[int]:
        """A lost actor: a new one in its slot with the current policy; returns the episode
        indices it had in flight, highest first (they run again, lowest first).

        Raises:
            RolloutError: The pool's ``max_restarts`` is spent.
        """
        lost = sorted((i for a, i in pending.values() if a == slot), reverse=True)
        for obj in [obj for obj, (a, _) in pending.items() if a == slot]:
            del pending[obj]
        if self.pool.restarts >= self.pool.max_restarts:
            raise RolloutError(
                f"rollout actors died {self.pool.restarts + 1} times (max_restarts="
                f"{self.pool.max_restarts}); last: {type(exc).__name__}"
            ) from exc
        actor = self.pool.restart(slot)
        with self._lock:
            version = self.version
        ray.get(actor.set_policy.remote(version, ray.put(self._policy)))
        return lost

    def take(self, size: int, timeout_s: float | None = 60.0) -> Batch:
        """The next batch of ``size`` trajectories (episode order, staleness applied).

        Raises:
            TimeoutError: Not enough trajectories within ``timeout_s``.
            BaseException: What stopped the generating thread (a worker's error).
        """
        waited = 0.0
        while True:
            if self.error is not None:
                raise self.error
            try:
                return self.buffer.take(size, timeout_s=0.25)
            except TimeoutError:
                waited += 0.25
                if timeout_s is not None and waited >= timeout_s:
                    raise

    def batches(self, size: int, count: int, timeout_s: float | None = 60.0) -> Iterator[Batch]:
        """``count`` batches of ``size``, one after another (the trainer updates between)."""
        for _ in range(count):
            yield self.take(size, timeout_s)

    def update_policy(self, policy: Policy | None = None) -> int:
        """Advance the policy version (with a new ``policy``, or the same one, e.g. an
        endpoint whose weights the trainer just reloaded); returns the new version."""
        with self._lock:
            version = self.version + 1
        self._policy = self._policy if policy is None else policy
        self._push(version, self._policy)  # every actor has it before any episode uses it
        with self._lock:
            self.version = version
        self.buffer.advance(version)
        return version

    def stop(self) -> None:
        """Stop generating (episodes in flight are cancelled); the pool stays open."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)
        self._restore_sigterm()
        self._restore_sigterm = _nothing

    def __enter__(self) -> RolloutService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def trl_rows(batch: Batch) -> list[dict[str, Any]]:
    """A batch as rows a TRL trainer (or any) reads: conversational ``prompt`` (the first
    observation) and ``completion`` (the rest), ``reward``, staleness ``weight``, ``mask``
    (truncated: leave out of the loss), and the ids that reproduce the episode."""
    return [
        {
            "prompt": list(t.messages[:1]),
            "completion": list(t.messages[1:]),
            "reward": t.reward,
            "weight": w,
            "mask": t.mask,
            "policy_version": t.policy_version,
            "task_id": t.task_id,
            "seed": t.seed,
            "index": t.index,
        }
        for t, w in zip(batch.trajectories, batch.weights, strict=True)
    ]


__all__ = ["RolloutService", "trl_rows"]
