"""An intersection (``Intersect(args)``, op ``and``): what every argument holds.

A description of one entity: type filters (``IsA``), constraints that hold jointly, and
exclusions (``Not`` members). Four constraints or more make a "wide" set of weak attributes
(the wide form, :mod:`wikigym.synth.forms.wide`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from wikigym.errors import SynthError
from wikigym.synth import idsets
from wikigym.synth.evaluate import Evaluator, Item, SetValue, all_ids, frozen
from wikigym.synth.node import (
    Branching,
    Node,
    clause_count,
    constraints,
    deepest_first,
    kind_of,
    register,
)
from wikigym.synth.render import INTRO_MIN_CLAUSES, INTRO_P, Renderer, indefinite, who_of
from wikigym.synth.solving import Found, Plan, Solver

WIDE_MIN = 4  # constraints of one intersection that make a "wide" set of weak attributes


@register
@dataclass(frozen=True, slots=True)
class Intersect(Branching):
    """What every argument holds (an argument may be a ``Not``: what it excludes)."""

    args: tuple[Node, ...]
    OP = "and"

    def with_children(self, children: Sequence[Node]) -> Node:
        return Intersect(tuple(children))

    def conjuncts(self) -> tuple[Node, ...] | None:
        return self.args

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        return cls(tuple(parse(a) for a in data["args"]))

    def tally(self, counts: dict[str, int]) -> None:
        if len(constraints(self)) >= 2:
            counts["intersections"] += 1

    def forms(self, listed: bool) -> tuple[str, ...]:
        return ("wide",) if len(constraints(self)) >= WIDE_MIN else ()

    def constraint_type(self) -> str | None:
        return "intersection" if len(constraints(self)) > 1 else None

    # ---- evaluation ------------------------------------------------------------------
    def evaluate(self, ev: Evaluator) -> SetValue:
        g = ev.g
        pos = [a for a in self.args if a.negated is None]
        if not pos:
            raise SynthError("an 'and' query node needs at least one positive argument")
        negs = [n for a in self.args if (n := a.negated) is not None]
        probed = _probed(ev, pos)
        if probed is not None:
            acc_ids = probed
            for a in negs:
                if not len(acc_ids):
                    break
                acc_ids = idsets.minus(acc_ids, ev.ids(a))
            return acc_ids
        vals = [ev.value(a) for a in pos]
        id_sets = all_ids(vals)
        if id_sets is not None:
            # Type filters last, by each id's kind: a kind's members can be most of the
            # graph, and bisecting them once per id costs more than one gather.
            kinds = [k for a in pos if (k := a.filter_kind) is not None]
            rest = [v for a, v in zip(pos, id_sets, strict=True) if a.filter_kind is None]
            if rest and len(set(kinds)) == 1:
                acc_ids = g.ids_of_kind(idsets.intersect_all(rest), kinds[0])
            else:
                acc_ids = idsets.intersect_all(id_sets)
            for a in negs:
                if not len(acc_ids):
                    break
                acc_ids = idsets.minus(acc_ids, ev.as_ids(ev.value(a)))
            return acc_ids
        sets = sorted((frozen(v) for v in vals), key=len)
        acc = set(sets[0])
        for s in sets[1:]:
            acc.intersection_update(s)
            if not acc:
                break
        for a in negs:
            if acc:
                acc.difference_update(frozen(ev.value(a)))
        return ev.pack(frozenset(acc))

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        # Deepest constraint first: that is the chain the oracle follows. A negated
        # constraint has no witness of its own (its absence is proved by evaluation).
        for a, _ in deepest_first(self.args):
            a.witness(ev, t, rows)

    def at_least(self, ev: Evaluator, kinds: frozenset[str] | None = None) -> int:
        if kinds is not None:
            return 0  # an intersection inside another: not bounded
        rest = [a for a in self.args if a.filter_kind is None]
        if len(rest) != 1:
            return 0
        own = frozenset(k for a in self.args if (k := a.filter_kind) is not None)
        return rest[0].at_least(ev, own)

    # ---- minimality ------------------------------------------------------------------
    def reductions(self) -> Iterator[Node]:
        args = self.args
        for i, a in enumerate(args):
            if a.filter_kind is not None:
                continue
            rest = args[:i] + args[i + 1 :]
            if sum(b.filter_kind is None and b.negated is None for b in rest) >= 1:
                yield Intersect(rest)
        yield from self.reduced_children()

    # ---- wording ---------------------------------------------------------------------
    def noun_phrase(self, r: Renderer) -> str:
        kind = kind_of(self)
        cons = constraints(self)
        if len(cons) == 1 and cons[0].attribute() is not None:
            return cons[0].noun_phrase(r)
        if not r.definite(self):
            # It fits several entities: "a person who ...", never "the" or "this person".
            # Inline, so short: "a city founded in the 1040s" rather than "a city that was
            # founded in the 1040s" (five relative pronouns in a sentence read badly).
            head = indefinite(kind) if kind else "one"
            return r.described(head, r.parts(cons), who_of(kind), reduce_p=1.0)
        if (
            kind
            and r.allow_intro
            and kind not in r.kinds
            and clause_count(self) >= INTRO_MIN_CLAUSES
            and r.chance(INTRO_P)
        ):
            return r.introduce(kind, cons)
        head = f"the {kind}" if kind else "the one"
        return r.described(head, r.parts(cons), who_of(kind), reduce_p=r.reduce_p)

    def clause(self, r: Renderer, who: str) -> str:
        return r.described("", r.parts(constraints(self)), who, reduce=False).strip()

    def open_world(self) -> bool:
        # Bounded by any positive member that is: the rest only filter its members.
        return any(a.open_world() for a in self.args if a.negated is None and a.filter_kind is None)

    # ---- search plans ----------------------------------------------------------------
    def _generators(self, s: Solver) -> list[Node]:
        """The positive members whose sets a search can gather, cheapest first."""
        ranked = [
            (rank, i, a)
            for i, a in enumerate(self.args)
            if a.negated is None and (rank := s.rank(a)) is not None
        ]
        return [a for _, _, a in sorted(ranked, key=lambda x: (x[0], x[1]))]

    def search_rank(self, s: Solver) -> int | None:
        ranks = [r for a in self._generators(s) if (r := s.rank(a)) is not None]
        if not ranks:
            return None
        return min(ranks) + sum(a.filter_kind is None for a in self.args) - 1

    def find_members(self, s: Solver) -> Plan[list[Found] | None]:
        """Candidates from the cheapest member a search can gather, each tested against
        every other member; the next generator when none is left (search misses some)."""
        generators = self._generators(s)
        if not generators:
            return None
        for gen in generators:
            found = yield from s.members(gen)
            kept: list[Found] = []
            for cand in found or ():
                ok = True
                for other in self.args:
                    if other is not gen and not (yield from s.holds(other, cand)):
                        ok = False
                        break
                if ok:
                    kept.append(cand)
            if kept:
                return kept
        return []

    def test(self, s: Solver, item: Found) -> Plan[bool]:
        for a in self.args:
            if not (yield from s.holds(a, item)):
                return False
        return True


def _probed(ev: Evaluator, pos: list[Node]) -> np.ndarray | None:
    """The intersection of ``pos`` with its ranges tested entity by entity, or None.

    When the other constraints leave a set far smaller than a range ("born before 1900" can
    hold a good part of the graph), the range is decided on that set's own facts
    (:meth:`KnowledgeGraph.ids_in_range`) and its set is never built. The same ids as
    intersecting the built sets; None when some constraint is not a set of entities or no
    range is worth it, and the caller intersects as usual."""
    g = ev.g
    spans = [(a, sp) for a in pos if (sp := a.span()) is not None and not ev.known(a)]
    if not spans:
        return None
    probe = {id(a) for a, _ in spans}
    others = [a for a in pos if id(a) not in probe]
    sets = [a for a in others if a.filter_kind is None]
    if not sets:
        return None
    vals = all_ids([ev.value(a) for a in sets])
    if vals is None:
        return None
    acc = idsets.intersect_all(vals)
    for kind in dict.fromkeys(k for a in others if (k := a.filter_kind) is not None):
        acc = g.ids_of_kind(acc, kind)
    if not any(g.probe_pays(len(acc), *sp) for _, sp in spans):
        return None
    for _, sp in spans:
        if not len(acc):
            break
        acc = g.ids_in_range(acc, *sp)
    return acc
