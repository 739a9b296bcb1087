"""Envs and snapshots pickle (pickle and cloudpickle), by reference for the snapshot, and an
unpickled env, here or in a spawned process, replays the original's episodes exactly."""

from __future__ import annotations

import gc
import multiprocessing as mp
import pickle
import shutil
from pathlib import Path
from typing import Any

import cloudpickle
import gymnasium as gym
import pytest

import wikigym  # noqa: F401  (registers the env ids)
from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
from wikigym.errors import SnapshotError, SnapshotMismatchError
from wikigym.tools import format_tool_call

PICKLERS = [pytest.param(pickle, id="pickle"), pytest.param(cloudpickle, id="cloudpickle")]


def episode(env: gym.Env, seed: int, n_wrong: int = 0) -> list[Any]:
    """Reset with ``seed``, run ``n_wrong`` useless searches, then the task's oracle calls;
    every observation, reward, flag and info, in order."""
    obs, info = env.reset(seed=seed)
    out: list[Any] = [obs, info]
    task = env.unwrapped.tasks.get(info["task_id"])
    actions = ["<search>zzqx nothing</search>"] * n_wrong
    actions += [format_tool_call(c.name, c.arguments) for c in task.oracle]
    for action in actions:
        step = env.step(action)
        out.append(step)
        if step[2] or step[3]:
            break
    return out


def continue_episode(env: gym.Env, actions: list[str]) -> list[Any]:
    return [env.step(a) for a in actions]


def spawned_episodes(payload: bytes, seeds: list[int], queue: Any) -> None:
    """Runs in a spawned process: unpickle the env, play the episodes, send them back."""
    env = pickle.loads(payload)
    queue.put([episode(env, s, n_wrong=s % 3) for s in seeds])


@pytest.fixture(scope="module")
def world_env() -> gym.Env:
    return gym.make("WikiSearch-v1")  # default kwargs: python sandbox included


@pytest.mark.parametrize("mod", PICKLERS)
def test_snapshot_pickles_by_path_and_id(mod: Any, world_env: gym.Env) -> None:
    snap = world_env.unwrapped.snapshot
    data = mod.dumps(snap)
    assert len(data) < 1000  # a reference, not the tables
    assert snap.snapshot_id.encode() in data
    assert str(Path(snap.path).resolve()).encode() in data
    assert pickle.loads(data) is snap  # shared within the process


@pytest.mark.parametrize("mod", PICKLERS)
def test_unpickled_env_plays_the_same_episodes(mod: Any, world_env: gym.Env) -> None:
    clone = pickle.loads(mod.dumps(world_env))
    assert clone is not world_env and clone.unwrapped.snapshot is world_env.unwrapped.snapshot
    assert clone.unwrapped.tasks.taskset_id == world_env.unwrapped.tasks.taskset_id
    for seed in (0, 1, 7):
        a = episode(world_env, seed, n_wrong=seed % 2)
        b = episode(clone, seed, n_wrong=seed % 2)
        assert a == b
        assert a[-1][1] == 1.0 and a[-1][2]  # the oracle's answer scores 1


def test_mid_episode_pickle_keeps_the_episode(world_env: gym.Env) -> None:
    obs, info = world_env.reset(seed=3)
    task = world_env.unwrapped.tasks.get(info["task_id"])
    calls = [format_tool_call(c.name, c.arguments) for c in task.oracle]
    world_env.step("<search>zzqx nothing</search>")
    world_env.step(calls[0])
    clone = pickle.loads(cloudpickle.dumps(world_env))
    rest = calls[1:]
    assert continue_episode(clone, rest) == continue_episode(world_env, rest)
    # A wrong answer scores 0 the same way in both.
    for env in (world_env, clone):
        env.reset(seed=3)
    wrong = format_tool_call("answer", {"text": "certainly not this"})
    assert clone.step(wrong) == world_env.step(wrong)


def test_calc_env_pickles() -> None:
    env = gym.make("Calc-v0", level=3)
    env.reset(seed=5)
    clone = pickle.loads(cloudpickle.dumps(env))
    for e in (env, clone):
        e.reset(seed=9)
    assert clone.step("<answer>12</answer>") == env.step("<answer>12</answer>")


def test_env_plays_the_same_in_a_spawned_process(world_env: gym.Env) -> None:
    seeds = [0, 4, 5]
    expected = [episode(world_env, s, n_wrong=s % 3) for s in seeds]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(
        target=spawned_episodes, args=(pickle.dumps(world_env), seeds, queue), daemon=True
    )
    proc.start()
    try:
        got = queue.get(timeout=240)
    finally:
        proc.join(timeout=60)
    assert proc.exitcode == 0
    assert got == expected


@pytest.fixture(scope="module")
def two_tiny_snapshots(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("tiny")
    out = []
    for name in ("enwiki-3pages-schema09.xml.bz2", "enwiki-table-markup-nositeinfo.xml.bz2"):
        path = root / name.split(".")[0]
        build_snapshot(
            [open_build_source(shared_data / "wiki" / name)], path, BuildConfig(), progress=False
        )
        out.append(path)
    return out


def test_unpickling_another_snapshot_is_a_typed_error(
    two_tiny_snapshots: list[Path], tmp_path: Path
) -> None:
    first, second = two_tiny_snapshots
    where = tmp_path / "snap"
    shutil.copytree(first, where)
    snap = Snapshot.open(where)
    data = pickle.dumps(snap)
    snap.close()
    del snap
    gc.collect()  # nothing of it stays open in this process
    shutil.rmtree(where)
    shutil.copytree(second, where)
    with pytest.raises(SnapshotMismatchError, match="copy the same snapshot"):
        pickle.loads(data)
    shutil.rmtree(where)
    with pytest.raises(SnapshotError, match="does not exist"):
        pickle.loads(data)
    shutil.copytree(first, where)
    assert pickle.loads(data).snapshot_id == Snapshot.open(first).snapshot_id
