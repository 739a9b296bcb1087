"""Wikitext building blocks: the article builder, links, dates and numbers.

A fact sentence is built twice from one template, once as wikitext (links) and
once as the plain text a reader sees (anchors only); the plain form is what the
fact records. Refs and ``{{citation needed}}`` only ever follow a sentence's
final period, so they never sit inside a recorded sentence.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TypedDict

from wikigym.corpora.world.naming import Naming
from wikigym.corpora.world.schema import ENTITY_TYPES

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip

Piece = tuple[str, str]
"""(wikitext, plain text) of a piece of a sentence."""

_REF_TITLES = ("A History of {s}", "The {s} Yearbook", "Annals of {s}", "{s}: A Survey",
               "Notes on {s}", "Records of {s}")  # fmt: skip


@dataclass(frozen=True)
class World:
    """Everything an article renderer reads: columns, names, inverse indexes.

    Attributes:
        seed: World seed (per-article streams derive from it).
        counts: Entities per type.
        offsets: Global id of each type's first entity.
        cols: type -> column -> list (see :mod:`plan`).
        naming: Titles, names, aliases, disambiguation pages.
        inverse: name -> (start, items) CSR groupings (e.g. people by birthplace).
    """

    seed: int
    counts: dict[str, int]
    offsets: dict[str, int]
    cols: dict[str, dict[str, list]]
    naming: Naming
    inverse: dict[str, tuple[list[int], list[int]]]

    def link(self, gid: int) -> Piece:
        """A wikilink to an entity and its anchor."""
        title = self.naming.titles[gid]
        name = self.naming.names[gid]
        if title == name:
            return f"[[{title}]]", name
        return f"[[{title}|{name}]]", name

    def gid(self, etype: str, index: int) -> int:
        """Global id of the ``index``-th entity of ``etype``."""
        return self.offsets[etype] + index

    def members(self, key: str, k: int) -> list[int]:
        """Items grouped under key ``k`` in the inverse index ``key``."""
        start, items = self.inverse[key]
        return items[start[k] : start[k + 1]]


def type_of(offsets: dict[str, int], counts: dict[str, int], gid: int) -> tuple[str, int]:
    """(entity type, local index) of a global id."""
    for t in reversed(ENTITY_TYPES):
        if gid >= offsets[t]:
            return t, gid - offsets[t]
    raise ValueError(f"expected a global entity id >= 0, got {gid}")


def date_text(y: int, m: int, d: int) -> str:
    """Prose date such as ``12 April 1931``."""
    return f"{d} {MONTHS[m - 1]} {y}"


def date_iso(y: int, m: int, d: int) -> str:
    """ISO date ``YYYY-MM-DD``."""
    return f"{y:04d}-{m:02d}-{d:02d}"


def num(n: int) -> str:
    """A number as prose writes it (thousands separators)."""
    return f"{n:,}"


def a_an(word: str) -> str:
    """``word`` with its indefinite article."""
    return ("an " if word[0] in "aeiou" else "a ") + word


def join_pieces(pieces: list[Piece]) -> Piece:
    """``A``, ``A and B``, ``A, B and C`` for wikitext and plain text."""
    if len(pieces) == 1:
        return pieces[0]
    w = ", ".join(p[0] for p in pieces[:-1]) + " and " + pieces[-1][0]
    t = ", ".join(p[1] for p in pieces[:-1]) + " and " + pieces[-1][1]
    return w, t


def fill(template: str, **values: str | Piece) -> Piece:
    """Fill ``template`` twice: with wikitext and with plain values."""
    wiki = {k: v[0] if v.__class__ is tuple else v for k, v in values.items()}
    plain = {k: v[1] if v.__class__ is tuple else v for k, v in values.items()}
    return template.format_map(wiki), template.format_map(plain)


def pick(rng: random.Random, options: tuple[str, ...]) -> str:
    """One of ``options`` (faster than ``rng.choice``, same determinism)."""
    return options[int(rng.random() * len(options))]


class FactRecord(TypedDict):
    """One exact fact of a generated page, as written to ``world.facts.jsonl``."""

    relation: str
    object: str
    value_type: str
    sentence: str
    object_title: str | None


class Article:
    """Collects one article: infobox, sections of sentences, facts, categories.

    Args:
        rng: The article's own stream.
        infobox: Infobox template name (``person``, ``settlement``, ...).
        name: Value of the infobox ``name`` field.
        subject: Subject name used in reference titles.
    """

    __slots__ = ("box", "cats", "cur", "facts", "has_ref", "rng", "sections", "subject")

    def __init__(self, rng: random.Random, infobox: str, name: str, subject: str) -> None:
        self.rng = rng
        self.box = [f"{{{{Infobox {infobox}", f"| name = {name}"]
        self.cur: list[str] = []
        self.sections: list[tuple[str | None, list[str]]] = [(None, self.cur)]
        self.facts: list[FactRecord] = []
        self.cats: list[str] = []
        self.has_ref = False
        self.subject = subject

    def field(self, key: str, wiki: str) -> None:
        """Add an infobox line ``| key = wiki``."""
        self.box.append(f"| {key} = {wiki}")

    def section(self, heading: str) -> None:
        """Start a new ``== heading ==`` section."""
        self.cur = []
        self.sections.append((heading, self.cur))

    def _tail(self) -> str:
        r = self.rng.random()
        if r < 0.05:
            self.has_ref = True
            title = pick(self.rng, _REF_TITLES).format(s=self.subject)
            year = 1950 + self.rng.randrange(70)
            return f"<ref>{{{{cite book |title={title} |year={year}}}}}</ref>"
        if r < 0.07:
            return "{{citation needed}}"
        return ""

    def fact(self, piece: Piece, *facts: tuple[str, str, str, str | None]) -> None:
        """Add a sentence stating ``facts`` (relation, object, value type, object title)."""
        wiki, plain = piece
        self.cur.append(wiki + self._tail())
        for relation, obj, value_type, obj_title in facts:
            self.facts.append(
                {
                    "relation": relation,
                    "object": obj,
                    "value_type": value_type,
                    "sentence": plain,
                    "object_title": obj_title,
                }
            )

    def say(self, sentence: str) -> None:
        """Add a sentence that states no fact."""
        self.cur.append(sentence + self._tail())

    def raw(self, block: str) -> None:
        """Add a block (a list) as its own paragraph."""
        self.cur.append("\n" + block + "\n")

    def category(self, name: str) -> None:
        """Add ``[[Category:name]]``."""
        self.cats.append(name)

    def render(self) -> str:
        """The article's wikitext."""
        out = ["\n".join(self.box), "\n}}\n"]
        for heading, sentences in self.sections:
            if not sentences:
                continue
            if heading is not None:
                out.append(f"\n== {heading} ==\n")
            paras: list[str] = []
            para: list[str] = []
            for s in sentences:
                if s.startswith("\n"):  # a list block: its own paragraph
                    if para:
                        paras.append(" ".join(para))
                        para = []
                    paras.append(s.strip("\n"))
                    continue
                para.append(s)
                if len(para) == 4:
                    paras.append(" ".join(para))
                    para = []
            if para:
                paras.append(" ".join(para))
            out.append("\n\n".join(paras))
            out.append("\n")
        if self.has_ref:
            out.append("\n== References ==\n{{reflist}}\n")
        out.append("\n")
        out.extend(f"[[Category:{c}]]\n" for c in self.cats)
        return "".join(out)
