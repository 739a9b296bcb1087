"""Any language: siteinfo language, language-aware analyzer, CJK bigrams on the real jawiki."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
from wikigym.corpora.analysis import cjk_bigrams, language_code
from wikigym.corpora.index import IndexConfig, query_terms
from wikigym.corpora.passages import split_passages
from wikigym.corpora.readers.mediawiki import site_language

JAWIKI = "wiki/jawiki-excerpt-204articles.xml.bz2"
BGWIKI = "wiki/bgwiki-utf16-excerpt.xml.bz2"
NOSITEINFO = "wiki/enwiki-table-markup-nositeinfo.xml.bz2"


@pytest.fixture(scope="module")
def ja_snapshot(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    out = tmp_path_factory.mktemp("ja") / "snap"
    build_snapshot([open_build_source(shared_data / JAWIKI)], out, BuildConfig(), progress=False)
    return Snapshot.open(out)


def test_siteinfo_language(shared_data: Path) -> None:
    assert site_language(shared_data / JAWIKI) == "ja"
    assert site_language(shared_data / BGWIKI) == "bg"  # UTF-16 file
    assert site_language(shared_data / NOSITEINFO) == "en"  # no siteinfo; root xml:lang
    assert open_build_source(shared_data / JAWIKI).describe()["language"] == "ja"
    assert [language_code(x) for x in ("pt-BR", "zh-yue", "", None, "DE")] == [
        "pt",
        "yue",
        "en",
        "en",
        "de",
    ]


def test_analyzer_follows_language() -> None:
    assert IndexConfig.for_language("de").stemmer == "german"
    assert IndexConfig.for_language("de").stopwords == ()  # English stop words only for en
    ja = IndexConfig.for_language("ja")
    assert (ja.stemmer, ja.cjk_bigrams, ja.stopwords) == (None, True, ())
    assert IndexConfig.for_language("bg").stemmer is None  # no Bulgarian stemmer: none
    en = IndexConfig.for_language("en")
    assert en == IndexConfig() and en.analyzer_name == "en_stem_stop"
    assert IndexConfig.from_dict(ja.to_dict()) == ja
    # Manifests from before the language field read as the English analyzer.
    legacy = {k: v for k, v in en.to_dict().items() if k not in ("language", "stemmer")}
    assert IndexConfig.from_dict(legacy) == en
    with pytest.raises(ValueError, match="stemmer"):
        IndexConfig.from_dict({**ja.to_dict(), "stemmer": "klingon"})


def test_cjk_bigrams_and_passages() -> None:
    assert cjk_bigrams("日本語の文字 abc 日") == " 日本 本語 語の の文 文字  abc  日 "
    assert query_terms("日本語", bigrams=True) == ["日本", "本語"]
    assert query_terms("日本語") == ["日本語"]
    text = "日本語は日本の言語である。" * 30
    spans = split_passages(text, 100)
    # Cut at the CJK full stop, ~200 characters (100 two-character words) a passage.
    assert len(spans) > 1 and all(text[s:e].endswith("。") for s, e in spans)
    assert all(190 <= len(text[s:e]) <= 210 for s, e in spans[:-1])


def test_japanese_dump_is_searchable_by_words(ja_snapshot: Snapshot) -> None:
    manifest = ja_snapshot.manifest
    assert manifest["language"] == "ja"
    assert manifest["content_config"]["index"]["cjk_bigrams"] is True
    assert manifest["source_counts"][0]["facts"] > 0
    # Typed facts from Japanese infoboxes (基礎情報 国, Infobox 漫画家): names, dates, numbers.
    typed = {
        (r["title"], r["relation"]): r["object"]
        for r in ja_snapshot.sql(
            "SELECT a.title, f.relation, f.object FROM facts f "
            "JOIN articles a ON a.doc_id = f.subject_doc_id WHERE f.typed ORDER BY f.fact_id"
        ).to_pylist()
    }
    assert len(typed) > 300
    assert typed[("エジプト", "capital")] == "カイロ"
    assert typed[("エジプト", "population")] == "102334000"  # 102,334,000<ref>
    assert typed[("オーストリア", "population")] == "8932664"  # 893万2664
    # 日本 finds passages where it is part of a longer run: 日本語, 日本の...
    texts = [h.text for h in ja_snapshot.search("日本", 50)]
    assert any("日本語" in t for t in texts) and any("日本の" in t for t in texts)
    # Each article is found by a word of its own first sentence (measured: 0.855 of 200
    # articles at k=10, 0.465 with the English analyzer; benchmarks/bench_cjk_recall.py).
    rows = ja_snapshot.sql(
        "SELECT doc_id, a.title, p.text FROM passages p JOIN articles a USING (doc_id) "
        "WHERE ordinal = 0 ORDER BY doc_id"
    ).to_pylist()
    words = re.compile(r"[\u4e00-\u9fff\u3005]{2,6}|[\u30a0-\u30ff]{2,6}")
    found = []
    for r in rows:
        sentence = r["text"].split("。")[0]
        probes = [w for w in dict.fromkeys(words.findall(sentence)) if w not in r["title"]]
        if probes:
            found.append(
                any(r["doc_id"] in {h.doc_id for h in ja_snapshot.search(w, 10)} for w in probes)
            )
    assert len(found) >= 150 and sum(found) / len(found) >= 0.8


def test_german_stemming_and_id(shared_data: Path, tmp_path: Path) -> None:
    folder = tmp_path / "de"
    folder.mkdir()
    shutil.copy(shared_data / "wiki/wikitext/Keilwelle.txt", folder / "Keilwelle.txt")
    de = build_snapshot(
        [open_build_source(folder)], tmp_path / "s_de", BuildConfig(language="de"), progress=False
    )
    en = build_snapshot([open_build_source(folder)], tmp_path / "s_en", progress=False)
    assert de.snapshot_id != en.snapshot_id  # the analyzer is part of the id
    snap = Snapshot.open(tmp_path / "s_de")
    assert snap.manifest["content_config"]["index"]["stemmer"] == "german"
    # "Keilwellen" in the text; the German stemmer also finds it from the singular.
    assert snap.search("Keilwelle", 3) and snap.search("Keilwellen", 3)
    assert not Snapshot.open(tmp_path / "s_en").search("Keilwell", 3)


def test_zero_facts_are_reported(shared_data: Path, tmp_path: Path) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    shutil.copy(shared_data / "wiki/wikitext/Keilwelle.txt", folder / "Keilwelle.txt")
    report = build_snapshot([open_build_source(folder)], tmp_path / "s", progress=False)
    assert report.facts == 0
    summary = report.summary()
    # It says which sources would type facts (the vocabularies, else Wikidata by sitelink).
    assert "pages: 0 typed facts (0 untyped): no infobox key, category or lead" in summary
    assert "--facts" in summary
