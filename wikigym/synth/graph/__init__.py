"""The knowledge graph synth walks: a snapshot's facts (and links) as in-memory indexes.

Built once per snapshot with DuckDB (:meth:`Snapshot.sql`, :mod:`.build`), then only read.
Nodes are entities (article doc ids, ``int``) and literal values (their key, ``str``). Each
fact is a row of parallel columns (:mod:`.data`); indexes map relation -> subject -> rows,
relation -> object -> subjects, entity -> rows in and out, and relation -> sorted measures
for range filters. Reads by item (:mod:`.reading`), entity sets as sorted ids (:mod:`.sets`)
and whole-relation statistics (:mod:`.stats`) are the graph's methods
(:class:`KnowledgeGraph`); which facts and kinds it takes is :mod:`.kinds`, how much it keeps
:mod:`.limits`.

World snapshots use their exact ``world`` facts. Other snapshots use only the ``infobox``
facts that the relation vocabulary typed (:mod:`wikigym.corpora.vocabulary`): their relation
has a phrasing, their value parsed as its type, and the build located the passage that
states it. Raw infobox keys and untyped links (``links_to``) never make a question.
"""

from wikigym.synth.graph.core import KnowledgeGraph, forget_graphs, graph_of
from wikigym.synth.graph.kinds import SKIP_RELATIONS
from wikigym.synth.graph.views import FactRow, RowIndex

__all__ = ["SKIP_RELATIONS", "FactRow", "KnowledgeGraph", "RowIndex", "forget_graphs", "graph_of"]
