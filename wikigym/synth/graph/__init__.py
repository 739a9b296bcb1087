"""The knowledge graph synth walks: a snapshot's facts (and links) as in-memory indexes.

Built once per snapshot with DuckDB (:meth:`Snapshot.sql`, :mod:`.build`), then only read.
Nodes are entities (article doc ids, ``int``) and literal values (their key, ``str``). Each
fact is a row of parallel columns (:mod:`.data`); indexes map relation -> subject -> rows,
relation -> object -> subjects, entity -> rows in and out, and relation -> sorted measures
for range filters. Reads by item (:mod:`.reading`), entity sets as sorted ids (:mod:`.sets`)
and whole-relation statistics (:mod:`.stats`) are the graph's methods
(:class:`KnowledgeGraph`); which facts and kinds it takes is :mod:`.kinds`, how much it keeps
:mod:`.limits`.

World snapshots use their exact ``world`` facts. Other snapshots use the facts the
vocabularies typed from every source (``infobox``, ``lead``, ``category``, ``wikidata``;
:mod:`wikigym.corpora.factsources`), each once (a fact that restates another is left out):
their relation has a phrasing and their value parsed as its type. A fact the build located
in a passage of its subject is *stated* there; one stated only by its category line, its
Wikidata statement or its infobox field is kept (it makes evaluation complete) with passage
``UNSTATED``, and is never a task's only evidence (:mod:`wikigym.synth.generate`). An entity
value without a page in the snapshot is a node after the articles (``n_pages``). Raw infobox
keys and untyped links (``links_to``) never make a question.
"""

from wikigym.synth.graph.core import KnowledgeGraph, forget_graphs, graph_of
from wikigym.synth.graph.kinds import REAL_SOURCES, SKIP_RELATIONS, UNSTATED
from wikigym.synth.graph.views import FactRow, RowIndex

__all__ = [
    "REAL_SOURCES",
    "SKIP_RELATIONS",
    "UNSTATED",
    "FactRow",
    "KnowledgeGraph",
    "RowIndex",
    "forget_graphs",
    "graph_of",
]
