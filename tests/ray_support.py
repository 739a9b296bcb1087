"""Shared pieces of the Ray tests: a small generated world and scripted policies."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from wikigym.corpora.default import build_world_snapshot
from wikigym.corpora.snapshot import Snapshot
from wikigym.integrations.ray.episodes import Turn
from wikigym.tasks.one_hop import one_hop_tasks
from wikigym.tasks.taskset import TaskSet
from wikigym.tools import format_tool_call

WRONG = format_tool_call("answer", {"text": "certainly not the answer"})


def small_world(root: Path, tasks: int = 12) -> dict[str, str]:
    """A 300-article generated world and ``tasks`` one-hop tasks: the env kwargs of a run."""
    snap = root / "snap"
    build_world_snapshot(300, 0, snap, progress=False)
    taskset = one_hop_tasks(Snapshot.open(snap), n=tasks, seed=0)
    path = taskset.save(root / "tasks.jsonl")
    return {"corpus": str(snap), "tasks": str(path), "python": "off"}


class OraclePolicy:
    """A picklable callable policy: the task's oracle calls (by the task id in ``info``);
    from ``good_from`` on (policy version), else a wrong answer first, so a trainer that
    advances the version sees the reward rise."""

    def __init__(self, tasks_file: str, good_from: int = 0) -> None:
        taskset = TaskSet.load(tasks_file)
        self.plans = {
            t.task_id: [format_tool_call(c.name, dict(c.arguments)) for c in t.oracle]
            for t in taskset
        }
        self.good_from = good_from
        self.calls = 0  # state that must not leak from one episode into the next
        self.detoured = False

    def __call__(self, turn: Turn) -> str:
        self.calls += 1
        if turn.policy_version < self.good_from:
            return WRONG
        if self.calls == 1:  # a fresh copy takes one detour first
            self.detoured = True
            return format_tool_call("search", {"query": "something else entirely"})
        plan = self.plans[turn.info["task_id"]]
        # A copy that ran an episode before (state leaking across episodes) miscounts here.
        index = sum(m["role"] == "assistant" for m in turn.messages) - int(self.detoured)
        return plan[index] if 0 <= index < len(plan) else WRONG


class DiesOnce:
    """A callable policy that kills its own process (a Ray actor's) once: at the first turn
    of task ``task_id``, the first time any process gets there (an exclusive marker file says
    so); otherwise it is ``inner``, slowed by ``delay_s`` a turn."""

    def __init__(self, inner: Any, task_id: str, marker: str, delay_s: float = 0.0) -> None:
        self.inner = inner
        self.task_id = task_id
        self.marker = marker
        self.delay_s = delay_s

    def __call__(self, turn: Turn) -> str:
        if self.delay_s:
            time.sleep(self.delay_s)
        if len(turn.messages) == 1 and turn.info.get("task_id") == self.task_id:
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return self.inner(turn)
            os._exit(1)  # the actor's process dies mid-run
        return self.inner(turn)
