"""Which described entities of a question a search surfaces: the measure of what makes search
hard.

A description ("the person who died in X and was born in the 1860s") is a *layer* of the
question. A searcher reaches a layer's entity one of three ways: it reads it off a page it
already has ("the birthplace of X": open X), or it searches for a named clue of the layer
(X, or the name of an entity a deeper layer resolved to) with the relation's words and finds
the entity's page among the hits ("X died", top :data:`SEARCH_K`), or it cannot: the layer's
clues are ranges, a shared value or an exclusion, which can only be tested on candidates,
or the search for every clue misses the entity. :func:`unsurfaced` counts the layers of that
last kind; phd questions need one (:mod:`wikigym.synth.levels`).

Computed with the snapshot's own search (the env's ``search`` tool), so it measures this
snapshot's retrieval, not a guess of it; deterministic like the search.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from wikigym.synth.evaluate import Evaluator
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.node import Node, constraints, walk
from wikigym.synth.templates import relation_text

SEARCH_K = 20  # hits a searcher reads for one clue (the search tool's most)
MAX_CLUE_NAMES = 4  # a clue described by a wider set: its first members' names are tried

Search = Callable[[str, int], Sequence[object]]


def clue_query(graph: KnowledgeGraph, relation: str, item: int | str) -> str:
    """What a searcher types for "``relation`` is ``item``": the object's name and the
    relation's first keyword ("Krindun born")."""
    words = relation_text(relation).keywords[:1]
    return " ".join([graph.surface(item), *words]).strip()


def layer_surfaced(layer: Node, ev: Evaluator, search: Search) -> bool:
    """Whether a searcher reaches ``layer``'s members (see the module docstring)."""
    g = ev.g
    members = {x for x in ev.eval(layer) if isinstance(x, int)}
    if not members:
        return False
    for c in constraints(layer):
        if c.negated is not None:
            continue
        if c.attribute() is not None:
            return True  # read off the pages of what it is an attribute of
        link = c.link()
        if link is None:
            continue  # a range, a shared value: tested on candidates, never searched
        relation, obj = link
        names = sorted(ev.eval(obj), key=lambda x: (isinstance(x, str), x))[:MAX_CLUE_NAMES]
        for item in names:
            for hit in search(clue_query(g, relation, item), SEARCH_K):
                if getattr(hit, "doc_id", None) in members:
                    return True
    return False


def unsurfaced(root: Node, ev: Evaluator, search: Search) -> int:
    """How many layers (descriptions) of ``root`` no search for their clues surfaces."""
    layers = [n for n in walk(root) if n.conjuncts() is not None and constraints(n)]
    return sum(not layer_surfaced(n, ev, search) for n in layers)


__all__ = ["SEARCH_K", "clue_query", "layer_surfaced", "unsurfaced"]
