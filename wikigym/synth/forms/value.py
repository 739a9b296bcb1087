"""A literal value (``Value(key)``, op ``value``: the set ``{key}``): a date, a number or a
text, by the key the graph compares."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wikigym.synth.evaluate import Evaluator, Item, SetValue
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.node import Constant, Node, register
from wikigym.synth.render import Renderer, mark
from wikigym.synth.solving import Found, Plan, Solver, done


@register
@dataclass(frozen=True, slots=True)
class Value(Constant):
    """The one literal ``key`` (``value_type``: date, number or text)."""

    key: str
    value_type: str = "text"
    OP = "value"

    @property
    def constant(self) -> Item:
        return self.key

    def to_json(self) -> dict[str, Any]:
        return {"op": "value", "key": self.key, "type": self.value_type}

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        return cls(str(data["key"]), str(data.get("type", "text")))

    def evaluate(self, ev: Evaluator) -> SetValue:
        return frozenset((self.key,))

    def with_constant(self, graph: KnowledgeGraph, item: Item) -> Node:
        return Value(str(item), self.value_type)

    def value_words(self, r: Renderer) -> tuple[str, str]:
        surface = mark(r.g.surface(self.key))
        if self.value_type == "date":
            full = len(self.key) > 4
            return surface, (f"on {surface}" if full else f"in {surface}")
        return surface, surface

    def noun_phrase(self, r: Renderer) -> str:
        return self.value_words(r)[0]

    def search_rank(self, s: Solver) -> int | None:
        return 0

    def find_members(self, s: Solver) -> Plan[list[Found] | None]:
        return done([s.literal(self.key, self.value_type)])
