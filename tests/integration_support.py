"""Helpers of the adapter tests (tests/test_integrations_*.py)."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium as gym
import pytest

from wikigym.tasks.taskset import Task
from wikigym.tools import format_tool_call

REQUIRED = os.environ.get("WIKIGYM_REQUIRE_INTEGRATIONS") == "1"
"""Set by .ci/run in the venv that installs the extras: a missing package fails, not skips."""


def need(module: str) -> ModuleType:
    """Import a framework, or skip (fail where the extras are meant to be installed)."""
    if REQUIRED:
        return __import__(module)
    return pytest.importorskip(module)


def oracle_actions(task: Task) -> list[str]:
    """The task's oracle calls as model text (the Hermes ``<tool_call>`` form)."""
    return [format_tool_call(c.name, c.arguments) for c in task.oracle]


WRONG_ANSWER = format_tool_call("answer", {"text": "certainly not the answer"})


NEVER_ANSWER = format_tool_call("search", {"query": "zzqx nothing at all"})
"""A turn that never answers: repeated, it spends the step budget (a masked episode)."""


def user_world(root: Path, articles: int = 120, tasks: int = 4, seed: int = 7) -> dict[str, str]:
    """A user's own corpus and TaskSet: a generated world (not the embedded default one) and
    its one-hop tasks, as ``corpus``/``tasks`` paths."""
    from wikigym.corpora.default import build_world_snapshot
    from wikigym.corpora.snapshot import Snapshot
    from wikigym.tasks.one_hop import one_hop_tasks

    snap, path = root / "snap", root / "tasks.jsonl"
    if not (snap / "manifest.json").is_file():
        build_world_snapshot(articles, seed, snap, progress=False)
        one_hop_tasks(Snapshot.open(snap), n=tasks, seed=seed).save(path)
    return {"corpus": str(snap), "tasks": str(path)}


def chat_turns(context: str) -> int:
    """How many assistant turns a Qwen-template context already holds (the generation prompt
    at its end opens the next one): what a scripted model reads its turn from."""
    return context.count("<|im_start|>assistant") - int(
        context.rstrip().endswith("<|im_start|>assistant")
    )


def question_of(context: str) -> str:
    """The question of a rendered first observation."""
    return context.split("Question: ", 1)[1].split("<|im_end|>", 1)[0].strip()


def in_process_episode(env_kwargs: dict[str, Any], task_id: str, seed: int, actions: list[str]):
    """The same episode played in process: (chat messages, total reward, info of the last
    step); stops where the env ends it."""
    env = gym.make("WikiSearch-v1", **env_kwargs)
    obs, _ = env.reset(seed=seed, options={"task_id": task_id})
    messages = [{"role": "user", "content": obs}]
    reward, info = 0.0, {}
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        messages.append({"role": "assistant", "content": action})
        if terminated or truncated:
            break
        messages.append({"role": "user", "content": obs})
    env.close()
    return messages, float(reward), info
