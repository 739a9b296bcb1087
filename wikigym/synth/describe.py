"""Describing an entity: a description of exactly one entity, built layer by layer.

An entity is described by constraints built from its facts. The main constraint chains
through a neighbour, which is described in turn (one layer deeper) instead of being named;
further one-hop constraints (an intersection) are added until the description matches
exactly one entity, and a special form's constraint (union, negation, same, fuzz) comes last,
when the others leave few candidates. Every step keeps the set each description denotes, so
uniqueness is known while drafting; the generator then re-proves it from scratch.

:class:`Describer` is the part of the :class:`~wikigym.synth.sampler.Sampler` that does
this (a mixin: the sampler holds the graph, the RNG and the caches it reads).
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

import numpy as np

from wikigym.synth import idsets
from wikigym.synth.drafts import Cut, Goal, Layer, SamplerAPI, Shape, question_form
from wikigym.synth.evaluate import Evaluator
from wikigym.synth.forms.entity import Entity
from wikigym.synth.forms.intersect import Intersect
from wikigym.synth.forms.isa import IsA
from wikigym.synth.forms.project import Project
from wikigym.synth.forms.range import Range
from wikigym.synth.forms.value import Value
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.idsets import has, intersect, minus
from wikigym.synth.node import Node
from wikigym.synth.values import number_span, year_span

MAX_EDGES = 24  # edges of one entity considered per layer
MAX_EXTRAS = 40  # extra constraints tried when narrowing an intersection
SPECIAL_CAND = 8  # entities left when a special constraint is tried to finish a layer
SMALL_ROWS = 48  # an entity with fewer rows has its edges picked in Python, not numpy
LEAVES_HELD = 16_000_000  # members of the one-hop sets kept across drafts (128 MB at most)


def described_node(kind: str | None, members: list[Node]) -> Node:
    """The description of an entity of ``kind`` by ``members`` (an intersection, or the one
    member when there is no kind filter and no other member)."""
    if kind:
        return Intersect((IsA(kind), *members))
    return members[0] if len(members) == 1 else Intersect(tuple(members))


class Describer:
    """Descriptions of entities, for the sampler (see the module docstring)."""

    g: KnowledgeGraph
    rng: np.random.Generator
    ev: Evaluator
    rel_ok: np.ndarray
    _rel_ok_list: list[bool]
    _leaves: dict[tuple[tuple[object, ...], str | None], np.ndarray]
    _leaves_held: int

    relations: frozenset[str]
    entities: np.ndarray

    # ---- edges and one-hop constraints ------------------------------------------------
    def edges(
        self, e: int, visited: frozenset[int], entity_only: bool, literal_first: bool = False
    ) -> list[tuple[int, bool]]:
        """Up to MAX_EDGES (row, e_is_subject) pairs, in random order."""
        g = self.g
        out_rows, in_rows = g.out_rows.rows_of(e), g.in_rows.rows_of(e)
        if len(out_rows) + len(in_rows) <= SMALL_ROWS:
            rel, obj, subj, ok = g.f_rel_codes, g.f_obj_codes, g.f_subj, self._rel_ok_list
            edges = [
                (r, True)
                for r in out_rows
                if ok[rel[r]] and (obj[r] >= 0 or not entity_only) and obj[r] not in visited
            ]
            edges += [(r, False) for r in in_rows if ok[rel[r]] and subj[r] not in visited]
        else:  # one numpy pass (an entity can have 10^4 facts pointing at it)
            out_r, in_r = g.out_rows.rows_array(e), g.in_rows.rows_array(e)
            o, s = g.obj[out_r], g.subj[in_r]
            keep, keep_in = self.rel_ok[g.rel[out_r]], self.rel_ok[g.rel[in_r]]
            if entity_only:
                keep &= o >= 0
            for v in visited:  # a handful: the chain so far
                keep &= o != v
                keep_in &= s != v
            edges = [(r, True) for r in out_r[keep].tolist()]
            edges += [(r, False) for r in in_r[keep_in].tolist()]
        if len(edges) > 4 * MAX_EDGES:
            pick = self.rng.choice(len(edges), 4 * MAX_EDGES, replace=False)
            edges = [edges[int(i)] for i in sorted(pick)]
        order = self.rng.permutation(len(edges))
        picked = [edges[int(i)] for i in order[:MAX_EDGES]]
        if literal_first:  # measured literals first: they become obfuscated ranges
            picked.sort(key=lambda rs: not (rs[1] and g.f_measure[rs[0]] is not None))
        return picked

    def of_kind(
        self,
        found: np.ndarray,
        relation: str,
        subjects: bool,
        kind: str | None,
        kind_set: np.ndarray | None,
    ) -> np.ndarray:
        """``found`` (subjects of ``relation`` when ``subjects``, else its entity objects)
        restricted to ``kind_set``, the members of ``kind``: without intersecting when every
        such entity of the relation has that kind (the usual case)."""
        if kind_set is None:
            return found
        if (
            kind is not None
            and self.g.relation_kind(relation, "subject" if subjects else "object") == kind
        ):
            return found
        return self.g.ids_of_kind(found, kind)

    def leaf_node(self, row: int, e_is_subject: bool, shape: Shape) -> Node:
        """A one-hop constraint from fact ``row`` (a measured literal draws its range here)."""
        g = self.g
        rel, o, s = g.f_rel[row], g.f_obj[row], g.f_subj[row]
        if not e_is_subject:
            return Project(rel, Entity(s, g.titles[s]))
        if isinstance(o, int):
            return Project(rel, Entity(o, g.titles[o]), inverse=True)
        m = g.f_measure[row]
        if m is not None and self.rng.random() < shape.range_p:
            if g.f_vtype[row] == "date":
                span, unit = year_span(int(m), self.rng), "year"
            else:
                span, unit = number_span(m, self.rng), "number"
            return Range(rel, span.lo, span.hi, unit)
        return Project(rel, Value(o, g.f_vtype[row]), inverse=True)

    def leaf_set(self, node: Node, row: int, e_is_subject: bool) -> np.ndarray:
        """The set of the constraint ``node`` that :meth:`leaf_node` made from ``row``."""
        g = self.g
        sp = node.span()
        if sp is not None:
            return g.range_ids(*sp)
        if not e_is_subject:
            return g.object_ids(g.f_rel[row], g.f_subj[row])
        return g.subject_ids(g.f_rel[row], g.f_obj[row])

    def within(self, cand: np.ndarray, node: Node, row: int, e_is_subject: bool) -> np.ndarray:
        """``cand`` (sorted ids) restricted to the set of the constraint ``node`` made from
        ``row`` (a range is decided on ``cand``'s own facts when that pays: the same ids)."""
        sp = node.span()
        if sp is not None:
            return self.g.ids_in_range(cand, *sp)
        return intersect(cand, self.leaf_set(node, row, e_is_subject))

    def _leaf_of_kind(
        self, row: int, is_subj: bool, shape: Shape, kind: str | None, kind_set: np.ndarray | None
    ) -> tuple[Node, np.ndarray]:
        """A one-hop constraint from a fact of the described entity, and its set restricted
        by :meth:`of_kind`. The set depends only on the fact (or, for a range, on its
        relation and span, drawn first), so it is kept across drafts under that key
        (bounded: then kept afresh)."""
        node = self.leaf_node(row, is_subj, shape)
        return node, self._leaf_set_of_kind(node, row, is_subj, kind, kind_set)

    def _leaf_set_of_kind(
        self, node: Node, row: int, is_subj: bool, kind: str | None, kind_set: np.ndarray | None
    ) -> np.ndarray:
        """The kind-restricted set of the constraint ``node`` that :meth:`leaf_node` made
        from ``row`` (kept, see :meth:`_leaf_of_kind`)."""
        sp = node.span()
        key: tuple[object, ...] = sp if sp is not None else (row, is_subj)
        got = self._leaves.get((key, kind))
        if got is None:
            found = self.leaf_set(node, row, is_subj)
            got = self.of_kind(found, self.g.f_rel[row], is_subj, kind, kind_set)
            self._leaves_held += len(got) + 1
            if self._leaves_held > LEAVES_HELD:
                self._leaves.clear()
                self._leaves_held = len(got) + 1
            self._leaves[(key, kind)] = got
        return got

    # ---- special constraints ------------------------------------------------------------
    def special_cut(
        self,
        e: int,
        cand: np.ndarray,
        form: str,
        kind_set: np.ndarray | None,
        main_row: int,
        skip_rel: str | None,
    ) -> Cut | None:
        """A constraint of ``form`` for ``e``'s layer, whose candidates are ``cand``: the
        form's :meth:`~wikigym.synth.drafts.QuestionForm.cut`, over ``e``'s usable facts
        (shuffled) outside the relations the layer uses."""
        g = self.g
        banned = {g.f_rel[main_row], skip_rel}
        rows = [r for r in g.out_rows.get(e, ()) if g.f_rel[r] in self.relations]
        rows = [r for r in rows if g.f_rel[r] not in banned]
        order = tuple(rows[int(i)] for i in self.rng.permutation(len(rows)))
        kind = g.kinds[e] if kind_set is not None else None
        layer = Layer(e, cand, order, frozenset(banned), kind)
        # A Describer is always a Sampler's half: the form gets the whole sampler.
        return question_form(form).cut(cast("SamplerAPI", self), layer)

    def make_cut(
        self,
        layer: Layer,
        node: Node,
        rels: set[str],
        parts: tuple[np.ndarray, ...],
        complement: bool = False,
    ) -> Cut:
        """What the special constraint ``node`` does in ``layer``: its set is the union of
        ``parts``, or (``complement``, a negation) the complement of its one part. Sized
        and intersected part by part: a part can be most of the graph ("not born in X"
        holds for nearly everyone), and the layer's candidates are a handful."""
        g, e, cand, kind = self.g, layer.e, layer.cand, layer.kind

        def among(ids: np.ndarray) -> np.ndarray:  # the entities of ids that could be rivals
            return g.ids_of_kind(ids, kind) if kind is not None else intersect(ids, self.entities)

        known = kind is not None or has(self.entities, e)
        if complement:
            every = len(g.member_ids(kind)) if kind is not None else len(self.entities)
            found = parts[0]
            holds = known and not has(found, e)
            return Cut(
                node, frozenset(rels), among(minus(cand, found)), holds, every - len(among(found))
            )
        kept = among(idsets.union_all([intersect(cand, p) for p in parts]))
        holds = known and any(has(p, e) for p in parts)
        sizes = [len(among(p)) for p in parts]
        size = max(sizes)
        if size < 2 and len(parts) > 1:  # exact below 2: the union of the small ones
            size = len(idsets.union_all([among(p) for p in parts]))
        return Cut(node, frozenset(rels), kept, holds, size)

    # ---- descriptions ------------------------------------------------------------------
    def described(self, e: int, depth: int, shape: Shape) -> Node | None:
        """``e`` named (``depth`` 0) or described by ``depth`` hops (not at the top)."""
        if depth <= 0:
            return Entity(e, self.g.titles[e])
        got = self.describe(e, depth, replace(shape, top_intersection=False), frozenset())
        return None if got is None else got[0]

    def describe(
        self,
        e: int,
        depth: int,
        shape: Shape,
        visited: frozenset[int],
        *,
        top: bool = False,
        skip_rel: str | None = None,
        goal: Goal | None = None,
    ) -> tuple[Node, np.ndarray] | None:
        """A description of ``e`` with ``depth`` hops whose set is exactly ``{e}`` (or, with
        ``goal``, a set containing ``e`` that ``goal`` accepts), or None."""
        g = self.g
        kind = g.kinds[e]
        kind_set = g.member_ids(kind) if kind else None
        visited = visited | {e}
        need_inter = top and shape.top_intersection

        def ok(c: np.ndarray) -> bool:
            return goal(c) if goal is not None else len(c) == 1

        special = shape.special if top else None
        literal_first = depth == 1 and shape.range_p >= 0.9 and self.rng.random() < 0.8
        for row, is_subj in self.edges(e, visited, depth >= 2, literal_first):
            if g.f_rel[row] == skip_rel:
                continue
            other = -1
            if depth == 1:
                main, cand = self._leaf_of_kind(row, is_subj, shape, kind, kind_set)
            else:
                # The neighbour stands for its description until this layer is settled: a
                # description of it has exactly its set, and this layer's checks are far
                # cheaper than describing it (tried last, only for a layer that works).
                rel, o = g.f_rel[row], g.f_obj[row] if is_subj else g.f_subj[row]
                if not isinstance(o, int):
                    continue
                other = o
                main = Project(rel, Entity(o, g.titles[o]), inverse=is_subj)
                found = g.subject_ids(rel, o) if is_subj else g.object_ids(rel, o)
                cand = self.of_kind(found, rel, is_subj, kind, kind_set)
            if not has(cand, e):
                continue
            members: list[Node] = [main]
            if not ok(cand) or need_inter or special:
                if not shape.intersect or (shape.ambiguous and len(cand) < 2):
                    continue
                got = self._narrow(e, cand, row, visited, shape, kind_set, skip_rel, ok, special)
                if got is None:
                    continue
                extra, cand = got
                members.extend(extra)
            if not ok(cand) or not has(cand, e):
                continue
            keep = {id(members[-1])} if special and len(members) > 1 else set()
            pruned = self._prune(members, kind, ok, keep)
            if pruned is None:
                continue
            if other >= 0:
                sub = self.describe(other, depth - 1, replace(shape, special=None), visited)
                if sub is None:
                    continue
                pruned[0] = Project(g.f_rel[row], sub[0], inverse=is_subj)
            return described_node(kind, pruned), cand
        return None

    def _prune(
        self, members: list[Node], kind: str | None, ok: Goal, keep: set[int] | None = None
    ) -> list[Node] | None:
        """``members`` without the constraints the others make redundant (the later ones
        tried first; those whose ``id`` is in ``keep`` stay), or None when the main
        constraint (the first) is itself redundant: a description must need every
        constraint it has."""
        ev = self.ev

        def good(ms: list[Node]) -> bool:
            if not ms:
                return False
            node = Intersect((IsA(kind), *ms)) if kind else Intersect(tuple(ms))
            return ok(ev.ids(node))

        out = list(members)
        for i in range(len(out) - 1, 0, -1):
            if keep and id(out[i]) in keep:
                continue
            rest = out[:i] + out[i + 1 :]
            if good(rest):
                out = rest
        if len(out) > 1 and good(out[1:]):
            return None
        return out

    def _narrow(
        self,
        e: int,
        cand: np.ndarray,
        main_row: int,
        visited: frozenset[int],
        shape: Shape,
        kind_set: np.ndarray | None,
        skip_rel: str | None,
        ok: Goal,
        special: str | None = None,
    ) -> tuple[list[Node], np.ndarray] | None:
        """Extra one-hop constraints of ``e`` that cut ``cand`` down until ``ok``.

        The special constraint of ``shape`` (``special``) comes last: it is tried whenever
        the others have cut ``cand`` to SPECIAL_CAND entities or fewer, and taken only when
        it finishes the job, so this layer needs it by construction. (Taken first, the
        constraints added after it made it redundant in about half of the phd drafts, which
        then lost their form when minimised.)"""
        g = self.g
        extra: list[Node] = []
        used_rels = {g.f_rel[main_row]}
        if special and ok(cand):
            return None  # nothing left for the special constraint to do

        def finish(special: str) -> tuple[list[Node], np.ndarray] | None:
            cut = self.special_cut(e, cand, special, kind_set, main_row, skip_rel)
            if cut is None or cut.rels & used_rels or not cut.holds:
                return None
            if shape.ambiguous and cut.size < 2:
                return None
            return ([*extra, cut.node], cut.kept) if ok(cut.kept) else None

        if special and len(cand) <= SPECIAL_CAND and (done := finish(special)) is not None:
            return done
        edges = [
            (r, s)
            for r, s in self.edges(e, visited, entity_only=False)
            if r != main_row and g.f_rel[r] != g.f_rel[main_row] and g.f_rel[r] != skip_rel
        ]
        # Literal facts first: they can be obfuscated into ranges.
        edges.sort(key=lambda rs: not (rs[1] and g.f_measure[rs[0]] is not None))
        # Every leaf is drawn first (ranges draw from the RNG, in edge order), and its set
        # is built only when the loop reaches it: most layers finish after a leaf or two.
        kind = g.kinds[e]
        leaves = [
            (self.leaf_node(r, is_subj, shape), r, is_subj, g.f_rel[r])
            for r, is_subj in edges[:MAX_EXTRAS]
            if g.f_rel[r] not in used_rels
        ]
        for node, r, is_subj, rel in leaves:
            if rel in used_rels:
                continue
            alone = self._leaf_set_of_kind(node, r, is_subj, kind, kind_set)
            # A constraint that identifies e alone would make the main one redundant.
            if len(alone) < 2 or not has(alone, e):
                continue
            narrowed = intersect(cand, alone)
            if len(narrowed) == len(cand) or (special and ok(narrowed)):
                continue  # it cuts nothing, or leaves the special constraint nothing to do
            extra.append(node)
            used_rels.add(rel)
            cand = narrowed
            if special:
                if len(cand) <= SPECIAL_CAND and (done := finish(special)) is not None:
                    return done
            elif ok(cand):
                return extra, cand
            if len(extra) + 1 + (special is not None) >= shape.max_constraints:
                return None
        return None
