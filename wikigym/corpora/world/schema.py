"""Entity types, relations and their type signatures, and the closed vocabularies.

A relation's object is either an entity type (the fact's ``value_type`` is
``entity``) or a literal kind (``number``, ``date``, ``text``). Dates are ISO
``YYYY-MM-DD`` or ``YYYY``; numbers are plain digit strings.
"""

from __future__ import annotations

from dataclasses import dataclass

ENTITY_TYPES: tuple[str, ...] = (
    "country",
    "language",
    "city",
    "person",
    "organisation",
    "work",
    "event",
    "river",
    "mountain",
    "award",
)
"""Entity types in the order their blocks appear in the dump."""

FACTS_SOURCE = "world"
"""The ``source`` of the world's facts in a snapshot's facts table."""
FACTS_COMPLETE = True
"""The world declares its facts complete: the generator writes every fact it holds of every
entity, and its snapshot is the whole world, so the absence of a fact is a fact (nobody else
was born in that city). Real wikis make no such claim: what a page does not state may still
be true. Synth keeps negations, counts and near-miss questions with no answer to what is
complete, or checks the text (:mod:`wikigym.synth.unanswerable`)."""

ORG_KINDS = ("company", "university", "band")
WORK_KINDS = ("novel", "film", "album")
EVENT_KINDS = ("battle", "festival", "treaty")
LITERALS = ("number", "date", "text")


@dataclass(frozen=True, slots=True)
class Relation:
    """A typed relation.

    Attributes:
        name: Snake-case name; also the infobox key.
        subject: Entity types (or subkinds such as ``novel``) the relation applies to.
        object: An entity type, or ``number`` / ``date`` / ``text``.
    """

    name: str
    subject: tuple[str, ...]
    object: str

    @property
    def value_type(self) -> str:
        """``entity`` for entity objects, else the literal kind."""
        return self.object if self.object in LITERALS else "entity"


_R = Relation
RELATIONS: tuple[Relation, ...] = (
    _R("instance_of", ("city", "country", "language", "organisation", "work", "event", "river",
                       "mountain", "award"), "text"),
    _R("occupation", ("person",), "text"),
    _R("born_in", ("person",), "city"),
    _R("birth_date", ("person",), "date"),
    _R("died_in", ("person",), "city"),
    _R("death_date", ("person",), "date"),
    _R("nationality", ("person",), "country"),
    _R("educated_at", ("person",), "organisation"),
    _R("employer", ("person",), "organisation"),
    _R("spouse", ("person",), "person"),
    _R("award_received", ("person",), "award"),
    _R("notable_work", ("person",), "work"),
    _R("member_of", ("person",), "organisation"),
    _R("located_in", ("city",), "country"),
    _R("population", ("city", "country"), "number"),
    _R("founded", ("city",), "date"),
    _R("area_km2", ("city", "country"), "number"),
    _R("mayor", ("city",), "person"),
    _R("twinned_with", ("city",), "city"),
    _R("capital", ("country",), "city"),
    _R("currency", ("country",), "text"),
    _R("independence_date", ("country",), "date"),
    _R("official_language", ("country",), "language"),
    _R("language_family", ("language",), "text"),
    _R("speakers", ("language",), "number"),
    _R("writing_system", ("language",), "text"),
    _R("founded_by", ("organisation",), "person"),
    _R("headquarters", ("organisation",), "city"),
    _R("founding_year", ("organisation",), "date"),
    _R("ceo", ("company",), "person"),
    _R("industry", ("company",), "text"),
    _R("employees", ("company",), "number"),
    _R("genre", ("band", "work"), "text"),
    _R("author", ("novel",), "person"),
    _R("director", ("film",), "person"),
    _R("performer", ("album",), "organisation"),
    _R("publication_year", ("work",), "date"),
    _R("publisher", ("novel",), "organisation"),
    _R("production_company", ("film",), "organisation"),
    _R("record_label", ("album",), "organisation"),
    _R("language", ("novel", "film"), "language"),
    _R("based_on", ("film",), "work"),
    _R("location", ("event",), "city"),
    _R("date", ("event",), "date"),
    _R("participants", ("battle", "treaty"), "country"),
    _R("organiser", ("festival",), "organisation"),
    _R("casualties", ("battle",), "number"),
    _R("attendance", ("festival",), "number"),
    _R("source_country", ("river",), "country"),
    _R("flows_through", ("river",), "city"),
    _R("mouth", ("river",), "city"),
    _R("length_km", ("river",), "number"),
    _R("tributary_of", ("river",), "river"),
    _R("located_in_country", ("mountain",), "country"),
    _R("elevation_m", ("mountain",), "number"),
    _R("first_ascent_by", ("mountain",), "person"),
    _R("first_ascent_year", ("mountain",), "date"),
    _R("mountain_range", ("mountain",), "text"),
    _R("presented_by", ("award",), "organisation"),
    _R("established_year", ("award",), "date"),
    _R("field", ("award",), "text"),
)  # fmt: skip

RELATION_BY_NAME: dict[str, Relation] = {r.name: r for r in RELATIONS}

OCCUPATIONS = (
    "novelist", "poet", "film director", "musician", "politician", "scientist", "mountaineer",
    "businessperson", "painter", "architect",
)  # fmt: skip
OCCUPATION_WEIGHTS = (0.17, 0.06, 0.10, 0.16, 0.12, 0.10, 0.05, 0.12, 0.07, 0.05)
OCC_WRITER = (0, 1)
OCC_DIRECTOR = (2,)
OCC_MUSICIAN = (3,)
OCC_POLITICIAN = (4,)
OCC_MOUNTAINEER = (6,)
OCC_BUSINESS = (7,)

INDUSTRIES = ("publishing", "film", "music", "shipbuilding", "mining", "banking", "textiles")
COMPANY_SUFFIX = {
    "publishing": ("Press", "Books", "Publishing House"),
    "film": ("Pictures", "Studios", "Film Company"),
    "music": ("Records", "Music", "Sound"),
    "shipbuilding": ("Shipyards", "Marine Works", "Dockworks"),
    "mining": ("Mining Company", "Minerals", "Ironworks"),
    "banking": ("Bank", "Savings Bank", "Trust"),
    "textiles": ("Mills", "Weavers", "Textiles"),
}
NOVEL_GENRES = ("historical novel", "crime fiction", "science fiction", "romance", "satire",
                "fantasy", "family saga")  # fmt: skip
FILM_GENRES = ("drama", "comedy", "war film", "thriller", "musical film", "western", "documentary")
MUSIC_GENRES = ("folk rock", "jazz", "synth-pop", "heavy metal", "chamber pop", "blues",
                "electronic music")  # fmt: skip
AWARD_FIELDS = ("literature", "film", "music", "science", "architecture", "public service",
                "painting", "mountaineering")  # fmt: skip
LANGUAGE_FAMILIES = ("Velic", "Ostrane", "Kharic", "Tuvamic", "Selunic", "Brannic")
WRITING_SYSTEMS = ("Latin script", "Velic script", "Ostrane alphabet", "Kharic syllabary",
                   "Brannic runes")  # fmt: skip
CURRENCY_UNITS = ("kron", "dalen", "sova", "marak", "tovel", "ostel", "florin", "vesk")
OFFICIAL_FORMS = ("Republic of", "Kingdom of", "Federation of", "Grand Duchy of",
                  "Commonwealth of", "Principality of")  # fmt: skip
