"""The ``wikigym`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from wikigym import __version__
from wikigym.corpora import cli as corpus_cli
from wikigym.envs import tasks_cli
from wikigym.eval import cli as eval_cli
from wikigym.errors import WikigymError


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
    r = sub.add_parser(
        "replay", help="re-run a recorded trajectory; exit 1 at the first divergence"
    )
    r.add_argument("trajectory", type=Path, help="a trajectory .jsonl file (RecordTrajectory)")
    r.set_defaults(func=cmd_replay)
    return parser


def cmd_replay(args: argparse.Namespace) -> int:
    from wikigym.envs.replay import replay

    steps, divergence = replay(args.trajectory)
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
