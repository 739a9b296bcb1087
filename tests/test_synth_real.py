"""synth on real Wikipedia pages: easy and medium questions from infobox facts, proved."""

from __future__ import annotations

from pathlib import Path

import pytest

from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.synth import SynthConfig, generate_tasks, verify_taskset


@pytest.fixture(scope="module")
def snap(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    out = tmp_path_factory.mktemp("synth-real") / "snap"
    src = open_build_source(shared_data / "wiki/enwiki-excerpt-206pages.xml.bz2")
    build_snapshot([src], out, BuildConfig(), progress=False)
    return Snapshot.open(out)


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
            import json

            action = (
                f"<tool_call>{json.dumps({'name': c.name, 'arguments': c.arguments})}</tool_call>"
            )
            _, reward, _, _, info = env.step(action)
            assert info["tool_error"] is None
        assert reward == 1.0, t.task_id
