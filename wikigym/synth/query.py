"""Formal queries: a small typed AST with a canonical JSON form.

Set-valued nodes (what :mod:`wikigym.synth.evaluate` computes):

``Entity(doc_id)``            the one entity ``{doc_id}``
``Value(key)``                the one literal ``{key}``
``IsA(kind)``                 every entity of a kind (city, person, novel, ...)
``Project(relation, arg)``    objects of the members of ``arg`` (``inverse=False``), or the
                              subjects whose object is in ``arg`` (``inverse=True``)
``Range(relation, lo, hi)``   subjects whose ``relation`` measure (a year or a number) is in
                              ``[lo, hi]`` (an obfuscated literal)
``Intersect(args)``           what every argument holds (constraints that hold jointly)

``Union(args)``               what some argument holds ("born in X or in Y")
``Not(arg)``                  inside an intersection only: what ``arg`` does not hold
``Same(rel_a, rel_b)``        subjects whose ``rel_a`` and ``rel_b`` share an object ("born and
                              died in the same city")
``Extreme(relation, arg, most)``  the members of ``arg`` with the greatest (``most``) or least
                              ``relation`` measure ("the oldest", "which of A, B, C was founded
                              first"); ties keep every tied member, so a tie is never unique

A ``Range`` bound may be open (``-inf``/``inf``, JSON ``null``): "before 1900", "more than
50,000".

Answer-valued roots: ``Count(arg)`` (how many), ``Ask(arg, candidate)`` (yes/no) and
``Arith(op, left, right)`` (``sub`` or ``add`` of the measures of two single literals: age at
death, years between two events, sums).

Each node type is a class in its own module of :mod:`wikigym.synth.forms` (with all it does:
:mod:`wikigym.synth.node`); this module is the language's front door: the types, and the
JSON of a task's ``query`` (every node is an object with an ``op``: entity, value, isa,
project, range, and, or, not, same, extreme, count, ask, arith, and any op a form module
registers). :func:`to_json` and :func:`from_json` round-trip, and :func:`canonical` is the
sorted, compact string used to compare and hash queries.
"""

from __future__ import annotations

from typing import Any

import wikigym.synth.forms  # noqa: F401  (registers every node type and question form)
from wikigym.errors import SynthError
from wikigym.synth.forms.arith import ARITH_OPS, Arith
from wikigym.synth.forms.ask import Ask
from wikigym.synth.forms.count import Count
from wikigym.synth.forms.entity import Entity
from wikigym.synth.forms.extreme import Extreme
from wikigym.synth.forms.intersect import WIDE_MIN, Intersect
from wikigym.synth.forms.isa import IsA
from wikigym.synth.forms.negation import Not
from wikigym.synth.forms.project import Project
from wikigym.synth.forms.range import CENTURY_PARTS, Range, century_part
from wikigym.synth.forms.same import Same
from wikigym.synth.forms.union import Union
from wikigym.synth.forms.value import Value
from wikigym.synth.node import (
    QUERY_FORMAT,
    Node,
    canonical,
    closed_world_relations,
    constraints,
    forms_of,
    hops,
    measures,
    node_ops,
    node_type,
    relations_of,
    to_json,
    walk,
)


def from_json(data: Any) -> Node:
    """Parse the JSON form back into nodes.

    Raises:
        SynthError: Not a query (the bad part is named).
    """
    if not isinstance(data, dict) or "op" not in data:
        raise SynthError(f"expected a query node object with an 'op', got {str(data)[:80]!r}")
    op = data["op"]
    cls = node_type(op) if isinstance(op, str) else None
    if cls is None:
        raise SynthError(f"unknown query op {op!r}; expected {', '.join(node_ops())}")
    try:
        return cls.parse(data, from_json)
    except (KeyError, TypeError, ValueError) as exc:
        raise SynthError(f"malformed {op!r} query node: {exc}") from exc


def wrap(root: Node) -> dict[str, Any]:
    """The ``Task.query`` dict of a root node."""
    return {"format": QUERY_FORMAT, "root": to_json(root)}


def unwrap(query: dict[str, Any] | None) -> Node:
    """The root node of a ``Task.query`` dict.

    Raises:
        SynthError: Missing or of another format.
    """
    if not query or query.get("format") != QUERY_FORMAT:
        got = None if not query else query.get("format")
        raise SynthError(f"task query must have format {QUERY_FORMAT!r}, got {got!r}")
    return from_json(query["root"])


__all__ = [
    "ARITH_OPS",
    "CENTURY_PARTS",
    "QUERY_FORMAT",
    "WIDE_MIN",
    "Arith",
    "Ask",
    "Count",
    "Entity",
    "Extreme",
    "Intersect",
    "IsA",
    "Node",
    "Not",
    "Project",
    "Range",
    "Same",
    "Union",
    "Value",
    "canonical",
    "century_part",
    "closed_world_relations",
    "constraints",
    "forms_of",
    "from_json",
    "hops",
    "measures",
    "relations_of",
    "to_json",
    "unwrap",
    "walk",
    "wrap",
]
