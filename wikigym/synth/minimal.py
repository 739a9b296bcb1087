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

from wikigym.synth.evaluate import Evaluator, Item
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.node import Node, canonical, constraints, entity_ids, hops

_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?![\w,])|(?<![\w.,])\d+(?![\w,])")
_DISAMBIGUATOR = re.compile(r"\s+\([^()]*\)$")


def reductions(node: Node) -> Iterator[Node]:
    """Every sub-query one step smaller than ``node`` (one constraint dropped): what each
    node type drops is its own (:meth:`~wikigym.synth.node.Node.reductions`)."""
    return node.reductions()


def redundant(root: Node, ev: Evaluator) -> list[Node]:
    """Strictly smaller queries that mean the same as ``root`` (empty: ``root`` is minimal),
    in a fixed order (fewest hops, then canonical form)."""
    out: list[Node] = []
    for core, put_back in root.cores():
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


def contains_phrase(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as whole words (both case-folded)."""
    if not phrase:
        return False
    return re.search(r"(?<!\w)" + re.escape(phrase.casefold()) + r"(?!\w)", text) is not None


def numbers_in(text: str) -> list[float]:
    """The numbers written in ``text`` (plain or comma-grouped)."""
    return [float(m.group(0).replace(",", "")) for m in _NUMBER.finditer(text)]


def _names(graph: KnowledgeGraph, item: Item) -> list[str]:
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
    answer: Item,
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
    form = root.root_form()
    if form not in ("entity", "literal"):
        return None
    # (the constraint a test stands for, the test): the constraint is skipped on the page of
    # its own constant, where naming the answer is expected rather than a shortcut.
    tests: list[tuple[Node | None, Callable[[str], bool]]] = []
    subject = root.attribute()
    if subject is not None:
        arg = subject[1]
        if ev.size(arg) != 1:
            return None
        (target,) = tuple(ev.eval(arg))
        values = [v.casefold() for v in _names(graph, answer)]
        tests.append((None, lambda text: any(contains_phrase(text, v) for v in values)))
    else:
        target = answer
        for c in constraints(root):
            if (t := c.stated_by(graph)) is not None:
                tests.append((c, t))
    if not isinstance(target, int) or not tests:
        return None
    names = [n.casefold() for n in _names(graph, target)]
    anchors = sorted(entity_ids(root) - {target})
    for doc in anchors:
        live = [t for c, t in tests if not _names_constant(c, doc)]
        if not live:
            continue
        for p in passages_of(doc):
            text = str(getattr(p, "text", "")).casefold()
            if any(contains_phrase(text, n) for n in names) and any(t(text) for t in live):
                return f"p{getattr(p, 'passage_id', '?')} on {graph.titles[doc]}"
    return None


def _names_constant(node: Node | None, doc: int) -> bool:
    link = None if node is None else node.link() or node.attribute()
    return link is not None and link[1].constant == doc


__all__ = [
    "anchor_shortcut",
    "contains_phrase",
    "effective_hops",
    "minimize",
    "numbers_in",
    "reductions",
    "redundant",
]
