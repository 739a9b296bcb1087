"""Every fact a real article states in a readable form, with its source and statement.

An article of a real wiki states facts in three places this module reads (a fourth,
Wikidata, is joined by sitelink at the end of a build: :mod:`wikigym.corpora.wikidata`):

- ``infobox``: every value of every field (:func:`wikigym.corpora.vocabulary.type_infobox`);
  located in the passage whose text states the value (or unstated);
- ``lead``: the first sentence (:mod:`wikigym.corpora.leads`); stated in the lead's passage,
  the sentence kept as the statement;
- ``category``: the category names (:mod:`wikigym.corpora.categories`); the statement is the
  category line (``Category:NAME``), and the fact is also located in the passage whose text
  states its value when one does (else it is stated only by the category line).

A fact another source of the page already states (the same value, or a date the other
gives more precisely: ``1809 births`` beside ``February 12, 1809``) is kept with its own
source and statement and points at the fact it restates (``restates``): the graph reads the
fact once, and a reader of the table sees every place that states it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from wikigym.corpora.categories import CategoryFact, category_facts, category_vocabulary
from wikigym.corpora.leads import LEAD_VERSION, lead_facts
from wikigym.corpora.lexicon import lexicon_version
from wikigym.corpora.records import ParsedPage
from wikigym.corpora.vocabulary import type_infobox, vocabulary

# Sources of facts, in the order a page's facts are written (and restatements resolved).
SOURCES: tuple[str, ...] = ("infobox", "lead", "category", "wikidata", "world")
CATEGORY_LINE = "Category:"
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip


def vocabulary_versions() -> dict[str, str]:
    """The versions of every vocabulary that types real facts (snapshot ids cover them)."""
    return {
        "relations": vocabulary().version,
        "categories": category_vocabulary().version,
        "lexicon": lexicon_version(),
        "lead": LEAD_VERSION,
    }


@dataclass(frozen=True, slots=True)
class PageFact:
    """One fact of a page before ids are assigned.

    Attributes:
        relation: Vocabulary relation (typed) or raw infobox key (untyped).
        object: The value (ISO date, plain number, entity title or text).
        object_title: Title of the entity, for entity objects.
        value_type: ``entity``, ``date``, ``number`` or ``text``.
        source: ``infobox``, ``lead`` or ``category``.
        offset: Article offset of the text that states it, or None (unstated).
        key: The infobox key (infobox facts).
        value_text: The value as the infobox shows it (infobox facts).
        typed: Typed by the vocabularies.
        statement: The category line or the lead sentence (None for infobox facts, whose
            key and value are the statement).
        restates: Index (in the page's list) of the fact this one restates, or None.
    """

    relation: str
    object: str
    object_title: str | None
    value_type: str
    source: str
    offset: int | None
    key: str | None = None
    value_text: str | None = None
    typed: bool = True
    statement: str | None = None
    restates: int | None = None


def surfaces(obj: str, title: str | None, vtype: str, value_text: str | None) -> list[str]:
    """How a passage may write a value (dates and numbers are stored normalised, and prose
    writes them its own way), casefolded, two characters or more."""
    out = [obj]
    if value_text:
        out.append(value_text.split(",")[0])
    if title:
        out.append(title)
        bare = re.sub(r"\s*\([^()]*\)$", "", title)  # "Georgia (country)" -> "Georgia"
        if bare != title:
            out.append(bare)
    if vtype == "date":
        y, _, rest = obj.partition("-")
        if rest:
            mm, _, dd = rest.partition("-")
            month = _MONTHS[int(mm) - 1]
            if dd:
                out += [f"{int(dd)} {month} {y}", f"{month} {int(dd)}, {y}"]
                out.append(f"{y}年{int(mm)}月{int(dd)}日")
            out.append(f"{month} {y}")
        out.append(y)
    elif vtype == "number":
        try:
            value = float(obj)
        except ValueError:
            value = float("nan")
        if value.is_integer():
            grouped = f"{int(value):,}"
            out += [grouped, grouped.replace(",", "."), grouped.replace(",", " ")]
            out.append(grouped.replace(",", "\u00a0"))
    return [x.strip().casefold() for x in out if x and len(x.strip()) >= 2]


def _word_at(text: str, needle: str) -> int:
    """The first offset of ``needle`` in ``text`` that is not inside a longer word (a
    ``writer`` is not found in ``screenwriter``; CJK text has no spaces: any offset)."""
    at = text.find(needle)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + len(needle)] if at + len(needle) < len(text) else " "
        wordy = needle[:1].isascii() and needle[:1].isalnum()
        if not wordy or (not before.isalnum() and not after.isalnum()):
            return at
        at = text.find(needle, at + 1)
    return -1


def locate(lowered: str, needles: Sequence[str]) -> int | None:
    """The first offset in the casefolded article text where any of ``needles`` stands
    as a word, or None."""
    found = [at for at in (_word_at(lowered, n) for n in needles) if at >= 0]
    return min(found) if found else None


def page_facts(page: ParsedPage, text: str, lead_at: int | None) -> list[PageFact]:
    """Every fact of a real page: infobox, lead sentence and categories, located.

    Args:
        page: The parsed page.
        text: The article text as laid out (sections joined).
        lead_at: Article offset of the lead section's text, or None when the page has no
            lead section (then no lead facts).

    Returns:
        The facts in source order (infobox, lead, category), restatements marked.
    """
    lowered = text.casefold()
    facts: list[PageFact] = []
    for t in type_infobox(page.infobox, page.infobox_type, page.language):
        at = locate(lowered, surfaces(t.object, t.object_title, t.value_type, t.value_text))
        facts.append(
            PageFact(
                t.relation,
                t.object,
                t.object_title,
                t.value_type,
                "infobox",
                at,
                t.key,
                t.value_text,
                t.typed,
            )
        )
    if not page.is_disambiguation:
        # A source passage (DPR's 100 words) may start anywhere in its article: only a
        # section that is an article's own lead is read as one.
        first = page.sections[0] if page.sections else None
        if lead_at is not None and first is not None and not first.path and not first.whole:
            lead = page.sections[0]
            for f in lead_facts(page.title, lead.text, lead.links, page.language):
                facts.append(
                    PageFact(
                        f.relation,
                        f.object,
                        f.object_title,
                        f.value_type,
                        "lead",
                        lead_at + f.start,
                        statement=f.sentence,
                    )
                )
        for c in category_facts(page.categories, page.language):
            if not _category_speaks_of(page.title, page.language, c):
                continue
            at = None
            if c.relation != "instance_of":
                at = locate(lowered, surfaces(c.object, c.object_title, c.value_type, None))
            facts.append(
                PageFact(
                    c.relation,
                    c.object,
                    c.object_title,
                    c.value_type,
                    "category",
                    at,
                    statement=CATEGORY_LINE + c.category,
                )
            )
    person_kind = vocabulary().kind(page.infobox_type) == "person"
    return mark_restatements(_people_only(facts, person_kind))


# English pages about an aspect of their subject ("Economy of Angola", "History of France"):
# their categories file the subject ("African Union member economies"), not the page.
_ASPECT_PAGE = re.compile(
    r"(?:economy|history|politics|geography|culture|demographics|demography|government|"
    r"military|foreign relations|religion|music|education|transport|transportation|sport|"
    r"tourism|health|law|languages|cuisine|climate|flag|coat of arms|outline|timeline|"
    r"list|lists|index) (?:of|in) ",
    re.IGNORECASE,
)


def _category_speaks_of(title: str, language: str | None, c: CategoryFact) -> bool:
    """Whether a category's fact is one of the page's own subject.

    Not on an English page about an aspect of its subject (``Economy of Angola``), and no
    ``instance_of`` for a page named as a group of that kind: "Austroasiatic languages" in
    "Agglutinative languages" is a family of languages, not a language."""
    if (language or "en") == "en" and _ASPECT_PAGE.match(title):
        return False
    if c.relation == "instance_of":
        last = c.category.rsplit(None, 1)[-1].casefold()
        if len(last) > 1 and title.casefold().rsplit(None, 1)[-1] == last and last != c.object:
            return False
    return True


# Relations only a person has: a category or lead gives them to a page that other facts
# make a person ("Ranchers" on the article Agriculture names no rancher).
PERSONAL = frozenset({"occupation", "nationality", "active_century", "origin", "cause_of_death"})
_PERSON_SIGNS = frozenset({"birth_date", "death_date", "born_in", "died_in", "spouse"})


def _people_only(facts: list[PageFact], person_kind: bool) -> list[PageFact]:
    """``facts`` less the personal facts of categories and leads when nothing else says the
    page is a person: dates or places of birth and death, a person infobox, a lead that
    reads a person, a category that says only that ("Living people")."""
    by_line: dict[str | None, int] = {}
    for f in facts:
        if f.source == "category":
            by_line[f.statement] = by_line.get(f.statement, 0) + 1
    person = person_kind or any(
        f.typed
        and (
            f.relation in _PERSON_SIGNS
            or (
                f.relation == "instance_of"
                and f.object.casefold() in _PERSON_WORDS
                and (f.source != "category" or by_line.get(f.statement) == 1)
            )
        )
        for f in facts
    )
    if person:
        return facts
    return [
        f
        for f in facts
        if f.source == "infobox"
        or not (
            f.relation in PERSONAL
            or (f.relation == "instance_of" and f.object.casefold() in _PERSON_WORDS)
        )
    ]


_PERSON_WORDS = frozenset({"person", "人物", "personne", "persona"})


def _same(f: PageFact) -> tuple[str, str]:
    return f.relation, (f.object_title or f.object).casefold()


def mark_restatements(facts: list[PageFact]) -> list[PageFact]:
    """``facts`` with ``restates`` set: a typed fact whose value an earlier typed fact of
    the same relation already gives, or whose date another fact gives more precisely,
    restates that fact (the first such, in source order)."""
    first: dict[tuple[str, str], int] = {}
    dates: dict[str, list[int]] = {}
    for i, f in enumerate(facts):
        if not f.typed:
            continue
        first.setdefault(_same(f), i)
        if f.value_type == "date":
            dates.setdefault(f.relation, []).append(i)
    out = list(facts)
    for i, f in enumerate(facts):
        if not f.typed:
            continue
        target = first[_same(f)]
        if target == i and f.value_type == "date":
            finer = [
                j
                for j in dates[f.relation]
                if len(facts[j].object) > len(f.object)
                and facts[j].object.startswith(f.object + "-")
            ]
            if finer:
                best = max(len(facts[j].object) for j in finer)
                target = next(j for j in finer if len(facts[j].object) == best)
                target = first[_same(facts[target])]
        if target != i:
            out[i] = _with_restates(f, target)
    return out


def _with_restates(f: PageFact, target: int) -> PageFact:
    return PageFact(
        f.relation,
        f.object,
        f.object_title,
        f.value_type,
        f.source,
        f.offset,
        f.key,
        f.value_text,
        f.typed,
        f.statement,
        target,
    )
