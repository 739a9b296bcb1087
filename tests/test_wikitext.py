"""Tests for the fast wikitext parser (wikigym.corpora.wikitext)."""

from __future__ import annotations

import bz2
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wikigym.corpora.records import ParsedPage, RawPage, WorldFact
from wikigym.corpora.wikitext import parse_wikitext

RESIDUE = ("{{", "}}", "[[", "]]", "<ref", "{|", "|}")


def parse(text: str, title: str = "T") -> ParsedPage:
    return parse_wikitext(RawPage(title=title, wikitext=text))


def assert_links_valid(page: ParsedPage) -> None:
    for section in page.sections:
        for link in section.links:
            assert link.anchor, link
            assert section.text[link.start : link.start + len(link.anchor)] == link.anchor, link


def lead(page: ParsedPage) -> str:
    assert page.sections and page.sections[0].path == ()
    return page.sections[0].text


def read_xml_pages(path: Path) -> list[tuple[str, str]]:
    """(title, wikitext) of every page of a MediaWiki XML dump, any schema version."""
    pages: list[tuple[str, str]] = []
    with bz2.open(path) as fh:
        for _, elem in ET.iterparse(fh):
            if elem.tag.endswith("}page"):
                ns = elem.tag[: -len("page")]
                title = elem.findtext(f"{ns}title") or ""
                text = elem.findtext(f"{ns}revision/{ns}text") or ""
                pages.append((title, text))
                elem.clear()
    return pages


@pytest.fixture(scope="module")
def wikitext_files(shared_data: Path) -> dict[str, str]:
    folder = shared_data / "wiki" / "wikitext"
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.txt"))}


@pytest.fixture(scope="module")
def parsed_files(wikitext_files: dict[str, str]) -> dict[str, ParsedPage]:
    return {title: parse(text, title) for title, text in wikitext_files.items()}


@pytest.fixture(scope="module")
def enwiki_pages(shared_data: Path) -> list[tuple[str, str]]:
    return read_xml_pages(shared_data / "wiki" / "enwiki-excerpt-206pages.xml.bz2")


# ------------------------------------------------------------------------------ prose


def test_prose_around_removed_elements_survives() -> None:
    page = parse("A city{{citation needed}} in France.<ref>x</ref> It is")
    assert lead(page) == "A city in France. It is"


def test_removes_markup_and_keeps_inner_text() -> None:
    text = (
        "'''Bold''' and ''italic'' <span style='x'>kept</span> <small>small</small>"
        "<sup>2</sup> <!-- hidden --> __NOTOC__ x<math>E=mc^2</math>y "
        "<ref name=a/> <gallery>\nA.jpg|cap\n</gallery> <nowiki>[[not a link]]</nowiki>"
    )
    assert lead(parse(text)) == "Bold and italic kept small2 xy [[not a link]]"


def test_external_links_keep_label_and_bare_urls_are_dropped() -> None:
    text = "See [http://example.org the site] or [https://x.org] or http://bare.example.com now."
    assert lead(parse(text)) == "See the site or or now."


def test_nested_multiline_templates_are_dropped() -> None:
    text = "Before {{outer|a={{inner|\n[[x|y]]\n}}|b=c\n}} after."
    assert lead(parse(text)) == "Before after."


def test_inline_content_templates_are_kept() -> None:
    text = (
        "It is {{convert|5|km}} long, {{convert|3|-|4|mi}} wide, {{lang|fr|texte}}, "
        "{{lang-de|Wort}}, {{nowrap|x [[y]]}}, born {{birth date|1950|5|3}}, {{frac|1|2}}."
    )
    page = parse(text)
    assert lead(page) == ("It is 5 km long, 3–4 mi wide, texte, Wort, x y, born 1950-05-03, 1/2.")
    assert [link.target for link in page.sections[0].links] == ["Y"]
    assert_links_valid(page)


def test_lists_become_plain_lines() -> None:
    text = "Intro line\none more.\n* first [[a]]\n*# second\n: indented\n; term\nAfter."
    page = parse(text)
    assert lead(page) == "Intro line one more.\n\nfirst a\nsecond\nindented\nterm\n\nAfter."
    assert_links_valid(page)


def test_paragraphs_and_whitespace() -> None:
    page = parse("First   para\n  continues.\n\n\nSecond\tpara.")
    assert lead(page) == "First para continues.\n\nSecond para."


def test_nested_tables_are_dropped_with_prose_kept() -> None:
    text = "Before.\n{| class=x\n| a [[b]]\n|-\n|\n{|\n| inner\n|}\n|}\nAfter [[c]].\n:{|\n|x\n|}"
    page = parse(text)
    assert lead(page) == "Before.\n\nAfter c."
    assert [(link.target, link.anchor) for link in page.sections[0].links] == [("C", "c")]


# ---------------------------------------------------------------------------- links


def test_links_targets_anchors_and_offsets() -> None:
    text = (
        "[[Paris|the capital]] and [[dog]]s, [[new_york  city#History|NY]], "
        "[[#Local]] here, [[:Category:Cats|cats]], [[wikt:word|word]],[[de:Paris]] "
        "[[File:Pic.jpg|thumb|A [[nested]] caption]] [[Category:Foo_bar|sort key]] end"
    )
    page = parse(text)
    section = page.sections[0]
    assert section.text == "the capital and dogs, NY, #Local here, cats, word, end"
    assert [(link.target, link.anchor) for link in section.links] == [
        ("Paris", "the capital"),
        ("Dog", "dogs"),
        ("New york city", "NY"),
    ]
    assert page.categories == ("Foo bar",)
    assert_links_valid(page)


def test_link_offsets_survive_markup_inside_anchor() -> None:
    page = parse("x ''[[a|'''bold''' <span>b</span>]]'' y [[c| padded ]]z")
    section = page.sections[0]
    assert section.text == "x bold b y padded z"
    assert [(link.anchor, link.start) for link in section.links] == [
        ("bold b", 2),
        ("padded z", 11),
    ]
    assert_links_valid(page)


# ----------------------------------------------------------------------- sections


def test_sections_have_nested_paths_and_boilerplate_is_dropped() -> None:
    text = (
        "Lead [[x]].\n== History ==\nOld.\n=== Early ''years'' ===\nEarlier [[y]].\n"
        "== Empty ==\n{{main|Other}}\n== Geography ==\nPlace.\n== See also ==\n* [[Z]]\n"
        "== References ==\n{{reflist}}\n=== Sub of refs ===\nSome notes.\n"
        "== External links ==\n* [http://x.org X]\n"
    )
    page = parse(text)
    assert [(s.path, s.text) for s in page.sections] == [
        ((), "Lead x."),
        (("History",), "Old."),
        (("History", "Early years"), "Earlier y."),
        (("Geography",), "Place."),
    ]
    assert_links_valid(page)


def test_copies_page_metadata() -> None:
    fact = WorldFact(relation="born_in", object="Atlantis", value_type="entity")
    raw = RawPage(title="A", wikitext="x", source_id="7", url="http://u", world_facts=(fact,))
    page = parse_wikitext(raw)
    assert (page.title, page.source_id, page.url, page.world_facts) == (
        "A",
        "7",
        "http://u",
        (fact,),
    )


# ------------------------------------------------------------------ redirects & dab


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("#REDIRECT [[Target_page#Frag|label]]", "Target page"),
        ("#redirect[[target]]", "Target"),
        ("  #Redirect: [[  some   title ]]\n{{R from move}}", "Some title"),
        ("#WEITERLEITUNG [[Ziel]]", "Ziel"),
        ("#ПРЕНАСОЧВАНЕ [[София]]", "София"),
    ],
)
def test_redirects(text: str, target: str) -> None:
    page = parse(text)
    assert page.redirect == target
    assert page.sections == ()


def test_redirect_given_by_source_is_honoured() -> None:
    page = parse_wikitext(RawPage(title="A", wikitext="Some text.", redirect="b_c#x"))
    assert (page.redirect, page.sections) == ("B c", ())


@pytest.mark.parametrize(
    "template",
    [
        "{{disambiguation}}",
        "{{Disambig}}",
        "{{dab}}",
        "{{hndis|Smith, John}}",
        "{{geodis}}",
        "{{Set index article}}",
        "{{Begriffsklärung}}",
        "{{Hospital disambiguation}}",
        "{{Disambiguation|surname}}",
    ],
)
def test_disambiguation_templates(template: str) -> None:
    page = parse(f"'''X''' may refer to:\n* [[X (a)]]\n{template}")
    assert page.is_disambiguation
    assert lead(page) == "X may refer to:\n\nX (a)"


def test_disambiguation_needed_is_not_a_disambiguation_page() -> None:
    assert not parse("A [[Mercury]]{{disambiguation needed}} planet.").is_disambiguation


# ---------------------------------------------------------------------------- infobox


def test_infobox_fields_split_on_top_level_pipes_only() -> None:
    text = (
        "{{Infobox person\n| name = John [[Smith]]\n"
        "| birth_date = {{birth date and age|1950|5|3}}\n| image = x.jpg\n"
        "| image_caption = cap\n| spouse = {{marriage|[[Jane Doe|Jane]]|1990}}\n"
        "| empty = \n| genre = {{hlist|Rock|[[Pop music|Pop]]}}\n| Home Town = [[A|B]]<ref>r</ref>\n"
        "| occupation = Writer<br/>Painter\n}}\n'''John''' is a writer."
    )
    page = parse(text)
    assert page.infobox_type == "person"
    assert [(f.key, f.value, f.link_target) for f in page.infobox] == [
        ("name", "John Smith", "Smith"),
        ("birth_date", "1950-05-03", None),
        ("spouse", "Jane", "Jane Doe"),
        ("genre", "Rock, Pop", "Pop music"),
        ("home_town", "B", "A"),
        ("occupation", "Writer, Painter", None),
    ]
    assert lead(page) == "John is a writer."


def test_infobox_of_real_pages(parsed_files: dict[str, ParsedPage]) -> None:
    toronto = parsed_files["toronto"]
    assert toronto.infobox_type == "settlement"
    fields = {f.key: f for f in toronto.infobox}
    assert fields["name"].value == "Toronto"
    assert fields["subdivision_name"].value == "Canada"
    assert fields["leader_name"].value == "Rob Ford"
    assert fields["leader_name"].link_target == "Rob Ford"
    assert not any("image" in key or "caption" in key for key in fields)

    mumphrey = {f.key: f for f in parsed_files["Jerry-Mumphrey"].infobox}
    assert parsed_files["Jerry-Mumphrey"].infobox_type == "baseball biography"
    assert mumphrey["birth_date"].value == "1952-09-09"
    assert mumphrey["birth_place"].link_target == "Tyler, Texas"

    bbdo = parsed_files["BBDO"]
    assert bbdo.infobox_type == "unternehmen"
    assert {f.key: f.value for f in bbdo.infobox}["sitz"] == "Düsseldorf, Deutschland"


# ------------------------------------------------------------------------ real files


def test_real_files_have_no_markup_residue_and_valid_links(
    parsed_files: dict[str, ParsedPage], enwiki_pages: list[tuple[str, str]]
) -> None:
    pages = list(parsed_files.values()) + [parse(text, title) for title, text in enwiki_pages]
    assert len(pages) > 250
    for page in pages:
        assert_links_valid(page)
        for section in page.sections:
            assert section.text and section.text == section.text.strip()
            for token in RESIDUE:
                assert token not in section.text, (page.title, section.path, token)
    with_links = sum(1 for page in pages if any(s.links for s in page.sections))
    assert with_links > 150


def test_toronto(parsed_files: dict[str, ParsedPage]) -> None:
    page = parsed_files["toronto"]
    assert "most populous city in Canada" in lead(page)
    assert ("History", "Before 1800") in [s.path for s in page.sections]
    assert "Populated places on the Great Lakes" in page.categories
    targets = {link.target for link in page.sections[0].links}
    assert {"Ontario", "Lake Ontario"} <= targets
    assert parsed_files["redirect"].redirect == "Toronto"


def test_german_page(parsed_files: dict[str, ParsedPage]) -> None:
    page = parsed_files["Keilwelle"]
    assert lead(page).startswith("Als Keilwellen werden Wellen bezeichnet")
    assert ("Keilwellen-Verbindungen", "Herstellung") in [s.path for s in page.sections]
    assert page.categories == ("Bauform (Welle)", "Verbindungselement")
    assert "Datei:" not in "".join(s.text for s in page.sections)


def test_enwiki_excerpt(enwiki_pages: list[tuple[str, str]]) -> None:
    parsed = {title: parse(text, title) for title, text in enwiki_pages}
    redirects = [p for p in parsed.values() if p.redirect]
    assert len(redirects) > 50
    assert parsed["AccessibleComputing"].redirect == "Computer accessibility"
    assert parsed["Austin (disambiguation)"].is_disambiguation
    assert not parsed["Anarchism"].is_disambiguation
    assert "political philosophy" in lead(parsed["Anarchism"])
    assert parsed["Alabama"].infobox_type
    assert parsed["Alabama"].categories


def test_table_heavy_pages_lose_tables_keep_prose(shared_data: Path) -> None:
    pages = read_xml_pages(shared_data / "wiki" / "enwiki-table-markup-nositeinfo.xml.bz2")
    assert len(pages) == 5
    for title, text in pages:
        assert "{|" in text
        page = parse(text, title)
        body = "\n".join(s.text for s in page.sections)
        for residue in (*RESIDUE, "||", "!!", "|-", "wikitable", "colspan"):
            assert residue not in body, (title, residue)
        assert lead(page).endswith("."), title
        assert len(body) > 500, title
        assert_links_valid(page)


# ------------------------------------------------------------------------ robustness


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{{" * 10000,
        "}}" * 10000,
        "[[[[" * 250_000,
        "{{nowrap|a " * 5000 + "}}" * 5000,
        "[[a|x " * 5000 + "]]" * 5000,
        "{|\n" * 20000,
        "<ref>" * 20000,
        "<!--" * 20000,
        "[http://" * 20000,
        "a" + " " * 200_000 + "b",
        "<" * 100_000,
        "{{Infobox x" + "|a=[[b|c]]" * 5000 + "}}",
        "==a==\n" * 20000,
        "\x00\ud800\U0010fffd\ue001 [[a]]\U000f0000 b",
    ],
    ids=lambda t: repr(t[:12]),
)
def test_pathological_inputs_are_fast_and_safe(text: str) -> None:
    start = time.perf_counter()
    page = parse(text)
    assert time.perf_counter() - start < 10.0  # linear: well under a second when idle
    assert_links_valid(page)


_FRAGMENTS = st.sampled_from(
    [
        "[[",
        "]]",
        "{{",
        "}}",
        "{|",
        "|}",
        "|",
        "[",
        "]",
        "<ref>",
        "</ref>",
        "<ref name=a/>",
        "<!--",
        "-->",
        "''",
        "'''",
        "==",
        "\n",
        "\n\n",
        "*",
        "#",
        ":",
        " ",
        "a",
        "Word",
        "[[A|b]]",
        "[[c]]s",
        "{{convert|1|m}}",
        "[[File:x|[[y]]]]",
        "[[Category:C]]",
        "<span>",
        "</span>",
        "http://x.y",
        "[http://x.y z]",
        "&amp;",
        "&nbsp;",
        "\ue001",
        "\U000f0001",
        "#REDIRECT",
        "{{Infobox a|b=[[c]]|d={{e|f}}}}",
        "<nowiki>",
        "</nowiki>",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=300), st.lists(_FRAGMENTS, max_size=60).map("".join)))
def test_never_raises_and_link_offsets_are_valid(text: str) -> None:
    page = parse(text)
    assert_links_valid(page)
    for section in page.sections:
        assert section.text
        assert "\ue001" not in section.text
    for field in page.infobox:
        assert field.key and field.value


def test_infobox_found_by_structure_and_by_local_names() -> None:
    # A wiki whose infobox template has another name: the lead template laid out as
    # ``| key = value`` lines is the infobox; its name is its type.
    page = parse_wikitext(
        RawPage(
            title="Dorf",
            wikitext=(
                "{{Infoskreine\n| Name = Dorf\n| Einwohner = 4 561\n| Fläche = 392,7\n}}\n"
                "'''Dorf''' ist ein Ort.\n\n== Geschichte ==\n{{Kasten\n|a=1\n|b=2\n|c=3\n}}"
            ),
        )
    )
    assert page.infobox_type == "infoskreine"
    assert [(f.key, f.value) for f in page.infobox] == [
        ("name", "Dorf"),
        ("einwohner", "4 561"),
        ("fläche", "392,7"),
    ]
    # Inline templates (citations) and templates after the lead are not infoboxes.
    cite = parse_wikitext(
        RawPage(
            title="C",
            wikitext="{{cite web\n|url=u\n|title=t\n|date=d\n}} Text.\n\n== A ==\n{{X\n|a=1\n|b=2\n|c=3\n}}",
        )
    )
    assert cite.infobox_type is None and cite.infobox == ()
    # Local names: Japanese 基礎情報, Spanish "Ficha de", Polish suffix.
    for name, kind in (
        ("基礎情報 国", "国"),
        ("Ficha de persona", "persona"),
        ("Polityk infobox", "polityk"),
    ):
        p = parse_wikitext(RawPage(title="T", wikitext=f"{{{{{name}\n|a=[[B]]\n}}}}\nText."))
        assert p.infobox_type == kind and p.infobox[0].link_target == "B"
