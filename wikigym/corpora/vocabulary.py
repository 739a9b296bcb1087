"""The relation vocabulary of real infoboxes: key aliases -> typed relations.

The table is data (``data/infobox_vocabulary.json``, versioned): for each relation its value
type (``entity``, ``date``, ``number``, ``text``), the key spellings that carry it across
templates and languages in order of preference, the infobox kinds it applies to, the unit
its numbers are stored in, whether a value is a list, and the question phrasings of the
relations the generated world does not define (shared relations, such as ``born_in`` or
``director``, keep the world's phrasings: one home per phrasing, in
:mod:`wikigym.synth.templates`).

:func:`type_infobox` turns a page's infobox fields into facts: typed ones (``typed=True``,
relation from the table, value parsed by :mod:`wikigym.corpora.infobox_values`) and, for
every other field, an untyped fact under the raw key, kept for ``corpus sql`` but never used
to phrase a question. On one page a relation takes its value from the first of its keys the
infobox has (``population_total`` before ``population_estimate``), so two keys of one
relation never give two answers.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from wikigym.corpora.infobox_values import (
    clean_item,
    format_value,
    item_spans,
    parse_date,
    parse_number,
)
from wikigym.corpora.records import InfoboxField

VALUE_TYPES = ("entity", "date", "number", "text")
# Values of one field at most (every value is kept; this only bounds a broken field).
MAX_LIST_ITEMS = 64
# An unlinked list item names an entity when it reads as a name: no digits-only or
# sentence-length text ("1983", "see below ...").
_NAME = re.compile(r"^(?=.*[^\W\d_])[^\n]{1,80}$")
_DATE_KEY = re.compile(r"(date|year|born|died|founded|established|formed|opened|年|日)")
_YEAR_ONLY = re.compile(r"^\d{4}$")
_NUMBER_ONLY = re.compile(r"^-?\d{1,3}(,\d{3})+(\.\d+)?$|^-?\d+(\.\d+)?$")
_ISO_DATE = re.compile(r"^-?\d{1,4}-\d{2}(-\d{2})?$")


@dataclass(frozen=True, slots=True)
class KeyAlias:
    """One spelling of an infobox key, and the unit its values are written in."""

    key: str
    unit: str | None = None


@dataclass(frozen=True, slots=True)
class RelationSpec:
    """One relation of the vocabulary (see the module doc)."""

    name: str
    value: str
    aliases: tuple[KeyAlias, ...]
    kinds: frozenset[str]
    unit: str | None
    is_list: bool
    phrasing: dict[str, Any] | None
    object_kind: str | None = None  # the kind of an entity value without a page


@dataclass(frozen=True, slots=True)
class TypedFact:
    """A fact from an infobox field.

    Attributes:
        relation: Vocabulary relation (typed) or the raw key (untyped).
        object: ISO date, plain number, entity title or text (typed); the value (untyped).
        value_type: ``entity``, ``date``, ``number`` or ``text``.
        object_title: Title of the linked entity, for entity objects.
        key: The infobox key it came from.
        value_text: The value as the infobox shows it (plain text).
        typed: Whether the vocabulary typed it.
    """

    relation: str
    object: str
    value_type: str
    object_title: str | None
    key: str
    value_text: str
    typed: bool


def normalize_key(key: str) -> str:
    """``Birth Place`` / ``birth-place`` -> ``birth_place``."""
    return "_".join(key.strip().lower().replace("-", "_").split())


class Vocabulary:
    """The loaded table; use :func:`vocabulary`."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.version: str = data["version"]
        self.ignored = frozenset(normalize_key(k) for k in data.get("ignored", []))
        self.kind_of_type: dict[str, str] = {}
        for group, types in data["kinds"].items():
            for t in types:
                self.kind_of_type.setdefault(t.lower(), group)
        self.kinds = frozenset(data["kinds"])
        self.relations: dict[str, RelationSpec] = {}
        # key -> [(relation, alias rank, alias)], in table order
        self._by_key: dict[str, list[tuple[RelationSpec, int, KeyAlias]]] = {}
        for name, spec in data["relations"].items():
            aliases = tuple(
                KeyAlias(normalize_key(a))
                if isinstance(a, str)
                else KeyAlias(normalize_key(a["key"]), a.get("unit"))
                for a in spec["keys"]
            )
            rel = RelationSpec(
                name=name,
                value=spec["value"],
                aliases=aliases,
                kinds=frozenset(spec.get("kinds", ())),
                unit=spec.get("unit"),
                is_list=bool(spec.get("list", False)),
                phrasing=spec.get("phrasing"),
                object_kind=spec.get("object_kind"),
            )
            if rel.value not in VALUE_TYPES:
                raise ValueError(f"vocabulary relation {name}: unknown value type {rel.value!r}")
            unknown = rel.kinds - self.kinds
            if unknown:
                raise ValueError(f"vocabulary relation {name}: unknown kinds {sorted(unknown)}")
            self.relations[name] = rel
            for rank, alias in enumerate(aliases):
                self._by_key.setdefault(alias.key, []).append((rel, rank, alias))
        for key, claims in self._by_key.items():
            for i, (a, _, _) in enumerate(claims):
                for b, _, _ in claims[i + 1 :]:
                    if not a.kinds or not b.kinds or a.kinds & b.kinds:
                        raise ValueError(
                            f"vocabulary: key {key!r} is claimed by {a.name} and {b.name} for "
                            "the same kind; give them disjoint kinds"
                        )

    def kind(self, infobox_type: str | None) -> str | None:
        """The kind group of an infobox type (``officeholder`` -> ``person``), or None."""
        if infobox_type is None:
            return None
        t = infobox_type.strip().lower()
        if t in self.kind_of_type:
            return self.kind_of_type[t]
        # "football biography 2", "settlement/japan": the longest known type it starts with.
        best = max((k for k in self.kind_of_type if t.startswith(k)), key=len, default=None)
        return self.kind_of_type[best] if best else None

    def lookup(self, key: str, kind: str | None) -> tuple[RelationSpec, int, KeyAlias] | None:
        """The relation a key carries on an infobox of ``kind`` (rank = alias preference)."""
        for rel, rank, alias in self._by_key.get(normalize_key(key), ()):
            if not rel.kinds or (kind is not None and kind in rel.kinds):
                return rel, rank, alias
        return None

    def phrasing(self, relation: str) -> dict[str, Any] | None:
        """The vocabulary's phrasings of ``relation`` (None for world-shared relations)."""
        spec = self.relations.get(relation)
        return spec.phrasing if spec else None


@lru_cache(maxsize=1)
def vocabulary() -> Vocabulary:
    """The packaged vocabulary (read once, on first use)."""
    text = (
        resources.files("wikigym.corpora")
        .joinpath("data/infobox_vocabulary.json")
        .read_text(encoding="utf-8")
    )
    return Vocabulary(json.loads(text))


def untyped_value_type(key: str, value: str, link_target: str | None) -> str:
    """The value type of an untyped field: a four-digit number is a date only when the key
    says so (``founded``, ``*_year``, ``*_date``), otherwise a number."""
    if link_target:
        return "entity"
    v = value.strip()
    if _ISO_DATE.match(v) and "-" in v.lstrip("-"):
        return "date"
    if _YEAR_ONLY.match(v) and _DATE_KEY.search(key):
        return "date"
    if _NUMBER_ONLY.match(v):
        return "number"
    return "text"


# A line that refers the reader elsewhere, in the vocabulary's languages.
_SEE = re.compile(
    r"\s*(?:see(?: also)?|siehe(?: auch)?|voir(?: aussi)?|véase(?: también)?|vedi(?: anche)?)"
    r"\s*:",
    re.IGNORECASE,
)
# A leading period ("1905–22", "(1931–1982)", "1990–present") that qualifies the value after it.
_PERIOD = re.compile(
    r"\s*\(?\d{3,4}\s*[–—-]\s*(?:\d{2,4}|present|heute|aujourd'hui|presente)?\)?:?\s+"
)


def field_values(f: InfoboxField, is_list: bool) -> list[tuple[str, str | None]]:
    """The values of one infobox field: ``(text, title of the link it starts with)``.

    A value written as several lines (``<br>``, ``{{plainlist}}``) has one value per line;
    a list relation's value (or line) is also split at commas and the words for *and*
    (outside parentheses). The link an item starts with names it: ``[[Mayfair]], London``
    is Mayfair; ``Prometheus Award (1983 for [[Anthem]])`` names no linked entity.
    """
    starts = {at: target for at, target in f.links}
    if not starts and f.link_targets:  # a field made without link offsets: where each shows
        starts = {f.value.find(t): t for t in f.link_targets if f.value.find(t) >= 0}
        if f.leading_link and f.link_target:
            starts[0] = f.link_target
    text = f.value
    bounds = [*list(f.lines), len(text)] if f.lines else [0, len(text)]
    out: list[tuple[str, str | None]] = []
    for a, b in itertools.pairwise(bounds):
        line = text[a:b].rstrip(" ,;")
        if _SEE.match(line):
            continue  # "See: [[Abraham Lincoln and religion]]" points elsewhere
        spans = item_spans(line) if is_list else [(0, len(line))]
        for s, e in spans:
            # "1905–22 Russian": the value is what the period qualifies
            s += m.end() if (m := _PERIOD.match(line, s, e)) and m.end() < e else 0
            lead = len(line[s:e]) - len(line[s:e].lstrip())
            out.append((line[s:e], starts.get(a + s + lead)))
    if not f.lines and not is_list and not f.leading_link:
        return [(text, None)]
    return out


def _typed(rel: RelationSpec, alias: KeyAlias, f: InfoboxField, language: str) -> list[TypedFact]:
    def fact(obj: str, vtype: str, title: str | None = None) -> TypedFact:
        return TypedFact(rel.name, obj, vtype, title, f.key, f.value, True)

    if rel.value == "entity":
        # An entity is named by the link its value starts with ("[[Mayfair]], London" is
        # Mayfair; "Eastern North America, [[Gibraltar]]" names no one place); of a field
        # with several values (lines, or a list relation's items), every value is one, and
        # an unlinked one is named by its text (an entity without a page).
        values = field_values(f, rel.is_list)
        several = len(values) > 1
        out: list[TypedFact] = []
        for text, target in values[:MAX_LIST_ITEMS]:
            if target:
                out.append(fact(target, "entity", target))
            elif several and (name := clean_item(text)) and _NAME.match(name):
                out.append(fact(name, "entity"))
        return list({(x.object, x.object_title): x for x in out}.values())
    if rel.value == "date":
        iso = parse_date(f.value, language)
        return [fact(iso, "date")] if iso else []
    if rel.value == "number":
        value = parse_number(f.value, language, rel.unit, alias.unit)
        return [fact(format_value(value), "number")] if value is not None else []
    if f.lines or rel.is_list:
        items = [clean_item(t) for t, _ in field_values(f, rel.is_list)]
        items = list(dict.fromkeys(i for i in items if i))
    else:
        items = [clean_item(f.value)]
    return [fact(i, "text") for i in items[:MAX_LIST_ITEMS] if i]


def type_infobox(
    fields: tuple[InfoboxField, ...], infobox_type: str | None, language: str | None = None
) -> list[TypedFact]:
    """The facts of one infobox: typed through the vocabulary where it can, raw otherwise.

    Every value of a field is a fact (lines, a list's items); a list relation takes the
    values of every key of the page that carries it, another relation those of its
    preferred key only.

    Args:
        fields: The infobox fields, in order.
        infobox_type: The infobox type (``settlement``), which picks the kind group.
        language: The wiki's language (locale of numbers and dates); English if None.

    Returns:
        Facts in field order; a field typed by a relation that a preferred key of the same
        page already gave yields nothing; a field whose value does not parse as its type
        yields an untyped fact.
    """
    vocab = vocabulary()
    lang = language or "en"
    kind = vocab.kind(infobox_type)
    claims: dict[int, tuple[RelationSpec, int, KeyAlias]] = {}
    best: dict[str, int] = {}
    for i, f in enumerate(fields):
        found = vocab.lookup(f.key, kind)
        if found is not None:
            claims[i] = found
            rel, rank, _ = found
            best[rel.name] = min(best.get(rel.name, rank), rank)
    facts: list[TypedFact] = []
    for i, f in enumerate(fields):
        claim = claims.get(i)
        if claim is not None:
            rel, rank, alias = claim
            if rank != best[rel.name] and not rel.is_list:
                continue  # a preferred key of this relation is on the page (a list's
                # keys all give values: leader_name1, leader_name2, ...)
            typed = _typed(rel, alias, f, lang)
            if typed:
                facts.extend(typed)
                continue
        facts.append(
            TypedFact(
                f.key,
                f.value,
                untyped_value_type(f.key, f.value, f.link_target),
                f.link_target,
                f.key,
                f.value,
                False,
            )
        )
    return facts


def coverage(
    pages: list[tuple[tuple[InfoboxField, ...], str | None, str | None]],
) -> dict[str, Any]:
    """Share of infobox fields the vocabulary types, over all fields and over the fields
    that are not presentation (names, images, coordinates: the table's ``ignored``).

    Args:
        pages: ``(fields, infobox_type, language)`` per page with an infobox.
    """
    vocab = vocabulary()
    total = content = typed = 0
    for fields, infobox_type, language in pages:
        facts = type_infobox(fields, infobox_type, language)
        keys_typed = {f.key for f in facts if f.typed}
        for f in fields:
            total += 1
            ignored = normalize_key(f.key) in vocab.ignored
            content += not ignored
            typed += f.key in keys_typed
    return {
        "fields": total,
        "content_fields": content,
        "typed": typed,
        "coverage": round(typed / total, 4) if total else 0.0,
        "content_coverage": round(typed / content, 4) if content else 0.0,
    }
