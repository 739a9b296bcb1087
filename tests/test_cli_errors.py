"""Every CLI mistake, run as a real subprocess: a non-zero exit, ONE line on stderr, no traceback,
and nothing half-made left behind.

A handful of cases (one per command family) run in the quick suite; the rest are marked slow
(each subprocess pays the interpreter's imports, TRL's for ``train``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wikigym.corpora import BuildConfig, build_snapshot, open_build_source
from wikigym.tasks.taskset import Task, TaskSet

ROOT = Path(__file__).resolve().parents[1]
HAS_TRL = importlib.util.find_spec("trl") is not None
WIKIGYM = [sys.executable, "-m", "wikigym"]
SYNTH = [sys.executable, "-m", "wikigym.synth.cli"]  # what the `synth` console script runs


@pytest.fixture(scope="module")
def work(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a tiny snapshot, a TaskSet for it and broken inputs of each kind."""
    root = tmp_path_factory.mktemp("cli-errors")
    src = open_build_source(shared_data / "wiki/enwiki-3pages-schema09.xml.bz2")
    build_snapshot([src], root / "snap", BuildConfig(), progress=False)
    TaskSet([Task(task_id="t0", question="What is X?", answer="Y")]).save(root / "t.jsonl")
    (root / "q.jsonl").write_text('{"question": "What is X?", "answer": "Y"}\n')
    (root / "corrupt.jsonl").write_text('{"question": "What is X?", "answ\n')
    (root / "text.txt").write_text("not a dump\n")
    (root / "full").mkdir()
    (root / "full" / "keep.txt").write_text("someone's work\n")
    chat = {
        "messages": [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]
    }
    (root / "sft.jsonl").write_text(json.dumps(chat) + "\n")
    (root / "badmodel").mkdir()
    (root / "badmodel" / "config.json").write_text("{}\n")
    (root / "cache").mkdir()
    return root


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), WIKIGYM_CACHE=str(cwd / "cache"))
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def case(*argv: str, out: str | None = None, trl: bool = False, quick: bool = False):
    """A bad command line; ``out``: the output it must not leave behind."""
    marks = [] if quick else [pytest.mark.slow]
    if trl:
        marks.append(pytest.mark.skipif(not HAS_TRL, reason="needs the train extra"))
    return pytest.param(list(argv), out, marks=marks, id=" ".join(argv)[:80])


W, S = "wikigym", "synth"
CASES = [
    # the parser itself
    case(W, quick=True),
    case(W, "bogus"),
    case(W, "corpus"),
    # corpus (the sql command belongs to the snapshot checks)
    case(W, "corpus", "build", "/nonexistent", "--out", "x", out="x", quick=True),
    case(W, "corpus", "build", "text.txt", "--out", "x", out="x"),
    case(W, "corpus", "build", "text.txt", "--out", "x", "--format", "bogus", out="x"),
    case(W, "corpus", "build", "synthetic", "--articles", "0", "--out", "x", out="x"),
    case(W, "corpus", "build", "text.txt", "--out", "x", "--index-memory-mb", "8", out="x", quick=True),
    case(W, "corpus", "generate", "--articles", "-5", "--out", "x", out="x"),
    case(W, "corpus", "info", "/nonexistent"),
    case(W, "corpus", "verify", "text.txt"),
    case(W, "corpus", "search", "/nonexistent", "q"),
    case(W, "corpus", "search", "snap", "q", "-k", "abc"),
    # tasks
    case(W, "tasks", "import", "jsonl", "/missing", "--out", "x.jsonl", out="x.jsonl"),
    case(W, "tasks", "import", "jsonl", "corrupt.jsonl", "--out", "x.jsonl", out="x.jsonl", quick=True),
    case(W, "tasks", "import", "jsonl", "q.jsonl", "--out", "x.txt", out="x.txt"),
    case(W, "tasks", "import", "jsonl", "q.jsonl", "--out", "t.jsonl", quick=True),
    case(W, "tasks", "import", "hotpotqa", "q.jsonl", "--out", "x.jsonl", out="x.jsonl"),
    case(W, "tasks", "import", "nq-open", "q.jsonl", "--out", "x.jsonl", "--corpus", "snap"),
    case(W, "tasks", "import", "bogus", "q.jsonl", "--out", "x.jsonl"),
    case(W, "tasks", "info", "/missing"),
    case(W, "tasks", "info", "corrupt.jsonl"),
    case(W, "tasks", "info", "text.txt"),
    # synth, as `synth` and as `wikigym synth`
    case(S, "generate", "--n", "0", quick=True),
    case(S, "generate", "--difficulty", "bogus"),
    case(S, "generate", "--out", "x.txt", out="x.txt"),
    case(S, "generate", "--forms", "nope", "--out", "x.jsonl", out="x.jsonl", quick=True),
    case(S, "generate", "--forms", "union", "--out", "x.jsonl", out="x.jsonl"),
    case(S, "generate", "--corpus", "/nonexistent", "--out", "x.jsonl", out="x.jsonl"),
    case(S, "generate", "--corpus", "snap", "--out", "t.jsonl"),
    case(S, "generate", "--corpus", "snap", "--n", "2", "--difficulty", "medium", "--out", "x.jsonl", out="x.jsonl"),
    case(S, "verify", "/missing", "--corpus", "snap"),
    case(S, "stats", "corrupt.jsonl"),
    case(S),
    case(W, "synth", "stats", "corrupt.jsonl", quick=True),
    case(W, "synth", "generate", "--corpus", "snap", "--out", "t.jsonl"),
    # eval
    case(W, "eval", "--agent", "bogus", "--tasks", "t.jsonl", "--corpus", "snap", out="eval-report"),
    case(W, "eval", "--agent", "oracle", "--tasks", "/missing", "--corpus", "snap", out="eval-report"),
    case(W, "eval", "--agent", "oracle", "--tasks", "corrupt.jsonl", "--corpus", "snap", out="eval-report"),
    case(W, "eval", "--agent", "oracle", "--corpus", "snap", out="eval-report"),
    case(W, "eval", "--agent", "oracle", "--tasks", "t.jsonl", "--corpus", "snap", "--report", "full", quick=True),
    case(W, "eval", "--agent", "hf:/nonexistent", "--tasks", "t.jsonl", "--corpus", "snap", out="eval-report"),
    case(W, "eval", "--agent", "oracle", "--tasks", "t.jsonl", "--corpus", "snap", "--episodes", "0", out="eval-report"),
    case(W, "eval", "--agent", "oracle", "--tasks", "t.jsonl", "--corpus", "snap", "--max-steps", "0", out="eval-report"),
    case(W, "eval", "--agent", "oracle", "--tasks", "t.jsonl", "--corpus", "snap", "--reward", "bogus"),
    case(W, "eval", "--agent", "oracle", "--tasks", "t.jsonl", "--corpus", "text.txt", out="eval-report"),
    case(W, "eval", "--agent", "openai:http://127.0.0.1:9", "--tasks", "t.jsonl", "--corpus", "snap", "--quiet", out="eval-report"),
    # replay
    case(W, "replay", "/missing"),
    case(W, "replay", "corrupt.jsonl", quick=True),
    case(W, "replay", "q.jsonl"),
    # train and export
    case(W, "train", "grpo"),
    case(W, "train", "grpo", "--output-dir", "g", "--env", "Calc-v1", out="g", quick=True),
    case(W, "train", "grpo", "--output-dir", "g", "--preset", "bogus", out="g"),
    case(W, "train", "grpo", "--output-dir", "g", "--max-steps", "0", out="g"),
    case(W, "train", "grpo", "--output-dir", "g", "--overrides", "notjson", out="g"),
    case(W, "train", "grpo", "--output-dir", "full"),
    case(W, "train", "grpo", "--output-dir", "g", "--model", "/nonexistent/model", out="g", trl=True),
    case(W, "train", "grpo", "--output-dir", "g", "--env", "Calc-v0", "--overrides", '{"nope": 1}', out="g", trl=True),
    case(W, "train", "grpo", "--output-dir", "g", "--env", "Calc-v0", "--overrides", '{"learning_rate": "fast"}', out="g", trl=True, quick=True),
    case(W, "train", "grpo", "--output-dir", "g", "--tasks", "/missing", "--corpus", "snap", out="g", trl=True),
    case(W, "train", "grpo", "--output-dir", "g", "--env", "Calc-v0", "--corpus", "snap", out="g", trl=True),
    case(W, "train", "grpo", "--output-dir", "g", "--preset", "single-gpu", out="g", trl=True),
    case(W, "train", "sft", "--data", "/missing", "--output-dir", "s", out="s", trl=True),
    case(W, "train", "sft", "--data", "corrupt.jsonl", "--output-dir", "s", out="s", trl=True),
    case(W, "train", "sft", "--data", "sft.jsonl", "--output-dir", "s", "--model", "badmodel", out="s", trl=True),
    case(W, "train", "sft", "--data", "sft.jsonl", "--output-dir", "full"),
    case(W, "export", "sft", "--limit", "0", "--out", "e", out="e", quick=True),
    case(W, "export", "sft", "--tasks", "/missing", "--corpus", "snap", "--out", "e", out="e"),
    case(W, "export", "sft", "--tasks", "t.jsonl", "--corpus", "snap", "--out", "e", out="e"),
    case(W, "export", "sft", "--out", "full"),
    # demo
    case(W, "demo", "--report", "full", quick=True),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "out"), CASES)
def test_a_mistake_is_one_line(work: Path, argv: list[str], out: str | None) -> None:
    prog, *rest = argv
    before = sorted(p.name for p in work.iterdir())
    result = run([*(WIKIGYM if prog == W else SYNTH), *rest], work)
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(("wikigym", "synth")) and "error" in lines[0], lines[0]
    if out is not None:
        assert not (work / out).exists(), out
    assert sorted(p.name for p in work.iterdir()) == before  # no half-made output, no partials
    assert sorted(p.name for p in (work / "full").iterdir()) == ["keep.txt"]


def test_output_piped_into_a_closed_reader_is_not_a_traceback(enwiki_snapshot: object) -> None:
    """`wikigym corpus sql ... | head`: the reader leaves early; no traceback, exit 141."""
    snap = str(enwiki_snapshot.path)  # type: ignore[attr-defined]
    proc = subprocess.Popen(
        [sys.executable, "-m", "wikigym", "corpus", "sql", snap, "SELECT text FROM passages"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(100)  # like `head -c 100`: read a little, then go away
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
