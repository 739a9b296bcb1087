"""The Ray rollout pool and the async rollout service, on a local Ray (2 CPUs).

Results of the pool equal a serial run's (content and order); the snapshot is checked by id
on every actor; the service feeds a trainer loop that takes batches and advances the policy
version, with stale trajectories dropped."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest
import ray_support
from integration_support import need
from openai_stub import StubServer
from ray_support import WRONG, DiesOnce, OraclePolicy, small_world

from wikigym.errors import RolloutError, SnapshotError, SnapshotMismatchError
from wikigym.integrations.common import IntegrationConfigError
from wikigym.tasks.taskset import TaskSet

ray = need("ray")

from wikigym.integrations.ray import (  # noqa: E402
    OpenAIPolicy,
    ReplayBuffer,
    RolloutPool,
    RolloutService,
    run_serial,
    trl_rows,
)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return small_world(tmp_path_factory.mktemp("rayworld"))


@pytest.fixture(scope="module")
def local_ray():
    # The policies live in this test folder, which Ray's workers cannot import: ship them by
    # value (what a user does for a policy class defined in a script or notebook).
    ray.cloudpickle.register_pickle_by_value(ray_support)
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def pool(world: dict[str, str], local_ray) -> RolloutPool:
    with RolloutPool(2, **world) as p:
        yield p


def test_pool_results_equal_a_serial_run_in_episode_order(world, pool: RolloutPool) -> None:
    policy = OraclePolicy(world["tasks"])
    out = pool.run(policy, episodes=10, seed=3)
    serial = run_serial(policy, episodes=10, seed=3, **world)
    assert out == serial
    assert [t.index for t in out] == list(range(10)) and [t.seed for t in out] == list(range(3, 13))
    assert {t.worker for t in out} == {0, 1}  # both actors ran episodes
    assert all(t.reward == 1.0 and t.terminated for t in out)  # detour, then the oracle
    assert out[0].messages[1]["content"].startswith("<tool_call>")
    ids = {w["snapshot_id"] for w in pool.workers}
    assert ids == {pool.snapshot_id} and out[0].snapshot_id == pool.snapshot_id
    assert len({w["pid"] for w in pool.workers}) == 2


def test_pool_runs_named_tasks_cycling_and_a_lambda(world, pool: RolloutPool) -> None:
    tasks = TaskSet.load(world["tasks"])
    ids = [tasks[3].task_id, tasks[0].task_id]
    out = pool.run(lambda turn: WRONG, episodes=5, task_ids=ids)
    assert [t.task_id for t in out] == [ids[0], ids[1], ids[0], ids[1], ids[0]]
    assert out == run_serial(lambda turn: WRONG, episodes=5, task_ids=ids, **world)
    assert all(t.reward == 0.0 and len(t.rewards) == 1 for t in out)


def test_pool_drives_an_openai_compatible_endpoint(world, pool: RolloutPool) -> None:
    tasks = TaskSet.load(world["tasks"])
    plans = OraclePolicy(world["tasks"]).plans

    def script(messages: list[dict]) -> str:
        task = next(t for t in tasks if t.question in messages[0]["content"])
        step = sum(m["role"] == "assistant" for m in messages)
        return plans[task.task_id][step]

    server = StubServer(script)
    try:
        policy = OpenAIPolicy(server.base_url, model="stub", timeout_s=30)
        out = pool.run(policy, episodes=4)
        assert out == run_serial(policy, episodes=4, **world)
    finally:
        server.close()
    assert [t.reward for t in out] == [1.0] * 4
    assert len(server.requests) == 2 * sum(len(t.rewards) for t in out)


def test_calc_env_through_the_pool(local_ray) -> None:
    with RolloutPool(1, "Calc-v0", level=1) as calc:
        out = calc.run(lambda turn: "<answer>0</answer>", episodes=3, seed=5)
        assert calc.snapshot_id is None
    assert out == run_serial(lambda turn: "<answer>0</answer>", "Calc-v0", 3, seed=5, level=1)
    assert [t.seed for t in out] == [5, 6, 7] and all(t.task_id is None for t in out)


def test_an_actor_on_another_snapshot_is_refused(world, local_ray, tmp_path: Path) -> None:
    with pytest.raises(SnapshotMismatchError, match=r"expected snapshot 0{16}.*docs/ray.md"):
        RolloutPool(1, snapshot_id="0" * 64, **world)
    copy = tmp_path / "missing"
    # A node with no snapshot at the path: the driver passes the id it expects, the actor
    # names the path it could not open.
    with pytest.raises(SnapshotError, match=str(copy)):
        RolloutPool(1, snapshot_id="0" * 64, **{**world, "corpus": str(copy)})


def test_too_few_cpus_is_a_clear_error_not_a_hang(world, pool: RolloutPool) -> None:
    with pytest.raises(IntegrationConfigError, match="did not start within 3 s"):
        RolloutPool(1, num_cpus=3, start_timeout_s=3, **world)
    # More than the cluster has in all: refused at once, before any waiting.
    with pytest.raises(IntegrationConfigError, match="need 8 CPUs; the Ray cluster has 4 in all"):
        RolloutPool(4, num_cpus=2, start_timeout_s=3600, **world)


def test_pool_survives_an_actor_killed_mid_run(world, local_ray, tmp_path: Path) -> None:
    tasks = TaskSet.load(world["tasks"])
    oracle = OraclePolicy(world["tasks"])
    serial = run_serial(oracle, episodes=24, seed=1, **world)
    # The actor running task 5's first episode dies there (its process exits).
    dies = DiesOnce(oracle, tasks[5].task_id, str(tmp_path / "died"), delay_s=0.01)
    with RolloutPool(2, chunk=3, **world) as p:
        first = {w["pid"] for w in p.workers}
        out = p.run(dies, episodes=24, seed=1)
        assert (tmp_path / "died").exists() and p.restarts == 1
        assert len({w["pid"] for w in p.workers} - first) == 1  # one new actor process
        assert out == serial  # every episode, each equal to the serial run's
        # An external kill (a lost node) between runs: the next run replaces the actor.
        ray.kill(p.actors[0], no_restart=True)
        assert p.run(oracle, episodes=6, seed=1) == serial[:6] and p.restarts == 2


def test_pool_gives_up_after_max_restarts_keeping_finished_episodes(world, local_ray) -> None:
    def always_dies(turn):
        if turn.info["task_id"] == first_task and len(turn.messages) == 1:
            import os

            os._exit(1)
        return WRONG

    first_task = TaskSet.load(world["tasks"])[4].task_id
    pool = RolloutPool(1, chunk=2, max_restarts=1, **world)
    with pool, pytest.raises(RolloutError, match="died 2 times") as info:
        pool.run(always_dies, episodes=8)
    assert sorted(info.value.trajectories) == [0, 1, 2, 3]  # the chunks before task 4


def test_service_feeds_a_trainer_loop_with_staleness_bound(world, pool: RolloutPool) -> None:
    """A minimal trainer: take a batch, learn (here: the version-aware scripted policy gets
    right from version 2), advance the version; stale trajectories (K=0) never reach it."""
    buffer = ReplayBuffer(capacity=6, max_staleness=0, mode="drop")
    policy = OraclePolicy(world["tasks"], good_from=2)
    seen: list[tuple[int, list[int], list[float]]] = []
    with RolloutService(pool, policy, buffer, seed=0) as service:
        for batch in service.batches(size=4, count=4, timeout_s=120):
            assert all(t.policy_version == batch.version for t in batch.trajectories)
            assert [t.index for t in batch.trajectories] == sorted(
                t.index for t in batch.trajectories
            )
            rows = trl_rows(batch)
            seen.append((batch.version, [r["index"] for r in rows], [r["reward"] for r in rows]))
            assert all(r["weight"] == 1.0 and r["prompt"][0]["role"] == "user" for r in rows)
            # The rows are a conversational prompt/completion dataset as TRL reads one.
            dataset = datasets.Dataset.from_list(rows)
            assert dataset.column_names[:3] == ["prompt", "completion", "reward"]
            assert dataset[0]["completion"][0]["role"] == "assistant"
            service.update_policy()
        assert buffer.reserved <= buffer.capacity
    assert [v for v, _, _ in seen] == [0, 1, 2, 3]
    assert [sum(r) for _, _, r in seen] == [0.0, 0.0, 4.0, 4.0]  # the trainer "learned"
    indices = [i for _, ix, _ in seen for i in ix]
    assert indices == sorted(indices) and len(set(indices)) == 16
    # every episode issued is either in a batch, dropped as stale, or still unreleased
    assert not set(indices) & set(buffer.dropped)
    for index in indices:
        assert service.episode(index).seed == index


def test_service_batches_are_deterministic_for_a_version_blind_policy(
    world, pool: RolloutPool
) -> None:
    def run() -> list[list[tuple]]:
        buffer = ReplayBuffer(capacity=5, max_staleness=10)
        with RolloutService(pool, OraclePolicy(world["tasks"]), buffer, seed=7) as service:
            out = []
            for batch in service.batches(size=3, count=3, timeout_s=120):
                out.append(
                    [(t.index, t.task_id, t.messages, t.rewards) for t in batch.trajectories]
                )
                service.update_policy()
        return out

    first, second = run(), run()
    assert first == second and [b[0][0] for b in first] == [0, 3, 6]


def test_service_hands_a_worker_error_to_the_trainer(world, pool: RolloutPool) -> None:
    def broken(turn):
        return 42  # not text: a policy bug

    with (
        RolloutService(pool, broken, ReplayBuffer(capacity=2)) as service,
        pytest.raises(Exception, match="expected str"),
    ):
        service.take(1, timeout_s=60)


def test_service_survives_an_actor_killed_mid_run(world, local_ray, tmp_path: Path) -> None:
    tasks = TaskSet.load(world["tasks"])
    oracle = OraclePolicy(world["tasks"])
    dies = DiesOnce(oracle, tasks[2].task_id, str(tmp_path / "died"))
    with RolloutPool(2, **world) as p:
        with RolloutService(p, dies, ReplayBuffer(capacity=8), seed=0) as service:
            got = [t for _ in range(2) for t in service.take(6, timeout_s=120).trajectories]
        assert (tmp_path / "died").exists() and p.restarts == 1
    assert got == run_serial(oracle, episodes=12, seed=0, **world)
