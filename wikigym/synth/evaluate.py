"""Set-valued evaluation of queries over a :class:`KnowledgeGraph`, and witness facts.

:func:`evaluate` computes a node's set from every fact of the graph, so "exactly one element"
is a proof of uniqueness over the whole snapshot. :func:`witness` picks, for one member of
that set, the facts that put it there (leaves first), which become the task's evidence.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from wikigym.errors import SynthError
from wikigym.synth import idsets
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.query import (
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
    hops,
)

Item = int | str


def _order(x: Item) -> tuple[bool, int | str]:
    return (isinstance(x, str), x)


# Derived indexes, built once per graph on first use (graphs are read-only).
_DERIVED: weakref.WeakKeyDictionary[KnowledgeGraph, dict[object, object]] = (
    weakref.WeakKeyDictionary()
)
_DERIVED_LOCK = threading.Lock()


def _derived(g: KnowledgeGraph) -> dict[object, object]:
    with _DERIVED_LOCK:
        d = _DERIVED.get(g)
        if d is None:
            d = {}
            _DERIVED[g] = d
        return d


def same_object(g: KnowledgeGraph, rel_a: str, rel_b: str) -> frozenset[int]:
    """Subjects with some object under both ``rel_a`` and ``rel_b``."""
    return frozenset(same_object_ids(g, rel_a, rel_b).tolist())


def same_object_ids(g: KnowledgeGraph, rel_a: str, rel_b: str) -> np.ndarray:
    """:func:`same_object` as sorted ids (kept once built)."""
    d = _derived(g)
    key = ("same", rel_a, rel_b)
    got = d.get(key)
    if got is None:
        d[key] = got = g.shared_object_ids(rel_a, rel_b)
    return got  # type: ignore[return-value]


def number_key(v: float) -> str:
    """The literal key of a computed number (plain digits, as numbers are keyed)."""
    return str(int(v)) if float(v).is_integer() else f"{v:.2f}".rstrip("0").rstrip(".")


# A node's set inside the evaluator: entities as sorted ids (wikigym.synth.idsets), any
# set with a literal key (or an id outside the graph) as a frozenset.
Value_ = np.ndarray | frozenset[Item]


def frozen(v: Value_) -> frozenset[Item]:
    """A node's set as a frozenset."""
    return frozenset(v.tolist()) if isinstance(v, np.ndarray) else v


def same_set(a: Value_, b: Value_) -> bool:
    """Whether two node sets hold the same items."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return idsets.equal(a, b)
    if len(a) != len(b):
        return False
    return frozen(a) == frozen(b)


def contains(v: Value_, x: object) -> bool:
    """Whether ``x`` is in the node set ``v``."""
    if isinstance(v, np.ndarray):
        return type(x) is int and idsets.has(v, x)
    return x in v


class Evaluator:
    """Evaluates nodes of one graph, memoising sub-results for one query at a time."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.g = graph
        self._memo: dict[Node, Value_] = {}
        self._frozen: dict[Node, frozenset[Item]] = {}
        self._max_passages: int | None = None

    def reset(self) -> None:
        self._memo.clear()
        self._frozen.clear()

    def measure(self, relation: str, entity: Item) -> float | None:
        """The least ``relation`` measure of ``entity`` (None when it has none)."""
        if not isinstance(entity, int):
            return None
        g = self.g
        ms = [g.f_measure[r] for r in g.fwd.get(relation, {}).get(entity, ())]
        vals = [m for m in ms if m is not None]
        return min(vals) if vals else None

    def literal_measure(self, key: Item) -> float | None:
        """The measure of a literal key (a date's year, a number's value), or None."""
        if not isinstance(key, str):
            return None
        return self.g.literal_measure(key)

    def eval(self, node: Node) -> frozenset[Item]:
        """The set of ``node`` (entities or literal keys)."""
        hit = self._frozen.get(node)
        if hit is None:
            hit = self._frozen[node] = frozen(self.value(node))
        return hit

    def value(self, node: Node) -> Value_:
        """The set of ``node``: sorted ids when it holds entities of the graph only, else a
        frozenset (see :func:`frozen`, :func:`same_set`, :func:`contains`)."""
        hit = self._memo.get(node)
        if hit is not None:
            return hit
        out = self._eval(node)
        self._memo[node] = out
        return out

    def means(self, node: Node, want: Value_) -> bool:
        """Whether ``node``'s set is ``want``. A projection onto literals is sized from its
        codes first: a relaxed description can reach a million dates, and decoding them all
        only to see the set is not ``want`` is most of the cost (projections keep distinct
        codes, one per literal, so the sizes are the sets' sizes)."""
        if node not in self._memo:
            if isinstance(node, Project) and not node.inverse:
                arg = self.value(node.arg)
                ids = arg if isinstance(arg, np.ndarray) else self._entity_ids(arg)
                if len(self.g.object_codes_of_ids(node.relation, ids)) != len(want):
                    return False
            elif self._at_least(node) > len(want):
                return False
        return same_set(self.value(node), want)

    def _at_least(self, node: Node) -> int:
        """A lower bound on the size of ``node``'s set, without building it (0: none known).

        A loosened description is often "the people whose nationality is that of someone
        born in the 1770s": its set is most of the people, and building it to see that it
        is not the answer alone took 10-20 ms on a 1M-article world. The countries are few,
        and the one with the most such subjects bounds the set from below."""
        g = self.g
        if isinstance(node, Intersect):
            rest = [a for a in node.args if not isinstance(a, IsA)]
            if len(rest) != 1 or not isinstance(rest[0], Project) or not rest[0].inverse:
                return 0
            kinds = {a.kind for a in node.args if isinstance(a, IsA)}
            # Only when the kind filter keeps every subject of the relation.
            if kinds and kinds != {g.relation_kind(rest[0].relation, "subject")}:
                return 0
            node = rest[0]
        if isinstance(node, Project) and node.inverse:
            arg = self.value(node.arg)
            if not isinstance(arg, np.ndarray):
                return 0
            return g.most_subjects_of_codes(node.relation, arg)
        return 0

    def ids(self, node: Node) -> np.ndarray:
        """The entities of ``node``'s set as sorted ids (its literal keys left out)."""
        v = self.value(node)
        if isinstance(v, np.ndarray):
            return v
        return self._entity_ids(v)

    def size(self, node: Node) -> int:
        """How many items ``node``'s set holds."""
        return len(self.value(node))

    def _entity_ids(self, items: frozenset[Item]) -> np.ndarray:
        n = self.g.n_nodes
        return idsets.ids_of(x for x in items if type(x) is int and 0 <= x < n)

    def _pack(self, items: frozenset[Item]) -> Value_:
        """``items`` as sorted ids when they are all entities of the graph."""
        n = self.g.n_nodes
        if all(type(x) is int and 0 <= x < n for x in items):
            return idsets.ids_of(items)  # type: ignore[arg-type]
        return items

    def _probed(self, pos: list[Node]) -> np.ndarray | None:
        """The intersection of ``pos`` with its ranges tested entity by entity, or None.

        When the other constraints leave a set far smaller than a range ("born before 1900"
        can hold a good part of the graph), the range is decided on that set's own facts
        (:meth:`KnowledgeGraph.ids_in_range`) and its set is never built. The same ids as
        intersecting the built sets; None when some constraint is not a set of entities or
        no range is worth it, and the caller intersects as usual."""
        g = self.g
        ranges = [a for a in pos if isinstance(a, Range) and a not in self._memo]
        if not ranges:
            return None
        others = [a for a in pos if not (isinstance(a, Range) and a not in self._memo)]
        sets = [a for a in others if not isinstance(a, IsA)]
        if not sets:
            return None
        vals = [self.value(a) for a in sets]
        if not all(isinstance(v, np.ndarray) for v in vals):
            return None
        acc = idsets.intersect_all(vals)  # type: ignore[arg-type]
        for kind in dict.fromkeys(a.kind for a in others if isinstance(a, IsA)):
            acc = g.ids_of_kind(acc, kind)
        if not any(g.probe_pays(len(acc), r.relation, r.lo, r.hi) for r in ranges):
            return None
        for r in ranges:
            if not len(acc):
                break
            acc = g.ids_in_range(acc, r.relation, r.lo, r.hi)
        return acc

    def _eval(self, node: Node) -> Value_:
        g = self.g
        if isinstance(node, Entity):
            return self._pack(frozenset((node.doc_id,)))
        if isinstance(node, Value):
            return frozenset((node.key,))
        if isinstance(node, IsA):
            return g.member_ids(node.kind)
        if isinstance(node, Range):
            return g.range_ids(node.relation, node.lo, node.hi)
        if isinstance(node, Project):
            arg = self.value(node.arg)
            if node.inverse:
                if isinstance(arg, np.ndarray):
                    codes = arg
                else:
                    got = (g.encode(x) for x in sorted(arg, key=_order))
                    codes = idsets.ids_of(c for c in got if c is not None)
                return g.subject_ids_of_codes(node.relation, codes)
            ids = arg if isinstance(arg, np.ndarray) else self._entity_ids(arg)
            codes = g.object_codes_of_ids(node.relation, ids)
            if not len(codes) or codes[0] >= 0:  # entities only
                return codes
            return frozenset(g.decode(c) for c in codes.tolist())
        if isinstance(node, Intersect):
            pos = [a for a in node.args if not isinstance(a, Not)]
            if not pos:
                raise SynthError("an 'and' query node needs at least one positive argument")
            negs = [a.arg for a in node.args if isinstance(a, Not)]
            probed = self._probed(pos)
            if probed is not None:
                acc_ids = probed
                for a in negs:
                    if not len(acc_ids):
                        break
                    acc_ids = idsets.minus(acc_ids, self.ids(a))
                return acc_ids
            vals = [self.value(a) for a in pos]
            if all(isinstance(v, np.ndarray) for v in vals):
                # Type filters last, by each id's kind: a kind's members can be most of the
                # graph, and bisecting them once per id costs more than one gather.
                kinds = [a.kind for a in pos if isinstance(a, IsA)]
                rest = [v for a, v in zip(pos, vals, strict=True) if not isinstance(a, IsA)]
                if rest and len(set(kinds)) == 1:
                    acc_ids = g.ids_of_kind(idsets.intersect_all(rest), kinds[0])  # type: ignore[arg-type]
                else:
                    acc_ids = idsets.intersect_all(vals)  # type: ignore[arg-type]
                for a in negs:
                    if not len(acc_ids):
                        break
                    neg = self.value(a)
                    if isinstance(neg, np.ndarray):
                        acc_ids = idsets.minus(acc_ids, neg)
                    else:
                        acc_ids = idsets.minus(acc_ids, self._entity_ids(neg))
                return acc_ids
            sets = sorted((frozen(v) for v in vals), key=len)
            acc = set(sets[0])
            for s in sets[1:]:
                acc.intersection_update(s)
                if not acc:
                    break
            for a in negs:
                if acc:
                    acc.difference_update(frozen(self.value(a)))
            return self._pack(frozenset(acc))
        if isinstance(node, Not):
            raise SynthError("a 'not' query node must be an argument of an 'and' node")
        if isinstance(node, Union):
            if not node.args:
                raise SynthError("an 'or' query node needs at least one argument")
            vals = [self.value(a) for a in node.args]
            if all(isinstance(v, np.ndarray) for v in vals):
                return idsets.union_all(vals)  # type: ignore[arg-type]
            acc: set[Item] = set()
            for v in vals:
                acc.update(frozen(v))
            return self._pack(frozenset(acc))
        if isinstance(node, Same):
            return same_object_ids(g, node.rel_a, node.rel_b)
        if isinstance(node, Extreme):
            arg = self.value(node.arg)
            # Literal keys have no measure: only the entities compete.
            ids = arg if isinstance(arg, np.ndarray) else self._entity_ids(arg)
            if not len(ids):
                return idsets.EMPTY
            vals = g.least_measures(node.relation, ids)
            has = ~np.isnan(vals)
            if not has.any():
                return idsets.EMPTY
            best = vals[has].max() if node.most else vals[has].min()
            return ids[has & (vals == best)]
        if isinstance(node, Arith):
            left, right = self.value(node.left), self.value(node.right)
            if len(left) != 1 or len(right) != 1:
                return frozenset()
            a = self.literal_measure(next(iter(frozen(left))))
            b = self.literal_measure(next(iter(frozen(right))))
            if a is None or b is None:
                return frozenset()
            v = a - b if node.op == "sub" else a + b
            return frozenset((number_key(v),))
        if isinstance(node, Count):
            return frozenset((str(len(self.value(node.arg))),))
        if isinstance(node, Ask):
            target = self.value(node.arg)
            cand = (
                node.candidate.doc_id if isinstance(node.candidate, Entity) else node.candidate.key
            )
            return frozenset(("yes" if contains(target, cand) else "no",))
        raise SynthError(f"cannot evaluate {type(node).__name__}")

    # ---- witnesses -------------------------------------------------------------------
    def witness(self, node: Node, target: Item, max_passages: int | None = None) -> list[int]:
        """Fact rows showing that ``target`` is in ``node``'s set (leaves first, no repeats).

        Raises:
            SynthError: ``target`` is not in the set, or (with ``max_passages``) the rows of
                the members walked so far state more than ``max_passages`` distinct passages:
                a set of members too large to show (checked member by member, so a count or
                superlative over 10^4 members stops after a few).
        """
        rows: list[int] = []
        self._max_passages = max_passages
        self._witness(node, target, rows)
        return list(dict.fromkeys(rows))

    def _check_passages(self, rows: list[int]) -> None:
        limit = self._max_passages
        if limit is not None and len(rows) > limit:
            pids = {self.g.f_pid[r] for r in rows}
            if len(pids) > limit:
                raise SynthError(f"the evidence states more than {limit} passages")

    def _witness(self, node: Node, t: Item, rows: list[int]) -> None:
        g = self.g
        if isinstance(node, Entity | Value | IsA):
            if not contains(self.value(node), t):
                raise SynthError(f"{t!r} is not in {node}")
            return
        if isinstance(node, Range):
            for r in g.fwd.get(node.relation, {}).get(t, ()):  # type: ignore[call-overload]
                m = g.f_measure[r]
                if m is not None and node.lo <= m <= node.hi:
                    rows.append(r)
                    return
            raise SynthError(f"{t!r} has no {node.relation} in [{node.lo}, {node.hi}]")
        if isinstance(node, Project):
            arg = self.value(node.arg)
            if node.inverse:
                for r in g.fwd.get(node.relation, {}).get(t, ()):  # type: ignore[call-overload]
                    if contains(arg, g.f_obj[r]):
                        self._witness(node.arg, g.f_obj[r], rows)
                        rows.append(r)
                        return
            else:
                # The least subject of the argument with a (subject, relation, t) fact: the
                # one a walk over the argument in sorted order would meet first.
                ids = arg if isinstance(arg, np.ndarray) else self._entity_ids(arg)
                hits = idsets.intersect(ids, g.subject_ids(node.relation, t))
                if len(hits) and (r := g.find_row(int(hits[0]), node.relation, t)) is not None:
                    self._witness(node.arg, int(hits[0]), rows)
                    rows.append(r)
                    return
            raise SynthError(f"{t!r} is not reached by {node.relation}")
        if isinstance(node, Intersect):
            # Deepest constraint first: that is the chain the oracle follows. A negated
            # constraint has no witness of its own (its absence is proved by evaluation).
            for a in sorted(node.args, key=hops, reverse=True):
                if not isinstance(a, Not):
                    self._witness(a, t, rows)
            return
        if isinstance(node, Union):
            for a in node.args:
                if contains(self.value(a), t):
                    self._witness(a, t, rows)
                    return
            raise SynthError(f"{t!r} is in no branch of the union")
        if isinstance(node, Same):
            if not isinstance(t, int):
                raise SynthError(f"{t!r} is not an entity")
            a_rows = g.fwd.get(node.rel_a, {}).get(t, ())
            b_rows = g.fwd.get(node.rel_b, {}).get(t, ())
            for ra in a_rows:
                for rb in b_rows:
                    if g.f_obj[ra] == g.f_obj[rb]:
                        rows.extend((ra, rb))
                        return
            raise SynthError(f"{t!r} has no shared {node.rel_a}/{node.rel_b} object")
        if isinstance(node, Extreme):
            # The winner and every rival's measure: the comparison is shown in full.
            members = sorted(self.eval(node.arg), key=_order)
            for m in [t, *(x for x in members if x != t)]:
                self._witness(node.arg, m, rows)
                for r in g.fwd.get(node.relation, {}).get(m, ()):  # type: ignore[call-overload]
                    if g.f_measure[r] is not None:
                        rows.append(r)
                        break
                self._check_passages(rows)
            return
        if isinstance(node, Arith):
            for side in (node.left, node.right):
                (v,) = tuple(self.eval(side))
                self._witness(side, v, rows)
            return
        if isinstance(node, Count | Ask):
            for m in sorted(self.eval(node.arg), key=_order):
                self._witness(node.arg, m, rows)
                self._check_passages(rows)
            return
        raise SynthError(f"cannot witness {type(node).__name__}")
