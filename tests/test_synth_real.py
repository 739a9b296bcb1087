"""synth on real Wikipedia pages: easy and medium questions from infobox facts, proved."""

from __future__ import annotations

import pytest

from wikigym.corpora import Snapshot
from wikigym.envs.tool_specs import format_tool_call
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.synth import SynthConfig, generate_tasks, verify_taskset


@pytest.fixture(scope="module")
def snap(enwiki_snapshot: Snapshot) -> Snapshot:
    return enwiki_snapshot


@pytest.mark.parametrize("level", ["easy", "medium"])
def test_real_tasks_are_proved(snap: Snapshot, level: str) -> None:
    ts = generate_tasks(snap, SynthConfig(difficulty=level, n=10, seed=0))
    assert len(ts) == 10
    assert all(t.source == "infobox" and t.level == level for t in ts)
    assert verify_taskset(ts, snap) == []
    env = WikiSearchEnv(corpus=snap, tasks=ts, python="off", max_steps=20)
    for t in ts:
        env.reset(options={"task_id": t.task_id})
        reward = 0.0
        for c in t.oracle:
            action = format_tool_call(c.name, c.arguments)
            _, reward, _, _, info = env.step(action)
            assert info["tool_error"] is None
        assert reward == 1.0, t.task_id
