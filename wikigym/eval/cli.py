"""The ``wikigym eval`` subcommand (registered by :func:`add_parser`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wikigym.cli_args import bounded
from wikigym.cliutil import SubParsers
from wikigym.envs.rewards import PRESETS as REWARD_PRESETS
from wikigym.errors import EvalError
from wikigym.eval.factory import AGENT_SPECS
from wikigym.eval.retrieval import DEFAULT_KS, parse_ks


def add_parser(sub: SubParsers) -> None:
    """Register ``eval`` on the ``wikigym`` subparsers."""
    p = sub.add_parser(
        "eval",
        help="run an agent on a TaskSet and write a report (success, F1, steps by level)",
        description=(
            "Run episodes of WikiSearch-v1 with an agent, record replayable trajectories into "
            "REPORT/trajectories/, and write REPORT/summary.json (deterministic), "
            "REPORT/episodes.jsonl, REPORT/report.md and PNG plots."
        ),
    )
    p.add_argument(
        "--tasks",
        type=Path,
        default=None,
        help="TaskSet file (.jsonl or .parquet); default: the default world's synth TaskSet",
    )
    p.add_argument(
        "--corpus", type=Path, default=None, help="snapshot directory (default: the default world)"
    )
    p.add_argument(
        "--agent",
        default=None,
        help=f"one of: {', '.join(AGENT_SPECS)} (required unless --retrieval)",
        metavar="AGENT",
    )
    p.add_argument(
        "--retrieval",
        action="store_true",
        help="no agent: recall@k and MRR of each task's evidence pages and passages, the "
        "question as the query (per level, per hop of chains)",
    )
    p.add_argument(
        "--k",
        type=_ks,
        default=DEFAULT_KS,
        metavar="K,K,...",
        help="with --retrieval: the cut-offs of recall@k (default: 1,5,10)",
    )
    p.add_argument(
        "--episodes",
        type=bounded(int, 1),
        default=None,
        help="episodes to run (default: one per task)",
    )
    p.add_argument("--report", type=Path, default=Path("eval-report"), help="report folder")
    p.add_argument("--overwrite", action="store_true", help="replace an existing report folder")
    p.add_argument("--max-steps", type=bounded(int, 1), default=None,
                   help="step budget per episode (12; 30 for --agent reference)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="base seed (episode i resets with seed+i)")
    p.add_argument(
        "--python", choices=["off", "auto", "unsafe"], default="off", help="python tool mode"
    )
    p.add_argument("--reward", default="binary", choices=REWARD_PRESETS, help="reward preset")
    p.add_argument("--model", default=None, help="model name for openai:URL agents")
    p.add_argument(
        "--timeout",
        type=bounded(float, 0.001),
        default=120.0,
        help="deadline (s) of each request of openai:URL, from connecting to the reply's last byte",
    )
    p.add_argument(
        "--max-new-tokens",
        type=bounded(int, 1),
        default=512,
        help="generation budget per turn (models)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=cmd_eval)

    v = sub.add_parser(
        "view",
        help="write the episode viewer of an eval report, or compare two runs (a static page)",
        description=(
            "Write a self-contained static page (no server, no network; open it from a file) "
            "that lists a report's episodes with filters and shows each as a transcript, with "
            "its passages, answer, reward and the task's proof. With two reports of the same "
            "tasks: per-task outcome changes, per-level deltas with 95%% intervals and the "
            "first step where the two episodes differ."
        ),
    )
    v.add_argument("reports", type=Path, nargs="+", metavar="REPORT", help="one or two reports")
    v.add_argument(
        "--out",
        type=Path,
        default=None,
        help="the page (default: REPORT/index.html for one report, compare.html for two); its "
        "data goes in a folder beside it",
    )
    v.add_argument("--corpus", type=Path, default=None, help="snapshot for passage texts "
                   "(default: the one the trajectories name, if its id matches)")  # fmt: skip
    v.add_argument("--tasks", type=Path, default=None, help="TaskSet for questions and proofs "
                   "(default: the one the trajectories name, if its id matches)")  # fmt: skip
    v.add_argument("--overwrite", action="store_true", help="replace an existing --out page")
    v.set_defaults(func=cmd_view)


def _ks(text: str) -> tuple[int, ...]:
    try:
        return parse_ks(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_eval(args: argparse.Namespace) -> int:
    """Run the evaluation; exit 1 when the oracle fails a task or a task has no oracle.

    The report folder appears only when the run and its report are complete.
    """
    from wikigym.eval.factory import make_agent
    from wikigym.eval.report import write_report
    from wikigym.eval.runner import run_eval
    from wikigym.outputs import atomic_output, refuse_existing

    refuse_existing(args.report, args.overwrite)  # before loading models or building the world
    if args.retrieval:
        return cmd_retrieval(args)
    if args.agent is None:
        raise EvalError("--agent is required (or --retrieval, which runs no agent)")
    if args.max_steps is None:
        from wikigym.synth.solving import SEARCH_BUDGET

        args.max_steps = SEARCH_BUDGET if args.agent == "reference" else 12

    agent = make_agent(
        args.agent,
        seed=args.seed,
        model=args.model,
        timeout_s=args.timeout,
        max_new_tokens=args.max_new_tokens,
        max_steps=args.max_steps,
    )
    if args.tasks is None:
        if args.corpus is not None:
            raise EvalError("--corpus needs --tasks: pass the TaskSet made for that snapshot")
        from wikigym.tasks.defaults import default_resources, default_tasks_path

        snapshot, _ = default_resources(progress=not args.quiet)
        args.tasks, args.corpus = default_tasks_path(), snapshot.path
    done = [0, 0]

    def progress(record: object) -> None:
        done[0] += 1
        done[1] += bool(getattr(record, "success", False))
        if not args.quiet and (done[0] % 25 == 0):
            print(f"eval: {done[0]} episodes, {done[1]} solved", file=sys.stderr, flush=True)

    with atomic_output(args.report, overwrite=args.overwrite) as tmp:
        run = run_eval(
            agent,
            args.tasks,
            tmp,
            agent_name=args.agent,
            corpus=args.corpus,
            episodes=args.episodes,
            max_steps=args.max_steps,
            seed=args.seed,
            python=args.python,
            reward=args.reward,
            on_episode=progress,
        )
        summary = write_report(run, tmp)
    overall = summary["overall"]
    for level, s in summary["levels"].items():
        print(
            f"{level:>10}: {s['episodes']:5d} episodes, success {s['success_rate']:.3f}, "
            f"F1 {s['mean_f1']:.3f}, steps {s['mean_steps']:.2f}, "
            f"tool errors {s['tool_error_rate']:.3f}"
        )
    print(
        f"{'overall':>10}: {overall['episodes']:5d} episodes, success "
        f"{overall['success_rate']:.3f}; report in {args.report}"
    )
    failures = summary.get("oracle_failures", [])
    missing = summary.get("oracle_missing", [])
    if failures:
        shown = ", ".join(failures[:5]) + (" ..." if len(failures) > 5 else "")
        raise EvalError(
            f"the oracle failed {len(failures)} task(s) ({shown}) made by "
            f"{_generators(args.tasks, failures)}: their oracle trajectories do not solve them on "
            f"snapshot {run.snapshot_id[:16]}; see {args.report / 'report.md'}"
        )
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise EvalError(
            f"{len(missing)} of the tasks run have no oracle ({shown}): "
            "nothing shows they are solvable on this snapshot (imported questions without "
            "resolved evidence: NQ-open, JSONL, or HotpotQA with --allow-unresolved); the "
            f"oracle solved every task that has one; see {args.report / 'report.md'}"
        )
    return 0


def cmd_retrieval(args: argparse.Namespace) -> int:
    """``wikigym eval --retrieval``: recall@k and MRR of the evidence, no agent."""
    from wikigym.eval.retrieval import evaluate_retrieval, write_retrieval_report
    from wikigym.outputs import atomic_output
    from wikigym.tasks.defaults import default_resources, resolve_resources

    if args.tasks is None and args.corpus is not None:
        raise EvalError("--corpus needs --tasks: pass the TaskSet made for that snapshot")
    if args.tasks is None:
        snapshot, taskset = default_resources(progress=not args.quiet)
    else:
        snapshot, taskset = resolve_resources(args.corpus, args.tasks)
    summary, rows = evaluate_retrieval(snapshot, taskset, args.k)
    with atomic_output(args.report, overwrite=args.overwrite) as tmp:
        write_retrieval_report(summary, rows, tmp)
    for name, s in [*summary["levels"].items(), ("overall", summary["overall"])]:
        cells = ", ".join(
            f"R@{k} {s[f'passage_recall@{k}']:.3f}/{s[f'page_recall@{k}']:.3f}"
            for k in args.k
            if s[f"passage_recall@{k}"] is not None and s[f"page_recall@{k}"] is not None
        )
        print(f"{name:>10}: {s['tasks']:5d} tasks, passage/page {cells}")
    print(f"report in {args.report} (summary.json, report.md, retrieval.png)")
    return 0


def cmd_view(args: argparse.Namespace) -> int:
    """``wikigym view``: the viewer of one report, or two reports side by side."""
    from wikigym.eval.viewer import write_compare_page, write_run_page

    if len(args.reports) > 2:
        raise EvalError(f"view takes one report or two to compare, got {len(args.reports)}")
    if len(args.reports) == 1:
        page = write_run_page(
            args.reports[0], args.out, corpus=args.corpus, tasks=args.tasks,
            overwrite=args.overwrite or args.out is None,
        )  # fmt: skip
        print(f"{page} (open it in a browser)")
        return 0
    out = args.out or Path("compare.html")
    page, levels = write_compare_page(
        args.reports[0], args.reports[1], out, corpus=args.corpus, tasks=args.tasks,
        overwrite=args.overwrite,
    )  # fmt: skip
    for name, d in levels.items():
        print(
            f"{name:>10}: {d['tasks']:5d} tasks, {d['a']:.3f} -> {d['b']:.3f} "
            f"({d['delta']:+.3f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}]), "
            f"{d['fixed']} fixed, {d['broken']} broken"
        )
    print(f"{page} (open it in a browser)")
    return 0


def _generators(tasks_file: Path, task_ids: list[str]) -> str:
    """The generators (synth, an importer, ...) that made the named tasks."""
    from wikigym.tasks.defaults import shared_taskset

    wanted = set(task_ids)
    names = {
        t.generator or "an unnamed generator"
        for t in shared_taskset(tasks_file)
        if t.task_id in wanted
    }
    return ", ".join(sorted(names))
