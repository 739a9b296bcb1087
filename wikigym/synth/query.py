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

Answer-valued roots: ``Count(arg)`` (how many) and ``Ask(arg, candidate)`` (yes/no).

JSON: every node is an object with an ``op`` (entity, value, isa, project, range, and, count,
ask); :func:`to_json` and :func:`from_json` round-trip, and :func:`canonical` is the sorted,
compact string used to compare and hash queries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from wikigym.errors import SynthError

QUERY_FORMAT = "wikigym.query/1"


@dataclass(frozen=True, slots=True)
class Entity:
    doc_id: int
    title: str = ""


@dataclass(frozen=True, slots=True)
class Value:
    key: str
    value_type: str = "text"


@dataclass(frozen=True, slots=True)
class IsA:
    kind: str


@dataclass(frozen=True, slots=True)
class Project:
    relation: str
    arg: Node
    inverse: bool = False


@dataclass(frozen=True, slots=True)
class Range:
    relation: str
    lo: float
    hi: float
    unit: str = "number"  # "year" or "number"


@dataclass(frozen=True, slots=True)
class Intersect:
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Count:
    arg: Node


@dataclass(frozen=True, slots=True)
class Ask:
    arg: Node
    candidate: Entity | Value


Node = Entity | Value | IsA | Project | Range | Intersect | Count | Ask
CONSTANTS = (Entity, Value)


def _num(x: float) -> int | float:
    return int(x) if float(x).is_integer() else float(x)


def to_json(node: Node) -> dict[str, Any]:
    """The JSON form of a node (recursively)."""
    if isinstance(node, Entity):
        return {"op": "entity", "doc_id": node.doc_id, "title": node.title}
    if isinstance(node, Value):
        return {"op": "value", "key": node.key, "type": node.value_type}
    if isinstance(node, IsA):
        return {"op": "isa", "kind": node.kind}
    if isinstance(node, Project):
        return {
            "op": "project",
            "relation": node.relation,
            "inverse": node.inverse,
            "arg": to_json(node.arg),
        }
    if isinstance(node, Range):
        return {
            "op": "range",
            "relation": node.relation,
            "lo": _num(node.lo),
            "hi": _num(node.hi),
            "unit": node.unit,
        }
    if isinstance(node, Intersect):
        return {"op": "and", "args": [to_json(a) for a in node.args]}
    if isinstance(node, Count):
        return {"op": "count", "arg": to_json(node.arg)}
    if isinstance(node, Ask):
        return {"op": "ask", "arg": to_json(node.arg), "candidate": to_json(node.candidate)}
    raise TypeError(f"not a query node: {type(node).__name__}")


def from_json(data: Any) -> Node:
    """Parse the JSON form back into nodes.

    Raises:
        SynthError: Not a query (the bad part is named).
    """
    if not isinstance(data, dict) or "op" not in data:
        raise SynthError(f"expected a query node object with an 'op', got {str(data)[:80]!r}")
    op = data["op"]
    try:
        if op == "entity":
            return Entity(int(data["doc_id"]), str(data.get("title", "")))
        if op == "value":
            return Value(str(data["key"]), str(data.get("type", "text")))
        if op == "isa":
            return IsA(str(data["kind"]))
        if op == "project":
            return Project(str(data["relation"]), from_json(data["arg"]), bool(data["inverse"]))
        if op == "range":
            return Range(
                str(data["relation"]), float(data["lo"]), float(data["hi"]), str(data["unit"])
            )
        if op == "and":
            return Intersect(tuple(from_json(a) for a in data["args"]))
        if op == "count":
            return Count(from_json(data["arg"]))
        if op == "ask":
            cand = from_json(data["candidate"])
            if not isinstance(cand, CONSTANTS):
                raise SynthError("an ask node's candidate must be an entity or a value")
            return Ask(from_json(data["arg"]), cand)
    except (KeyError, TypeError, ValueError) as exc:
        raise SynthError(f"malformed {op!r} query node: {exc}") from exc
    raise SynthError(
        f"unknown query op {op!r}; expected entity, value, isa, project, range, and, count, ask"
    )


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


def canonical(node: Node) -> str:
    return json.dumps(to_json(node), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ---- measures ----------------------------------------------------------------------


def hops(node: Node) -> int:
    """Length of the longest chain of projections from a constant to the answer."""
    if isinstance(node, Project):
        return 1 + hops(node.arg)
    if isinstance(node, Range):
        return 1
    if isinstance(node, Intersect):
        return max((hops(a) for a in node.args), default=0)
    if isinstance(node, Count | Ask):
        return hops(node.arg)
    return 0


def walk(node: Node) -> list[Node]:
    """Every node, parents before children, in argument order."""
    out: list[Node] = [node]
    if isinstance(node, Project | Count):
        out.extend(walk(node.arg))
    elif isinstance(node, Ask):
        out.extend(walk(node.arg))
        out.append(node.candidate)
    elif isinstance(node, Intersect):
        for a in node.args:
            out.extend(walk(a))
    return out


def constraints(node: Intersect | Node) -> list[Node]:
    """The members of an intersection that are not type filters (or the node itself)."""
    if isinstance(node, Intersect):
        return [a for a in node.args if not isinstance(a, IsA)]
    return [node]


def measures(node: Node) -> dict[str, int]:
    """Structural measures of a query (the evaluation-free part of the difficulty)."""
    nodes = walk(node)
    return {
        "hops": hops(node),
        "constraints": sum(isinstance(n, Project | Range) for n in nodes),
        "intersections": sum(isinstance(n, Intersect) and len(constraints(n)) >= 2 for n in nodes),
        "obfuscated_values": sum(isinstance(n, Range) for n in nodes),
        "described_entities": sum(
            isinstance(n, Project) and not isinstance(n.arg, CONSTANTS) for n in nodes
        ),
        "constants": sum(isinstance(n, CONSTANTS) for n in nodes),
    }


def relations_of(node: Node) -> list[str]:
    """Relations used, in walk order, without repeats."""
    rels = [n.relation for n in walk(node) if isinstance(n, Project | Range)]
    return list(dict.fromkeys(rels))
