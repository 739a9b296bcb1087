"""Outputs are whole or absent: ``--overwrite`` is needed to replace one, and a run that fails
midway leaves nothing (no output, no hidden partial sibling)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wikigym.cli import main as wikigym_main
from wikigym.corpora import BuildConfig, build_snapshot, open_build_source
from wikigym.errors import OutputExistsError
from wikigym.outputs import PARTIAL_PREFIX, atomic_output, refuse_existing, remove_stale_partials
from wikigym.synth.cli import main as synth_main
from wikigym.tasks.taskset import Task, TaskSet

HAS_TRL = importlib.util.find_spec("trl") is not None


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(PARTIAL_PREFIX))


@pytest.fixture(scope="module")
def snap(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("outputs") / "snap"
    src = open_build_source(shared_data / "wiki/enwiki-3pages-schema09.xml.bz2")
    build_snapshot([src], out, BuildConfig(), progress=False)
    return out


def test_atomic_dir_success_failure_and_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with atomic_output(out) as tmp:
        assert tmp.parent == out.parent and tmp.is_dir() and not out.exists()
        (tmp / "a.txt").write_text("1")
    assert (out / "a.txt").read_text() == "1" and leftovers(tmp_path) == []
    with pytest.raises(OutputExistsError, match="exists; pass --overwrite"), atomic_output(out):
        pytest.fail("the body must not run")  # refused before any work
    with pytest.raises(RuntimeError), atomic_output(out, overwrite=True) as tmp:
        (tmp / "b.txt").write_text("2")
        raise RuntimeError("midway")
    assert sorted(p.name for p in out.iterdir()) == ["a.txt"]  # the old output is untouched
    assert leftovers(tmp_path) == []
    with atomic_output(out, overwrite=True) as tmp:
        (tmp / "b.txt").write_text("2")
    assert sorted(p.name for p in out.iterdir()) == ["b.txt"] and leftovers(tmp_path) == []


def test_atomic_file_keeps_suffix_and_empty_dir_is_free(tmp_path: Path) -> None:
    with atomic_output(tmp_path / "t.jsonl", kind="file") as tmp:
        assert tmp.suffix == ".jsonl" and not tmp.exists()
        tmp.write_text("x\n")
    assert (tmp_path / "t.jsonl").read_text() == "x\n"
    with pytest.raises(KeyboardInterrupt), atomic_output(tmp_path / "u.jsonl", kind="file") as t:
        t.write_text("half")
        raise KeyboardInterrupt
    assert not (tmp_path / "u.jsonl").exists() and leftovers(tmp_path) == []
    (tmp_path / "empty").mkdir()
    refuse_existing(tmp_path / "empty", overwrite=False)  # nothing to lose
    with atomic_output(tmp_path / "empty") as tmp:
        (tmp / "f").write_text("1")
    assert (tmp_path / "empty" / "f").is_file()


def test_stale_partials_of_dead_processes_are_removed(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    stale = tmp_path / f"{PARTIAL_PREFIX}{int(dead.stdout)}.run"
    stale.mkdir()
    (stale / "half").write_text("x")
    alive = tmp_path / f"{PARTIAL_PREFIX}{os.getppid()}.run"  # a running process's work
    alive.mkdir()
    other = tmp_path / f"{PARTIAL_PREFIX}{int(dead.stdout)}.other"
    other.mkdir()
    assert remove_stale_partials(tmp_path / "run") == [stale]
    assert not stale.exists() and alive.is_dir() and other.is_dir()


def test_tasks_import_and_synth_generate_refuse_then_overwrite(snap: Path, tmp_path: Path) -> None:
    src = tmp_path / "q.jsonl"
    src.write_text('{"question": "What is X?", "answer": "Y"}\n')
    out = tmp_path / "t.jsonl"
    out.write_text("old\n")
    assert wikigym_main(["tasks", "import", "jsonl", str(src), "--out", str(out)]) == 1
    assert out.read_text() == "old\n"
    argv = ["tasks", "import", "jsonl", str(src), "--out", str(out), "--overwrite"]
    assert wikigym_main(argv) == 0
    assert len(TaskSet.load(out)) == 1 and leftovers(tmp_path) == []
    assert synth_main(["generate", "--corpus", str(snap), "--n", "1", "--out", str(out)]) == 1
    assert len(TaskSet.load(out)) == 1


def test_synth_generate_failing_midway_leaves_no_file(snap: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    # A 2-article snapshot has no medium question: generation fails after it started.
    argv = ["generate", "--corpus", str(snap), "--n", "2", "--difficulty", "medium"]
    assert synth_main([*argv, "--out", str(out)]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_eval_refuses_overwrites_and_fails_without_leftovers(
    snap: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = TaskSet([Task(task_id="t0", question="What is X?", answer="Y")])
    tasks_file = tasks.save(tmp_path / "t.jsonl")
    report = tmp_path / "rep"
    base = ["eval", "--tasks", str(tasks_file), "--corpus", str(snap), "--quiet"]
    assert wikigym_main([*base, "--agent", "heuristic", "--report", str(report)]) == 0
    assert (report / "summary.json").is_file()
    (report / "mine.txt").write_text("x")
    assert wikigym_main([*base, "--agent", "heuristic", "--report", str(report)]) == 1
    assert "exists; pass --overwrite" in capsys.readouterr().err
    assert (report / "mine.txt").is_file()
    argv = [*base, "--agent", "heuristic", "--report", str(report), "--overwrite"]
    assert wikigym_main(argv) == 0
    assert not (report / "mine.txt").exists() and (report / "summary.json").is_file()
    # An agent that fails during the first episode (its server is not there): no report.
    failed = tmp_path / "failed"
    argv = [
        *base,
        "--agent",
        "openai:http://127.0.0.1:9",
        "--timeout",
        "1",
        "--report",
        str(failed),
    ]
    assert wikigym_main(argv) == 1
    assert "cannot reach" in capsys.readouterr().err
    assert not failed.exists() and leftovers(tmp_path) == []


def test_export_sft_failing_midway_leaves_nothing(snap: Path, tmp_path: Path) -> None:
    pytest.importorskip("trl")
    tasks_file = TaskSet([Task(task_id="t0", question="Q?", answer="A")]).save(tmp_path / "t.jsonl")
    out = tmp_path / "export"
    argv = ["export", "sft", "--tasks", str(tasks_file), "--corpus", str(snap), "--out", str(out)]
    assert wikigym_main(argv) == 1  # no oracle: nothing to export, found after the run began
    assert not out.exists() and leftovers(tmp_path) == []


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TRL, reason="needs the train extra")
def test_train_failing_midway_leaves_nothing(tmp_path: Path) -> None:
    """The model is loaded after the run directory was set up (its config written)."""
    grpo = tmp_path / "grpo"
    argv = ["train", "grpo", "--env", "Calc-v0", "--output-dir", str(grpo)]
    assert wikigym_main([*argv, "--model", "/nonexistent/model"]) == 1
    bad = tmp_path / "badmodel"
    bad.mkdir()
    (bad / "config.json").write_text("{}\n")
    assert wikigym_main([*argv, "--model", str(bad)]) == 1  # fails in the tokenizer load
    data = tmp_path / "sft.jsonl"
    chat = {"messages": [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "A"}]}
    data.write_text(json.dumps(chat) + "\n")
    sft = tmp_path / "sft"
    argv = ["train", "sft", "--data", str(data), "--output-dir", str(sft), "--model", str(bad)]
    assert wikigym_main(argv) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["badmodel", "sft.jsonl"]


def test_demo_replaces_only_its_own_report(tmp_path: Path) -> None:
    from wikigym.cli import is_demo_report

    report = tmp_path / "wikigym-demo"
    assert not is_demo_report(report)
    (report / "oracle").mkdir(parents=True)
    (report / "heuristic").mkdir()
    (report / "oracle" / "summary.json").write_text("{}")
    assert is_demo_report(report)
    (report / "notes.txt").write_text("mine")
    assert not is_demo_report(report)
    assert wikigym_main(["demo", "--report", str(report)]) == 1  # refused before any work
    assert (report / "notes.txt").is_file()
