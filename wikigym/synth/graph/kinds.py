"""Which facts and kinds the graph takes: relations that never make a question, the kind
of an article from its infobox type, and whether an infobox literal reads as an answer."""

from __future__ import annotations

import re

from wikigym.corpora.lexicon import lexicon
from wikigym.corpora.vocabulary import vocabulary

# Relations that never make a question: names, images, coordinates, ranks, codes.
SKIP_RELATIONS = frozenset(
    [
        "name",
        "common_name",
        "conventional_long_name",
        "native_name",
        "image",
        "caption",
        "image_caption",
        "website",
        "logo",
        "map",
        "signature",
        "alt",
        "image_map",
        "map_caption",
        "image_flag",
        "image_coat",
        "footnotes",
        "latd",
        "latm",
        "lats",
        "latns",
        "longd",
        "longm",
        "longs",
        "longew",
        "coordinates",
        "coordinates_display",
        "population_density_rank",
        "area_rank",
        "population_estimate_rank",
        "gdp_ppp_rank",
        "gdp_nominal_rank",
        "hdi_rank",
        "symbol_type",
        "cctld",
        "calling_code",
        "time_zone",
        "utc_offset",
        "drives_on",
        "iso3166code",
        "currency_code",
        "instance_of",
        "title",
        "module",
        "years_active",
    ]
)
_PERSONLIKE = frozenset(
    {
        "person", "philosopher", "writer", "scientist", "officeholder", "tennis biography",
        "artist", "military person", "royalty", "politician", "actor", "football biography",
        "sportsperson", "astronaut", "president", "prime minister", "monarch", "saint",
    }
)  # fmt: skip
# Infobox values that are placeholders or template residue rather than facts.
_JUNK_VALUES = frozenset({"date", "utc", "yes", "no", "none", "unknown", "capital", "n/a", "see"})
_HAS_WORD = re.compile(r"[^\W\d_]{3}")
_KIND = re.compile(r"^[a-z][a-z .]{1,24}$")
_KIND_MAP = {
    "settlement": "city",
    "u.s. state": "state",
    "province or territory of canada": "province",
}


# Nouns of the vocabulary's kind groups, for infobox types that are not English nouns
# ("漫画家", "基礎情報 国" -> "国").
_GROUP_NOUNS = {
    "person": "person",
    "place": "place",
    "organisation": "organisation",
    "work": "work",
    "event": "event",
    "award": "award",
    "language": "language",
    "medical": "condition",
}


def kind_of_infobox(infobox_type: str | None) -> str | None:
    if not infobox_type:
        return None
    t = infobox_type.strip().lower()
    if t in _PERSONLIKE:
        return "person"
    t = _KIND_MAP.get(t, t)
    if _KIND.match(t):
        return t
    group = vocabulary().kind(t)
    return _GROUP_NOUNS.get(group) if group else None


def clean_value(value_type: str, value: str) -> bool:
    """Whether a typed infobox literal reads as an answer: dates and numbers parsed at
    build; a text needs a word of three letters and must not be a placeholder."""
    if value_type in ("date", "number"):
        return True
    v = value.strip()
    return bool(_HAS_WORD.search(v)) and v.casefold() not in _JUNK_VALUES


UNSTATED = -1  # the passage of a fact stated in no passage (a category line, Wikidata)
REAL_SOURCES = ("infobox", "lead", "category", "wikidata")  # a real wiki's fact sources


def instance_kind(cls: str | None, language: str | None) -> str | None:
    """The kind an ``instance_of`` value names: a world's as it is; a real wiki's class
    through the lexicon's English noun (``都道府県`` -> prefecture), else as an infobox type."""
    if cls is None or language is None:
        return cls
    lex = lexicon(language)
    noun = lex.kind_of(cls) if lex is not None else None
    return noun or kind_of_infobox(cls)
