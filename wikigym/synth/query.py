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

JSON: every node is an object with an ``op`` (entity, value, isa, project, range, and, or, not,
same, extreme, count, ask, arith); :func:`to_json` and :func:`from_json` round-trip, and
:func:`canonical` is the sorted, compact string used to compare and hash queries.
"""

from __future__ import annotations

import json
import math
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
class Union:
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Not:
    arg: Node


@dataclass(frozen=True, slots=True)
class Same:
    rel_a: str
    rel_b: str


@dataclass(frozen=True, slots=True)
class Extreme:
    relation: str
    arg: Node
    most: bool = True


@dataclass(frozen=True, slots=True)
class Arith:
    op: str  # "sub" or "add"
    left: Node
    right: Node


ARITH_OPS = ("sub", "add")


@dataclass(frozen=True, slots=True)
class Count:
    arg: Node


@dataclass(frozen=True, slots=True)
class Ask:
    arg: Node
    candidate: Entity | Value


Node = (
    Entity
    | Value
    | IsA
    | Project
    | Range
    | Intersect
    | Union
    | Not
    | Same
    | Extreme
    | Count
    | Ask
    | Arith
)
CONSTANTS = (Entity, Value)


def _num(x: float) -> int | float | None:
    if math.isinf(x):
        return None  # an open bound
    return int(x) if float(x).is_integer() else float(x)


def _bound(x: Any, open_value: float) -> float:
    if x is None:
        return open_value
    v = float(x)
    if not math.isfinite(v):
        raise ValueError(f"a range bound must be a finite number or null, got {x!r}")
    return v


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
    if isinstance(node, Union):
        return {"op": "or", "args": [to_json(a) for a in node.args]}
    if isinstance(node, Not):
        return {"op": "not", "arg": to_json(node.arg)}
    if isinstance(node, Same):
        return {"op": "same", "rel_a": node.rel_a, "rel_b": node.rel_b}
    if isinstance(node, Extreme):
        return {
            "op": "extreme",
            "relation": node.relation,
            "most": node.most,
            "arg": to_json(node.arg),
        }
    if isinstance(node, Count):
        return {"op": "count", "arg": to_json(node.arg)}
    if isinstance(node, Ask):
        return {"op": "ask", "arg": to_json(node.arg), "candidate": to_json(node.candidate)}
    if isinstance(node, Arith):
        return {
            "op": "arith",
            "arith": node.op,
            "left": to_json(node.left),
            "right": to_json(node.right),
        }
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
            lo, hi = _bound(data["lo"], -math.inf), _bound(data["hi"], math.inf)
            if math.isinf(lo) and math.isinf(hi):
                raise SynthError("a range needs at least one finite bound")
            return Range(str(data["relation"]), lo, hi, str(data["unit"]))
        if op == "and":
            return Intersect(tuple(from_json(a) for a in data["args"]))
        if op == "or":
            return Union(tuple(from_json(a) for a in data["args"]))
        if op == "not":
            return Not(from_json(data["arg"]))
        if op == "same":
            return Same(str(data["rel_a"]), str(data["rel_b"]))
        if op == "extreme":
            return Extreme(str(data["relation"]), from_json(data["arg"]), bool(data["most"]))
        if op == "arith":
            if data["arith"] not in ARITH_OPS:
                raise SynthError(f"arith op must be one of {', '.join(ARITH_OPS)}")
            return Arith(str(data["arith"]), from_json(data["left"]), from_json(data["right"]))
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
        f"unknown query op {op!r}; expected entity, value, isa, project, range, and, or, not, "
        "same, extreme, count, ask, arith"
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
    if isinstance(node, Range | Same):
        return 1
    if isinstance(node, Intersect | Union):
        return max((hops(a) for a in node.args), default=0)
    if isinstance(node, Extreme):
        return 1 + hops(node.arg)
    if isinstance(node, Arith):
        return max(hops(node.left), hops(node.right))
    if isinstance(node, Count | Ask | Not):
        return hops(node.arg)
    return 0


def walk(node: Node) -> list[Node]:
    """Every node, parents before children, in argument order."""
    out: list[Node] = [node]
    if isinstance(node, Project | Count | Not | Extreme):
        out.extend(walk(node.arg))
    elif isinstance(node, Ask):
        out.extend(walk(node.arg))
        out.append(node.candidate)
    elif isinstance(node, Arith):
        out.extend(walk(node.left))
        out.extend(walk(node.right))
    elif isinstance(node, Intersect | Union):
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
        "constraints": sum(isinstance(n, Project | Range | Same) for n in nodes),
        "intersections": sum(isinstance(n, Intersect) and len(constraints(n)) >= 2 for n in nodes),
        "obfuscated_values": sum(isinstance(n, Range) for n in nodes),
        "described_entities": sum(
            isinstance(n, Project) and not isinstance(n.arg, CONSTANTS) for n in nodes
        ),
        "constants": sum(isinstance(n, CONSTANTS) for n in nodes),
    }


def relations_of(node: Node) -> list[str]:
    """Relations used, in walk order, without repeats."""
    rels: list[str] = []
    for n in walk(node):
        if isinstance(n, Project | Range | Extreme):
            rels.append(n.relation)
        elif isinstance(n, Same):
            rels.extend((n.rel_a, n.rel_b))
    return list(dict.fromkeys(rels))


CENTURY_PARTS = (("early", 0, 32), ("mid", 33, 66), ("late", 67, 99))


def century_part(node: Range) -> tuple[str, int] | None:
    """("late", 19) when a year range is exactly the late 19th century (1867-1899), else None."""
    if node.unit != "year" or math.isinf(node.lo) or math.isinf(node.hi):
        return None
    lo, hi = int(node.lo), int(node.hi)
    if lo // 100 != hi // 100 or lo < 0:
        return None
    for name, a, b in CENTURY_PARTS:
        if lo % 100 == a and hi % 100 == b:
            return name, lo // 100 + 1
    return None


WIDE_MIN = 4  # constraints of one intersection that make a "wide" set of weak attributes


def forms_of(node: Node) -> list[str]:
    """The question forms a query uses (sorted): its root's kind (entity, literal, count,
    yes_no, arithmetic) and every structure below it (union, negation, same, superlative,
    comparison, fuzz, wide)."""
    out: set[str] = set()
    if isinstance(node, Count):
        out.add("count")
    elif isinstance(node, Ask):
        out.add("yes_no")
    elif isinstance(node, Arith):
        out.add("arithmetic")
    elif isinstance(node, Extreme):
        pass  # superlative or comparison, below
    elif isinstance(node, Project) and not node.inverse:
        out.add("literal")
    else:
        out.add("entity")
    listed = {id(n.arg) for n in walk(node) if isinstance(n, Extreme)}
    for n in walk(node):
        if isinstance(n, Union) and id(n) not in listed:  # not a comparison's candidates
            out.add("union")
        elif isinstance(n, Not):
            out.add("negation")
        elif isinstance(n, Same):
            out.add("same")
        elif isinstance(n, Extreme):
            out.add("comparison" if isinstance(n.arg, Union) else "superlative")
        elif isinstance(n, Range) and (
            math.isinf(n.lo) or math.isinf(n.hi) or century_part(n) is not None
        ):
            out.add("fuzz")
        elif isinstance(n, Intersect) and len(constraints(n)) >= WIDE_MIN:
            out.add("wide")
    return sorted(out)
