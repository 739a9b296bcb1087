"""Typed facts from the first sentence of an article, the one Wikipedia style guides fix.

"Alain Connes (born 1 April 1947) is a French mathematician" gives a birth date, a
nationality (the country of the lexicon's nationality word), an occupation and instance of
*person*; "Alabama is a state located in the southeastern region of the United States"
gives instance of *state* and where it lies (the first link of the place phrase); the
Japanese "士郎正宗（1961年11月23日 - ）は、日本の漫画家・イラストレーター。兵庫県神戸市出身。"
gives the birth date, nationality, both occupations and the linked places of origin.

Each language has one reader (English, Japanese, German, French, Spanish, Italian): the
dates of the parenthesis after the name (or the French apposition), the copula, then the
description read with the lexicon (:mod:`wikigym.corpora.lexicon`). Nothing is guessed:
a word the lexicon does not know gives no fact. :data:`LEAD_VERSION` is bumped with any
change to what is read (snapshot ids cover it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from wikigym.corpora.infobox_values import parse_date
from wikigym.corpora.lexicon import Lexicon, lexicon
from wikigym.corpora.records import Link

LEAD_VERSION = "lead/1"  # bumped by any change to what a lead gives
MAX_SENTENCE = 600  # characters of the first sentence read at most
_BC = re.compile(r"\b(?:BC|BCE|B\.C\.)\b|v\. Chr\.|av\. J\.-C\.|a\. ?C\.|紀元前")


@dataclass(frozen=True, slots=True)
class LeadFact:
    """A fact the lead states.

    Attributes:
        relation: Relation of the vocabulary.
        object: ISO date, canonical word or entity title.
        value_type: ``entity``, ``date`` or ``text``.
        object_title: Title of the entity, for entity objects.
        start: Offset in the lead section's text of the sentence that states it.
        sentence: That sentence.
    """

    relation: str
    object: str
    value_type: str
    object_title: str | None
    start: int
    sentence: str


_VTYPES = {
    "birth_date": "date", "death_date": "date", "born_in": "entity", "died_in": "entity",
    "nationality": "entity", "occupation": "text", "instance_of": "text", "origin": "entity",
    "located_in": "entity", "situated_in": "entity", "capital_of": "entity",
    "position_held": "entity", "capital": "entity", "borders": "entity",
    "educated_at": "entity", "spouse": "entity", "member_of": "entity", "author": "entity",
    "director": "entity", "music_by": "entity", "founded_by": "entity",
    "headquarters": "entity",
}  # fmt: skip


class _Reader:
    """What one lead's reader collects."""

    def __init__(self, title: str, text: str, links: Sequence[Link], lex: Lexicon) -> None:
        self.title = title
        self.text = text
        self.links = links
        self.lex = lex
        self.facts: list[LeadFact] = []

    def add(
        self, relation: str, obj: str | None, start: int, end: int, title: str | None = None
    ) -> None:
        if not obj:
            return
        sentence = self.text[start:end].strip()
        self.facts.append(LeadFact(relation, obj, _VTYPES[relation], title, start, sentence))

    def link_in(self, a: int, b: int) -> list[str]:
        """Targets of the links that start inside ``[a, b)`` of the lead, in order."""
        return [link.target for link in self.links if a <= link.start < b]

    def place(
        self, relation: str, a: int, b: int, end: int, start: int, any_place: bool = False
    ) -> None:
        """The first link inside ``[a, b)`` as where the subject lies (``relation`` for a
        country of the lexicon, or for any place with ``any_place``; else situated_in)."""
        targets = self.link_in(a, b)
        if targets:
            t = targets[0]
            rel = relation if any_place or t in self.lex.countries else "situated_in"
            self.add(rel, t, start, end, t)


def _sentence_end(text: str, start: int, language: str) -> int:
    """End of the sentence that starts at ``start`` (its full stop included)."""
    if language == "ja":
        at = text.find("。", start)
        return len(text) if at < 0 else at + 1
    depth = 0
    i = start
    n = min(len(text), start + MAX_SENTENCE)
    while i < n:
        ch = text[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch == "." and depth == 0:
            prev = text[max(start, i - 4) : i]
            nxt = text[i + 1 : i + 3]
            # "U.S.", "c.", "St.", a single initial: not the end of the sentence.
            if (nxt[:1] in ("", "\n") or (nxt[:1] == " " and nxt[1:2].isupper())) and not (
                re.search(r"(?:\b[A-Z]|\bSt|\bc|\bca|\bDr|\bMr|\bNo|\bvs|\bJr|\bSr)$", prev)
            ):
                return i + 1
        elif ch == "\n" and depth == 0:
            return i
        i += 1
    return n


def _paren_after_name(text: str, start: int, end: int, opener: str = "(") -> tuple[int, int]:
    """``(open, close)`` of the first top-level parenthesis of the sentence, if it comes
    before the copula region (within the first 250 characters), else ``(-1, -1)``."""
    at = text.find(opener, start, min(end, start + 250))
    if at < 0:
        return -1, -1
    {"(": ")", "（": "）"}[opener]
    depth = 0
    for i in range(at, end):
        if text[i] in "(（":
            depth += 1
        elif text[i] in ")）":
            depth -= 1
            if depth == 0:
                return at, i
    return -1, -1


_DASH = re.compile(r"\s*[–—−-]\s*|\s+to\s+")


def _life_dates(part: str, language: str) -> tuple[str | None, str | None]:
    """(birth, death) of the dates of a parenthesis part ("12 May 1820 – 3 June 1890",
    "born 1 April 1947", "– March 6, 1982"); only full dates or years, never BC."""
    if _BC.search(part):
        return None, None
    born = re.search(r"\b(?:born|geb\.|né|née|nato|nata|nacido|nacida)\b", part)
    pieces = _DASH.split(part, maxsplit=1)
    if born is not None:
        return parse_date(part[born.end() :], language), None
    if len(pieces) == 2:
        a, b = pieces
        return parse_date(a, language) if a.strip() else None, parse_date(b, language)
    return None, None


def _date_only(text: str, language: str) -> str | None:
    """A date, when ``text`` holds one with at least a year of four digits."""
    got = parse_date(text, language)
    return got if got and re.search(r"\d{4}", text) else None


# ---- English -------------------------------------------------------------------------------

_EN_COPULA = re.compile(r"\b(?:is|was|are|were)\s+(?:(?:an?|the)\s+)")
_EN_STOP = re.compile(
    r"\s(?:who|which|that|whose|best|known|from|born|located|situated|based|in|of|for|"
    r"with|by|on|at|since|during|serving|currently|and\s+(?:the|a|an|one|former|was|is))\b|"
    r"[;:(]|,\s*(?:who|which|and\s+the|the|a|an|currently|best)\b"
)
_EN_ORDINAL_OFFICE = re.compile(
    r"^\d+(?:st|nd|rd|th)\s+(?P<office>(?:President|Vice President|Prime Minister|Governor|"
    r"Mayor|Chancellor|Secretary-General)\s+of\s+(?:the\s+)?(?P<place>[A-Z][^,;.()]+?))"
    r"(?=\s*(?:,|\.|;|$|\s+(?:from|and|who|serving)\b))"
)


def _en_head_items(desc: str) -> list[str]:
    """The items of a description's head ("French painter and sculptor" -> two)."""
    cut = _EN_STOP.search(desc)
    head = desc[: cut.start()] if cut else desc
    items = re.split(r",\s*(?:and\s+)?|\s+and\s+|\s*&\s*", head.strip().rstrip(",."))
    return [i.strip() for i in items if i.strip()]


def _suffix_word(item: str, table: dict[str, str]) -> tuple[str, str] | None:
    """The longest form of ``table`` that ``item`` ends with at a word start:
    ``(canonical, words before it)``."""
    words = item.split()
    for k in range(min(4, len(words)), 0, -1):
        tail = " ".join(words[-k:])
        got = table.get(tail.casefold())
        if got:
            return got, " ".join(words[:-k])
    return None


def _read_en(r: _Reader, start: int, end: int) -> None:
    text, _lex = r.text, r.lex
    sentence = text[start:end]
    a, b = _paren_after_name(text, start, end)
    dates: list[tuple[str, str]] = []
    said_born = False
    if a >= 0:
        for part in text[a + 1 : b].split(";"):
            born, died = _life_dates(part, "en")
            said_born = said_born or "born" in part
            if born and re.search(r"\d{4}", part):
                dates.append(("birth_date", born))
            if died:
                dates.append(("death_date", died))
    before = len(r.facts)
    cop = _EN_COPULA.search(sentence, (b - start + 1) if b >= 0 else 0)
    if cop is not None and cop.start() <= 300 and r.lex.occupation(r.title) is None:
        _read_en_description(r, start, end, start + cop.end())
    if cop is None:  # "X (dates) served as a general in ...": the occupation it names
        served = re.search(
            r"\bserved as (?:an? )?([a-z][a-z -]{2,40}?)(?= in | of | for |,|\.)", sentence
        )
        occ = lex_occupation = r.lex.occupation(served.group(1)) if served else None
        if lex_occupation:
            r.add("occupation", occ, start, end)
            r.add("instance_of", "person", start, end)
    person = any(f.relation == "occupation" or f.object == "person" for f in r.facts[before:])
    if person:  # "... born in the city of [[Stagira]]": the first place linked after it
        for word, relation in (("born", "born_in"), ("died", "died_in")):
            m = re.search(rf"\b{word} (?:in|at) ", sentence)
            if m:
                targets = r.link_in(start + m.end(), end)
                if targets:
                    r.add(relation, targets[0], start, end, targets[0])
    # Dates in the parenthesis are a life's only for a person ("The American Revolutionary
    # War (1775-1783)" is a war): one the description makes a person, one "born", or two
    # dates to the day.
    if person or said_born or (len(dates) == 2 and all(len(d) == 10 for _, d in dates)):
        for relation, date in dates:
            r.add(relation, date, start, end)
    _read_en_cues(r, person or said_born)


def _read_en_description(r: _Reader, start: int, end: int, desc_at: int) -> None:
    text, lex = r.text, r.lex
    desc = text[desc_at:end].rstrip(".")
    office = _EN_ORDINAL_OFFICE.match(desc)
    if office is not None:
        r.add("position_held", office.group("office"), start, end, office.group("office"))
        r.add("instance_of", "person", start, end)
        return
    items = _en_head_items(desc)
    if not items or len(items[0].split()) > 6:
        return
    person = False
    first = True
    # "a Soviet and Russian filmmaker": nationalities alone, then the one an occupation has.
    waiting: list[str] = []
    for item in items:
        item = re.sub(r"^\d+(?:st|nd|rd|th)-century\s+", "", item)
        occ = _suffix_word(item, lex.occupations)
        if occ is None and first and lex.nationality(item) and not item.endswith("-born"):
            waiting.append(item)
            continue
        if occ is not None:
            occupation, before = occ
            nat = _nationality_before(before, lex)
            # Later items name an occupation alone ("producer", "screenwriter"), or with
            # the nationality the first ones wait for.
            if (
                not first
                and before
                and not (waiting and nat)
                and not all(w.islower() and w.isalpha() for w in before.split())
            ):
                continue
            r.add("occupation", occupation, start, end)
            person = True
            if first or waiting:
                for word in waiting:
                    country = lex.nationality(word)
                    r.add("nationality", country, start, end, country)
                if nat:
                    r.add("nationality", nat, start, end, nat)
                waiting = []
        elif first:
            cls = _suffix_word(item, lex.singular_classes)
            if cls is not None:
                r.add("instance_of", cls[0], start, end)
                loc = re.match(r"\s*(?:\S+\s+){0,1}(?:located |situated )?in\b", desc[len(item) :])
                if loc is not None:
                    at = desc_at + desc.find(item) + len(item)
                    r.place("located_in", at, end, end, start)
        first = False
    if person:
        r.add("instance_of", "person", start, end)


def _nationality_before(before: str, lex: Lexicon) -> str | None:
    """The nationality word right before an occupation: the last word (or two) that the
    lexicon knows, skipping adjectives ("pioneering Canadian-born American" -> United
    States; a "-born" word names a birthplace, not a nationality)."""
    words = before.split()
    for i in range(len(words), 0, -1):
        for k in (2, 1):
            if i - k < 0:
                continue
            phrase = " ".join(words[i - k : i])
            if phrase.endswith("-born"):
                continue
            got = lex.nationality(phrase)
            if got:
                return got
    return None


# Cues of the lead paragraph's other sentences: (regex, relation, every link of the clause
# or only the first, whether the subject must be a person). The value is the link that
# follows the cue in the same sentence: a cue names the relation, the link the entity.
_EN_CUES: tuple[tuple[re.Pattern[str], str, bool, bool | None], ...] = (
    (
        re.compile(
            r"\b(?:[Ii]ts|[Tt]he) capital(?: city)?(?: and (?:largest|most populous) city)? is "
        ),
        "capital",
        False,
        False,
    ),
    (re.compile(r"\b(?:is|was) the capital(?: city)? of "), "capital_of", False, False),
    (
        re.compile(r"\b(?:is |are )?bordered by |\bborders |\bshares (?:a |its )?borders? with "),
        "borders",
        True,
        False,
    ),
    (re.compile(r"\b(?:was|is) born (?:in|at) |\bborn (?:in|at) "), "born_in", False, True),
    (re.compile(r"\bdied (?:in|at) "), "died_in", False, True),
    (
        re.compile(r"\b(?:graduated from|studied at|educated at|attended) "),
        "educated_at",
        False,
        True,
    ),
    (re.compile(r"\b(?:married|his wife|her husband) "), "spouse", False, True),
    (re.compile(r"\b(?:a|the) member of (?:the )?"), "member_of", False, None),
    (re.compile(r"\b(?:written|authored) by "), "author", False, False),
    (re.compile(r"\bdirected by "), "director", False, False),
    (re.compile(r"\bcomposed by |\bby the (?:[A-Z]\w+ )?composer "), "music_by", False, False),
    (re.compile(r"\bfounded by "), "founded_by", False, False),
    (re.compile(r"\bheadquartered in "), "headquarters", False, False),
)
_LEAD_PARAGRAPH = 1500  # characters of the lead read for cues


def _read_en_cues(r: _Reader, person: bool) -> None:
    """Facts the lead paragraph's sentences state through a cue and a link."""
    text = r.text
    limit = text.find("\n\n")
    limit = min(len(text), _LEAD_PARAGRAPH if limit < 0 else min(limit, _LEAD_PARAGRAPH))
    start = len(text) - len(text.lstrip())
    while start < limit:
        end = _sentence_end(text, start, "en")
        if end <= start:
            break
        sentence = text[start:end]
        for cue, relation, every, for_person in _EN_CUES:
            if for_person is not None and for_person != person:
                continue
            m = cue.search(sentence)
            if m is None:
                continue
            at = start + m.end()
            clause = re.search(r"[;.]|, (?:and )?(?:which|who|where|while|but)\b", text[at:end])
            stop = at + clause.start() if clause else end
            targets = [t for link in r.links if at <= link.start < stop for t in (link.target,)]
            # The link must follow the cue at once (a few words of its anchor aside).
            first = next((link for link in r.links if at <= link.start < stop), None)
            if first is None or first.start - at > 12:
                continue
            for t in targets if every else targets[:1]:
                if t != r.title:
                    r.add(relation, t, start, end, t)
        start = end
        while start < limit and text[start] in " \n":
            start += 1


# ---- Japanese ------------------------------------------------------------------------------

_JA_DATE = r"\d{3,4}年(?:〈[^〉]*〉|（[^）]*）)?(?:\d{1,2}月\d{1,2}日)?"
_JA_LIFE = re.compile(rf"({_JA_DATE})\s*[-–－〜~]\s*({_JA_DATE})?\s*$")
_JA_DESC = re.compile(r"^(?:(?P<nat>[^、。の]{1,20})の)?(?P<occ>[^。]{1,80}?)(?:である|です)?。")
_JA_ORIGIN = re.compile(r"([^。、]{1,40}?)(?:の)?出身(?:。|、|の)")


def _ja_date(text: str) -> str | None:
    clean = re.sub(r"〈[^〉]*〉|（[^）]*）", "", text)
    return _date_only(clean, "ja")


def _read_ja(r: _Reader, start: int, end: int) -> None:
    text, lex = r.text, r.lex
    a, b = _paren_after_name(text, start, end, "（")
    if a < 0:
        a, b = _paren_after_name(text, start, end, "(")
    if a >= 0 and not _BC.search(text[a:b]):
        inner = text[a + 1 : b]
        m = _JA_LIFE.search(inner.split("、")[-1]) or _JA_LIFE.search(inner)
        if m:
            r.add("birth_date", _ja_date(m.group(1)), start, end)
            if m.group(2):
                r.add("death_date", _ja_date(m.group(2)), start, end)
    topic = text.find("は", b + 1 if b >= 0 else start, end)
    if topic < 0:
        return
    body = text[topic + 1 : end].lstrip("、 ")
    desc = _JA_DESC.match(body)
    person = False
    if desc is not None:
        nat_text = desc.group("nat") or ""
        origin = None
        if nat_text.endswith("出身"):
            origin, nat_text = nat_text[:-2], ""
        nat = lex.nationality(nat_text) if nat_text else None
        words = re.split(r"[、・]|および|及び", desc.group("occ"))
        for w in words:
            w = re.sub(r"^(?:女性|男性)", "", w.strip())
            occ = lex.occupation(w)
            if occ is None and "の" in w:  # "古代ギリシアの哲学者"
                left, _, right = w.rpartition("の")
                occ = lex.occupation(re.sub(r"^(?:女性|男性)", "", right))
                nat = nat or lex.nationality(left)
            if occ:
                r.add("occupation", occ, start, end)
                person = True
            elif w.endswith("の首都") and w[:-3]:
                country = lex.nationality(w[:-3])
                if country:
                    r.add("capital_of", country, start, end, country)
        if person and nat:
            r.add("nationality", nat, start, end, nat)
        if origin:
            at = text.find(origin, topic)
            if at >= 0:
                r.place("origin", at, at + len(origin), end, start, any_place=True)
    if person:
        r.add("instance_of", "人物", start, end)
        # "兵庫県神戸市出身。" in the next sentences: every linked place of it.
        after = text[end : end + 200]
        m = _JA_ORIGIN.search(after)
        if m:
            s2 = end + m.start()
            e2 = _sentence_end(text, s2, "ja")
            for t in r.link_in(end + m.start(1), end + m.end(1)):
                r.add("origin", t, s2, e2, t)


# ---- German, French, Spanish, Italian ------------------------------------------------------

_COPULAS = {
    "de": re.compile(r"\b(?:ist|war)\s+(?:ein|eine|einer|der|die|das)\s+"),
    "fr": re.compile(r"\b(?:est|était|fut)\s+(?:un|une|le|la|l')\s*"),
    "es": re.compile(r"\b(?:es|fue|era)\s+(?:un|una|el|la)\s+"),
    "it": re.compile(r"\b(?:è|era|fu)(?:\s+stat[oa])?\s+(?:un|una|uno|un'|il|la|lo|l')\s*"),
}
_ANDS = {"de": r"\s+und\s+", "fr": r"\s+et\s+", "es": r"\s+[ye]\s+", "it": r"\s+[e]d?\s+"}
_DE_ENDINGS = ("er", "e", "es", "en", "em", "")
_STOPS = {
    "de": re.compile(r"[,;(]|\s(?:der|die|das|des|aus|in|im|von|mit|für|bei)\s"),
    "fr": re.compile(r"[,;(]|\s(?:qui|de|du|des|dans|en|au|à|pour|avec|né|née|connu)\b"),
    "es": re.compile(r"[,;(]|\s(?:que|de|del|en|con|para|conocid[oa])\b"),
    "it": re.compile(r"[,;(]|\s(?:che|di|del|della|in|con|per|noto|nota)\b"),
}
_BIRTH = {
    "de": re.compile(r"\*\s*([^;†]*?\d{3,4})(?:\s+in\s+[^;†]*)?(?:;|$)"),
    "fr": re.compile(r"\bnée? (?:le |en )?([^,]*?\d{3,4})"),
}
_DEATH = {
    "de": re.compile(r"†\s*([^;*]*?\d{3,4})(?:\s+in\s+[^;*]*)?(?:;|$)"),
    "fr": re.compile(r"\bmorte? (?:le |en )?([^,]*?\d{3,4})"),
}


def _nationality_word(word: str, lex: Lexicon) -> str | None:
    if lex.language == "de":
        w = word.casefold()
        for e in _DE_ENDINGS:
            if e and w.endswith(e):
                got = lex.nationalities.get(w[: -len(e)])
                if got:
                    return got
        return lex.nationalities.get(w)
    return lex.nationality(word)


def _read_romance_german(r: _Reader, start: int, end: int, lang: str) -> None:
    text, lex = r.text, r.lex
    a, b = _paren_after_name(text, start, end)
    region = text[a + 1 : b] if a >= 0 else text[start : min(end, start + 300)]
    if not _BC.search(region):
        if lang in _BIRTH:
            m = _BIRTH[lang].search(region)
            if m:
                r.add("birth_date", _date_only(m.group(1), lang), start, end)
            m = _DEATH[lang].search(region)
            if m:
                r.add("death_date", _date_only(m.group(1), lang), start, end)
        elif a >= 0:  # es/it: "(Lione, 12 maggio 1820 – Parigi, 3 giugno 1890)"
            parts = _DASH.split(region, maxsplit=1)
            if len(parts) == 2:
                r.add("birth_date", _date_only(parts[0], lang), start, end)
                r.add("death_date", _date_only(parts[1], lang), start, end)
    cop = _COPULAS[lang].search(text, b + 1 if b >= 0 else start, end)
    if cop is None or cop.start() - start > 400:
        return
    desc = text[cop.end() : end].rstrip(".")
    # The nationality adjective comes before the noun in German, after it elsewhere.
    words = desc.split()
    person = False
    nat = None
    stop = _STOPS[lang].search(desc)
    head = desc[: stop.start()] if stop else desc
    items = re.split(_ANDS[lang], head)
    for _i, item in enumerate(items):
        ws = item.split()
        if not ws:
            continue
        occ = None
        for k in range(min(3, len(ws)), 0, -1):  # longest occupation inside the item
            for j in range(0, len(ws) - k + 1):
                got = lex.occupation(" ".join(ws[j : j + k]))
                if got:
                    occ = (got, j, k)
                    break
            if occ:
                break
        if occ is None:
            continue
        r.add("occupation", occ[0], start, end)
        person = True
        others = ws[: occ[1]] + ws[occ[1] + occ[2] :]
        for w in others:
            nat = nat or _nationality_word(w, lex)
    if person and nat is None and words:
        nat = _nationality_word(head.split()[-1], lex) if head.split() else None
    if person:
        if nat:
            r.add("nationality", nat, start, end, nat)
        r.add("instance_of", {"de": "Person", "fr": "personne"}.get(lang, "persona"), start, end)


# ---- entry ---------------------------------------------------------------------------------


def lead_facts(
    title: str, text: str, links: Sequence[Link], language: str | None
) -> list[LeadFact]:
    """The facts of the first sentence of a lead section.

    Args:
        title: The page title (lists and disambiguation pages give nothing).
        text: The lead section's text.
        links: The lead section's links (offsets into ``text``).
        language: The wiki's language; one without a reader gives nothing.

    Returns:
        Facts in reading order, each (relation, object) once.
    """
    lang = (language or "en").split("-")[0].lower()
    lex = lexicon(lang)
    if lex is None or not text or _LISTS.match(title):
        return []
    start = len(text) - len(text.lstrip())
    end = _sentence_end(text, start, lang)
    r = _Reader(title, text, links, lex)
    if lang == "en":
        _read_en(r, start, end)
    elif lang == "ja":
        _read_ja(r, start, end)
    elif lang in _COPULAS:
        _read_romance_german(r, start, end, lang)
    out: dict[tuple[str, str], LeadFact] = {}
    for f in r.facts:
        out.setdefault((f.relation, f.object), f)
    return list(out.values())


_LISTS = re.compile(r"^(?:List of|Lists of|Liste |Liste der|Lista de|Liste des|Elenco )|一覧")
