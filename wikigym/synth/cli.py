"""The ``synth`` command line: generate, verify and describe question sets.

``synth generate --difficulty easy|medium|hard|phd|mixed --n N [--corpus DIR] [--seed S]
[--out FILE] [--relations R1,R2] [--yes-no] [--llm URL]``; ``synth verify FILE [--corpus DIR]``;
``synth stats FILE [--json]``. Without ``--corpus`` the embedded default world is used (built
into the user cache the first time). Errors print one line and exit 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from wikigym.corpora.snapshot import Snapshot
from wikigym.errors import SynthError, WikigymError
from wikigym.synth.generate import DIFFICULTIES, SynthConfig, generate_tasks
from wikigym.synth.stats import format_stats, taskset_stats
from wikigym.synth.verify import verify_taskset
from wikigym.tasks.taskset import TaskSet


def _snapshot(corpus: str | None) -> Snapshot:
    if corpus is None:
        from wikigym.corpora.default import ensure_default_snapshot

        return Snapshot.open(ensure_default_snapshot(progress=True))
    return Snapshot.open(corpus)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="synth",
        description="Synthesize verifiable multi-hop questions from a wikigym snapshot.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="make a TaskSet of proved questions")
    g.add_argument("--difficulty", choices=DIFFICULTIES, default="mixed")
    g.add_argument("--n", type=int, default=100, help="number of tasks (default 100)")
    g.add_argument("--corpus", help="snapshot directory (default: the embedded world)")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--out", default="tasks.jsonl", help=".jsonl or .parquet (default tasks.jsonl)")
    g.add_argument("--relations", help="comma-separated relations the questions may use")
    g.add_argument("--yes-no", action="store_true", help="also make yes/no questions")
    g.add_argument("--llm", help="OpenAI-compatible endpoint to paraphrase questions with")
    v = sub.add_parser("verify", help="re-prove every task of a TaskSet against a snapshot")
    v.add_argument("file")
    v.add_argument("--corpus", help="snapshot directory (default: the embedded world)")
    s = sub.add_parser("stats", help="counts by level, hops, constraint and answer types")
    s.add_argument("file")
    s.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return p


def _run(args: argparse.Namespace) -> int:
    if args.command == "generate":
        if Path(args.out).suffix not in (".jsonl", ".parquet"):
            raise SynthError(f"--out must end in .jsonl or .parquet, got {args.out!r}")
        snapshot = _snapshot(args.corpus)
        rels = None
        if args.relations:
            rels = tuple(r.strip() for r in args.relations.split(",") if r.strip())
        config = SynthConfig(
            difficulty=args.difficulty,
            n=args.n,
            seed=args.seed,
            relations=rels,
            yes_no=args.yes_no,
            llm=args.llm,
        )
        t0 = time.perf_counter()
        tasks = generate_tasks(snapshot, config)
        path = tasks.save(args.out)
        dt = time.perf_counter() - t0
        print(f"{len(tasks)} tasks -> {path} (taskset {tasks.taskset_id[:16]}, {dt:.1f} s)")
        return 0
    if args.command == "verify":
        tasks = TaskSet.load(args.file)
        snapshot = _snapshot(args.corpus)
        failures = verify_taskset(tasks, snapshot)
        for f in failures:
            print(f"FAIL {f.task_id}: {f.reason}", file=sys.stderr)
        bad = len({f.task_id for f in failures})
        print(f"{len(tasks) - bad} of {len(tasks)} tasks verified against {snapshot.path}")
        return 1 if failures else 0
    stats = taskset_stats(TaskSet.load(args.file))
    print(json.dumps(stats, indent=2, sort_keys=True) if args.json else format_stats(stats))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``synth``."""
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except WikigymError as exc:
        print(f"synth: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"synth: {exc.strerror or exc}: {Path(str(exc.filename or ''))}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
