"""synth v3 quality per level on the default world: minimality, forms, shortcuts, agents.

On the default world (3,000 generated articles, seed 0), ``--n`` tasks per level (seed 0),
measures per level:

1. labelled vs effective hops (a task is *redundant* when a strictly smaller sub-query has
   the same answer; target 0);
2. the share of each question form (a task can have several), distinct skeletons (the
   query with its constants, bounds and kinds erased) and question length in words;
3. two shortcut baselines: **one search** with the whole question, answering with a date or
   number of the asked type found in the top 3 hits, else the top hit's title; and a
   **no-search prior**: the most common answer of another seed's (seed 1) tasks that share
   the task's first relation (target for both: <= 5% at hard and phd);
4. the heuristic search agent and the oracle, each run through ``WikiSearch-v1`` (targets:
   heuristic strictly falling easy -> phd; oracle 1.0). The heuristic is measured on
   ``--tail-n`` hard and phd tasks (the first ``--n`` of them are the table's): near 0 a
   difference of one task in 200 is noise, so its solved count is shown with the rate.

Usage:
    python benchmarks/bench_synth_v3.py [--n 200] [--tail-n 500] [--articles 3000]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: wikigym
sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks: common

import itertools

import common

from wikigym.corpora import Snapshot
from wikigym.corpora.default import build_world_snapshot
from wikigym.envs.metrics import best_match
from wikigym.eval.agents import OracleAgent
from wikigym.eval.heuristic import HeuristicAgent
from wikigym.eval.runner import run_eval
from wikigym.synth import SynthConfig, generate_tasks
from wikigym.synth.evaluate import Evaluator
from wikigym.synth.graph import graph_of
from wikigym.synth.levels import LEVELS
from wikigym.synth.minimal import effective_hops, redundant
from wikigym.synth.query import forms_of, hops, relations_of, to_json, unwrap
from wikigym.tasks.taskset import Task, TaskSet

_DATE = re.compile(
    r"\b\d{1,2} (?:January|February|March|April|May|June|July|August|September|October|"
    r"November|December) \d{3,4}\b"
)
_NUMBER = re.compile(r"\b\d{1,3}(?:,\d{3})+\b|\b\d+\b")
HEADERS = [
    "level", "tasks", "labelled hops", "effective hops", "redundant", "skeletons",
    "question words", "one search", "prior", "heuristic", "heuristic solved", "oracle",
    "generate s",
]  # fmt: skip
_ERASED = {"doc_id", "title", "key", "lo", "hi", "kind"}


def skeleton(task: Task) -> str:
    """The query's shape: operators and relations, constants and bounds erased."""

    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in sorted(x.items()) if k not in _ERASED}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return repr(strip(to_json(unwrap(task.query))))


def one_search_answer(snap: Snapshot, task: Task) -> str:
    hits = snap.search(task.question, 3)
    if not hits:
        return ""
    pattern = {"date": _DATE, "number": _NUMBER, "count": _NUMBER}.get(task.answer_type)
    if pattern is not None:
        for h in hits:
            for m in pattern.finditer(h.text):
                if not any(m.group(0) in q for q in (task.question,)):
                    return m.group(0)
    if task.answer_type == "yes/no":
        return "yes"
    return hits[0].title


def first_relation(task: Task) -> str:
    rels = relations_of(unwrap(task.query))
    return f"{task.answer_type}:{rels[0] if rels else '?'}"


def agent_counts(
    agent: Any, name: str, path: Path, corpus: Path, out: Path
) -> dict[str, tuple[int, int]]:
    """(solved, tasks) per level."""
    run = run_eval(agent, path, out / name, agent_name=name, corpus=corpus)
    by: dict[str, list[int]] = defaultdict(list)
    for r in run.records:
        by[r.level or "?"].append(1 if r.success else 0)
    return {lv: (sum(v), len(v)) for lv, v in by.items()}


def rate(counts: dict[str, tuple[int, int]], level: str) -> float:
    k, n = counts.get(level, (0, 0))
    return k / n if n else 0.0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=200, help="tasks per level")
    p.add_argument(
        "--tail-n",
        type=int,
        default=500,
        help="hard and phd tasks the heuristic is measured on (the first --n of them are the "
        "table's tasks): at ~0.5%% a tie of one task out of 200 measures nothing",
    )
    p.add_argument("--articles", type=int, default=3000)
    p.add_argument("--out", type=Path, default=common.RESULTS)
    args = p.parse_args()
    snap_dir = common.WORK / f"synth-v3-world-{args.articles}"
    if not (snap_dir / "manifest.json").is_file():
        build_world_snapshot(args.articles, 0, snap_dir, progress=False, overwrite=True)
    snap = Snapshot.open(snap_dir)
    g = graph_of(snap)
    t0 = time.perf_counter()
    sets: dict[str, TaskSet] = {}
    prior_sets: dict[str, TaskSet] = {}
    gen_s: dict[str, float] = {}
    tails: dict[str, TaskSet] = {}
    for level in LEVELS:
        n_made = max(args.n, args.tail_n) if level in ("hard", "phd") else args.n
        t = time.perf_counter()
        # Generation is sequential: the first --n tasks of a longer run are the --n run's.
        tails[level] = generate_tasks(snap, SynthConfig(difficulty=level, n=n_made, seed=0))
        sets[level] = TaskSet(list(tails[level])[: args.n])
        gen_s[level] = round((time.perf_counter() - t) * args.n / n_made, 2)
        prior_sets[level] = generate_tasks(snap, SynthConfig(difficulty=level, n=args.n, seed=1))
    ev = Evaluator(g)
    rows, data = [], {}
    all_tasks = TaskSet([t for lv in LEVELS for t in sets[lv]])
    tail_tasks = TaskSet([t for lv in LEVELS for t in tails[lv]])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tasks.jsonl"
        all_tasks.save(path)
        tail_path = Path(tmp) / "tail.jsonl"
        tail_tasks.save(tail_path)
        oracle = agent_counts(OracleAgent(), "oracle", path, snap_dir, Path(tmp))
        heuristic = agent_counts(HeuristicAgent(), "heuristic", tail_path, snap_dir, Path(tmp))
    forms_rows = []
    for level in LEVELS:
        ts = list(sets[level])
        redundant_n, eff, lab = 0, [], []
        forms: Counter[str] = Counter()
        for t in ts:
            root = unwrap(t.query)
            ev.reset()
            if redundant(root, ev):
                redundant_n += 1
            eff.append(effective_hops(root, ev))
            lab.append(hops(root))
            forms.update(forms_of(root))
        prior: dict[str, Counter[str]] = defaultdict(Counter)
        for t in prior_sets[level]:
            prior[first_relation(t)][t.answer] += 1
        search_ok = sum(best_match(one_search_answer(snap, t), t.golds)[0] for t in ts)
        prior_ok = 0
        for t in ts:
            c = prior.get(first_relation(t))
            guess = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if c else ""
            prior_ok += bool(guess) and best_match(guess, t.golds)[0]
        words = [len(t.question.split()) for t in ts]
        row = {
            "level": level,
            "tasks": len(ts),
            "labelled_hops": round(sum(lab) / len(ts), 2),
            "effective_hops": round(sum(eff) / len(ts), 2),
            "redundant": redundant_n,
            "skeletons": len({skeleton(t) for t in ts}),
            "question_words": round(sum(words) / len(words), 1),
            "one_search": round(search_ok / len(ts), 3),
            "prior": round(prior_ok / len(ts), 3),
            "heuristic": round(rate(heuristic, level), 3),
            "heuristic solved": "{}/{}".format(*heuristic.get(level, (0, 0))),
            "oracle": round(rate(oracle, level), 3),
            "generate_s": gen_s[level],
        }
        data[level] = {**row, "forms": {f: round(n / len(ts), 3) for f, n in sorted(forms.items())}}
        rows.append(list(row.values()))
        forms_rows.append(
            [level, ", ".join(f"{f} {n / len(ts):.0%}" for f, n in sorted(forms.items()))]
        )
    total_s = round(time.perf_counter() - t0, 1)
    hard_phd = [data[lv] for lv in ("hard", "phd")]
    h = [data[lv]["heuristic"] for lv in LEVELS]
    checks = {
        "redundant == 0": all(d["redundant"] == 0 for d in data.values()),
        "shortcuts <= 5% at hard/phd": all(
            d["one_search"] <= 0.05 and d["prior"] <= 0.05 for d in hard_phd
        ),
        "heuristic strictly falling": all(a > b for a, b in itertools.pairwise(h)),
        "oracle 1.0": all(d["oracle"] == 1.0 for d in data.values()),
    }
    sample = [t.question for t in sets["phd"]][:12]
    md = [
        f"Default world: {args.articles:,} articles, seed 0 (snapshot {snap.snapshot_id[:16]});"
        f" {args.n} tasks per level, seed 0 (prior: seed 1). Wall time {total_s} s."
        f" The heuristic runs on the first {max(args.n, args.tail_n)} hard and phd tasks"
        f" (--tail-n; the table's {args.n} are the first of them).",
        "",
        common.markdown_table(HEADERS, rows),
        "",
        "Forms (share of the level's tasks; a task can have several):",
        "",
        common.markdown_table(["level", "forms"], forms_rows),
        "",
        "Targets: " + "; ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in checks.items()),
        "",
        "First phd questions:",
        "",
        *[f"{i + 1}. {q}" for i, q in enumerate(sample)],
    ]
    result = {"levels": data, "checks": checks, "seconds": total_s, "phd_sample": sample}
    out = common.write_results("synth_v3", result, "\n".join(md) + "\n", args.out)
    print("\n".join(md))
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
