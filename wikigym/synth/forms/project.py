"""A projection (``Project(relation, arg, inverse)``, op ``project``), and the literal question
form.

Forward, the objects of the members of ``arg`` under ``relation`` ("the birthplace of X";
as a root, a literal question: "When was X born?"); inverse, the subjects whose ``relation``
object is in ``arg`` ("born in X"). A chain of them is what makes a question multi-hop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from wikigym.errors import SynthError
from wikigym.synth import idsets
from wikigym.synth.drafts import Draft, QuestionForm, SamplerAPI, Shape, register_form
from wikigym.synth.evaluate import Evaluator, Item, SetValue, contains, item_order
from wikigym.synth.forms.entity import Entity
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.minimal import contains_phrase
from wikigym.synth.node import (
    Answer,
    Hop,
    Node,
    clause_count,
    constraints,
    entity_question,
    kind_of,
    register,
)
from wikigym.synth.render import Renderer, as_indefinite, object_noun
from wikigym.synth.solving import Found, Plan, Solver, unique
from wikigym.synth.templates import relation_text

SEARCH_STEP = 10  # rank added by a step a search must find (subjects of an object)
READ_STEP = 1  # rank added by a step read off pages already found (objects of a subject)
MIN_LITERAL_VALUES = 30  # a text relation with fewer values, much shared, is a closed set
CLOSED_SHARE = 3.0  # subjects per value (on average) that make a small set closed


@register
@dataclass(frozen=True, slots=True)
class Project(Hop):
    """Objects of ``arg``'s members (``inverse=False``), or the subjects whose object is in
    ``arg`` (``inverse=True``), under ``relation``."""

    relation: str
    arg: Node
    inverse: bool = False
    OP = "project"

    def with_children(self, children: Sequence[Node]) -> Node:
        (arg,) = children
        return Project(self.relation, arg, self.inverse)

    def attribute(self) -> tuple[str, Node] | None:
        return None if self.inverse else (self.relation, self.arg)

    def link(self) -> tuple[str, Node] | None:
        return (self.relation, self.arg) if self.inverse else None

    def to_json(self) -> dict[str, Any]:
        return {
            "op": "project",
            "relation": self.relation,
            "inverse": self.inverse,
            "arg": self.arg.to_json(),
        }

    @classmethod
    def parse(cls, data: dict[str, Any], parse: Callable[[Any], Node]) -> Node:
        return cls(str(data["relation"]), parse(data["arg"]), bool(data["inverse"]))

    def tally(self, counts: dict[str, int]) -> None:
        counts["constraints"] += 1
        if self.arg.constant is None:
            counts["described_entities"] += 1

    def root_form(self) -> str | None:
        return "entity" if self.inverse else "literal"

    def constraint_type(self) -> str | None:
        return f"project-{'inverse' if self.inverse else 'forward'}"

    def own_clauses(self) -> int:
        return int(self.inverse)

    # ---- evaluation ------------------------------------------------------------------
    def evaluate(self, ev: Evaluator) -> SetValue:
        g = ev.g
        arg = ev.value(self.arg)
        if self.inverse:
            if isinstance(arg, np.ndarray):
                codes = arg
            else:
                got = (g.encode(x) for x in sorted(arg, key=item_order))
                codes = idsets.ids_of(c for c in got if c is not None)
            return g.subject_ids_of_codes(self.relation, codes)
        codes = g.object_codes_of_ids(self.relation, ev.as_ids(arg))
        if not len(codes) or codes[0] >= 0:  # entities only
            return codes
        return frozenset(g.decode(c) for c in codes.tolist())

    def witness(self, ev: Evaluator, t: Item, rows: list[int]) -> None:
        g = ev.g
        arg = ev.value(self.arg)
        if self.inverse:
            for r in g.fwd.get(self.relation, {}).get(t, ()):
                if contains(arg, g.f_obj[r]):
                    self.arg.witness(ev, g.f_obj[r], rows)
                    rows.append(r)
                    return
        else:
            # The least subject of the argument with a (subject, relation, t) fact: the one
            # a walk over the argument in sorted order would meet first.
            hits = idsets.intersect(ev.as_ids(arg), g.subject_ids(self.relation, t))
            if len(hits) and (r := g.find_row(int(hits[0]), self.relation, t)) is not None:
                self.arg.witness(ev, int(hits[0]), rows)
                rows.append(r)
                return
        raise SynthError(f"{t!r} is not reached by {self.relation}")

    def at_least(self, ev: Evaluator, kinds: frozenset[str] | None = None) -> int:
        # "the people whose nationality is that of someone born in the 1770s": most of the
        # people, and building the set to see it is not the answer alone took 10-20 ms on
        # a 1M-article world. The countries are few, and the one with the most such
        # subjects bounds the set from below.
        if not self.inverse:
            return 0
        g = ev.g
        # As an intersection's one constraint: only when its kind filter keeps every
        # subject of the relation.
        if kinds and kinds != {g.relation_kind(self.relation, "subject")}:
            return 0
        arg = ev.value(self.arg)
        if not isinstance(arg, np.ndarray):
            return 0
        return g.most_subjects_of_codes(self.relation, arg)

    def surely_not(self, ev: Evaluator, want: SetValue) -> bool:
        if self.inverse:
            # Hop's, named: a slotted dataclass is a new class, so zero-argument super()
            # fails on Python 3.11 (its __class__ cell is the class before slots).
            return Hop.surely_not(self, ev, want)
        # Sized from its codes first (projections keep distinct codes, one per literal, so
        # the sizes are the sets' sizes): a relaxed description can reach a million dates.
        ids = ev.as_ids(ev.value(self.arg))
        return len(ev.g.object_codes_of_ids(self.relation, ids)) != len(want)

    # ---- minimality ------------------------------------------------------------------
    def reductions(self) -> Iterator[Node]:
        return self.reduced_children()

    def stated_by(self, graph: KnowledgeGraph) -> Callable[[str], bool] | None:
        item = self.arg.constant
        if not self.inverse or item is None:
            return None
        words = graph.surface(item).casefold()
        return lambda text: contains_phrase(text, words)

    # ---- answers ---------------------------------------------------------------------
    def answer(self, graph: KnowledgeGraph, item: Item) -> Answer:
        if isinstance(item, int):
            return Hop.answer(self, graph, item)
        shown = self.answer_text(graph, item)
        vt = graph.rel_types.get(self.relation, "text")
        aliases = [x for x in graph.literal_aliases.get(item, ()) if x != shown]
        return shown, list(dict.fromkeys(aliases)), vt

    # ---- wording ---------------------------------------------------------------------
    def noun_phrase(self, r: Renderer) -> str:
        if self.inverse:
            return Hop.noun_phrase(self, r)
        rt = relation_text(self.relation)
        one = r.definite(self)
        s = self.arg.noun_phrase(r)
        # Inside a sentence, "the birthplace of X" rather than "the city where X was born":
        # a verb after the subject would trail behind the clauses around it.
        ending = tuple(n for n in rt.nouns if n.endswith("{s}"))
        noun = rt.role or object_noun(self.relation)
        nouns = ending or (f"the {noun} of {{s}}",)
        phrase = r.pick(nouns).format(s=s)
        return phrase if one else as_indefinite(phrase)

    def clause(self, r: Renderer, who: str) -> str:
        rt = relation_text(self.relation)
        if self.inverse:
            inner = noun_of(self.arg)
            att = inner.attribute()
            if att is not None and att[0] == self.relation:
                return r.shared(self.relation, att[1], who)
            bare, at = literal_words(r, inner)
            return r.pick(rt.clauses).format(who=who, o=bare, o_at=at)
        s = self.arg.noun_phrase(r)
        if rt.fwd:
            return r.pick(rt.fwd).format(who=who, s=s)
        return f"{who} is " + r.pick(rt.nouns).format(s=s)

    def question(self, r: Renderer) -> str:
        if self.inverse:
            return entity_question(r, self)
        return literal_question(r, self)

    def open_world(self) -> bool:
        # Forward: read off the argument's members. Inverse: every subject of the relation.
        return not self.inverse and self.arg.open_world()

    # ---- search plans ----------------------------------------------------------------
    def search_rank(self, s: Solver) -> int | None:
        inner = s.rank(self.arg)
        if inner is None:
            return None
        return inner + (SEARCH_STEP if self.inverse else READ_STEP)

    def find_members(self, s: Solver) -> Plan[list[Found] | None]:
        args = yield from s.members(self.arg)
        if args is None:
            return None
        out: list[Found] = []
        for a in args:
            if self.inverse:
                out.extend((yield from s.subjects(self.relation, a)))
            elif isinstance(a, str):
                out.extend((yield from s.values(a, self.relation)))
        return unique(out, s)

    def test(self, s: Solver, item: Found) -> Plan[bool]:
        if not self.inverse:
            if s.rank(self.arg) is not None:
                return (yield from Hop.test(self, s, item))
            # "the birthplace of someone who ...": some subject stating item is one of them.
            for subject in (yield from s.subjects(self.relation, item)):
                if (yield from s.holds(self.arg, subject)):
                    return True
            return False
        if not isinstance(item, str):
            return False
        rank = s.rank(self.arg)
        if rank is not None and rank < SEARCH_STEP:
            # A named object, or one read off named pages: look for it on the item's page.
            for target in (yield from s.members(self.arg)) or ():
                if (yield from s.states(item, self.relation, target)):
                    return True
            return False
        for value in (yield from s.values(item, self.relation)):
            if (yield from s.holds(self.arg, value)):
                return True
        return False


def noun_of(node: Node) -> Node:
    """The forward projection a description of that one constraint stands for."""
    if node.conjuncts() is not None:
        cons = constraints(node)
        if len(cons) == 1 and cons[0].attribute() is not None:
            return cons[0]
    return node


def literal_words(r: Renderer, node: Node) -> tuple[str, str]:
    """(bare, prepositional) words of an object: a literal's own ("in 1929"), else its
    noun phrase twice."""
    if isinstance(node.constant, str):
        return node.value_words(r)
    words = node.noun_phrase(r)
    return words, words


def literal_question(r: Renderer, root: Project) -> str:
    """ "When was X born?"; for a described subject "A person ... . When was this person
    born?" or "What is the birth date of the person who ...?"."""
    rt = relation_text(root.relation)
    r.require_definite(root.arg, "subject of a literal question")
    trailing = [a for a in rt.asks if not a.endswith("{s}?")]
    ending = [a for a in rt.asks if a.endswith("{s}?")]
    ending += ["What is " + n + "?" for n in rt.nouns if n.endswith("{s}")]
    arg = root.arg
    kind = kind_of(arg)
    described = arg.conjuncts() is not None and clause_count(arg) >= 1
    cons = constraints(arg)
    # "One city is the place of death of this person." says nothing: keep such a noun.
    only_noun = len(cons) == 1 and cons[0].attribute() is not None
    free = bool(kind) and kind not in r.kinds and not only_noun
    if described and free and kind and (trailing or r.chance(0.6)):
        s = r.introduce(kind, constraints(arg))
        options = [*rt.asks] or ["What is " + n + "?" for n in rt.nouns]
        return r.pick(options).format(s=s)
    if described and ending:
        return r.pick(ending).format(s=arg.noun_phrase(r))
    if rt.asks:
        return r.pick(rt.asks).format(s=arg.noun_phrase(r))
    return "What is " + r.pick(rt.nouns).format(s=arg.noun_phrase(r)) + "?"


def closed_set(graph: KnowledgeGraph, relation: str) -> bool:
    """Whether ``relation``'s answers come from a tiny closed set: a text relation with
    fewer than MIN_LITERAL_VALUES values, each shared by CLOSED_SHARE subjects or more on
    average (dates and numbers are never closed: they are measured)."""
    if graph.rel_types.get(relation) in ("date", "number", "entity"):
        return False
    if relation not in graph.inv:
        return True  # no value at all: as closed as a set gets
    values = graph.inv[relation]
    return len(values) < MIN_LITERAL_VALUES and values.pairs() >= CLOSED_SHARE * len(values)


@register_form
class LiteralForm(QuestionForm):
    """ "When was the person who ... born?": a literal fact of a described entity."""

    name = "literal"
    perturbable = True
    masks_answer = True

    def draft(self, s: SamplerAPI, shape: Shape, level: str, want_yes: bool) -> Draft | None:
        if not len(s.literal_rows):
            return None
        row = int(s.literal_rows[int(s.rng.integers(len(s.literal_rows)))])
        g = s.g
        subject, rel = g.f_subj[row], g.f_rel[row]
        # No answers from tiny closed sets (ten occupations, a score of genres) above easy.
        if level != "easy" and closed_set(g, rel):
            return None
        if shape.depth == 1:
            arg: Node = Entity(subject, g.titles[subject])
        else:
            got = s.describe(subject, shape.depth - 1, shape, frozenset(), top=True, skip_rel=rel)
            if got is None:
                return None
            arg = got[0]
        if g.f_vtype[row] not in ("date", "number", "text"):
            return None
        return Draft(Project(rel, arg), g.f_obj[row], self.name)
