"""A superlative (``Extreme(relation, arg, most)``, op ``extreme``), and the superlative and
comparison question forms.

The members of ``arg`` with the greatest (``most``) or least ``relation`` measure: "the
oldest person who ..." (superlative, over a described set), "Which has the largest
population: A, B or C?" (comparison, over a union of named or described candidates). Ties
keep every tied member, so a tie is never unique.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from wikigym.synth import idsets
from wikigym.synth.drafts import Draft, QuestionForm, SamplerAPI, Shape, register_form
from wikigym.synth.evaluate import Evaluator, Item, SetValue, item_order
from wikigym.synth.forms.union import Union
from wikigym.synth.node import Hop, Node, constraints, kind_of, register, relations_of
from wikigym.synth.render import RELATIVE, Renderer, join, measure_noun, unmark, who_of
from wikigym.synth.solving import Found, Plan, Solver

SET_MIN, SET_MAX = 2, 8  # members of the set a superlative picks from


@register
@dataclass(frozen=True, slots=True)
class Extreme(Hop):
    """The members of ``arg`` with the greatest (``most``) or least ``relation`` measure."""

    relation: str
    arg: Node
    most: bool = True
    OP = "extreme"

    def with_children(self, children: Sequence[Node]) -> Node:
        (arg,) = children
        return Extreme(self.relation, arg, self.most)

    def candidates(self) -> tuple[Node, ...]:
        return (self.arg,)

    def to_json(self) -> dict[str, Any]:
        return {
            "op": "extreme",
            "relation": self.relation,
            "most": self.most,
            "arg": self.arg.to_json(),
        }

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        return cls(str(data["relation"]), parse(data["arg"]), bool(data["most"]))

    def root_form(self) -> str | None:
        return None  # superlative or comparison: forms()

    def forms(self, listed: bool) -> tuple[str, ...]:
        return ("comparison",) if self.arg.alternatives() is not None else ("superlative",)

    def presupposed(self) -> tuple[Node, ...]:
        return self.arg.alternatives() or ()  # each candidate listed must exist

    def closed_relations(self) -> tuple[str, ...]:
        # The greatest of a set is right only when every member, and its measure, is there.
        return (self.relation, *relations_of(self.arg))

    def evaluate(self, ev: Evaluator) -> SetValue:
        # Literal keys have no measure: only the entities compete.
        ids = ev.as_ids(ev.value(self.arg))
        if not len(ids):
            return idsets.EMPTY
        vals = ev.g.least_measures(self.relation, ids)
        has = ~np.isnan(vals)
        if not has.any():
            return idsets.EMPTY
        best = vals[has].max() if self.most else vals[has].min()
        return ids[has & (vals == best)]

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        # The winner and every rival's measure: the comparison is shown in full.
        g = ev.g
        members = sorted(ev.eval(self.arg), key=item_order)
        for m in [t, *(x for x in members if x != t)]:
            self.arg.witness(ev, m, rows)
            for r in g.fwd.get(self.relation, {}).get(m, ()):
                if g.f_measure[r] is not None:
                    rows.append(r)
                    break
            ev.check_passages(rows)

    def reductions(self) -> Iterator[Node]:
        return self.reduced_children()

    def search_rank(self, s: Solver) -> int | None:
        inner = s.rank(self.arg)
        return None if inner is None else inner + 1

    def find_members(self, s: Solver) -> Plan[list[Found] | None]:
        members = yield from s.members(self.arg)
        if members is None:
            return None
        scored: list[tuple[float, Found]] = []
        for m in members:
            if isinstance(m, str) and (v := (yield from s.measure(m, self.relation))) is not None:
                scored.append((v, m))
        if not scored:
            return []
        best = max(v for v, _ in scored) if self.most else min(v for v, _ in scored)
        return [m for v, m in scored if v == best]

    def names_answer(self, item: Item) -> bool:
        # "Which has the largest population: A, B or C?" names its answer by design.
        alts = self.arg.alternatives()
        return isinstance(item, int) and alts is not None and any(a.constant == item for a in alts)

    def question(self, r: Renderer) -> str:
        """ "Who is the oldest person who ...?" / "Which has the largest population: A, B
        or C?"."""
        noun = measure_noun(self.relation)
        is_date = r.g.rel_types.get(self.relation) == "date"
        if is_date:
            adj = "latest" if self.most else "earliest"
        else:
            adj = "largest" if self.most else "smallest"
        alts = self.arg.alternatives()
        if alts is not None:
            # Listed candidates stay inline: "this person" could not tell them apart.
            # Short forms ("the city founded in 1200"), several candidates in one sentence.
            r.allow_intro, r.reduce_p = False, 1.0
            for a in alts:
                r.require_definite(a, "candidate of a comparison")
            names = [a.noun_phrase(r) for a in alts]
            r.allow_intro, r.reduce_p = True, 0.5
            if any(RELATIVE.search(unmark(n)) for n in names):  # long items: a list
                listed = "; ".join(names[:-1]) + "; or " + names[-1]
                return f"Which has the {adj} {noun}: {listed}?"
            return r.pick(
                [
                    f"Which has the {adj} {noun}: {join(names, 'or')}?",
                    f"Of {join(names)}, which has the {adj} {noun}?",
                ]
            )
        kind = kind_of(self.arg) or "one"
        parts = r.parts(constraints(self.arg))
        rel = r.described("", parts, who_of(kind), reduce=False).strip()
        if self.relation == "birth_date":
            age = "youngest" if self.most else "oldest"
            return r.pick(
                [f"Who is the {age} person {rel}?", f"Of every person {rel}, who is the {age}?"]
            )
        pronoun = "who" if kind == "person" else "which"
        return r.pick(
            [
                f"Of every {kind} {rel}, {pronoun} has the {adj} {noun}?",
                f"Which {kind} {rel} has the {adj} {noun}?",
            ]
        )


@register_form
class SuperlativeForm(QuestionForm):
    """ "Of every person who ..., who is the oldest?": the answer's description is loosened
    to a set of 2-8 that it wins."""

    name = "superlative"

    def draft(self, s: SamplerAPI, shape: Shape, level: str, want_yes: bool) -> Draft | None:
        if not len(s.entities):
            return None
        e = s.pick_entity()
        rels = s.measured_rels(e)
        if not rels:
            return None
        rel = rels[int(s.rng.integers(len(rels)))]
        most = bool(s.rng.random() < 0.5)
        mine = s.measure_of(rel, e)

        def goal(cand: np.ndarray) -> bool:
            if not SET_MIN <= len(cand) <= SET_MAX or mine is None:
                return False
            others = [s.measure_of(rel, x) for x in cand.tolist() if x != e]
            if any(m is None for m in others):
                return False
            return all((mine > m) if most else (mine < m) for m in others if m is not None)

        depth = shape.depth - 1
        if depth < 1:
            return None
        got = s.describe(e, depth, shape, frozenset(), top=True, skip_rel=rel, goal=goal)
        if got is None:
            return None
        return Draft(Extreme(rel, got[0], most), e, self.name)


@register_form
class ComparisonForm(QuestionForm):
    """ "Which has the earliest founding date: A, B or C?": two or three named or described
    candidates."""

    name = "comparison"

    def draft(self, s: SamplerAPI, shape: Shape, level: str, want_yes: bool) -> Draft | None:
        e = s.pick_entity()
        kind = s.g.kinds[e]
        rels = s.measured_rels(e)
        if not rels or kind is None:
            return None
        rel = rels[int(s.rng.integers(len(rels)))]
        pool = s.same_kind_measured(kind, rel, e)
        if len(pool) < 2:
            return None
        # Two or three members; two when each is described by a chain of two hops or more:
        # three such chains rarely fit the oracle's call budget (on a 230k-article world,
        # phd comparisons of two gave twice the tasks per draft, in a third of the time).
        n_others = 1 + int(s.rng.random() < 0.5 and shape.depth <= 2)
        others = [int(pool[int(i)]) for i in s.rng.choice(len(pool), n_others, replace=False)]
        members = [e, *others]
        values = [s.measure_of(rel, x) for x in members]
        known = [v for v in values if v is not None]
        if len(set(known)) != len(values):
            return None
        most = bool(s.rng.random() < 0.5)
        best = max(known) if most else min(known)
        winner = members[known.index(best)]
        parts: list[Node] = []
        for x in members:
            part = s.described(x, shape.depth - 1, shape)
            if part is None:
                return None
            parts.append(part)
        order = s.rng.permutation(len(parts))
        root = Extreme(rel, Union(tuple(parts[int(i)] for i in order)), most)
        return Draft(root, winner, self.name)
