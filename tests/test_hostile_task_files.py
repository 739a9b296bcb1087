"""Hostile task files (issue 33): task ids follow one rule checked on load, trajectory file
names derive from ids safely, and JSON nested past the parser's depth is one line."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest
from pydantic import ValidationError

from wikigym.cli import main as cli
from wikigym.corpora import Snapshot
from wikigym.envs.replay import RecordTrajectory, file_stem, replay
from wikigym.errors import TaskSetError
from wikigym.tasks.one_hop import one_hop_tasks
from wikigym.tasks.taskset import MAX_TASK_ID_CHARS, Task, TaskSet

BAD_IDS = {
    "nul": "a\x00b",
    "long": "x" * 5000,
    "one-past-the-limit": "x" * (MAX_TASK_ID_CHARS + 1),
    "newline": "a\nb",
    "tab": "a\tb",
    "line-separator": "a\u2028b",
    "right-to-left-override": "a\u202eb",
    "surrogate": "a\udcffb",
    "leading-space": " a",
    "empty": "",
}
GOOD_IDS = ["nq-0123abcd", "2hop__123_456", "-1234567890", "天安门-1", "a b", "x" * 200, "../x"]


def one_line_failure(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert cli(argv) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("task_id", BAD_IDS.values(), ids=BAD_IDS.keys())
def test_a_bad_task_id_is_refused_on_load(
    task_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValidationError, match="task_id"):
        Task(task_id=task_id, question="q?", answer="a")
    good = Task(task_id="ok", question="q?", answer="a").model_dump(mode="json")
    path = tmp_path / "tasks.jsonl"
    line = json.dumps({**good, "task_id": task_id}, ensure_ascii=True)
    path.write_text(json.dumps(good) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(TaskSetError, match=r"tasks.jsonl:2: invalid task \((task_id|the line)"):
        TaskSet.load(path)
    # eval refuses it before any episode, in one line, leaving no report behind
    report = tmp_path / "report"
    argv = ["eval", "--agent", "oracle", "--tasks", str(path), "--report", str(report)]
    assert "task_id" in one_line_failure([*argv, "--quiet"], capsys)
    assert not report.exists()
    # and so does every importer, naming the row
    source = tmp_path / "source.jsonl"
    source.write_text(json.dumps({"id": task_id, "question": "q?", "answer": "a"}) + "\n")
    out = str(tmp_path / "out.jsonl")
    if task_id and task_id == task_id.strip():  # importers strip the text around fields
        assert "line 1 in source.jsonl: field 'id'" in one_line_failure(
            ["tasks", "import", "jsonl", str(source), "--out", out], capsys
        )
        hotpot = ["tasks", "import", "hotpotqa", str(source), "--out", out, "--allow-unresolved"]
        assert "field 'id'" in one_line_failure(hotpot, capsys)


@pytest.mark.parametrize("task_id", GOOD_IDS)
def test_good_task_ids_load(task_id: str) -> None:
    assert Task(task_id=task_id, question="q?", answer="a").task_id == task_id


def test_file_names_derive_from_ids_safely() -> None:
    ids = [*GOOD_IDS, "a/b", "a_b", "..", ".hidden", "é" * 200, "a\\b", "CON", "x" * 199 + "y"]
    stems = [file_stem(i) for i in ids]
    assert len(set(stems)) == len(ids)  # distinct ids, distinct names
    for stem in stems:
        assert stem.isascii() and 0 < len(stem) <= 77 and "/" not in stem and "\\" not in stem
        assert not stem.startswith(".")
    assert file_stem("nq-0123abcd") == "nq-0123abcd"  # a plain id is its own name


def test_an_episode_of_any_valid_id_is_recorded_and_replays(
    enwiki_snapshot: Snapshot, tmp_path: Path
) -> None:
    base = one_hop_tasks(enwiki_snapshot, n=1, seed=0)[0]
    hostile = "../../" + "é/" * 96  # 198 characters, 390 bytes in UTF-8
    task = base.model_copy(update={"task_id": hostile})
    tasks = TaskSet([task]).save(tmp_path / "tasks.jsonl")
    folder = tmp_path / "trajectories"
    env = RecordTrajectory(
        gym.make("WikiSearch-v1", corpus=str(enwiki_snapshot.path), tasks=str(tasks)), folder
    )
    env.reset(seed=0, options={"task_id": hostile})
    for call in task.oracle:
        *_, terminated, truncated, _ = env.step(
            f"<tool_call>{json.dumps({'name': call.name, 'arguments': call.arguments})}</tool_call>"
        )
    assert terminated or truncated
    assert env.last_path is not None and env.last_path.parent == folder
    assert [p.name for p in folder.iterdir()] == [env.last_path.name]
    assert replay(env.last_path)[1] is None


@pytest.mark.parametrize("depth", [985, 200_000])
@pytest.mark.parametrize("layout", ["jsonl", "array"])
@pytest.mark.parametrize("kind", ["hotpotqa", "jsonl", "nq-open"])
def test_deeply_nested_json_is_one_line(
    depth: int, layout: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = '{"id": "a", "question": ' + "[" * depth + "]" * depth + ', "answer": "x"}'
    path = tmp_path / f"deep.{'jsonl' if layout == 'jsonl' else 'json'}"
    path.write_text(row + "\n" if layout == "jsonl" else f"[{row}]\n", encoding="utf-8")
    out = str(tmp_path / "out.jsonl")
    err = one_line_failure(["tasks", "import", kind, str(path), "--out", out], capsys)
    assert "nested too deeply" in err or "must be a non-empty string" in err
    assert not Path(out).exists()
