"""A negation (``Not(arg)``, op ``not``), and the negation question form: "who was not born
in X". Only a member of an intersection: what ``arg`` does not hold, among what the other
members hold."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from wikigym.errors import SynthError
from wikigym.synth.drafts import Cut, Layer, SamplerAPI, SpecialForm, register_form
from wikigym.synth.evaluate import Evaluator, SetValue
from wikigym.synth.forms.entity import Entity
from wikigym.synth.forms.project import Project, literal_words
from wikigym.synth.node import Node, Unary, register, relations_of
from wikigym.synth.render import Renderer
from wikigym.synth.solving import Found, Plan, Solver
from wikigym.synth.templates import negated_clauses


@register
@dataclass(frozen=True, slots=True)
class Not(Unary):
    """Inside an intersection only: what ``arg`` does not hold."""

    arg: Node
    OP = "not"

    def with_children(self, children: Sequence[Node]) -> Node:
        (arg,) = children
        return Not(arg)

    def paths(self) -> tuple[tuple[Node, int], ...]:
        return ()  # what is excluded is no path to the answer

    @property
    def negated(self) -> Node:
        return self.arg

    def to_json(self) -> dict[str, Any]:
        return {"op": "not", "arg": self.arg.to_json()}

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        return cls(parse(data["arg"]))

    def forms(self, listed: bool) -> tuple[str, ...]:
        return ("negation",)

    def own_clauses(self) -> int:
        return 1

    def closed_relations(self) -> tuple[str, ...]:
        # "not born in X" is proved by the absence of a fact: only as good as the relation
        # is complete.
        return tuple(relations_of(self.arg))

    def evaluate(self, ev: Evaluator) -> SetValue:
        raise SynthError("a 'not' query node must be an argument of an 'and' node")

    def reductions(self) -> Iterator[Node]:
        return self.reduced_children()

    def clause(self, r: Renderer, who: str) -> str:
        """ "who was not born in X": a negated one-hop constraint."""
        link = self.arg.link()
        if link is not None:
            relation, obj = link
            options = negated_clauses(relation)
            if options:
                bare, at = literal_words(r, obj)
                return r.pick(options).format(who=who, o=bare, o_at=at)
        return f"{who} is not {self.arg.noun_phrase(r)}"

    def test(self, s: Solver, item: Found) -> Plan[bool]:
        return not (yield from s.holds(self.arg, item))


@register_form
class NegationForm(SpecialForm):
    """ "who was not born in X": a rival's fact the answer does not share."""

    name = "negation"

    def cut(self, s: SamplerAPI, layer: Layer) -> Cut | None:
        g = s.g
        e, cand = layer.e, layer.cand
        rivals = cand[cand != e].tolist()
        if not rivals:
            return None
        for i in s.rng.permutation(len(rivals))[:8]:
            c = rivals[int(i)]
            for r in g.out_rows.get(c, ()):
                rel, o = g.f_rel[r], g.f_obj[r]
                if (
                    rel in layer.banned
                    or rel not in s.relations
                    or not isinstance(o, int)
                    or not negated_clauses(rel)
                    or e not in g.fwd.get(rel, {})
                    or o in g.objects(rel, e)
                ):
                    continue
                node = Not(Project(rel, Entity(o, g.titles[o]), inverse=True))
                found = (g.subject_ids(rel, o),)
                return s.make_cut(layer, node, {rel}, found, complement=True)
        return None
