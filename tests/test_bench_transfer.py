"""The transfer benchmark's pipeline runs end to end at its smoke sizes, in its two stages
(issue 38).

Trained on a generated world, evaluated on real Wikipedia: the eval sets are built at run time
from the shared real data (the enwiki excerpt through ``synth generate --up-to``, HotpotQA's
closed world through the importer) and a generated reference world; the numbers at these sizes
are not a result, but every set must have every stage with its interval, the JSON its
provenance and diagnosis, and the plot its file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "bench_transfer.py"
SETS = ("enwiki-easy", "hotpotqa", "world-seed1")


def _run(args: list[str], shared: Path, timeout: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WIKIGYM_SHARED_DATA": str(shared)}
    return subprocess.run(
        [sys.executable, str(BENCH), "--smoke", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.mark.slow
@pytest.mark.timeout(2400)  # four runs; minutes each on a loaded 2-core machine
def test_smoke_stages_write_every_set_and_stage_with_intervals(
    tmp_path: Path, shared_data: Path
) -> None:
    where = ["--out", str(tmp_path / "results"), "--work", str(tmp_path / "work")]
    # The GRPO stage refuses to start without the SFT stage's checkpoint, in one line.
    early = _run(["--stage", "grpo", *where], shared_data, 120)
    assert early.returncode == 2
    assert early.stderr.startswith("error: --stage grpo: no finished --stage sft")
    assert early.stderr.count("\n") == 1
    assert not (tmp_path / "results").exists()  # nothing half-made

    sft = _run(["--stage", "sft", *where], shared_data, 1200)
    assert sft.returncode == 0, sft.stderr[-2000:]
    partial = json.loads((tmp_path / "results" / "transfer_smoke.json").read_text())
    assert not partial["complete"]
    assert all(set(partial["eval"][name]) == {"untrained", "sft"} for name in SETS)

    grpo = _run(["--stage", "grpo", *where], shared_data, 1200)
    assert grpo.returncode == 0, grpo.stderr[-2000:]
    result = json.loads((tmp_path / "results" / "transfer_smoke.json").read_text())
    assert result["complete"] and result["smoke"]
    assert result["command"] == (
        f"python benchmarks/bench_transfer.py --smoke --stage sft {' '.join(where)} && "
        f"python benchmarks/bench_transfer.py --smoke --stage grpo {' '.join(where)}"
    )
    assert list(result["eval"]) == list(SETS)
    for name in SETS:
        rows = result["eval"][name]
        assert list(rows) == ["untrained", "sft", "grpo"]
        for row in rows.values():
            low, high = row["ci95"]
            assert 0.0 <= low <= row["success"] <= high <= 1.0 and row["n"] > 0
            assert 0.0 <= row["tool_call_validity"] <= 1.0 and row["mean_steps"] > 0
        record = result["sets"][name]
        assert len(record["snapshot_id"]) == 64 and len(record["taskset_id"]) == 64
        assert record["tasks"] > 0 and record["generator"].startswith("wikigym.")
        assert 0.0 <= record["ceiling"]["question_search_shows_answer"] <= 1.0
        assert set(record["vocabulary"]) == {"question", "answer"}
        assert set(result["diagnosis"][name]) == {"untrained", "sft", "grpo"}
        reading = result["diagnosis"][name]["grpo"]
        assert reading["episodes"] == rows["grpo"]["n"]
        for key in ("question_copied_exactly", "answer_shown", "answer_from_results", "mean_f1"):
            assert 0.0 <= reading[key] <= 1.0
    # Trained only on the generated world, with a tokenizer that also saw real English (less
    # the eval sets' own pages).
    train = result["train"]
    assert train["generator"].startswith("wikigym.synth/") and len(train["taskset_id"]) == 64
    assert train["tokenizer"]["kind"] == "mixed"
    english = train["tokenizer"]["english"]
    assert english["passages"] > 0 and "Anarchism" in english["dropped_eval_titles"]
    assert result["sets"]["enwiki-easy"]["made_by"].endswith("--up-to --seed 0")
    assert result["sets"]["hotpotqa"]["tasks"] == 300
    assert set(result["seconds"]) == {"sft", "grpo"} and set(result["cpu_seconds"]) == {
        "sft",
        "grpo",
    }
    episodes = (tmp_path / "results" / "transfer_smoke_episodes.jsonl").read_text().splitlines()
    kept = [json.loads(line) for line in episodes]
    assert {(e["set"], e["stage"]) for e in kept} == {
        (name, stage) for name in SETS for stage in ("untrained", "sft", "grpo")
    }
    png = tmp_path / "results" / "transfer_smoke.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000

    # The tokenizer survey: the vocabulary figures for each English share, no training.
    vocab = _run(["--stage", "vocab", *where], shared_data, 900)
    assert vocab.returncode == 0, vocab.stderr[-2000:]
    survey = json.loads((tmp_path / "results" / "transfer_smoke_vocabulary.json").read_text())
    assert list(survey["tokenizers"]) == ["0.0", "0.1", "0.25", "0.5"]
    for row in survey["tokenizers"].values():
        for name in SETS:
            assert 0.0 <= row[name]["question"]["unseen_token_share"] <= 1.0
            assert row[name]["answer"]["tokens_per_word"] > 0


def test_tokenizer_texts_weigh_english_to_its_share() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_transfer as bench

    chats = ("a" * 900, "b" * 100)  # 1,000 characters
    english = ("c" * 250,)
    texts, repeat = bench.tokenizer_texts(chats, english, 0.5)
    assert repeat == 4 and texts == chats + english * 4
    texts, repeat = bench.tokenizer_texts(chats, english, 0.01)
    assert repeat == 1 and texts == chats + english  # at least once


@pytest.mark.parametrize("bad", ["0", "-3"])
def test_grpo_steps_below_one_is_one_line(bad: str) -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH), "--grpo-steps", bad],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 2
    assert out.stderr.strip() == f"error: --grpo-steps must be at least 1, got {bad}"
