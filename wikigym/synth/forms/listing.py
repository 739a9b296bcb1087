"""A set-valued answer (``Listed(relation, arg, most)``, op ``list``), and the list question
form: "Which three novels have X as their author? List them from the earliest to the latest
year of first appearance."

An answer-valued root: every member of ``arg``'s set, ordered by their ``relation`` measure
(the least first, or the greatest with ``most``), written "A, B and C". The order makes the
answer one string, so the env scores it as it scores any answer (exact match over the answer
and its aliases: "A, B, C" too); ties make no list (a tie has no order). Like a count, it is
right only when the set is complete (:meth:`Listed.closed_relations`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from wikigym.errors import SynthError
from wikigym.synth.drafts import Draft, QuestionForm, SamplerAPI, Shape, register_form
from wikigym.synth.evaluate import Evaluator, Item, SetValue, item_order
from wikigym.synth.forms.count import (
    NUMBER_WORDS,
    role_members,
    role_set,
    shared_object,
    witness_members,
)
from wikigym.synth.forms.entity import Entity
from wikigym.synth.forms.intersect import Intersect
from wikigym.synth.forms.isa import IsA
from wikigym.synth.forms.project import Project
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.node import (
    Answer,
    Hop,
    Node,
    Reassemble,
    presuppositions_hold,
    register,
    relations_of,
)
from wikigym.synth.render import Renderer, join, measure_noun
from wikigym.synth.solving import Plan, Solver
from wikigym.synth.templates import comparable

MEMBERS_MIN, MEMBERS_MAX = 2, 4  # members listed


def list_key(ids: list[int]) -> str:
    """The literal key of an ordered list of entities (a JSON array of their ids)."""
    return json.dumps(ids, separators=(",", ":"))


def parse_list_key(key: Item) -> list[int]:
    """The entity ids of a :func:`list_key`.

    Raises:
        SynthError: ``key`` is not one.
    """
    try:
        ids = json.loads(str(key))
    except ValueError as exc:
        raise SynthError(f"{str(key)[:40]!r} is not a list answer") from exc
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise SynthError(f"{str(key)[:40]!r} is not a list answer")
    return ids


def ordered(graph: KnowledgeGraph, relation: str, ids: np.ndarray, most: bool) -> list[int] | None:
    """``ids`` ordered by their least ``relation`` measure (greatest first with ``most``), or
    None when one has no measure or two tie."""
    vals = graph.least_measures(relation, ids)
    if np.isnan(vals).any() or len(set(vals.tolist())) != len(vals):
        return None
    order = sorted(range(len(ids)), key=lambda i: vals[i], reverse=most)
    return [int(ids[i]) for i in order]


@register
@dataclass(frozen=True, slots=True)
class Listed(Hop):
    """Every member of ``arg``, in ``relation`` order (least first; greatest with ``most``)."""

    relation: str
    arg: Node
    most: bool = False
    OP = "list"

    def to_json(self) -> dict[str, Any]:
        return {
            "op": "list",
            "relation": self.relation,
            "most": self.most,
            "arg": self.arg.to_json(),
        }

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        return cls(str(data["relation"]), parse(data["arg"]), bool(data["most"]))

    def root_form(self) -> str | None:
        return "list"

    def closed_relations(self) -> tuple[str, ...]:
        return (self.relation, *relations_of(self.arg))  # a missing member changes the list

    def presupposed(self) -> tuple[Node, ...]:
        return shared_object(self.arg)

    def evaluate(self, ev: Evaluator) -> SetValue:
        ids = ev.as_ids(ev.value(self.arg))
        if len(ids) < MEMBERS_MIN or len(ids) != ev.size(self.arg):
            return frozenset()
        got = ordered(ev.g, self.relation, ids, self.most)
        return frozenset() if got is None else frozenset((list_key(got),))

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        witness_members(self.arg, ev, rows)
        g = ev.g
        for m in sorted(ev.eval(self.arg), key=item_order):
            for r in g.fwd.get(self.relation, {}).get(m, ()):
                if g.f_measure[r] is not None:
                    rows.append(r)
                    break

    def cores(self) -> list[tuple[Node, Reassemble]]:
        relation, most = self.relation, self.most
        return [(self.arg, lambda a: Listed(relation, a, most))]

    def answer_text(self, graph: KnowledgeGraph, item: Item) -> str:
        return join([graph.titles[i] for i in parse_list_key(item)])

    def answer(self, graph: KnowledgeGraph, item: Item) -> Answer:
        names = [graph.titles[i] for i in parse_list_key(item)]
        shown = join(names)
        return shown, [", ".join(names)], "list"

    def question(self, r: Renderer) -> str:
        """ "Which three novels have X as their author? List them from the earliest to the
        latest year of first appearance." """
        many, role, x = role_set(r, self.arg)
        n = r.sizes(self.arg) if r.sizes is not None else 0
        count = NUMBER_WORDS[n] if 0 < n < len(NUMBER_WORDS) else "the"
        is_date = r.g.rel_types.get(self.relation) == "date"
        low, high = ("earliest", "latest") if is_date else ("smallest", "largest")
        first, last = (high, low) if self.most else (low, high)
        noun = measure_noun(self.relation)
        return (
            f"Which {count} {many} have {x} as their {role}? "
            f"List them from the {first} to the {last} {noun}."
        )

    def solve(self, s: Solver) -> Plan[str | None]:
        if not (yield from presuppositions_hold(self, s)):
            return None  # "How many people were born in [no such city]?" has no answer
        members = yield from s.members(self.arg)
        if not members:
            return None
        scored: list[tuple[float, str]] = []
        for m in members:
            if not isinstance(m, str):
                return None
            v = yield from s.measure(m, self.relation)
            if v is None:
                return None
            scored.append((v, m))
        scored.sort(key=lambda x: x[0], reverse=self.most)
        return join([m for _, m in scored])


@register_form
class ListForm(QuestionForm):
    """ "Which three novels have X as their author? List them from the earliest ...": the
    2-4 subjects of one role fact, in the order of a measure they all have."""

    name = "list"

    def answer_nodes(self, answer: Item) -> tuple[Item, ...]:
        return tuple(parse_list_key(answer))  # each member is read in text

    def draft(self, s: SamplerAPI, shape: Shape, level: str, want_yes: bool) -> Draft | None:
        depth = shape.depth - 1  # reading each member's measure is the last hop
        role = role_members(s, depth, MEMBERS_MIN, MEMBERS_MAX)
        if role is None:
            return None
        g = s.g
        subject, rel, o, kind, members = role
        measures = [m for m in s.measured_rels(subject) if comparable(m)]
        measures = [m for m in measures if ordered(g, m, members, False) is not None]
        if not measures:
            return None
        measure = measures[int(s.rng.integers(len(measures)))]
        most = bool(s.rng.random() < 0.3)
        if depth == 1:
            arg: Node = Entity(o, g.titles[o])
        else:
            got = s.describe(o, depth - 1, shape, frozenset(members.tolist()), top=False)
            if got is None:
                return None
            arg = got[0]
        got_order = ordered(g, measure, members, most)
        if got_order is None:
            return None
        root = Listed(measure, Intersect((IsA(kind), Project(rel, arg, inverse=True))), most)
        return Draft(root, list_key(got_order), self.name)
