"""A total (``Total(relation, arg)``, op ``total``), and its question form: the sum of one
measure over a described set ("What is the total population of the cities that have X as
their country?").

An aggregation: an answer-valued root, like a count, whose value is the sum of every
member's ``relation`` measure (each member's least, as everywhere measures are compared).
Each member is one more hop: its measure is read from its own page, so the question has
one hop more than its set. It is right only when the set and its measures are complete
(:meth:`Total.closed_relations`). Drafted only on request (``synth generate --forms total``):
the default mix of ``wikigym.synth/5`` does not draft it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from wikigym.errors import SynthError
from wikigym.synth.drafts import Draft, QuestionForm, SamplerAPI, Shape, register_form
from wikigym.synth.evaluate import Evaluator, Item, SetValue, item_order, number_key
from wikigym.synth.forms.arith import SUMMABLE
from wikigym.synth.forms.count import role_members, role_set, shared_object
from wikigym.synth.forms.entity import Entity
from wikigym.synth.forms.intersect import Intersect
from wikigym.synth.forms.isa import IsA
from wikigym.synth.forms.project import Project
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.node import (
    Hop,
    Node,
    Numeric,
    Reassemble,
    presuppositions_hold,
    register,
    relations_of,
)
from wikigym.synth.render import Renderer, measure_noun
from wikigym.synth.solving import Plan, Solver
from wikigym.synth.values import format_number

MEMBERS_MIN, MEMBERS_MAX = 2, 4  # members summed (each is a page the oracle reads)


def total_of(graph: KnowledgeGraph, relation: str, ids: np.ndarray) -> float | None:
    """The sum of the least ``relation`` measure of each entity of ``ids`` (exactly
    rounded), or None when ``ids`` is empty or some entity has no such measure."""
    if not len(ids):
        return None
    vals = graph.least_measures(relation, ids)
    if np.isnan(vals).any():
        return None
    return math.fsum(vals.tolist())


def least_row(graph: KnowledgeGraph, relation: str, e: Item) -> int | None:
    """The fact row of ``e``'s least ``relation`` measure (the first such row)."""
    best: int | None = None
    low = math.inf
    for r in graph.fwd.get(relation, {}).get(e, ()):
        m = graph.f_measure[r]
        if m is not None and m < low:
            best, low = r, m
    return best


@register
@dataclass(frozen=True, slots=True)
class Total(Hop, Numeric):
    """The sum of the ``relation`` measures of ``arg``'s members."""

    relation: str
    arg: Node
    OP = "total"

    def to_json(self) -> dict[str, Any]:
        return {"op": "total", "relation": self.relation, "arg": self.arg.to_json()}

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        return cls(str(data["relation"]), parse(data["arg"]))

    def root_form(self) -> str | None:
        return "total"

    def closed_relations(self) -> tuple[str, ...]:
        # A missing member, or a missing measure, changes the sum.
        return (self.relation, *relations_of(self.arg))

    def presupposed(self) -> tuple[Node, ...]:
        return shared_object(self.arg)

    def evaluate(self, ev: Evaluator) -> SetValue:
        members = ev.value(self.arg)
        ids = ev.as_ids(members)
        if len(ids) != len(members):  # literals have no measure to add
            return frozenset()
        got = total_of(ev.g, self.relation, ids)
        return frozenset() if got is None else frozenset((number_key(got),))

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        # Every member, and the measure that was added for it.
        for m in sorted(ev.eval(self.arg), key=item_order):
            self.arg.witness(ev, m, rows)
            r = least_row(ev.g, self.relation, m)
            if r is None:
                raise SynthError(f"{m!r} has no {self.relation} to add")
            rows.append(r)
            ev.check_passages(rows)

    def cores(self) -> list[tuple[Node, Reassemble]]:
        relation = self.relation
        return [(self.arg, lambda a: Total(relation, a))]

    def solve(self, s: Solver) -> Plan[str | None]:
        if not (yield from presuppositions_hold(self, s)):
            return None  # "How many people were born in [no such city]?" has no answer
        members = yield from s.members(self.arg)
        if not members:
            return None
        total = 0.0
        for m in members:
            v = (yield from s.measure(m, self.relation)) if isinstance(m, str) else None
            if v is None:
                return None
            total += v
        return format_number(total)

    def question(self, r: Renderer) -> str:
        """ "What is the total population of the cities that have X as their country?"."""
        many, role, x = role_set(r, self.arg)
        measure = measure_noun(self.relation)
        return r.pick(
            [
                f"What is the total {measure} of the {many} that have {x} as their {role}?",
                f"What is the combined {measure} of all {many} whose {role} is {x}?",
            ]
        )


@register_form
class TotalForm(QuestionForm):
    """ "What is the total population of the cities that have X as their country?": 2-4
    subjects of one role fact, every one with the summed measure."""

    name = "total"

    def answer_nodes(self, answer: Item) -> tuple[Item, ...]:
        return ()  # computed: no node of the graph is the answer

    # Medium: a set of named members' measures is two hops. (A deeper set rarely meets hard's
    # structure: 2 of 600 drafts on the embedded world.)
    opt_in_weight: ClassVar[dict[str, float]] = {"medium": 0.05}

    def draft(self, s: SamplerAPI, shape: Shape, level: str, want_yes: bool) -> Draft | None:
        depth = shape.depth - 1  # reading each member's measure is the last hop
        role = role_members(s, depth, MEMBERS_MIN, MEMBERS_MAX)
        if role is None:
            return None
        g = s.g
        subject, rel, o, kind, members = role
        summable = [m for m in s.measured_rels(subject) if any(w in m for w in SUMMABLE)]
        summable = [m for m in summable if total_of(g, m, members) is not None]
        if not summable:
            return None
        measure = summable[int(s.rng.integers(len(summable)))]
        if depth == 1:
            arg: Node = Entity(o, g.titles[o])
        else:
            got = s.describe(o, depth - 1, shape, frozenset(members.tolist()), top=False)
            if got is None:
                return None
            arg = got[0]
        total = total_of(g, measure, members)
        if total is None:
            return None
        root = Total(measure, Intersect((IsA(kind), Project(rel, arg, inverse=True))))
        return Draft(root, number_key(total), self.name)
