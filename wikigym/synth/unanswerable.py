"""Questions with no answer: near-misses of proved tasks, and their proof of emptiness.

``synth generate --unanswerable RATE`` turns that share of the tasks into near-misses: one
constant of the proved query (a value that a constraint projects from, like the city in
"born in X") is replaced by another value of the same relation, so that the perturbed
constraint still has members of its own but nothing satisfies every constraint together.
The question is rendered by the same templates as the rest; the task's ``answer_type`` is
:data:`~wikigym.tasks.taskset.UNANSWERABLE`, its ``answer`` the placeholder
:data:`~wikigym.tasks.taskset.NO_ANSWER`, and only ``answer(abstain=true)`` scores.

The oracle gathers the evidence of the near-miss (the original task's calls: the one entity
that meets the other constraints, and its value of the perturbed relation) and abstains.
``synth verify`` proves emptiness the way it proves uniqueness: by evaluating the query over
every fact of the snapshot; it also checks that each constraint of every intersection is
satisfiable alone, and replays the oracle.
"""

from __future__ import annotations

import hashlib

import numpy as np

from wikigym.errors import SynthError
from wikigym.synth.evaluate import Evaluator
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.node import phrasing_rng
from wikigym.synth.oracle import run_oracle_calls
from wikigym.synth.query import Node, canonical, walk, wrap
from wikigym.synth.render import Renderer
from wikigym.tasks.taskset import NO_ANSWER, UNANSWERABLE, OracleCall, Task
from wikigym.tools import ToolBox

ABSTAIN_TEXT = "Nothing in the snapshot satisfies every condition of the question."
CANDIDATES_PER_SLOT = 24  # replacement values tried per constant before the next one


def unanswerable_slots(n: int, rate: float, seed: int) -> frozenset[int]:
    """The task indices to make unanswerable: ``round(rate * n)`` of ``range(n)``, seeded.

    Raises:
        SynthError: ``rate`` outside [0, 1].
    """
    if not 0.0 <= rate <= 1.0:
        raise SynthError(f"the unanswerable share must be in [0, 1], got {rate}")
    count = round(rate * n)
    if count == 0:
        return frozenset()
    order = np.random.default_rng([seed, 0xAB57]).permutation(n)
    return frozenset(int(i) for i in order[:count])


def _replace(node: Node, path: tuple[int, ...], new: Node) -> Node:
    """``node`` with the descendant at ``path`` (child indices) replaced by ``new``."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    kids = list(node.children())
    if not 0 <= head < len(kids):
        raise ValueError(f"no child {head} under {type(node).__name__}")
    kids[head] = _replace(kids[head], rest, new)
    return node.with_children(kids)


def _slots(node: Node, path: tuple[int, ...] = ()) -> list[tuple[tuple[int, ...], str, Node]]:
    """Constants linked inside a description ("whose R is c", one of several constraints):
    their paths (to the constant), their relation and the constant, in tree order."""
    out: list[tuple[tuple[int, ...], str, Node]] = []
    members = node.conjuncts()
    for i, arg in enumerate(node.children()):
        link = arg.link() if members is not None and len(members) > 1 else None
        if link is not None and link[1].constant is not None:
            j = arg.children().index(link[1])
            out.append(((*path, i, j), link[0], link[1]))
        out.extend(_slots(arg, (*path, i)))
    return out


def near_miss(root: Node, graph: KnowledgeGraph, rng: np.random.Generator) -> Node | None:
    """A perturbation of ``root`` with an empty answer set, or None when none is found.

    One constant of an intersection's constraint is replaced by another value of the same
    relation (of the same kind: an entity by an entity, a literal by a literal), chosen by
    ``rng`` among the values in sorted order; the result is kept when the perturbed
    constraint has members but the whole query has none.
    """
    ev = Evaluator(graph)
    slots = _slots(root)
    for s in rng.permutation(len(slots)):
        path, relation, const = slots[int(s)]
        current = const.constant
        if current is None:
            continue
        kind = type(current)
        # Another value that reads differently too: a literal spelled like the original
        # would make the question read as the answerable one.
        shown = graph.surface(current)
        values = sorted(
            v
            for v in graph.inv.get(relation, {})
            if isinstance(v, kind) and v != current and graph.surface(v) != shown
        )
        if not values:
            continue
        picks = rng.permutation(len(values))[:CANDIDATES_PER_SLOT]
        for p in picks:
            cand = _replace(root, path, const.with_constant(graph, values[int(p)]))
            ev.reset()
            if not ev.size(cand) and not emptiness_problems(cand, ev):
                return cand
    return None


def emptiness_problems(root: Node, ev: Evaluator) -> list[str]:
    """Why ``root`` is not a near-miss: it has answers, or some constraint of an intersection
    has no member of its own (a question that is empty for a trivial reason)."""
    n = ev.size(root)
    if n:
        return [f"query matches {n} answer(s); an unanswerable task must match none"]
    problems = []
    for node in walk(root):
        for arg in node.conjuncts() or ():
            if not ev.size(arg):
                problems.append(f"constraint {canonical(arg)[:80]} has no member on its own")
    return problems


def unanswerable_task(task: Task, root: Node, renderer: Renderer, graph: KnowledgeGraph) -> Task:
    """The unanswerable twin of the proved ``task`` with the near-miss query ``root``."""
    question = renderer.question(root, phrasing_rng(root, task.seed or 0))
    calls = [c for c in task.oracle if c.name != "answer"]
    oracle = [
        *calls,
        OracleCall(name="answer", arguments={"text": ABSTAIN_TEXT, "abstain": True}),
    ]
    difficulty = dict(task.difficulty)
    difficulty.pop("template_question", None)
    difficulty.pop("paraphrase", None)
    difficulty.update(form="unanswerable", near_miss_of=task.task_id, oracle_calls=len(oracle))
    digest = hashlib.sha256((canonical(root) + "|none").encode()).hexdigest()[:12]
    return task.model_copy(
        update={
            "task_id": f"synth-{task.level}-u{digest}",
            "question": question,
            "answer": NO_ANSWER,
            "aliases": [],
            "answer_type": UNANSWERABLE,
            "query": wrap(root),
            "rubric": [],
            "oracle": oracle,
            "difficulty": difficulty,
        }
    )


def verify_unanswerable(task: Task, root: Node, graph: KnowledgeGraph, box: ToolBox) -> list[str]:
    """The problems of an unanswerable task (empty when its emptiness is proved)."""
    problems = emptiness_problems(root, Evaluator(graph))
    if problems:
        return problems
    if task.answer != NO_ANSWER or task.aliases:
        problems.append(f"an unanswerable task's answer is {NO_ANSWER!r} without aliases")
    for f in task.evidence.facts:
        subject = -1 if f.subject_doc_id is None else f.subject_doc_id
        rows = graph.fwd.get(f.relation, {}).get(subject, ())
        if not any(graph.f_pid[r] == f.passage_id and graph.f_surface[r] == f.object for r in rows):
            problems.append(
                f"evidence fact {f.subject} -{f.relation}-> {f.object} is not in the snapshot"
            )
    problems.extend(_replay_abstaining_oracle(task, box))
    return problems


def _replay_abstaining_oracle(task: Task, box: ToolBox) -> list[str]:
    answer, problems = run_oracle_calls(task, box)
    if problems:
        return problems
    if answer is not None and not answer.abstain:
        return [f"the oracle answers {answer.text!r} instead of abstaining"]
    return []


__all__ = [
    "ABSTAIN_TEXT",
    "emptiness_problems",
    "near_miss",
    "unanswerable_slots",
    "unanswerable_task",
    "verify_unanswerable",
]
