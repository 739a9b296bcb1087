"""Arithmetic (``Arith(op, left, right)``, op ``arith``), and its question form: the
difference (``sub``) or sum (``add``) of the measures of two single literals ("How many years
separate the birth year and the year of death of X?", "What is the combined population of A
and B?")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from wikigym.errors import SynthError
from wikigym.synth import idsets
from wikigym.synth.drafts import Draft, QuestionForm, SamplerAPI, Shape, register_form
from wikigym.synth.evaluate import Evaluator, Item, SetValue, frozen, number_key
from wikigym.synth.forms.project import Project
from wikigym.synth.node import Node, Numeric, Reassemble, register, subject_phrase
from wikigym.synth.render import Renderer, join, year_noun
from wikigym.synth.templates import relation_text

ARITH_OPS = ("sub", "add")
# Sums of two values make sense for sizes and counts, not for years or elevations.
SUMMABLE = ("population", "employees", "speakers", "casualties", "attendance", "area", "length")


@register
@dataclass(frozen=True, slots=True)
class Arith(Numeric):
    """``left - right`` (``op="sub"``) or ``left + right`` (``"add"``) of two literals'
    measures."""

    op: str  # "sub" or "add"
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
        v = a - b if self.op == "sub" else a + b
        return frozenset((number_key(v),))

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        for side in (self.left, self.right):
            (v,) = tuple(ev.eval(side))
            side.witness(ev, v, rows)

    def cores(self) -> list[tuple[Node, Reassemble]]:
        op, left, right = self.op, self.left, self.right
        return [
            (left, lambda a: Arith(op, a, right)),
            (right, lambda a: Arith(op, left, a)),
        ]

    def question(self, r: Renderer) -> str:
        """Years between two dates of one entity, or the sum of two numbers."""
        left, right = self.left.attribute(), self.right.attribute()
        if left is None or right is None:
            raise ValueError("an arithmetic question combines two attributes of entities")
        (lrel, larg), (rrel, rarg) = left, right
        if self.op == "sub":
            a, b = year_noun(rrel), year_noun(lrel)
            if larg == rarg:
                s = subject_phrase(r, larg)
                if a.endswith(" of {s}") and b.endswith(" of {s}"):
                    both = join([a[: -len(" of {s}")], b[: -len(" of {s}")]])
                    return f"How many years separate {both} of {s}?"
                return f"How many years separate {a.format(s=s)} and {b.format(s=s)}?"
            first, second = (
                a.format(s=rarg.noun_phrase(r)),
                b.format(s=larg.noun_phrase(r)),
            )
            return f"How many years separate {first} and {second}?"
        noun = relation_text(lrel).nouns[0]
        both = f"{larg.noun_phrase(r)} and {rarg.noun_phrase(r)}"
        return "What is " + noun.replace("the ", "the combined ", 1).format(s=both) + "?"


@register_form
class ArithmeticForm(QuestionForm):
    """Years between two dates of one entity (age at death), or the sum of one measure of
    two entities of a kind."""

    name = "arithmetic"

    def draft(self, s: SamplerAPI, shape: Shape, level: str, want_yes: bool) -> Draft | None:
        g = s.g
        e = s.pick_entity()
        dates = [r for r in s.measured_rels(e) if g.rel_types.get(r) == "date"]
        depth = shape.depth - 1
        if len(dates) >= 2 and s.rng.random() < 0.7:
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
        nums = [r for r in s.measured_rels(e) if any(w in r for w in SUMMABLE)]
        if not nums:
            return None
        rel = nums[int(s.rng.integers(len(nums)))]
        kind = g.kinds[e]
        pool = s.same_kind_measured(kind, rel, e) if kind else idsets.EMPTY
        if not len(pool):
            return None
        other = int(pool[int(s.rng.integers(len(pool)))])
        m1, m2 = s.measure_of(rel, e), s.measure_of(rel, other)
        left, right = s.described(e, depth, shape), s.described(other, depth, shape)
        if left is None or right is None or m1 is None or m2 is None:
            return None
        root = Arith("add", Project(rel, left), Project(rel, right))
        return Draft(root, number_key(m1 + m2), self.name)
