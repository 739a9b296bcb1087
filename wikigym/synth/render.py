"""Questions in English from queries, by the templates of :mod:`wikigym.synth.templates`.

Deterministic: every choice between phrasings comes from the RNG passed in. Clauses are
ordered shallow to deep, so a nested description always ends its sentence and cannot swallow
a later clause of the outer entity.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

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
    Same,
    Union,
    Value,
    century_part,
    constraints,
    hops,
)
from wikigym.synth.templates import negated_clauses, plural, relation_text
from wikigym.synth.values import Span, format_number, span_phrase


def _join(parts: Sequence[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def kind_of(node: Node) -> str | None:
    """The kind named by an intersection's type filter, if any."""
    if isinstance(node, Intersect):
        for a in node.args:
            if isinstance(a, IsA):
                return a.kind
    return None


class Renderer:
    """Renders queries over one graph with one RNG."""

    def __init__(self, graph: KnowledgeGraph, rng: np.random.Generator) -> None:
        self.g = graph
        self.rng = rng

    def _pick(self, options: Sequence[str]) -> str:
        return options[int(self.rng.integers(len(options)))] if len(options) > 1 else options[0]

    # ---- pieces ----------------------------------------------------------------------
    def value_words(self, node: Value | Range) -> tuple[str, str]:
        """(bare, prepositional) words of a literal constant."""
        if isinstance(node, Range):
            words = self.range_words(node)
            return words, words
        surface = self.g.surface(node.key)
        if node.value_type == "date":
            full = len(node.key) > 4
            return surface, (f"on {surface}" if full else f"in {surface}")
        return surface, surface

    def range_words(self, node: Range) -> str:
        """Closed spans ("in the 1920s", "between 40,000 and 60,000"), open ones ("before
        1900", "after 1950", "at least 50,000") and century parts ("in the late 19th
        century")."""
        year = node.unit == "year"
        if math.isinf(node.lo):
            if year:
                return f"before {int(node.hi) + 1}"
            return f"{self._pick(['at most', 'no more than'])} {format_number(node.hi)}"
        if math.isinf(node.hi):
            if year:
                return f"after {int(node.lo) - 1}"
            return f"{self._pick(['at least', 'no fewer than'])} {format_number(node.lo)}"
        part = century_part(node)
        if part is not None:
            name, century = part
            return f"in the {name} {_ordinal(century)} century"
        return span_phrase(Span(node.lo, node.hi), node.unit, int(self.rng.integers(4)))

    def np(self, node: Node) -> str:
        """A noun phrase for a set node (a unique description in practice)."""
        if isinstance(node, Entity):
            return self.g.titles[node.doc_id]
        if isinstance(node, Value):
            return self.value_words(node)[0]
        if isinstance(node, Intersect):
            kind = kind_of(node)
            cons = constraints(node)
            if len(cons) == 1 and isinstance(cons[0], Project) and not cons[0].inverse:
                return self.np(cons[0])
            who = "who" if kind == "person" else "that"
            head = f"the {kind}" if kind else "the one"
            return f"{head} {self.clauses(constraints(node), who)}"
        if isinstance(node, Project) and not node.inverse:
            return self._pick(relation_text(node.relation).nouns).format(s=self.np(node.arg))
        if isinstance(node, IsA):
            return f"a {node.kind}"
        return f"the one {self.clause(node, 'that')}"

    def clause(self, node: Node, who: str) -> str:
        """A relative clause saying that the described entity is in ``node``'s set."""
        if isinstance(node, Range):
            bare, at = self.value_words(node)
            t = self._pick(relation_text(node.relation).clauses)
            return _fix_articles(t.format(who=who, o=bare, o_at=at))
        if isinstance(node, Project):
            rt = relation_text(node.relation)
            if node.inverse:
                if isinstance(node.arg, Value):
                    bare, at = self.value_words(node.arg)
                else:
                    bare = at = self.np(node.arg)
                return _fix_articles(self._pick(rt.clauses).format(who=who, o=bare, o_at=at))
            s = self.np(node.arg)
            if rt.fwd:
                return self._pick(rt.fwd).format(who=who, s=s)
            return f"{who} is " + self._pick(rt.nouns).format(s=s)
        if isinstance(node, Intersect):
            return self.clauses(constraints(node), who)
        if isinstance(node, Not):
            return self.negated(node.arg, who)
        if isinstance(node, Union):
            return self.union_clause(node, who)
        if isinstance(node, Same):
            return self.same_clause(node, who)
        return f"{who} is {self.np(node)}"

    def negated(self, node: Node, who: str) -> str:
        """ "who was not born in X": a negated one-hop constraint."""
        if isinstance(node, Project) and node.inverse:
            options = negated_clauses(node.relation)
            if options:
                if isinstance(node.arg, Value):
                    bare, at = self.value_words(node.arg)
                else:
                    bare = at = self.np(node.arg)
                return _fix_articles(self._pick(options).format(who=who, o=bare, o_at=at))
        return f"{who} is not {self.np(node)}"

    def union_clause(self, node: Union, who: str) -> str:
        """ "who was born in X or in Y" (one relation) or "who ... or who ..."."""
        args = node.args
        rels = {a.relation for a in args if isinstance(a, Project) and a.inverse}
        simple = all(isinstance(a, Project) and isinstance(a.arg, Entity) for a in args)
        if len(rels) == 1 and simple and len(args) >= 2:
            (rel,) = rels
            names = [self.np(a.arg) for a in args if isinstance(a, Project)]
            t = self._pick(relation_text(rel).clauses)
            joined = ", ".join(names[:-1]) + " or " + names[-1]
            return _fix_articles(t.format(who=who, o=joined, o_at=joined))
        if all(isinstance(a, Range) for a in args) and len({a.relation for a in args}) == 1:
            spans = [self.range_words(a) for a in args if isinstance(a, Range)]
            joined = ", ".join(spans[:-1]) + " or " + spans[-1]
            t = self._pick(relation_text(args[0].relation).clauses)  # type: ignore[union-attr]
            return _fix_articles(t.format(who=who, o=joined, o_at=joined))
        parts = [self.clause(a, who) for a in args]
        return ", ".join(parts[:-1]) + " or " + parts[-1]

    def same_clause(self, node: Same, who: str) -> str:
        """ "who was born and died in the same city" / "whose birthplace is also its mayor"."""
        pair = {node.rel_a, node.rel_b}
        if pair == {"born_in", "died_in"}:
            return f"{who} was born and died in the same city"
        a, b = relation_text(node.rel_a).role, relation_text(node.rel_b).role
        own = "their" if who == "who" else "its"
        return f"whose {a} is also {own} {b}"

    def clauses(self, members: Sequence[Node], who: str) -> str:
        ordered = sorted(members, key=hops)
        return _join([self.clause(m, who) for m in ordered])

    # ---- questions ---------------------------------------------------------------------
    def question(self, root: Node) -> str:
        """The question for a root node."""
        if isinstance(root, Count):
            kind = kind_of(root.arg) or "entrie"
            (member,) = constraints(root.arg)
            assert isinstance(member, Project) and member.inverse
            role = relation_text(member.relation).role
            return f"How many {plural(kind)} have {self.np(member.arg)} as their {role}?"
        if isinstance(root, Extreme):
            return self.extreme_question(root)
        if isinstance(root, Arith):
            return self.arith_question(root)
        if isinstance(root, Ask):
            cand = root.candidate
            name = self.g.titles[cand.doc_id] if isinstance(cand, Entity) else cand.key
            return f"Is {name} {self.np(root.arg)}?"
        if isinstance(root, Project) and not root.inverse:
            rt = relation_text(root.relation)
            s = self.np(root.arg)
            if rt.asks:
                return self._pick(rt.asks).format(s=s)
            return "What is " + self._pick(rt.nouns).format(s=s) + "?"
        kind = kind_of(root)
        members = constraints(root)
        if len(members) == 1:
            m = members[0]
            rt = relation_text(m.relation)
            nouns = [n for n in rt.nouns if n.startswith("the ")]
            forward = isinstance(m, Project) and not m.inverse
            # Without a verb of its own a forward clause reads "is the ...": ask for the noun.
            if forward and nouns and (not rt.fwd or self.rng.random() < 0.5):
                noun = self._pick(nouns).format(s=self.np(m.arg))
                return ("Who is " if kind == "person" else "What is ") + noun + "?"
            text = self.clause(m, "{who}")
            if text.startswith("{who} "):
                rest = text[len("{who} ") :].replace("{who}", "who" if kind == "person" else "that")
                if kind == "person":
                    return self._pick([f"Who {rest}?", f"Which person {rest}?"])
                if kind:
                    return self._pick([f"Which {kind} {rest}?", f"What {kind} {rest}?"])
                return f"What {rest}?"
        phrase = self.np(root)
        if kind == "person":
            return self._pick([f"Who is {phrase}?", f"Name {phrase}."])
        return self._pick([f"What is {phrase}?", f"Name {phrase}.", f"Which is {phrase}?"])

    def extreme_question(self, root: Extreme) -> str:
        """ "Of the people who ..., which has the earliest birth date?" / "Which has the
        largest population: A, B or C?"."""
        noun = measure_noun(root.relation)
        is_date = self.g.rel_types.get(root.relation) == "date"
        if is_date:
            adj = "latest" if root.most else "earliest"
        else:
            adj = "largest" if root.most else "smallest"
        if isinstance(root.arg, Union):
            names = [self.np(a) for a in root.arg.args]
            listed = ", ".join(names[:-1]) + " or " + names[-1]
            return f"Which has the {adj} {noun}: {listed}?"
        kind = kind_of(root.arg) or "one"
        who = "who" if kind == "person" else "that"
        text = self.clauses(constraints(root.arg), who)
        # "Of every person who was born ...": the clauses stay singular.
        if root.relation == "birth_date":
            return f"Of every person {text}, who is the {'youngest' if root.most else 'oldest'}?"
        pronoun = "who" if kind == "person" else "which"
        return f"Of every {kind} {text}, {pronoun} has the {adj} {noun}?"

    def arith_question(self, root: Arith) -> str:
        """Years between two dates of one entity, or the sum of two numbers."""
        assert isinstance(root.left, Project) and isinstance(root.right, Project)
        left, right = root.left, root.right
        if root.op == "sub":
            first = year_noun(right.relation).format(s=self.np(right.arg))
            if left.arg == right.arg:
                kind = kind_of(left.arg)
                ref = f"that {kind}" if kind else "it"
                second = year_noun(left.relation).format(s=ref)
            else:
                second = year_noun(left.relation).format(s=self.np(left.arg))
            return f"How many years separate {first} and {second}?"
        noun = relation_text(left.relation).nouns[0]
        both = f"{self.np(left.arg)} and {self.np(right.arg)}"
        return "What is " + noun.replace("the ", "the combined ", 1).format(s=both) + "?"

    @staticmethod
    def rubric_text(relation: str, subject: str, obj: str, obj_at: str) -> str:
        """A declarative statement of one fact, e.g. ``[E1] was born in Gela``."""
        t = relation_text(relation).clauses[0]
        if t.startswith("{who} "):
            return subject + " " + t[len("{who} ") :].format(o=obj, o_at=obj_at)
        if t.startswith("whose "):
            return f"{subject}'s " + t[len("whose ") :].format(o=obj, o_at=obj_at)
        return f"{subject} {relation.replace('_', ' ')} {obj}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def measure_noun(relation: str) -> str:
    """ "population" from "the population of {s}"; "founding date" from "the founding date
    of {s}"."""
    noun = relation_text(relation).nouns[0]
    noun = noun.removeprefix("the ").removeprefix("a ").removeprefix("an ")
    return noun.replace(" of {s}", "").replace("{s}", "it").strip()


def year_noun(relation: str) -> str:
    """ "the birth year of {s}" from "the birth date of {s}": years are what is compared."""
    return re.sub(r"\bdate\b", "year", relation_text(relation).nouns[0])


_DOUBLE_ARTICLE = re.compile(r"\bthe (an?|the) ")


def _fix_articles(text: str) -> str:
    """ "received the an award ..." -> "received an award ...": a template's article
    before a described entity that brings its own."""
    return _DOUBLE_ARTICLE.sub(r"\1 ", text)
