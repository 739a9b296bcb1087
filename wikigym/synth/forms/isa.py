"""A type filter (``IsA(kind)``, op ``isa``): every entity of a kind (city, person, novel)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wikigym.synth.evaluate import Evaluator, Item, SetValue
from wikigym.synth.node import Node, register
from wikigym.synth.render import Renderer, indefinite
from wikigym.synth.solving import Found, Plan, Solver

LISTING_RANK = 50  # gathering a kind's members by searching for the kind: the last resort


@register
@dataclass(frozen=True, slots=True)
class IsA(Node):
    """Every entity of ``kind``."""

    kind: str
    OP = "isa"

    @property
    def filter_kind(self) -> str:
        return self.kind

    def to_json(self) -> dict[str, Any]:
        return {"op": "isa", "kind": self.kind}

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        return cls(str(data["kind"]))

    def evaluate(self, ev: Evaluator) -> SetValue:
        return ev.g.member_ids(self.kind)

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        self.witness_member(ev, t)

    def noun_phrase(self, r: Renderer) -> str:
        return indefinite(self.kind)

    def open_world(self) -> bool:
        return False  # every entity of a kind: the snapshot holds some of them

    def search_rank(self, s: Solver) -> int | None:
        return LISTING_RANK

    def find_members(self, s: Solver) -> Plan[list[Found] | None]:
        found = yield from s.instances(self.kind)
        return list(found)

    def test(self, s: Solver, item: Found) -> Plan[bool]:
        if not isinstance(item, str):
            return False
        return (yield from s.is_kind(item, self.kind))
