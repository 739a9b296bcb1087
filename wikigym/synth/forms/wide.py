"""The wide question form: the answer's own description is a wide set of weak attributes.

"the person educated at the university whose founder ..., born in the late 19th century, who
died before 1950, a citizen of X and a poet": one constraint is a chain of the question's
hops, and 3-7 weak one-hop constraints (open or century-part ranges, shared values) are
chosen that, with it, leave the answer alone, each one needed. Drafted around an answer with
facts in WIDE_RICH relations or more; the chain's first fact fixes the candidates, and the
neighbour is described only for a wide set that works. The set is an
:class:`~wikigym.synth.forms.intersect.Intersect` with WIDE_MIN constraints or more.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np

from wikigym.synth import idsets
from wikigym.synth.drafts import Draft, QuestionForm, SamplerAPI, Shape, register_form
from wikigym.synth.forms.entity import Entity
from wikigym.synth.forms.intersect import WIDE_MIN, Intersect
from wikigym.synth.forms.isa import IsA
from wikigym.synth.forms.project import Project
from wikigym.synth.forms.range import fuzz_range
from wikigym.synth.idsets import has
from wikigym.synth.node import Node

WIDE_MAX = 8  # constraints of a wide set at most
WIDE_POOL = 9  # weakest one-hop constraints a wide set is chosen from
WIDE_RICH = 8  # relations that make an entity worth trying for a wide set first
WIDE_TRIES = 64  # answers tried per wide draft
WIDE_CHAINS = 6  # chains tried for an answer that has a wide set


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


def wide_pool(s: SamplerAPI) -> np.ndarray:
    """The entities with facts in WIDE_RICH or more usable relations (each side counted: as
    the subject, as an entity object), ascending, or failing any, in WIDE_MIN or more (kept
    on the graph). A wide set needs weak constraints that identify only together; an entity
    with few relations rarely has enough of them (on a 230k-article world, 0-2% of the
    entities with 4-7 relations had a wide set, 7-8% of those with 8 or more)."""

    def rich() -> np.ndarray:
        counts = s.g.relation_counts(s.rel_ok)
        ids = np.flatnonzero(counts >= WIDE_RICH)
        if not len(ids):  # a small world: every entity that could make one
            ids = np.flatnonzero(counts >= WIDE_MIN)
        return ids.astype(idsets.ID_DTYPE)

    return s.g.kept((*s.key, "wide"), rich)


def coarse_leaf_node(s: SamplerAPI, row: int, e_is_subject: bool, shape: Shape) -> Node:
    """A one-hop constraint from fact ``row`` for a wide set: a measured literal becomes an
    open-ended or century-part range ("before 1900", "more than 50,000"), which many
    entities share. Spans as narrow as a hard question's (a decade, a band around a number)
    identify an entity with two or three constraints, so four would never all be needed."""
    g = s.g
    m = g.f_measure[row]
    if e_is_subject and m is not None and not isinstance(g.f_obj[row], int):
        node = fuzz_range(g.f_rel[row], m, g.f_vtype[row] == "date", s.rng)
        if node is not None:
            return node
    return s.leaf_node(row, e_is_subject, shape)


def wide_set(
    s: SamplerAPI,
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
    g = s.g
    chain_node, cand, chain_row = chain
    # The constraints first (their ranges draw from the RNG in edge order), the sets
    # after: a pool has one leaf per relation, so fewer relations than the smallest
    # combination needs can make no wide set, and no set is built for it (exact).
    drawn = [
        (coarse_leaf_node(s, r, is_subj, shape), r, is_subj)
        for r, is_subj in s.edges(e, visited, entity_only=False)
        if g.f_rel[r] != g.f_rel[chain_row]
    ]
    if len({g.f_rel[r] for _, r, _ in drawn}) < WIDE_MIN - 1:
        return None
    # Every combination holds the chain, so only the chain's entities can be rivals:
    # each constraint is decided on them alone (one bisection each into its set).
    # One that keeps e alone among them would make every other one redundant.
    sized: list[tuple[int, Node, int, bool, np.ndarray]] = []
    for node, r, is_subj in drawn:
        kept = s.within(cand, node, r, is_subj)
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
            if len(s.ev.ids(rest)) < 2:
                continue
            members = [chain_node, *weak]
            return Intersect((IsA(kind), *members)) if kind else Intersect(tuple(members))
    return None


@register_form
class WideForm(QuestionForm):
    """A wide set: the answer's own description, a chain and 3-7 weak constraints, all
    needed."""

    name = "wide"
    special = True

    def shape(self, shape: Shape) -> Shape:
        return replace(
            shape, intersect=True, special=self.name, max_constraints=WIDE_MAX, ambiguous=True
        )

    def draft(self, s: SamplerAPI, shape: Shape, level: str, want_yes: bool) -> Draft | None:
        """The chain is of ``shape.depth`` hops (so the question keeps its hops). The
        answer is drawn from the entities rich in relations (:func:`wide_pool`); each
        chain's first fact is tried with its neighbour named, and the neighbour is
        described only for a wide set that works."""
        if not len(s.entities):
            return None
        g = s.g
        pool = wide_pool(s)
        if not len(pool):
            return None
        plain = replace(shape, special=None, max_constraints=3)
        for _ in range(WIDE_TRIES):
            e = int(pool[int(s.rng.integers(len(pool)))])
            kind = g.kinds[e]
            kind_set = g.member_ids(kind) if kind else None
            visited = frozenset((e,))
            for row, is_subj in s.edges(e, visited, entity_only=True)[:WIDE_CHAINS]:
                rel, other = g.f_rel[row], g.f_obj[row] if is_subj else g.f_subj[row]
                if not isinstance(other, int):
                    continue
                found = g.subject_ids(rel, other) if is_subj else g.object_ids(rel, other)
                cand = s.of_kind(found, rel, is_subj, kind, kind_set)
                if len(cand) <= WIDE_MIN or not has(cand, e):
                    continue
                named = Project(rel, Entity(other, g.titles[other]), inverse=is_subj)
                node = wide_set(s, e, kind, visited, shape, (named, cand, row))
                if node is None:
                    continue
                sub = s.describe(other, shape.depth - 1, plain, visited)
                if sub is None:
                    continue
                chain = Project(rel, sub[0], inverse=is_subj)
                args = node.children()
                return Draft(Intersect(tuple(chain if a == named else a for a in args)), e, "wide")
        return None
