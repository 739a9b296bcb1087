"""Facts from categories, lead sentences and every value of an infobox field, on real pages.

The category and lead readers are checked on the shared dumps' real pages (enwiki and
jawiki excerpts, the German and French pages of the wikitext folders); Spanish and Italian
have no real page in the shared data, so their patterns are checked on category names and
lead sentences of the forms those wikis use ("Nati nel 1820", "Pittori francesi").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
from wikigym.corpora.categories import category_facts, category_vocabulary
from wikigym.corpora.factsources import page_facts, vocabulary_versions
from wikigym.corpora.leads import lead_facts
from wikigym.corpora.lexicon import lexicon, lexicon_version
from wikigym.corpora.manifest import compute_snapshot_id
from wikigym.corpora.readers import iter_mediawiki
from wikigym.corpora.records import InfoboxField, RawPage
from wikigym.corpora.vocabulary import type_infobox
from wikigym.corpora.wikitext import parse_wikitext

WIKITEXT = "wiki/wikitext"
FIXTURES = "wiki/infobox-fixtures/infobox-parser-fixtures/data"


def _pages(path: Path, titles: set[str]) -> dict[str, RawPage]:
    return {
        r.title: r for r in iter_mediawiki(path) if isinstance(r, RawPage) and r.title in titles
    }


def _facts(page: RawPage) -> list[tuple[str, str, str, str | None]]:
    p = parse_wikitext(page)
    text = "\n\n".join(s.text for s in p.sections)
    return [
        (f.source, f.relation, f.object, f.statement)
        for f in page_facts(p, text, 0)
        if f.typed and f.source != "infobox"
    ]


def _pairs(facts: list[tuple[str, str, str, str | None]], source: str) -> set[tuple[str, str]]:
    return {(r, o) for s, r, o, _ in facts if s == source}


@pytest.fixture(scope="module")
def en_pages(shared_data: Path) -> dict[str, RawPage]:
    return _pages(
        shared_data / "wiki/enwiki-excerpt-206pages.xml.bz2",
        {"Abraham Lincoln", "Algeria", "Alain Connes", "Animal Farm", "Alabama"},
    )


def test_english_categories(en_pages: dict[str, RawPage]) -> None:
    lincoln = _facts(en_pages["Abraham Lincoln"])
    cats = _pairs(lincoln, "category")
    # YAGO's heuristics: years of birth and death, occupation with nationality and century,
    # places of origin, burial, offices.
    assert {
        ("birth_date", "1809"),
        ("death_date", "1865"),
        ("occupation", "politician"),
        ("nationality", "United States"),
        ("active_century", "19th century"),
        ("origin", "Coles County, Illinois"),
        ("resting_place", "Oak Ridge Cemetery"),
        ("position_held", "President of the United States"),
        ("member_of", "Republican Party (United States)"),
    } <= cats
    # The statement is the category line.
    assert ("category", "birth_date", "1809", "Category:1809 births") in lincoln
    algeria = _pairs(_facts(en_pages["Algeria"]), "category")
    assert {
        ("continent", "Africa"),
        ("instance_of", "country"),
        ("member_of", "United Nations"),
        ("member_of", "Arab League"),
    } <= algeria
    animal_farm = _pairs(_facts(en_pages["Animal Farm"]), "category")
    assert {("author", "George Orwell"), ("publication_date", "1945")} <= animal_farm
    # "Southern United States" names no states: a class word capitalised inside a name.
    assert ("instance_of", "state") not in {
        (f.relation, f.object) for f in category_facts(["Southern United States"], "en")
    }


def test_english_lead_sentences(en_pages: dict[str, RawPage]) -> None:
    connes = _pairs(_facts(en_pages["Alain Connes"]), "lead")
    assert {
        ("birth_date", "1947-04-01"),
        ("nationality", "France"),
        ("occupation", "mathematician"),
        ("instance_of", "person"),
    } <= connes
    lincoln = _pairs(_facts(en_pages["Abraham Lincoln"]), "lead")
    assert {("birth_date", "1809-02-12"), ("death_date", "1865-04-15")} <= lincoln
    assert ("position_held", "President of the United States") in lincoln
    alabama = _pairs(_facts(en_pages["Alabama"]), "lead")
    assert ("instance_of", "state") in alabama
    assert {("borders", "Tennessee"), ("borders", "Mississippi")} <= alabama
    # Dates in parentheses are a life's only for a person (a war's years are not).
    war = lead_facts(
        "American Revolutionary War",
        "The American Revolutionary War (1775–1783) was a global war.",
        (),
        "en",
    )
    assert not [f for f in war if f.relation in ("birth_date", "death_date")]


def test_restated_facts_point_at_the_fact_they_restate(en_pages: dict[str, RawPage]) -> None:
    p = parse_wikitext(en_pages["Abraham Lincoln"])
    facts = page_facts(p, "\n\n".join(s.text for s in p.sections), 0)
    year = next(f for f in facts if f.source == "category" and f.relation == "birth_date")
    assert year.restates is not None
    # "1809 births" restates the full date another source gives.
    assert facts[year.restates].object == "1809-02-12"
    assert facts[year.restates].restates is None


def test_japanese_categories_and_leads(shared_data: Path) -> None:
    pages = _pages(shared_data / "wiki/jawiki-excerpt-204articles.xml.bz2", {"士郎正宗"})
    facts = _facts(pages["士郎正宗"])
    assert {
        ("birth_date", "1961"),
        ("occupation", "漫画家"),
        ("nationality", "日本"),
        ("origin", "神戸市"),
        ("educated_at", "大阪芸術大学"),  # "大阪芸術大学出身の人物": an alumnus, not a place
    } <= _pairs(facts, "category")
    assert {
        ("birth_date", "1961-11-23"),
        ("occupation", "漫画家"),
        ("occupation", "イラストレーター"),
        ("nationality", "日本"),
        ("origin", "兵庫県"),
        ("origin", "神戸市"),
    } <= _pairs(facts, "lead")
    assert ("active_century", "20世紀") in {
        (f.relation, f.object) for f in category_facts(["20世紀日本の女性著作家"], "ja")
    }


def test_german_and_french_pages(shared_data: Path) -> None:
    bisel = RawPage(
        "Sara C. Bisel",
        (shared_data / WIKITEXT / "Sara-C.-Bisel.txt").read_text(encoding="utf-8"),
        language="de",
    )
    facts = _facts(bisel)
    assert {
        ("birth_date", "1932"),
        ("death_date", "1996"),
        ("nationality", "Vereinigte Staaten"),
        ("occupation", "Klassischer Archäologe"),
        ("active_century", "20. Jahrhundert"),
        ("employer", "University of Maryland, College Park"),
    } <= _pairs(facts, "category")
    assert {
        ("birth_date", "1932-05-13"),
        ("death_date", "1996-02-04"),
        ("occupation", "Archäologe"),
        ("occupation", "Anthropologe"),
        ("nationality", "Vereinigte Staaten"),
    } <= _pairs(facts, "lead")
    ligne = RawPage(
        "Ligne", (shared_data / FIXTURES / "ligne.txt").read_text(encoding="utf-8"), language="fr"
    )
    assert {("situated_in", "Allier"), ("instance_of", "ligne ferroviaire")} <= _pairs(
        _facts(ligne), "category"
    )
    seneca = RawPage(
        "Médée", (shared_data / FIXTURES / "french.txt").read_text(encoding="utf-8"), language="fr"
    )
    assert ("author", "Sénèque") in _pairs(_facts(seneca), "category")


def test_spanish_and_italian_patterns() -> None:
    es = {
        (f.relation, f.object)
        for f in category_facts(
            ["Nacidos en 1820", "Fallecidos en 1890", "Pintores de Francia del siglo XIX",
             "Ríos de Francia", "Miembros de la Real Academia Española"],
            "es",
        )
    }  # fmt: skip
    assert {
        ("birth_date", "1820"),
        ("death_date", "1890"),
        ("occupation", "pintor"),
        ("nationality", "Francia"),
        ("active_century", "siglo XIX"),
        ("instance_of", "río"),
        ("located_in", "Francia"),
        ("member_of", "Real Academia Española"),
    } <= es
    it = {
        (f.relation, f.object)
        for f in category_facts(
            ["Nati nel 1820", "Morti nel 1890", "Pittori francesi", "Nati a Lione"], "it"
        )
    }
    assert {
        ("birth_date", "1820"),
        ("death_date", "1890"),
        ("occupation", "pittore"),
        ("nationality", "Francia"),
        ("born_in", "Lione"),
    } <= it
    lead = {
        (f.relation, f.object)
        for f in lead_facts(
            "Gustave",
            "Gustave (Lione, 12 maggio 1820 – Parigi, 3 giugno 1890) è stato un pittore e "
            "scultore francese.",
            (),
            "it",
        )
    }
    assert {
        ("birth_date", "1820-05-12"),
        ("death_date", "1890-06-03"),
        ("occupation", "pittore"),
        ("occupation", "scultore"),
        ("nationality", "Francia"),
    } <= lead


def test_every_value_of_a_field() -> None:
    party = InfoboxField(
        "party",
        "Whig (before 1854), Republican (1854–1865)",
        "Whig Party (United States)",
        ("Whig Party (United States)", "Republican Party (United States)"),
        True,
        ((0, "Whig Party (United States)"), (20, "Republican Party (United States)")),
        (0, 20),
    )
    facts = type_infobox((party,), "officeholder")
    # Two lines, two values (member_of is not a list relation: the lines say so).
    assert [(f.relation, f.object) for f in facts] == [
        ("member_of", "Whig Party (United States)"),
        ("member_of", "Republican Party (United States)"),
    ]
    # A wikitext {{plainlist}} and <br> make lines; the link an item starts with names it.
    page = parse_wikitext(
        RawPage(
            "X",
            "{{Infobox country\n| official_languages = {{hlist|[[Arabic language|Arabic]]|"
            "[[Berber languages|Berber]]}}\n| awards = Prometheus Award (1983 for "
            "''[[Anthem (novella)|Anthem]]'')<br>[[Hugo Award]]\n}}\nX is a country.",
        )
    )
    typed = {(f.relation, f.object) for f in type_infobox(page.infobox, "country") if f.typed}
    assert {
        ("official_language", "Arabic language"),
        ("official_language", "Berber languages"),
    } <= typed


def _typed_by_title(snap: Snapshot, titles: list[str]) -> dict[str, set[tuple[str, str, str]]]:
    rows = snap.sql(
        "SELECT a.title, f.relation, f.object, f.source FROM facts f JOIN articles a"
        " ON a.doc_id = f.subject_doc_id WHERE f.typed AND list_contains(?, a.title)",
        [titles],
    ).to_pylist()
    out: dict[str, set[tuple[str, str, str]]] = {t: set() for t in titles}
    for r in rows:
        out[r["title"]].add((r["relation"], r["object"], r["source"]))
    return out


def test_values_as_the_page_means_them(enwiki_snapshot: Snapshot) -> None:
    """The precision defects found by reading 50 facts per source (issue 35), on the real
    pages that showed them: two lists side by side, a "See:" line, a period before a
    value, a translation in small text, a page about an aspect of its subject, a page
    named as a group of the kind a category gives."""
    titles = [
        "Aristotle", "Abraham Lincoln", "Ayn Rand", "Andorra", "Albania",
        "Economy of Angola", "Austroasiatic languages", "Apollo",
    ]  # fmt: skip
    f = _typed_by_title(enwiki_snapshot, titles)
    interests = {o for r, o, _ in f["Aristotle"] if r == "main_interest"}
    # {{hlist|[[Biology]]|[[Zoology]]}} {{hlist|[[Physics]]|[[Metaphysics]]}} ...
    assert {"Zoology", "Physics", "Metaphysics", "Logic", "Theatre", "Politics"} <= interests
    assert not interests & {"Zoology Physics", "Metaphysics Logic", "Theatre Politics"}
    assert not any(r == "religion" for r, _, _ in f["Abraham Lincoln"])  # "See: [[...]]"
    # "1905–22&nbsp;&nbsp;[[Russian Empire|Russia]]n<br />1922–31 [[Soviet Union|Soviet]]..."
    assert {o for r, o, s in f["Ayn Rand"] if r == "nationality" and s == "infobox"} == {
        "Russian Empire", "Soviet Union", "American",
    }  # fmt: skip
    # "''[[El Gran Carlemany]]''<br/>{{small|The Great Charlemagne}}": one anthem
    assert {o for r, o, _ in f["Andorra"] if r == "anthem"} == {"El Gran Carlemany"}
    assert len({o for r, o, _ in f["Albania"] if r == "anthem"}) == 1
    # "African Union member economies" files Angola, not its economy
    assert not any(s == "category" for _, _, s in f["Economy of Angola"])
    # "Agglutinative languages": a family of languages is no language; "Temples of Apollo"
    assert ("instance_of", "language", "category") not in f["Austroasiatic languages"]
    assert ("instance_of", "temple", "category") not in f["Apollo"]


def test_snapshot_facts_and_id(enwiki_snapshot: Snapshot) -> None:
    rows = enwiki_snapshot.sql(
        "SELECT source, count(*) FILTER (WHERE typed) AS n,"
        " count(*) FILTER (WHERE typed AND passage_id IS NULL) AS unstated,"
        " count(*) FILTER (WHERE statement LIKE 'Category:%') AS lines FROM facts GROUP BY 1"
    ).to_pylist()
    by = {r["source"]: r for r in rows}
    assert set(by) == {"infobox", "category", "lead"}
    assert by["category"]["lines"] == by["category"]["n"] > 200
    assert by["category"]["unstated"] > 0 and by["lead"]["unstated"] == 0
    # Algeria's official languages: every value.
    langs = enwiki_snapshot.sql(
        "SELECT f.object FROM facts f JOIN articles a ON a.doc_id = f.subject_doc_id"
        " WHERE a.title = 'Algeria' AND f.relation = 'official_language' AND f.typed"
    ).column("object")
    assert {"Arabic", "Berber languages"} <= set(langs.to_pylist())
    # The id covers the vocabularies' versions.
    manifest = enwiki_snapshot.manifest
    assert manifest["content_config"]["facts"] == vocabulary_versions()
    assert vocabulary_versions()["lexicon"] == lexicon_version()
    assert vocabulary_versions()["categories"] == category_vocabulary().version
    tables = {k: v["sha256"] for k, v in manifest["tables"].items()}
    assert compute_snapshot_id(tables, manifest["content_config"]) == manifest["snapshot_id"]
    bumped = {**manifest["content_config"], "facts": {**vocabulary_versions(), "lead": "lead/x"}}
    assert compute_snapshot_id(tables, bumped) != manifest["snapshot_id"]


def test_a_wiki_without_typed_facts_says_which_sources_would_give_them(
    shared_data: Path, tmp_path: Path
) -> None:
    src = open_build_source(shared_data / "wiki/bgwiki-utf16-excerpt.xml.bz2")
    report = build_snapshot([src], tmp_path / "bg", BuildConfig(), progress=False)
    notes = [n for c in report.sources for n in c.notes()]
    assert any("0 typed facts" in n and "not 'bg'" in n and "--facts" in n for n in notes), notes
    assert lexicon("bg") is None
