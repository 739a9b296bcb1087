"""A partial name (``Initial(part, letter)``, op ``initial``), and the partial-name question
form: "whose name begins with K", "whose surname begins with G".

The entities whose name (its title without a disambiguator), or whose last name word (a
person's surname), begins with ``letter``. A fuzzy clue of BrowseComp's kind: a search cannot
take it (no index is by initial), a reader decides it at a glance, and it cuts a set of
candidates by a factor of about twenty.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from wikigym.errors import SynthError
from wikigym.synth import idsets
from wikigym.synth.drafts import Cut, Layer, SamplerAPI, SpecialForm, register_form
from wikigym.synth.evaluate import Evaluator, Item, SetValue
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.node import Node, register
from wikigym.synth.render import Renderer, mark
from wikigym.synth.solving import Found, Plan, Solver

PARTS = ("name", "surname")
NAME_RELATION = "(name)"  # what a partial name constrains, among a layer's relations
_DISAMBIGUATOR = re.compile(r"\s+\([^()]*\)$")


def name_part(title: str, part: str) -> str:
    """The part of an entity's name an initial is of: the title without a disambiguator, or
    its last word (a surname)."""
    bare = _DISAMBIGUATOR.sub("", title).strip()
    return bare.split()[-1] if part == "surname" and bare else bare


def initial_of(title: str, part: str) -> str:
    """The upper-case first letter of ``title``'s ``part`` ("" when it starts otherwise)."""
    text = name_part(title, part)
    return text[0].upper() if text[:1].isalpha() else ""


def _index(graph: KnowledgeGraph, part: str) -> dict[str, np.ndarray]:
    """Letter -> sorted ids of the entities whose ``part`` begins with it (kept on the graph:
    one pass over the titles)."""

    def build() -> dict[str, np.ndarray]:
        by: dict[str, list[int]] = {}
        for i in range(graph.n_nodes):
            letter = initial_of(graph.titles[i], part)
            if letter:
                by.setdefault(letter, []).append(i)
        return {k: np.asarray(v, dtype=np.int64) for k, v in sorted(by.items())}

    return graph.kept(("initials", part), build)


@register
@dataclass(frozen=True, slots=True)
class Initial(Node):
    """Entities whose name (``part="name"``) or surname (``"surname"``) begins with
    ``letter``."""

    part: str
    letter: str
    OP = "initial"

    def to_json(self) -> dict[str, Any]:
        return {"op": "initial", "part": self.part, "letter": self.letter}

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        part, letter = str(data["part"]), str(data["letter"])
        if part not in PARTS or len(letter) != 1 or not letter.isalpha():
            raise SynthError(f"an initial is one letter of a {' or '.join(PARTS)}")
        return cls(part, letter.upper())

    def relations(self) -> tuple[str, ...]:
        return ()

    def tally(self, counts: dict[str, int]) -> None:
        counts["constraints"] += 1
        counts["obfuscated_values"] += 1  # a name shown only by its first letter

    def forms(self, listed: bool) -> tuple[str, ...]:
        return ("partial_name",)

    def constraint_type(self) -> str | None:
        return "partial-name"

    def own_clauses(self) -> int:
        return 1

    def open_world(self) -> bool:
        return False  # every entity with that initial

    def evaluate(self, ev: Evaluator) -> SetValue:
        return _index(ev.g, self.part).get(self.letter, idsets.EMPTY)

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        self.witness_member(ev, t)  # the name is the title: no fact to show

    def clause(self, r: Renderer, who: str) -> str:
        noun = "surname" if self.part == "surname" else "name"
        verb = r.pick(["begins with", "starts with"])
        return f"whose {noun} {verb} the letter {mark(self.letter)}"

    def test(self, s: Solver, item: Found) -> Plan[bool]:
        if not isinstance(item, str):
            return False
        return initial_of(item, self.part) == self.letter
        yield  # pragma: no cover  (a plan that reads nothing)


@register_form
class PartialNameForm(SpecialForm):
    """ "whose surname begins with G": the first letter of the described entity's name."""

    name = "partial_name"

    def cut(self, s: SamplerAPI, layer: Layer) -> Cut | None:
        g = s.g
        if NAME_RELATION in layer.banned:
            return None
        title = g.titles[layer.e]
        parts = ["surname", "name"] if layer.kind == "person" else ["name"]
        for part in parts:
            if part == "surname" and len(name_part(title, "name").split()) < 2:
                continue
            letter = initial_of(title, part)
            if not letter:
                continue
            found = _index(g, part).get(letter, idsets.EMPTY)
            return s.make_cut(layer, Initial(part, letter), {NAME_RELATION}, (found,))
        return None
