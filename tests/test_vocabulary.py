"""The relation vocabulary of real infoboxes and its value parsers, on real wikitext."""

from __future__ import annotations

from pathlib import Path

import pytest

from wikigym.corpora.infobox_values import parse_date, parse_number, split_items
from wikigym.corpora.readers import iter_mediawiki
from wikigym.corpora.records import InfoboxField, RawPage
from wikigym.corpora.vocabulary import (
    TypedFact,
    Vocabulary,
    coverage,
    type_infobox,
    untyped_value_type,
    vocabulary,
)
from wikigym.corpora.wikitext import parse_wikitext
from wikigym.synth.templates import has_phrasing

FIXTURES = "wiki/infobox-fixtures/infobox-parser-fixtures/data"


def typed_of(shared_data: Path, name: str) -> dict[str, list[TypedFact]]:
    text = (shared_data / FIXTURES / f"{name}.txt").read_text(encoding="utf-8")
    page = parse_wikitext(RawPage(title=name, wikitext=text))
    out: dict[str, list[TypedFact]] = {}
    for fact in type_infobox(page.infobox, page.infobox_type, "en"):
        if fact.typed:
            out.setdefault(fact.relation, []).append(fact)
    return out


def objects(facts: dict[str, list[TypedFact]], relation: str) -> list[str]:
    return [f.object for f in facts.get(relation, [])]


# Expected values from the fixtures' own specs (dijs/infobox-parser test/*.js).
def test_fixture_people(shared_data: Path) -> None:
    queen = typed_of(shared_data, "queen")
    assert objects(queen, "birth_date") == ["1926-04-21"]  # {{Birth date|df=yes|1926|04|21}}
    assert objects(queen, "born_in") == ["Mayfair"]  # [[Mayfair]], London, England
    assert queen["born_in"][0].value_text == "Mayfair, London, England"
    yeager = typed_of(shared_data, "yeager")
    assert objects(yeager, "birth_date") == ["1923-02-13"]
    assert objects(yeager, "born_in") == ["Myra, West Virginia"]
    freddie = typed_of(shared_data, "freddie-mercury")
    assert objects(freddie, "birth_date") == ["1946-09-05"]
    assert "London" in freddie["died_in"][0].value_text
    occupations = objects(freddie, "occupation")  # {{flatlist|...}}
    assert "Singer-songwriter" in occupations and "record producer" in occupations
    assert not any("nowrap" in o for o in occupations)


def test_fixture_places(shared_data: Path) -> None:
    solok = typed_of(shared_data, "solok")
    assert objects(solok, "area_km2") == ["57.64"]
    assert objects(solok, "population") == ["62483"]
    assert objects(solok, "located_in") == ["Indonesia"]
    transylvania = typed_of(shared_data, "transylvania")
    assert objects(transylvania, "area_km2") == ["102834"]
    dublin = typed_of(shared_data, "dublin")
    assert objects(dublin, "population") == ["553165"]  # 553,165<ref>...</ref>
    assert objects(dublin, "located_in") == [
        "Republic of Ireland"
    ]  # [[Republic of Ireland|Ireland]]
    islamabad = typed_of(shared_data, "islamabad-full")
    assert objects(islamabad, "population") == ["1900000"]  # 1.9 million
    # area_total_km2 is preferred to area_total_sq_mi: one value per relation and page.
    cincinnati = typed_of(shared_data, "cincinnati")
    assert objects(cincinnati, "area_km2") == ["206.26"]


def test_dates_numbers_lists() -> None:
    assert parse_date("5 July 1962") == parse_date("July 5, 1962") == "1962-07-05"
    assert parse_date("1935年9月14日", "ja") == "1935-09-14"
    assert parse_date("12. März 1850", "de") == "1850-03-12"
    assert parse_date("September 1905") == "1905-09"
    assert parse_date("384 BC") is None and parse_date("no date") is None
    assert parse_number("392,7", "de") == 392.7 and parse_number("4.561", "de") == 4561
    assert parse_number("4 561", "fr") == 4561 and parse_number("4,561", "en") == 4561
    assert parse_number("約1億2,500万人", "ja") == 125_000_000
    assert parse_number("$181.71 billion") == 181.71e9
    assert parse_number("4,858,979 (2015 est.)") == 4858979
    assert parse_number("(; 3位)", "ja") is None  # a rank is no value
    assert parse_number("79.64 sq mi", unit="km2") == pytest.approx(206.27, abs=0.01)
    assert parse_number("919595", unit="km2", key_unit="sq mi") == pytest.approx(2381740, rel=1e-6)
    assert parse_number("2,413", unit="m", key_unit="ft") == pytest.approx(735.48, abs=0.01)
    assert split_items("漫画家・イラストレーター") == ["漫画家", "イラストレーター"]
    assert split_items("Writer (novelist), philosopher") == ["Writer", "philosopher"]


def test_four_digit_numbers_are_years_only_where_the_key_says_so() -> None:
    assert untyped_value_type("width", "1905", None) == "number"
    assert untyped_value_type("gini_year", "1995", None) == "date"
    assert untyped_value_type("founded", "1905", None) == "date"
    facts = type_infobox(
        (InfoboxField("population", "1929"), InfoboxField("established", "1929")), "settlement"
    )
    assert [(f.relation, f.object, f.value_type, f.typed) for f in facts] == [
        ("population", "1929", "number", True),
        ("founded", "1929", "date", True),
    ]
    # A key the vocabulary does not type stays raw (kept in the table, asked about never).
    raw = type_infobox((InfoboxField("leader_title2", "Prime Minister"),), "country")
    assert [(f.relation, f.typed) for f in raw] == [("leader_title2", False)]


def test_entity_values_are_links() -> None:
    lead = InfoboxField(
        "location",
        "Eastern North America, Gibraltar",
        "Gibraltar",
        ("Gibraltar",),
        leading_link=False,
    )
    listed = InfoboxField("combatant1", "France, Spain", "France", ("France", "Spain"), True)
    facts = type_infobox((lead, listed), "military conflict")
    # The place is not Gibraltar (a later item): untyped. A list gives every linked item.
    assert [(f.relation, f.object, f.typed) for f in facts] == [
        ("location", "Eastern North America, Gibraltar", False),
        ("participants", "France", True),
        ("participants", "Spain", True),
    ]


def test_vocabulary_table_is_consistent() -> None:
    vocab = vocabulary()
    assert vocab.version == "infobox-vocabulary/2"
    # Every relation phrases (its own phrasing, or the generated world's shared one).
    assert [r for r in vocab.relations if not has_phrasing(r)] == []
    assert vocab.kind("officeholder") == "person" and vocab.kind("基礎情報 国") is None
    assert vocab.kind("国") == "place"
    with pytest.raises(ValueError, match="claimed by"):
        Vocabulary(
            {
                "version": "x",
                "kinds": {"person": ["person"]},
                "relations": {
                    "a": {"value": "text", "keys": ["k"]},
                    "b": {"value": "text", "keys": ["k"], "kinds": ["person"]},
                },
            }
        )


@pytest.mark.parametrize(
    ("dump", "minimum"),
    [
        ("wiki/enwiki-excerpt-206pages.xml.bz2", 0.23),
        ("wiki/jawiki-excerpt-204articles.xml.bz2", 0.23),
    ],
)
def test_coverage_on_real_dumps(shared_data: Path, dump: str, minimum: float) -> None:
    pages = []
    for record in iter_mediawiki(shared_data / dump):
        if isinstance(record, RawPage):
            page = parse_wikitext(record)
            if page.infobox:
                pages.append((page.infobox, page.infobox_type, page.language))
    result = coverage(pages)
    # Measured: enwiki 0.239 of 1,153 fields (0.308 of 897 content fields); jawiki 0.245 of
    # 1,677 (0.360 of 1,143).
    assert result["coverage"] >= minimum and result["content_coverage"] >= minimum + 0.05


def typed_page(wikitext: str, language: str = "en") -> dict[str, list[str]]:
    page = parse_wikitext(RawPage(title="T", wikitext=wikitext, language=language))
    out: dict[str, list[str]] = {}
    for fact in type_infobox(page.infobox, page.infobox_type, page.language):
        if fact.typed:
            out.setdefault(fact.relation, []).append(fact.object)
    return out


def test_value_templates_and_lists_in_wikitext() -> None:
    facts = typed_page(
        "{{Infobox settlement\n| area_total_sq_mi = {{convert|100|sqmi|km2}}\n"
        "| established_date = {{start date|1850|3|12}}\n"
        "| official_languages = {{hlist|[[English language|English]]|[[French language|French]]}}\n"
        "}}\nText."
    )
    assert facts["area_km2"] == ["258.999"]  # {{convert}} in square miles, stored in km2
    assert facts["founded"] == ["1850-03-12"]
    assert facts["official_language"] == ["English language", "French language"]
    person = typed_page(
        "{{Infobox person\n| birth_date = {{birth date and age|1950|1|2}}\n"
        "| death_date = {{death date and age|2001|9|3|1950|1|2}}\n"
        "| occupation = {{plainlist|\n* Writer\n* Painter\n}}\n"
        "| spouse = [[Ann Example]]<br>[[Bea Example]]\n"
        "| children = {{ubl|[[Cy Example]]|[[Di Example]]}}\n}}\nText."
    )
    assert person["birth_date"] == ["1950-01-02"] and person["death_date"] == ["2001-09-03"]
    assert person["occupation"] == ["Writer", "Painter"]
    assert person["spouse"] == ["Ann Example", "Bea Example"]
    assert person["children"] == ["Cy Example", "Di Example"]


def test_numbers_in_the_wikis_locale() -> None:
    de = typed_page("{{Infobox Ort\n| Einwohner = 4.561\n| Fläche = 392,7\n}}\nText.", "de")
    assert de == {"population": ["4561"], "area_km2": ["392.7"]}
    fr = typed_page("{{Infobox Commune de France\n| population = 4 561\n}}\nTexte.", "fr")
    assert fr == {"population": ["4561"]}
