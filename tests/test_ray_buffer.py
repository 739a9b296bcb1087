"""The replay buffer alone (no Ray): bound, episode-order release, staleness drop/down-weight."""

from __future__ import annotations

import threading

import pytest

from wikigym.integrations.common import IntegrationConfigError
from wikigym.integrations.ray.buffer import ReplayBuffer
from wikigym.integrations.ray.episodes import Trajectory


def traj(index: int, version: int) -> Trajectory:
    return Trajectory(
        index=index,
        task_id=f"t{index}",
        seed=index,
        policy_version=version,
        messages=({"role": "user", "content": "q"},),
        rewards=(1.0,),
        infos=({}, {}),
        terminated=True,
        truncated=False,
    )


def test_capacity_bounds_reserved_and_take_frees_slots() -> None:
    buf = ReplayBuffer(capacity=3)
    assert [buf.reserve() for _ in range(4)] == [0, 1, 2, None]
    for i in (2, 0, 1):  # completion order is not episode order
        buf.put(traj(i, 0))
    assert buf.reserve() is None and len(buf) == 3
    batch = buf.take(2)
    assert [t.index for t in batch.trajectories] == [0, 1]
    assert buf.reserve() == 3 and buf.reserved == 2


def test_release_waits_for_an_earlier_slower_episode() -> None:
    buf = ReplayBuffer(capacity=4)
    for _ in range(3):
        buf.reserve()
    buf.put(traj(1, 0))
    buf.put(traj(2, 0))
    with pytest.raises(TimeoutError, match="waiting for episode 0"):
        buf.take(2, timeout_s=0.05)
    late = threading.Timer(0.05, buf.put, args=(traj(0, 0),))
    late.start()
    batch = buf.take(2, timeout_s=5)
    late.join()
    assert [t.index for t in batch.trajectories] == [0, 1]
    assert [t.index for t in buf.take(1).trajectories] == [2]


def test_a_timed_out_take_keeps_what_it_took_in_order() -> None:
    buf = ReplayBuffer(capacity=2)
    buf.reserve()
    buf.reserve()
    buf.put(traj(0, 0))
    buf.put(traj(1, 0))
    with pytest.raises(TimeoutError):
        buf.take(3, timeout_s=0.05)  # took 0 and 1, freed their slots
    assert buf.reserve() == 2
    buf.put(traj(2, 0))
    assert [t.index for t in buf.take(3).trajectories] == [0, 1, 2]


@pytest.mark.parametrize("k", [0, 1, 2])
def test_drop_trajectories_older_than_k_versions(k: int) -> None:
    buf = ReplayBuffer(capacity=10, max_staleness=k, mode="drop")
    for v in range(4):
        buf.reserve()
        buf.put(traj(v, v))
    buf.advance(3)
    extra = buf.reserve()
    assert extra is not None
    buf.put(traj(extra, 3))
    kept = 1 + k + 1  # versions 3-k..3 of the first four, and the extra one
    batch = buf.take(kept)
    assert [t.policy_version for t in batch.trajectories] == [*range(3 - k, 4), 3]
    assert batch.dropped == tuple(range(0, 3 - k)) and buf.dropped == list(range(0, 3 - k))
    assert batch.weights == (1.0,) * kept and batch.version == 3


def test_downweight_keeps_stale_trajectories_with_decaying_weight() -> None:
    buf = ReplayBuffer(capacity=10, max_staleness=1, mode="downweight", decay=0.5)
    for v in range(4):
        buf.reserve()
        buf.put(traj(v, v))
    buf.advance(4)
    batch = buf.take(4)
    # ages 4, 3, 2, 1 -> beyond K=1 by 3, 2, 1, 0
    assert batch.weights == (0.125, 0.25, 0.5, 1.0) and batch.dropped == ()


def test_version_advancing_while_a_take_waits_drops_what_became_stale() -> None:
    buf = ReplayBuffer(capacity=4, max_staleness=0)
    buf.reserve()
    buf.reserve()
    buf.put(traj(0, 0))

    def later() -> None:
        buf.advance()
        buf.put(traj(1, 1))
        buf.reserve()
        buf.put(traj(2, 1))

    timer = threading.Timer(0.05, later)
    timer.start()
    batch = buf.take(2, timeout_s=5)
    timer.join()
    assert [t.index for t in batch.trajectories] == [1, 2] and batch.dropped == (0,)


def test_bad_bounds_and_foreign_trajectories_are_refused() -> None:
    with pytest.raises(IntegrationConfigError, match="capacity >= 1"):
        ReplayBuffer(capacity=0)
    with pytest.raises(IntegrationConfigError, match="decay"):
        ReplayBuffer(capacity=1, decay=0.0)
    with pytest.raises(IntegrationConfigError, match="'drop' or 'downweight'"):
        ReplayBuffer(capacity=1, mode="oldest")  # type: ignore[arg-type]
    buf = ReplayBuffer(capacity=1)
    with pytest.raises(IntegrationConfigError, match="not reserved"):
        buf.put(traj(0, 0))
    buf.reserve()
    buf.put(traj(0, 0))
    with pytest.raises(IntegrationConfigError, match="already"):
        buf.put(traj(0, 0))
    with pytest.raises(IntegrationConfigError, match="batch size"):
        buf.take(0)
