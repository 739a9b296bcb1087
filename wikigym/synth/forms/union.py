"""A union (``Union(args)``, op ``or``), and the union question form: "born in X or in Y",
"born in the 1920s or between 1951 and 1956"."""

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
from wikigym.synth.forms.range import Range
from wikigym.synth.node import Branching, Node, register
from wikigym.synth.render import Renderer, join
from wikigym.synth.templates import relation_text
from wikigym.synth.values import number_span, year_span

LATEST_YEAR = 2025  # the second span of a year union never reaches past this


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
        named = [p[1] for p in links if p is not None and isinstance(p[1].constant, int)]
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


@register_form
class UnionForm(SpecialForm):
    """ "who was born in X or in Y": two constraints of one relation, the answer in one."""

    name = "union"

    def cut(self, s: SamplerAPI, layer: Layer) -> Cut | None:
        g = s.g
        measured = [r for r in layer.rows if g.f_measure[r] is not None]
        if measured and s.rng.random() < 0.6:
            return range_union(s, layer, measured[0])
        for r in layer.rows:
            rel, o = g.f_rel[r], g.f_obj[r]
            if not isinstance(o, int):
                continue
            pool = idsets.minus(g.entity_object_ids(rel), g.object_ids(rel, layer.e))
            if not len(pool):
                continue
            o2 = int(pool[int(s.rng.integers(len(pool)))])
            a = Project(rel, Entity(o, g.titles[o]), inverse=True)
            b = Project(rel, Entity(o2, g.titles[o2]), inverse=True)
            pair = (a, b) if s.rng.random() < 0.5 else (b, a)
            parts = (g.subject_ids(rel, o), g.subject_ids(rel, o2))
            return s.make_cut(layer, Union(pair), {rel}, parts)
        return None


def range_union(s: SamplerAPI, layer: Layer, row: int) -> Cut | None:
    """ "born in the 1920s or in the 1950s": the span of the value and a disjoint one."""
    g = s.g
    rel, m = g.f_rel[row], g.f_measure[row]
    if m is None:
        return None
    if g.f_vtype[row] == "date":
        span, unit = year_span(int(m), s.rng), "year"
        shift = int(s.rng.integers(2, 6)) * 10 * (1 if s.rng.random() < 0.5 else -1)
        if span.hi + shift > LATEST_YEAR:  # a span in the future would give itself away
            shift = -abs(shift)
        lo2, hi2 = span.lo + shift, span.hi + shift
    else:
        span, unit = number_span(m, s.rng), "number"
        factor = 2.0 + float(s.rng.integers(0, 3))
        lo2, hi2 = span.lo * factor, span.hi * factor
    if lo2 <= span.hi and span.lo <= hi2:
        return None  # overlapping spans: the union would be one span
    a = Range(rel, span.lo, span.hi, unit)
    b = Range(rel, float(lo2), float(hi2), unit)
    pair = (a, b) if a.lo < b.lo else (b, a)
    parts = (g.range_ids(rel, a.lo, a.hi), g.range_ids(rel, b.lo, b.hi))
    return s.make_cut(layer, Union(pair), {rel}, parts)
