"""The reference agent per level on the default world: how hard each level is for search.

On the default world (3,000 generated articles, seed 0), ``--n`` tasks per level (seed 0) are
run through ``WikiSearch-v1`` by the reference agent (a planner given each task's formal
query, resolving every node through the tools: :mod:`wikigym.eval.reference`) with a budget of
``--steps`` tool calls, and by the heuristic (the question alone) with the env's default 12.
Per level: the share solved with its 95% Wilson interval, the mean tool calls with a 95%
normal interval, and what makes search hard: descriptions no search surfaces
(``unsurfaced``), fuzzy clues, hops, the fewest entities one constraint matches.

Also measured on the same tasks (issue 36's "Done when"): descriptions said definitely that
fit more than one entity of the snapshot (re-said from each query: target 0 at hard and
phd), and, with ``--unanswerable`` of the hard and phd tasks made near-misses, whether a
question with no answer can be told from the others by its form or its length.

Usage:
    python benchmarks/bench_reference.py [--n 200] [--steps 30] [--articles 3000]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: wikigym
sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks: common

import common
import numpy as np

from wikigym.corpora import Snapshot
from wikigym.corpora.default import build_world_snapshot
from wikigym.eval.heuristic import HeuristicAgent
from wikigym.eval.reference import ReferenceAgent
from wikigym.eval.runner import run_eval
from wikigym.eval.stats import wilson
from wikigym.synth import SynthConfig, generate_tasks
from wikigym.synth.evaluate import Evaluator
from wikigym.synth.graph import graph_of
from wikigym.synth.levels import LEVELS
from wikigym.synth.node import phrasing_rng
from wikigym.synth.query import forms_of, unwrap
from wikigym.synth.render import Renderer
from wikigym.synth.solving import SEARCH_BUDGET
from wikigym.tasks.taskset import TaskSet

HEADERS = [
    "level", "tasks", "reference solved", "rate", "95% CI", "tool calls", "95% CI (calls)",
    "heuristic", "95% CI (heuristic)", "hops", "unsurfaced", "fuzzy clues", "distractor_min",
]  # fmt: skip


def definite_misfits(snap: Snapshot, tasks: TaskSet) -> tuple[int, int]:
    """(descriptions said definitely that fit more than one entity, tasks with one): each
    question re-said from its query, recording what it says with "the"/"this"."""
    g = graph_of(snap)
    bad = bad_tasks = 0
    for t in tasks:
        root = unwrap(t.query)
        ev = Evaluator(g)
        r = Renderer(g, np.random.default_rng(0))
        r.sizes = ev.size
        r.question(root, phrasing_rng(root, t.seed or 0))
        n = sum(ev.size(x) > 1 for x in r.definites)
        bad += n
        bad_tasks += n > 0
    return bad, bad_tasks


def length_auc(a: list[int], b: list[int]) -> float:
    """The probability that a random ``b`` is longer than a random ``a`` (ties half)."""
    if not a or not b:
        return 0.5
    return sum((y > x) + 0.5 * (y == x) for x in a for y in b) / (len(a) * len(b))


def mean_ci(values: list[int]) -> tuple[float, float, float]:
    m = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return m, m - half, m + half


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=200, help="tasks per level")
    p.add_argument("--steps", type=int, default=SEARCH_BUDGET, help="the reference's budget")
    p.add_argument("--articles", type=int, default=3000)
    p.add_argument("--unanswerable", type=float, default=0.25,
                   help="share of near-misses in the balance check's hard and phd sets")  # fmt: skip
    p.add_argument("--out", type=Path, default=common.RESULTS)
    args = p.parse_args()
    snap_dir = common.WORK / f"reference-world-{args.articles}"
    if not (snap_dir / "manifest.json").is_file():
        build_world_snapshot(args.articles, 0, snap_dir, progress=False, overwrite=True)
    snap = Snapshot.open(snap_dir)
    t0 = time.perf_counter()
    sets = {lv: generate_tasks(snap, SynthConfig(difficulty=lv, n=args.n, seed=0)) for lv in LEVELS}
    rows, data = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for level in LEVELS:
            path = sets[level].save(Path(tmp) / f"{level}.jsonl")
            ref = run_eval(ReferenceAgent(max_steps=args.steps), path, Path(tmp) / f"r-{level}",
                           agent_name="reference", max_steps=args.steps)  # fmt: skip
            heu = run_eval(HeuristicAgent(), path, Path(tmp) / f"h-{level}",
                           agent_name="heuristic", max_steps=12)  # fmt: skip
            ts = list(sets[level])
            k = sum(r.success for r in ref.records)
            n = len(ref.records)
            lo, hi = wilson(k, n)
            calls = [r.steps for r in ref.records]
            cm, clo, chi = mean_ci(calls)
            hk = sum(r.success for r in heu.records)
            hlo, hhi = wilson(hk, n)
            d_min = [int(t.difficulty.get("distractor_min", 0)) for t in ts]
            row = {
                "level": level,
                "tasks": n,
                "reference solved": f"{k}/{n}",
                "rate": round(k / n, 3),
                "95% CI": f"{lo:.3f}-{hi:.3f}",
                "tool calls": round(cm, 2),
                "95% CI (calls)": f"{clo:.2f}-{chi:.2f}",
                "heuristic": round(hk / n, 3),
                "95% CI (heuristic)": f"{hlo:.3f}-{hhi:.3f}",
                "hops": round(statistics.fmean(int(t.difficulty["hops"]) for t in ts), 2),
                "unsurfaced": round(
                    statistics.fmean(int(t.difficulty.get("unsurfaced", 0)) for t in ts), 2
                ),
                "fuzzy clues": round(
                    statistics.fmean(int(t.difficulty.get("fuzzy_clues", 0)) for t in ts), 2
                ),
                "distractor_min": statistics.median(d_min),
            }
            data[level] = {
                **row,
                "ci": [lo, hi],
                "calls_ci": [clo, chi],
                "heuristic_ci": [hlo, hhi],
            }
            rows.append(list(row.values()))
    misfits = {lv: definite_misfits(snap, sets[lv]) for lv in ("hard", "phd")}
    balance: dict[str, Any] = {}
    for level in ("hard", "phd"):
        mixed = generate_tasks(
            snap, SynthConfig(difficulty=level, n=args.n, seed=0, unanswerable=args.unanswerable)
        )
        ans = [t for t in mixed if not t.unanswerable]
        una = [t for t in mixed if t.unanswerable]

        def share(ts: list[Any]) -> dict[str, float]:
            c: Counter[str] = Counter()
            for t in ts:
                c.update(forms_of(unwrap(t.query)))
            return {f: round(v / len(ts), 3) for f, v in sorted(c.items())}

        la = [len(t.question.split()) for t in ans]
        lu = [len(t.question.split()) for t in una]
        balance[level] = {
            "answerable": len(ans),
            "unanswerable": len(una),
            "words_answerable": round(statistics.fmean(la), 1),
            "words_unanswerable": round(statistics.fmean(lu), 1),
            "length_auc": round(length_auc(la, lu), 3),
            "forms_answerable": share(ans),
            "forms_unanswerable": share(una),
        }
    total_s = round(time.perf_counter() - t0, 1)
    hard, phd = data["hard"], data["phd"]
    checks = {
        "hard and phd intervals do not overlap": phd["ci"][1] < hard["ci"][0],
        "reference solves > 5% of hard": hard["rate"] > 0.05,
        "0 definite descriptions fitting > 1 entity (hard, phd)": all(
            m[0] == 0 for m in misfits.values()
        ),
    }
    sample = [t.question for t in sets["phd"]][:5]
    bal_rows = [
        [lv, b["answerable"], b["unanswerable"], b["words_answerable"], b["words_unanswerable"],
         b["length_auc"]]
        for lv, b in balance.items()
    ]  # fmt: skip
    md = [
        f"Default world: {args.articles:,} articles, seed 0 (snapshot {snap.snapshot_id[:16]});"
        f" {args.n} tasks per level, seed 0; reference budget {args.steps} tool calls, heuristic"
        f" 12. Wall time {total_s} s (machine shared with other engineers: times are loaded).",
        "",
        common.markdown_table(HEADERS, rows),
        "",
        "Definite descriptions fitting more than one entity (re-said from each query): "
        + ", ".join(f"{lv} {m[0]} in {m[1]} tasks" for lv, m in misfits.items()),
        "",
        f"Questions with no answer ({args.unanswerable:.0%} near-misses) against the others:",
        "",
        common.markdown_table(
            [
                "level",
                "answerable",
                "unanswerable",
                "words (answerable)",
                "words (unanswerable)",
                "length AUC",
            ],
            bal_rows,
        ),
        "",
        "Targets: " + "; ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in checks.items()),
        "",
        "First phd questions:",
        "",
        *[f"{i + 1}. {q}" for i, q in enumerate(sample)],
    ]
    result = {
        "levels": data,
        "definite_misfits": misfits,
        "unanswerable_balance": balance,
        "checks": checks,
        "seconds": total_s,
        "phd_sample": sample,
    }
    out = common.write_results("reference", result, "\n".join(md) + "\n", args.out)
    print("\n".join(md))
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
