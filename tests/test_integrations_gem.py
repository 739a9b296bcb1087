"""GEM (gem-llm): gem.make / make_vec build wikigym envs (seed= in the constructor), and an
episode runs reset -> tool steps -> reward through GEM's real vector envs."""

from __future__ import annotations

import gymnasium as gym
import pytest
from integration_support import WRONG_ANSWER, need, oracle_actions

gem = need("gem")

import wikigym.integrations.gem as wgem  # noqa: E402
from wikigym.errors import TaskSetError  # noqa: E402


@pytest.fixture(scope="module")
def tasks():
    return gym.make("WikiSearch-v1", python="off").unwrapped.tasks


def test_ids_registered_on_import() -> None:
    from gem.envs.registration import ENV_REGISTRY

    assert {"wikigym:WikiSearch-v1", "wikigym:Calc-v0"} <= set(ENV_REGISTRY)
    wgem.register()  # idempotent


def test_make_with_seed_matches_gymnasium_and_scores(tasks) -> None:
    env = gem.make("wikigym:WikiSearch-v1", seed=4, python="off")
    obs, info = env.reset()  # the constructor's seed
    ref_obs, ref_info = gym.make("WikiSearch-v1", python="off").reset(seed=4)
    assert (obs, info) == (ref_obs, ref_info)
    steps = [env.step(a) for a in oracle_actions(tasks.get(info["task_id"]))]
    assert all(not s[2] for s in steps[:-1]) and "[p" in steps[0][0]
    assert steps[-1][1] == 1.0 and steps[-1][2]
    env.reset(seed=4)
    assert env.step(WRONG_ANSWER)[1:3] == (0.0, True)


@pytest.mark.parametrize("async_mode", [False, True])
def test_make_vec_passes_seeds_and_runs_episodes(async_mode: bool, tasks) -> None:
    ids = ["wikigym:WikiSearch-v1"] * 3
    vec = gem.make_vec(ids, seed=10, async_mode=async_mode, python="off")
    obs, infos = vec.reset()
    expected = [gym.make("WikiSearch-v1", python="off").reset(seed=10 + i) for i in range(3)]
    assert list(zip(obs, infos, strict=True)) == expected
    plans = [oracle_actions(tasks.get(i["task_id"])) for i in infos]
    rewards = [0.0] * 3
    for t in range(max(len(p) for p in plans)):
        actions = [p[t] if t < len(p) else "<search>more</search>" for p in plans]
        _, reward, term, trunc, _ = vec.step(actions)
        for i, p in enumerate(plans):
            if t == len(p) - 1:
                assert term[i] and reward[i] == 1.0
                rewards[i] = float(reward[i])
    assert rewards == [1.0, 1.0, 1.0]


def test_calc_through_gem_and_spawn_same_state() -> None:
    env = gem.make("wikigym:Calc-v0", seed=2, level=1)
    env.reset()
    copy = env.spawn(same_state=True)
    gold = env.unwrapped.env.unwrapped.gold
    assert env.step(f"<answer>{gold}</answer>")[1] == 1.0
    assert copy.step(f"<answer>{gold}</answer>")[1] == 1.0
    fresh = env.spawn()
    assert fresh.reset() == gem.make("wikigym:Calc-v0", seed=2, level=1).reset()


def test_unknown_argument_is_one_clear_error() -> None:
    from wikigym.integrations.common import IntegrationConfigError

    with pytest.raises(IntegrationConfigError, match="takes no argument 'nope'"):
        gem.make("wikigym:Calc-v0", nope=1)


def test_a_gem_user_chooses_the_task(tasks) -> None:
    chosen = tasks[5]
    env = gem.make("wikigym:WikiSearch-v1", seed=1, python="off")
    obs, info = env.reset(seed=3, task_id=chosen.task_id)  # as GEM's MathEnv takes idx=
    ref = gym.make("WikiSearch-v1", python="off").reset(seed=3, options={"task_id": chosen.task_id})
    assert (obs, info) == ref and info["task_id"] == chosen.task_id
    steps = [env.step(a) for a in oracle_actions(chosen)]
    assert steps[-1][1] == 1.0 and steps[-1][2]
    # Per env of a vector (vec_kwargs): a group of envs on one task, autoreset keeps it.
    vec = gem.make_vec(
        ["wikigym:WikiSearch-v1"] * 2,
        vec_kwargs=[{"task_id": chosen.task_id}, {"task_id": tasks[0].task_id}],
        seed=0,
        python="off",
    )
    _, infos = vec.reset()
    assert [i["task_id"] for i in infos] == [chosen.task_id, tasks[0].task_id]
    with pytest.raises(TaskSetError, match="no task 'nope'"):
        env.reset(task_id="nope")


def test_masked_episode_is_flagged_in_gem(tasks) -> None:
    env = gem.make("wikigym:WikiSearch-v1", seed=0, python="off", max_steps=2)
    env.reset()
    env.step("<search>zzqx</search>")
    _, reward, terminated, truncated, info = env.step("<search>zzqx</search>")
    assert (reward, terminated, truncated, info["mask"]) == (0.0, False, True, True)


def test_calc_has_no_task_to_choose() -> None:
    from wikigym.integrations.common import IntegrationConfigError

    with pytest.raises(IntegrationConfigError, match="Calc-v0 has no tasks to choose from"):
        gem.make("wikigym:Calc-v0", task_id="x")
