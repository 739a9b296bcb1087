"""A range (``Range(relation, lo, hi, unit)``, op ``range``), and the fuzz question form.

The subjects whose ``relation`` measure (a year or a number) lies in ``[lo, hi]``: an
obfuscated literal ("in the 1920s", "between 40,000 and 60,000"). A bound may be open
(JSON ``null``): "before 1900", "at least 50,000"; an open range or a century part ("in the
late 19th century") is the fuzz form, a clue many entities share.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from wikigym.errors import SynthError
from wikigym.synth.drafts import Cut, Layer, SamplerAPI, SpecialForm, register_form
from wikigym.synth.evaluate import Evaluator, Item, SetValue
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.minimal import numbers_in
from wikigym.synth.node import Node, register
from wikigym.synth.render import Renderer, mark, mark_numbers, unmark
from wikigym.synth.solving import Found, Plan, Solver
from wikigym.synth.templates import relation_text
from wikigym.synth.values import Span, format_number, span_phrase

CENTURY_PARTS = (("early", 0, 32), ("mid", 33, 66), ("late", 67, 99))


def _num(x: float) -> int | float | None:
    if math.isinf(x):
        return None  # an open bound
    return int(x) if float(x).is_integer() else float(x)


def _bound(x: Any, open_value: float) -> float:
    if x is None:
        return open_value
    v = float(x)
    if not math.isfinite(v):
        raise ValueError(f"a range bound must be a finite number or null, got {x!r}")
    return v


@register
@dataclass(frozen=True, slots=True)
class Range(Node):
    """Subjects with a ``relation`` measure in ``[lo, hi]`` (``unit``: year or number)."""

    relation: str
    lo: float
    hi: float
    unit: str = "number"  # "year" or "number"
    OP = "range"

    def hops(self) -> int:
        return 1

    def relations(self) -> tuple[str, ...]:
        return (self.relation,)

    def span(self) -> tuple[str, float, float] | None:
        return self.relation, self.lo, self.hi

    def to_json(self) -> dict[str, Any]:
        return {
            "op": "range",
            "relation": self.relation,
            "lo": _num(self.lo),
            "hi": _num(self.hi),
            "unit": self.unit,
        }

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        lo, hi = _bound(data["lo"], -math.inf), _bound(data["hi"], math.inf)
        if math.isinf(lo) and math.isinf(hi):
            raise SynthError("a range needs at least one finite bound")
        return cls(str(data["relation"]), lo, hi, str(data["unit"]))

    def tally(self, counts: dict[str, int]) -> None:
        counts["constraints"] += 1
        counts["obfuscated_values"] += 1

    def forms(self, listed: bool) -> tuple[str, ...]:
        fuzzy = math.isinf(self.lo) or math.isinf(self.hi) or century_part(self) is not None
        return ("fuzz",) if fuzzy else ()

    def constraint_type(self) -> str | None:
        return "range"

    def own_clauses(self) -> int:
        return 1

    def evaluate(self, ev: Evaluator) -> SetValue:
        return ev.g.range_ids(self.relation, self.lo, self.hi)

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        g = ev.g
        for r in g.fwd.get(self.relation, {}).get(t, ()):
            m = g.f_measure[r]
            if m is not None and self.lo <= m <= self.hi:
                rows.append(r)
                return
        raise SynthError(f"{t!r} has no {self.relation} in [{self.lo}, {self.hi}]")

    def stated_by(self, graph: KnowledgeGraph) -> Callable[[str], bool] | None:
        lo, hi = self.lo, self.hi
        return lambda text: any(lo <= x <= hi for x in numbers_in(text))

    # ---- wording ---------------------------------------------------------------------
    def marked_words(self, r: Renderer) -> str:
        """Closed spans ("in the 1920s", "between 40,000 and 60,000"), open ones ("before
        1900", "after 1950", "at least 50,000") and century parts ("in the late 19th
        century"), numbers marked."""
        year = self.unit == "year"
        if math.isinf(self.lo):
            if year:
                return f"before {mark(str(int(self.hi) + 1))}"
            return f"{r.pick(['at most', 'no more than'])} {mark(format_number(self.hi))}"
        if math.isinf(self.hi):
            if year:
                return f"after {mark(str(int(self.lo) - 1))}"
            return f"{r.pick(['at least', 'no fewer than'])} {mark(format_number(self.lo))}"
        part = century_part(self)
        if part is not None:
            name, century = part
            return f"in the {mark(f'{name} {ordinal(century)} century')}"
        words = span_phrase(Span(self.lo, self.hi), self.unit, int(r.rng.integers(4)))
        return mark_numbers(words)

    def phrase(self, r: Renderer) -> str:
        """:meth:`marked_words` as plain text."""
        return unmark(self.marked_words(r))

    def value_words(self, r: Renderer) -> tuple[str, str]:
        words = self.marked_words(r)
        return words, words

    def clause(self, r: Renderer, who: str) -> str:
        bare, at = self.value_words(r)
        t = r.pick(relation_text(self.relation).clauses)
        return t.format(who=who, o=bare, o_at=at)

    def open_world(self) -> bool:
        return False  # every entity with a measure in the span

    def test(self, s: Solver, item: Found) -> Plan[bool]:
        if not isinstance(item, str):
            return False
        m = yield from s.measure(item, self.relation)
        return m is not None and self.lo <= m <= self.hi


def century_part(node: Range) -> tuple[str, int] | None:
    """("late", 19) when a year range is exactly the late 19th century (1867-1899), else None."""
    if node.unit != "year" or math.isinf(node.lo) or math.isinf(node.hi):
        return None
    lo, hi = int(node.lo), int(node.hi)
    if lo // 100 != hi // 100 or lo < 0:
        return None
    for name, a, b in CENTURY_PARTS:
        if lo % 100 == a and hi % 100 == b:
            return name, lo // 100 + 1
    return None


def ordinal(n: int) -> str:
    """ "19th", "21st"."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def fuzz_range(rel: str, m: float, is_date: bool, rng: np.random.Generator) -> Range | None:
    """An open-ended or century-part range holding ``m``: "before 1900", "after 1950",
    "more than 50,000", "in the late 19th century"."""
    pick = int(rng.integers(3))
    if is_date:
        y = int(m)
        if pick == 2:
            part = next(p for p in CENTURY_PARTS if p[1] <= y % 100 <= p[2])
            base = y - y % 100
            return Range(rel, base + part[1], base + part[2], "year")
        step = 50 if rng.random() < 0.5 else 100
        if pick == 0:  # before the next round year
            return Range(rel, -math.inf, (y // step + 1) * step - 1, "year")
        low = (y // step) * step  # after a round year
        return Range(rel, low + 1, math.inf, "year") if low < y else None
    if m <= 0:
        return None
    mag = 10 ** math.floor(math.log10(m))
    if pick == 0:
        hi = (math.floor(m / mag) + 1) * mag
        return Range(rel, -math.inf, float(hi), "number")
    lo = math.floor(m / mag) * mag
    if lo >= m:
        return None
    return Range(rel, float(lo), math.inf, "number")


@register_form
class FuzzForm(SpecialForm):
    """ "born before 1900", "in the late 19th century": an open or century-part range."""

    name = "fuzz"

    def cut(self, s: SamplerAPI, layer: Layer) -> Cut | None:
        g = s.g
        for r in layer.rows:
            m = g.f_measure[r]
            if m is None:
                continue
            node = fuzz_range(g.f_rel[r], m, g.f_vtype[r] == "date", s.rng)
            if node is None:
                continue
            found = g.range_ids(node.relation, node.lo, node.hi)
            return s.make_cut(layer, node, {node.relation}, (found,))
        return None
