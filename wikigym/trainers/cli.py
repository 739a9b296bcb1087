"""``wikigym train grpo|sft`` and ``wikigym export sft``.

Each command's options are the fields of its config dataclass (:class:`TrainConfig`,
:class:`SFTRunConfig`, :class:`ExportConfig`), made by :mod:`wikigym.cli_args`: a field, its
default and its help live in one place. Wire into the main parser with ``add_parser(sub)``
(``sub`` from ``add_subparsers``). Heavy imports (torch, TRL) happen inside the command
functions only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from wikigym.cli_args import add_dataclass_arguments, dataclass_from_args
from wikigym.cliutil import SubParsers, require_extra
from wikigym.envs.registration import WIKI_SEARCH
from wikigym.trainers.grpo import TrainConfig, uses_cold_start
from wikigym.trainers.sft import ExportConfig, SFTRunConfig

TRAIN_MODULES: tuple[str, ...] = ("torch", "transformers", "datasets", "trl")


def add_parser(sub: SubParsers) -> None:
    """Register the ``train`` and ``export`` commands."""
    train = sub.add_parser("train", help="train a model on a wikigym env (GRPO, SFT cold start)")
    tsub = train.add_subparsers(dest="train_command", required=True, metavar="STAGE")

    g = tsub.add_parser("grpo", help="GRPO on TRL with the env's tools (environment_factory)")
    add_dataclass_arguments(g, TrainConfig)
    g.set_defaults(func=cmd_train_grpo)

    s = tsub.add_parser("sft", help="SFT cold start on an export (`wikigym export sft`)")
    add_dataclass_arguments(s, SFTRunConfig)
    s.set_defaults(func=cmd_train_sft)

    export = sub.add_parser("export", help="export training data")
    esub = export.add_subparsers(dest="export_command", required=True, metavar="KIND")
    e = esub.add_parser("sft", help="oracle trajectories as chat SFT data (cold start)")
    add_dataclass_arguments(e, ExportConfig)
    e.set_defaults(func=cmd_export_sft)


def cmd_train_grpo(args: argparse.Namespace) -> int:
    """Run GRPO; print the diagnostics summary as one JSON line."""
    from wikigym.trainers.grpo import train

    cfg = dataclass_from_args(TrainConfig, args)
    require_extra(TRAIN_MODULES, "train", "wikigym train grpo")
    if cfg.use_vllm in ("colocate", "server"):
        from wikigym.trainers.vllm import require_vllm

        require_vllm()
    from wikigym.trainers.progress import quiet_library_bars

    quiet_library_bars()  # the stages say what is going on (or, with --quiet, nothing does)
    summary = train(cfg)
    print(json.dumps(summary, sort_keys=True))
    print(f"metrics: {Path(cfg.output_dir) / 'metrics.jsonl'}", file=sys.stderr)
    if uses_cold_start(cfg):
        print(demonstration_line(summary), file=sys.stderr)
    return 0


def demonstration_line(summary: dict[str, Any]) -> str:
    """What a cpu-tiny run from the cold-start checkpoint showed, in one line."""
    varying = summary.get("varying_group_share")
    norm = summary.get("grad_norm_mean")
    calls = int(summary.get("tool_calls") or 0)
    validity = float(summary.get("tool_call_validity") or 0.0)
    seen = (
        f"{calls} tool calls ({validity:.0%} valid), rewards varied within "
        f"{0.0 if varying is None else varying:.0%} of the groups, mean grad norm "
        f"{0.0 if norm is None else norm:.3g}"
    )
    if varying and norm:
        return (
            f"[wikigym] cpu-tiny shows a learning signal: a tiny model after a cached SFT cold "
            f"start on the easy tasks' oracle trajectories made {seen}. The env's tools, "
            "rewards and GRPO's updates work end to end; a model this small learns little in a "
            "few steps (benchmarks/bench_learning_search.py measures learning)."
        )
    return (
        f"[wikigym] cpu-tiny showed NO learning signal: {seen}. See the no_learning_signal "
        "alarm above for what to check."
    )


def cmd_train_sft(args: argparse.Namespace) -> int:
    """Fine-tune on an export; the run directory appears only when the run is complete."""
    from wikigym.outputs import atomic_output, refuse_existing
    from wikigym.trainers.grpo import check_model, resolve_model
    from wikigym.trainers.progress import Progress, quiet_library_bars
    from wikigym.trainers.sft import load_sft_dataset, run_sft

    cfg = dataclass_from_args(SFTRunConfig, args)
    require_extra(TRAIN_MODULES, "train", "wikigym train sft")
    refuse_existing(cfg.output_dir, cfg.overwrite)  # before loading anything
    model_cfg = TrainConfig(output_dir=str(cfg.output_dir), model=cfg.model, quiet=cfg.quiet)
    check_model(model_cfg)
    dataset = load_sft_dataset(cfg.data)  # before the tiny model is built
    quiet_library_bars()
    progress = Progress(enabled=not cfg.quiet)
    model = resolve_model(model_cfg, progress=progress)
    with atomic_output(cfg.output_dir, overwrite=cfg.overwrite) as tmp:
        final = run_sft(
            model,
            dataset,
            tmp,
            max_steps=cfg.max_steps,
            learning_rate=cfg.learning_rate,
            batch_size=cfg.batch_size,
            max_length=cfg.max_length,
            seed=cfg.seed,
            use_cpu=cfg.cpu,
            progress=progress,
        )
        name = final.relative_to(tmp)
    print(Path(cfg.output_dir) / name)
    return 0


def cmd_export_sft(args: argparse.Namespace) -> int:
    """Write the oracle chats of a TaskSet; print the file and its number of chats."""
    from wikigym.outputs import refuse_existing
    from wikigym.trainers.adapter import EnvSpec
    from wikigym.trainers.grpo import check_env_inputs
    from wikigym.trainers.sft import export_sft

    cfg = dataclass_from_args(ExportConfig, args)
    refuse_existing(cfg.out, cfg.overwrite)  # before building the default world
    spec = EnvSpec(
        env_id=WIKI_SEARCH,
        corpus=cfg.corpus,
        tasks=cfg.tasks,
        kwargs={"python": "off", "max_steps": cfg.max_env_steps},
    )
    check_env_inputs(spec)
    path = export_sft(spec, cfg.out, limit=cfg.limit, overwrite=cfg.overwrite)
    n = sum(1 for _ in path.open(encoding="utf-8"))
    print(f"{path}: {n} chats")
    return 0
