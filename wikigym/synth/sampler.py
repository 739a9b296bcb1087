"""Drafting formal queries: descriptions of an answer, expanded layer by layer.

An answer entity is described by constraints built from its facts. The main constraint
chains through a neighbour, which is described in turn (one layer deeper) instead of being
named; further constraints (intersections) are added until the description matches exactly
one entity. Literal facts become exact values or ranges (obfuscation). Every step keeps the
set each description denotes, so uniqueness is known while drafting; the generator then
re-proves it by evaluating the whole query from scratch.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from wikigym.synth import idsets
from wikigym.synth.evaluate import Evaluator, number_key, same_object_ids
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.idsets import has, intersect, minus
from wikigym.synth.levels import structure_can_meet
from wikigym.synth.minimal import minimize
from wikigym.synth.query import (
    CENTURY_PARTS,
    WIDE_MIN,
    Arith,
    Ask,
    Count,
    Entity,
    Extreme,
    Intersect,
    IsA,
    Node,
    Not,
    Project,
    Range,
    Same,
    Union,
    Value,
    forms_of,
    measures,
)
from wikigym.synth.templates import comparable, negated_clauses, relation_text
from wikigym.synth.values import number_span, year_span

MAX_EDGES = 24  # edges of one entity considered per layer
MAX_EXTRAS = 40  # extra constraints tried when narrowing an intersection
MIN_LITERAL_VALUES = 30  # a text relation with fewer values, much shared, is a closed set
CLOSED_SHARE = 3.0  # subjects per value (on average) that make a small set closed
WIDE_MAX = 8  # constraints of a wide set at most
WIDE_POOL = 9  # weakest one-hop constraints a wide set is chosen from
WIDE_RICH = 8  # relations that make an entity worth trying for a wide set first
WIDE_TRIES = 64  # answers tried per wide draft
WIDE_CHAINS = 6  # chains tried for an answer that has a wide set
LATEST_YEAR = 2025  # the second span of a year union never reaches past this
SET_MIN, SET_MAX = 2, 8  # members of the set a superlative picks from
SPECIAL_CAND = 8  # entities left when a special constraint is tried to finish a layer
SMALL_ROWS = 48  # an entity with fewer rows has its edges picked in Python, not numpy
LEAVES_HELD = 16_000_000  # members of the one-hop sets kept across drafts (128 MB at most)
SPECIAL_FORMS = ("union", "negation", "same", "fuzz", "wide")
ROOT_FORMS = ("entity", "literal", "count", "yes_no", "superlative", "comparison", "arithmetic")
FORMS = (*ROOT_FORMS, *SPECIAL_FORMS)
# Sums of two values make sense for sizes and counts, not for years or elevations.
SUMMABLE = ("population", "employees", "speakers", "casualties", "attendance", "area", "length")
Goal = Callable[[np.ndarray], bool]  # takes a set of entities as sorted ids (idsets)


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
        special: A constraint form the answer's own intersection must use (union, negation,
            same, fuzz, wide) or None.
    """

    depth: int
    intersect: bool = False
    top_intersection: bool = False
    ambiguous: bool = False
    range_p: float = 0.0
    max_constraints: int = 3
    special: str | None = None


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


def rivals_cover(sets: list[np.ndarray], e: int, k: int) -> np.ndarray:
    """``cover[mask]`` for every bitmask over ``sets`` (bit ``i``: ``sets[i]``) of at least
    ``k`` bits: whether some entity other than ``e`` is in every set of the mask.

    An entity in ``k`` or more of ``n`` sets is in one of the ``n - k + 1`` smallest
    (pigeonhole), so only those are walked; each such entity's membership bits are found by
    bisection, and a superset pass over the ``2^n`` masks spreads them to every subset."""
    n = len(sets)
    smallest = sorted(sets, key=len)[: max(n - k + 1, 1)]
    rivals = idsets.union_all(smallest)
    rivals = rivals[rivals != e]
    bits = np.zeros(len(rivals), dtype=np.int64)
    for i, s in enumerate(sets):
        if len(s) and len(rivals):
            j = np.minimum(np.searchsorted(s, rivals), len(s) - 1)
            bits |= (s[j] == rivals).astype(np.int64) << i
    cover = np.zeros(1 << n, dtype=bool)
    cover[bits] = True
    for low, high in _subset_pairs(n):
        cover[low] |= cover[high]
    return cover


_PAIRS: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}


def _subset_pairs(n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per bit ``i`` of ``n``: the masks without it and the same masks with it (kept)."""
    got = _PAIRS.get(n)
    if got is None:
        masks = np.arange(1 << n)
        got = []
        for i in range(n):
            low = masks[(masks >> i) & 1 == 0]
            got.append((low, low | (1 << i)))
        _PAIRS[n] = got
    return got


@dataclass(frozen=True, slots=True)
class Draft:
    """A drafted query and the answer it was built for."""

    root: Node
    answer: int | str
    form: str  # one of FORMS


@dataclass(frozen=True, slots=True)
class Cut:
    """A special constraint for one layer of a description.

    Attributes:
        node: The constraint.
        rels: Its relations.
        kept: The layer's candidates it keeps.
        holds: Whether the described entity meets it.
        size: How many entities of the described entity's kind meet it alone (at least
            this many, exact below 2: all that its use needs).
    """

    node: Node
    rels: frozenset[str]
    kept: np.ndarray
    holds: bool
    size: int


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
        self.ev = Evaluator(graph)
        self._same_pool: np.ndarray | None = None
        self._wide_ids: np.ndarray | None = None
        usable = set(graph.fwd) - {"instance_of"}
        if relations is not None:
            usable &= relations
        self.relations = frozenset(usable)
        self._leaves: dict[tuple[tuple[object, ...], str | None], np.ndarray] = {}
        self._leaves_held = 0
        self._rel_ok = np.array([r in self.relations for r in graph.relation_names], dtype=bool)
        self._rel_ok_list: list[bool] = self._rel_ok.tolist()
        # The pools depend on the graph and the relations only: kept on the graph, so a
        # process that draws several TaskSets from one snapshot builds them once.
        self._key = ("sampler", tuple(sorted(self.relations)))
        self.entities, self.literal_rows, self.role_rows = graph.kept(
            (*self._key, "pools"), self._pools
        )

    def _pools(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(entities with a usable fact, ascending; rows of single literal facts; rows of
        role facts with entity objects)."""
        g = self.g
        ok = g.rows_with(self.relations)
        seen = np.zeros(g.n_nodes, dtype=bool)
        seen[g.subj[ok]] = True
        entities = np.flatnonzero(seen).astype(np.int64)  # ascending, as np.unique
        entities.flags.writeable = False
        single = ok & g.single_literal_rows()
        literal_rows = np.flatnonzero(single).astype(np.int64)
        roles = g.rows_with(r for r in self.relations if relation_text(r).role)
        role_rows = np.flatnonzero(roles & g.entity_rows()).astype(np.int64)
        return entities, literal_rows, role_rows

    # ---- entry --------------------------------------------------------------------
    def draft(self, level: str, form: str, want_yes: bool = True) -> Draft | None:
        """One minimal draft for ``level`` in ``form`` (one of :data:`FORMS`), or None.

        ``want_yes`` picks the answer of a yes/no draft (the generator balances them). The
        drafted query is minimised (:func:`wikigym.synth.minimal.minimize`): a constraint
        that the others make redundant is dropped, so its hop count is the effective one."""
        self.ev.reset()
        d = self._draft(level, form, want_yes)
        if d is None or not structure_can_meet(level, measures(d.root)):
            return None
        wanted = (lambda n: form in forms_of(n)) if form in SPECIAL_FORMS else None
        root = minimize(d.root, self.ev, prefer=wanted)
        # A special form must survive full minimisation: a minimal query that lost it is
        # another form's draft, and a non-minimal one that kept it would fail the proof.
        if form in SPECIAL_FORMS and form not in forms_of(root):
            return None
        # Minimising can take hops with it (a wide set's weak constraints can make part of
        # its chain redundant): such a draft could never meet the level (free to check).
        if root != d.root and not structure_can_meet(level, measures(root)):
            return None
        return d if root == d.root else Draft(root, d.answer, d.form)

    def _draft(self, level: str, form: str, want_yes: bool) -> Draft | None:
        shape = shape_for(level, self.rng)
        if form in SPECIAL_FORMS:
            if not shape.intersect:
                shape = replace(shape, intersect=True)
            if form == "wide":  # the answer's own description is a wide set
                shape = replace(shape, special=form, max_constraints=WIDE_MAX, ambiguous=True)
            else:  # one more constraint: the special one takes a slot
                shape = replace(
                    shape,
                    special=form,
                    top_intersection=True,
                    max_constraints=shape.max_constraints + 1,
                )
        if form == "literal":
            return self._literal(shape, level)
        if form == "count":
            return self._count(shape)
        if form == "arithmetic":
            return self._arith(shape)
        if form == "comparison":
            return self._comparison(shape)
        if not len(self.entities):
            return None
        if form == "wide":
            return self._wide_answer(shape)
        e = self._pick_entity() if form != "same" else self._pick_same()
        if e < 0:
            return None
        if form == "superlative":
            return self._superlative(e, shape)
        got = self.describe(e, shape.depth, shape, frozenset(), top=True)
        if got is None:
            return None
        node, cand_set = got
        if form == "yes_no":
            return self._ask(node, e, cand_set, want_yes)
        return Draft(node, e, form if form in SPECIAL_FORMS else "entity")

    def _pick_entity(self) -> int:
        return int(self.entities[int(self.rng.integers(len(self.entities)))])

    def _pick_same(self) -> int:
        """An entity with two relations to one object ("born and died in the same city"),
        or -1 when the graph has none."""
        if self._same_pool is None:
            self._same_pool = self.g.kept((*self._key, "same"), self._same_ids)
        if not len(self._same_pool):
            return -1
        return int(self._same_pool[int(self.rng.integers(len(self._same_pool)))])

    def _same_ids(self) -> np.ndarray:
        """Every entity with two role relations to one object (see :meth:`_pick_same`)."""
        g = self.g
        roles = sorted(
            r for r in self.relations if relation_text(r).role and g.rel_types.get(r) == "entity"
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

    def _measure_of(self, relation: str, e: int) -> float | None:
        ms = [self.g.f_measure[r] for r in self.g.fwd.get(relation, {}).get(e, ())]
        vals = [m for m in ms if m is not None]
        return min(vals) if vals else None

    def _measured_rels(self, e: int) -> list[str]:
        g = self.g
        rels = [
            g.f_rel[r]
            for r in g.out_rows.get(e, ())
            if g.f_measure[r] is not None
            and g.f_rel[r] in self.relations
            and comparable(g.f_rel[r])
        ]
        return sorted(dict.fromkeys(rels))

    def _superlative(self, e: int, shape: Shape) -> Draft | None:
        """The member of a described set with the greatest or least measure."""
        rels = self._measured_rels(e)
        if not rels:
            return None
        rel = rels[int(self.rng.integers(len(rels)))]
        most = bool(self.rng.random() < 0.5)
        mine = self._measure_of(rel, e)

        def goal(cand: np.ndarray) -> bool:
            if not SET_MIN <= len(cand) <= SET_MAX or mine is None:
                return False
            others = [self._measure_of(rel, x) for x in cand.tolist() if x != e]
            if any(m is None for m in others):
                return False
            return all((mine > m) if most else (mine < m) for m in others if m is not None)

        depth = shape.depth - 1
        if depth < 1:
            return None
        got = self.describe(e, depth, shape, frozenset(), top=True, skip_rel=rel, goal=goal)
        if got is None:
            return None
        return Draft(Extreme(rel, got[0], most), e, "superlative")

    def _same_kind_measured(self, kind: str, rel: str, e: int) -> np.ndarray:
        """The entities of ``kind`` with a ``rel`` measure, but ``e``, ascending (an array:
        a pool can hold most of the graph, and one or two members are drawn from it)."""
        pool = self.g.ids_of_kind(self.g.measured_ids(rel), kind)
        return pool[pool != e]

    def _comparison(self, shape: Shape) -> Draft | None:
        """Which of two or three described entities has the greatest or least measure."""
        e = self._pick_entity()
        kind = self.g.kinds[e]
        rels = self._measured_rels(e)
        if not rels or kind is None:
            return None
        rel = rels[int(self.rng.integers(len(rels)))]
        pool = self._same_kind_measured(kind, rel, e)
        if len(pool) < 2:
            return None
        # Two or three members; two when each is described by a chain of two hops or more:
        # three such chains rarely fit the oracle's call budget (on a 230k-article world,
        # phd comparisons of two gave twice the tasks per draft, in a third of the time).
        n_others = 1 + int(self.rng.random() < 0.5 and shape.depth <= 2)
        others = [int(pool[int(i)]) for i in self.rng.choice(len(pool), n_others, replace=False)]
        members = [e, *others]
        values = [self._measure_of(rel, x) for x in members]
        if len({v for v in values}) != len(values) or any(v is None for v in values):
            return None
        most = bool(self.rng.random() < 0.5)
        best = max(values) if most else min(values)  # type: ignore[type-var]
        winner = members[values.index(best)]
        parts: list[Node] = []
        for x in members:
            part = self._described(x, shape.depth - 1, shape)
            if part is None:
                return None
            parts.append(part)
        order = self.rng.permutation(len(parts))
        return Draft(
            Extreme(rel, Union(tuple(parts[int(i)] for i in order)), most), winner, "comparison"
        )

    def _arith(self, shape: Shape) -> Draft | None:
        """Years between two dates of one entity (age at death), or a sum of two numbers."""
        g = self.g
        e = self._pick_entity()
        dates = [r for r in self._measured_rels(e) if g.rel_types.get(r) == "date"]
        depth = shape.depth - 1
        if len(dates) >= 2 and self.rng.random() < 0.7:
            pick = sorted(self.rng.choice(len(dates), 2, replace=False).tolist())
            a, b = dates[pick[0]], dates[pick[1]]
            ma, mb = self._measure_of(a, e), self._measure_of(b, e)
            if ma is None or mb is None or ma == mb:
                return None
            later, earlier = (a, b) if ma > mb else (b, a)
            arg = self._described(e, depth, shape)
            if arg is None:
                return None
            root = Arith("sub", Project(later, arg), Project(earlier, arg))
            return Draft(root, number_key(abs(ma - mb)), "arithmetic")
        nums = [r for r in self._measured_rels(e) if any(w in r for w in SUMMABLE)]
        if not nums:
            return None
        rel = nums[int(self.rng.integers(len(nums)))]
        kind = g.kinds[e]
        pool = self._same_kind_measured(kind, rel, e) if kind else idsets.EMPTY
        if not len(pool):
            return None
        other = int(pool[int(self.rng.integers(len(pool)))])
        m1, m2 = self._measure_of(rel, e), self._measure_of(rel, other)
        left, right = self._described(e, depth, shape), self._described(other, depth, shape)
        if left is None or right is None or m1 is None or m2 is None:
            return None
        return Draft(
            Arith("add", Project(rel, left), Project(rel, right)), number_key(m1 + m2), "arithmetic"
        )

    def _described(self, e: int, depth: int, shape: Shape) -> Node | None:
        if depth <= 0:
            return Entity(e, self.g.titles[e])
        got = self.describe(e, depth, replace(shape, top_intersection=False), frozenset())
        return None if got is None else got[0]

    def _literal(self, shape: Shape, level: str) -> Draft | None:
        if not len(self.literal_rows):
            return None
        row = int(self.literal_rows[int(self.rng.integers(len(self.literal_rows)))])
        g = self.g
        s, rel = g.f_subj[row], g.f_rel[row]
        # No answers from tiny closed sets (ten occupations, a score of genres) above easy.
        if level != "easy" and self.closed_set(rel):
            return None
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

    def closed_set(self, relation: str) -> bool:
        """Whether ``relation``'s answers come from a tiny closed set: a text relation with
        fewer than MIN_LITERAL_VALUES values, each shared by CLOSED_SHARE subjects or more
        on average (dates and numbers are never closed: they are measured)."""
        g = self.g
        if g.rel_types.get(relation) in ("date", "number", "entity"):
            return False
        if relation not in g.inv:
            return True  # no value at all: as closed as a set gets
        values = g.inv[relation]
        return len(values) < MIN_LITERAL_VALUES and values.pairs() >= CLOSED_SHARE * len(values)

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
        members = intersect(g.subject_ids(rel, o), g.member_ids(kind))
        # Wider sets when the description is deep: counting is then the hard part.
        if not 2 <= len(members) <= (5 if shape.depth <= 2 else 9):
            return None
        if shape.depth == 1:
            arg: Node = Entity(o, g.titles[o])
        else:
            visited = frozenset(members.tolist())
            got = self.describe(o, shape.depth - 1, shape, visited, top=False)
            if got is None:
                return None
            arg = got[0]
        root = Count(Intersect((IsA(kind), Project(rel, arg, inverse=True))))
        return Draft(root, str(len(members)), "count")

    def _ask(self, node: Node, e: int, cand_set: np.ndarray, want_yes: bool) -> Draft | None:
        g = self.g
        if want_yes:
            return Draft(Ask(node, Entity(e, g.titles[e])), "yes", "yes_no")
        kind = g.kinds[e]
        # A "no" candidate of the same kind that shares one of the answer's attributes.
        near = [g.subject_ids(g.f_rel[r], g.f_obj[r]) for r in g.out_rows.get(e, ())[:8]]
        ids = idsets.union_all(near)
        ids = g.ids_of_kind(ids, kind)
        pool = ids[ids != e].tolist()
        if not pool:
            return None
        other = pool[int(self.rng.integers(len(pool)))]
        return Draft(Ask(node, Entity(other, g.titles[other])), "no", "yes_no")

    # ---- descriptions -------------------------------------------------------------
    def _edges(
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
            keep, keep_in = self._rel_ok[g.rel[out_r]], self._rel_ok[g.rel[in_r]]
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

    def _wide_pool(self) -> np.ndarray:
        """The entities with facts in WIDE_RICH or more usable relations (each side counted:
        as the subject, as an entity object), ascending, or failing any, in WIDE_MIN or more
        (kept). A wide set needs weak constraints that identify only together; an entity
        with few relations rarely has enough of them (on a 230k-article world, 0-2% of the
        entities with 4-7 relations had a wide set, 7-8% of those with 8 or more)."""
        if self._wide_ids is None:
            self._wide_ids = self.g.kept((*self._key, "wide"), self._rich_ids)
        return self._wide_ids

    def _rich_ids(self) -> np.ndarray:
        counts = self.g.relation_counts(self._rel_ok)
        rich = np.flatnonzero(counts >= WIDE_RICH)
        if not len(rich):  # a small world: every entity that could make one
            rich = np.flatnonzero(counts >= WIDE_MIN)
        return rich.astype(idsets.ID_DTYPE)

    def _wide_answer(self, shape: Shape) -> Draft | None:
        """A wide draft: the answer's own description is a wide set, one of whose constraints
        is a chain of ``shape.depth`` hops (so the question keeps its hops). The answer is
        drawn from the entities rich in relations (:meth:`_wide_pool`); each chain's first
        fact is tried with its neighbour named, and the neighbour is described only for a
        wide set that works."""
        g = self.g
        pool = self._wide_pool()
        if not len(pool):
            return None
        plain = replace(shape, special=None, max_constraints=3)
        for _ in range(WIDE_TRIES):
            e = int(pool[int(self.rng.integers(len(pool)))])
            kind = g.kinds[e]
            kind_set = g.member_ids(kind) if kind else None
            visited = frozenset((e,))
            for row, is_subj in self._edges(e, visited, entity_only=True)[:WIDE_CHAINS]:
                rel, other = g.f_rel[row], g.f_obj[row] if is_subj else g.f_subj[row]
                assert isinstance(other, int)
                found = g.subject_ids(rel, other) if is_subj else g.object_ids(rel, other)
                cand = self._of_kind(found, rel, is_subj, kind, kind_set)
                if len(cand) <= WIDE_MIN or not has(cand, e):
                    continue
                named = Project(rel, Entity(other, g.titles[other]), inverse=is_subj)
                node = self._wide(e, kind, visited, shape, (named, cand, row))
                if node is None:
                    continue
                sub = self.describe(other, shape.depth - 1, plain, visited)
                if sub is None:
                    continue
                chain = Project(rel, sub[0], inverse=is_subj)
                return Draft(
                    Intersect(tuple(chain if a == named else a for a in node.args)), e, "wide"
                )
        return None

    def _of_kind(
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

    def _leaf_of_kind(
        self, row: int, is_subj: bool, shape: Shape, kind: str | None, kind_set: np.ndarray | None
    ) -> tuple[Node, np.ndarray]:
        """A one-hop constraint from a fact of the described entity, and its set restricted
        by :meth:`_of_kind`. The set depends only on
        the fact (or, for a range, on its relation and span, drawn first), so it is kept
        across drafts under that key (bounded: then kept afresh)."""
        node = self._leaf_node(row, is_subj, shape)
        return node, self._leaf_set_of_kind(node, row, is_subj, kind, kind_set)

    def _leaf_set_of_kind(
        self, node: Node, row: int, is_subj: bool, kind: str | None, kind_set: np.ndarray | None
    ) -> np.ndarray:
        """The kind-restricted set of the constraint ``node`` that :meth:`_leaf_node` made
        from ``row`` (kept, see :meth:`_leaf_of_kind`)."""
        key = (node.relation, node.lo, node.hi) if isinstance(node, Range) else (row, is_subj)
        got = self._leaves.get((key, kind))
        if got is None:
            found = self._leaf_set(node, row, is_subj)
            got = self._of_kind(found, self.g.f_rel[row], is_subj, kind, kind_set)
            self._leaves_held += len(got) + 1
            if self._leaves_held > LEAVES_HELD:
                self._leaves.clear()
                self._leaves_held = len(got) + 1
            self._leaves[(key, kind)] = got
        return got

    def _leaf_node(self, row: int, e_is_subject: bool, shape: Shape) -> Node:
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

    def _coarse_leaf_node(self, row: int, e_is_subject: bool, shape: Shape) -> Node:
        """A one-hop constraint from fact ``row`` for a wide set: a measured literal becomes
        an open-ended or century-part range ("before 1900", "more than 50,000"), which many
        entities share. Spans as narrow as a hard question's (a decade, a band around a
        number) identify an entity with two or three constraints, so four would never all
        be needed."""
        g = self.g
        m = g.f_measure[row]
        if e_is_subject and m is not None and not isinstance(g.f_obj[row], int):
            node = self._fuzz_range(g.f_rel[row], m, g.f_vtype[row] == "date")
            if node is not None:
                return node
        return self._leaf_node(row, e_is_subject, shape)

    def _within(self, cand: np.ndarray, node: Node, row: int, e_is_subject: bool) -> np.ndarray:
        """``cand`` (sorted ids) restricted to the set of the constraint ``node`` made from
        ``row`` (a range is decided on ``cand``'s own facts when that pays: the same ids)."""
        if isinstance(node, Range):
            return self.g.ids_in_range(cand, node.relation, node.lo, node.hi)
        return intersect(cand, self._leaf_set(node, row, e_is_subject))

    def _leaf_set(self, node: Node, row: int, e_is_subject: bool) -> np.ndarray:
        """The set of the constraint ``node`` that :meth:`_leaf_node` made from ``row``."""
        g = self.g
        if isinstance(node, Range):
            return g.range_ids(node.relation, node.lo, node.hi)
        if not e_is_subject:
            return g.object_ids(g.f_rel[row], g.f_subj[row])
        return g.subject_ids(g.f_rel[row], g.f_obj[row])

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
        for row, is_subj in self._edges(e, visited, depth >= 2, literal_first):
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
                assert isinstance(o, int)
                other = o
                main = Project(rel, Entity(o, g.titles[o]), inverse=is_subj)
                found = g.subject_ids(rel, o) if is_subj else g.object_ids(rel, o)
                cand = self._of_kind(found, rel, is_subj, kind, kind_set)
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
            members = self._prune(members, kind, ok, keep)
            if members is None:
                continue
            if other >= 0:
                sub = self.describe(other, depth - 1, replace(shape, special=None), visited)
                if sub is None:
                    continue
                members[0] = Project(g.f_rel[row], sub[0], inverse=is_subj)
            node: Node = (
                Intersect((IsA(kind), *members))
                if kind
                else (members[0] if len(members) == 1 else Intersect(tuple(members)))
            )
            return node, cand
        return None

    def _wide(
        self,
        e: int,
        kind: str | None,
        visited: frozenset[int],
        shape: Shape,
        chain: tuple[Node, np.ndarray, int],
    ) -> Node | None:
        """A wide set that identifies ``e``, or None: the constraint ``chain`` (its node, its
        set among ``e``'s kind, its fact row: the answer's chain, so the question keeps its
        hops) and WIDE_MIN - 1 to WIDE_MAX - 1 weak one-hop constraints of ``e`` (the weakest
        first), each meeting several of the chain's entities, and none redundant."""
        g = self.g
        chain_node, cand, chain_row = chain
        # The constraints first (their ranges draw from the RNG in edge order), the sets
        # after: a pool has one leaf per relation, so fewer relations than the smallest
        # combination needs can make no wide set, and no set is built for it (exact).
        drawn = [
            (self._coarse_leaf_node(r, is_subj, shape), r, is_subj)
            for r, is_subj in self._edges(e, visited, entity_only=False)
            if g.f_rel[r] != g.f_rel[chain_row]
        ]
        if len({g.f_rel[r] for _, r, _ in drawn}) < WIDE_MIN - 1:
            return None
        # Every combination holds the chain, so only the chain's entities can be rivals:
        # each constraint is decided on them alone (one bisection each into its set).
        # One that keeps e alone among them would make every other one redundant.
        sized: list[tuple[int, Node, int, bool, np.ndarray]] = []
        for node, r, is_subj in drawn:
            kept = self._within(cand, node, r, is_subj)
            if len(kept) >= 2 and has(kept, e):
                sized.append((len(kept), node, r, is_subj, kept))
        sized.sort(key=lambda t: -t[0])  # the weakest first (stable: ties in the RNG's order)
        by_rel: dict[str, tuple[int, Node, int, bool, np.ndarray]] = {}
        for leaf in sized:
            by_rel.setdefault(g.f_rel[leaf[2]], leaf)
        pool = list(by_rel.values())[:WIDE_POOL]
        sizes = range(WIDE_MIN - 1, min(WIDE_MAX - 1, len(pool)) + 1)
        if not len(sizes):
            return None
        sets = [cand, *(leaf[4] for leaf in pool)]  # bit 0: the chain
        if len(idsets.intersect_all(sets)) > 1:  # not even all of them identify e
            return None
        # Which combinations leave a rival, for all of them at once.
        cov = rivals_cover(sets, e, WIDE_MIN - 1).tolist()
        for size in sizes:
            for combo in itertools.combinations(range(len(pool)), size):
                bits = [1 << (i + 1) for i in combo]
                mask = 1 + sum(bits)
                # It identifies e (no rival in every set), and needs every weak member.
                if cov[mask] or not all(cov[mask ^ b] for b in bits):
                    continue
                # And the chain: without it, another entity of the kind meets the rest.
                weak = [pool[i][1] for i in combo]
                rest = Intersect((IsA(kind), *weak)) if kind else Intersect(tuple(weak))
                if len(self.ev.ids(rest)) < 2:
                    continue
                members = [chain_node, *weak]
                return Intersect((IsA(kind), *members)) if kind else Intersect(tuple(members))
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

        def finish() -> tuple[list[Node], np.ndarray] | None:
            assert special is not None
            cut = self._special(e, cand, special, kind_set, main_row, skip_rel)
            if cut is None or cut.rels & used_rels or not cut.holds:
                return None
            if shape.ambiguous and cut.size < 2:
                return None
            return ([*extra, cut.node], cut.kept) if ok(cut.kept) else None

        if special and len(cand) <= SPECIAL_CAND and (done := finish()) is not None:
            return done
        edges = [
            (r, s)
            for r, s in self._edges(e, visited, entity_only=False)
            if r != main_row and g.f_rel[r] != g.f_rel[main_row] and g.f_rel[r] != skip_rel
        ]
        # Literal facts first: they can be obfuscated into ranges.
        edges.sort(key=lambda rs: not (rs[1] and g.f_measure[rs[0]] is not None))
        # Every leaf is drawn first (ranges draw from the RNG, in edge order), and its set
        # is built only when the loop reaches it: most layers finish after a leaf or two.
        kind = g.kinds[e]
        leaves = [
            (self._leaf_node(r, is_subj, shape), r, is_subj, g.f_rel[r])
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
                if len(cand) <= SPECIAL_CAND and (done := finish()) is not None:
                    return done
            elif ok(cand):
                return extra, cand
            if len(extra) + 1 + (special is not None) >= shape.max_constraints:
                return None
        return None

    # ---- special constraints -------------------------------------------------------
    def _special(
        self,
        e: int,
        cand: np.ndarray,
        form: str,
        kind_set: np.ndarray | None,
        main_row: int,
        skip_rel: str | None,
    ) -> Cut | None:
        """A constraint of ``form`` for ``e``'s layer, whose candidates are ``cand``."""
        g = self.g
        banned = {g.f_rel[main_row], skip_rel}
        rows = [r for r in g.out_rows.get(e, ()) if g.f_rel[r] in self.relations]
        rows = [r for r in rows if g.f_rel[r] not in banned]
        order = [rows[int(i)] for i in self.rng.permutation(len(rows))]
        kind = g.kinds[e] if kind_set is not None else None
        if form == "fuzz":
            for r in order:
                m = g.f_measure[r]
                if m is None:
                    continue
                node = self._fuzz_range(g.f_rel[r], m, g.f_vtype[r] == "date")
                if node is None:
                    continue
                found = g.range_ids(node.relation, node.lo, node.hi)
                return self._cut(node, {node.relation}, e, cand, kind, (found,))
            return None
        if form == "union":
            measured = [r for r in order if g.f_measure[r] is not None]
            if measured and self.rng.random() < 0.6:
                return self._range_union(measured[0], e, cand, kind)
            for r in order:
                rel, o = g.f_rel[r], g.f_obj[r]
                if not isinstance(o, int):
                    continue
                pool = minus(g.entity_object_ids(rel), g.object_ids(rel, e))
                if not len(pool):
                    continue
                o2 = int(pool[int(self.rng.integers(len(pool)))])
                a = Project(rel, Entity(o, g.titles[o]), inverse=True)
                b = Project(rel, Entity(o2, g.titles[o2]), inverse=True)
                pair = (a, b) if self.rng.random() < 0.5 else (b, a)
                parts = (g.subject_ids(rel, o), g.subject_ids(rel, o2))
                return self._cut(Union(pair), {rel}, e, cand, kind, parts)
            return None
        if form == "negation":
            rivals = cand[cand != e].tolist()
            if not rivals:
                return None
            for i in self.rng.permutation(len(rivals))[:8]:
                c = rivals[int(i)]
                for r in g.out_rows.get(c, ()):
                    rel, o = g.f_rel[r], g.f_obj[r]
                    if (
                        rel in banned
                        or rel not in self.relations
                        or not isinstance(o, int)
                        or not negated_clauses(rel)
                        or e not in g.fwd.get(rel, {})
                        or o in g.objects(rel, e)
                    ):
                        continue
                    node = Not(Project(rel, Entity(o, g.titles[o]), inverse=True))
                    return self._cut(node, {rel}, e, cand, kind, (g.subject_ids(rel, o),))
            return None
        if form == "same":
            for i, ra in enumerate(order):
                for rb in order[i + 1 :]:
                    a, b = g.f_rel[ra], g.f_rel[rb]
                    if a == b or g.f_obj[ra] != g.f_obj[rb] or not isinstance(g.f_obj[ra], int):
                        continue
                    if not (relation_text(a).role and relation_text(b).role):
                        continue
                    a, b = sorted((a, b))
                    found = same_object_ids(g, a, b)
                    return self._cut(Same(a, b), {a, b}, e, cand, kind, (found,))
            return None
        return None

    def _cut(
        self,
        node: Node,
        rels: set[str],
        e: int,
        cand: np.ndarray,
        kind: str | None,
        parts: tuple[np.ndarray, ...],
    ) -> Cut:
        """What the special constraint ``node`` does in a layer whose candidates are ``cand``
        (entities of ``kind``; None: any entity the sampler uses): its set is the union of
        ``parts``, or for a negation the complement of its one part. Sized and intersected
        part by part: a part can be most of the graph ("not born in X" holds for nearly
        everyone), and ``cand`` is a handful."""
        g = self.g

        def among(ids: np.ndarray) -> np.ndarray:  # the entities of ids that could be rivals
            return g.ids_of_kind(ids, kind) if kind is not None else intersect(ids, self.entities)

        known = kind is not None or has(self.entities, e)
        if isinstance(node, Not):
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

    def _range_union(self, row: int, e: int, cand: np.ndarray, kind: str | None) -> Cut | None:
        """ "born in the 1920s or in the 1950s": the span of the value and a disjoint one."""
        g = self.g
        rel, m = g.f_rel[row], g.f_measure[row]
        assert m is not None
        if g.f_vtype[row] == "date":
            span, unit = year_span(int(m), self.rng), "year"
            shift = int(self.rng.integers(2, 6)) * 10 * (1 if self.rng.random() < 0.5 else -1)
            if span.hi + shift > LATEST_YEAR:  # a span in the future would give itself away
                shift = -abs(shift)
            lo2, hi2 = span.lo + shift, span.hi + shift
        else:
            span, unit = number_span(m, self.rng), "number"
            factor = 2.0 + float(self.rng.integers(0, 3))
            lo2, hi2 = span.lo * factor, span.hi * factor
        if lo2 <= span.hi and span.lo <= hi2:
            return None  # overlapping spans: the union would be one span
        a = Range(rel, span.lo, span.hi, unit)
        b = Range(rel, float(lo2), float(hi2), unit)
        pair = (a, b) if a.lo < b.lo else (b, a)
        parts = (g.range_ids(rel, a.lo, a.hi), g.range_ids(rel, b.lo, b.hi))
        return self._cut(Union(pair), {rel}, e, cand, kind, parts)

    def _fuzz_range(self, rel: str, m: float, is_date: bool) -> Range | None:
        """An open-ended or century-part range holding ``m``: "before 1900", "after 1950",
        "more than 50,000", "in the late 19th century"."""
        pick = int(self.rng.integers(3))
        if is_date:
            y = int(m)
            if pick == 2:
                part = next(p for p in CENTURY_PARTS if p[1] <= y % 100 <= p[2])
                base = y - y % 100
                return Range(rel, base + part[1], base + part[2], "year")
            step = 50 if self.rng.random() < 0.5 else 100
            if pick == 0:  # before the next round year
                return Range(rel, -math.inf, (y // step + 1) * step - 1, "year")
            low = (y // step) * step  # after a round year
            return Range(rel, low + 1, math.inf, "year") if low < y else None
        if m <= 0:
            return None
        mag = 10 ** math.floor(math.log10(m))
        if pick == 0:
            hi = (math.floor(m / mag) + 1) * mag
            return Range(rel, -math.inf, float(hi), "number")
        lo = math.floor(m / mag) * mag
        if lo >= m:
            return None
        return Range(rel, float(lo), math.inf, "number")
