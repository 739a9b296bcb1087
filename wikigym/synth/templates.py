"""Deterministic English phrasings of relations (several per relation, chosen by the RNG).

Placeholders: ``{s}`` the subject's noun phrase, ``{o}`` the object's (bare), ``{o_at}`` the
object with a preposition (dates: "on 2 February 1929", "in 1929", "in the 1920s"),
``{who}`` the relative pronoun of the described entity ("who" for people, "that" otherwise).

- ``nouns``: the object given the subject ("the birthplace of {s}").
- ``clauses``: the subject given the object ("{who} was born in {o}").
- ``fwd``: the object given the subject, as a clause ("{who} directed {s}"); default
  ``{who} is <noun>``.
- ``asks``: a question for a literal object ("When was {s} born?").
- ``role``: a short noun for counting ("How many novels have X as their author?").
- ``keywords``: words of the passage that states the fact (the oracle's ``find``).
"""

from __future__ import annotations

from dataclasses import dataclass

from wikigym.corpora.vocabulary import vocabulary


@dataclass(frozen=True, slots=True)
class RelText:
    nouns: tuple[str, ...]
    clauses: tuple[str, ...]
    fwd: tuple[str, ...] = ()
    asks: tuple[str, ...] = ()
    role: str | None = None
    keywords: tuple[str, ...] = ()


def _t(
    nouns: str | tuple[str, ...],
    clauses: str | tuple[str, ...],
    fwd: str | tuple[str, ...] = (),
    asks: str | tuple[str, ...] = (),
    role: str | None = None,
    keywords: str | tuple[str, ...] = (),
) -> RelText:
    def tup(x: str | tuple[str, ...]) -> tuple[str, ...]:
        return (x,) if isinstance(x, str) else x

    return RelText(tup(nouns), tup(clauses), tup(fwd), tup(asks), role, tup(keywords))


TEMPLATES: dict[str, RelText] = {
    "occupation": _t("the occupation of {s}", ("{who} worked as a {o}", "whose occupation was {o}"),
                     asks="What was the occupation of {s}?", keywords="is a"),
    "born_in": _t(("the birthplace of {s}", "the city where {s} was born"),
                  ("{who} was born in {o}", "whose birthplace is {o}"),
                  role="birthplace", keywords="born"),
    "birth_place": _t("the birthplace of {s}", ("{who} was born in {o}", "whose birthplace is {o}"),
                      asks="Where was {s} born?", role="birthplace", keywords="born"),
    "birth_date": _t("the birth date of {s}", "{who} was born {o_at}",
                     asks=("When was {s} born?", "On what date was {s} born?"), keywords="born"),
    "died_in": _t(("the place of death of {s}", "the city where {s} died"), "{who} died in {o}",
                  role="place of death", keywords="died"),
    "death_place": _t("the place of death of {s}", "{who} died in {o}",
                      asks="Where did {s} die?", keywords="died"),
    "death_date": _t("the date of death of {s}", "{who} died {o_at}",
                     asks=("When did {s} die?", "On what date did {s} die?"), keywords="died"),
    "nationality": _t("the country of citizenship of {s}",
                      ("{who} was a citizen of {o}", "whose nationality was {o}"),
                      asks="What was the nationality of {s}?", role="country of citizenship",
                      keywords="citizen"),
    "educated_at": _t("the alma mater of {s}", ("{who} studied at {o}", "{who} was educated at {o}"),
                      role="alma mater", keywords="attended"),
    "alma_mater": _t("the alma mater of {s}", ("{who} studied at {o}", "whose alma mater is {o}"),
                     asks="Where did {s} study?", keywords=()),
    "employer": _t("the employer of {s}", ("{who} was employed by {o}", "{who} worked for {o}"),
                   role="employer", keywords="employed"),
    "spouse": _t("the spouse of {s}", ("{who} was married to {o}", "{who} married {o}"),
                 fwd="{who} married {s}", asks="Who was the spouse of {s}?", keywords="married"),
    "award_received": _t("an award received by {s}", "{who} received the {o}",
                         fwd="{who} was received by {s}", keywords="awarded"),
    "notable_work": _t("a notable work of {s}", "{who} is known for {o}",
                       fwd="{who} is a notable work of {s}", keywords=("best known", "notable")),
    "member_of": _t("a group {s} belonged to", "{who} was a member of {o}",
                    fwd="{who} counted {s} among its members", role="group",
                    keywords="member"),
    "located_in": _t(("the country where {s} is located", "the country that {s} lies in"),
                     ("{who} is located in {o}", "{who} lies in {o}"), role="country",
                     keywords="located"),
    "population": _t("the population of {s}", "{who} has a population of {o}",
                     asks=("What is the population of {s}?", "How many people live in {s}?"),
                     keywords="population"),
    "founded": _t("the founding date of {s}", "{who} was founded {o_at}",
                  asks=("When was {s} founded?", "In what year was {s} founded?"),
                  keywords="founded"),
    "area_km2": _t("the area of {s} in square kilometres", "{who} covers {o} square kilometres",
                   asks="What is the area of {s} in square kilometres?", keywords="covers"),
    "mayor": _t("the mayor of {s}", "whose mayor is {o}", fwd="{who} serves as mayor of {s}",
                role="mayor", keywords="mayor"),
    "twinned_with": _t("the twin town of {s}", "{who} is twinned with {o}",
                       fwd="{who} is twinned with {s}", keywords="twinned"),
    "capital": _t("the capital of {s}", "whose capital is {o}", fwd="{who} is the capital of {s}",
                  asks="What is the capital of {s}?", keywords="capital"),
    "currency": _t("the currency of {s}", "whose currency is the {o}",
                   asks="What is the currency of {s}?", keywords="currency"),
    "independence_date": _t("the independence date of {s}", "{who} proclaimed independence {o_at}",
                            asks="When did {s} proclaim independence?", keywords="Independence"),
    "official_language": _t("the official language of {s}", "whose official language is {o}",
                            role="official language", keywords="official language"),
    "official_languages": _t("the official language of {s}", "whose official language is {o}",
                             asks="What is the official language of {s}?"),
    "language_family": _t("the language family of {s}", "{who} belongs to the {o} family",
                          asks="To which language family does {s} belong?", keywords="family"),
    "speakers": _t("the number of speakers of {s}", "{who} has {o} speakers",
                   asks="How many speakers does {s} have?", keywords="speakers"),
    "writing_system": _t("the writing system of {s}", "{who} is written in the {o}",
                         asks="In which writing system is {s} written?", keywords="written in"),
    "founded_by": _t("the founder of {s}", "{who} was founded by {o}", fwd="{who} founded {s}",
                     role="founder", keywords="founded"),
    "headquarters": _t(("the headquarters city of {s}", "the city where {s} is headquartered"),
                       ("{who} is headquartered in {o}", "whose headquarters are in {o}"),
                       role="headquarters", keywords="headquarters"),
    "founding_year": _t("the founding year of {s}", "{who} was founded {o_at}",
                        asks="In what year was {s} founded?", keywords="founded"),
    "ceo": _t("the chief executive of {s}", "whose chief executive is {o}",
              fwd="{who} serves as chief executive of {s}", role="chief executive",
              keywords="chief executive"),
    "industry": _t("the industry of {s}", "{who} operates in the {o} industry",
                   asks="In which industry does {s} operate?", keywords="company"),
    "employees": _t("the number of employees of {s}", "{who} has {o} employees",
                    asks="How many employees does {s} have?", keywords="employ"),
    "genre": _t("the genre of {s}", ("whose genre is {o}", "{who} belongs to the genre {o}"),
                asks="What is the genre of {s}?", keywords=()),
    "author": _t("the author of {s}", "{who} was written by {o}", fwd="{who} wrote {s}",
                 role="author", keywords="wrote"),
    "director": _t("the director of {s}", "{who} was directed by {o}", fwd="{who} directed {s}",
                   role="director", keywords="director"),
    "performer": _t("the performer of {s}", "{who} was recorded by {o}", fwd="{who} recorded {s}",
                    role="performer", keywords="album by"),
    "publication_year": _t("the year {s} first appeared", "{who} first appeared {o_at}",
                           asks="In what year did {s} first appear?",
                           keywords=("published in", "released in")),
    "publisher": _t("the publisher of {s}", "{who} was published by {o}",
                    fwd="{who} published {s}", role="publisher", keywords="published by"),
    "production_company": _t("the production company of {s}", "{who} was produced by {o}",
                             fwd="{who} produced {s}", role="production company",
                             keywords="produced by"),
    "record_label": _t("the record label of {s}", "{who} was issued by {o}",
                       fwd="{who} issued {s}", role="record label", keywords="label"),
    "language": _t("the language of {s}", "whose original language is {o}",
                   role="original language", keywords="written in"),
    "based_on": _t("the work that {s} is based on", "{who} is based on {o}",
                   fwd="{who} was adapted as {s}", keywords="based on"),
    "location": _t("the place where {s} took place", "{who} took place near {o}",
                   role="location", keywords="near"),
    "date": _t("the date of {s}", "{who} took place {o_at}",
               asks=("When did {s} take place?", "On what date did {s} take place?"),
               keywords=("fought on", "took place on")),
    "participants": _t("a participant of {s}", "{who} involved {o}", fwd="{who} took part in {s}",
                       role="participant", keywords="between"),
    "organiser": _t("the organiser of {s}", "{who} is organised by {o}", fwd="{who} organises {s}",
                    role="organiser", keywords="organised by"),
    "casualties": _t("the number of casualties of {s}", "{who} left about {o} casualties",
                     asks="How many casualties did {s} leave?", keywords="casualties"),
    "attendance": _t("the attendance of {s}", "{who} has drawn about {o} visitors",
                     asks="How many visitors have recent editions of {s} drawn?",
                     keywords="visitors"),
    "source_country": _t("the country where {s} rises", "{who} rises in {o}", role="source country",
                         keywords="source"),
    "flows_through": _t("a city on {s}", "{who} passes {o}", fwd="{who} lies on {s}",
                        keywords="passes"),
    "mouth": _t("the city at the mouth of {s}", "whose mouth is at {o}",
                fwd="{who} lies at the mouth of {s}", role="mouth", keywords="mouth"),
    "length_km": _t("the length of {s} in kilometres", "{who} is {o} kilometres long",
                    asks="How long is {s} in kilometres?", keywords="kilometres long"),
    "tributary_of": _t("the river that {s} flows into", "{who} is a tributary of {o}",
                       fwd="{who} receives {s} as a tributary", keywords="tributary"),
    "located_in_country": _t("the country where {s} is located", "{who} is located in {o}",
                             keywords="mountain in"),
    "elevation_m": _t("the elevation of {s} in metres", "{who} rises to {o} metres",
                      asks="How high is {s} in metres?", keywords="metres"),
    "first_ascent_by": _t("the first person to climb {s}", "{who} was first climbed by {o}",
                          fwd="{who} made the first ascent of {s}", keywords="first ascent"),
    "first_ascent_year": _t("the year of the first ascent of {s}", "{who} was first climbed {o_at}",
                            asks="In what year was {s} first climbed?", keywords="first ascent"),
    "mountain_range": _t("the mountain range of {s}", "{who} lies in the {o}",
                         asks="In which mountain range does {s} lie?", keywords="range"),
    "presented_by": _t("the presenter of {s}", "{who} is presented by {o}",
                       fwd="{who} presents {s}", role="presenter", keywords="awarded by"),
    "established_year": _t("the year {s} was first presented", "{who} was first presented {o_at}",
                           asks="In what year was {s} first presented?",
                           keywords="first presented"),
    "field": _t("the field of {s}", "{who} is awarded for {o}",
                asks="In which field is {s} awarded?", keywords="award for"),
    "links_to": _t("a page linked from the article on {s}", "whose article links to {o}",
                   fwd="{who} is linked from the article on {s}", keywords=()),
    "largest_city": _t("the largest city of {s}", "whose largest city is {o}",
                       asks="What is the largest city of {s}?", keywords="largest"),
    "population_estimate": _t("the estimated population of {s}",
                              "{who} has an estimated population of {o}",
                              asks="What is the estimated population of {s}?"),
    "country": _t("the country of {s}", "{who} is from {o}", asks="What is the country of {s}?"),
}  # fmt: skip


def vocabulary_text(relation: str) -> RelText | None:
    """The phrasings the relation vocabulary of real infoboxes gives ``relation`` (None
    when it has none: world relations keep theirs here)."""
    data = vocabulary().phrasing(relation)
    if data is None:
        return None
    return _t(
        tuple(data["nouns"]),
        tuple(data["clauses"]),
        tuple(data.get("fwd", ())),
        tuple(data.get("asks", ())),
        data.get("role"),
        tuple(data.get("keywords", ())),
    )


def has_phrasing(relation: str) -> bool:
    """Whether ``relation`` has its own phrasings (a world template or the vocabulary's)."""
    return relation in TEMPLATES or vocabulary().phrasing(relation) is not None


def relation_text(relation: str) -> RelText:
    """The phrasings of ``relation``: the world's template, else the relation vocabulary's,
    else a generic form (never reached by real-data questions, which use typed relations
    only)."""
    t = TEMPLATES.get(relation) or vocabulary_text(relation)
    if t is not None:
        return t
    words = relation.replace("_", " ").strip()
    return RelText(
        nouns=(f"the {words} of {{s}}",),
        clauses=(f"whose {words} is {{o}}",),
        asks=(f"What is the {words} of {{s}}?",),
        role=None,
        keywords=(),
    )


_IRREGULAR = {"person": "people", "city": "cities", "country": "countries", "company": "companies"}


def plural(noun: str) -> str:
    """English plural of a kind noun (good enough for entity kinds)."""
    if noun in _IRREGULAR:
        return _IRREGULAR[noun]
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


# Past tenses of the verbs that open clause templates, for "did not <verb>".
_PAST = {
    "died": "die", "worked": "work", "studied": "study", "received": "receive",
    "married": "marry", "proclaimed": "proclaim", "took": "take", "involved": "involve",
    "first": "first",
}  # fmt: skip
# Present tenses, for "does not <verb>".
_PRESENT = {
    "lies": "lie", "covers": "cover", "belongs": "belong", "operates": "operate",
    "passes": "pass", "rises": "rise", "counted": "count",
}  # fmt: skip


def negate_clause(template: str) -> str | None:
    """The negation of one clause template ("{who} was born in {o}" -> "{who} was not born
    in {o}"; "{who} died in {o}" -> "{who} did not die in {o}"; "whose mayor is {o}" ->
    "whose mayor is not {o}"), or None for a form it cannot negate."""
    words = template.split(" ")
    if len(words) < 3:
        return None
    if words[0] == "{who}":
        verb = words[1]
        if verb in ("was", "is", "were", "has", "had"):
            participle = words[2].endswith(("ed", "wn", "en"))
            if verb in ("has", "had") and not participle:
                neg = ["does" if verb == "has" else "did", "not", "have"]
                return " ".join([words[0], *neg, *words[2:]])
            return " ".join([words[0], verb, "not", *words[2:]])
        if verb == "first":  # "{who} first appeared ..."
            base = {"appeared": "appear", "climbed": "climb"}.get(words[2])
            return (
                None
                if base is None
                else " ".join([words[0], "did", "not", "first", base, *words[3:]])
            )
        if verb in _PAST:
            return " ".join([words[0], "did", "not", _PAST[verb], *words[2:]])
        if verb in _PRESENT:
            return " ".join([words[0], "does", "not", _PRESENT[verb], *words[2:]])
        return None
    if words[0] == "whose":
        for i, w in enumerate(words[1:], 1):
            if w in ("is", "was", "are", "were"):
                return " ".join([*words[: i + 1], "not", *words[i + 1 :]])
    return None


def negated_clauses(relation: str) -> tuple[str, ...]:
    """Negated clause templates of ``relation`` (empty when none negates cleanly)."""
    out = [n for c in relation_text(relation).clauses if (n := negate_clause(c)) is not None]
    return tuple(out)


def comparable(relation: str) -> bool:
    """Whether ``relation`` has a noun to compare by ("the population of {s}" gives "the
    largest population"; "the year {s} first appeared" gives none)."""
    noun = relation_text(relation).nouns[0]
    return noun.startswith("the ") and (noun.endswith(" of {s}") or " of {s} " in noun)
