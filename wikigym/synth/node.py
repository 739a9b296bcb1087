"""The base of every formal query node, the registry of node types, and what all nodes share.

A node type is one class in its own module of :mod:`wikigym.synth.forms` (a frozen dataclass
subclassing :class:`Node`, registered by its JSON ``op`` with :func:`register`). The class
owns everything about its node: its JSON form, its set (:meth:`Node.evaluate`) and the facts
that show a member is in it (:meth:`Node.witness`), its hops and measures, the smaller
queries minimisation tries (:meth:`Node.reductions`), its wording (:meth:`Node.noun_phrase`,
:meth:`Node.clause`, :meth:`Node.question`) and how its answer is written
(:meth:`Node.answer`). The modules that walk queries (the evaluator, the renderer,
minimisation, the generator, near-misses, stats) call these methods and never ask which
class a node is.

Where one node's behaviour depends on what its children are ("who was born in X or in Y" is
one clause because both branches link one relation to a named entity), it asks them for a
*role* instead of their class: :attr:`Node.constant` (a named entity or literal),
:attr:`Node.filter_kind` (a type filter), :attr:`Node.negated` (an exclusion),
:meth:`Node.attribute` (the object of a relation of another node, "the birthplace of X"),
:meth:`Node.link` (the subjects that reach a node by a relation, "born in X"),
:meth:`Node.conjuncts` (a description), :meth:`Node.alternatives` (a disjunction) and
:meth:`Node.span` (a measure in an interval). A new node type plays the roles it can.

Every default here is what a node without that part does (no children, no hops, no
reductions); a type overrides only what it has.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, ClassVar, TypeVar

import numpy as np

from wikigym.errors import SynthError
from wikigym.synth.evaluate import Evaluator, Item, SetValue, contains
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.render import Renderer, clean_parts, who_of
from wikigym.synth.solving import Found, Plan, Solver, answer_text, contains_item, done
from wikigym.synth.templates import relation_text
from wikigym.synth.values import format_number

QUERY_FORMAT = "wikigym.query/1"
_DISAMBIGUATOR = re.compile(r"\s+\([^()]*\)$")
Answer = tuple[str, list[str], str]  # (answer as written, aliases, answer_type)
Reassemble = Callable[["Node"], "Node"]


class Node:
    """A node of a formal query (see the module docstring); subclasses are frozen
    dataclasses, so nodes compare and hash by value."""

    __slots__ = ()
    OP: ClassVar[str]  # the JSON "op" the registry knows this type by

    # ---- structure ----------------------------------------------------------------
    def children(self) -> tuple[Node, ...]:
        """The child nodes, in the order :func:`walk` visits them."""
        return ()

    def with_children(self, children: Sequence[Node]) -> Node:
        """This node with its children replaced (same order as :meth:`children`)."""
        return self

    def hops(self) -> int:
        """Length of the longest chain of projections from a constant to this node's set."""
        return 0

    def relations(self) -> tuple[str, ...]:
        """The relations this node itself uses (not its children's)."""
        return ()

    def paths(self) -> tuple[tuple[Node, int], ...]:
        """The children on a path from a named constant to the answer, deepest chain first,
        each with the hops between it and this node (a negated member is no such path)."""
        return ()

    # ---- roles (see the module docstring) -----------------------------------------
    @property
    def constant(self) -> Item | None:
        """The one item a named constant denotes (an entity id or a literal key)."""
        return None

    @property
    def filter_kind(self) -> str | None:
        """The kind a type filter keeps."""
        return None

    @property
    def negated(self) -> Node | None:
        """What an exclusion (a member of an intersection) leaves out."""
        return None

    def attribute(self) -> tuple[str, Node] | None:
        """``(relation, subject)`` when this node is the objects of ``subject``'s
        ``relation`` ("the birthplace of X")."""
        return None

    def link(self) -> tuple[str, Node] | None:
        """``(relation, object)`` when this node is the subjects whose ``relation`` reaches
        ``object`` ("born in X")."""
        return None

    def conjuncts(self) -> tuple[Node, ...] | None:
        """The members of a description (an intersection: type filters, constraints)."""
        return None

    def alternatives(self) -> tuple[Node, ...] | None:
        """The branches of a disjunction."""
        return None

    def span(self) -> tuple[str, float, float] | None:
        """``(relation, lo, hi)`` when this node is the subjects with a ``relation``
        measure in ``[lo, hi]``: such a constraint can be decided on a few entities'
        own facts instead of building its set."""
        return None

    def candidates(self) -> tuple[Node, ...]:
        """Children whose members the question lists by name (a comparison's)."""
        return ()

    # ---- JSON ---------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The JSON object of this node (``op`` first; children recursively)."""
        raise NotImplementedError

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        """The node of a JSON object whose ``op`` is ``cls.OP`` (``parse``: for children).

        Raises:
            SynthError, KeyError, TypeError, ValueError: Not such a node.
        """
        raise NotImplementedError

    # ---- measures and forms -------------------------------------------------------
    def tally(self, counts: dict[str, int]) -> None:
        """Add this node's share to the structural :func:`measures` (``counts``)."""

    def root_form(self) -> str | None:
        """The question form of a query with this root (entity, literal, count, yes_no,
        arithmetic), or None when :meth:`forms` names it."""
        return "entity"

    def forms(self, listed: bool) -> tuple[str, ...]:
        """The question forms this node makes a query use (``listed``: this node is the
        list of candidates a comparison names)."""
        return ()

    def constraint_type(self) -> str | None:
        """What ``synth stats`` counts this node as (None: nothing)."""
        return None

    def own_clauses(self) -> int:
        """Clauses this node adds to a description (its children's aside)."""
        return 0

    def open_world(self) -> bool:
        """Whether this node's set stays what it is in a world with more entities than the
        snapshot (the facts of the entities it reaches being complete): true of a named
        constant and of what is read off named pages ("the birthplace of X"), false of what
        is picked out of every entity ("the people born in X", "born in the 1920s"). A task
        whose query is not is unique only inside the snapshot (``closed_world``)."""
        return all(c.open_world() for c in self.children())

    def presupposed(self) -> tuple[Node, ...]:
        """Descriptions the question says exist whatever the answer is (a comparison's
        candidates, a count's object, an arithmetic's subjects): when one denotes nothing,
        the question has no answer (a near-miss), though this node's own set may not be
        empty ("How many people were born in [no such city]?" is not "zero")."""
        return ()

    def closed_relations(self) -> tuple[str, ...]:
        """Relations whose *completeness* this node's set relies on, beyond the facts that
        are there: a negation, a count or a superlative is right only when no fact of them
        is missing; a projection or a range holds for the facts it is shown. (On an open
        world a form declares these, and the generator keeps such forms to relations it
        trusts to be complete.)"""
        return ()

    # ---- evaluation (wikigym.synth.evaluate) --------------------------------------
    def evaluate(self, ev: Evaluator) -> SetValue:
        """The set of this node over every fact of ``ev``'s graph."""
        raise SynthError(f"cannot evaluate {type(self).__name__}")

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        """Append to ``rows`` the fact rows that show ``t`` is in this node's set (leaves
        first).

        Raises:
            SynthError: ``t`` is not in the set.
        """
        raise SynthError(f"cannot witness {type(self).__name__}")

    def witness_member(self, ev: Evaluator, t: Item) -> None:
        """Check that ``t`` is in this node's set (a leaf: no fact to show).

        Raises:
            SynthError: It is not.
        """
        if not contains(ev.value(self), t):
            raise SynthError(f"{t!r} is not in {self}")

    def at_least(self, ev: Evaluator, kinds: frozenset[str] | None = None) -> int:
        """A lower bound on the size of this node's set, without building it (0: none
        known); with ``kinds``, as the one constraint of an intersection that also filters
        by those kinds."""
        return 0

    def surely_not(self, ev: Evaluator, want: SetValue) -> bool:
        """Whether this node's set is surely not ``want``, decided without building it."""
        return self.at_least(ev) > len(want)

    # ---- minimality (wikigym.synth.minimal) ---------------------------------------
    def reductions(self) -> Iterator[Node]:
        """Every query one constraint smaller than this node (one constraint dropped at
        some depth). Only what relaxes the query counts."""
        return iter(())

    def reduced_children(self) -> Iterator[Node]:
        """This node with one child replaced by each of that child's reductions."""
        kids = self.children()
        for i, child in enumerate(kids):
            for r in child.reductions():
                yield self.with_children((*kids[:i], r, *kids[i + 1 :]))

    def cores(self) -> list[tuple[Node, Reassemble]]:
        """The set-valued parts whose sets define the answer, each with how to put a
        reduced part back (a count depends on its argument's set)."""
        return [(self, _same)]

    def stated_by(self, graph: KnowledgeGraph) -> Callable[[str], bool] | None:
        """A test of whether a (case-folded) passage states this constraint (None: not
        checked for the anchor-page shortcut)."""
        return None

    # ---- answers ------------------------------------------------------------------
    def answer_text(self, graph: KnowledgeGraph, item: Item) -> str:
        """The answer ``item`` as a task states it."""
        return graph.titles[item] if isinstance(item, int) else graph.surface(item)

    def answer(self, graph: KnowledgeGraph, item: Item) -> Answer:
        """``(answer, aliases, answer_type)`` of a task whose query has this root."""
        if not isinstance(item, int):
            raise SynthError(f"an {self.OP!r} query has no literal answer")
        shown = self.answer_text(graph, item)
        aliases = [r for r in graph.redirects[item] if r and r != shown]
        bare = _DISAMBIGUATOR.sub("", shown)
        if bare != shown:  # "Leth Zeirny (novelist)" is also answered by "Leth Zeirny"
            aliases.insert(0, bare)
        return shown, list(dict.fromkeys(aliases)), "entity"

    def with_constant(self, graph: KnowledgeGraph, item: Item) -> Node:
        """A named constant of this node's type that names ``item`` instead.

        Raises:
            SynthError: This node is not a named constant.
        """
        raise SynthError(f"an {self.OP!r} node names no constant")

    def names_answer(self, item: Item) -> bool:
        """Whether a question of this root names ``item`` by design (a comparison lists
        its candidates), so naming the answer is no leak."""
        return False

    # ---- wording (wikigym.synth.render) -------------------------------------------
    def noun_phrase(self, r: Renderer) -> str:
        """A marked noun phrase for this node's set: definite ("the one that ...") only when
        it denotes one entity (:meth:`Renderer.definite`)."""
        head = "the one" if r.definite(self) else "one"
        return f"{head} {self.clause(r, 'that')}"

    def clause(self, r: Renderer, who: str) -> str:
        """A marked relative clause saying the described entity is in this node's set."""
        return f"{who} is {self.noun_phrase(r)}"

    def question(self, r: Renderer) -> str:
        """The question whose answer is this node's one member."""
        return entity_question(r, self)

    def value_words(self, r: Renderer) -> tuple[str, str]:
        """(bare, prepositional) marked words of a literal constraint ("1929", "in 1929")."""
        words = self.noun_phrase(r)
        return words, words

    # ---- search plans (wikigym.synth.solving) -------------------------------------
    def search_rank(self, s: Solver) -> int | None:
        """How cheaply a search agent gathers this node's members, lower first (0: named),
        or None when it can only test candidates (a range, a type filter, a negation)."""
        return None

    def find_members(self, s: Solver) -> Plan[list[Found] | None]:
        """This node's members as a search agent finds them through the tools (None: it
        cannot gather them, see :meth:`search_rank`)."""
        return done(None)

    def test(self, s: Solver, item: Found) -> Plan[bool]:
        """Whether ``item`` is in this node's set, as the pages tell (here: among the
        members gathered)."""
        members = yield from s.members(self)
        return members is not None and contains_item(members, item, s)

    def solve(self, s: Solver) -> Plan[str | None]:
        """The answer a search agent gives to a query with this root (None: it found
        nothing, and abstains)."""
        if not (yield from presuppositions_hold(self, s)):
            return None
        members = yield from s.members(self)
        return answer_text(members[0]) if members else None


def presuppositions_hold(root: Node, s: Solver) -> Plan[bool]:
    """Whether every description the question presupposes (:meth:`Node.presupposed`) has a
    member a search finds (one it cannot gather is not held against it): a comparison with a
    candidate that does not exist has no answer."""
    for n in walk(root):
        for p in n.presupposed():
            if s.rank(p) is None:
                continue
            found = yield from s.members(p)
            if found is not None and not found:
                return False
    return True


def _same(node: Node) -> Node:
    return node


class Constant(Node):
    """A named constant (an entity, a literal): one item, no fact to show for it."""

    __slots__ = ()

    def tally(self, counts: dict[str, int]) -> None:
        counts["constants"] += 1

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        self.witness_member(ev, t)


class Unary(Node):
    """A node of one child, ``arg`` (a subclass declares it as its dataclass field)."""

    __slots__ = ()
    arg: Node

    def children(self) -> tuple[Node, ...]:
        return (self.arg,)

    def with_children(self, children: Sequence[Node]) -> Node:
        # Generic (a copy with another arg); the core types rebuild directly, which is faster
        # on the minimisation path.
        (arg,) = children
        return replace(self, arg=arg)  # type: ignore[type-var]

    def hops(self) -> int:
        return self.arg.hops()

    def paths(self) -> tuple[tuple[Node, int], ...]:
        return ((self.arg, 0),)


class Hop(Unary):
    """One hop over ``relation`` from ``arg``'s members (a projection, a superlative)."""

    __slots__ = ()
    relation: str

    def hops(self) -> int:
        return 1 + self.arg.hops()

    def relations(self) -> tuple[str, ...]:
        return (self.relation,)

    def paths(self) -> tuple[tuple[Node, int], ...]:
        return ((self.arg, 1),)


class Branching(Node):
    """A node of several children, ``args`` (an intersection, a union)."""

    __slots__ = ()
    args: tuple[Node, ...]

    def children(self) -> tuple[Node, ...]:
        return self.args

    def with_children(self, children: Sequence[Node]) -> Node:
        # Generic, as Unary's.
        return replace(self, args=tuple(children))  # type: ignore[type-var]

    def hops(self) -> int:
        return max((a.hops() for a in self.args), default=0)

    def paths(self) -> tuple[tuple[Node, int], ...]:
        return deepest_first(self.args)

    def to_json(self) -> dict[str, Any]:
        return {"op": self.OP, "args": [a.to_json() for a in self.args]}


class Numeric(Node):
    """A root whose answer is a computed number (an arithmetic, a total): written grouped
    ("1,013"), its plain digits an alias."""

    __slots__ = ()

    def answer_text(self, graph: KnowledgeGraph, item: Item) -> str:
        return format_number(float(item))

    def answer(self, graph: KnowledgeGraph, item: Item) -> Answer:
        shown = self.answer_text(graph, item)
        return shown, ([str(item)] if item != shown else []), "number"


def deepest_first(args: Sequence[Node]) -> tuple[tuple[Node, int], ...]:
    """The members of ``args`` that lead to the answer (negated ones do not), the deepest
    chain first (ties in argument order)."""
    live = [a for a in args if a.negated is None]
    return tuple((a, 0) for a in sorted(live, key=lambda a: a.hops(), reverse=True))


# ---- the registry -----------------------------------------------------------------
_TYPES: dict[str, type[Node]] = {}
N = TypeVar("N", bound=type[Node])


def register(cls: N) -> N:
    """Class decorator: make ``cls`` the node type of its ``OP`` (one type per op).

    Raises:
        SynthError: Another type has that op.
    """
    other = _TYPES.get(cls.OP)
    if other is not None and other is not cls:
        raise SynthError(f"query op {cls.OP!r} is already {other.__name__}")
    _TYPES[cls.OP] = cls
    return cls


def node_type(op: str) -> type[Node] | None:
    """The node type registered for ``op``."""
    return _TYPES.get(op)


def node_ops() -> list[str]:
    """Every registered op, sorted."""
    return sorted(_TYPES)


# ---- what every query has ---------------------------------------------------------
def to_json(node: Node) -> dict[str, Any]:
    """The JSON form of a node (recursively)."""
    return node.to_json()


def canonical(node: Node) -> str:
    """The sorted, compact JSON string used to compare and hash queries."""
    return json.dumps(node.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def hops(node: Node) -> int:
    """Length of the longest chain of projections from a constant to the answer."""
    return node.hops()


def walk(node: Node) -> list[Node]:
    """Every node, parents before children, in argument order."""
    out = [node]
    for child in node.children():
        out.extend(walk(child))
    return out


def constraints(node: Node) -> list[Node]:
    """The members of a description that are not type filters (or the node itself)."""
    members = node.conjuncts()
    if members is None:
        return [node]
    return [a for a in members if a.filter_kind is None]


def kind_of(node: Node) -> str | None:
    """The kind named by a description's (first) type filter, if any."""
    for a in node.conjuncts() or ():
        if a.filter_kind is not None:
            return a.filter_kind
    return None


def clause_count(node: Node) -> int:
    """Clauses a description of ``node`` needs (constraints, at every depth)."""
    return sum(n.own_clauses() for n in walk(node))


MEASURES = (
    "hops",
    "constraints",
    "intersections",
    "obfuscated_values",
    "described_entities",
    "constants",
)


def measures(node: Node) -> dict[str, int]:
    """Structural measures of a query (the evaluation-free part of the difficulty), in the
    order of :data:`MEASURES`."""
    counts = dict.fromkeys(MEASURES, 0)
    counts["hops"] = node.hops()
    for n in walk(node):
        n.tally(counts)
    return counts


def relations_of(node: Node) -> list[str]:
    """Relations used, in walk order, without repeats."""
    return list(dict.fromkeys(r for n in walk(node) for r in n.relations()))


def closed_world_relations(node: Node) -> list[str]:
    """Relations whose completeness the query's answer relies on (sorted; see
    :meth:`Node.closed_relations`)."""
    return sorted({r for n in walk(node) for r in n.closed_relations()})


def forms_of(node: Node) -> list[str]:
    """The question forms a query uses (sorted): its root's kind (entity, literal, count,
    yes_no, arithmetic) and every structure below it (union, negation, same, superlative,
    comparison, fuzz, wide, ...)."""
    out: set[str] = set()
    root = node.root_form()
    if root is not None:
        out.add(root)
    nodes = walk(node)
    listed = {id(c) for n in nodes for c in n.candidates()}
    for n in nodes:
        out.update(n.forms(id(n) in listed))
    return sorted(out)


def phrasing_rng(root: Node, seed: int) -> np.random.Generator:
    """The RNG of one question's phrasing: from the query itself and the generator's seed,
    so the wording of a task never depends on what was drafted or rendered before it."""
    digest = hashlib.sha256(canonical(root).encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "big")])


def entity_ids(node: Node) -> set[int]:
    """The entities a query names."""
    return {c for n in walk(node) if isinstance(c := n.constant, int)}


# ---- wording every description shares -----------------------------------------------
def subject_phrase(r: Renderer, node: Node) -> str:
    """The subject of a literal question: a long description goes first, in a sentence of
    its own, so the question's verb does not trail it."""
    kind = kind_of(node)
    if not r.require_definite(node, "subject of the question"):
        return node.noun_phrase(r)
    if kind and kind not in r.kinds and clause_count(node) >= 1:
        return r.introduce(kind, constraints(node))
    return node.noun_phrase(r)


def entity_question(r: Renderer, root: Node) -> str:
    """ "Name the person who ...", "Which city ...?", "This person ... . Who is it?"."""
    kind = kind_of(root)
    members = constraints(root)
    if len(members) == 1:
        att = members[0].attribute()
        if att is not None:
            relation, subject = att
            rt = relation_text(relation)
            nouns = [n for n in rt.nouns if n.startswith("the ")]
            # Without a verb of its own a forward clause reads "is the ...": ask for the noun.
            if nouns and (not rt.fwd or r.chance(0.5)):
                noun = r.pick(nouns).format(s=subject.noun_phrase(r))
                return ("Who is " if kind == "person" else "What is ") + noun + "?"
    who = who_of(kind)
    parts = r.parts(members)
    noun = kind or "one"
    person = kind == "person"
    frames = ["name", "which", "whatis", "identify"]
    # "This person ..." only when no sentence before has its own "this ...".
    if clean_parts(parts) and len(parts) >= 2 and not r.intros:
        frames.append("this")
    frame = r.pick(frames)
    rel = r.described(f"the {noun}", parts, who)
    verbs_only = r.verbs_only(parts)
    if frame == "which":
        bare = r.described("", parts, who, reduce=False).strip()
        if verbs_only and bare.startswith(who + " "):
            verb = bare[len(who) + 1 :]
            if person:
                return r.pick([f"Who {verb}?", f"Which person {verb}?"])
            return f"{r.pick(['Which', 'What'])} {noun} {verb}?"
        frame = "whatis"
    if frame == "identify":
        return f"{r.pick(['Identify', 'Find'])} {rel}."
    if frame == "whatis":
        return f"Who is {rel}?" if person else f"{r.pick(['What', 'Which'])} is {rel}?"
    return f"Name {rel}."
