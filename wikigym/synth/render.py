"""Questions in English from queries, by the templates of :mod:`wikigym.synth.templates`.

The sentence is planned, not stacked: an intermediate entity with a description of two
constraints or more is introduced in a sentence of its own ("A city was founded in the
1400s and covers 56 square kilometres.") and then referred to ("this city"), deepest first;
the question itself groups its clauses under one relative pronoun ("who was born ... and
died ..."), may start with a reduced clause ("the person born in the 1860s who ..."), and
takes one of several frames ("Name the ...", "Which ...?", "This person ... . Who is it?").
A literal question whose verb would follow a long description ("When was the person who ...
born?") introduces that description first.

Deterministic: every choice comes from the RNG passed in (the generator seeds one per task
from the task's own query). Constants are marked while a question is composed, so the
clean-up (articles, "the the") never edits a name, and :attr:`Renderer.kept` lists the
phrases a paraphrase must keep (names, values, the numbers of every range).
"""

from __future__ import annotations

import hashlib
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
    canonical,
    century_part,
    constraints,
    hops,
    walk,
)
from wikigym.synth.templates import negated_clauses, plural, relation_text
from wikigym.synth.values import Span, format_number, span_phrase

_OPEN, _CLOSE = "\x01", "\x02"  # around a constant while a question is composed
_WHO = "\x03"  # the relative pronoun, until the sentence decides how to use a clause
_MARKED = re.compile(f"{_OPEN}([^{_CLOSE}]*){_CLOSE}")
_NUMBER = re.compile(r"\d[\d,.]*\d(?:s\b)?|\d(?:s\b)?")
INTRO_MIN_CLAUSES = 2  # clauses of a description that earn it a sentence of its own
INTRO_P = 1.0  # chance such a description is introduced (when its kind is still free)
_PARTICIPLE_END = ("ed", "wn", "en", "rn", "lt", "ld")


def phrasing_rng(root: Node, seed: int) -> np.random.Generator:
    """The RNG of one question's phrasing: from the query itself and the generator's seed,
    so the wording of a task never depends on what was drafted or rendered before it."""
    digest = hashlib.sha256(canonical(root).encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "big")])


def _mark(text: str) -> str:
    return f"{_OPEN}{text}{_CLOSE}"


def _join(parts: Sequence[str], word: str = "and") -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + f" {word} " + parts[-1]


def kind_of(node: Node) -> str | None:
    """The kind named by an intersection's type filter, if any."""
    if isinstance(node, Intersect):
        for a in node.args:
            if isinstance(a, IsA):
                return a.kind
    return None


def clause_count(node: Node) -> int:
    """Clauses a description of ``node`` needs (constraints, at every depth)."""
    return sum(
        isinstance(n, Range | Same | Not) or (isinstance(n, Project) and n.inverse)
        for n in walk(node)
    )


_SILENT_H = ("hour", "honest", "honour", "honor", "heir")
_CONSONANT_SOUND = ("uni", "use", "usu", "uti", "ure", "uro", "eu", "ewe", "one", "once")


def wants_an(word: str) -> bool:
    """Whether ``word`` takes "an" (a vowel sound, by spelling and a few exceptions)."""
    low = word.lower()
    if low.startswith(_SILENT_H):
        return True
    return low[:1] in "aeiou" and low[:1] != "" and not low.startswith(_CONSONANT_SOUND)


def indefinite(noun: str) -> str:
    """ "an award", "a university", "a city"."""
    return ("an " if wants_an(noun) else "a ") + noun


_ARTICLE = re.compile(r"(?<![\w\x01])(a|an|A|An) (\x01?)([A-Za-z]+)")
_DOUBLE_ARTICLE = re.compile(r"\bthe (an?|the|this) ")
_ABOUT_RANGE = re.compile(
    r"\babout (?=(?:between|before|after|at least|at most|no more than|no fewer than|in the)\b)"
)
_DOUBLE_WORD = re.compile(r"\b(\w+) \1\b", re.IGNORECASE)


def _outside(text: str, pos: int) -> bool:
    """Whether ``pos`` of a marked text lies outside every constant."""
    return text.count(_OPEN, 0, pos) == text.count(_CLOSE, 0, pos)


def tidy(text: str) -> str:
    """A marked sentence made grammatical around the constants: a/an by the next word,
    no "the an", no "about between", no doubled word, the first letter capitalised."""

    def article(m: re.Match[str]) -> str:
        if not _outside(text, m.start()):
            return m.group(0)
        art, mark, word = m.groups()
        right = "an" if wants_an(word) else "a"
        if art[0].isupper():
            right = right.capitalize()
        return f"{right} {mark}{word}"

    text = _ARTICLE.sub(article, text)
    text = _DOUBLE_ARTICLE.sub(r"\1 ", text)
    text = _ABOUT_RANGE.sub("", text)

    def double(m: re.Match[str]) -> str:
        return m.group(1) if _outside(text, m.start()) else m.group(0)

    text = _DOUBLE_WORD.sub(double, text)
    text = re.sub(r"\s+", " ", text).strip()
    return text[:1].upper() + text[1:]


def unmark(text: str) -> str:
    """A marked text without its constant markers."""
    return text.replace(_OPEN, "").replace(_CLOSE, "")


class Renderer:
    """Renders queries over one graph; choices come from ``rng`` (replaceable per question).

    Attributes:
        kept: The constant phrases of the last question (names, values, range numbers).
    """

    def __init__(self, graph: KnowledgeGraph, rng: np.random.Generator) -> None:
        self.g = graph
        self.rng = rng
        self.kept: list[str] = []
        self._intros: list[str] = []
        self._kinds: set[str] = set()
        self._allow_intro = True
        self._reduce_p = 0.5  # chance a description starts with a reduced clause
        self._frame = ""  # the frame of the last introduction

    def _pick(self, options: Sequence[str]) -> str:
        return options[int(self.rng.integers(len(options)))] if len(options) > 1 else options[0]

    def _chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def functional(self, relation: str) -> bool:
        """Whether every subject of ``relation`` has one object (its noun takes "the")."""
        return self.g.functional(relation)

    # ---- constants -------------------------------------------------------------------
    def value_words(self, node: Value | Range) -> tuple[str, str]:
        """(bare, prepositional) marked words of a literal constant."""
        if isinstance(node, Range):
            words = self._range_words(node)
            return words, words
        surface = _mark(self.g.surface(node.key))
        if node.value_type == "date":
            full = len(node.key) > 4
            return surface, (f"on {surface}" if full else f"in {surface}")
        return surface, surface

    def range_words(self, node: Range) -> str:
        """Closed spans ("in the 1920s", "between 40,000 and 60,000"), open ones ("before
        1900", "after 1950", "at least 50,000") and century parts ("in the late 19th
        century")."""
        return unmark(self._range_words(node))

    def _range_words(self, node: Range) -> str:
        year = node.unit == "year"
        if math.isinf(node.lo):
            if year:
                return f"before {_mark(str(int(node.hi) + 1))}"
            return f"{self._pick(['at most', 'no more than'])} {_mark(format_number(node.hi))}"
        if math.isinf(node.hi):
            if year:
                return f"after {_mark(str(int(node.lo) - 1))}"
            return f"{self._pick(['at least', 'no fewer than'])} {_mark(format_number(node.lo))}"
        part = century_part(node)
        if part is not None:
            name, century = part
            return f"in the {_mark(f'{name} {_ordinal(century)} century')}"
        words = span_phrase(Span(node.lo, node.hi), node.unit, int(self.rng.integers(4)))
        return _NUMBER.sub(lambda m: _mark(m.group(0)), words)

    # ---- noun phrases ------------------------------------------------------------------
    def noun_phrase(self, node: Node) -> str:
        """A marked noun phrase for a set node (a unique description in practice); a long
        description of a free kind may become a sentence of its own ("this city")."""
        if isinstance(node, Entity):
            return _mark(self.g.titles[node.doc_id])
        if isinstance(node, Value):
            return self.value_words(node)[0]
        if isinstance(node, Intersect):
            kind = kind_of(node)
            cons = constraints(node)
            if len(cons) == 1 and isinstance(cons[0], Project) and not cons[0].inverse:
                return self.noun_phrase(cons[0])
            if (
                kind
                and self._allow_intro
                and kind not in self._kinds
                and clause_count(node) >= INTRO_MIN_CLAUSES
                and self._chance(INTRO_P)
            ):
                return self.introduce(kind, cons)
            who = "who" if kind == "person" else "that"
            head = f"the {kind}" if kind else "the one"
            return self.described(head, self.parts(cons), who, reduce_p=self._reduce_p)
        if isinstance(node, Project) and not node.inverse:
            rt = relation_text(node.relation)
            s = self.noun_phrase(node.arg)
            nouns = rt.nouns
            # Inside a sentence, "the birthplace of X" rather than "the city where X was
            # born": a verb after the subject would trail behind the clauses around it.
            ending = tuple(n for n in nouns if n.endswith("{s}"))
            noun = rt.role or object_noun(node.relation)
            nouns = ending or (f"the {noun} of {{s}}",)
            return self._pick(nouns).format(s=s)
        if isinstance(node, IsA):
            return indefinite(node.kind)
        return f"the one {self.clause(node, 'that')}"

    def introduce(self, kind: str, cons: Sequence[Node]) -> str:
        """Say, in a sentence of its own, what is known of an intermediate entity; return
        the phrase that refers to it afterwards."""
        self._kinds.add(kind)
        parts = self.parts(cons)
        subject = indefinite(kind)
        verbs = any(p.startswith(_WHO + " ") for p in parts)  # else a statement says "There is"
        plain = ["plain", "one", "suppose"] if self._clean_parts(parts) and verbs else []
        # Two introductions in a row never open the same way ("Take a ... . Take a ...").
        options = [f for f in (*plain, "there", "consider", "take", "start") if f != self._frame]
        frame = self._pick(options)
        self._frame = frame
        if frame in ("plain", "one", "suppose"):
            start = {"plain": subject, "one": f"one {kind}", "suppose": f"suppose {subject}"}
            sentence = self.statement(start[frame], parts, kind)
        else:
            who = "who" if kind == "person" else "that"
            lead = {"there": "There is", "consider": "Consider", "take": "Take"}.get(
                frame, "Start with"
            )
            sentence = f"{lead} {self.described(subject, parts, who, reduce=False)}"
        self._intros.append(tidy(sentence) + ".")
        return f"this {kind}"

    # ---- clauses -----------------------------------------------------------------------
    def parts(self, members: Sequence[Node]) -> list[str]:
        """Marked clauses (relative pronoun left open) of an entity's constraints, in the
        order they will be said: verb clauses, then "whose" ones, a deep inline description
        last so it cannot swallow a later clause."""
        texts = [(m, self.clause(m, _WHO)) for m in members]
        rank = {int(i): r for r, i in enumerate(self.rng.permutation(len(texts)))}

        def key(i: int) -> tuple[int, int, int]:
            m, t = texts[i]
            deep = int(hops(m) >= 2 and not _REF_END.search(unmark(t)))
            return (deep, int(not t.startswith(_WHO + " ")), rank[i])

        return [texts[i][1] for i in sorted(range(len(texts)), key=key)]

    @staticmethod
    def _clean_parts(parts: Sequence[str]) -> bool:
        """Whether every clause is a verb clause or a plain "whose" one."""
        for p in parts:
            if p.startswith(_WHO + " "):
                continue
            if p.startswith("whose ") and _WHO not in p and " or whose " not in p:
                continue
            return False
        return bool(parts)

    def described(
        self, head: str, parts: Sequence[str], who: str, reduce: bool = True, reduce_p: float = 0.5
    ) -> str:
        """ "the person born in the 1860s who died in X and studied at Y, whose ... and
        who ...": verb clauses share one pronoun."""
        segments: list[list[str] | str] = []
        for p in parts:
            if p.startswith(_WHO + " ") and _WHO not in p[2:]:
                last = segments[-1] if segments else None
                if isinstance(last, list):
                    last.append(p[2:])
                else:
                    segments.append([p[2:]])
            else:
                segments.append(p)
        pre = ""
        first = segments[0] if segments else None
        if reduce and isinstance(first, list) and _participle(first[0]) and self._chance(reduce_p):
            pre = " " + first[0].split(" ", 1)[1]
            first.pop(0)
            if not first:
                segments.pop(0)
        said: list[str] = []
        for seg in segments:
            if isinstance(seg, list):
                said.append(f"{who} {_join(seg)}")
            elif said and _plain_whose(seg) and _plain_whose(said[-1]) and " and " not in said[-1]:
                said[-1] += " and " + seg[len("whose ") :]  # "whose genre is X and language is Y"
            else:
                said.append(seg.replace(_WHO, who))
        if not said:
            return head + pre
        glue = ", and " if len(said) == 2 and " and " in said[0] else " and "
        rest = said[0] if len(said) == 1 else ", ".join(said[:-1]) + glue + said[-1]
        return f"{head}{pre} {rest}"

    def statement(self, subject: str, parts: Sequence[str], kind: str | None) -> str:
        """ "A city was founded in X and covers Y, and its mayor is Z": clean clauses as a
        main clause of ``subject``."""
        vps = [p[2:].replace(_WHO + " ", "") for p in parts if p.startswith(_WHO + " ")]
        poss = [p[len("whose ") :] for p in parts if not p.startswith(_WHO + " ")]
        pron = "their" if kind == "person" else "its"
        if not vps:
            who = "who" if kind == "person" else "that"
            return f"There is {self.described(subject, parts, who, reduce=False)}"
        text = f"{subject} {_join(vps)}"
        if poss:
            glue = ", and " if len(vps) > 1 else " and "
            text += glue + _join([f"{pron} {p}" for p in poss])
        return text

    def clause(self, node: Node, who: str) -> str:
        """A marked relative clause saying that the described entity is in ``node``'s set."""
        if isinstance(node, Range):
            bare, at = self.value_words(node)
            t = self._pick(relation_text(node.relation).clauses)
            return t.format(who=who, o=bare, o_at=at)
        if isinstance(node, Project):
            rt = relation_text(node.relation)
            if node.inverse:
                inner = _unwrap(node.arg)
                if (
                    isinstance(inner, Project)
                    and not inner.inverse
                    and inner.relation == node.relation
                ):
                    return self.shared(node.relation, inner.arg, who)
                if isinstance(inner, Value):
                    bare, at = self.value_words(inner)
                else:
                    bare = at = self.noun_phrase(inner)
                return self._pick(rt.clauses).format(who=who, o=bare, o_at=at)
            s = self.noun_phrase(node.arg)
            if rt.fwd:
                return self._pick(rt.fwd).format(who=who, s=s)
            return f"{who} is " + self._pick(rt.nouns).format(s=s)
        if isinstance(node, Intersect):
            return self.described("", self.parts(constraints(node)), who, reduce=False).strip()
        if isinstance(node, Not):
            return self.negated(node.arg, who)
        if isinstance(node, Union):
            return self.union_clause(node, who)
        if isinstance(node, Same):
            return self.same_clause(node, who)
        return f"{who} is {self.noun_phrase(node)}"

    def shared(self, relation: str, other: Node, who: str) -> str:
        """ "who was born in the same city as X" or "that has the same mayor as X" (not
        "whose mayor is the mayor of X"); "who shares an award with X" when the relation
        has several objects."""
        rt = relation_text(relation)
        s = self.noun_phrase(other)
        noun = rt.role or object_noun(relation)
        if not self.functional(relation):
            return f"{who} shares {indefinite(noun)} with {s}"
        verbs = [t for t in rt.clauses if t.startswith("{who} ") and "{o}" in t]
        kind = self.object_kind(relation)
        if verbs and kind and self._chance(0.7):
            same = f"the same {kind} as {s}"
            return self._pick(verbs).format(who=who, o=same, o_at=same)
        return f"{who} has the same {noun} as {s}"

    def object_kind(self, relation: str) -> str | None:
        """The commonest kind of the entities ``relation`` points to (ties by name)."""
        return self.g.object_kind(relation)

    def negated(self, node: Node, who: str) -> str:
        """ "who was not born in X": a negated one-hop constraint."""
        if isinstance(node, Project) and node.inverse:
            options = negated_clauses(node.relation)
            if options:
                if isinstance(node.arg, Value):
                    bare, at = self.value_words(node.arg)
                else:
                    bare = at = self.noun_phrase(node.arg)
                return self._pick(options).format(who=who, o=bare, o_at=at)
        return f"{who} is not {self.noun_phrase(node)}"

    def union_clause(self, node: Union, who: str) -> str:
        """ "who was born in X or in Y" (one relation) or "who ... or who ..."."""
        args = node.args
        rels = {a.relation for a in args if isinstance(a, Project) and a.inverse}
        simple = all(isinstance(a, Project) and isinstance(a.arg, Entity) for a in args)
        if len(rels) == 1 and simple and len(args) >= 2:
            (rel,) = rels
            names = [self.noun_phrase(a.arg) for a in args if isinstance(a, Project)]
            t = self._pick(relation_text(rel).clauses)
            joined = _join(names, "or")
            return t.format(who=who, o=joined, o_at=joined)
        ranges = [a for a in args if isinstance(a, Range)]
        if len(ranges) == len(args) and len({a.relation for a in ranges}) == 1:
            joined = _join([self._range_words(a) for a in ranges], "or")
            t = self._pick(relation_text(ranges[0].relation).clauses)
            return t.format(who=who, o=joined, o_at=joined)
        return _join([self.clause(a, who) for a in args], "or")

    def same_clause(self, node: Same, who: str) -> str:
        """ "who was born and died in the same city" / "whose birthplace is also its mayor"."""
        pair = {node.rel_a, node.rel_b}
        if pair == {"born_in", "died_in"}:
            return self._pick(
                [f"{who} was born and died in the same city", f"{who} died in their birth city"]
            )
        a, b = relation_text(node.rel_a).role, relation_text(node.rel_b).role
        own = "its" if who == "that" else "their"
        return f"whose {a} is also {own} {b}"

    # ---- questions ---------------------------------------------------------------------
    def question(self, root: Node, rng: np.random.Generator | None = None) -> str:
        """The question for a root node (``rng``: the choices' source from now on)."""
        if rng is not None:
            self.rng = rng
        self._intros, self._kinds, self._allow_intro, self._frame = [], set(), True, ""
        text = tidy(self._question(root))
        full = " ".join([*self._intros, text])
        self.kept = list(dict.fromkeys(m for m in _MARKED.findall(full) if m))
        return unmark(full)

    def _question(self, root: Node) -> str:
        if isinstance(root, Count):
            return self.count_question(root)
        if isinstance(root, Extreme):
            return self.extreme_question(root)
        if isinstance(root, Arith):
            return self.arith_question(root)
        if isinstance(root, Ask):
            cand = root.candidate
            name = (
                self.g.titles[cand.doc_id] if isinstance(cand, Entity) else self.g.surface(cand.key)
            )
            return f"Is {_mark(name)} {self.noun_phrase(root.arg)}?"
        if isinstance(root, Project) and not root.inverse:
            return self.literal_question(root)
        return self.entity_question(root)

    def subject(self, node: Node) -> str:
        """The subject of a literal question: a long description goes first, in a
        sentence of its own, so the question's verb does not trail it."""
        kind = kind_of(node)
        if kind and kind not in self._kinds and clause_count(node) >= 1:
            return self.introduce(kind, constraints(node))
        return self.noun_phrase(node)

    def literal_question(self, root: Project) -> str:
        """ "When was X born?"; for a described subject "A person ... . When was this
        person born?" or "What is the birth date of the person who ...?"."""
        rt = relation_text(root.relation)
        trailing = [a for a in rt.asks if not a.endswith("{s}?")]
        ending = [a for a in rt.asks if a.endswith("{s}?")]
        ending += ["What is " + n + "?" for n in rt.nouns if n.endswith("{s}")]
        arg = root.arg
        kind = kind_of(arg)
        described = isinstance(arg, Intersect) and clause_count(arg) >= 1
        cons = constraints(arg)
        # "One city is the place of death of this person." says nothing: keep such a noun.
        only_noun = len(cons) == 1 and isinstance(cons[0], Project) and not cons[0].inverse
        free = bool(kind) and kind not in self._kinds and not only_noun
        if described and free and kind and (trailing or self._chance(0.6)):
            s = self.introduce(kind, constraints(arg))
            options = [*rt.asks] or ["What is " + n + "?" for n in rt.nouns]
            return self._pick(options).format(s=s)
        if described and ending:
            return self._pick(ending).format(s=self.noun_phrase(arg))
        if rt.asks:
            return self._pick(rt.asks).format(s=self.noun_phrase(arg))
        return "What is " + self._pick(rt.nouns).format(s=self.noun_phrase(arg)) + "?"

    def entity_question(self, root: Node) -> str:
        """ "Name the person who ...", "Which city ...?", "This person ... . Who is it?"."""
        kind = kind_of(root)
        members = constraints(root)
        if len(members) == 1:
            m = members[0]
            if isinstance(m, Project) and not m.inverse:
                rt = relation_text(m.relation)
                nouns = [n for n in rt.nouns if n.startswith("the ")]
                # Without a verb of its own a forward clause reads "is the ...": ask for the noun.
                if nouns and (not rt.fwd or self._chance(0.5)):
                    noun = self._pick(nouns).format(s=self.noun_phrase(m.arg))
                    return ("Who is " if kind == "person" else "What is ") + noun + "?"
        who = "who" if kind == "person" else "that"
        parts = self.parts(members)
        noun = kind or "one"
        person = kind == "person"
        frames = ["name", "which", "whatis", "identify"]
        # "This person ..." only when no sentence before has its own "this ...".
        if self._clean_parts(parts) and len(parts) >= 2 and not self._intros:
            frames.append("this")
        frame = self._pick(frames)
        rel = self.described(f"the {noun}", parts, who)
        verbs_only = all(p.startswith(_WHO + " ") and _WHO not in p[2:] for p in parts)
        if frame == "which":
            bare = self.described("", parts, who, reduce=False).strip()
            if verbs_only and bare.startswith(who + " "):
                verb = bare[len(who) + 1 :]
                if person:
                    return self._pick([f"Who {verb}?", f"Which person {verb}?"])
                return f"{self._pick(['Which', 'What'])} {noun} {verb}?"
            frame = "whatis"
        if frame == "identify":
            return f"{self._pick(['Identify', 'Find'])} {rel}."
        if frame == "whatis":
            return f"Who is {rel}?" if person else f"{self._pick(['What', 'Which'])} is {rel}?"
        return f"Name {rel}."

    def count_question(self, root: Count) -> str:
        """ "How many novels have X as their author?" and its variants."""
        kind = kind_of(root.arg) or "entrie"
        (member,) = constraints(root.arg)
        assert isinstance(member, Project) and member.inverse
        role = relation_text(member.relation).role or measure_noun(member.relation)
        many = plural(kind)
        x = self.noun_phrase(member.arg)
        return self._pick(
            [
                f"How many {many} have {x} as their {role}?",
                f"For how many {many} is {x} the {role}?",
                f"Count the {many} whose {role} is {x}.",
            ]
        )

    def extreme_question(self, root: Extreme) -> str:
        """ "Who is the oldest person who ...?" / "Which has the largest population: A, B
        or C?"."""
        noun = measure_noun(root.relation)
        is_date = self.g.rel_types.get(root.relation) == "date"
        if is_date:
            adj = "latest" if root.most else "earliest"
        else:
            adj = "largest" if root.most else "smallest"
        if isinstance(root.arg, Union):
            # Listed candidates stay inline: "this person" could not tell them apart.
            # Short forms ("the city founded in 1200"), several candidates in one sentence.
            self._allow_intro, self._reduce_p = False, 1.0
            names = [self.noun_phrase(a) for a in root.arg.args]
            self._allow_intro, self._reduce_p = True, 0.5
            if any(_RELATIVE.search(unmark(n)) for n in names):  # long items: a list
                listed = "; ".join(names[:-1]) + "; or " + names[-1]
                return f"Which has the {adj} {noun}: {listed}?"
            return self._pick(
                [
                    f"Which has the {adj} {noun}: {_join(names, 'or')}?",
                    f"Of {_join(names)}, which has the {adj} {noun}?",
                ]
            )
        kind = kind_of(root.arg) or "one"
        who = "who" if kind == "person" else "that"
        parts = self.parts(constraints(root.arg))
        rel = self.described("", parts, who, reduce=False).strip()
        if root.relation == "birth_date":
            age = "youngest" if root.most else "oldest"
            return self._pick(
                [f"Who is the {age} person {rel}?", f"Of every person {rel}, who is the {age}?"]
            )
        pronoun = "who" if kind == "person" else "which"
        return self._pick(
            [
                f"Of every {kind} {rel}, {pronoun} has the {adj} {noun}?",
                f"Which {kind} {rel} has the {adj} {noun}?",
            ]
        )

    def arith_question(self, root: Arith) -> str:
        """Years between two dates of one entity, or the sum of two numbers."""
        assert isinstance(root.left, Project) and isinstance(root.right, Project)
        left, right = root.left, root.right
        if root.op == "sub":
            a, b = year_noun(right.relation), year_noun(left.relation)
            if left.arg == right.arg:
                s = self.subject(left.arg)
                if a.endswith(" of {s}") and b.endswith(" of {s}"):
                    both = _join([a[: -len(" of {s}")], b[: -len(" of {s}")]])
                    return f"How many years separate {both} of {s}?"
                return f"How many years separate {a.format(s=s)} and {b.format(s=s)}?"
            first, second = (
                a.format(s=self.noun_phrase(right.arg)),
                b.format(s=self.noun_phrase(left.arg)),
            )
            return f"How many years separate {first} and {second}?"
        noun = relation_text(left.relation).nouns[0]
        both = f"{self.noun_phrase(left.arg)} and {self.noun_phrase(right.arg)}"
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


_RELATIVE = re.compile(r"\b(?:who|whose|that|where)\b")
_REF_END = re.compile(r"\bthis \w+$")
# Where a relation's noun ends: a word that starts its complement, or the slot itself
# ("the first person to climb {s}": no word boundary follows a brace).
_NOUN_END = re.compile(r" (?:(?:of|received by|on|from|linked|that|where)\b|\{s\})")


def object_noun(relation: str) -> str:
    """ "award" from "an award received by {s}", "birthplace" from "the birthplace of {s}"."""
    noun = relation_text(relation).nouns[0]
    noun = noun.removeprefix("the ").removeprefix("a ").removeprefix("an ")
    return _NOUN_END.split(noun, maxsplit=1)[0].strip() or relation.replace("_", " ")


def _plain_whose(text: str) -> bool:
    return text.startswith("whose ") and _WHO not in text and " or " not in text


def _unwrap(node: Node) -> Node:
    """The forward projection an intersection of one such constraint stands for."""
    if isinstance(node, Intersect):
        cons = constraints(node)
        if len(cons) == 1 and isinstance(cons[0], Project) and not cons[0].inverse:
            return cons[0]
    return node


def _participle(vp: str) -> bool:
    """Whether a verb clause is "was/is <participle> ..." (so "born in X" can stand
    alone)."""
    words = vp.split(" ")
    return (
        len(words) >= 3
        and words[0] in ("was", "is")
        and words[1].endswith(_PARTICIPLE_END)
        and words[1] != "not"
    )


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
