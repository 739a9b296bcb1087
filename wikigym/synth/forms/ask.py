"""A yes/no question (``Ask(arg, candidate)``, op ``ask``), and its form: "Is X the person
who ...?". An answer-valued root: whether the named ``candidate`` is in ``arg``'s set."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from wikigym.errors import SynthError
from wikigym.synth import idsets
from wikigym.synth.drafts import (
    Draft,
    QuestionForm,
    SamplerAPI,
    Shape,
    describe_answer,
    register_form,
)
from wikigym.synth.evaluate import Evaluator, Item, SetValue, contains
from wikigym.synth.forms.count import witness_members
from wikigym.synth.forms.entity import Entity
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.levels import LEVELS
from wikigym.synth.node import Answer, Node, Reassemble, register, relations_of
from wikigym.synth.render import Renderer, mark
from wikigym.synth.solving import Plan, Solver


@register
@dataclass(frozen=True, slots=True)
class Ask(Node):
    """Whether ``candidate`` (a named entity or value) is in ``arg``'s set."""

    arg: Node
    candidate: Node
    OP = "ask"

    def children(self) -> tuple[Node, ...]:
        return (self.arg, self.candidate)

    def with_children(self, children: Sequence[Node]) -> Node:
        arg, candidate = children
        return Ask(arg, candidate)

    def hops(self) -> int:
        return self.arg.hops()

    def paths(self) -> tuple[tuple[Node, int], ...]:
        return ((self.arg, 0),)

    def to_json(self) -> dict[str, Any]:
        return {"op": "ask", "arg": self.arg.to_json(), "candidate": self.candidate.to_json()}

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        cand = parse(data["candidate"])
        if cand.constant is None:
            raise SynthError("an ask node's candidate must be an entity or a value")
        return cls(parse(data["arg"]), cand)

    def root_form(self) -> str | None:
        return "yes_no"

    def closed_relations(self) -> tuple[str, ...]:
        return tuple(relations_of(self.arg))  # a "no" is the absence of a fact

    def evaluate(self, ev: Evaluator) -> SetValue:
        target = ev.value(self.arg)
        return frozenset(("yes" if contains(target, self.candidate.constant) else "no",))

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        witness_members(self.arg, ev, rows)

    def cores(self) -> list[tuple[Node, Reassemble]]:
        cand = self.candidate
        return [(self.arg, lambda a: Ask(a, cand))]

    def answer_text(self, graph: KnowledgeGraph, item: Item) -> str:
        return str(item)

    def answer(self, graph: KnowledgeGraph, item: Item) -> Answer:
        return str(item), [], "yes/no"

    def solve(self, s: Solver) -> Plan[str | None]:
        (candidate,) = (yield from s.members(self.candidate)) or ("",)
        return "yes" if candidate and (yield from s.holds(self.arg, candidate)) else "no"

    def question(self, r: Renderer) -> str:
        item = self.candidate.constant
        name = r.g.surface(item) if item is not None else ""
        return f"Is {mark(name)} {self.arg.noun_phrase(r)}?"


@register_form
class YesNoForm(QuestionForm):
    """ "Is X the person who ...?": the described answer or a near rival (the generator
    alternates the answers, so they stay 50/50). Drafted when a config asks for it."""

    name = "yes_no"

    def answer_nodes(self, answer: Item) -> tuple[Item, ...]:
        return ()  # computed: no node of the graph is the answer

    opt_in_weight = dict.fromkeys(LEVELS, 0.15)
    repeats_answers = True
    names_entities = True

    def draft(self, s: SamplerAPI, shape: Shape, level: str, want_yes: bool) -> Draft | None:
        got = describe_answer(s, shape)
        if got is None:
            return None
        e, node, _ = got
        g = s.g
        if want_yes:
            return Draft(Ask(node, Entity(e, g.titles[e])), "yes", self.name)
        kind = g.kinds[e]
        # A "no" candidate of the same kind that shares one of the answer's attributes.
        near = [g.subject_ids(g.f_rel[r], g.f_obj[r]) for r in g.out_rows.get(e, ())[:8]]
        ids = g.ids_of_kind(idsets.union_all(near), kind)
        pool = ids[ids != e].tolist()
        if not pool:
            return None
        other = pool[int(s.rng.integers(len(pool)))]
        return Draft(Ask(node, Entity(other, g.titles[other])), "no", self.name)
