"""Arithmetic (``Arith(op, left, right)``, op ``arith``), and its question form: a computed
number from two measures of one kind, of entities that are related.

- ``sub``: the years between two dates on one chain: two dates of one entity ("How many years
  separate the birth year and the year of death of X?"), or of an entity and one it links to
  ("How many years separate the birth year of the author of this novel and the year this
  novel first appeared?");
- ``add``: one summable measure (a size, a count) of two entities that one entity links to
  ("What is the combined population of the birthplace and the place of death of X?");
- ``ratio``: one summable measure of an entity and of one it links to, rounded to a whole
  number ("How many times larger is the population of the country that X lies in than that
  of X?").

Never a sum of unrelated quantities ("the employees of this company and of the production
company of that film"): each operand is an attribute of one base description, or of an
attribute of it (:func:`chain_paths`), and both operands measure one relation or two dates.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from wikigym.errors import SynthError
from wikigym.synth.drafts import Draft, QuestionForm, SamplerAPI, Shape, register_form
from wikigym.synth.evaluate import Evaluator, Item, SetValue, frozen, number_key
from wikigym.synth.forms.project import Project
from wikigym.synth.node import Node, Numeric, Reassemble, register, subject_phrase
from wikigym.synth.render import Renderer, join, measure_noun, year_noun
from wikigym.synth.solving import Lit, Plan, Solver
from wikigym.synth.templates import relation_text
from wikigym.synth.values import format_number

ARITH_OPS = ("sub", "add", "ratio")
# Sums of two values make sense for sizes and counts, not for years or elevations.
SUMMABLE = ("population", "employees", "speakers", "casualties", "attendance", "area", "length")
RATIO_MIN = 2  # "how many times larger": at least twice
RATIO_MARGIN = 0.1  # a ratio this close to a half-way point is not asked (rounding would decide)


def ratio_of(a: float, b: float) -> int | None:
    """``a / b`` rounded to a whole number, or None when that is not a clear answer (below
    :data:`RATIO_MIN`, or within :data:`RATIO_MARGIN` of a half)."""
    if b <= 0 or a <= 0:
        return None
    q = a / b
    if q < RATIO_MIN or abs(q - math.floor(q) - 0.5) < RATIO_MARGIN:
        return None
    return math.floor(q + 0.5)


@register
@dataclass(frozen=True, slots=True)
class Arith(Numeric):
    """``left - right`` (``sub``), ``left + right`` (``add``) or ``left / right`` rounded
    (``ratio``) of two literals' measures."""

    op: str
    left: Node
    right: Node
    OP = "arith"

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)

    def with_children(self, children: Sequence[Node]) -> Node:
        left, right = children
        return Arith(self.op, left, right)

    def hops(self) -> int:
        return max(self.left.hops(), self.right.hops())

    def paths(self) -> tuple[tuple[Node, int], ...]:
        return ((self.right, 0), (self.left, 0))

    def to_json(self) -> dict[str, Any]:
        return {
            "op": "arith",
            "arith": self.op,
            "left": self.left.to_json(),
            "right": self.right.to_json(),
        }

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        if data["arith"] not in ARITH_OPS:
            raise SynthError(f"arith op must be one of {', '.join(ARITH_OPS)}")
        return cls(str(data["arith"]), parse(data["left"]), parse(data["right"]))

    def root_form(self) -> str | None:
        return "arithmetic"

    def evaluate(self, ev: Evaluator) -> SetValue:
        left, right = ev.value(self.left), ev.value(self.right)
        if len(left) != 1 or len(right) != 1:
            return frozenset()
        a = ev.literal_measure(next(iter(frozen(left))))
        b = ev.literal_measure(next(iter(frozen(right))))
        if a is None or b is None:
            return frozenset()
        if self.op == "ratio":
            q = ratio_of(a, b)
            return frozenset() if q is None else frozenset((str(q),))
        v = a - b if self.op == "sub" else a + b
        return frozenset((number_key(v),))

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        for side in (self.left, self.right):
            (v,) = tuple(ev.eval(side))
            side.witness(ev, v, rows)

    def cores(self) -> list[tuple[Node, Reassemble]]:
        op, left, right = self.op, self.left, self.right
        chain = self._chain()
        if chain is not None:
            # One base description on both sides: minimised once, so both stay about one
            # entity (reduced apart, "the birth year of X" and "the year of death of X"
            # would become two descriptions of X).
            base, lpath, rpath = chain
            lrel, rrel = self._relations()

            def rebuild(b: Node) -> Node:
                return Arith(op, Project(lrel, _along(b, lpath)), Project(rrel, _along(b, rpath)))

            return [(base, rebuild)]
        return [
            (left, lambda a: Arith(op, a, right)),
            (right, lambda a: Arith(op, left, a)),
        ]

    def _relations(self) -> tuple[str, str]:
        left, right = self.left.attribute(), self.right.attribute()
        if left is None or right is None:
            raise ValueError("an arithmetic combines two attributes of entities")
        return left[0], right[0]

    def _chain(self) -> tuple[Node, tuple[str, ...], tuple[str, ...]] | None:
        left, right = self.left.attribute(), self.right.attribute()
        if left is None or right is None:
            return None
        return chain_paths(left[1], right[1])

    def presupposed(self) -> tuple[Node, ...]:
        # "the birthplace of X and the place of death of X": both must exist.
        return tuple(p[1] for side in (self.left, self.right) if (p := side.attribute()))

    def solve(self, s: Solver) -> Plan[str | None]:
        sides: list[float] = []
        for side in (self.left, self.right):
            found = yield from s.members(side)
            measured = [
                x.measure for x in found or () if isinstance(x, Lit) and x.measure is not None
            ]
            if not measured:
                return None
            sides.append(measured[0])
        a, b = sides
        if self.op == "ratio":
            q = ratio_of(a, b)
            return None if q is None else str(q)
        return format_number(a - b if self.op == "sub" else a + b)

    def question(self, r: Renderer) -> str:
        """Years between two dates on one chain, a combined size, or how many times larger."""
        left, right = self.left.attribute(), self.right.attribute()
        if left is None or right is None:
            raise ValueError("an arithmetic question combines two attributes of entities")
        (lrel, larg), (rrel, rarg) = left, right
        chain = chain_paths(larg, rarg)
        if chain is None:  # a query of an older generator: two unrelated subjects
            return self._unrelated_question(r, lrel, larg, rrel, rarg)
        base, lpath, rpath = chain
        s = subject_phrase(r, base)

        def of(path: tuple[str, ...]) -> str:  # "this novel", "the author of this novel"
            text = s
            for rel in path:
                text = relation_text(rel).nouns[0].format(s=text)
            return text

        if self.op == "sub":
            a, b = year_noun(rrel), year_noun(lrel)
            if not lpath and not rpath and a.endswith(" of {s}") and b.endswith(" of {s}"):
                both = join([a[: -len(" of {s}")], b[: -len(" of {s}")]])
                return f"How many years separate {both} of {s}?"
            return f"How many years separate {a.format(s=of(rpath))} and {b.format(s=of(lpath))}?"
        noun = measure_noun(lrel)
        if self.op == "ratio":
            return (
                f"How many times larger is the {noun} of {of(lpath)} than that of {of(rpath)}, "
                "rounded to a whole number?"
            )
        heads = [relation_text(p[0]).nouns[0] for p in (lpath, rpath) if len(p) == 1]
        if len(heads) == 2 and all(h.endswith(" of {s}") for h in heads):
            both = join([h[: -len(" of {s}")] for h in heads])
            return f"What is the combined {noun} of {both} of {s}?"
        return f"What is the combined {noun} of {of(lpath)} and {of(rpath)}?"

    def _unrelated_question(self, r: Renderer, lrel: str, larg: Node, rrel: str, rarg: Node) -> str:
        if self.op == "sub":
            first = year_noun(rrel).format(s=rarg.noun_phrase(r))
            second = year_noun(lrel).format(s=larg.noun_phrase(r))
            return f"How many years separate {first} and {second}?"
        noun = relation_text(lrel).nouns[0]
        both = f"{larg.noun_phrase(r)} and {rarg.noun_phrase(r)}"
        return "What is " + noun.replace("the ", "the combined ", 1).format(s=both) + "?"


def _along(base: Node, path: tuple[str, ...]) -> Node:
    """``base`` followed forward along ``path`` ("the author of X")."""
    node = base
    for rel in path:
        node = Project(rel, node)
    return node


def chain_paths(left: Node, right: Node) -> tuple[Node, tuple[str, ...], tuple[str, ...]] | None:
    """``(base, left path, right path)`` when both operand subjects are one base description
    or forward attributes of it, at most one hop each ("X", "the author of X", "the
    birthplace of X"); None when they are unrelated."""

    def up(n: Node) -> tuple[Node, tuple[str, ...]]:
        att = n.attribute()
        return (att[1], (att[0],)) if att is not None else (n, ())

    for lb, lp in ((left, ()), up(left)):
        for rb, rp in ((right, ()), up(right)):
            if lb == rb:
                return lb, tuple(lp), tuple(rp)
    return None


@register_form
class ArithmeticForm(QuestionForm):
    """Two measures of related entities: years between two dates on one chain, a combined
    size of two places one entity links to, or how many times larger one size is than a
    linked one's."""

    name = "arithmetic"

    def answer_nodes(self, answer: Item) -> tuple[Item, ...]:
        return ()  # computed: no node of the graph is the answer

    perturbable = True

    def draft(self, s: SamplerAPI, shape: Shape, level: str, want_yes: bool) -> Draft | None:
        pick = s.rng.random()
        e = s.pick_entity()
        depth = shape.depth - 1
        if pick < 0.45:
            return self._dates(s, e, depth, shape)
        if pick < 0.7:
            return self._chain_dates(s, e, depth, shape)
        if pick < 0.9:
            return self._combined(s, e, depth, shape)
        return self._ratio(s, e, depth, shape)

    def _dates(self, s: SamplerAPI, e: int, depth: int, shape: Shape) -> Draft | None:
        """Two dates of one entity: its age at death, the years from founding to ..."""
        dates = [r for r in s.measured_rels(e) if s.g.rel_types.get(r) == "date"]
        if len(dates) < 2:
            return None
        pick = sorted(s.rng.choice(len(dates), 2, replace=False).tolist())
        a, b = dates[pick[0]], dates[pick[1]]
        ma, mb = s.measure_of(a, e), s.measure_of(b, e)
        if ma is None or mb is None or ma == mb:
            return None
        later, earlier = (a, b) if ma > mb else (b, a)
        arg = s.described(e, depth, shape)
        if arg is None:
            return None
        root = Arith("sub", Project(later, arg), Project(earlier, arg))
        return Draft(root, number_key(abs(ma - mb)), self.name)

    def _chain_dates(self, s: SamplerAPI, e: int, depth: int, shape: Shape) -> Draft | None:
        """A date of an entity and a date of one it links to (a novel's year and its author's
        birth year)."""
        g = s.g
        mine = [r for r in s.measured_rels(e) if g.rel_types.get(r) == "date"]
        links = [(r, o) for r, o in _entity_links(s, e) if o != e]
        if not mine or not links:
            return None
        rel, other = links[int(s.rng.integers(len(links)))]
        if len(g.objects(rel, e)) != 1:
            return None
        theirs = [r for r in s.measured_rels(other) if g.rel_types.get(r) == "date"]
        if not theirs:
            return None
        da = mine[int(s.rng.integers(len(mine)))]
        db = theirs[int(s.rng.integers(len(theirs)))]
        ma, mb = s.measure_of(da, e), s.measure_of(db, other)
        if ma is None or mb is None or ma == mb:
            return None
        arg = s.described(e, depth, shape)
        if arg is None:
            return None
        mine_node, theirs_node = Project(da, arg), Project(db, Project(rel, arg))
        left, right = (mine_node, theirs_node) if ma > mb else (theirs_node, mine_node)
        return Draft(Arith("sub", left, right), number_key(abs(ma - mb)), self.name)

    def _combined(self, s: SamplerAPI, e: int, depth: int, shape: Shape) -> Draft | None:
        """One size of two entities that ``e`` links to (its birthplace and its place of
        death)."""
        g = s.g
        links = _entity_links(s, e)
        for i in s.rng.permutation(len(links)).tolist():
            r1, a = links[i]
            for r2, b in links:
                if a == b or r1 == r2 or g.kinds[a] != g.kinds[b]:
                    continue
                if len(g.objects(r1, e)) != 1 or len(g.objects(r2, e)) != 1:
                    continue
                shared = [m for m in s.measured_rels(a) if _summable(m)]
                shared = [m for m in shared if s.measure_of(m, b) is not None]
                if not shared:
                    continue
                m = shared[int(s.rng.integers(len(shared)))]
                va, vb = s.measure_of(m, a), s.measure_of(m, b)
                arg = s.described(e, depth, shape)
                if arg is None or va is None or vb is None:
                    return None
                root = Arith("add", Project(m, Project(r1, arg)), Project(m, Project(r2, arg)))
                return Draft(root, number_key(va + vb), self.name)
        return None

    def _ratio(self, s: SamplerAPI, e: int, depth: int, shape: Shape) -> Draft | None:
        """How many times larger a size of an entity ``e`` links to is than ``e``'s own (the
        country a city lies in, and the city)."""
        g = s.g
        own = [m for m in s.measured_rels(e) if _summable(m)]
        for rel, other in _entity_links(s, e):
            if len(g.objects(rel, e)) != 1:
                continue
            for m in own:
                big, small = s.measure_of(m, other), s.measure_of(m, e)
                if big is None or small is None:
                    continue
                q = ratio_of(big, small)
                if q is None:
                    continue
                arg = s.described(e, depth, shape)
                if arg is None:
                    return None
                root = Arith("ratio", Project(m, Project(rel, arg)), Project(m, arg))
                return Draft(root, str(q), self.name)
        return None


def _summable(relation: str) -> bool:
    return any(w in relation for w in SUMMABLE)


def _entity_links(s: SamplerAPI, e: int) -> list[tuple[str, int]]:
    """``(relation, object)`` of ``e``'s usable facts with an entity object, in row order."""
    g = s.g
    return [
        (g.f_rel[r], o)
        for r in g.out_rows.get(e, ())
        if g.f_rel[r] in s.relations and isinstance(o := g.f_obj[r], int)
    ]
