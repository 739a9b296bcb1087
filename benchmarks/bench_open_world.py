"""synth on real, incomplete snapshots: the shared corpora's default questions, audited.

For each shared real corpus (the 206-page enwiki excerpt, the Japanese excerpt, the 2014
enwiki excerpt), built from ``$WIKIGYM_SHARED_DATA`` into ``benchmarks/work``:

1. the default questions a corpus given without tasks gets (``synth.default.corpus_taskset``):
   how many per level, the share marked ``closed_world`` (unique only inside the snapshot),
   and those that ask a **raw key** (a relation outside the typed vocabulary, or a question
   with a key-like token: "ld7", "population_total"; target 0), beside the one-hop questions
   of raw facts that were the default before (``tasks.one_hop``);
2. **multi-valued answers**: tasks whose answer is read off a named subject ("the official
   language of Algeria") while the snapshot's facts of that relation (every source, every
   value of a field) hold more values than the graph the proof ran on (the answer would be
   one of several; target 0). It counts facts: a snapshot whose reader kept one value of a
   field (before issue 35) shows none here;
3. **questions with no answer contradicted by the text**: ``--unanswerable`` of the medium
   tasks (and of hard where the corpus makes them) made near-misses, each run by the
   reference agent, which reads the pages: a near-miss it answers instead of abstaining is
   one the text may answer (target 0); near-misses the text check refused are counted too.

Usage:
    python benchmarks/bench_open_world.py [--unanswerable 0.5] [--n 40] [--seeds 10]
        [--before DIR]

``--before DIR`` counts multi-valued answers in TaskSets made elsewhere too (an older wikigym's
synth, on the same snapshots: ``DIR/<corpus>.jsonl``, the corpus named as in ``benchmarks/work``
without ``open-world-``), to show what the check finds where proofs held one value.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: wikigym
sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks: common

import common

from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
from wikigym.corpora.vocabulary import vocabulary
from wikigym.errors import SynthError
from wikigym.eval.reference import ReferenceAgent
from wikigym.eval.runner import run_eval
from wikigym.synth import SynthConfig, generate_tasks
from wikigym.synth.default import corpus_taskset
from wikigym.synth.evaluate import Evaluator
from wikigym.synth.graph import graph_of
from wikigym.synth.levels import LEVELS
from wikigym.synth.query import QUERY_FORMAT, relations_of, unwrap, walk
from wikigym.synth.solving import SEARCH_BUDGET
from wikigym.synth.templates import TEMPLATES
from wikigym.tasks.one_hop import one_hop_tasks
from wikigym.tasks.taskset import TaskSet

CORPORA = {
    "enwiki 206-page excerpt": "wiki/enwiki-excerpt-206pages.xml.bz2",
    "jawiki excerpt": "wiki/jawiki-excerpt-204articles.xml.bz2",
    "enwiki 2014 excerpt": "wiki/enwiki-2014-excerpt-215articles.xml.bz2",
}


def snapshot_of(name: str, source: str) -> Snapshot:
    """The corpus built by this code (a few seconds each): a snapshot left in the work folder
    by an older wikigym would measure that version's facts."""
    out = common.WORK / ("open-world-" + name.replace(" ", "-"))
    src = open_build_source(common.shared_data() / source)
    build_snapshot([src], out, BuildConfig(), progress=False, overwrite=True)
    return Snapshot.open(out)


# A raw key shows as a token with an underscore or letters and digits run together ("ld7",
# "population_total"); no typed relation's wording has one (as tests/test_corpus_default_tasks).
RAW_KEY = re.compile(r"\b(?:[a-z]+_[a-z_]+|[a-z]+\d+[a-z\d]*)\b")


def raw_keys(tasks: TaskSet) -> list[str]:
    """Questions that ask a raw infobox key: a relation no typed vocabulary or template
    names (synth's tasks), or a key-like token in the question (any task)."""
    typed = set(vocabulary().relations) | set(TEMPLATES)
    bad = []
    for t in tasks:
        synth = bool(t.query) and t.query.get("format") == QUERY_FORMAT  # one-hop: none
        relations = set(relations_of(unwrap(t.query))) if synth else set()
        if RAW_KEY.search(t.question) or not relations <= typed:
            bad.append(t.question)
    return bad


def multi_valued(snap: Snapshot, tasks: TaskSet) -> list[str]:
    """Tasks that read a value off a named subject for a relation of which the snapshot's
    facts (every source, every value of a field, stated in a passage or not) hold more
    values than the graph the proof ran on (see the module docstring)."""
    g = graph_of(snap)
    ev = Evaluator(g)
    bad = []
    for t in tasks:
        root = unwrap(t.query)
        for n in walk(root):
            att = n.attribute()
            if att is None:
                continue
            relation, subject = att
            members = [x for x in ev.eval(subject) if isinstance(x, int)]
            if len(members) != 1:
                continue
            (s,) = members
            held = len(g.objects(relation, s))
            listed = snap.sql(
                "SELECT count(DISTINCT coalesce(CAST(object_doc_id AS VARCHAR), object)) AS n "
                "FROM facts WHERE subject_doc_id = ? AND relation = ? AND typed",
                [s, relation],
            ).to_pylist()[0]["n"]
            if listed > held:
                bad.append(f"{t.task_id}: {t.question} ({listed} values stated, {held} held)")
                break
    return bad


def contradicted(snap: Snapshot, una: TaskSet, tmp: Path) -> list[str]:
    """The near-misses the reference agent answers from the text instead of abstaining."""
    if not len(una):
        return []
    path = una.save(tmp / "una.jsonl")
    run = run_eval(ReferenceAgent(), path, tmp / "ref", agent_name="reference",
                   corpus=snap.path, max_steps=SEARCH_BUDGET)  # fmt: skip
    question = {t.task_id: t.question for t in una}
    return [f"{r.task_id}: {question[r.task_id]}" for r in run.records if not r.success]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--unanswerable", type=float, default=0.5)
    p.add_argument("--n", type=int, default=40, help="tasks per level of the near-miss runs")
    p.add_argument("--seeds", type=int, default=10,
                   help="seeds of the near-miss runs (a small corpus makes few per seed)")  # fmt: skip
    p.add_argument("--before", type=Path, default=None,
                   help="folder of older TaskSets of these snapshots (see the docstring)")  # fmt: skip
    p.add_argument("--out", type=Path, default=common.RESULTS)
    args = p.parse_args()
    t0 = time.perf_counter()
    rows, data = [], {}
    for name, source in CORPORA.items():
        snap = snapshot_of(name, source)
        tasks = corpus_taskset(snap)
        levels = Counter(t.level for t in tasks)
        closed = Counter(t.level for t in tasks if t.difficulty.get("closed_world"))
        share = {lv: round(closed[lv] / levels[lv], 3) for lv in LEVELS if levels[lv]}
        total_share = round(sum(closed.values()) / len(tasks), 3)
        multi = multi_valued(snap, tasks)
        raw, old = raw_keys(tasks), one_hop_tasks(snap)
        before: dict[str, Any] = {}
        older = args.before / (name.replace(" ", "-") + ".jsonl") if args.before else None
        if older is not None and older.is_file():
            was = TaskSet.load(older)
            found = multi_valued(snap, was)
            gens = sorted({t.generator for t in was})
            before = {"generators": gens, "tasks": len(was), "multi_valued": found}
        old_raw = raw_keys(old)
        made: dict[str, Any] = {}
        near: dict[str, Any] = {}  # one near-miss per query, over every seed
        for level in ("medium", "hard"):
            made[level] = []
            for seed in range(args.seeds):
                config = SynthConfig(difficulty=level, n=args.n, seed=seed,
                                     unanswerable=args.unanswerable, partial=True)  # fmt: skip
                try:
                    got = generate_tasks(snap, config)
                except SynthError as exc:
                    made[level].append(f"seed {seed} refused: {exc}")
                    continue
                una = [t for t in got if t.unanswerable]
                made[level].append(f"seed {seed}: {len(una)} of {len(got)} with no answer")
                for t in una:
                    near.setdefault(t.task_id, t)  # one per query (ids name it)
        with tempfile.TemporaryDirectory() as tmp:
            wrong_tasks = contradicted(snap, TaskSet(list(near.values())), Path(tmp))
        wrong, run = len(wrong_tasks), len(near)
        data[name] = {
            "snapshot_id": snap.snapshot_id,
            "default_tasks": dict(levels),
            "closed_world_share": share,
            "closed_world_all": total_share,
            "multi_valued": multi,
            "raw_keys": raw,
            "before": before,
            "one_hop_raw_keys": {"tasks": len(old), "raw": len(old_raw), "first": old_raw[:5]},
            "near_misses": made,
            "near_misses_answered_from_text": wrong_tasks,
            "near_misses_run": run,
            "near_miss_questions": sorted(t.question for t in near.values()),
        }
        rows.append(
            [name, snap.snapshot_id[:12], ", ".join(f"{n} {lv}" for lv, n in sorted(levels.items())),
             f"{len(raw)} of {len(tasks)}", f"{len(old_raw)} of {len(old)}",
             f"{total_share:.1%}", ", ".join(f"{lv} {v:.0%}" for lv, v in share.items()),
             len(multi), f"{wrong} of {run}"]
        )  # fmt: skip
    total_s = round(time.perf_counter() - t0, 1)
    md = [
        f"The shared real corpora, their default questions (`corpus_taskset`) and near-misses "
        f"({args.unanswerable:.0%} of {args.n} medium and hard tasks where made, seeds 0-"
        f"{args.seeds - 1}, each distinct query run once by the reference agent). Wall time "
        f"{total_s} s.",
        "",
        common.markdown_table(
            [
                "corpus",
                "snapshot",
                "default questions",
                "raw keys",
                "raw keys (one-hop, before)",
                "closed_world",
                "closed_world by level",
                "multi-valued answers",
                "near-misses answered from the text",
            ],
            rows,
        ),
        "",
        *[f"- {name}: near-misses {d['near_misses']}" for name, d in data.items()],
    ]
    for name, d in data.items():
        for line in d["near_misses_answered_from_text"]:
            md.append(f"- answered from the text ({name}): {line}")
        for q in d["near_miss_questions"]:
            md.append(f"- near-miss ({name}): {q}")
    for name, d in data.items():
        if d["before"]:
            b = d["before"]
            md.append(f"- multi-valued answers of {', '.join(b['generators'])} ({name}, "
                      f"--before): {len(b['multi_valued'])} of {b['tasks']}")  # fmt: skip
            md.extend(f"  - {line}" for line in b["multi_valued"][:3])
    for name, d in data.items():
        for q in d["one_hop_raw_keys"]["first"][:2]:
            md.append(f"- one-hop raw key, the old default ({name}): {q}")
        for q in d["raw_keys"]:
            md.append(f"- raw key ({name}): {q}")
        for line in d["multi_valued"][:5]:
            md.append(f"- multi-valued ({name}): {line}")
    result = {"corpora": data, "seconds": total_s}
    out = common.write_results("open_world", result, "\n".join(md) + "\n", args.out)
    print("\n".join(md))
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
