"""The ``wikigym`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from wikigym import __version__
from wikigym.corpora import cli as corpus_cli
from wikigym.errors import WikigymError
from wikigym.eval import cli as eval_cli
from wikigym.tasks import cli as tasks_cli
from wikigym.trainers import cli as trainers_cli


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wikigym",
        description="Offline, deterministic Wikipedia search environments for RL on LLM agents.",
    )
    parser.add_argument("--version", action="version", version=f"wikigym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    corpus_cli.add_parser(sub)
    tasks_cli.add_parser(sub)
    eval_cli.add_parser(sub)
    trainers_cli.add_parser(sub)
    d = sub.add_parser(
        "demo",
        help="the main job on the embedded default: build the world, synthesize tasks, "
        "evaluate the oracle and heuristic agents",
    )
    d.add_argument("--report", type=Path, default=Path("wikigym-demo"), help="report folder")
    d.set_defaults(func=cmd_demo)
    r = sub.add_parser(
        "replay", help="re-run a recorded trajectory; exit 1 at the first divergence"
    )
    r.add_argument("trajectory", type=Path, help="a trajectory .jsonl file (RecordTrajectory)")
    r.add_argument(
        "--trust",
        action="store_true",
        help="allow a trajectory that asks for python='unsafe' (model code run on this host "
        "without a sandbox); only for files you made yourself",
    )
    r.set_defaults(func=cmd_replay)
    return parser


def cmd_demo(args: argparse.Namespace) -> int:
    """Build (once) the default world and TaskSet, run oracle and heuristic, print a table."""
    from wikigym.eval.factory import make_agent
    from wikigym.eval.report import write_report
    from wikigym.eval.runner import run_eval
    from wikigym.tasks.defaults import default_resources, default_tasks_path

    snapshot, tasks = default_resources()
    print(
        f"world: {snapshot.path} ({snapshot.num_articles:,} articles, id {snapshot.snapshot_id[:12]})"
    )
    print(f"tasks: {default_tasks_path()} ({len(tasks)} tasks, id {tasks.taskset_id[:12]})")
    summaries = {}
    for name in ("oracle", "heuristic"):
        out = args.report / name
        run = run_eval(
            make_agent(name), default_tasks_path(), out, agent_name=name, corpus=snapshot.path
        )
        summaries[name] = write_report(run, out)
    levels = list(summaries["oracle"]["levels"])
    print(f"\n{'level':<8} {'tasks':>5}  {'oracle':>7}  {'heuristic':>9}  {'heur. steps':>11}")
    for level in [*levels, "overall"]:
        o = summaries["oracle"]["levels"].get(level) or summaries["oracle"]["overall"]
        h = summaries["heuristic"]["levels"].get(level) or summaries["heuristic"]["overall"]
        print(
            f"{level:<8} {o['episodes']:>5}  {o['success_rate']:>7.3f}  {h['success_rate']:>9.3f}"
            f"  {h['mean_steps']:>11.2f}"
        )
    print(
        f"\nreports and plots: {args.report / 'oracle'} and {args.report / 'heuristic'} (report.md, *.png)"
    )
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from wikigym.envs.replay import replay

    steps, divergence = replay(args.trajectory, trust=args.trust)
    if divergence is not None:
        print(divergence.describe(), file=sys.stderr)
        raise WikigymError(
            f"{args.trajectory}: replay diverged at step {divergence.step} ({divergence.field})"
        )
    print(f"ok: {steps} steps replayed identically")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (one-line reason on stderr on failure)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except WikigymError as exc:
        print(f"wikigym: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("wikigym: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
