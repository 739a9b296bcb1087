"""Typed facts from a page's categories, through a versioned pattern vocabulary.

YAGO's category heuristics are the anchor (yago-naga/yago3, ``data/_categoryPatterns.ttl``:
``(\\d+) births`` -> wasBornOnDate, ``Cities in (.+)`` -> isLocatedIn, ``(.+) winners`` ->
hasWonPrize, and the "conceptual" head noun of a category as its class). The patterns live
in ``data/category_patterns.json``, per language, and read words through the lexicon
(:mod:`wikigym.corpora.lexicon`): ``19th-century French painters`` gives occupation
*painter*, nationality *France*, active in the *19th century*, instance of *person*;
``Rivers of France`` gives instance of *river*, located in *France*; ``1835 births`` gives a
birth year.

A category is matched whole against the language's patterns in order; the first pattern
that matches and yields a fact wins. A fact keeps the category that states it (the
category line, ``Category:NAME``) and the pattern's id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from wikigym.corpora.infobox_values import parse_date
from wikigym.corpora.lexicon import Lexicon, lexicon
from wikigym.corpora.titles import normalize_title
from wikigym.corpora.vocabulary import vocabulary

PLACE = "@place"  # located_in for a country, situated_in for any other place
NATIONALITY = "@nationality"  # nationality when the place is a country of the lexicon
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}
# "Illinois Republicans": the party of the United States a member-of category names.
_US_PARTIES = {
    "Republicans": "Republican Party (United States)",
    "Democrats": "Democratic Party (United States)",
    "Whigs": "Whig Party (United States)",
}
_MAX_TITLE = 120


@dataclass(frozen=True, slots=True)
class CategoryFact:
    """A fact a category states.

    Attributes:
        relation: Relation of the vocabulary.
        object: ISO year, canonical word or entity title.
        value_type: ``entity``, ``date``, ``number`` or ``text``.
        object_title: Title of the entity, for entity objects.
        category: The category name (without namespace).
        pattern: Id of the pattern that read it.
    """

    relation: str
    object: str
    value_type: str
    object_title: str | None
    category: str
    pattern: str


@dataclass(frozen=True, slots=True)
class _Pattern:
    id: str
    regex: re.Pattern[str]
    facts: tuple[tuple[str, str], ...]


def roman(text: str) -> int | None:
    """``XIX`` -> 19 (None for anything that is not a Roman numeral)."""
    total, prev = 0, 0
    for ch in reversed(text.upper()):
        v = _ROMAN.get(ch)
        if v is None:
            return None
        total += -v if v < prev else v
        prev = max(prev, v)
    return total or None


def _to_roman(n: int) -> str:
    out = ""
    for v, s in ((100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V")):
        while n >= v:
            out, n = out + s, n - v
    return out + ("IV" if n == 4 else "I" * n)


class CategoryVocabulary:
    """The loaded patterns; use :func:`category_vocabulary`."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.version: str = data["version"]
        self.century: dict[str, str] = data["century"]
        self._raw: dict[str, list[dict[str, Any]]] = data["languages"]
        relations = vocabulary().relations
        for language, patterns in self._raw.items():
            for p in patterns:
                for relation, _ in p["facts"]:
                    if relation not in (PLACE, NATIONALITY) and relation not in relations:
                        raise ValueError(
                            f"category pattern {language}/{p['id']}: relation {relation!r} "
                            "is not in the relation vocabulary"
                        )
        self._compiled: dict[str, tuple[_Pattern, ...]] = {}

    def languages(self) -> tuple[str, ...]:
        return tuple(sorted(self._raw))

    def patterns(self, language: str, lex: Lexicon) -> tuple[_Pattern, ...]:
        """The compiled patterns of ``language`` (built on first use)."""
        got = self._compiled.get(language)
        if got is None:
            subs = {
                "{NAT}": lex.alternation("nationalities"),
                "{NATN}": lex.alternation("nationality_nouns"),
                "{OCC}": lex.alternation("occupations"),
                "{CLS}": lex.alternation("classes"),
            }
            out = []
            for p in self._raw.get(language, []):
                text = p["match"]
                for key, alt in subs.items():
                    text = text.replace(key, f"(?i:{alt})")
                out.append(_Pattern(p["id"], re.compile(text), tuple(map(tuple, p["facts"]))))
            got = tuple(out)
            self._compiled[language] = got
        return got

    def century_text(self, language: str, n: int) -> str:
        form = self.century.get(language, "{n}th century")
        if language == "en":
            suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
            return f"{n}{suffix} century"
        return form.format(n=n, roman=_to_roman(n))


@lru_cache(maxsize=1)
def category_vocabulary() -> CategoryVocabulary:
    """The packaged category patterns (read once, on first use)."""
    text = (
        resources.files("wikigym.corpora")
        .joinpath("data/category_patterns.json")
        .read_text(encoding="utf-8")
    )
    return CategoryVocabulary(json.loads(text))


def _entity(text: str | None, language: str) -> str | None:
    if not text:
        return None
    text = text.strip()
    if language == "en" and text[:4].lower() == "the ":
        text = text[4:]
    title = normalize_title(text)
    if not title or len(title) > _MAX_TITLE or title.count("(") != title.count(")"):
        return None
    return title


def _values(
    source: str, m: re.Match[str], lex: Lexicon, cats: CategoryVocabulary, language: str
) -> list[tuple[str, str | None]]:
    """The ``(object, entity title)`` values of one fact source in a match."""
    if source.startswith("="):
        return [(source[1:], None)]
    groups = m.groupdict()
    raw = groups.get(source)
    if not raw:
        return []
    raw = raw.strip()
    if source == "year":
        iso = parse_date(raw, language) if raw.isdigit() and len(raw) >= 3 else None
        return [(iso, None)] if iso and len(iso) == 4 else []
    if source == "nationality":
        country = lex.nationality(raw)
        return [(country, country)] if country else []
    if source == "occupation":
        parts = re.split(r" and | und | et | y | e ", raw) if " " in raw else [raw]
        found = [lex.occupation(p) for p in parts]
        return [(o, None) for o in dict.fromkeys(found) if o]
    if source == "class":
        found_cls = lex.cls(raw)
        return [(found_cls, None)] if found_cls else []
    if source == "century":
        n = int(raw) if raw.isdigit() else roman(raw)
        return [(cats.century_text(language, n), None)] if n and 1 <= n <= 21 else []
    if source == "medal":  # "Olympic gold medalists": the medal's article title
        medal = f"Olympic {raw} medal"
        return [(medal, medal)] if raw in ("gold", "silver", "bronze") else []
    if source == "party":
        party = _US_PARTIES.get(raw)
        return [(party, party)] if party else []
    if source == "cause":
        return [(raw[:1].upper() + raw[1:], None)] if len(raw) <= 60 else []
    if source == "office":
        position = groups.get("position") or ""
        singular = re.sub(r"(?<=[a-z])s\b", "", position, count=0)
        title = _entity(raw.replace(position, singular, 1), language)
        return [(title, title)] if title else []
    title = _entity(raw, language)
    return [(title, title)] if title else []


_LOWER_NOUNS = frozenset({"en", "fr", "es", "it"})


def _capitalised_inside(m: re.Match[str]) -> bool:
    for group in ("class", "occupation"):
        at = m.start(group) if m.groupdict().get(group) else -1
        if at > 0 and m.string[at].isupper():
            return True
    return False


def category_facts(categories: Sequence[str], language: str | None) -> list[CategoryFact]:
    """The typed facts that ``categories`` (names without namespace) state.

    Args:
        categories: The page's categories, in order.
        language: The wiki's language; a language without patterns gives no facts.

    Returns:
        Facts in category order, each (relation, object) once (the first category that
        states it keeps it).
    """
    lang = (language or "en").split("-")[0].lower()
    lex = lexicon(lang)
    if lex is None or not categories:
        return []
    cats = category_vocabulary()
    patterns = cats.patterns(lang, lex)
    if not patterns:
        return []
    relations = vocabulary().relations
    # Where nouns are lower case, a class or occupation word capitalised inside a category
    # is part of a name ("Southern United States" names no states).
    cased = lang in _LOWER_NOUNS
    out: dict[tuple[str, str], CategoryFact] = {}
    for category in categories:
        name = category.strip()
        if not name or len(name) > 200:
            continue
        for p in patterns:
            m = p.regex.fullmatch(name)
            if m is None or (cased and _capitalised_inside(m)):
                continue
            made = []
            for relation, source in p.facts:
                for obj, title in _values(source, m, lex, cats, lang):
                    rel = relation
                    if rel == PLACE:
                        rel = "located_in" if obj in lex.countries else "situated_in"
                    elif rel == NATIONALITY:  # "... of the United States": a country only
                        if obj not in lex.countries:
                            continue
                        rel = "nationality"
                    vtype = relations[rel].value
                    made.append(CategoryFact(rel, obj, vtype, title, name, p.id))
            if made:
                for f in made:
                    out.setdefault((f.relation, f.object), f)
                break
    return list(out.values())
