"""A named entity (``Entity(doc_id)``, op ``entity``: the set ``{doc_id}``), and the entity
question form: "Name the person who ...", the answer described by its facts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wikigym.synth.drafts import (
    Draft,
    QuestionForm,
    SamplerAPI,
    Shape,
    describe_answer,
    register_form,
)
from wikigym.synth.evaluate import Evaluator, Item, SetValue
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.node import Constant, Node, register
from wikigym.synth.render import Renderer, mark
from wikigym.synth.solving import Found, Plan, Solver, done


@register
@dataclass(frozen=True, slots=True)
class Entity(Constant):
    """The one entity ``doc_id`` (``title``: its name when the query was made)."""

    doc_id: int
    title: str = ""
    OP = "entity"

    @property
    def constant(self) -> Item:
        return self.doc_id

    def to_json(self) -> dict[str, Any]:
        return {"op": "entity", "doc_id": self.doc_id, "title": self.title}

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        return cls(int(data["doc_id"]), str(data.get("title", "")))

    def evaluate(self, ev: Evaluator) -> SetValue:
        return ev.pack(frozenset((self.doc_id,)))

    def with_constant(self, graph: KnowledgeGraph, item: Item) -> Node:
        if not isinstance(item, int):
            raise ValueError(f"an entity constant names an entity id, got {item!r}")
        return Entity(item, graph.titles[item])

    def noun_phrase(self, r: Renderer) -> str:
        return mark(r.g.titles[self.doc_id])

    def search_rank(self, s: Solver) -> int | None:
        return 0

    def find_members(self, s: Solver) -> Plan[list[Found] | None]:
        return done([s.entity(self.doc_id, self.title)])


@register_form
class EntityForm(QuestionForm):
    """ "Name the person who ...": a description of the answer, exactly one entity."""

    name = "entity"
    perturbable = True
    masks_answer = True

    def draft(self, s: SamplerAPI, shape: Shape, level: str, want_yes: bool) -> Draft | None:
        got = describe_answer(s, shape)
        return None if got is None else Draft(got[1], got[0], self.name)
