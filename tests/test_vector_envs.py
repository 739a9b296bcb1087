"""Sync and async vector envs of both ids with default kwargs, autoreset included, give
what the same single envs give; UnicodeText carries any text through shared memory."""

from __future__ import annotations

import multiprocessing as mp
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.spaces.utils import flatdim, flatten, flatten_space, unflatten
from gymnasium.vector.utils import create_shared_memory
from gymnasium.vector.utils.shared_memory import read_from_shared_memory, write_to_shared_memory
from hypothesis import given, settings
from hypothesis import strategies as st

import wikigym  # noqa: F401  (registers the env ids)
from wikigym.envs.spaces import PAD, UnicodeText
from wikigym.tasks.taskset import TaskSet
from wikigym.tools import format_tool_call

N_ENVS = 4
N_STEPS = 16  # every env ends an episode (answer or budget) and autoresets at least once
SEED = 21


class Script:
    """A scripted policy for one env: one useless search, then the task's oracle calls."""

    def __init__(self, tasks: TaskSet) -> None:
        self.tasks = tasks
        self.queue: list[str] = []

    def start(self, task_id: str) -> None:
        task = self.tasks.get(task_id)
        self.queue = ["<search>zzqx nothing</search>"]
        self.queue += [format_tool_call(c.name, c.arguments) for c in task.oracle]

    def next(self) -> str:
        return self.queue.pop(0) if self.queue else "<search>more</search>"


def single_runs(env_id: str, tasks: TaskSet | None) -> list[list[tuple[Any, ...]]]:
    """Each env alone, reset with SEED + i and autoreset as the vector env's NEXT_STEP mode."""
    runs = []
    for i in range(N_ENVS):
        env = gym.make(env_id)
        obs, info = env.reset(seed=SEED + i)
        script = Script(tasks) if tasks is not None else None
        if script is not None:
            script.start(info["task_id"])
        rows: list[tuple[Any, ...]] = [(obs, 0.0, False, False, info["task_id"])]
        done = False
        for _ in range(N_STEPS):
            if done:
                obs, info = env.reset()
                reward, term, trunc = 0.0, False, False
                if script is not None:
                    script.start(info["task_id"])
            else:
                action = script.next() if script is not None else "<answer>7</answer>"
                obs, reward, term, trunc, info = env.step(action)
            done = term or trunc
            rows.append((obs, float(reward), bool(term), bool(trunc), info["task_id"]))
        runs.append(rows)
        env.close()
    return runs


def vector_runs(env_id: str, mode: str, tasks: TaskSet | None) -> list[list[tuple[Any, ...]]]:
    envs = gym.make_vec(env_id, num_envs=N_ENVS, vectorization_mode=mode)
    scripts = [Script(tasks) for _ in range(N_ENVS)] if tasks is not None else None
    obs, info = envs.reset(seed=SEED)
    assert isinstance(obs, tuple) and all(isinstance(o, str) for o in obs)
    runs: list[list[tuple[Any, ...]]] = [
        [(obs[i], 0.0, False, False, info["task_id"][i])] for i in range(N_ENVS)
    ]
    if scripts is not None:
        for i, s in enumerate(scripts):
            s.start(info["task_id"][i])
    try:
        for _ in range(N_STEPS):
            if scripts is not None:
                actions = tuple(s.next() for s in scripts)
            else:
                actions = ("<answer>7</answer>",) * N_ENVS
            obs, reward, term, trunc, info = envs.step(actions)
            for i in range(N_ENVS):
                runs[i].append(
                    (obs[i], float(reward[i]), bool(term[i]), bool(trunc[i]), info["task_id"][i])
                )
                if scripts is not None and info["step"][i] == 0:  # autoreset: a new task
                    scripts[i].start(info["task_id"][i])
    finally:
        envs.close()
    return runs


@pytest.fixture(scope="module")
def default_tasks() -> TaskSet:
    env = gym.make("WikiSearch-v1")
    return env.unwrapped.tasks


@pytest.fixture(scope="module")
def single_wiki(default_tasks: TaskSet) -> list[list[tuple[Any, ...]]]:
    return single_runs("WikiSearch-v1", default_tasks)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_wiki_search_vector_env_matches_single_envs(
    mode: str, default_tasks: TaskSet, single_wiki: list[list[tuple[Any, ...]]]
) -> None:
    got = vector_runs("WikiSearch-v1", mode, default_tasks)
    assert got == single_wiki
    flat = [row for run in got for row in run]
    assert any("\n" in obs for obs, *_ in flat)  # what Text's charset could not carry
    assert any(r == 1.0 for _, r, *_ in flat)  # oracle answers scored
    assert sum(1 for run in got for _, _, term, trunc, _ in run if term or trunc) >= N_ENVS
    assert len({run[0][4] for run in got}) > 1  # the envs got different tasks


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_calc_vector_env_matches_single_envs(mode: str) -> None:
    assert vector_runs("Calc-v0", mode, None) == single_runs("Calc-v0", None)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40))
def test_unicode_text_flattens_any_string(text: str) -> None:
    space = UnicodeText(40)
    flat = flatten(space, text)
    assert flat.shape == (flatdim(space),) and flatten_space(space).contains(flat)
    assert unflatten(space, flat) == text


def test_unicode_text_through_shared_memory_is_a_live_view() -> None:
    space = UnicodeText(12)
    memory = create_shared_memory(space, n=3, ctx=mp.get_context("spawn"))
    view = read_from_shared_memory(space, memory, n=3)  # read once, as AsyncVectorEnv does
    values = ["line\none", "\x00é😀\t", ""]
    for i, v in enumerate(values):
        write_to_shared_memory(space, i, v, memory)
    assert tuple(view) == tuple(values)
    write_to_shared_memory(space, 2, "later", memory)
    assert view[2] == "later"
    import copy

    frozen = copy.deepcopy(view)
    assert isinstance(frozen, tuple) and frozen == ("line\none", "\x00é😀\t", "later")
    assert int(np.frombuffer(memory.get_obj(), dtype=np.int32)[-1]) == PAD
    with pytest.raises(ValueError, match="exceeds"):
        flatten(space, "x" * 13)
