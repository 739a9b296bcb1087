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

What each node says (its noun phrase, its clause, the question it roots) is the node
type's own (:class:`wikigym.synth.node.Node`); this module plans the sentence around them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.templates import relation_text

_OPEN, _CLOSE = "\x01", "\x02"  # around a constant while a question is composed
_WHO = "\x03"  # the relative pronoun, until the sentence decides how to use a clause
_MARKED = re.compile(f"{_OPEN}([^{_CLOSE}]*){_CLOSE}")
_NUMBER = re.compile(r"\d[\d,.]*\d(?:s\b)?|\d(?:s\b)?")
INTRO_MIN_CLAUSES = 2  # clauses of a description that earn it a sentence of its own
INTRO_P = 1.0  # chance such a description is introduced (when its kind is still free)
_PARTICIPLE_END = ("ed", "wn", "en", "rn", "lt", "ld")


class Phrased(Protocol):
    """What the renderer asks of a query node (:class:`wikigym.synth.node.Node`)."""

    def noun_phrase(self, r: Renderer) -> str: ...

    def clause(self, r: Renderer, who: str) -> str: ...

    def question(self, r: Renderer) -> str: ...

    def hops(self) -> int: ...


def mark(text: str) -> str:
    """``text`` marked as a constant (never edited by :func:`tidy`; kept by paraphrases)."""
    return f"{_OPEN}{text}{_CLOSE}"


def mark_numbers(words: str) -> str:
    """Every number of ``words`` marked as a constant."""
    return _NUMBER.sub(lambda m: mark(m.group(0)), words)


def join(parts: Sequence[str], word: str = "and") -> str:
    """ "A, B and C" (or with ``word``)."""
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + f" {word} " + parts[-1]


def who_of(kind: str | None) -> str:
    """The relative pronoun of an entity of ``kind``."""
    return "who" if kind == "person" else "that"


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


def as_indefinite(phrase: str) -> str:
    """ "the birthplace of X" -> "a birthplace of X" (a phrase without "the" is kept)."""
    if phrase.startswith("the "):
        return indefinite(phrase[len("the ") :])
    return phrase


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
        art, opened, word = m.groups()
        right = "an" if wants_an(word) else "a"
        if art[0].isupper():
            right = right.capitalize()
        return f"{right} {opened}{word}"

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


def clean_parts(parts: Sequence[str]) -> bool:
    """Whether every clause is a verb clause or a plain "whose" one."""
    for p in parts:
        if p.startswith(_WHO + " "):
            continue
        if p.startswith("whose ") and _WHO not in p and " or whose " not in p:
            continue
        return False
    return bool(parts)


class Renderer:
    """Renders queries over one graph; choices come from ``rng`` (replaceable per question).

    Attributes:
        kept: The constant phrases of the last question (names, values, range numbers).
        intros: The sentences of the question so far that introduce an entity.
        kinds: The kinds introduced so far ("this city" refers to the one city).
        allow_intro: Whether a long description may become a sentence of its own.
        reduce_p: Chance a description starts with a reduced clause.
        sizes: How many entities of the snapshot each node denotes (the proof's evaluation);
            a description is said definitely ("the person who ...", "this person") only
            when it denotes one (or none: a near-miss's empty description), else
            indefinitely ("a person who ..."). None: every description is taken as one.
        definites: The nodes of the last question said definitely (what the proof checks).
        indefinites: The nodes of the last question said indefinitely.
        unfit: Why the last question cannot be said honestly (a description whose place
            needs a definite one, such as the subject of "When was ... born?", denotes
            several entities); the generator drops such a draft.
    """

    def __init__(self, graph: KnowledgeGraph, rng: np.random.Generator) -> None:
        self.g = graph
        self.rng = rng
        self.kept: list[str] = []
        self.intros: list[str] = []
        self.kinds: set[str] = set()
        self.allow_intro = True
        self.reduce_p = 0.5
        self._frame = ""  # the frame of the last introduction
        self.sizes: Callable[[Any], int] | None = None
        # The nodes themselves (wikigym.synth.node.Node, which this module cannot import).
        self.definites: list[Any] = []
        self.indefinites: list[Any] = []
        self.unfit: list[str] = []

    def definite(self, node: Phrased) -> bool:
        """Whether ``node`` may be said definitely: it denotes at most one entity (recorded in
        :attr:`definites` or :attr:`indefinites`)."""
        ok = self.sizes is None or self.sizes(node) <= 1
        (self.definites if ok else self.indefinites).append(node)
        return ok

    def require_definite(self, node: Phrased, place: str) -> bool:
        """:meth:`definite`, where an indefinite description cannot stand (``place`` says
        where: it is recorded in :attr:`unfit`)."""
        if self.definite(node):
            return True
        self.unfit.append(f"the {place} denotes {self.sizes(node) if self.sizes else '?'} entities")
        return False

    def pick(self, options: Sequence[str]) -> str:
        """One of ``options`` (drawn when there are several)."""
        return options[int(self.rng.integers(len(options)))] if len(options) > 1 else options[0]

    def chance(self, p: float) -> bool:
        """True with probability ``p`` (one draw)."""
        return bool(self.rng.random() < p)

    def functional(self, relation: str) -> bool:
        """Whether every subject of ``relation`` has one object (its noun takes "the")."""
        return self.g.functional(relation)

    def object_kind(self, relation: str) -> str | None:
        """The commonest kind of the entities ``relation`` points to (ties by name)."""
        return self.g.object_kind(relation)

    # ---- dispatch to the nodes ------------------------------------------------------
    def noun_phrase(self, node: Phrased) -> str:
        """A marked noun phrase for a set node (a unique description in practice); a long
        description of a free kind may become a sentence of its own ("this city")."""
        return node.noun_phrase(self)

    def clause(self, node: Phrased, who: str) -> str:
        """A marked relative clause saying that the described entity is in ``node``'s set."""
        return node.clause(self, who)

    def question(self, root: Phrased, rng: np.random.Generator | None = None) -> str:
        """The question for a root node (``rng``: the choices' source from now on)."""
        if rng is not None:
            self.rng = rng
        self.intros, self.kinds, self.allow_intro, self._frame = [], set(), True, ""
        self.definites, self.indefinites, self.unfit = [], [], []
        text = tidy(root.question(self))
        full = " ".join([*self.intros, text])
        self.kept = list(dict.fromkeys(m for m in _MARKED.findall(full) if m))
        return unmark(full)

    # ---- sentences ------------------------------------------------------------------
    def introduce(self, kind: str, cons: Sequence[Phrased]) -> str:
        """Say, in a sentence of its own, what is known of an intermediate entity; return
        the phrase that refers to it afterwards."""
        self.kinds.add(kind)
        parts = self.parts(cons)
        subject = indefinite(kind)
        verbs = any(p.startswith(_WHO + " ") for p in parts)  # else a statement says "There is"
        plain = ["plain", "one", "suppose"] if clean_parts(parts) and verbs else []
        # Two introductions in a row never open the same way ("Take a ... . Take a ...").
        options = [f for f in (*plain, "there", "consider", "take", "start") if f != self._frame]
        frame = self.pick(options)
        self._frame = frame
        if frame in ("plain", "one", "suppose"):
            start = {"plain": subject, "one": f"one {kind}", "suppose": f"suppose {subject}"}
            sentence = self.statement(start[frame], parts, kind)
        else:
            lead = {"there": "There is", "consider": "Consider", "take": "Take"}.get(
                frame, "Start with"
            )
            sentence = f"{lead} {self.described(subject, parts, who_of(kind), reduce=False)}"
        self.intros.append(tidy(sentence) + ".")
        return f"this {kind}"

    def parts(self, members: Sequence[Phrased]) -> list[str]:
        """Marked clauses (relative pronoun left open) of an entity's constraints, in the
        order they will be said: verb clauses, then "whose" ones, a deep inline description
        last so it cannot swallow a later clause."""
        texts = [(m, m.clause(self, _WHO)) for m in members]
        rank = {int(i): r for r, i in enumerate(self.rng.permutation(len(texts)))}

        def key(i: int) -> tuple[int, int, int]:
            m, t = texts[i]
            deep = int(m.hops() >= 2 and not _REF_END.search(unmark(t)))
            return (deep, int(not t.startswith(_WHO + " ")), rank[i])

        return [texts[i][1] for i in sorted(range(len(texts)), key=key)]

    @staticmethod
    def verbs_only(parts: Sequence[str]) -> bool:
        """Whether every clause is a verb clause of its own pronoun ("who died in X")."""
        return all(p.startswith(_WHO + " ") and _WHO not in p[2:] for p in parts)

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
        if reduce and isinstance(first, list) and _participle(first[0]) and self.chance(reduce_p):
            pre = " " + first[0].split(" ", 1)[1]
            first.pop(0)
            if not first:
                segments.pop(0)
        said: list[str] = []
        for seg in segments:
            if isinstance(seg, list):
                said.append(f"{who} {join(seg)}")
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
            return f"There is {self.described(subject, parts, who_of(kind), reduce=False)}"
        text = f"{subject} {join(vps)}"
        if poss:
            glue = ", and " if len(vps) > 1 else " and "
            text += glue + join([f"{pron} {p}" for p in poss])
        return text

    def shared(self, relation: str, other: Phrased, who: str) -> str:
        """ "who was born in the same city as X" or "that has the same mayor as X" (not
        "whose mayor is the mayor of X"); "who shares an award with X" when the relation
        has several objects."""
        rt = relation_text(relation)
        s = other.noun_phrase(self)
        noun = rt.role or object_noun(relation)
        if not self.functional(relation):
            return f"{who} shares {indefinite(noun)} with {s}"
        verbs = [t for t in rt.clauses if t.startswith("{who} ") and "{o}" in t]
        kind = self.object_kind(relation)
        if verbs and kind and self.chance(0.7):
            same = f"the same {kind} as {s}"
            return self.pick(verbs).format(who=who, o=same, o_at=same)
        return f"{who} has the same {noun} as {s}"

    @staticmethod
    def rubric_text(relation: str, subject: str, obj: str, obj_at: str) -> str:
        """A declarative statement of one fact, e.g. ``[E1] was born in Gela``."""
        t = relation_text(relation).clauses[0]
        if t.startswith("{who} "):
            return subject + " " + t[len("{who} ") :].format(o=obj, o_at=obj_at)
        if t.startswith("whose "):
            return f"{subject}'s " + t[len("whose ") :].format(o=obj, o_at=obj_at)
        return f"{subject} {relation.replace('_', ' ')} {obj}"


RELATIVE = re.compile(r"\b(?:who|whose|that|where)\b")
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


def measure_noun(relation: str) -> str:
    """ "population" from "the population of {s}"; "founding date" from "the founding date
    of {s}"."""
    noun = relation_text(relation).nouns[0]
    noun = noun.removeprefix("the ").removeprefix("a ").removeprefix("an ")
    return noun.replace(" of {s}", "").replace("{s}", "it").strip()


def year_noun(relation: str) -> str:
    """ "the birth year of {s}" from "the birth date of {s}": years are what is compared."""
    return re.sub(r"\bdate\b", "year", relation_text(relation).nouns[0])
