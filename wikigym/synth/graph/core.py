"""The knowledge graph synth walks (:class:`KnowledgeGraph`) and the one graph a process
keeps per snapshot (:func:`graph_of`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from wikigym.corpora.memory import give_back_freed_memory
from wikigym.corpora.snapshot import Snapshot
from wikigym.synth.graph.build import read_graph
from wikigym.synth.graph.sets import GraphSets
from wikigym.synth.graph.stats import RelationStats

T = TypeVar("T")


class KnowledgeGraph(GraphSets, RelationStats):
    """Facts of one snapshot as numpy columns and sorted indexes; build with
    :meth:`from_snapshot`.

    Rows are the kept facts in ``fact_id`` order. A node is an entity (its doc id, ``int``)
    or a literal key (``str``); inside, an object is encoded as one integer: the doc id, or
    ``-1 - k`` for the literal key of id ``k`` (keys are sorted, so ids follow key order).
    Every index is a sort of the rows (CSR offsets or sorted segments searched by bisection),
    so lookups return sorted ids and never depend on hash or insertion order. Storage
    (:mod:`~wikigym.synth.graph.data`), reads by item (:mod:`~wikigym.synth.graph.reading`),
    entity sets (:mod:`~wikigym.synth.graph.sets`) and relation statistics
    (:mod:`~wikigym.synth.graph.stats`) each have their module.
    """

    @classmethod
    def from_snapshot(cls, snapshot: Snapshot) -> KnowledgeGraph:
        """Load the facts of ``snapshot`` into columns, streamed from DuckDB in chunks.

        Raises:
            SynthError: The snapshot has no usable fact.
        """
        parts = read_graph(snapshot)
        graph = cls(*parts)
        del parts  # the columns the graph did not keep go back now
        give_back_freed_memory()
        return graph

    def kept(self, key: tuple[object, ...], build: Callable[[], T]) -> T:
        """``build()``, kept for the graph's life under ``key``: for the few values derived
        from the whole graph that every TaskSet drawn from it needs again (the sampler's
        pools), so a process that generates several pays for them once."""
        if key not in self._kept_values:
            self._kept_values[key] = build()
        return self._kept_values[key]  # type: ignore[return-value]


_CACHE: dict[tuple[str, str], KnowledgeGraph] = {}
_CACHE_LOCK = threading.Lock()


def forget_graphs() -> None:
    """Drop the graph :func:`graph_of` keeps (its memory goes back once nothing else holds it)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def graph_of(snapshot: Snapshot) -> KnowledgeGraph:
    """The graph of ``snapshot``, built once per process and snapshot."""
    key = (str(snapshot.path), snapshot.snapshot_id)
    with _CACHE_LOCK:
        g = _CACHE.get(key)
        if g is None:
            _CACHE.clear()  # one graph at a time: they are large
            g = KnowledgeGraph.from_snapshot(snapshot)
            _CACHE[key] = g
        return g
