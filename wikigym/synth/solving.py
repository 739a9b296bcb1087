"""How a search agent resolves a formal query through the env's tools: the contract between the
node types' search plans and the agent that runs them.

The reference agent (:mod:`wikigym.eval.reference`) is given a task's formal query, never the
graph: it must find every node's set through ``search``, ``open`` and ``find``, under a step
budget, reading what pages state. How one node's set is found by search is the node type's
own, like its evaluation: :meth:`~wikigym.synth.node.Node.search_rank` (whether, and how
cheaply, its members can be gathered), :meth:`~wikigym.synth.node.Node.find_members` (gather
them), :meth:`~wikigym.synth.node.Node.test` (decide one candidate) and
:meth:`~wikigym.synth.node.Node.solve` (a root's answer). They are generator functions over a
:class:`Solver`: every tool call the solver makes for them is a ``yield`` that the agent turns
into an action, and the call's outputs come back as the ``yield``'s value, so a plan reads
as straight-line code (``found = yield from s.values(page, "born_in")``) and a new form
brings its own plan in its own module.

What a plan knows of an item is what a reader knows: an entity is a page title (``str``),
a literal is a :class:`Lit` (its text as a page writes it, and its measure: the year of a date,
the value of a number).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

T = TypeVar("T")
SEARCH_BUDGET = 30
"""The step budget a search plan runs under by default (the reference agent's, in ``eval`` and
in ``synth calibrate --agent reference``): 2.5 times the env's default of 12, since a plan
without the graph tests candidates the oracle never needs to."""
Plan = Generator[object, object, T]
"""A search plan: yields tool calls (opaque to the plan), gets their outputs back, returns T."""


@dataclass(frozen=True, slots=True)
class Lit:
    """A literal as a reader finds it: ``text`` as the page (or the query) writes it and its
    ``measure`` (a date's year, a number's value; None for a text)."""

    text: str
    measure: float | None = None


Found = str | Lit
"""An item of a set as the agent knows it: a page title, or a literal."""


def done(value: T) -> Plan[T]:
    """A plan that makes no call and returns ``value`` (``return (yield from done(x))``)."""
    return value
    yield  # pragma: no cover  (makes this a generator)


class Planned(Protocol):
    """What a solver asks of a query node (:class:`wikigym.synth.node.Node`, which this
    module cannot import: the node imports it)."""

    def search_rank(self, s: Solver) -> int | None: ...

    def find_members(self, s: Solver) -> Plan[list[Found] | None]: ...

    def test(self, s: Solver, item: Found) -> Plan[bool]: ...


class Solver(Protocol):
    """What a node's search plan may ask of the agent that runs it (every method that reads
    the snapshot is a plan: it may spend tool calls)."""

    def members(self, node: Planned) -> Plan[list[Found] | None]:
        """``node``'s members as found through the tools (memoised; None: the node can only
        test candidates, see :meth:`~wikigym.synth.node.Node.search_rank`)."""
        ...

    def holds(self, node: Planned, item: Found) -> Plan[bool]:
        """Whether ``item`` is in ``node``'s set, as the pages tell (memoised)."""
        ...

    def rank(self, node: Planned) -> int | None:
        """How cheaply ``node``'s members are gathered (lower first; None: they are not)."""
        ...

    def values(self, page: str, relation: str) -> Plan[list[Found]]:
        """What ``page`` states as its ``relation`` objects (the page is opened once)."""
        ...

    def states(self, page: str, relation: str, target: Found) -> Plan[bool]:
        """Whether ``page`` states ``target`` as a ``relation`` object."""
        ...

    def subjects(self, relation: str, target: Found) -> Plan[list[str]]:
        """Pages that a search shows stating ``target`` as their ``relation`` object (as many
        as the search surfaces: never known to be all)."""
        ...

    def instances(self, kind: str) -> Plan[list[str]]:
        """Pages a search for ``kind`` shows to be of that kind (a handful of a large kind)."""
        ...

    def is_kind(self, page: str, kind: str) -> Plan[bool]:
        """Whether ``page`` is about an entity of ``kind`` (a person, a city, ...)."""
        ...

    def measure(self, page: str, relation: str) -> Plan[float | None]:
        """The least ``relation`` measure ``page`` states (a date's year, a number)."""
        ...

    def entity(self, doc_id: int, title: str) -> Found:
        """A named entity of the query, as a page title."""
        ...

    def literal(self, key: str, value_type: str) -> Found:
        """A literal constant of the query, as a reader would find it in text."""
        ...

    def same(self, a: Found, b: Found) -> bool:
        """Whether two items found apart name the same thing (a title and a name in prose)."""
        ...


def contains_item(items: Sequence[Found], item: Found, s: Solver) -> bool:
    """Whether ``item`` is among ``items`` (by :meth:`Solver.same`)."""
    return any(s.same(x, item) for x in items)


def unique(items: Sequence[Found], s: Solver) -> list[Found]:
    """``items`` without repeats (by :meth:`Solver.same`), first seen first."""
    out: list[Found] = []
    for x in items:
        if not contains_item(out, x, s):
            out.append(x)
    return out


def answer_text(item: Found) -> str:
    """How an answer item is written (a title, or a literal's text)."""
    return item if isinstance(item, str) else item.text


__all__ = [
    "SEARCH_BUDGET",
    "Found",
    "Lit",
    "Plan",
    "Solver",
    "answer_text",
    "contains_item",
    "done",
    "unique",
]
