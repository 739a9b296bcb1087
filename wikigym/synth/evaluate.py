"""Set-valued evaluation of queries over a :class:`KnowledgeGraph`, and witness facts.

:meth:`Evaluator.eval` computes a node's set from every fact of the graph, so "exactly one
element" is a proof of uniqueness over the whole snapshot. :meth:`Evaluator.witness` picks,
for one member of that set, the facts that put it there (leaves first), which become the
task's evidence. What a node's set is, and which facts show a member, each node type says
itself (:meth:`wikigym.synth.node.Node.evaluate`, :meth:`~wikigym.synth.node.Node.witness`);
the evaluator memoises sets for one query at a time and holds the helpers they share.
"""

from __future__ import annotations

import threading
import weakref
from typing import Protocol

import numpy as np

from wikigym.errors import SynthError
from wikigym.synth import idsets
from wikigym.synth.graph import KnowledgeGraph

Item = int | str
# A node's set inside the evaluator: entities as sorted ids (wikigym.synth.idsets), any
# set with a literal key (or an id outside the graph) as a frozenset.
SetValue = np.ndarray | frozenset[Item]


class Evaluable(Protocol):
    """What the evaluator asks of a query node (:class:`wikigym.synth.node.Node`)."""

    def evaluate(self, ev: Evaluator) -> SetValue: ...

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None: ...

    def surely_not(self, ev: Evaluator, want: SetValue) -> bool: ...


def item_order(x: Item) -> tuple[bool, int | str]:
    """A sort key over items: entities (ascending) before literal keys (ascending)."""
    return (isinstance(x, str), x)


# Derived indexes, built once per graph on first use (graphs are read-only).
_DERIVED: weakref.WeakKeyDictionary[KnowledgeGraph, dict[object, np.ndarray]] = (
    weakref.WeakKeyDictionary()
)
_DERIVED_LOCK = threading.Lock()


def _derived(g: KnowledgeGraph) -> dict[object, np.ndarray]:
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
    return got


def number_key(v: float) -> str:
    """The literal key of a computed number (plain digits, as numbers are keyed)."""
    return str(int(v)) if float(v).is_integer() else f"{v:.2f}".rstrip("0").rstrip(".")


def frozen(v: SetValue) -> frozenset[Item]:
    """A node's set as a frozenset."""
    return frozenset(v.tolist()) if isinstance(v, np.ndarray) else v


def same_set(a: SetValue, b: SetValue) -> bool:
    """Whether two node sets hold the same items."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return idsets.equal(a, b)
    if len(a) != len(b):
        return False
    return frozen(a) == frozen(b)


def contains(v: SetValue, x: object) -> bool:
    """Whether ``x`` is in the node set ``v``."""
    if isinstance(v, np.ndarray):
        return type(x) is int and idsets.has(v, x)
    return x in v


def all_ids(values: list[SetValue]) -> list[np.ndarray] | None:
    """``values`` when every one is a set of entity ids, else None."""
    out = [v for v in values if isinstance(v, np.ndarray)]
    return out if len(out) == len(values) else None


class Evaluator:
    """Evaluates nodes of one graph, memoising sub-results for one query at a time."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.g = graph
        self._memo: dict[Evaluable, SetValue] = {}
        self._frozen: dict[Evaluable, frozenset[Item]] = {}
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

    def eval(self, node: Evaluable) -> frozenset[Item]:
        """The set of ``node`` (entities or literal keys)."""
        hit = self._frozen.get(node)
        if hit is None:
            hit = self._frozen[node] = frozen(self.value(node))
        return hit

    def value(self, node: Evaluable) -> SetValue:
        """The set of ``node``: sorted ids when it holds entities of the graph only, else a
        frozenset (see :func:`frozen`, :func:`same_set`, :func:`contains`)."""
        hit = self._memo.get(node)
        if hit is not None:
            return hit
        out = node.evaluate(self)
        self._memo[node] = out
        return out

    def known(self, node: Evaluable) -> bool:
        """Whether ``node``'s set is built already (for this query)."""
        return node in self._memo

    def means(self, node: Evaluable, want: SetValue) -> bool:
        """Whether ``node``'s set is ``want``; a node not built yet is first asked whether
        it can tell without building its set (:meth:`~wikigym.synth.node.Node.surely_not`:
        a relaxed description can reach a million dates, and decoding them all only to
        see the set is not ``want`` is most of the cost)."""
        if node not in self._memo and node.surely_not(self, want):
            return False
        return same_set(self.value(node), want)

    def ids(self, node: Evaluable) -> np.ndarray:
        """The entities of ``node``'s set as sorted ids (its literal keys left out)."""
        v = self.value(node)
        if isinstance(v, np.ndarray):
            return v
        return self.entity_ids(v)

    def size(self, node: Evaluable) -> int:
        """How many items ``node``'s set holds."""
        return len(self.value(node))

    def entity_ids(self, items: frozenset[Item]) -> np.ndarray:
        """The entities of the graph among ``items``, as sorted ids."""
        n = self.g.n_nodes
        return idsets.ids_of(x for x in items if type(x) is int and 0 <= x < n)

    def as_ids(self, v: SetValue) -> np.ndarray:
        """The entities of the node set ``v`` as sorted ids."""
        return v if isinstance(v, np.ndarray) else self.entity_ids(v)

    def pack(self, items: frozenset[Item]) -> SetValue:
        """``items`` as sorted ids when they are all entities of the graph."""
        n = self.g.n_nodes
        ids = [x for x in items if type(x) is int and 0 <= x < n]
        if len(ids) == len(items):
            return idsets.ids_of(ids)
        return items

    # ---- witnesses -------------------------------------------------------------------
    def witness(self, node: Evaluable, target: Item, max_passages: int | None = None) -> list[int]:
        """Fact rows showing that ``target`` is in ``node``'s set (leaves first, no repeats).

        Raises:
            SynthError: ``target`` is not in the set, or (with ``max_passages``) the rows of
                the members walked so far state more than ``max_passages`` distinct passages:
                a set of members too large to show (checked member by member, so a count or
                superlative over 10^4 members stops after a few).
        """
        rows: list[int] = []
        self._max_passages = max_passages
        node.witness(self, target, rows)
        return list(dict.fromkeys(rows))

    def check_passages(self, rows: list[int]) -> None:
        """Raise SynthError when ``rows`` state more passages than the witness allows."""
        limit = self._max_passages
        if limit is not None and len(rows) > limit:
            pids = {self.g.f_pid[r] for r in rows}
            if len(pids) > limit:
                raise SynthError(f"the evidence states more than {limit} passages")
