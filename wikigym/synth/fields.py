"""Every value of a field: a proof over the graph holds only where the graph holds every fact
the snapshot states of the relations it reads.

On a real wiki the graph takes the facts it can show as evidence (those located in a passage of
their subject); the snapshot's facts table may state more: a second value of a multi-valued
infobox field (Algeria's official languages: Arabic and Berber), or a value no passage states.
A question that reads "the official language of Algeria" off a graph holding Arabic alone is
unique only in the graph. :func:`unheld_value` finds, for the relations a query reads off named
or proved entities, a value (or a subject) the snapshot states and the graph does not hold,
and the generator refuses such a draft (``synth verify`` too, since ``wikigym.synth/6``). A
generated world's graph holds every fact (:meth:`KnowledgeGraph.complete`): nothing to check.
"""

from __future__ import annotations

from typing import Protocol

import pyarrow as pa

from wikigym.synth.evaluate import Evaluator
from wikigym.synth.node import Node, walk

MAX_SUBJECTS = 8  # subjects of one attribute checked (a proof reads a few)


class Facts(Protocol):
    """What the check reads of a snapshot (:meth:`Snapshot.sql`)."""

    def sql(self, query: str, params: list[object] | None = None) -> pa.Table: ...


def unheld_value(root: Node, ev: Evaluator, snapshot: Facts) -> str | None:
    """A fact the snapshot states for a relation ``root`` reads that the graph does not hold
    ("Algeria official_language: 2 values stated, 1 held"), or None."""
    g = ev.g
    if g.complete():
        return None
    for n in walk(root):
        att = n.attribute()
        if att is not None:
            relation, subject = att
            members = sorted(x for x in ev.eval(subject) if isinstance(x, int))
            for s in members[:MAX_SUBJECTS]:
                stated = snapshot.sql(
                    "SELECT count(DISTINCT coalesce(CAST(object_doc_id AS VARCHAR), object)) "
                    "AS n FROM facts WHERE subject_doc_id = ? AND relation = ? AND typed",
                    [s, relation],
                ).to_pylist()[0]["n"]
                held = len(g.objects(relation, s))
                if stated > held:
                    return f"{g.titles[s]} {relation}: {stated} values stated, {held} held"
        link = n.link()
        if link is not None and isinstance(obj := link[1].constant, int):
            relation = link[0]
            stated = snapshot.sql(
                "SELECT count(DISTINCT subject_doc_id) AS n FROM facts WHERE relation = ? "
                "AND object_doc_id = ? AND typed",
                [relation, obj],
            ).to_pylist()[0]["n"]
            held = len(g.subject_ids(relation, obj))
            if stated > held:
                return f"{relation} {g.titles[obj]}: {stated} subjects stated, {held} held"
    return None


__all__ = ["unheld_value"]
