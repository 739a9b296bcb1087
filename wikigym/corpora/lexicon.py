"""The words categories and lead sentences are read with, per language (``data/lexicon.json``).

Three word lists per language: *nationalities* (an adjective, demonym or country name ->
the country's article title in that wiki: ``French`` -> ``France``, ``französischer`` ->
``Frankreich``), *occupations* and *classes* (instance-of nouns: ``city``, ``novel``). An
occupation or class is written ``singular`` or ``singular|plural|other forms``: every form
maps to the first (``painters`` -> ``painter``, ``Malerin`` -> ``Maler``); a plural left out
follows the language's regular rule. A class of a wiki not in English ends with
``=english noun`` (``都道府県=prefecture``): the kind its members have in (English) questions.
Lookups are case-insensitive.

The file is versioned (``lexicon/N``); snapshot ids cover the version
(:func:`wikigym.corpora.factsources.vocabulary_versions`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

_VOWELS = "aeiouáéíóúàèìòù"


def _regular_plurals(word: str, language: str) -> list[str]:
    """The regular plural of ``word`` (its last word) in ``language``; none where the
    language has no regular rule we rely on (German, Italian, Japanese: forms are given)."""
    head, _, last = word.rpartition(" ")
    prefix = f"{head} " if head else ""
    if language == "en":
        if last.endswith("man") and not last.endswith("human"):
            return [prefix + last[:-3] + "men"]
        if last == "person":
            return [prefix + "people"]
        if last.endswith("y") and last[-2:-1] not in _VOWELS:
            return [prefix + last[:-1] + "ies"]
        if last.endswith(("s", "x", "ch", "sh", "z")):
            return [prefix + last + "es"]
        return [prefix + last + "s"]
    if language == "fr":
        if last.endswith(("s", "x", "z")):
            return [word]
        if last.endswith(("au", "eu")):
            return [prefix + last + "x"]
        return [prefix + last + "s"]
    if language == "es":
        if last.endswith(tuple(_VOWELS)):
            return [prefix + last + "s"]
        if last.endswith("z"):
            return [prefix + last[:-1] + "ces"]
        return [prefix + last + "es"]
    return []


@dataclass(frozen=True)
class Lexicon:
    """The words of one language (see the module doc); use :func:`lexicon`.

    Attributes:
        language: Language code.
        nationalities: Casefolded form -> country title.
        nationality_nouns: Casefolded demonym noun (German ``Franzose``) -> country title.
        occupations: Casefolded form -> canonical occupation (the first form).
        classes: Casefolded form -> canonical class noun.
        plural_occupations: Casefolded plural forms only (English categories name plurals).
        plural_classes: Casefolded plural class forms only.
        countries: The country titles.
        kinds: Canonical class -> English kind noun (classes of English wikis are their own).
    """

    language: str
    nationalities: dict[str, str]
    nationality_nouns: dict[str, str]
    occupations: dict[str, str]
    classes: dict[str, str]
    plural_occupations: frozenset[str]
    plural_classes: frozenset[str]
    countries: frozenset[str]
    kinds: dict[str, str]
    singular_classes: dict[str, str]

    def kind_of(self, cls: str) -> str | None:
        """The English kind noun of a class (``都道府県`` -> ``prefecture``), or None."""
        if self.language == "en":
            return self.classes.get(cls.casefold())
        return self.kinds.get(cls)

    def nationality(self, text: str) -> str | None:
        """The country a nationality word names (``American`` -> ``United States``)."""
        return self.nationalities.get(text.casefold()) or self.nationality_nouns.get(
            text.casefold()
        )

    def occupation(self, text: str) -> str | None:
        """The canonical occupation of a form (``Painters`` -> ``painter``)."""
        return self.occupations.get(text.casefold())

    def cls(self, text: str) -> str | None:
        """The canonical class noun of a form (``cities`` -> ``city``)."""
        return self.classes.get(text.casefold())

    def alternation(self, what: str) -> str:
        """A regex alternation of every form of ``what`` (``nationalities``,
        ``nationality_nouns``, ``occupations``, ``classes``), longest first, for patterns."""
        table: dict[str, str] = getattr(self, what)
        forms = sorted(table, key=lambda f: (-len(f), f))
        return "|".join(re.escape(f) for f in forms) if forms else "(?!)"


def _forms(entries: list[str], language: str) -> tuple[dict[str, str], set[str], dict[str, str]]:
    table: dict[str, str] = {}
    plurals: set[str] = set()
    kinds: dict[str, str] = {}
    for entry in entries:
        entry, _, kind = entry.partition("=")
        forms = [f.strip() for f in entry.split("|") if f.strip()]
        if kind:
            kinds[forms[0]] = kind.strip()
        canonical = forms[0]
        given = forms[1:]
        extra = given if given else _regular_plurals(canonical, language)
        plural = given[0] if given else (extra[0] if extra else None)
        for form in [canonical, *extra]:
            table.setdefault(form.casefold(), canonical)
        if plural is not None:
            plurals.add(plural.casefold())
    return table, plurals, kinds


class _Data:
    def __init__(self, data: dict[str, Any]) -> None:
        self.version: str = data["version"]
        self.languages: dict[str, Lexicon] = {}
        for language, words in data["languages"].items():
            occupations, plural_occ, _ = _forms(words.get("occupations", []), language)
            classes, plural_cls, kinds = _forms(words.get("classes", []), language)
            nats = {k.casefold(): v for k, v in words.get("nationalities", {}).items()}
            nouns = {k.casefold(): v for k, v in words.get("nationality_nouns", {}).items()}
            self.languages[language] = Lexicon(
                language=language,
                nationalities=nats,
                nationality_nouns=nouns,
                occupations=occupations,
                classes=classes,
                plural_occupations=frozenset(plural_occ),
                plural_classes=frozenset(plural_cls),
                countries=frozenset([*nats.values(), *nouns.values()]),
                kinds=kinds,
                singular_classes={form: c for form, c in classes.items() if form == c.casefold()},
            )


@lru_cache(maxsize=1)
def _data() -> _Data:
    text = resources.files("wikigym.corpora").joinpath("data/lexicon.json").read_text("utf-8")
    return _Data(json.loads(text))


def lexicon(language: str | None) -> Lexicon | None:
    """The lexicon of ``language`` (its base code), or None when the file has none."""
    if not language:
        return None
    return _data().languages.get(language.split("-")[0].lower())


def lexicon_version() -> str:
    """The lexicon's version string (``lexicon/N``)."""
    return _data().version


def languages() -> tuple[str, ...]:
    """The languages the lexicon covers, sorted."""
    return tuple(sorted(_data().languages))
