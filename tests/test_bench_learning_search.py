"""The learning benchmark's pipeline runs end to end at its smoke sizes (issue 14).

Untrained -> SFT -> GRPO -> evaluation through the real env, with a real tokenizer trained on
the chats, TRL's trainers and the rollout; its numbers at these sizes are not a result, but
every stage must produce its row, the JSON its keys, and the plots their files.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_smoke_run_writes_every_stage_with_intervals(tmp_path: Path) -> None:
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_learning_search.py"),
            "--smoke",
            "--out",
            str(tmp_path / "results"),
            "--work",
            str(tmp_path / "work"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads((tmp_path / "results" / "learning_search_smoke.json").read_text())
    assert result["complete"] and result["smoke"]
    assert [s["name"] for s in result["stages"]] == ["untrained", "sft", "grpo"]
    for stage in result["stages"]:
        assert stage["split"] == "heldout" and stage["n"] == 12
        assert 0.0 <= stage["ci_low"] <= stage["success"] <= stage["ci_high"] <= 1.0
    assert result["command"].startswith("python benchmarks/bench_learning_search.py --smoke")
    for png in ("learning_search_smoke_curves.png", "learning_search_smoke_stages.png"):
        assert (tmp_path / "results" / png).stat().st_size > 0
    # The GPU sizes refuse a machine without CUDA in one line, before any work.
    gpu = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gpu" / "bench_learning_search_gpu.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    import torch

    if not torch.cuda.is_available():
        assert gpu.returncode == 2 and gpu.stderr.count("\n") == 1
        assert gpu.stderr.startswith("error: --gpu needs a CUDA device")


def test_wilson_interval_matches_known_values() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_learning_search as bench

    assert bench.wilson(0, 0) == (0.0, 0.0)
    low, high = bench.wilson(0, 500)
    assert low == 0.0 and high == pytest.approx(0.00762, abs=1e-5)
    low, high = bench.wilson(976, 2000)  # 48.8%
    assert (low, high) == (pytest.approx(0.4661, abs=1e-4), pytest.approx(0.5099, abs=1e-4))
