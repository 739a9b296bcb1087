"""What a page states: the reading half of the reference agent (:mod:`wikigym.eval.reference`).

Given a page's passages (or one search hit's passage) and a relation name, the reader finds
the sentences that state the relation (its *cues*: plain English phrasings, "was born in",
"the mayor of", "square kilometres") and reads the value out of them by its type: an entity
(a linked title or a capitalised name in the sentence, nearest the cue), a date ("6 July
1960", or a year), a number ("120,196") or a text ("a work of fantasy"). It knows English
prose, not the graph: what it reads is what the page says, and it misses what the page says
otherwise.

Value types come from the relation vocabulary of real infoboxes and the generated world's
schema (both data of the corpora room), else from the relation's name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from wikigym.corpora.passages import split_sentences
from wikigym.corpora.vocabulary import vocabulary
from wikigym.corpora.world.schema import RELATION_BY_NAME
from wikigym.synth.solving import Found, Lit
from wikigym.synth.templates import relation_text

MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_DATE = re.compile(r"\b(\d{1,2}) (" + "|".join(MONTHS) + r"),? (\d{3,4})\b")
_DATE_US = re.compile(r"\b(" + "|".join(MONTHS) + r") (\d{1,2}), (\d{3,4})\b")
_YEAR = re.compile(r"(?<![\d,.])(\d{3,4})(?!\d|,\d)")
_NUMBER = re.compile(
    r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|(?<![\w.,])\d+(?:\.\d+)?(?![\d,])"
)
_NAME = re.compile(
    r"[A-Z][\w'’-]*(?:(?:\s+(?:of|the|de|del|da|di|von|van|der|and|la|le|du|for|on|in))*"
    r"\s+[A-Z0-9][\w'’-]*)*"
)
_PAREN = re.compile(r"\s*\([^()]*\)$")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[a-z0-9]+")
_STOP_NAMES = frozenset(
    ["The", "It", "He", "She", "They", "Its", "His", "Her", "Their", "In", "On", "A", "An",
     "This", "That", "After", "Before", "Other", "Several", "Recent", "About"]
)  # fmt: skip

# Phrasings that state a relation in English prose (regexes over the sentence, case-folded).
# A text relation's pattern captures its value in the group "v". Relations not listed fall
# back to the words of their question templates (wikigym.synth.templates).
CUES: dict[str, tuple[str, ...]] = {
    "occupation": (r"\) (?:is|was) an? (?P<v>[a-z][a-z -]+?)(?:\.|,| who| and|$)",),
    "born_in": (r"\bborn in\b", r"city of (?:his|her|their) birth", r"\bbirthplace\b",
                r"\bborn\b.* in\b", r"\bnative of\b"),
    "birth_place": (r"\bborn in\b", r"\bbirthplace\b", r"\bborn\b.* in\b"),
    "birth_date": (r"\bborn on\b", r"\bborn\b", r"\bbirth\b"),
    "died_in": (r"\bdied in\b", r"\bdied\b.* in\b", r"\bplace of death\b"),
    "death_place": (r"\bdied in\b", r"\bdied\b.* in\b"),
    "death_date": (r"\bdied on\b", r"\bdied\b", r"\bdeath\b"),
    "nationality": (r"\bcitizen of\b", r"\bnationality\b", r"\bnational of\b"),
    "educated_at": (r"\bstudied at\b", r"\beducated at\b", r"\battended\b", r"\balma mater\b"),
    "alma_mater": (r"\bstudied at\b", r"\beducated at\b", r"\battended\b", r"\balma mater\b"),
    "employer": (r"\bworked for\b", r"\bemployed by\b", r"\bjoined\b", r"\bworks for\b"),
    "member_of": (r"\bmember of\b", r"\bplayed in\b"),
    "notable_work": (r"\bknown for\b", r"\bnotable works?\b"),
    "spouse": (r"\bmarried\b", r"\bspouse\b", r"\bwife of\b", r"\bhusband of\b"),
    "award_received": (r"\breceived the\b", r"\bawarded the\b", r"\bwon the\b"),
    "located_in": (r"\bis a (?:city|town|village)(?: located)? in\b", r"\blocated in\b"),
    "founded": (r"\bfounded in\b", r"\bdates from\b", r"\bfounded\b", r"\bestablished\b"),
    "area_km2": (r"square kilometres", r"\barea of\b", r"\bkm2\b", r"km²"),
    "population": (r"\bpopulation\b", r"\bpeople live\b", r"\binhabitants\b"),
    "mayor": (r"\bmayor\b",),
    "twinned_with": (r"\btwinned with\b", r"\btwinning agreement\b", r"\bsister city\b"),
    "capital": (r"\bcapital\b",),
    "currency": (r"\bcurrency (?:of [\w ]+ )?is the (?P<v>[\w ]+?)(?:\.|,|$)",),
    "independence_date": (r"\bindependence\b",),
    "official_language": (r"\bofficial language\b",),
    "language_family": (r"\bthe (?P<v>[\w-]+) family\b",),
    "speakers": (r"\bspeakers\b",),
    "writing_system": (r"\bwritten in the (?P<v>[\w -]+?)(?:\.|,|$)",),
    "founded_by": (r"\bfounded by\b", r"\bformed by\b", r"\bestablished by\b", r"\bfounded\b",
                   r"\bformed\b", r"\bestablished\b", r"\bfounder\b"),
    "headquarters": (r"\bheadquartered in\b", r"\bheadquarters\b", r"\bmain campus\b",
                     r"\bbased in\b", r"\blocated in\b"),
    "founding_year": (r"\bfounded\b", r"\bformed\b", r"\bestablished\b"),
    "ceo": (r"\bchief executive\b", r"\bceo\b"),
    "industry": (r"\bis an? (?P<v>[a-z]+) company\b",),
    "employees": (r"\bemploys\b", r"\bemployees\b"),
    "genre": (r"\bis an? (?P<v>[a-z][a-z -]+?) (?:band|record)\b", r"\bwork of (?P<v>[a-z][a-z -]+?)\.",
              r"\bthe film is an? (?P<v>[a-z][a-z -]+?)\.", r"\bis an? (?P<v>[a-z][a-z -]+? film)\."),
    "author": (r"\bwritten by\b", r"\bwrote\b", r"\bauthor\b"),
    "director": (r"\bdirected\b", r"\bdirector\b"),
    "performer": (r"\brecorded by\b", r"\balbum by\b", r"\bperformed by\b"),
    "publication_year": (r"\bfirst published\b", r"\bfirst released\b", r"\bpublished in\b",
                         r"\breleased in\b", r"\bfirst issued\b", r"\bissued in\b",
                         r"\bwas (?:first )?(?:published|released|issued) in\b"),
    "publisher": (r"\bpublished by\b", r"\bpublisher\b"),
    "production_company": (r"\bproduced by\b", r"\bproduced the\b"),
    "record_label": (r"\blabel\b",),
    "language": (r"\bwritten in\b", r"\boriginal language\b", r"\bfilm is in\b"),
    "based_on": (r"\bbased on\b", r"\badaptation of\b"),
    "location": (r"\bfought near\b", r"\bheld in\b", r"\bsigned in\b", r"\btook place in\b"),
    "date": (r"\btook place on\b", r"\bfought on\b", r"\bfirst held on\b", r"\bsigned on\b",
             r"\bconcluded on\b"),
    "participants": (r"\bfought between\b", r"\bsignatories\b"),
    "organiser": (r"\borganised by\b", r"\borganises\b", r"\borganized by\b"),
    "casualties": (r"\bcasualties\b",),
    "attendance": (r"\bvisitors\b", r"\battendance\b"),
    "source_country": (r"\brises in\b", r"\bsource of\b"),
    "flows_through": (r"\bflows through\b", r"\bpasses\b"),
    "mouth": (r"\breaches the sea\b", r"\bmouth\b"),
    "length_km": (r"\bkilometres long\b", r"\blength of\b"),
    "tributary_of": (r"\btributary of\b",),
    "located_in_country": (r"\bis a mountain in\b", r"\blocated in\b"),
    "elevation_m": (r"\bmetres above\b", r"\belevation\b", r"\brises to\b"),
    "mountain_range": (r"\bpart of the (?P<v>[A-Z][\w ]+?)(?:\.|,|$)",),
    "first_ascent_by": (r"\bfirst ascent\b",),
    "first_ascent_year": (r"\bfirst ascent\b",),
    "field": (r"\baward for achievement in (?P<v>[a-z][a-z ]+?)(?:\.|,|$)",),
    "presented_by": (r"\bpresented by\b",),
    "established_year": (r"\bfirst presented in\b", r"\bestablished in\b"),
}  # fmt: skip
_NUMBER_NAMES = ("population", "area", "elevation", "length", "employees", "speakers",
                 "casualties", "attendance", "width", "gdp", "pages")  # fmt: skip
_DATE_NAMES = ("date", "year", "founded", "established")


@cache
def relation_type(relation: str) -> str:
    """``entity``, ``date``, ``number`` or ``text``: the vocabulary's type of a real relation,
    the world schema's of a world one, else a guess from the name."""
    spec = vocabulary().relations.get(relation)
    if spec is not None:
        return spec.value
    world = RELATION_BY_NAME.get(relation)
    if world is not None:
        return world.value_type
    if any(w in relation for w in _NUMBER_NAMES):
        return "number"
    if any(w in relation for w in _DATE_NAMES):
        return "date"
    return "entity"


@cache
def cues(relation: str) -> tuple[re.Pattern[str], ...]:
    """The patterns of sentences that state ``relation`` (see :data:`CUES`)."""
    listed = CUES.get(relation)
    if listed is None:
        rt = relation_text(relation)
        words = list(rt.keywords)
        for t in rt.clauses:  # "{who} was born in {o}" -> "born in"
            static = re.sub(r"\{[a-z_]+\}", " ", t).replace("whose", " ").strip()
            static = re.sub(r"^(?:was|is|has|had|were)\s+", "", static).strip()
            if static:
                words.append(static)
        listed = tuple(r"\b" + re.escape(w.lower()) + r"\b" for w in dict.fromkeys(words) if w)
        listed = listed or (r"\b" + re.escape(relation.replace("_", " ")) + r"\b",)
    return tuple(re.compile(p, re.IGNORECASE) for p in listed)


def cue_words(relation: str) -> str:
    """A few words to search for ``relation`` with ("born", "mayor")."""
    rt = relation_text(relation)
    if rt.keywords:
        return rt.keywords[0]
    first = CUES.get(relation, ())
    if first:
        plain = re.sub(r"\\b|\(\?P<v>[^)]*\)|[()?:*+.\\|\[\]^$]", " ", first[0])
        return _SPACE.sub(" ", plain).strip()
    return relation.replace("_", " ")


@dataclass(frozen=True)
class PageText:
    """What the agent has read of one page: its title, passages (id, text) and links."""

    title: str
    passages: tuple[tuple[int, str], ...]
    links: tuple[str, ...] = ()


def name_forms(name: str) -> tuple[str, ...]:
    """How a title may read in prose: itself, without a parenthetical, without a trailing
    "language"."""
    forms = [name, _PAREN.sub("", name)]
    forms += [f.split(", ", 1)[0] for f in forms]  # "Lindgane, Hanaeland"
    forms += [f.removesuffix(" language") for f in forms]
    return tuple(f for f in dict.fromkeys(forms) if f)


def norm_name(name: str) -> str:
    """A name compared loosely: case-folded, without a parenthetical or "language"."""
    bare = _PAREN.sub("", name).split(", ", 1)[0].removesuffix(" language")
    return _SPACE.sub(" ", bare).casefold().strip()


def norm_literal(text: str) -> str:
    """A literal compared loosely (no thousands commas, case-folded)."""
    return _SPACE.sub(" ", text.replace(",", "")).casefold().strip()


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.split("\n"):
        out.extend(split_sentences(line))
    return out


def _cue_at(sentence: str, relation: str) -> tuple[int, str | None] | None:
    """Where the first cue of ``relation`` matches in ``sentence`` (and a text value it
    captured), or None."""
    for p in cues(relation):
        m = p.search(sentence)
        if m is not None:
            v = m.groupdict().get("v")
            return m.start(), (v.strip() if v else None)
    return None


def _own(title: str) -> set[str]:
    return set(_WORD.findall(title.casefold()))


def _names_in(sentence: str, title: str, links: Sequence[str]) -> list[tuple[int, str]]:
    """(position, name) of the entities a sentence names other than the page's own."""
    own = _own(title)
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for link in sorted(links, key=len, reverse=True):
        if norm_name(link) == norm_name(title):
            continue
        for form in name_forms(link):
            at = sentence.find(form)
            if at >= 0 and not any(a <= at < b for a, b in taken):
                found.append((at, link))
                taken.append((at, at + len(form)))
                break
    for m in _NAME.finditer(sentence):
        span = m.group(0).strip()
        if span in _STOP_NAMES or span in MONTHS or any(a <= m.start() < b for a, b in taken):
            continue
        words = span.split()
        while words and words[0] in _STOP_NAMES:
            words = words[1:]
        span = " ".join(words)
        if not span or _own(span) <= own or span.isdigit():
            continue
        found.append((m.start(), span))
    return found


def _dates_in(sentence: str) -> list[tuple[int, Lit]]:
    out = [(m.start(), Lit(m.group(0), float(m.group(3)))) for m in _DATE.finditer(sentence)]
    out += [
        (m.start(), Lit(f"{m.group(2)} {m.group(1)} {m.group(3)}", float(m.group(3))))
        for m in _DATE_US.finditer(sentence)
    ]
    if out:
        return out
    return [(m.start(), Lit(m.group(1), float(m.group(1)))) for m in _YEAR.finditer(sentence)]


def _numbers_in(sentence: str) -> list[tuple[int, Lit]]:
    dates = [(m.start(), m.end()) for m in _DATE.finditer(sentence)]
    out = []
    for m in _NUMBER.finditer(sentence):
        if any(a <= m.start() < b for a, b in dates):
            continue
        text = m.group(0)
        out.append((m.start(), Lit(text, float(text.replace(",", "")))))
    return out


def _by_distance(cands: list[tuple[int, Found]], at: int) -> list[Found]:
    """Candidates nearest the cue first (after it before before it, on ties)."""
    ordered = sorted(cands, key=lambda c: (abs(c[0] - at), c[0] < at))
    out: list[Found] = []
    for _, x in ordered:
        if x not in out:
            out.append(x)
    return out


def read_values(page: PageText, relation: str) -> list[tuple[Found, int]]:
    """The ``relation`` objects ``page`` states, each with the passage that states it
    (nearest-to-cue first within a sentence, sentences in page order)."""
    vtype = relation_type(relation)
    out: list[tuple[Found, int]] = []
    for pid, text in page.passages:
        for sentence in _sentences(text):
            hit = _cue_at(sentence, relation)
            if hit is None:
                continue
            at, captured = hit
            got: list[Found]
            if captured is not None:
                got = [Lit(captured)]
            elif vtype == "date":
                got = _by_distance(list(_dates_in(sentence)), at)[:1]
            elif vtype == "number":
                got = _by_distance(list(_numbers_in(sentence)), at)[:1]
            else:
                got = _by_distance(list(_names_in(sentence, page.title, page.links)), at)
                if vtype == "text":
                    got = [Lit(x) if isinstance(x, str) else x for x in got[:1]]
            for x in got:
                if all(x != y for y, _ in out):
                    out.append((x, pid))
    if vtype == "date":  # "born on 6 July 1960" over the lead's "(born 1960)"
        out.sort(key=lambda xp: _DATE.search(xp[0].text) is None if isinstance(xp[0], Lit) else 1)
    return out


def states(page: PageText, relation: str, target: Found) -> int | None:
    """The passage of ``page`` whose sentence states ``target`` as a ``relation`` object
    (a sentence with the relation's cue that names the target), or None."""
    for pid, text in page.passages:
        if sentence_states(page.title, text, relation, target):
            return pid
    return None


def sentence_states(title: str, text: str, relation: str, target: Found) -> bool:
    """Whether some sentence of ``text`` (on the page ``title``) states ``target`` as a
    ``relation`` object."""
    for sentence in _sentences(text):
        if _cue_at(sentence, relation) is None:
            continue
        if isinstance(target, str):
            if norm_name(target) == norm_name(title):
                return False  # the page's own name is its subject, not an object
            low = sentence.casefold()
            if any(re.search(r"(?<!\w)" + re.escape(f.casefold()) + r"(?!\w)", low)
                   for f in name_forms(target)):  # fmt: skip
                return True
        else:
            vtype = relation_type(relation)
            found = _dates_in(sentence) if vtype == "date" else _numbers_in(sentence)
            if vtype == "text":
                if norm_literal(target.text) in norm_literal(sentence):
                    return True
                continue
            if any(same_literal(x, target) for _, x in found):
                return True
    return False


def same_literal(a: Lit, b: Lit) -> bool:
    """Whether two literals read apart are the same value (a full date equals its own
    spelling; a year equals a year; numbers by value)."""
    if norm_literal(a.text) == norm_literal(b.text):
        return True
    full_a, full_b = _DATE.search(a.text) is not None, _DATE.search(b.text) is not None
    if full_a or full_b:
        return False
    return a.measure is not None and a.measure == b.measure


def is_kind(page: PageText, kind: str) -> bool:
    """Whether ``page``'s lead says it is a ``kind`` ("X is a city", "X (born 1901) is a
    poet" for a person)."""
    if not page.passages:
        return False
    lead = page.passages[0][1].split("\n", 1)[0]
    if kind == "person":
        return re.search(r"\((?:born |b\. |\d{3,4}\s*[–-])", lead) is not None
    return (
        re.search(r"(?<!\w)" + re.escape(kind.casefold()) + r"s?(?!\w)", lead.casefold())
        is not None
    )


__all__ = [
    "CUES",
    "PageText",
    "cue_words",
    "cues",
    "is_kind",
    "name_forms",
    "norm_literal",
    "norm_name",
    "read_values",
    "relation_type",
    "same_literal",
    "sentence_states",
    "states",
]
