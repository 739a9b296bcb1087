"""The ``synth`` command line (also ``wikigym synth``): generate, verify and describe TaskSets.

``synth generate --difficulty easy|medium|hard|phd|mixed --n N [--corpus DIR] [--seed S]
[--out FILE] [--overwrite] [--relations R1,R2] [--yes-no] [--forms F1,F2] [--llm URL]
[--up-to] [--attempts A]``;
``synth verify FILE [--corpus DIR]``; ``synth stats FILE [--json]``;
``synth calibrate FILE --agent SPEC [--k 8] [--seed S] --out FILE``;
``synth filter FILE --min-pass P --max-pass Q --out FILE``. Without ``--corpus`` the
embedded default world is used (built into the user cache the first time). Both entry points
share :func:`wikigym.cliutil.run_command`: a mistake prints one line and exits non-zero.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from wikigym.cli_args import bounded
from wikigym.cli_examples import EXAMPLES
from wikigym.cliutil import CliParser, SubParsers, run_command
from wikigym.errors import SynthError
from wikigym.synth.generate import DIFFICULTIES, SynthConfig, opt_in_form_names
from wikigym.synth.solving import SEARCH_BUDGET

if TYPE_CHECKING:
    from wikigym.corpora.snapshot import Snapshot

TASKSET_SUFFIXES: tuple[str, ...] = (".jsonl", ".parquet")


def _snapshot(corpus: str | None) -> Snapshot:
    from wikigym.corpora.snapshot import Snapshot

    if corpus is None:
        from wikigym.tasks.defaults import default_snapshot

        return default_snapshot(progress=True)
    return Snapshot.open(corpus)


def add_commands(parser: argparse.ArgumentParser) -> None:
    """Add the subcommands (generate, verify, stats, calibrate, filter) to ``parser`` (``synth`` or ``wikigym synth``)."""
    sub = parser.add_subparsers(dest="synth_command", required=True, metavar="COMMAND")
    g = sub.add_parser("generate", help="make a TaskSet of proved questions")
    g.add_argument("--difficulty", choices=DIFFICULTIES, default="mixed")
    g.add_argument("--n", type=bounded(int, 1), default=100, help="number of tasks (default 100)")
    g.add_argument("--corpus", help="snapshot directory (default: the embedded world)")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--out", default="tasks.jsonl", help=".jsonl or .parquet (default tasks.jsonl)")
    g.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    g.add_argument("--relations", help="comma-separated relations the questions may use")
    g.add_argument("--yes-no", action="store_true", help="also make yes/no questions")
    g.add_argument("--forms", metavar="F1,F2",
                   help="question forms to add to every level's mix, each at its own weight "
                   f"(forms drafted on request: {', '.join(opt_in_form_names())})")  # fmt: skip
    g.add_argument("--llm", help="OpenAI-compatible endpoint to paraphrase questions with")
    g.add_argument("--unanswerable", type=bounded(float, 0.0), default=0.0, metavar="RATE",
                   help="share of tasks made near-misses with no answer (0..1, default 0)")  # fmt: skip
    g.add_argument("--up-to", action="store_true",
                   help="--n is a cap: keep the tasks made before the first one no draft makes "
                   "(a real dump's count is not known in advance) instead of failing")  # fmt: skip
    g.add_argument("--attempts", type=bounded(int, 1), default=SynthConfig.attempts_per_task,
                   metavar="A", help="drafts tried per task before giving up (default "
                   f"{SynthConfig.attempts_per_task:,}; raising it changes no task a lower "
                   "value made, it only lets a sparse snapshot make more)")  # fmt: skip
    g.set_defaults(func=cmd_generate)
    v = sub.add_parser("verify", help="re-prove every task of a TaskSet against a snapshot")
    v.add_argument("file", help="TaskSet file (.jsonl or .parquet)")
    v.add_argument("--corpus", help="snapshot directory (default: the embedded world)")
    v.set_defaults(func=cmd_verify)
    s = sub.add_parser("stats", help="counts by level, hops, constraint and answer types")
    s.add_argument("file", help="TaskSet file (.jsonl or .parquet)")
    s.add_argument("--json", action="store_true", help="print JSON instead of a table")
    s.set_defaults(func=cmd_stats)
    c = sub.add_parser("calibrate", help="store a model's pass@k and mean reward in each task")
    c.add_argument("file", help="TaskSet file (.jsonl or .parquet)")
    c.add_argument("--agent", required=True,
                   help="heuristic, reference (plans from each task's query through the "
                   "tools), openai:URL or hf:PATH")  # fmt: skip
    c.add_argument("--k", type=bounded(int, 1), default=8, help="runs per task (default 8)")
    c.add_argument("--seed", type=int, default=0, help="run r samples with seed + r")
    c.add_argument("--temperature", type=bounded(float, 0.0), default=1.0,
                   help="sampling temperature of model agents (default 1.0; 0: greedy)")  # fmt: skip
    c.add_argument("--model", help="model name sent to an openai: endpoint")
    c.add_argument("--max-steps", type=bounded(int, 1), default=None,
                   help=f"step budget (12; {SEARCH_BUDGET} for the reference agent)")  # fmt: skip
    c.add_argument("--corpus", help="snapshot directory (default: the embedded world)")
    c.add_argument("--out", required=True, help="calibrated TaskSet (.jsonl or .parquet)")
    c.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    c.set_defaults(func=cmd_calibrate)
    f = sub.add_parser("filter", help="keep the tasks whose calibrated pass rate is in a band")
    f.add_argument("file", help="calibrated TaskSet file (.jsonl or .parquet)")
    f.add_argument("--min-pass", type=bounded(float, 0.0), default=0.0, help="lowest rate kept")
    f.add_argument("--max-pass", type=bounded(float, 0.0), default=1.0, help="highest rate kept")
    f.add_argument("--out", required=True, help="filtered TaskSet (.jsonl or .parquet)")
    f.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    f.set_defaults(func=cmd_filter)


def add_parser(sub: SubParsers) -> None:
    """Register ``synth`` on the ``wikigym`` subparsers."""
    add_commands(
        sub.add_parser(
            "synth",
            help="synthesize verifiable multi-hop questions (generate, verify, stats)",
            description="Synthesize verifiable multi-hop questions from a wikigym snapshot.",
        )
    )


def cmd_generate(args: argparse.Namespace) -> int:
    """``synth generate``: the TaskSet file appears only when every task is made."""
    from wikigym.outputs import atomic_output, refuse_existing
    from wikigym.synth.generate import generate_tasks, opt_in_forms

    out = Path(args.out)
    if out.suffix not in TASKSET_SUFFIXES:
        raise SynthError(f"--out must end in .jsonl or .parquet, got {args.out!r}")
    refuse_existing(out, args.overwrite)  # before the slow part
    if args.unanswerable > 1.0:
        raise SynthError(f"--unanswerable is a share in [0, 1], got {args.unanswerable}")
    rels = None
    if args.relations:
        rels = tuple(r.strip() for r in args.relations.split(",") if r.strip())
    config = SynthConfig(
        difficulty=args.difficulty,
        n=args.n,
        seed=args.seed,
        relations=rels,
        yes_no=args.yes_no,
        forms=tuple(f.strip() for f in (args.forms or "").split(",") if f.strip()),
        llm=args.llm,
        unanswerable=args.unanswerable,
        attempts_per_task=args.attempts,
        partial=args.up_to,
    )
    opt_in_forms(config)  # a bad --forms is refused before the snapshot is opened
    snapshot = _snapshot(args.corpus)
    t0 = time.perf_counter()
    tasks = generate_tasks(snapshot, config)
    if not len(tasks):  # a cap is not a licence for an empty file
        raise SynthError(
            f"made no {args.difficulty} task of {snapshot.path} within {args.attempts:,} "
            "attempts; ask for an easier difficulty, raise --attempts, or allow more relations"
        )
    with atomic_output(out, overwrite=args.overwrite, kind="file") as tmp:
        tasks.save(tmp)
    dt = time.perf_counter() - t0
    count = f"{len(tasks)} of up to {args.n}" if args.up_to else str(len(tasks))
    print(f"{count} tasks -> {out} (taskset {tasks.taskset_id[:16]}, {dt:.1f} s)")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """``synth verify``: exit 1 naming each task that is not proved."""
    from wikigym.synth.verify import verify_taskset
    from wikigym.tasks.taskset import TaskSet

    tasks = TaskSet.load(args.file)
    snapshot = _snapshot(args.corpus)
    failures = verify_taskset(tasks, snapshot)
    for f in failures:
        print(f"FAIL {f.task_id}: {f.reason}", file=sys.stderr)
    bad = len({f.task_id for f in failures})
    print(f"{len(tasks) - bad} of {len(tasks)} tasks verified against {snapshot.path}")
    return 1 if failures else 0


def cmd_stats(args: argparse.Namespace) -> int:
    """``synth stats``: counts of a TaskSet, as a table or JSON."""
    from wikigym.synth.stats import format_stats, taskset_stats
    from wikigym.tasks.taskset import TaskSet

    stats = taskset_stats(TaskSet.load(args.file))
    print(json.dumps(stats, indent=2, sort_keys=True) if args.json else format_stats(stats))
    return 0


def _checked_out(out: str, overwrite: bool) -> Path:
    """``--out`` as a path, refused early when its suffix is wrong or it exists."""
    from wikigym.outputs import refuse_existing

    path = Path(out)
    if path.suffix not in TASKSET_SUFFIXES:
        raise SynthError(f"--out must end in .jsonl or .parquet, got {out!r}")
    refuse_existing(path, overwrite)
    return path


def cmd_calibrate(args: argparse.Namespace) -> int:
    """``synth calibrate``: the calibrated TaskSet appears only when every run is done."""
    from wikigym.outputs import atomic_output
    from wikigym.synth.calibrate import calibrate, level_summary

    out = _checked_out(args.out, args.overwrite)
    if args.corpus is not None and not Path(args.corpus).is_dir():
        raise SynthError(f"--corpus {args.corpus} is not a snapshot directory; pass --corpus DIR")
    t0 = time.perf_counter()
    max_steps = args.max_steps or (SEARCH_BUDGET if args.agent == "reference" else 12)
    tasks = calibrate(
        Path(args.file), agent=args.agent, k=args.k, seed=args.seed, corpus=args.corpus,
        max_steps=max_steps, temperature=args.temperature, model=args.model,
    )  # fmt: skip
    with atomic_output(out, overwrite=args.overwrite, kind="file") as tmp:
        tasks.save(tmp)
    dt = time.perf_counter() - t0
    print(
        f"{len(tasks)} tasks x {args.k} runs -> {out} (taskset {tasks.taskset_id[:16]}, {dt:.1f} s)"
    )
    for row in level_summary(tasks):
        print(
            f"  {row.level:<8} {row.passes}/{row.runs} runs passed, {row.rate:.1%} "
            f"(95% CI {row.low:.1%}-{row.high:.1%})"
        )
    return 0


def cmd_filter(args: argparse.Namespace) -> int:
    """``synth filter``: keep a pass-rate band of a calibrated TaskSet."""
    from wikigym.outputs import atomic_output
    from wikigym.synth.calibrate import filter_band
    from wikigym.tasks.taskset import TaskSet

    out = _checked_out(args.out, args.overwrite)
    tasks = TaskSet.load(args.file)
    kept = filter_band(tasks, args.min_pass, args.max_pass)
    with atomic_output(out, overwrite=args.overwrite, kind="file") as tmp:
        kept.save(tmp)
    print(f"{len(kept)} of {len(tasks)} tasks -> {out} (taskset {kept.taskset_id[:16]})")
    return 0


def build_parser() -> CliParser:
    """The parser of the ``synth`` script."""
    parser = CliParser(
        prog="synth",
        description="Synthesize verifiable multi-hop questions from a wikigym snapshot.",
    )
    add_commands(parser)
    parser.add_examples(EXAMPLES, path="synth")  # `synth X` is `wikigym synth X`
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``synth``; returns the exit status."""
    return run_command(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
