"""End to end on the CPU: the tiny model, `wikigym train grpo --preset cpu-tiny`, SFT on the
export. Slow (minutes on 2 cores)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

pytest.importorskip("trl")

from wikigym.trainers.cli import add_parser

pytestmark = pytest.mark.slow


def run_cli(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="wikigym")
    add_parser(p.add_subparsers(dest="command", required=True))
    args = p.parse_args(argv)
    return int(args.func(args))


def test_tiny_model_is_deterministic(tmp_path: Path) -> None:
    from wikigym.trainers.tiny import build_tiny_model, directory_digest

    a = build_tiny_model(tmp_path / "a", seed=0)
    b = build_tiny_model(tmp_path / "b", seed=0)
    assert directory_digest(a) == directory_digest(b)
    assert build_tiny_model(a, seed=0) == a  # cached


def test_cli_train_grpo_cpu_tiny_calc(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The Calc-v0 smoke run, ``--quiet``, with a completion budget no answer of the tiny
    untrained model fits in: every completion hits the length limit, so nothing reaches the
    loss; the alarm says so (quiet silences progress, not alarms). The budget is set, not
    left to the random model's habits: a tiny model of other weights cut 62.5% only."""
    out = tmp_path / "run"
    assert (
        run_cli(
            [
                "train",
                "grpo",
                "--preset",
                "cpu-tiny",
                "--env",
                "Calc-v0",
                "--output-dir",
                str(out),
                "--max-steps",
                "2",
                "--num-rows",
                "8",
                "--overrides",
                '{"max_completion_length": 3}',
                "--quiet",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "[wikigym] GRPO" not in captured.err and "it/s" not in captured.err
    assert "ALARM step 1: all_completions_cut" in captured.err
    assert "max_completion_length" in captured.err
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in rows if "loss" in r]
    assert len(steps) == 2
    for r in steps:
        assert r["diag/episodes"] == 4  # num_generations x 1 prompt per step
        assert "diag/masked_share" in r and "completions/mean_length" in r
    summary = json.loads((out / "diagnostics_summary.json").read_text())
    assert summary["episodes"] == 8
    assert [a["name"] for a in summary["alarms"]] == ["all_completions_cut"]
    assert (out / "final" / "config.json").is_file()
    assert json.loads(captured.out.strip().splitlines()[-1])["episodes"] == 8


def test_export_then_sft_one_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["export", "sft", "--out", str(tmp_path / "data"), "--limit", "4"]) == 0
    assert (
        run_cli(
            [
                "train",
                "sft",
                "--data",
                str(tmp_path / "data"),
                "--output-dir",
                str(tmp_path / "sft"),
                "--max-steps",
                "1",
                "--batch-size",
                "2",
                "--cpu",
                "--learning-rate",
                "1e-3",
            ]
        )
        == 0
    )
    assert (tmp_path / "sft" / "final" / "model.safetensors").is_file()
    err = capsys.readouterr().err
    assert "[wikigym] SFT" in err and "1/1" in err  # the stage by name, its count


@pytest.mark.parametrize("rollout", ["environment_factory", "rollout_func"])
def test_cli_train_grpo_cpu_tiny_wikisearch(tmp_path: Path, rollout: str) -> None:
    """`wikigym train grpo --preset cpu-tiny --env WikiSearch-v1` on the default world, both
    rollout paths, two steps: metrics.jsonl has TRL's and the diagnostics' keys. With the
    plain tiny model as --model (no model: the cold start, tested below), so both paths run
    with the full prompt."""
    from wikigym.defaults import cache_dir
    from wikigym.trainers.grpo import TINY_MODEL_DIRNAME
    from wikigym.trainers.tiny import build_tiny_model

    model = build_tiny_model(cache_dir() / TINY_MODEL_DIRNAME, seed=0)
    out = tmp_path / "run"
    argv = [
        "train",
        "grpo",
        "--preset",
        "cpu-tiny",
        "--env",
        "WikiSearch-v1",
        "--model",
        str(model),
    ]
    argv += ["--output-dir", str(out), "--max-steps", "2", "--num-rows", "4"]
    assert run_cli([*argv, "--rollout", rollout]) == 0
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in rows if "loss" in r]
    assert [r["step"] for r in steps] == [1, 2]
    for r in steps:
        assert r["diag/episodes"] == 4
        for key in ("diag/masked_share", "diag/tool_calls_per_episode", "completions/mean_length"):
            assert key in r, key
    summary = json.loads((out / "diagnostics_summary.json").read_text())
    assert summary["episodes"] == 8
    config = json.loads((out / "train_config.json").read_text())
    assert config["env"] == "WikiSearch-v1" and config["rollout"] == rollout


# Its first run builds the cold start (SFT, tens of minutes on a loaded 2-core machine).
@pytest.mark.timeout(3600)
def test_cli_cpu_tiny_default_run_shows_a_learning_signal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`wikigym train grpo --preset cpu-tiny` with no --model: it builds (and caches) the SFT
    cold start, and its default run shows rewards varying within groups, nonzero gradient
    norms and valid tool calls; the demonstration line says so."""
    from wikigym.defaults import cache_dir
    from wikigym.trainers.coldstart import COLD_START_MARKER

    out = tmp_path / "run"
    assert run_cli(["train", "grpo", "--preset", "cpu-tiny", "--output-dir", str(out)]) == 0
    built = [p for p in cache_dir().glob("tiny-sft-*") if (p / COLD_START_MARKER).is_file()]
    assert built  # the cold start is cached (the suite's cache: see conftest)
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in rows if "loss" in r]
    # Some group's scored rewards varied: counted from the episodes (TRL's
    # frac_reward_zero_std counts a group with a masked, NaN reward as varying).
    assert any(r["diag/varying_group_share"] > 0 for r in steps)
    assert any(r["grad_norm"] > 0 for r in steps)
    summary = json.loads((out / "diagnostics_summary.json").read_text())
    assert summary["tool_calls"] > 0 and summary["tool_call_validity"] > 0
    assert summary["varying_group_share"] > 0 and summary["nonzero_grad_steps"] > 0
    assert not [a for a in summary["alarms"] if a["name"] == "no_learning_signal"]
    err = capsys.readouterr().err
    assert "cpu-tiny shows a learning signal" in err
