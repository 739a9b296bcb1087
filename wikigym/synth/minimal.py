"""Minimality of queries and the anchor-page shortcut.

A query is *minimal* when no strictly smaller sub-query gives the same answer: dropping one
constraint of any intersection (at any depth, negations included) changes what the query
denotes. Every such drop relaxes the query; dropping a branch of a union would tighten it
and is not a shortcut, so union branches are reduced only inside. A redundant constraint overstates the hop count: "the person
born in the 1960s, born in X and a citizen of the country where ..." is labelled three hops
but answered by its first two constraints. :func:`effective_hops` is the hop count of the
query once every redundant constraint is dropped; a minimal query's equals its own.

The *anchor-page shortcut*: a page one step from a named constant (the constant's own page,
opened after one search) already names the answer together with an asked attribute (a city's
"Notable people" list giving the answer and its birth year). :func:`anchor_shortcut` finds
such a passage; hard and phd tasks must have none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from wikigym.synth.evaluate import Evaluator
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
    Union,
    Value,
    canonical,
    constraints,
    hops,
    walk,
)

_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?![\w,])|(?<![\w.,])\d+(?![\w,])")
_DISAMBIGUATOR = re.compile(r"\s+\([^()]*\)$")


def _positive(args: Sequence[Node]) -> int:
    return sum(not isinstance(a, IsA | Not) for a in args)


def reductions(node: Node) -> Iterator[Node]:
    """Every sub-query one step smaller than ``node`` (one constraint dropped)."""
    if isinstance(node, Intersect):
        args = node.args
        for i, a in enumerate(args):
            if isinstance(a, IsA):
                continue
            rest = args[:i] + args[i + 1 :]
            if _positive(rest) >= 1:
                yield Intersect(rest)
        for i, a in enumerate(args):
            for r in reductions(a):
                yield Intersect((*args[:i], r, *args[i + 1 :]))
    elif isinstance(node, Union):
        # Dropping a branch tightens the query instead of relaxing it (a solver cannot
        # know which branch holds the answer), so only the branches' own constraints count.
        args = node.args
        for i, a in enumerate(args):
            for r in reductions(a):
                yield Union((*args[:i], r, *args[i + 1 :]))
    elif isinstance(node, Project):
        for r in reductions(node.arg):
            yield Project(node.relation, r, node.inverse)
    elif isinstance(node, Not):
        for r in reductions(node.arg):
            yield Not(r)
    elif isinstance(node, Extreme):
        for r in reductions(node.arg):
            yield Extreme(node.relation, r, node.most)


def _cores(root: Node) -> list[tuple[Node, Callable[[Node], Node]]]:
    """The set-valued parts whose sets define the answer, with how to put a reduced part back.

    A count or a yes/no question depends on its argument's set; an arithmetic question on
    its two operands; every other root on itself."""
    if isinstance(root, Count):
        return [(root.arg, Count)]
    if isinstance(root, Ask):
        cand = root.candidate
        return [(root.arg, lambda a: Ask(a, cand))]
    if isinstance(root, Arith):
        op, left, right = root.op, root.left, root.right
        return [
            (left, lambda a: Arith(op, a, right)),
            (right, lambda a: Arith(op, left, a)),
        ]
    return [(root, lambda a: a)]


def redundant(root: Node, ev: Evaluator) -> list[Node]:
    """Strictly smaller queries that mean the same as ``root`` (empty: ``root`` is minimal),
    in a fixed order (fewest hops, then canonical form)."""
    out: list[Node] = []
    for core, put_back in _cores(root):
        want = ev.value(core)
        for r in reductions(core):
            if ev.means(r, want):
                out.append(put_back(r))
    return sorted(out, key=lambda n: (hops(n), canonical(n)))


def effective_hops(root: Node, ev: Evaluator) -> int:
    """Hops of ``root`` after dropping redundant constraints one at a time (the shallowest
    reduction first) until none is left."""
    node = root
    while True:
        smaller = redundant(node, ev)
        if not smaller:
            return hops(node)
        node = smaller[0]


def minimize(
    root: Node,
    ev: Evaluator,
    keep: Callable[[Node], bool] | None = None,
    prefer: Callable[[Node], bool] | None = None,
) -> Node:
    """``root`` with redundant constraints dropped one at a time, the reduction that keeps
    the most hops first (ties: canonical form), until it is minimal.

    With ``keep``, only reductions that ``keep`` accepts are taken (a requested form's
    constraint stays); the result is then not minimal when every reduction left drops it.
    With ``prefer``, reductions that ``prefer`` accepts go first (the result is minimal and
    keeps, say, a requested form whenever some order of reductions can)."""
    node = root
    while True:
        smaller = [n for n in redundant(node, ev) if keep is None or keep(n)]
        if not smaller:
            return node
        # The preferred reductions, then the most hops, then the least canonical form (no
        # canonical form is a prefix of another: each is one whole JSON object).
        rank = [(prefer is not None and prefer(n), hops(n)) for n in smaller]
        top = max(rank)
        node = min((n for n, r in zip(smaller, rank, strict=True) if r == top), key=canonical)


# ---- the anchor-page shortcut --------------------------------------------------------


def _contains(text: str, phrase: str) -> bool:
    if not phrase:
        return False
    return re.search(r"(?<!\w)" + re.escape(phrase.casefold()) + r"(?!\w)", text) is not None


def _numbers(text: str) -> list[float]:
    return [float(m.group(0).replace(",", "")) for m in _NUMBER.finditer(text)]


def _attribute_test(node: Node, graph: KnowledgeGraph) -> Callable[[str], bool] | None:
    """A test of whether a (case-folded) passage states the attribute ``node`` asks for."""
    if isinstance(node, Range):
        lo, hi = node.lo, node.hi
        return lambda text: any(lo <= x <= hi for x in _numbers(text))
    if isinstance(node, Project) and node.inverse and isinstance(node.arg, Entity | Value):
        arg = node.arg
        words = graph.titles[arg.doc_id] if isinstance(arg, Entity) else graph.surface(arg.key)
        return lambda text: _contains(text, words.casefold())
    return None


def _names(graph: KnowledgeGraph, item: int | str) -> list[str]:
    if isinstance(item, int):
        title = graph.titles[item]
        return list(dict.fromkeys((title, _DISAMBIGUATOR.sub("", title))))
    surface = graph.surface(item)
    names = [surface, item]
    if re.match(r"^\d{3,4}-", item):
        names.append(item[:4].lstrip("0") or "0")  # a date's year
    return list(dict.fromkeys(names))


def anchor_shortcut(
    root: Node,
    answer: int | str,
    graph: KnowledgeGraph,
    passages_of: Callable[[int], Sequence[object]],
    ev: Evaluator,
) -> str | None:
    """A passage on a named constant's page that names the answer's entity with an asked
    attribute, as ``"p<id> on <title>"``; None when there is none.

    Entity questions: the passage names the answer and states another of its top-level
    constraints. Literal questions ("When was [described person] born?"): it names the
    described entity and the answer value. Counts, yes/no and arithmetic have no single
    asked attribute and are not checked."""
    if isinstance(root, Count | Ask | Arith | Extreme):
        return None
    # (the constraint a test stands for, the test): the constraint is skipped on the page of
    # its own constant, where naming the answer is expected rather than a shortcut.
    tests: list[tuple[Node | None, Callable[[str], bool]]] = []
    if isinstance(root, Project) and not root.inverse:
        if ev.size(root.arg) != 1:
            return None
        subjects = ev.eval(root.arg)
        (target,) = tuple(subjects)
        values = [v.casefold() for v in _names(graph, answer)]
        tests.append((None, lambda text: any(_contains(text, v) for v in values)))
    else:
        target = answer
        for c in constraints(root):
            if (t := _attribute_test(c, graph)) is not None:
                tests.append((c, t))
    if not isinstance(target, int) or not tests:
        return None
    names = [n.casefold() for n in _names(graph, target)]
    anchors = sorted({n.doc_id for n in walk(root) if isinstance(n, Entity) and n.doc_id != target})
    for doc in anchors:
        live = [t for c, t in tests if not _names_constant(c, doc)]
        if not live:
            continue
        for p in passages_of(doc):
            text = str(getattr(p, "text", "")).casefold()
            if any(_contains(text, n) for n in names) and any(t(text) for t in live):
                return f"p{getattr(p, 'passage_id', '?')} on {graph.titles[doc]}"
    return None


def _names_constant(node: Node | None, doc: int) -> bool:
    return isinstance(node, Project) and isinstance(node.arg, Entity) and node.arg.doc_id == doc


__all__ = ["anchor_shortcut", "effective_hops", "minimize", "reductions", "redundant"]
