"""A bounded replay buffer of trajectories tagged with the policy version that made them.

The rollout service numbers its episodes in the order it issues them (episode ``i`` is a
fixed task and seed) and reserves a slot for each before it starts; the buffer holds at most
``capacity`` reserved or finished trajectories, so generation pauses (backpressure) when the
trainer falls behind. Workers finish in any order; the buffer releases trajectories in
episode order only (a batch waits for a slower earlier episode), which is what makes the
batches' order deterministic although completion order is not.

Staleness: a trajectory made by version ``v`` has age ``current - v`` when the trainer takes
it. With ``mode="drop"`` one older than ``max_staleness`` versions is dropped (counted in
:attr:`ReplayBuffer.dropped`); with ``mode="downweight"`` it is kept with weight
``decay ** (age - max_staleness)`` (1.0 within the bound).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Literal

from wikigym.integrations.common import IntegrationConfigError
from wikigym.integrations.ray.episodes import Trajectory

StalenessMode = Literal["drop", "downweight"]


@dataclass(frozen=True)
class Batch:
    """What the trainer takes: trajectories in episode order, a weight each.

    Attributes:
        trajectories: Sorted by episode index.
        weights: The staleness weight of each (1.0 unless down-weighted).
        version: The trainer's policy version when it took the batch.
        dropped: Episode indices dropped as stale while this batch was filled.
    """

    trajectories: tuple[Trajectory, ...]
    weights: tuple[float, ...]
    version: int
    dropped: tuple[int, ...] = ()


class ReplayBuffer:
    """Bounded, version-tagged, released in episode order; safe across threads.

    Args:
        capacity: Most trajectories reserved or held at once.
        max_staleness: K, the most versions a trajectory may lag and count in full.
        mode: ``"drop"`` or ``"downweight"`` what is older than K.
        decay: Weight factor per version beyond K (``downweight``), in (0, 1].

    Raises:
        IntegrationConfigError: A bound out of range.
    """

    def __init__(
        self,
        capacity: int,
        max_staleness: int = 1,
        mode: StalenessMode = "drop",
        decay: float = 0.5,
    ) -> None:
        if capacity < 1 or max_staleness < 0 or not 0.0 < decay <= 1.0:
            raise IntegrationConfigError(
                f"expected capacity >= 1, max_staleness >= 0 and 0 < decay <= 1, got "
                f"{capacity}, {max_staleness}, {decay}"
            )
        if mode not in ("drop", "downweight"):
            raise IntegrationConfigError(
                f"staleness mode must be 'drop' or 'downweight', got {mode!r}"
            )
        self.capacity = capacity
        self.max_staleness = max_staleness
        self.mode: StalenessMode = mode
        self.decay = decay
        self.version = 0
        self.dropped: list[int] = []
        self._next_issue = 0
        self._next_release = 0
        self._held: dict[int, Trajectory] = {}
        self._carry: list[Trajectory] = []  # released, not yet returned (a take timed out)
        self._cond = threading.Condition()

    def __len__(self) -> int:
        """Trajectories finished and not taken yet."""
        with self._cond:
            return len(self._held)

    @property
    def reserved(self) -> int:
        """Slots taken: episodes issued and not yet released (running or held)."""
        with self._cond:
            return self._next_issue - self._next_release

    def reserve(self) -> int | None:
        """The index of the next episode to run, or None when the buffer is full."""
        with self._cond:
            if self._next_issue - self._next_release >= self.capacity:
                return None
            index = self._next_issue
            self._next_issue += 1
            return index

    def put(self, trajectory: Trajectory) -> None:
        """Hand in the finished episode of a reserved index.

        Raises:
            IntegrationConfigError: The index was never reserved, or is already in.
        """
        with self._cond:
            i = trajectory.index
            if not self._next_release <= i < self._next_issue or i in self._held:
                raise IntegrationConfigError(
                    f"trajectory {i} was not reserved (reserved: {self._next_release}.."
                    f"{self._next_issue - 1}) or is already in the buffer"
                )
            self._held[i] = trajectory
            self._cond.notify_all()

    def advance(self, version: int | None = None) -> int:
        """Set the trainer's policy version (default: one more); returns it."""
        with self._cond:
            self.version = self.version + 1 if version is None else int(version)
            self._cond.notify_all()
            return self.version

    def weight(self, trajectory: Trajectory) -> float | None:
        """The staleness weight of ``trajectory`` now, or None when it is to be dropped."""
        age = self.version - trajectory.policy_version
        if age <= self.max_staleness:
            return 1.0
        if self.mode == "drop":
            return None
        return float(self.decay ** (age - self.max_staleness))

    def take(self, size: int, timeout_s: float | None = None) -> Batch:
        """The next ``size`` usable trajectories in episode order (waiting for them).

        Trajectories leave the buffer (freeing their slots) as soon as they are next in
        order, and are checked for staleness again before the batch is returned.

        Raises:
            IntegrationConfigError: ``size`` < 1.
            TimeoutError: Fewer than ``size`` arrived within ``timeout_s``; what was taken
                is kept for the next call, in order.
        """
        if size < 1:
            raise IntegrationConfigError(f"batch size must be >= 1, got {size}")
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        dropped: list[int] = []
        with self._cond:
            taken, self._carry = self._carry, []
            while True:
                # The version may have advanced while this call waited.
                fresh = [t for t in taken if self.weight(t) is not None]
                dropped += [t.index for t in taken if self.weight(t) is None]
                taken = fresh
                if len(taken) >= size:
                    break
                trajectory = self._held.pop(self._next_release, None)
                if trajectory is None:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        self._carry = taken
                        self.dropped += dropped
                        raise TimeoutError(
                            f"the buffer had {len(taken)} of {size} trajectories after "
                            f"{timeout_s:g} s (waiting for episode {self._next_release}); "
                            "are the rollout workers running?"
                        )
                    self._cond.wait(left)
                    continue
                self._next_release += 1
                self._cond.notify_all()  # a slot is free: producers may issue again
                taken.append(trajectory)
            self.dropped += dropped
            weights = tuple(float(self.weight(t) or 0.0) for t in taken)
        return Batch(tuple(taken), weights, self.version, tuple(dropped))

    def wait_for_room(self, timeout_s: float) -> bool:
        """Wait until a slot is free (or ``timeout_s``); whether one is."""
        with self._cond:
            return self._cond.wait_for(
                lambda: self._next_issue - self._next_release < self.capacity, timeout_s
            )


__all__ = ["Batch", "ReplayBuffer", "StalenessMode"]
