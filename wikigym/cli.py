"""The ``wikigym`` command line: every room's commands under one parser and one runner.

A mistake prints one line on stderr and exits non-zero (:mod:`wikigym.cliutil`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from wikigym import __version__
from wikigym.cli_examples import EXAMPLES
from wikigym.cliutil import CliParser, run_command
from wikigym.corpora import cli as corpus_cli
from wikigym.errors import ConfigError, WikigymError
from wikigym.eval import cli as eval_cli
from wikigym.integrations.serve import cli as serve_cli
from wikigym.synth import cli as synth_cli
from wikigym.tasks import cli as tasks_cli
from wikigym.trainers import cli as trainers_cli

DEMO_AGENTS: tuple[str, ...] = ("oracle", "heuristic")
DEMO_PLOT = "success_by_level.png"  # both agents side by side, at the top of the demo report


def build_parser() -> CliParser:
    """The ``wikigym`` parser (subparsers inherit its one-line usage errors)."""
    parser = CliParser(
        prog="wikigym",
        description="Offline, deterministic Wikipedia search environments for RL on LLM agents.",
    )
    parser.add_argument("--version", action="version", version=f"wikigym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    corpus_cli.add_parser(sub)
    tasks_cli.add_parser(sub)
    synth_cli.add_parser(sub)
    eval_cli.add_parser(sub)
    trainers_cli.add_parser(sub)
    serve_cli.add_parser(sub)
    d = sub.add_parser(
        "demo",
        help="the main job on the embedded default: build the world, synthesize tasks, "
        "evaluate the oracle and heuristic agents",
    )
    d.add_argument("--report", type=Path, default=Path("wikigym-demo"), help="report folder")
    d.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing report folder (a previous demo's is replaced without it)",
    )
    d.set_defaults(func=cmd_demo)
    r = sub.add_parser(
        "replay", help="re-run a recorded trajectory; exit 1 at the first divergence"
    )
    r.add_argument("trajectory", type=Path, help="a trajectory .jsonl file (RecordTrajectory)")
    r.add_argument(
        "--trust",
        action="store_true",
        help="allow a trajectory that asks for python='unsafe' (model code run on this host "
        "without a sandbox) or for sandbox limits above --sandbox-limits; only for files "
        "you made yourself",
    )
    r.add_argument(
        "--sandbox-limits",
        metavar="JSON",
        help="the most each sandbox limit of the replay may be, as a JSON object of some of "
        "cpu_seconds, wall_seconds, memory_mb, max_processes, max_output_bytes, "
        "max_file_bytes (e.g. '{\"wall_seconds\": 30}'; the others: their defaults); a file "
        "asking for more is refused (default: the defaults)",
    )
    r.set_defaults(func=cmd_replay)
    parser.add_examples(EXAMPLES)
    return parser


def is_demo_report(path: Path) -> bool:
    """Whether ``path`` holds a previous demo's report (which a new demo may replace)."""
    if not path.is_dir():
        return False
    names = {p.name for p in path.iterdir()}
    ours = {*DEMO_AGENTS, DEMO_PLOT, "index.html", "viewer"}
    return bool(names) and names <= ours and (path / "oracle" / "summary.json").is_file()


def cmd_demo(args: argparse.Namespace) -> int:
    """Build (once) the default world and TaskSet, run oracle and heuristic, print a table.

    The report folder appears only when both reports are complete.
    """
    from wikigym.eval.factory import make_agent
    from wikigym.eval.report import agents_plot, write_report
    from wikigym.eval.runner import run_eval
    from wikigym.eval.viewer import write_compare_page
    from wikigym.outputs import atomic_output, refuse_existing
    from wikigym.tasks.defaults import default_resources, default_tasks_path

    overwrite = args.overwrite or is_demo_report(args.report)
    refuse_existing(args.report, overwrite)  # before the slow part
    snapshot, tasks = default_resources()
    print(
        f"world: {snapshot.path} ({snapshot.num_articles:,} articles, id {snapshot.snapshot_id[:12]})"
    )
    print(f"tasks: {default_tasks_path()} ({len(tasks)} tasks, id {tasks.taskset_id[:12]})")
    summaries = {}
    with atomic_output(args.report, overwrite=overwrite) as tmp:
        for name in DEMO_AGENTS:
            out = tmp / name
            run = run_eval(
                make_agent(name), default_tasks_path(), out, agent_name=name, corpus=snapshot.path
            )
            summaries[name] = write_report(run, out)
        agents_plot(summaries, tmp / DEMO_PLOT)
        write_compare_page(tmp / "heuristic", tmp / "oracle", tmp / "index.html")
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
        f"\nreports and plots: {args.report / 'oracle'} and {args.report / 'heuristic'} "
        f"(report.md, *.png, index.html); both agents: {args.report / DEMO_PLOT}; open "
        f"{args.report / 'index.html'} in a browser to read the episodes side by side"
    )
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from wikigym.envs.replay import replay

    ceiling = None
    if args.sandbox_limits is not None:
        try:
            ceiling = json.loads(args.sandbox_limits)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"--sandbox-limits expects a JSON object such as '{{\"wall_seconds\": 30}}', "
                f"got {args.sandbox_limits[:80]!r} ({exc.msg})"
            ) from None
    steps, divergence = replay(args.trajectory, trust=args.trust, sandbox_limits=ceiling)
    if divergence is not None:
        print(divergence.describe())  # the detail; the verdict is the one stderr line
        raise WikigymError(
            f"{args.trajectory}: replay diverged at step {divergence.step} ({divergence.field})"
        )
    print(f"ok: {steps} steps replayed identically")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (one-line reason on stderr on failure)."""
    return run_command(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
