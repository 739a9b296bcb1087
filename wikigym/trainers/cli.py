"""``wikigym train grpo|sft`` and ``wikigym export sft``.

Wire into the main parser with ``add_parser(sub)`` (``sub`` from ``add_subparsers``). Heavy
imports (torch, TRL) happen inside the command functions only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wikigym.errors import WikigymError


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``train`` and ``export`` commands."""
    from wikigym.trainers.presets import PRESETS

    train = sub.add_parser("train", help="train a model on a wikigym env (GRPO, SFT cold start)")
    tsub = train.add_subparsers(dest="train_command", required=True, metavar="STAGE")

    g = tsub.add_parser("grpo", help="GRPO on TRL with the env's tools (environment_factory)")
    g.add_argument("--model", default=None, help="model path or name (cpu-tiny: optional)")
    g.add_argument("--env", default="WikiSearch-v0", help="env id (default WikiSearch-v0)")
    g.add_argument("--tasks", default=None, help="TaskSet file (default: the default TaskSet)")
    g.add_argument("--corpus", default=None, help="snapshot directory (default: the default world)")
    g.add_argument("--preset", default="cpu-tiny", choices=sorted(PRESETS), help="settings preset")
    g.add_argument("--output-dir", required=True, type=Path, help="run directory")
    g.add_argument("--use-vllm", choices=("colocate", "server", "off"), default=None)
    g.add_argument("--vllm-server-url", default=None, help="http://host:port (server mode)")
    g.add_argument("--max-steps", type=int, default=None, help="optimizer steps (preset default)")
    g.add_argument("--reward", default="binary", choices=("binary", "f1", "shaped"))
    g.add_argument("--gamma", type=float, default=None, help="step decay of the outcome")
    g.add_argument("--citations", action="store_true", help="add the gated citation component")
    g.add_argument("--max-env-steps", type=int, default=8, help="env step budget per episode")
    g.add_argument("--num-rows", type=int, default=None, help="dataset rows (tasks/episodes)")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--no-diagnostics", action="store_true", help="turn the diagnostics off")
    g.add_argument(
        "--rollout",
        choices=("environment_factory", "rollout_func"),
        default="environment_factory",
        help="TRL's tool loop (default) or wikigym's multi-turn rollout_func",
    )
    g.set_defaults(func=cmd_train_grpo)

    s = tsub.add_parser("sft", help="SFT cold start on an export (`wikigym export sft`)")
    s.add_argument("--model", default=None, help="model path or name (default: tiny model)")
    s.add_argument("--data", required=True, type=Path, help="export directory or sft.jsonl")
    s.add_argument("--output-dir", required=True, type=Path)
    s.add_argument("--max-steps", type=int, default=50)
    s.add_argument("--learning-rate", type=float, default=1e-5)
    s.add_argument("--batch-size", type=int, default=4)
    s.add_argument("--max-length", type=int, default=4096)
    s.add_argument("--cpu", action="store_true", help="train on the CPU")
    s.set_defaults(func=cmd_train_sft)

    export = sub.add_parser("export", help="export training data")
    esub = export.add_subparsers(dest="export_command", required=True, metavar="KIND")
    e = esub.add_parser("sft", help="oracle trajectories as chat SFT data (cold start)")
    e.add_argument("--tasks", default=None, help="TaskSet file (default: the default TaskSet)")
    e.add_argument("--corpus", default=None, help="snapshot directory (default: default world)")
    e.add_argument("--out", required=True, type=Path, help="output directory (sft.jsonl)")
    e.add_argument("--limit", type=int, default=None, help="at most this many chats")
    e.add_argument("--max-env-steps", type=int, default=12)
    e.set_defaults(func=cmd_export_sft)


def cmd_train_grpo(args: argparse.Namespace) -> int:
    from wikigym.trainers.grpo import TrainConfig, train

    if args.max_steps is not None and args.max_steps < 1:
        raise WikigymError(f"--max-steps must be >= 1, got {args.max_steps}")
    cfg = TrainConfig(
        output_dir=str(args.output_dir),
        model=args.model,
        env=args.env,
        tasks=args.tasks,
        corpus=args.corpus,
        preset=args.preset,
        use_vllm=args.use_vllm,
        vllm_server_url=args.vllm_server_url,
        max_steps=args.max_steps,
        reward=args.reward,
        gamma=args.gamma,
        citations=args.citations,
        max_env_steps=args.max_env_steps,
        num_rows=args.num_rows,
        seed=args.seed,
        diagnostics=not args.no_diagnostics,
        rollout=args.rollout,
    )
    if args.use_vllm in ("colocate", "server"):
        from wikigym.trainers.vllm import require_vllm

        require_vllm()
    summary = train(cfg)
    print(json.dumps(summary, sort_keys=True))
    print(f"metrics: {Path(args.output_dir) / 'metrics.jsonl'}", file=sys.stderr)
    return 0


def cmd_train_sft(args: argparse.Namespace) -> int:
    from wikigym.trainers.grpo import TrainConfig, resolve_model
    from wikigym.trainers.sft import load_sft_dataset, run_sft

    model = args.model or resolve_model(TrainConfig(output_dir=str(args.output_dir)))
    final = run_sft(
        model,
        load_sft_dataset(args.data),
        args.output_dir,
        max_steps=args.max_steps,
        learning_rate=args.learning_rate,
        batch_size=args.batch_size,
        max_length=args.max_length,
        use_cpu=args.cpu,
    )
    print(final)
    return 0


def cmd_export_sft(args: argparse.Namespace) -> int:
    from wikigym.trainers.adapter import EnvSpec
    from wikigym.trainers.sft import export_sft

    spec = EnvSpec(
        env_id="WikiSearch-v0",
        corpus=args.corpus,
        tasks=args.tasks,
        kwargs={"python": "off", "max_steps": args.max_env_steps},
    )
    path = export_sft(spec, args.out, limit=args.limit)
    n = sum(1 for _ in path.open(encoding="utf-8"))
    print(f"{path}: {n} chats")
    return 0
