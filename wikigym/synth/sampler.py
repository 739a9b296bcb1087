"""Drafting formal queries: descriptions of an answer, expanded layer by layer.

An answer entity is described by constraints built from its facts. The main constraint
chains through a neighbour, which is described in turn (one layer deeper) instead of being
named; further constraints (intersections) are added until the description matches exactly
one entity. Literal facts become exact values or ranges (obfuscation). Every step keeps the
set each description denotes, so uniqueness is known while drafting; the generator then
re-proves it by evaluating the whole query from scratch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.query import Ask, Count, Entity, Intersect, IsA, Node, Project, Range, Value
from wikigym.synth.templates import relation_text
from wikigym.synth.values import number_span, year_span

MAX_EDGES = 24  # edges of one entity considered per layer
MAX_EXTRAS = 40  # extra constraints tried when narrowing an intersection


@dataclass(frozen=True, slots=True)
class Shape:
    """How one draft is built.

    Attributes:
        depth: Hops of the answer's description (chain length).
        intersect: Whether intersections may be used to make a layer unique.
        top_intersection: The answer's own description must be an intersection.
        ambiguous: Every constraint of an intersection must match >= 2 entities alone.
        range_p: Chance that a literal constraint becomes a range instead of a value.
        max_constraints: Constraints per intersection at most.
    """

    depth: int
    intersect: bool = False
    top_intersection: bool = False
    ambiguous: bool = False
    range_p: float = 0.0
    max_constraints: int = 3


def shape_for(level: str, rng: np.random.Generator) -> Shape:
    """A random shape that can meet ``level`` (see :mod:`wikigym.synth.levels`)."""
    if level == "easy":
        return Shape(1, range_p=0.0)
    if level == "medium":
        return Shape(2, range_p=0.2)
    if level == "hard":
        if rng.random() < 0.5:
            return Shape(3, intersect=True, range_p=0.8)
        return Shape(2, intersect=True, top_intersection=True, range_p=0.9)
    if rng.random() < 0.7:
        return Shape(3, True, True, True, range_p=0.95)
    return Shape(4, True, False, True, range_p=0.95)


@dataclass(frozen=True, slots=True)
class Draft:
    """A drafted query and the answer it was built for."""

    root: Node
    answer: int | str
    form: str  # entity, literal, count, yes_no


class Sampler:
    """Drafts queries over one graph.

    Args:
        graph: The knowledge graph.
        rng: The seeded generator every choice comes from.
        relations: Relations the queries may use (None: all usable ones).
    """

    def __init__(
        self,
        graph: KnowledgeGraph,
        rng: np.random.Generator,
        relations: frozenset[str] | None = None,
    ) -> None:
        self.g = graph
        self.rng = rng
        usable = set(graph.fwd) - {"instance_of"}
        if relations is not None:
            usable &= relations
        self.relations = frozenset(usable)
        ok = self.relations
        rel = graph.f_rel
        self.entities = np.array(
            sorted(
                e
                for e, rows in graph.out_rows.items()
                if isinstance(e, int) and any(rel[r] in ok for r in rows)
            ),
            dtype=np.int64,
        )
        lit_rows, role_rows = [], []
        for i, (r, o) in enumerate(zip(rel, graph.f_obj, strict=True)):
            if r not in ok:
                continue
            if isinstance(o, str):
                if len(graph.fwd[r][graph.f_subj[i]]) == 1:
                    lit_rows.append(i)
            elif relation_text(r).role:
                role_rows.append(i)
        self.literal_rows = np.array(lit_rows, dtype=np.int64)
        self.role_rows = np.array(role_rows, dtype=np.int64)

    # ---- entry --------------------------------------------------------------------
    def draft(self, level: str, form: str) -> Draft | None:
        """One draft for ``level`` in ``form`` (entity, literal, count, yes_no), or None."""
        shape = shape_for(level, self.rng)
        if form == "literal":
            return self._literal(shape)
        if form == "count":
            return self._count(shape)
        if not len(self.entities):
            return None
        e = int(self.entities[int(self.rng.integers(len(self.entities)))])
        got = self.describe(e, shape.depth, shape, frozenset(), top=True)
        if got is None:
            return None
        node, cand_set = got
        if form == "yes_no":
            return self._ask(node, e, cand_set)
        return Draft(node, e, "entity")

    def _literal(self, shape: Shape) -> Draft | None:
        if not len(self.literal_rows):
            return None
        row = int(self.literal_rows[int(self.rng.integers(len(self.literal_rows)))])
        g = self.g
        s, rel = g.f_subj[row], g.f_rel[row]
        if shape.depth == 1:
            arg: Node = Entity(s, g.titles[s])
        else:
            got = self.describe(s, shape.depth - 1, shape, frozenset(), top=True, skip_rel=rel)
            if got is None:
                return None
            arg = got[0]
        vt = g.f_vtype[row]
        if vt not in ("date", "number", "text"):
            return None
        return Draft(Project(rel, arg), g.f_obj[row], "literal")

    def _count(self, shape: Shape) -> Draft | None:
        if not len(self.role_rows):
            return None
        g = self.g
        row = int(self.role_rows[int(self.rng.integers(len(self.role_rows)))])
        s, rel, o = g.f_subj[row], g.f_rel[row], g.f_obj[row]
        assert isinstance(o, int)
        kind = g.kinds[s]
        if kind is None:
            return None
        members = g.subjects(rel, o) & g.members(kind)
        if not 2 <= len(members) <= 5:
            return None
        if shape.depth == 1:
            arg: Node = Entity(o, g.titles[o])
        else:
            got = self.describe(o, shape.depth - 1, shape, frozenset(members), top=False)
            if got is None:
                return None
            arg = got[0]
        root = Count(Intersect((IsA(kind), Project(rel, arg, inverse=True))))
        return Draft(root, str(len(members)), "count")

    def _ask(self, node: Node, e: int, cand_set: frozenset[int]) -> Draft | None:
        g = self.g
        if self.rng.random() < 0.5:
            return Draft(Ask(node, Entity(e, g.titles[e])), "yes", "yes_no")
        kind = g.kinds[e]
        # A "no" candidate of the same kind that shares one of the answer's attributes.
        pool = sorted(
            {
                s
                for r in g.out_rows.get(e, ())[:8]
                for s in g.subjects(g.f_rel[r], g.f_obj[r])
                if s != e and g.kinds[s] == kind
            }
        )
        if not pool:
            return None
        other = pool[int(self.rng.integers(len(pool)))]
        return Draft(Ask(node, Entity(other, g.titles[other])), "no", "yes_no")

    # ---- descriptions -------------------------------------------------------------
    def _edges(self, e: int, visited: frozenset[int], entity_only: bool) -> list[tuple[int, bool]]:
        """Up to MAX_EDGES (row, e_is_subject) pairs, in random order."""
        g = self.g
        rel, obj, subj = g.f_rel, g.f_obj, g.f_subj
        out = [
            (r, True)
            for r in g.out_rows.get(e, ())
            if rel[r] in self.relations
            and (isinstance(obj[r], int) or not entity_only)
            and obj[r] not in visited
        ]
        inn = [
            (r, False)
            for r in g.in_rows.get(e, ())
            if rel[r] in self.relations and subj[r] not in visited
        ]
        edges = out + inn
        if len(edges) > 4 * MAX_EDGES:
            pick = self.rng.choice(len(edges), 4 * MAX_EDGES, replace=False)
            edges = [edges[int(i)] for i in sorted(pick)]
        order = self.rng.permutation(len(edges))
        return [edges[int(i)] for i in order[:MAX_EDGES]]

    def _leaf(self, row: int, e_is_subject: bool, shape: Shape) -> tuple[Node, frozenset[int]]:
        """A one-hop constraint from a fact of the described entity, and its set."""
        g = self.g
        rel, o, s = g.f_rel[row], g.f_obj[row], g.f_subj[row]
        if not e_is_subject:
            return Project(rel, Entity(s, g.titles[s])), frozenset(  # type: ignore[arg-type]
                x for x in g.objects(rel, s) if isinstance(x, int)
            )
        if isinstance(o, int):
            return Project(rel, Entity(o, g.titles[o]), inverse=True), g.subjects(rel, o)
        m = g.f_measure[row]
        if m is not None and self.rng.random() < shape.range_p:
            if g.f_vtype[row] == "date":
                span, unit = year_span(int(m), self.rng), "year"
            else:
                span, unit = number_span(m, self.rng), "number"
            return Range(rel, span.lo, span.hi, unit), g.in_range(rel, span.lo, span.hi)
        return Project(rel, Value(o, g.f_vtype[row]), inverse=True), g.subjects(rel, o)

    def describe(
        self,
        e: int,
        depth: int,
        shape: Shape,
        visited: frozenset[int],
        *,
        top: bool = False,
        skip_rel: str | None = None,
    ) -> tuple[Node, frozenset[int]] | None:
        """A description of ``e`` with ``depth`` hops whose set is exactly ``{e}``, or None."""
        g = self.g
        kind = g.kinds[e]
        kind_set = g.members(kind) if kind else None
        visited = visited | {e}
        need_inter = top and shape.top_intersection
        for row, is_subj in self._edges(e, visited, entity_only=depth >= 2):
            if g.f_rel[row] == skip_rel:
                continue
            if depth == 1:
                main, main_set = self._leaf(row, is_subj, shape)
            else:
                other = g.f_obj[row] if is_subj else g.f_subj[row]
                assert isinstance(other, int)
                sub = self.describe(other, depth - 1, shape, visited)
                if sub is None:
                    continue
                rel = g.f_rel[row]
                main = Project(rel, sub[0], inverse=is_subj)
                main_set = (
                    g.subjects(rel, other)
                    if is_subj
                    else frozenset(x for x in g.objects(rel, other) if isinstance(x, int))
                )
            cand = main_set & kind_set if kind_set is not None else main_set
            if e not in cand:
                continue
            members: list[Node] = [main]
            if len(cand) > 1 or need_inter:
                if not shape.intersect or (shape.ambiguous and len(cand) < 2):
                    continue
                got = self._narrow(e, cand, row, visited, shape, kind_set, skip_rel)
                if got is None:
                    continue
                extra, cand = got
                members.extend(extra)
            if len(cand) != 1:
                continue
            node: Node = (
                Intersect((IsA(kind), *members))
                if kind
                else (members[0] if len(members) == 1 else Intersect(tuple(members)))
            )
            return node, cand
        return None

    def _narrow(
        self,
        e: int,
        cand: frozenset[int],
        main_row: int,
        visited: frozenset[int],
        shape: Shape,
        kind_set: frozenset[int] | None,
        skip_rel: str | None,
    ) -> tuple[list[Node], frozenset[int]] | None:
        """Extra one-hop constraints of ``e`` that cut ``cand`` down to ``{e}``."""
        g = self.g
        extra: list[Node] = []
        edges = [
            (r, s)
            for r, s in self._edges(e, visited, entity_only=False)
            if r != main_row and g.f_rel[r] != g.f_rel[main_row] and g.f_rel[r] != skip_rel
        ]
        # Literal facts first: they can be obfuscated into ranges.
        edges.sort(key=lambda rs: not (rs[1] and g.f_measure[rs[0]] is not None))
        used_rels = {g.f_rel[main_row]}
        for r, is_subj in edges[:MAX_EXTRAS]:
            if g.f_rel[r] in used_rels:
                continue
            node, s = self._leaf(r, is_subj, shape)
            alone = s & kind_set if kind_set is not None else s
            if e not in alone or (shape.ambiguous and len(alone) < 2):
                continue
            narrowed = cand & alone
            if len(narrowed) == len(cand):
                continue
            extra.append(node)
            used_rels.add(g.f_rel[r])
            cand = narrowed
            if len(cand) == 1:
                return extra, cand
            if len(extra) + 1 >= shape.max_constraints:
                return None
        return None
