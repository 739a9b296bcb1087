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
_MANY = 24  # sets at least this large are projected in one numpy pass


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
    d = _derived(g)
    key = ("same", rel_a, rel_b)
    got = d.get(key)
    if got is None:
        d[key] = got = g.shared_object_subjects(rel_a, rel_b)
    return got  # type: ignore[return-value]


def number_key(v: float) -> str:
    """The literal key of a computed number (plain digits, as numbers are keyed)."""
    return str(int(v)) if float(v).is_integer() else f"{v:.2f}".rstrip("0").rstrip(".")


class Evaluator:
    """Evaluates nodes of one graph, memoising sub-results for one query at a time."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.g = graph
        self._memo: dict[Node, frozenset[Item]] = {}

    def reset(self) -> None:
        self._memo.clear()

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
        hit = self._memo.get(node)
        if hit is not None:
            return hit
        out = self._eval(node)
        self._memo[node] = out
        return out

    def _eval(self, node: Node) -> frozenset[Item]:
        g = self.g
        if isinstance(node, Entity):
            return frozenset((node.doc_id,))
        if isinstance(node, Value):
            return frozenset((node.key,))
        if isinstance(node, IsA):
            return g.members(node.kind)  # type: ignore[return-value]
        if isinstance(node, Range):
            return g.in_range(node.relation, node.lo, node.hi)  # type: ignore[return-value]
        if isinstance(node, Project):
            arg = self.eval(node.arg)
            out: set[Item] = set()
            if len(arg) >= _MANY:  # one numpy pass rather than a lookup per item
                if node.inverse:
                    return frozenset(g.subjects_of_all(node.relation, arg))
                return frozenset(g.objects_of_all(node.relation, arg))
            if node.inverse:
                index = g.inv.get(node.relation, {})
                for o in arg:
                    out.update(index.get(o, ()))
            else:
                for s in arg:
                    if isinstance(s, int):
                        out.update(g.objects(node.relation, s))
            return frozenset(out)
        if isinstance(node, Intersect):
            pos = [a for a in node.args if not isinstance(a, Not)]
            if not pos:
                raise SynthError("an 'and' query node needs at least one positive argument")
            sets = sorted((self.eval(a) for a in pos), key=len)
            acc = set(sets[0])
            for s in sets[1:]:
                acc.intersection_update(s)
                if not acc:
                    break
            for a in node.args:
                if isinstance(a, Not) and acc:
                    acc.difference_update(self.eval(a.arg))
            return frozenset(acc)
        if isinstance(node, Not):
            raise SynthError("a 'not' query node must be an argument of an 'and' node")
        if isinstance(node, Union):
            if not node.args:
                raise SynthError("an 'or' query node needs at least one argument")
            acc = set()
            for a in node.args:
                acc.update(self.eval(a))
            return frozenset(acc)
        if isinstance(node, Same):
            return same_object(g, node.rel_a, node.rel_b)  # type: ignore[return-value]
        if isinstance(node, Extreme):
            arg = self.eval(node.arg)
            if len(arg) >= _MANY:  # the measures of a large set in one lookup
                ids = np.fromiter((x for x in arg if type(x) is int), dtype=np.int64)
                vals = g.least_measures(node.relation, ids)
                has = ~np.isnan(vals)
                if not has.any():
                    return frozenset()
                best = vals[has].max() if node.most else vals[has].min()
                return frozenset(ids[has & (vals == best)].tolist())
            scored = [
                (m, x)
                for x in self.eval(node.arg)
                if (m := self.measure(node.relation, x)) is not None
            ]
            if not scored:
                return frozenset()
            best = max(m for m, _ in scored) if node.most else min(m for m, _ in scored)
            return frozenset(x for m, x in scored if m == best)
        if isinstance(node, Arith):
            left, right = self.eval(node.left), self.eval(node.right)
            if len(left) != 1 or len(right) != 1:
                return frozenset()
            a = self.literal_measure(next(iter(left)))
            b = self.literal_measure(next(iter(right)))
            if a is None or b is None:
                return frozenset()
            v = a - b if node.op == "sub" else a + b
            return frozenset((number_key(v),))
        if isinstance(node, Count):
            return frozenset((str(len(self.eval(node.arg))),))
        if isinstance(node, Ask):
            target = self.eval(node.arg)
            cand = (
                node.candidate.doc_id if isinstance(node.candidate, Entity) else node.candidate.key
            )
            return frozenset(("yes" if cand in target else "no",))
        raise SynthError(f"cannot evaluate {type(node).__name__}")

    # ---- witnesses -------------------------------------------------------------------
    def witness(self, node: Node, target: Item) -> list[int]:
        """Fact rows showing that ``target`` is in ``node``'s set (leaves first, no repeats).

        Raises:
            SynthError: ``target`` is not in the set.
        """
        rows: list[int] = []
        self._witness(node, target, rows)
        return list(dict.fromkeys(rows))

    def _witness(self, node: Node, t: Item, rows: list[int]) -> None:
        g = self.g
        if isinstance(node, Entity | Value | IsA):
            if t not in self.eval(node):
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
            arg = self.eval(node.arg)
            if node.inverse:
                for r in g.fwd.get(node.relation, {}).get(t, ()):  # type: ignore[call-overload]
                    if g.f_obj[r] in arg:
                        self._witness(node.arg, g.f_obj[r], rows)
                        rows.append(r)
                        return
            else:
                for s in sorted(arg, key=_order):
                    if isinstance(s, int) and (r := g.find_row(s, node.relation, t)) is not None:
                        self._witness(node.arg, s, rows)
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
                if t in self.eval(a):
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
            return
        if isinstance(node, Arith):
            for side in (node.left, node.right):
                (v,) = tuple(self.eval(side))
                self._witness(side, v, rows)
            return
        if isinstance(node, Count):
            for m in sorted(self.eval(node.arg), key=_order):
                self._witness(node.arg, m, rows)
            return
        if isinstance(node, Ask):
            for m in sorted(self.eval(node.arg), key=_order):
                self._witness(node.arg, m, rows)
            return
        raise SynthError(f"cannot witness {type(node).__name__}")
