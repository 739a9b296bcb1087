"""Re-proving tasks against a snapshot (``synth verify``).

For each task: the snapshot id matches; the formal query evaluates, over every fact of the
snapshot, to exactly the stated answer; the difficulty measures recomputed from the query and
the oracle match the stored ones and meet the task's level; neither the answer nor an alias
occurs in the question; every evidence fact exists at its passage; and the query is minimal (no
constraint can be dropped with the same answer); hard and phd tasks have no anchor-page
shortcut (:mod:`wikigym.synth.minimal`); and the oracle, replayed
through the env's tools, runs without a tool error, shows every passage it cites, and answers
the stated answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from wikigym.corpora.snapshot import Snapshot
from wikigym.envs.metrics import best_match
from wikigym.errors import SynthError
from wikigym.synth.evaluate import Evaluator
from wikigym.synth.fields import unheld_value
from wikigym.synth.generate import (
    SHORTCUT_LEVELS,
    distractor_stats,
    generator_version,
    honest_question,
    names_candidate,
)
from wikigym.synth.graph import KnowledgeGraph, graph_of
from wikigym.synth.levels import level_problems
from wikigym.synth.minimal import anchor_shortcut, effective_hops, redundant
from wikigym.synth.oracle import run_oracle_calls
from wikigym.synth.paraphrase import contains_word
from wikigym.synth.query import Node, measures, unwrap
from wikigym.synth.render import Renderer
from wikigym.synth.surfacing import unsurfaced
from wikigym.synth.unanswerable import verify_unanswerable
from wikigym.synth.values import format_number
from wikigym.tasks.taskset import Task, TaskSet
from wikigym.tools import ToolBox

_CHECKED = (
    "hops",
    "constraints",
    "intersections",
    "obfuscated_values",
    "described_entities",
    "distractor_min",
    "oracle_calls",
    "unsurfaced",
)
SURFACED_SINCE = 6  # the generator version that measures unsurfaced layers


_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Failure:
    """One task that did not verify."""

    task_id: str
    reason: str


def _answer_strings(graph: KnowledgeGraph, item: int | str) -> set[str]:
    if isinstance(item, int):
        return {graph.titles[item]}
    out = {item, graph.surface(item)}
    if _PLAIN_NUMBER.fullmatch(item):
        out.add(format_number(float(item)))  # a computed number is shown grouped
    return out


def verify_task(task: Task, snapshot: Snapshot, graph: KnowledgeGraph, box: ToolBox) -> list[str]:
    """The problems of one task (empty when it is proved)."""
    problems: list[str] = []
    if task.snapshot_id != snapshot.snapshot_id:
        return [f"made for snapshot {str(task.snapshot_id)[:16]}, not {snapshot.snapshot_id[:16]}"]
    try:
        root = unwrap(task.query)
    except SynthError as exc:
        return [str(exc)]
    ev = Evaluator(graph)
    try:
        result = ev.eval(root)
    except SynthError as exc:
        return [f"query does not evaluate: {exc}"]
    if task.unanswerable:  # emptiness, proved like uniqueness
        return [
            *verify_unanswerable(task, root, graph, box),
            *wording_problems(task, root, graph, ev),
        ]
    if len(result) != 1:
        return [f"query matches {len(result)} answers, not exactly one"]
    (item,) = tuple(result)
    if task.answer not in _answer_strings(graph, item) and task.answer != root.answer_text(
        graph, item
    ):
        problems.append(f"answer {task.answer!r} is not the query's answer {graph.surface(item)!r}")
    # Measures.
    m: dict[str, float | int | str] = dict(measures(root))
    m["distractor_min"], _ = distractor_stats(root, ev)
    m["oracle_calls"] = len(task.oracle)
    if generator_version(task.generator) >= SURFACED_SINCE:
        m["unsurfaced"] = unsurfaced(root, ev, snapshot.search)
        if (unheld := unheld_value(root, ev, snapshot)) is not None:
            problems.append(f"the snapshot states a value the proof did not hold ({unheld})")
    for k in _CHECKED:
        if k in task.difficulty and task.difficulty[k] != m[k]:
            problems.append(f"difficulty {k}={task.difficulty[k]} but the query gives {m[k]}")
    problems.extend(level_problems(task.level or "", m))
    # Minimality: no strictly smaller sub-query has the same answer.
    smaller = redundant(root, ev)
    if smaller:
        problems.append(
            f"the query is not minimal: {len(smaller)} smaller sub-quer"
            f"{'y' if len(smaller) == 1 else 'ies'} give the same answer (effective hops "
            f"{effective_hops(root, ev)}, labelled {m['hops']})"
        )
    if "effective_hops" in task.difficulty and task.difficulty["effective_hops"] != m["hops"]:
        problems.append(
            f"difficulty effective_hops={task.difficulty['effective_hops']} but the query "
            f"gives {m['hops']}"
        )
    if task.level in SHORTCUT_LEVELS:
        where = anchor_shortcut(root, item, graph, snapshot.passages_of, ev)
        if where:
            problems.append(
                f"the answer is on a named constant's page with an asked attribute ({where})"
            )
    # Leaks.
    if task.answer_type != "yes/no" and not names_candidate(root, item):
        questions = [task.question, str(task.difficulty.get("template_question", ""))]
        for gold in task.golds:
            if any(q and contains_word(q, gold) for q in questions):
                problems.append(f"the question gives the answer away ({gold!r})")
    problems.extend(wording_problems(task, root, graph, ev))
    # Evidence: every fact is in the snapshot where the task says it is stated, and some
    # fact is stated in a passage (a category line or a Wikidata statement alone is never
    # a task's only evidence).
    if task.evidence.facts and all(f.passage_id is None for f in task.evidence.facts):
        problems.append("no evidence fact is stated in a passage")
    for f in task.evidence.facts:
        obj = f.object_doc_id if f.object_doc_id is not None else None
        subject = -1 if f.subject_doc_id is None else f.subject_doc_id
        rows = graph.fwd.get(f.relation, {}).get(subject, ())
        ok = any(
            (graph.f_pid[r] == f.passage_id if f.passage_id is not None else not graph.stated(r))
            and (graph.f_obj[r] == obj if obj is not None else graph.f_surface[r] == f.object)
            for r in rows
        )
        if not ok:
            problems.append(
                f"evidence fact {f.subject} -{f.relation}-> {f.object} (p{f.passage_id}) "
                "is not in the snapshot"
            )
    problems.extend(replay_oracle(task, box, item, graph))
    return problems


DEFINITE_SINCE = 6  # the generator version from which descriptions are definite only when one


def wording_problems(task: Task, root: Node, graph: KnowledgeGraph, ev: Evaluator) -> list[str]:
    """Since ``wikigym.synth/6``: the template question is the one the query says, and every
    description it says definitely ("the person who ...", "this person") denotes one entity
    of the snapshot (TaskSets of older generators are not held to it)."""
    if generator_version(task.generator) < DEFINITE_SINCE or task.seed is None:
        return []
    r = Renderer(graph, np.random.default_rng(0))
    said = honest_question(root, r, ev, task.seed)
    wanted = str(task.difficulty.get("template_question", task.question))
    if said is None:
        many = [n for n in r.definites if ev.size(n) > 1]
        return [
            f"the question says {len(many) or 'some'} description(s) definitely that fit several "
            f"entities ({'; '.join(r.unfit) or 'the proof finds them'})"
        ]
    if said != wanted:
        return [f"the question is not the one its query says ({said[:80]!r})"]
    return []


def replay_oracle(task: Task, box: ToolBox, item: int | str, graph: KnowledgeGraph) -> list[str]:
    """Problems of the oracle trajectory, run through the env's tools."""
    answer, problems = run_oracle_calls(task, box)
    if problems:
        return problems
    if answer is not None and not best_match(answer.text, task.golds)[0]:
        return [f"the oracle answers {answer.text!r}, not {task.answer!r}"]
    return []


def verify_taskset(tasks: TaskSet, snapshot: Snapshot) -> list[Failure]:
    """Every failure of ``tasks`` against ``snapshot`` (empty: all proved)."""
    graph = graph_of(snapshot)
    box = ToolBox(snapshot)
    failures = []
    for task in tasks:
        for reason in verify_task(task, snapshot, graph, box):
            failures.append(Failure(task.task_id, reason))
    return failures


__all__ = ["Failure", "replay_oracle", "verify_task", "verify_taskset"]
