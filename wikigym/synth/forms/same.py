"""Two relations that share an object (``Same(rel_a, rel_b)``, op ``same``), and the same
question form: "who was born and died in the same city"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from wikigym.errors import SynthError
from wikigym.synth import idsets
from wikigym.synth.drafts import (
    Cut,
    Draft,
    Layer,
    SamplerAPI,
    Shape,
    SpecialForm,
    describe_answer,
    register_form,
)
from wikigym.synth.evaluate import Evaluator, Item, SetValue, same_object_ids
from wikigym.synth.node import Node, register
from wikigym.synth.render import Renderer
from wikigym.synth.solving import Found, Plan, Solver, contains_item
from wikigym.synth.templates import relation_text


@register
@dataclass(frozen=True, slots=True)
class Same(Node):
    """Subjects whose ``rel_a`` and ``rel_b`` share an object."""

    rel_a: str
    rel_b: str
    OP = "same"

    def hops(self) -> int:
        return 1

    def relations(self) -> tuple[str, ...]:
        return (self.rel_a, self.rel_b)

    def to_json(self) -> dict[str, Any]:
        return {"op": "same", "rel_a": self.rel_a, "rel_b": self.rel_b}

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        return cls(str(data["rel_a"]), str(data["rel_b"]))

    def tally(self, counts: dict[str, int]) -> None:
        counts["constraints"] += 1

    def forms(self, listed: bool) -> tuple[str, ...]:
        return ("same",)

    def own_clauses(self) -> int:
        return 1

    def evaluate(self, ev: Evaluator) -> SetValue:
        return same_object_ids(ev.g, self.rel_a, self.rel_b)

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        g = ev.g
        if not isinstance(t, int):
            raise SynthError(f"{t!r} is not an entity")
        a_rows = g.fwd.get(self.rel_a, {}).get(t, ())
        b_rows = g.fwd.get(self.rel_b, {}).get(t, ())
        for ra in a_rows:
            for rb in b_rows:
                if g.f_obj[ra] == g.f_obj[rb]:
                    rows.extend((ra, rb))
                    return
        raise SynthError(f"{t!r} has no shared {self.rel_a}/{self.rel_b} object")

    def clause(self, r: Renderer, who: str) -> str:
        """ "who was born and died in the same city" / "whose birthplace is also its mayor"."""
        if {self.rel_a, self.rel_b} == {"born_in", "died_in"}:
            return r.pick(
                [f"{who} was born and died in the same city", f"{who} died in their birth city"]
            )
        a, b = relation_text(self.rel_a).role, relation_text(self.rel_b).role
        own = "its" if who == "that" else "their"
        return f"whose {a} is also {own} {b}"

    def open_world(self) -> bool:
        return False  # every entity whose two relations meet

    def test(self, s: Solver, item: Found) -> Plan[bool]:
        if not isinstance(item, str):
            return False
        left = yield from s.values(item, self.rel_a)
        right = yield from s.values(item, self.rel_b)
        return any(contains_item(right, x, s) for x in left)


def same_pool(s: SamplerAPI) -> np.ndarray:
    """Every entity with two role relations to one object (kept on the graph)."""
    return s.g.kept((*s.key, "same"), lambda: _same_ids(s))


def _same_ids(s: SamplerAPI) -> np.ndarray:
    g = s.g
    roles = sorted(
        r for r in s.relations if relation_text(r).role and g.rel_types.get(r) == "entity"
    )
    kinds = {r: g.relation_kind(r, "object") for r in roles}

    def can_share(a: str, b: str) -> bool:  # objects of two different kinds cannot
        return kinds[a] is None or kinds[b] is None or kinds[a] == kinds[b]

    parts = [
        same_object_ids(g, a, b)
        for i, a in enumerate(roles)
        for b in roles[i + 1 :]
        if can_share(a, b)
    ]
    return idsets.union_all(parts)


@register_form
class SameForm(SpecialForm):
    """ "who was born and died in the same city": drafted around an entity that has two
    role relations to one object."""

    name = "same"

    def draft(self, s: SamplerAPI, shape: Shape, level: str, want_yes: bool) -> Draft | None:
        got = describe_answer(s, shape, lambda: self.pick(s))
        return None if got is None else Draft(got[1], got[0], self.name)

    @staticmethod
    def pick(s: SamplerAPI) -> int:
        """An entity with two relations to one object, or -1 when the graph has none."""
        pool = same_pool(s)
        if not len(pool):
            return -1
        return int(pool[int(s.rng.integers(len(pool)))])

    def cut(self, s: SamplerAPI, layer: Layer) -> Cut | None:
        g = s.g
        rows = layer.rows
        for i, ra in enumerate(rows):
            for rb in rows[i + 1 :]:
                a, b = g.f_rel[ra], g.f_rel[rb]
                if a == b or g.f_obj[ra] != g.f_obj[rb] or not isinstance(g.f_obj[ra], int):
                    continue
                if not (relation_text(a).role and relation_text(b).role):
                    continue
                a, b = sorted((a, b))
                found = same_object_ids(g, a, b)
                return s.make_cut(layer, Same(a, b), {a, b}, (found,))
        return None
