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
import re
from collections.abc import Callable, Sequence

import numpy as np

from wikigym.errors import SynthError
from wikigym.synth.evaluate import Evaluator, Item
from wikigym.synth.forms.intersect import Intersect
from wikigym.synth.forms.isa import IsA
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.minimal import contains_phrase
from wikigym.synth.oracle import run_oracle_calls
from wikigym.synth.query import Node, canonical, relations_of, walk, wrap
from wikigym.synth.templates import relation_text
from wikigym.tasks.taskset import NO_ANSWER, UNANSWERABLE, OracleCall, Task
from wikigym.tools import ToolBox

_DISAMBIGUATOR = re.compile(r"\s+\([^()]*\)$")
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


Trust = Callable[[Node, tuple[int, ...]], bool]
"""Whether a near-miss (its query, and the path of the replaced constant) may be believed to
have no answer beyond the snapshot's facts."""


def near_miss(
    root: Node, graph: KnowledgeGraph, rng: np.random.Generator, trust: Trust | None = None
) -> Node | None:
    """A perturbation of ``root`` with no answer, or None when none is found.

    One constant of an intersection's constraint is replaced by another value of the same
    relation (of the same kind: an entity by an entity, a literal by a literal), chosen by
    ``rng`` among the values in sorted order; the result is kept when the perturbed
    constraint has members but the whole question has no answer (:func:`no_answer`), and
    ``trust`` (when given) believes it: on a snapshot whose facts are not complete, a
    missing fact is not an absent one.
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
            if not emptiness_problems(cand, ev) and (trust is None or trust(cand, path)):
                return cand
    return None


def no_answer(root: Node, ev: Evaluator) -> bool:
    """Whether the question of ``root`` has no answer: its set is empty, or a description it
    says exists denotes nothing (a comparison's candidate, a count's object:
    :meth:`~wikigym.synth.node.Node.presupposed`)."""
    if not ev.size(root):
        return True
    return any(not ev.size(p) for n in walk(root) for p in n.presupposed())


class BelievedEmpty:
    """The :data:`Trust` of near-misses on one snapshot: one whose facts are complete for the
    query's relations (a generated world, :meth:`KnowledgeGraph.complete`) is believed; any
    other only when a text check finds nothing that might state the replaced constraint for
    an entity that meets the rest of its description (:func:`text_states_near_miss`).

    Attributes:
        refused: Near-misses the text check refused so far.
        last_reason: Why the last one was refused.
    """

    def __init__(
        self,
        graph: KnowledgeGraph,
        passages_of: Callable[[int], Sequence[object]],
        search: Callable[[str, int], Sequence[object]],
    ) -> None:
        self.graph = graph
        self.passages_of = passages_of
        self.search = search
        self.refused = 0
        self.last_reason = ""

    def __call__(self, cand: Node, path: tuple[int, ...]) -> bool:
        if self.graph.complete(relations_of(cand)):
            return True
        why = text_states_near_miss(cand, path, self.graph, self.passages_of, self.search)
        if why is not None:
            self.refused += 1
            self.last_reason = why
        return why is None


TEXT_CHECK_CANDIDATES = 24  # entities whose pages a text check reads (more: refused)
TEXT_CHECK_HITS = 20  # search hits a text check reads


def text_states_near_miss(
    root: Node,
    path: tuple[int, ...],
    graph: KnowledgeGraph,
    passages_of: Callable[[int], Sequence[object]],
    search: Callable[[str, int], Sequence[object]],
) -> str | None:
    """Where the snapshot's text might give the near-miss an answer, or None when it does not.

    The replaced constant sits in one constraint of a description; the entities that meet
    the description's other constraints are the ones that would answer if the text said
    they meet it too (Algeria's infobox lists Berber as well as Arabic; the article says
    Catalan is spoken where the facts record only Spanish). The check reads each such
    entity's page for the new constant's name, and searches for the constant with the
    relation's words, refusing when a hit is on such an entity's page. Too many such
    entities to read is a refusal too. First of all, a kind is a label a reader does not
    hold the question to: a near-miss that an entity of another kind answers ("the state
    whose official language is Arabic": Algeria, a country; "the province that joined its
    federation on 3 January 1959": Alaska, a state) is refused."""
    intersect_path, constraint_at = path[:-2], path[-2]
    description = _at(root, intersect_path)
    members = description.conjuncts() or ()
    other_kind = _answered_by_another_kind(members, graph)
    if other_kind is not None:
        return other_kind
    rest = Intersect(tuple(a for i, a in enumerate(members) if i != constraint_at))
    constraint = members[constraint_at]
    link = constraint.link()
    if link is None or link[1].constant is None:
        return "the replaced constraint is not a named value"
    relation, value = link[0], link[1].constant
    ev = Evaluator(graph)
    candidates = sorted(x for x in ev.eval(rest) if isinstance(x, int))
    if len(candidates) > TEXT_CHECK_CANDIDATES:
        return f"{len(candidates)} entities meet the rest of the description: too many to read"
    names = [n.casefold() for n in _names_of(graph, value)]
    for doc in candidates:
        for p in passages_of(doc):
            text = str(getattr(p, "text", "")).casefold()
            if any(contains_phrase(text, n) for n in names):
                return f"p{getattr(p, 'passage_id', '?')} on {graph.titles[doc]} names {names[0]!r}"
    keywords = " ".join(relation_text(relation).keywords[:1])
    query = f"{graph.surface(value)} {keywords}".strip()
    docs = set(candidates)
    for hit in search(query, TEXT_CHECK_HITS):
        if getattr(hit, "doc_id", None) in docs:
            return f"a search for {query!r} finds {getattr(hit, 'title', '?')}"
    return None


def _answered_by_another_kind(members: Sequence[Node], graph: KnowledgeGraph) -> str | None:
    """Why a reader would take the near-miss's description to name an entity: one of another
    kind meets every other constraint of it; None when none does (or it names no kind).

    A real wiki's kinds are its infobox templates, and their words overlap ("state",
    "country", "province"): Algeria, a country, is a state whose official language is
    Arabic to any reader. The description is held to its constraints without the kind, not
    the whole question: the facts that would rule the entity out further up (Albania's
    population, under another infobox field) are the incomplete ones."""
    rest = tuple(a for a in members if not isinstance(a, IsA))
    if len(rest) == len(members) or not rest:
        return None
    kinds = ", ".join(sorted(a.kind for a in members if isinstance(a, IsA)))
    found = sorted(x for x in Evaluator(graph).eval(Intersect(rest)) if isinstance(x, int))
    if not found:
        return None
    return f"{graph.titles[found[0]]} meets the description but is not a {kinds}"


def _at(node: Node, path: tuple[int, ...]) -> Node:
    for i in path:
        node = node.children()[i]
    return node


def _names_of(graph: KnowledgeGraph, item: Item) -> list[str]:
    if isinstance(item, int):
        title = graph.titles[item]
        return list(dict.fromkeys((title, _DISAMBIGUATOR.sub("", title))))
    return list(dict.fromkeys((graph.surface(item), item)))


def emptiness_problems(root: Node, ev: Evaluator) -> list[str]:
    """Why ``root`` is not a near-miss: it has answers, or some constraint of an intersection
    has no member of its own (a question that is empty for a trivial reason)."""
    if not no_answer(root, ev):
        n = ev.size(root)
        return [f"query matches {n} answer(s); an unanswerable task must match none"]
    problems = []
    for node in walk(root):
        for arg in node.conjuncts() or ():
            # An exclusion ("not born in X") holds for nearly everyone: no trivial emptiness.
            if arg.negated is None and not ev.size(arg):
                problems.append(f"constraint {canonical(arg)[:80]} has no member on its own")
    return problems


def unanswerable_task(task: Task, root: Node, question: str) -> Task:
    """The unanswerable twin of the proved ``task`` with the near-miss query ``root``, said
    as ``question`` (:meth:`~wikigym.synth.generate.TaskBuilder.say`)."""
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
        if not any(
            (graph.f_pid[r] == f.passage_id if f.passage_id is not None else not graph.stated(r))
            and graph.f_surface[r] == f.object
            for r in rows
        ):
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
    "BelievedEmpty",
    "emptiness_problems",
    "near_miss",
    "no_answer",
    "text_states_near_miss",
    "unanswerable_slots",
    "unanswerable_task",
    "verify_unanswerable",
]
