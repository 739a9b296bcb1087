"""``wikigym tasks ...`` commands: import question sets as TaskSets, and describe a TaskSet."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wikigym.cliutil import SubParsers
from wikigym.errors import TaskSetError
from wikigym.tasks.stats import taskset_info
from wikigym.tasks.taskset import TaskSet

IMPORT_FORMATS: tuple[str, ...] = ("hotpotqa", "nq-open", "jsonl")
TASKSET_SUFFIXES: tuple[str, ...] = (".jsonl", ".parquet")
_SHOW_PROBLEMS = 5


def add_parser(sub: SubParsers) -> None:
    """Register ``tasks`` and its subcommands (``import``, ``info``)."""
    tasks = sub.add_parser("tasks", help="import and inspect TaskSets")
    tsub = tasks.add_subparsers(dest="tasks_cmd", required=True, metavar="COMMAND")

    i = tsub.add_parser(
        "import",
        help="import HotpotQA, NQ-open or generic JSONL questions as a TaskSet",
        description=(
            "Import questions as a TaskSet. hotpotqa: HotpotQA JSONL or JSON array (Hugging Face "
            "or original layout); with --corpus (a snapshot built from the same file with "
            "'wikigym corpus build FILE --format hotpotqa') supporting facts resolve to passages "
            "and each task gets a rubric and an oracle. nq-open: {question, answer: [...]} lines. "
            "jsonl: {question, answer, [id], [aliases], [level]} lines."
        ),
    )
    i.add_argument("format", choices=IMPORT_FORMATS, help="the question file's format")
    i.add_argument("file", type=Path, metavar="FILE", help="the question file")
    i.add_argument(
        "--out", required=True, type=Path, help="TaskSet file to write (.jsonl or .parquet)"
    )
    i.add_argument("--corpus", type=Path, default=None, help="snapshot directory (hotpotqa only)")
    i.add_argument(
        "--allow-unresolved",
        action="store_true",
        help="hotpotqa: import tasks whose evidence does not resolve in --corpus (or with no "
        "--corpus), marked as unresolved and without oracles, instead of failing",
    )
    i.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    i.set_defaults(func=cmd_import)

    n = tsub.add_parser("info", help="count, taskset_id and levels of a TaskSet file")
    n.add_argument("tasks", type=Path, metavar="TASKS", help="TaskSet file (.jsonl or .parquet)")
    n.add_argument("--json", action="store_true", help="print one JSON object")
    n.set_defaults(func=cmd_info)


def cmd_import(args: argparse.Namespace) -> int:
    """``wikigym tasks import FORMAT FILE --out TASKS [--corpus DIR]``."""
    from wikigym.outputs import atomic_output
    from wikigym.tasks import importers  # imported on use: keeps ``wikigym --help`` fast

    out: Path = args.out
    if out.suffix not in TASKSET_SUFFIXES:
        raise TaskSetError(f"--out must end in .jsonl or .parquet, got {out.name!r}")
    for flag, given in (
        ("--corpus", args.corpus is not None),
        ("--allow-unresolved", args.allow_unresolved),
    ):
        if given and args.format != "hotpotqa":
            raise TaskSetError(
                f"{flag} is only used by the hotpotqa importer, not {args.format}; leave it out"
            )
    report = None
    if args.format == "hotpotqa":
        snapshot = None
        if args.corpus is not None:
            from wikigym.corpora.snapshot import Snapshot

            snapshot = Snapshot.open(args.corpus)
        taskset, report = importers.import_hotpotqa_report(
            args.file, snapshot, allow_unresolved=args.allow_unresolved
        )
    elif args.format == "nq-open":
        taskset = importers.import_nq_open(args.file)
    else:
        taskset = importers.import_jsonl(args.file)
    with atomic_output(out, overwrite=args.overwrite, kind="file") as tmp:
        taskset.save(tmp)
    print(f"imported {len(taskset)} tasks -> {out}")
    print(f"taskset_id {taskset.taskset_id}")
    if report is not None:
        print(report.summary())
        problems = [f"{tid}: no page {title!r}" for tid, title in report.unresolved_titles]
        problems += [
            f"{tid}: {title!r} sentence {sid}: {why}"
            for tid, title, sid, why in report.unlocated_facts
        ]
        for line in problems[:_SHOW_PROBLEMS]:
            print(f"  {line}", file=sys.stderr)
        if len(problems) > _SHOW_PROBLEMS:
            print(f"  ... {len(problems) - _SHOW_PROBLEMS} more", file=sys.stderr)
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    """``wikigym tasks info TASKS [--json]``."""
    info = taskset_info(TaskSet.load(args.tasks))
    if args.json:
        print(json.dumps(info, sort_keys=True))
        return 0
    print(f"tasks        {info['tasks']}")
    print(f"taskset_id   {info['taskset_id']}")
    print(f"snapshot_ids {', '.join(info['snapshot_ids']) or '(none)'}")
    for key in ("levels", "answer_types", "sources"):
        shown = ", ".join(f"{k} {v}" for k, v in info[key].items())
        print(f"{key:<12} {shown}")
    print(f"with_oracle  {info['with_oracle']}")
    print(f"with_rubric  {info['with_rubric']}")
    return 0
