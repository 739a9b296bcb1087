"""``synth calibrate`` and ``synth filter``: pass@k and mean reward from real episodes.

A scripted OpenAI-compatible server (tests/openai_stub.py) answers task ``j`` right exactly
when the request's sampling seed is below ``base + j``, so with ``k = 4`` the four tasks pass
0, 1, 2 and 3 times: the numbers are known, and they depend on the seeds the calibration sends.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.openai_stub import StubServer
from wikigym.corpora.default import build_world_snapshot
from wikigym.corpora.snapshot import Snapshot
from wikigym.synth.calibrate import Calibration, filter_band
from wikigym.synth.cli import main
from wikigym.tasks.one_hop import one_hop_tasks
from wikigym.tasks.taskset import TaskSet

K = 4
BASE_SEED = 7


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("calibrate")
    build_world_snapshot(300, 1, root / "snap", progress=False)
    tasks = one_hop_tasks(Snapshot.open(root / "snap"), n=4, seed=0)
    return root / "snap", tasks.save(root / "tasks.jsonl")


def _answer(text: str) -> str:
    return (
        "<tool_call>" + json.dumps({"name": "answer", "arguments": {"text": text}}) + "</tool_call>"
    )


@pytest.fixture()
def stub(world: tuple[Path, Path]) -> Any:
    tasks = TaskSet.load(world[1])
    by_question = {t.question: (j, t.answer) for j, t in enumerate(tasks)}
    server: StubServer

    def script(messages: list[dict[str, Any]]) -> str:
        prompt = messages[0]["content"]
        j, gold = next(v for q, v in by_question.items() if q in prompt)
        seed = server.requests[-1]["seed"]
        return _answer(gold if seed - BASE_SEED < j else "certainly not this")

    server = StubServer(script)
    yield server
    server.close()


def _calibrate(world: tuple[Path, Path], agent: str, out: Path, *extra: str) -> int:
    snap, tasks = world
    return main(
        ["calibrate", str(tasks), "--agent", agent, "--corpus", str(snap), "--out", str(out),
         *extra]
    )  # fmt: skip


def test_calibrate_stores_pass_at_k_and_is_deterministic(
    world: tuple[Path, Path], stub: StubServer, tmp_path: Path
) -> None:
    agent = f"openai:{stub.base_url}"
    args = ("--k", str(K), "--seed", str(BASE_SEED), "--max-steps", "3")
    assert _calibrate(world, agent, tmp_path / "a.jsonl", *args) == 0
    assert _calibrate(world, agent, tmp_path / "b.jsonl", *args) == 0
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert sorted({r["seed"] for r in stub.requests}) == list(range(BASE_SEED, BASE_SEED + K))

    original = TaskSet.load(world[1])
    calibrated = TaskSet.load(tmp_path / "a.jsonl")
    assert [t.task_id for t in calibrated] == [t.task_id for t in original]
    assert calibrated.taskset_id != original.taskset_id
    got = [Calibration.of_task(t) for t in calibrated]
    assert [c.passes for c in got if c] == [0, 1, 2, 3]
    assert [c.pass_rate for c in got if c] == [0.0, 0.25, 0.5, 0.75]
    assert [c.pass_at_k for c in got if c] == [0.0, 1.0, 1.0, 1.0]
    for c in got:
        assert c is not None and c.k == K and c.seed == BASE_SEED and c.agent == agent
    assert got[0] is not None and got[0].mean_reward == 0.0
    rewards = [c.mean_reward for c in got if c]
    assert rewards == sorted(rewards) and rewards[3] > rewards[1] > 0.0
    # Everything else of each task is unchanged.
    for before, after in zip(original, calibrated, strict=True):
        kept = {k: v for k, v in after.difficulty.items() if not k.startswith("calibration_")}
        assert kept == before.difficulty
        assert after.model_copy(update={"difficulty": before.difficulty}) == before

    # Calibrating again with another seed replaces the old calibration.
    assert _calibrate(world, agent, tmp_path / "a.jsonl", "--k", "1", "--seed", str(BASE_SEED + 2),
                      "--overwrite") == 0  # fmt: skip
    again = [Calibration.of_task(t) for t in TaskSet.load(tmp_path / "a.jsonl")]
    assert [c.passes for c in again if c] == [0, 0, 0, 1]


def test_filter_keeps_a_pass_rate_band(
    world: tuple[Path, Path], stub: StubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = f"openai:{stub.base_url}"
    cal = tmp_path / "cal.jsonl"
    assert _calibrate(world, agent, cal, "--k", str(K), "--seed", str(BASE_SEED)) == 0
    out = tmp_path / "band.parquet"
    assert (
        main(["filter", str(cal), "--min-pass", "0.2", "--max-pass", "0.6", "--out", str(out)]) == 0
    )
    kept = TaskSet.load(out)
    ids = [t.task_id for t in TaskSet.load(cal)]
    assert [t.task_id for t in kept] == ids[1:3]
    assert kept.taskset_id == filter_band(TaskSet.load(cal), 0.2, 0.6).taskset_id
    capsys.readouterr()
    # Mistakes: one line on stderr, exit 1, nothing written.
    cases = [
        (["filter", str(cal), "--min-pass", "0.2", "--max-pass", "0.6", "--out", str(out)],
         "exists; pass --overwrite"),
        (["filter", str(world[1]), "--out", str(tmp_path / "x.jsonl")], "carries no calibration"),
        (["filter", str(cal), "--min-pass", "0.9", "--max-pass", "0.1", "--out",
          str(tmp_path / "x.jsonl")], "--min-pass <= --max-pass"),
        (["filter", str(cal), "--min-pass", "0.9", "--out", str(tmp_path / "x.jsonl")],
         "widen the band"),
        (["filter", str(cal), "--out", str(tmp_path / "x.txt")], "must end in .jsonl"),
        (["calibrate", str(world[1]), "--agent", "gpt", "--out", str(tmp_path / "x.jsonl"),
          "--corpus", str(world[0])], "unknown agent"),
        (["calibrate", str(tmp_path / "missing.jsonl"), "--agent", "heuristic",
          "--corpus", str(world[0]), "--out", str(tmp_path / "x.jsonl")], "does not exist"),
    ]  # fmt: skip
    for argv, message in cases:
        assert main(argv) == 1, argv
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, (argv, err)
        assert "Traceback" not in err
    assert not (tmp_path / "x.jsonl").exists()


def test_heuristic_calibration_is_all_or_nothing(world: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "h.jsonl"
    assert _calibrate(world, "heuristic", out, "--k", "2") == 0
    for task in TaskSet.load(out):
        c = Calibration.of_task(task)
        assert c is not None and c.passes in (0, 2)  # a deterministic agent: same every run


def test_a_tampered_calibration_is_named(world: tuple[Path, Path]) -> None:
    from wikigym.errors import SynthError

    task = TaskSet.load(world[1])[0]
    bad = task.model_copy(update={"difficulty": {**task.difficulty, "calibration_k": "many"}})
    with pytest.raises(SynthError, match="invalid calibration"):
        Calibration.of_task(bad)


@pytest.mark.slow
def test_tiny_hf_model_calibration_is_deterministic(
    world: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from wikigym.trainers.tiny import build_tiny_model

    monkeypatch.setenv("WIKIGYM_CACHE", str(tmp_path / "cache"))
    model = build_tiny_model(tmp_path / "tiny")
    one = TaskSet([TaskSet.load(world[1])[0]]).save(tmp_path / "one.jsonl")
    snap = world[0]
    outs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.jsonl"
        argv = ["calibrate", str(one), "--agent", f"hf:{model}", "--k", "2", "--seed", "5",
                "--max-steps", "1", "--temperature", "1.0", "--corpus", str(snap), "--out", str(out)]  # fmt: skip
        assert main(argv) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    c = Calibration.of_task(TaskSet.load(tmp_path / "a.jsonl")[0])
    assert c is not None and c.k == 2 and c.agent == f"hf:{model}"
