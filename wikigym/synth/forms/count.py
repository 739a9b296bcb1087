"""A count (``Count(arg)``, op ``count``), and the count question form: "How many novels
have X as their author?". An answer-valued root: the size of ``arg``'s set."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from wikigym.synth.drafts import Draft, QuestionForm, SamplerAPI, Shape, register_form
from wikigym.synth.evaluate import Evaluator, Item, SetValue, item_order
from wikigym.synth.forms.entity import Entity
from wikigym.synth.forms.intersect import Intersect
from wikigym.synth.forms.isa import IsA
from wikigym.synth.forms.project import Project
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.idsets import intersect
from wikigym.synth.node import (
    Answer,
    Node,
    Reassemble,
    Unary,
    constraints,
    kind_of,
    presuppositions_hold,
    register,
    relations_of,
)
from wikigym.synth.render import Renderer, measure_noun
from wikigym.synth.solving import Plan, Solver
from wikigym.synth.templates import plural, relation_text

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def witness_members(node: Node, ev: Evaluator, rows: list[int]) -> None:
    """The witness of every member of ``node``'s set, in item order (stopped when the
    rows state more passages than the witness allows)."""
    for m in sorted(ev.eval(node), key=item_order):
        node.witness(ev, m, rows)
        ev.check_passages(rows)


def role_set(r: Renderer, node: Node) -> tuple[str, str, str]:
    """(kind in the plural, role, the object's phrase) of a set of the subjects of one role
    fact: ("cities", "country", "X") of the cities that have X as their country."""
    kind = kind_of(node) or "entrie"
    (member,) = constraints(node)
    link = member.link()
    if link is None:
        raise ValueError(f"expected the subjects of one relation, not {member}")
    relation, obj = link
    role = relation_text(relation).role or measure_noun(relation)
    r.require_definite(obj, "object the members share")
    return plural(kind), role, obj.noun_phrase(r)


def shared_object(node: Node) -> tuple[Node, ...]:
    """The object of the one role fact a set's members share ("X" of "the novels whose
    author is X"), which a question about the set says exists."""
    cons = constraints(node)
    link = cons[0].link() if len(cons) == 1 else None
    return () if link is None else (link[1],)


@register
@dataclass(frozen=True, slots=True)
class Count(Unary):
    """How many members ``arg``'s set has."""

    arg: Node
    OP = "count"

    def to_json(self) -> dict[str, Any]:
        return {"op": "count", "arg": self.arg.to_json()}

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        return cls(parse(data["arg"]))

    def root_form(self) -> str | None:
        return "count"

    def closed_relations(self) -> tuple[str, ...]:
        return tuple(relations_of(self.arg))  # a missing fact changes the count

    def presupposed(self) -> tuple[Node, ...]:
        return shared_object(self.arg)

    def evaluate(self, ev: Evaluator) -> SetValue:
        return frozenset((str(len(ev.value(self.arg))),))

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        witness_members(self.arg, ev, rows)

    def cores(self) -> list[tuple[Node, Reassemble]]:
        return [(self.arg, Count)]

    def answer_text(self, graph: KnowledgeGraph, item: Item) -> str:
        return str(item)

    def answer(self, graph: KnowledgeGraph, item: Item) -> Answer:
        n = int(item)
        return str(item), ([NUMBER_WORDS[n]] if n < len(NUMBER_WORDS) else []), "count"

    def solve(self, s: Solver) -> Plan[str | None]:
        if not (yield from presuppositions_hold(self, s)):
            return None  # "How many people were born in [no such city]?" has no answer
        members = yield from s.members(self.arg)
        return None if members is None else str(len(members))

    def question(self, r: Renderer) -> str:
        """ "How many novels have X as their author?" and its variants."""
        many, role, x = role_set(r, self.arg)
        return r.pick(
            [
                f"How many {many} have {x} as their {role}?",
                f"For how many {many} is {x} the {role}?",
                f"Count the {many} whose {role} is {x}.",
            ]
        )


@register_form
class CountForm(QuestionForm):
    """ "How many people have X as their birthplace?": 2-5 subjects of one role fact (2-9
    when X is a deep description)."""

    name = "count"

    def answer_nodes(self, answer: Item) -> tuple[Item, ...]:
        return ()  # computed: no node of the graph is the answer

    def draft(self, s: SamplerAPI, shape: Shape, level: str, want_yes: bool) -> Draft | None:
        if not len(s.role_rows):
            return None
        g = s.g
        row = int(s.role_rows[int(s.rng.integers(len(s.role_rows)))])
        subject, rel, o = g.f_subj[row], g.f_rel[row], g.f_obj[row]
        if not isinstance(o, int):
            return None
        kind = g.kinds[subject]
        if kind is None:
            return None
        members = intersect(g.subject_ids(rel, o), g.member_ids(kind))
        # Wider sets when the description is deep: counting is then the hard part.
        if not 2 <= len(members) <= (5 if shape.depth <= 2 else 9):
            return None
        if shape.depth == 1:
            arg: Node = Entity(o, g.titles[o])
        else:
            visited = frozenset(members.tolist())
            got = s.describe(o, shape.depth - 1, shape, visited, top=False)
            if got is None:
                return None
            arg = got[0]
        root = Count(Intersect((IsA(kind), Project(rel, arg, inverse=True))))
        return Draft(root, str(len(members)), self.name)


def role_members(
    s: SamplerAPI, depth: int, lo: int, hi: int
) -> tuple[int, str, int, str, np.ndarray] | None:
    """A random role fact's object and the ``lo``..``hi`` subjects of its kind that share it
    (``(subject, relation, object, kind, members)``), or None (no hop left, no role fact,
    a value object or a set of another size). What list and total questions are drawn over."""
    if depth < 1 or not len(s.role_rows):
        return None
    g = s.g
    row = int(s.role_rows[int(s.rng.integers(len(s.role_rows)))])
    subject, rel, o = g.f_subj[row], g.f_rel[row], g.f_obj[row]
    kind = g.kinds[subject]
    if kind is None or not isinstance(o, int):
        return None
    members = intersect(g.subject_ids(rel, o), g.member_ids(kind))
    if not lo <= len(members) <= hi:
        return None
    return subject, rel, o, kind, members
