"""Wikidata statements joined to a snapshot's articles by sitelink (``corpus build --facts``).

The Wikidata data is real: 49 entities of a Wikidata JSON dump (Q1 ... Q313: countries,
cities, people, months), the test fixture of maxlath/wikibase-dump-filter (see
``tests/data/SOURCES.md``). It joins the shared enwiki excerpt (Algeria) and a small
Bulgarian wiki, a language no vocabulary covers, whose pages the test writes with the
titles of the extract's ``bgwiki`` sitelinks (no real Bulgarian page of these items is in
the shared data).
"""

from __future__ import annotations

import bz2
import json
import subprocess
import sys
from pathlib import Path

import pytest

from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
from wikigym.corpora.wikidata import JSON, NTRIPLES, open_facts_file, property_map
from wikigym.errors import SourceError
from wikigym.synth import SynthConfig, generate_tasks, verify_taskset

EXTRACT = Path(__file__).parent / "data" / "wikidata" / "wikibase-dump-filter-entities.json.bz2"

# Pages of a Bulgarian wiki titled as the extract's bgwiki sitelinks; their text states some
# of the items' values the way Bulgarian prose writes them.
BG_PAGES = {
    "Лондон": "Лондон е столицата на [[Обединено кралство Великобритания и Северна Ирландия]]. "
    "Населението на града е 8 416 535 души, а площта му е 1572 km². Лондон е побратимен "
    "с [[Берлин]].",
    "Берлин": "Берлин е столицата на Германия. Населението му е 3 469 849 души. Градът е "
    "основан през 1237 година.",
    "Франция": "Франция е държава в Западна Европа с население 66 628 000 души и площ 643 801 "
    "km². Официалният език е [[Френски език]]. Франция граничи с [[Белгия]].",
    "Белгия": "Белгия е държава в Западна Европа с население 11 150 516 души. Площта ѝ е "
    "30 528 km². Белгия е основана на 4 октомври 1830 г. Официален език е [[Френски език]].",
    "Дания": "Дания е държава в Северна Европа. Населението ѝ е 5 707 251 души.",
    "Обединено кралство Великобритания и Северна Ирландия": "Обединеното кралство е държава "
    "в Западна Европа с население 65 102 385 души. Столица е [[Лондон]].",
    "Естония": "Естония е държава в Северна Европа с население 1 313 271 души и площ 45 228 "
    "km². Независимостта е обявена през 1918 година.",
    "Казахстан": "Казахстан е държава в Централна Азия. Населението е 17 948 816 души, а "
    "площта е 2 724 900 km².",
    "Лудвиг ван Бетховен": "Лудвиг ван Бетховен (16 декември 1770 – 26 март 1827) е германски "
    "композитор.",
    "Джордж Вашингтон": "Джордж Вашингтон (22 февруари 1732 – 14 декември 1799) е първият "
    "президент на Съединените американски щати.",
    "Френски език": "Френският език е романски език.",
}


@pytest.fixture(scope="module")
def bg_wiki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bgwiki") / "pages"
    folder.mkdir()
    for title, text in BG_PAGES.items():
        (folder / f"{title}.txt").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def bg_snapshot(bg_wiki: Path, tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    out = tmp_path_factory.mktemp("bg") / "snap"
    build_snapshot(
        [open_build_source(bg_wiki)],
        out,
        BuildConfig(language="bg"),
        progress=False,
        facts=open_facts_file(EXTRACT),
    )
    return Snapshot.open(out)


def _wd(snap: Snapshot, title: str) -> set[tuple[str, str]]:
    rows = snap.sql(
        "SELECT f.relation, f.object FROM facts f JOIN articles a ON a.doc_id = f.subject_doc_id"
        " WHERE f.source = 'wikidata' AND a.title = ?",
        [title],
    ).to_pylist()
    return {(r["relation"], r["object"]) for r in rows}


def test_a_wiki_outside_the_vocabularies_gets_typed_facts(bg_snapshot: Snapshot) -> None:
    counts = bg_snapshot.sql(
        "SELECT source, count(*) AS n FROM facts WHERE typed GROUP BY 1"
    ).to_pylist()
    assert {r["source"] for r in counts} == {"wikidata"}  # nothing else reads Bulgarian
    london = _wd(bg_snapshot, "Лондон")
    # Truthy values; item values named by their Bulgarian label (all entities are in the
    # extract here: the United Kingdom, Berlin).
    assert {
        ("population", "8416535"),
        ("area_km2", "1572"),
        ("elevation_m", "35"),
        ("located_in", "Обединено кралство Великобритания и Северна Ирландия"),
        ("capital_of", "Обединено кралство Великобритания и Северна Ирландия"),
        ("twinned_with", "Берлин"),
    } <= london
    france = _wd(bg_snapshot, "Франция")
    assert ("official_language", "Френски език") in france
    assert ("borders", "Белгия") in france
    # A measure given for several years (HDI, Gini) keeps the latest only.
    assert len([x for x in france if x[0] == "hdi"]) == 1
    assert {("birth_date", "1770-12-16"), ("death_date", "1827-03-26")} <= _wd(
        bg_snapshot, "Лудвиг ван Бетховен"
    )
    # Entity values with a sitelink to this wiki resolve to its articles.
    rows = bg_snapshot.sql(
        "SELECT f.statement, f.object_doc_id, f.passage_id FROM facts f JOIN articles a"
        " ON a.doc_id = f.subject_doc_id WHERE a.title = 'Лондон' AND f.relation = 'twinned_with'"
    ).to_pylist()
    assert rows[0]["statement"] == "Q84 P190 Q64" and rows[0]["object_doc_id"] is not None
    # Located where the page states the value ("8 416 535"), else stated in no passage.
    located = bg_snapshot.sql(
        "SELECT count(passage_id) AS stated, count(*) AS n FROM facts WHERE source = 'wikidata'"
    ).to_pylist()[0]
    assert 0 < located["stated"] < located["n"]
    manifest = bg_snapshot.manifest
    assert manifest["content_config"]["facts"]["wikidata"] == property_map().version
    assert [s["format"] for s in manifest["sources"]] == ["wikitext-dir", JSON]


def test_easy_tasks_from_wikidata_alone(bg_snapshot: Snapshot) -> None:
    ts = generate_tasks(bg_snapshot, SynthConfig(difficulty="easy", n=5, seed=0))
    assert len(ts) == 5
    assert verify_taskset(ts, bg_snapshot) == []
    for t in ts:
        assert t.source == "wikidata"
        assert any(f.passage_id is not None for f in t.evidence.facts)


def test_the_extract_joins_the_shared_enwiki_excerpt(shared_data: Path, tmp_path: Path) -> None:
    src = open_build_source(shared_data / "wiki/enwiki-excerpt-206pages.xml.bz2")
    build_snapshot(
        [src], tmp_path / "en", BuildConfig(), progress=False, facts=open_facts_file(EXTRACT)
    )
    snap = Snapshot.open(tmp_path / "en")
    algeria = _wd(snap, "Algeria")
    assert ("population", "38813722") in algeria
    # The area is also the infobox's: the Wikidata fact restates it.
    restated = snap.sql(
        "SELECT w.restates, i.source FROM facts w JOIN facts i ON i.fact_id = w.restates"
        " WHERE w.source = 'wikidata' AND w.relation = 'area_km2'"
    ).to_pylist()
    assert restated and restated[0]["source"] == "infobox"


def _ntriples(path: Path, site: str, lang: str) -> str:
    """The extract's truthy statements as Wikidata's truthy N-Triples write them (wdt:
    claims, rdfs:label, schema:about sitelinks): the same real data in the other format."""
    out = []
    e_ = "http://www.wikidata.org/entity/"
    with bz2.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.strip().rstrip(",")
            if line in ("[", "]", ""):
                continue
            e = json.loads(line)
            q = e["id"]
            for code, v in e.get("labels", {}).items():
                if code in (lang, "en"):
                    text = json.dumps(v["value"], ensure_ascii=False)
                    out.append(
                        f"<{e_}{q}> <http://www.w3.org/2000/01/rdf-schema#label> {text}@{code} ."
                    )
            link = e.get("sitelinks", {}).get(site)
            if link:
                url = f"https://{lang}.wikipedia.org/wiki/" + link["title"].replace(" ", "_")
                out.append(f"<{url}> <http://schema.org/about> <{e_}{q}> .")
            for pid, sts in e.get("claims", {}).items():
                best = [s for s in sts if s.get("rank") == "preferred"] or [
                    s for s in sts if s.get("rank") == "normal"
                ]
                for s in best:
                    dv = s["mainsnak"].get("datavalue") or {}
                    v, t = dv.get("value"), dv.get("type")
                    p = f"<http://www.wikidata.org/prop/direct/{pid}>"
                    if t == "wikibase-entityid":
                        out.append(f"<{e_}{q}> {p} <{e_}{v['id']}> .")
                    elif t == "time" and v["time"].startswith("+"):
                        iso = v["time"][1:].replace("-00", "-01")
                        out.append(
                            f'<{e_}{q}> {p} "{iso}"^^<http://www.w3.org/2001/XMLSchema#dateTime> .'
                        )
                    elif t == "monolingualtext":
                        text = json.dumps(v["text"], ensure_ascii=False)
                        out.append(f"<{e_}{q}> {p} {text}@{v['language']} .")
                    elif t == "quantity":
                        out.append(
                            f'<{e_}{q}> {p} "{v["amount"]}"^^<http://www.w3.org/2001/XMLSchema#decimal> .'
                        )
    return "\n".join(out) + "\n"


def test_truthy_ntriples_give_the_same_facts(
    bg_wiki: Path, bg_snapshot: Snapshot, tmp_path: Path
) -> None:
    nt = tmp_path / "truthy.nt.gz"
    import gzip

    with gzip.open(nt, "wt", encoding="utf-8") as f:
        f.write(_ntriples(EXTRACT, "bgwiki", "bg"))
    facts = open_facts_file(nt)
    assert facts.format == NTRIPLES
    build_snapshot(
        [open_build_source(bg_wiki)], tmp_path / "s", BuildConfig(language="bg"),
        progress=False, facts=facts,
    )  # fmt: skip
    snap = Snapshot.open(tmp_path / "s")
    for title in ("Лондон", "Франция", "Лудвиг ван Бетховен"):
        via_nt, via_json = _wd(snap, title), _wd(bg_snapshot, title)
        # Truthy N-Triples carry no units: a measure with one (an area) is left out.
        assert via_nt and via_nt <= via_json
        assert {
            x for x in via_json - via_nt if x[0] not in ("area_km2", "elevation_m", "hdi", "gini")
        } == set()


def test_a_bad_facts_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n", encoding="utf-8")
    with pytest.raises(SourceError, match="expected a Wikidata JSON dump"):
        open_facts_file(bad)
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "Лондон.txt").write_text(BG_PAGES["Лондон"], encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "wikigym", "corpus", "build", str(pages), "--out",
         str(tmp_path / "o"), "--facts", str(tmp_path / "missing.json")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode != 0
    assert len(out.stderr.strip().splitlines()) == 1 and "--facts" in out.stderr
    assert not (tmp_path / "o").exists()
