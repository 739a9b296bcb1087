"""A union (``Union(args)``, op ``or``), and the union question form: "born in X or in Y",
"whose genre is jazz or blues"."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from wikigym.errors import SynthError
from wikigym.synth import idsets
from wikigym.synth.drafts import Cut, Layer, SamplerAPI, SpecialForm, register_form
from wikigym.synth.evaluate import Evaluator, Item, SetValue, all_ids, contains, frozen
from wikigym.synth.forms.entity import Entity
from wikigym.synth.forms.project import Project
from wikigym.synth.forms.value import Value
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.node import Branching, Node, register
from wikigym.synth.render import Renderer, join
from wikigym.synth.solving import Found, Plan, Solver, unique
from wikigym.synth.templates import relation_text


@register
@dataclass(frozen=True, slots=True)
class Union(Branching):
    """What some argument holds."""

    args: tuple[Node, ...]
    OP = "or"

    def with_children(self, children: Sequence[Node]) -> Node:
        return Union(tuple(children))

    def alternatives(self) -> tuple[Node, ...] | None:
        return self.args

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        return cls(tuple(parse(a) for a in data["args"]))

    def forms(self, listed: bool) -> tuple[str, ...]:
        return () if listed else ("union",)  # a comparison's candidates are no union

    def evaluate(self, ev: Evaluator) -> SetValue:
        if not self.args:
            raise SynthError("an 'or' query node needs at least one argument")
        vals = [ev.value(a) for a in self.args]
        id_sets = all_ids(vals)
        if id_sets is not None:
            return idsets.union_all(id_sets)
        acc: set[Item] = set()
        for v in vals:
            acc.update(frozen(v))
        return ev.pack(frozenset(acc))

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        for a in self.args:
            if contains(ev.value(a), t):
                a.witness(ev, t, rows)
                return
        raise SynthError(f"{t!r} is in no branch of the union")

    def reductions(self) -> Iterator[Node]:
        # Dropping a branch tightens the query instead of relaxing it (a solver cannot
        # know which branch holds the answer), so only the branches' own constraints count.
        return self.reduced_children()

    def clause(self, r: Renderer, who: str) -> str:
        """ "who was born in X or in Y" (one relation) or "who ... or who ..."."""
        args = self.args
        links = [a.link() or a.attribute() for a in args]
        rels = {p[0] for a in args if (p := a.link()) is not None}
        named = [p[1] for p in links if p is not None and p[1].constant is not None]
        if len(rels) == 1 and len(named) == len(args) and len(args) >= 2:
            (rel,) = rels
            names = [n.noun_phrase(r) for n in named]
            t = r.pick(relation_text(rel).clauses)
            joined = join(names, "or")
            return t.format(who=who, o=joined, o_at=joined)
        spans = [sp for a in args if (sp := a.span()) is not None]
        if len(spans) == len(args) and len({sp[0] for sp in spans}) == 1:
            joined = join([a.value_words(r)[0] for a in args], "or")
            t = r.pick(relation_text(spans[0][0]).clauses)
            return t.format(who=who, o=joined, o_at=joined)
        return join([a.clause(r, who) for a in args], "or")

    def search_rank(self, s: Solver) -> int | None:
        ranks = [r for a in self.args if (r := s.rank(a)) is not None]
        return 1 + max(ranks) if ranks else None

    def find_members(self, s: Solver) -> Plan[list[Found] | None]:
        """The members of every branch a search can gather (those it cannot are missed)."""
        if self.search_rank(s) is None:
            return None
        out: list[Found] = []
        for a in self.args:
            if s.rank(a) is not None:
                out.extend((yield from s.members(a)) or ())
        return unique(out, s)

    def test(self, s: Solver, item: Found) -> Plan[bool]:
        for a in self.args:
            if (yield from s.holds(a, item)):
                return True
        return False


@register_form
class UnionForm(SpecialForm):
    """ "who was born in X or in Y", "whose genre is jazz or blues": two categorical values of
    one relation (entities, or texts from a closed set), the answer holding one. Never two
    spans of a measure: "founded between 1328 and 1335 or between 1348 and 1355" is a range
    with a hole, which nobody asks."""

    name = "union"

    def cut(self, s: SamplerAPI, layer: Layer) -> Cut | None:
        g = s.g
        for r in layer.rows:
            rel, o = g.f_rel[r], g.f_obj[r]
            if g.f_measure[r] is not None or g.f_vtype[r] not in ("entity", "text"):
                continue
            if isinstance(o, int):
                pool = idsets.minus(g.entity_object_ids(rel), g.object_ids(rel, layer.e))
                if not len(pool):
                    continue
                o2: Item = int(pool[int(s.rng.integers(len(pool)))])
            else:
                mine = set(g.objects(rel, layer.e))
                values = sorted(
                    v for v in g.inv.get(rel, {}) if isinstance(v, str) and v not in mine
                )
                if not values:
                    continue
                o2 = values[int(s.rng.integers(len(values)))]
            a = Project(rel, constant_of(g, o), inverse=True)
            b = Project(rel, constant_of(g, o2), inverse=True)
            pair = (a, b) if s.rng.random() < 0.5 else (b, a)
            parts = (g.subject_ids(rel, o), g.subject_ids(rel, o2))
            return s.make_cut(layer, Union(pair), {rel}, parts)
        return None


def constant_of(g: KnowledgeGraph, item: Item) -> Node:
    """The named constant of an entity or a text value."""
    if isinstance(item, int):
        return Entity(item, g.titles[item])
    return Value(item, "text")
