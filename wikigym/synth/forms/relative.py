"""A time relative to another event (``Relative``, op ``relative``), and the relative-time
question form: "who was born no more than ten years after X was founded", "that first
appeared in the five years before Y died".

The subjects whose ``relation`` year lies in ``[a + lo, a + hi]``, where ``a`` is the
``anchor_relation`` year of the one member of ``arg`` (a named entity). A fuzzier clue than
a range: its numbers are not in the question, they are read off another page first (one hop
more), and then it can only be tested on candidates, never searched for (BrowseComp's and
WebShaper's relative-time clues).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from wikigym.errors import SynthError
from wikigym.synth import idsets
from wikigym.synth.drafts import Cut, Layer, SamplerAPI, SpecialForm, register_form
from wikigym.synth.evaluate import Evaluator, Item, SetValue
from wikigym.synth.forms.entity import Entity
from wikigym.synth.node import Hop, Node, register
from wikigym.synth.render import Renderer, mark
from wikigym.synth.solving import Found, Plan, Solver
from wikigym.synth.templates import relation_text

WINDOWS = (5, 10, 20)  # years a relative clue spans
WINDOW_WORDS = {5: "five", 10: "ten", 20: "twenty"}
ANCHORS_TRIED = 6  # anchor candidates tried per layer


def event_clause(relation: str) -> str | None:
    """ "{who} was founded" of a date relation whose clause ends with its date ("{who} was
    founded {o_at}"), or None."""
    for t in relation_text(relation).clauses:
        if t.startswith("{who} ") and t.endswith(" {o_at}"):
            return t[: -len(" {o_at}")]
    return None


def anchor_measure(ev: Evaluator, arg: Node, relation: str) -> tuple[int, float] | None:
    """The one member of ``arg`` and its least ``relation`` measure, or None."""
    members = ev.eval(arg)
    if len(members) != 1:
        return None
    (a,) = tuple(members)
    m = ev.measure(relation, a)
    return None if m is None or not isinstance(a, int) else (a, m)


@register
@dataclass(frozen=True, slots=True)
class Relative(Hop):
    """Subjects whose ``relation`` year is ``lo``..``hi`` years from the ``anchor_relation``
    year of ``arg``'s one member."""

    relation: str
    anchor_relation: str
    arg: Node
    lo: int
    hi: int
    OP = "relative"

    def with_children(self, children: Sequence[Node]) -> Node:
        (arg,) = children
        return Relative(self.relation, self.anchor_relation, arg, self.lo, self.hi)

    def relations(self) -> tuple[str, ...]:
        return (self.relation, self.anchor_relation)

    def to_json(self) -> dict[str, Any]:
        return {
            "op": "relative",
            "relation": self.relation,
            "anchor_relation": self.anchor_relation,
            "lo": self.lo,
            "hi": self.hi,
            "arg": self.arg.to_json(),
        }

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        lo, hi = int(data["lo"]), int(data["hi"])
        if lo > hi:
            raise SynthError(f"a relative time needs lo <= hi, got {lo} > {hi}")
        arg = parse(data["arg"])
        return cls(str(data["relation"]), str(data["anchor_relation"]), arg, lo, hi)

    def tally(self, counts: dict[str, int]) -> None:
        counts["constraints"] += 1
        counts["obfuscated_values"] += 1

    def forms(self, listed: bool) -> tuple[str, ...]:
        return ("relative_time",)

    def constraint_type(self) -> str | None:
        return "relative-time"

    def own_clauses(self) -> int:
        return 1

    def open_world(self) -> bool:
        return False  # every entity with a year in the window

    def evaluate(self, ev: Evaluator) -> SetValue:
        anchor = anchor_measure(ev, self.arg, self.anchor_relation)
        if anchor is None:
            return idsets.EMPTY
        return ev.g.range_ids(self.relation, anchor[1] + self.lo, anchor[1] + self.hi)

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        g = ev.g
        anchor = anchor_measure(ev, self.arg, self.anchor_relation)
        if anchor is None:
            raise SynthError("a relative time needs one anchor with a year")
        a, year = anchor
        self.arg.witness(ev, a, rows)
        for r in g.fwd.get(self.anchor_relation, {}).get(a, ()):
            if g.f_measure[r] == year:
                rows.append(r)
                break
        for r in g.fwd.get(self.relation, {}).get(t, ()):
            m = g.f_measure[r]
            if m is not None and year + self.lo <= m <= year + self.hi:
                rows.append(r)
                return
        raise SynthError(f"{t!r} has no {self.relation} in the window")

    def window_words(self, r: Renderer) -> str:
        """ "no more than ten years after X was founded", "in the five years before X died"."""
        event = event_clause(self.anchor_relation) or "{who} happened"
        said = event.format(who=self.arg.noun_phrase(r))
        # After: [0, w] ("no more than w years after"); before: [-w, -1] ("in the w years
        # before").
        span = self.hi if self.lo >= 0 else -self.lo
        words = WINDOW_WORDS.get(span, mark(str(span)))
        if self.lo >= 0:
            return f"no more than {words} years after {said}"
        return f"in the {words} years before {said}"

    def clause(self, r: Renderer, who: str) -> str:
        at = self.window_words(r)
        t = event_clause(self.relation)
        if t is not None:
            return f"{t.format(who=who)} {at}"
        return r.pick(relation_text(self.relation).clauses).format(who=who, o=at, o_at=at)

    def test(self, s: Solver, item: Found) -> Plan[bool]:
        if not isinstance(item, str):
            return False
        anchors = (yield from s.members(self.arg)) or []
        pages = [a for a in anchors if isinstance(a, str)]
        if not pages:
            return False
        year = yield from s.measure(pages[0], self.anchor_relation)
        m = yield from s.measure(item, self.relation)
        return year is not None and m is not None and year + self.lo <= m <= year + self.hi


@register_form
class RelativeTimeForm(SpecialForm):
    """ "born no more than ten years after X was founded": a date of the described entity,
    placed relative to a named entity's date."""

    name = "relative_time"

    def cut(self, s: SamplerAPI, layer: Layer) -> Cut | None:
        g = s.g
        dated = [
            r
            for r in layer.rows
            if g.f_vtype[r] == "date" and g.f_measure[r] is not None and event_clause(g.f_rel[r])
        ]
        if not dated:
            return None
        row = dated[0]
        rel, m = g.f_rel[row], g.f_measure[row]
        assert m is not None
        anchors = sorted(
            r for r in s.relations if g.rel_types.get(r) == "date" and event_clause(r) is not None
        )
        if not anchors:
            return None
        for _ in range(ANCHORS_TRIED):
            ar = anchors[int(s.rng.integers(len(anchors)))]
            w = WINDOWS[int(s.rng.integers(len(WINDOWS)))]
            pool = g.range_ids(ar, m - w, m + w)
            pool = pool[pool != layer.e]
            if not len(pool):
                continue
            a = int(pool[int(s.rng.integers(len(pool)))])
            ma = s.measure_of(ar, a)
            if ma is None or len(g.fwd.get(ar, {}).get(a, ())) != 1:
                continue
            d = m - ma
            lo, hi = (0, w) if d >= 0 else (-w, -1)
            if not lo <= d <= hi:
                continue
            node = Relative(rel, ar, Entity(a, g.titles[a]), lo, hi)
            found = g.range_ids(rel, ma + lo, ma + hi)
            return s.make_cut(layer, node, {rel}, (found,))
        return None
