"""Presets, GRPOConfig building, vLLM configuration (no vLLM needed), CLI parsing, config files."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("trl")

from wikigym.errors import WikigymError
from wikigym.trainers.cli import add_parser
from wikigym.trainers.grpo import (
    TrainConfig,
    build_grpo_config,
    grpo_config_kwargs,
    reward_config_for,
)
from wikigym.trainers.presets import PRESETS, get_preset
from wikigym.trainers.vllm import server_command, vllm_overrides

CONFIGS = Path(__file__).resolve().parents[1] / "wikigym" / "trainers" / "configs"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wikigym")
    add_parser(p.add_subparsers(dest="command", required=True))
    return p


def test_presets_carry_the_stable_settings() -> None:
    assert set(PRESETS) == {"cpu-tiny", "single-gpu", "multi-gpu"}
    for preset in PRESETS.values():
        assert preset.beta == 0.001
        assert preset.sync_ref_model and preset.ref_model_mixup_alpha == 1.0
        assert preset.mask_truncated_completions
        assert preset.loss_type == "dapo"
        assert preset.vllm_importance_sampling_correction
    assert PRESETS["single-gpu"].ref_model_sync_steps == 100
    with pytest.raises(WikigymError, match="unknown preset"):
        get_preset("huge")
    with pytest.raises(WikigymError, match="unknown preset fields"):
        PRESETS["cpu-tiny"].with_overrides(betta=0.1)


def test_grpo_config_from_preset(tmp_path: Path) -> None:
    cfg = TrainConfig(output_dir=str(tmp_path), preset="single-gpu", use_vllm="off", max_steps=7)
    kw = grpo_config_kwargs(cfg, get_preset("single-gpu"), max_env_steps=6)
    assert kw["beta"] == 0.001 and kw["sync_ref_model"] and kw["ref_model_sync_steps"] == 100
    assert kw["mask_truncated_completions"] and kw["loss_type"] == "dapo" and kw["bf16"]
    assert kw["max_steps"] == 7 and kw["max_tool_calling_iterations"] == 6
    assert not kw["use_vllm"]
    assert not kw["vllm_importance_sampling_correction"]  # nothing to correct without vLLM
    # Every key is a GRPOConfig field (TRL 1.16 names).
    from dataclasses import fields

    from trl import GRPOConfig

    assert set(kw) <= {f.name for f in fields(GRPOConfig)}


def test_a_per_turn_cap_reaches_the_generator_under_its_name(tmp_path: Path) -> None:
    """``max_turn_tokens`` caps one generation call (one turn of wikigym's rollout): TRL's
    ``generate`` reads ``max_new_tokens``, vLLM's sampling ``max_tokens``."""
    cfg = TrainConfig(output_dir=str(tmp_path), preset="cpu-tiny")
    assert "generation_kwargs" not in grpo_config_kwargs(
        cfg, get_preset("cpu-tiny"), max_env_steps=4
    )
    capped = replace(cfg, overrides={"max_turn_tokens": 96})
    kw = grpo_config_kwargs(capped, get_preset("cpu-tiny"), max_env_steps=4)
    assert kw["generation_kwargs"] == {"max_new_tokens": 96} and "max_turn_tokens" not in kw
    vllm = replace(cfg, preset="single-gpu", use_vllm="colocate")
    preset = get_preset("single-gpu").with_overrides(max_turn_tokens=512)
    assert grpo_config_kwargs(vllm, preset, max_env_steps=4)["generation_kwargs"] == {
        "max_tokens": 512
    }
    with pytest.raises(WikigymError, match='max_turn_tokens must be an integer or None, got "96"'):
        grpo_config_kwargs(
            replace(cfg, overrides={"max_turn_tokens": "96"}),
            get_preset("cpu-tiny"),
            max_env_steps=4,
        )
    built = build_grpo_config(capped, get_preset("cpu-tiny"), max_env_steps=4)
    assert built.generation_kwargs == {"max_new_tokens": 96}


def test_vllm_colocate_and_server_configuration() -> None:
    single, multi = get_preset("single-gpu"), get_preset("multi-gpu")
    assert vllm_overrides(None, single) == {
        "use_vllm": True,
        "vllm_mode": "colocate",
        "vllm_gpu_memory_utilization": 0.3,
    }
    assert vllm_overrides(None, multi) == {"use_vllm": True, "vllm_mode": "server"}
    out = vllm_overrides("server", single, server_url="http://10.0.0.2:8000/")
    assert out == {
        "use_vllm": True,
        "vllm_mode": "server",
        "vllm_server_base_url": "http://10.0.0.2:8000",
    }
    assert vllm_overrides("off", single)["use_vllm"] is False
    assert vllm_overrides(None, get_preset("cpu-tiny"))["use_vllm"] is False
    with pytest.raises(WikigymError, match="must be one of"):
        vllm_overrides("remote", single)
    with pytest.raises(WikigymError, match="not colocate"):
        vllm_overrides("colocate", single, server_url="http://h:1")
    with pytest.raises(WikigymError, match="http://host"):
        vllm_overrides("server", single, server_url="h:8000")
    assert server_command("Qwen/Qwen3-0.6B", port=8001)[:4] == [
        "trl",
        "vllm-serve",
        "--model",
        "Qwen/Qwen3-0.6B",
    ]


@pytest.mark.parametrize("mode", ["colocate", "server"])
def test_grpo_config_with_vllm_keeps_is_correction(tmp_path: Path, mode: str) -> None:
    cfg = TrainConfig(output_dir=str(tmp_path), model="m", preset="single-gpu", use_vllm=mode)
    kw = grpo_config_kwargs(cfg, get_preset("single-gpu"), max_env_steps=4)
    assert kw["use_vllm"] and kw["vllm_mode"] == mode and kw["vllm_importance_sampling_correction"]
    assert kw["vllm_importance_sampling_mode"] == "token_truncate"


def test_reward_flags() -> None:
    base = reward_config_for(TrainConfig(output_dir="x"))
    assert base.gamma == 1.0 and base.weights["citation"] == 0.0 and base.outcome == "binary"
    flagged = reward_config_for(TrainConfig(output_dir="x", gamma=0.9, citations=True))
    assert flagged.gamma == 0.9 and flagged.weights["citation"] == 0.5 and flagged.citation_gate


def test_cli_parses_train_and_export(tmp_path: Path) -> None:
    p = parser()
    a = p.parse_args(
        [
            "train",
            "grpo",
            "--preset",
            "cpu-tiny",
            "--env",
            "Calc-v0",
            "--output-dir",
            str(tmp_path),
            "--max-steps",
            "2",
            "--use-vllm",
            "server",
            "--vllm-server-url",
            "http://h:8000",
        ]
    )
    assert a.func.__name__ == "cmd_train_grpo" and a.max_steps == 2 and a.use_vllm == "server"
    a = p.parse_args(["train", "sft", "--data", "d", "--output-dir", "o"])
    assert a.func.__name__ == "cmd_train_sft"
    a = p.parse_args(["export", "sft", "--out", "o", "--limit", "3"])
    assert a.func.__name__ == "cmd_export_sft" and a.limit == 3
    with pytest.raises(SystemExit):
        p.parse_args(["train", "grpo", "--output-dir", "o", "--preset", "gigantic"])


def test_cli_rejects_model_less_gpu_preset(tmp_path: Path) -> None:
    a = parser().parse_args(
        [
            "train",
            "grpo",
            "--preset",
            "single-gpu",
            "--use-vllm",
            "off",
            "--output-dir",
            str(tmp_path),
        ]
    )
    with pytest.raises(WikigymError, match="--model is required"):
        a.func(a)


def test_accelerate_configs_ship_and_parse() -> None:
    yaml = pytest.importorskip("yaml")
    names = sorted(p.name for p in CONFIGS.glob("*.yaml"))
    assert names == ["deepspeed_zero3.yaml", "fsdp2.yaml", "single_gpu.yaml"]
    ds = yaml.safe_load((CONFIGS / "deepspeed_zero3.yaml").read_text())
    assert ds["distributed_type"] == "DEEPSPEED" and ds["deepspeed_config"]["zero_stage"] == 3
    fsdp = yaml.safe_load((CONFIGS / "fsdp2.yaml").read_text())
    assert fsdp["distributed_type"] == "FSDP" and fsdp["fsdp_config"]["fsdp_version"] == 2
    assert (CONFIGS / str(PRESETS["multi-gpu"].accelerate_config)).is_file()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"learning_rate": "fast"}, 'learning_rate must be a number, got "fast"'),
        ({"max_steps": 2.5}, "max_steps must be an integer, got 2.5"),
        ({"bf16": 1}, "bf16 must be a boolean (true or false) or None, got 1"),
        ({"report_to": 3}, "report_to must be None or a string or a list of strings, got 3"),
        ({"lr_scheduler_type": "fast"}, 'lr_scheduler_type must be one of "linear", "cosine"'),
        ({"max_turn_tokens": 0}, "max_turn_tokens must be >= 1, got 0"),
        ({"max_turn_tokens": "96"}, 'max_turn_tokens must be an integer or None, got "96"'),
        ({"log_level": "loud"}, "log_level must be one of"),
        ({"learning_rat": 1e-3}, "unknown field 'learning_rat'"),
    ],
)
def test_a_bad_override_is_one_line_naming_field_type_and_value(
    overrides: dict, message: str
) -> None:
    from wikigym.trainers.grpo import check_overrides

    with pytest.raises(WikigymError) as err:
        check_overrides(overrides)
    text = str(err.value)
    assert message in text and "\n" not in text and text.startswith("--overrides: ")
    if "learning_rat" in overrides:
        assert "did you mean 'learning_rate'?" in text


def test_good_overrides_pass_their_types() -> None:
    from wikigym.trainers.grpo import check_overrides

    check_overrides(
        {
            "learning_rate": 1,  # an integer is a number
            "beta": 0.0,
            "report_to": ["none"],
            "lr_scheduler_type": "cosine",
            "gradient_checkpointing_kwargs": {"use_reentrant": False},
            "num_generations": None,
            "max_turn_tokens": 96,
        }
    )


def test_a_bad_override_stops_the_run_before_anything_is_built_or_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On 3c40d63 this was a TypeError from inside TRL, after the run directory and the tiny
    model were being made."""
    from wikigym.trainers.grpo import train

    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("WIKIGYM_CACHE", str(cache))
    cfg = TrainConfig(
        output_dir=str(tmp_path / "run"), env="Calc-v0", overrides={"learning_rate": "fast"}
    )
    with pytest.raises(WikigymError, match='learning_rate must be a number, got "fast"'):
        train(cfg)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]
    assert list(cache.iterdir()) == []
