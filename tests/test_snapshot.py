"""Build, snapshot ids, search, pages, SQL, corruption: on the real shared files."""

from __future__ import annotations

import bz2
import itertools
import json
import re
import shutil
import threading
from pathlib import Path

import pytest
import tantivy
from hypothesis import given, settings
from hypothesis import strategies as st

from wikigym.cli import main as cli
from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
from wikigym.corpora.index import (
    ENGLISH_STOPWORDS,
    IndexConfig,
    PassageIndexWriter,
    PassageSearcher,
)
from wikigym.errors import BuildError, SnapshotCorruptedError, SnapshotError, SourceError

ENWIKI = "wiki/enwiki-excerpt-206pages.xml.bz2"
TIE_QUERIES = ["history", "century", "city", "which", "first world", "born was", "new state"]
_EN_STEM = (  # tantivy's built-in en_stem chain, for comparison
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    .filter(tantivy.Filter.remove_long(40))
    .filter(tantivy.Filter.lowercase())
    .filter(tantivy.Filter.stemmer("english"))
    .build()
)
HOSTILE_QUERIES = [
    "",
    "   ",
    '"unbalanced',
    "a AND OR NOT",
    "title:foo body:",
    "(((",
    ")",
    "[1 TO 5]",
    "foo~2 bar^3 *baz?",
    "+must -not",
    "x" * 10_000,
    "anarchism " * 2000,
    "😀🔥 emoji only",
    "无政府主义 政治哲学",
    "\x00\x01\x02",
    "\\",
    "'; DROP TABLE passages; --",
    "field:value:another",
]


def _build(data: Path, out: Path, threads: int, *names: str) -> Snapshot:
    sources = [open_build_source(data / n) for n in names]
    build_snapshot(sources, out, BuildConfig(threads=threads), progress=False)
    return Snapshot.open(out)


@pytest.fixture(scope="module")
def snaps(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Snapshot, Snapshot]:
    root = tmp_path_factory.mktemp("snaps")
    one = _build(shared_data, root / "t1", 1, ENWIKI, "wiki/wikitext")
    two = _build(shared_data, root / "t2", 2, ENWIKI, "wiki/wikitext")
    return one, two


def test_same_id_and_tables_with_any_thread_count(snaps: tuple[Snapshot, Snapshot]) -> None:
    one, two = snaps
    assert one.snapshot_id == two.snapshot_id
    assert one.manifest["tables"] == two.manifest["tables"]
    assert one.manifest["counts"] == two.manifest["counts"]
    assert len(one.snapshot_id) == 64


def test_search_identical_across_threads_with_ties(snaps: tuple[Snapshot, Snapshot]) -> None:
    one, two = snaps
    saw_tie = False
    for q in TIE_QUERIES:
        a = one.search(q, 10)
        b = two.search(q, 10)
        assert [(h.passage_id, h.score) for h in a] == [(h.passage_id, h.score) for h in b]
        scores = [h.score for h in a]
        assert scores == sorted(scores, reverse=True)
        for x, y in itertools.pairwise(a):
            if x.score == y.score:
                saw_tie = True
                assert x.passage_id < y.passage_id
    assert saw_tie, "the tie queries should produce equal scores somewhere"


def test_hit_fields(snaps: tuple[Snapshot, Snapshot]) -> None:
    snap = snaps[0]
    hits = snap.search("anarchism political philosophy", 5)
    assert len(hits) == 5
    top = hits[0]
    assert top.title == "Anarchism"
    assert "anarch" in top.text.lower()
    passage = snap.passage(top.passage_id)
    assert passage is not None and passage.text == top.text and passage.doc_id == top.doc_id


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_model_written_queries_never_raise(snaps: tuple[Snapshot, Snapshot], query: str) -> None:
    hits = snaps[0].search(query, 5)
    assert len(hits) <= 5
    if not query.strip() or not any(c.isalnum() for c in query):
        assert hits == []


def test_k_bounds(snaps: tuple[Snapshot, Snapshot]) -> None:
    snap = snaps[0]
    assert snap.search("anarchism", 0) == []
    assert len(snap.search("anarchism", 1)) == 1
    many = snap.search("which", 500)
    assert len(many) == 500
    assert [h.passage_id for h in many[:10]] == [h.passage_id for h in snap.search("which", 10)]


def test_stop_words(snaps: tuple[Snapshot, Snapshot], tmp_path: Path) -> None:
    snap = snaps[0]
    assert snap.manifest["content_config"]["index"]["stopwords"] == list(ENGLISH_STOPWORDS)
    # Only stop words: matched in titles, which keep them (KILT's article "A" is tested below).
    only_stop = snap.search("the of and is", 10)
    assert only_stop and all(
        {"the", "of", "and", "is"} & set(re.findall(r"\w+", h.title.lower())) for h in only_stop
    )
    with_stop = [(h.passage_id, h.score) for h in snap.search("the history of the anarchism", 10)]
    assert with_stop == [(h.passage_id, h.score) for h in snap.search("history anarchism", 10)]
    # A snapshot from before stop words (no "stopwords" key) still analyses without them.
    old = IndexConfig.from_dict({"tokenizer": "en_stem", "title_in_body": True})
    assert old.stopwords == () and old.analyzer_name == "en_stem"
    with pytest.raises(ValueError, match="list of words"):
        IndexConfig.from_dict({"stopwords": "the"})
    with pytest.raises(ValueError, match="en_stem"):
        IndexConfig(tokenizer="default")


_WORDISH = st.text(
    alphabet=st.sampled_from(
        list("abcxyzéüßİıΣσς中文한ـ١٢ⅫⅦ²½_-'.,!? ") + [chr(c) for c in range(0x300, 0x306)]
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None, database=None)
@given(text=st.one_of(_WORDISH, st.sampled_from(["the of", "x" * 39, "x" * 40, "中" * 14])))
def test_query_terms_match_the_analyzer(snaps: tuple[Snapshot, Snapshot], text: str) -> None:
    """build_query drops long tokens and stop words itself; it must agree with Tantivy's
    analyzer, or a query that analyses to nothing would match every document."""
    searcher = snaps[0]._searcher
    stop = snaps[0].index_config.analyzer()
    assert stop is not None
    plain = _EN_STEM
    query = searcher.build_query(text)
    assert (query is None) == (not plain.analyze(text))
    if query is not None and stop.analyze(text):
        assert searcher.search(text, 3) == snaps[0].search(text, 3)


def test_cli_build_without_stop_words(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "s"
    src = str(shared_data / "wiki" / "kilt-99articles.jsonl")
    assert cli(["corpus", "build", src, "--out", str(out), "--no-stopwords", "--quiet"]) == 0
    snap = Snapshot.open(out)
    assert snap.index_config.stopwords == ()
    assert snap.search("the", 3)  # indexed like any other word
    assert snap.search("A", 1)[0].title == "A"


def test_single_search_path_equals_tie_checked_path(
    snaps: tuple[Snapshot, Snapshot], tmp_path: Path
) -> None:
    """One segment in passage_id order lets one top-k search be exact; the tie-checked path
    (any layout) and an index written by 3 threads (several segments) must agree with it."""
    snap = snaps[0]
    assert snap.manifest["index_layout"] == {"segments": 1, "doc_order": "passage_id"}
    fast = PassageSearcher(snap.path / "index", snap.index_config, doc_order="passage_id")
    checked = PassageSearcher(snap.path / "index", snap.index_config)
    assert fast.ordered and not checked.ordered
    writer = PassageIndexWriter(tmp_path / "idx", snap.index_config, threads=3)
    rows = snap.sql(
        "SELECT p.passage_id, p.doc_id, a.title, p.text FROM passages p "
        "JOIN articles a USING (doc_id) ORDER BY p.passage_id"
    ).to_pylist()
    for r in rows:
        writer.add(r["passage_id"], r["doc_id"], r["title"], r["text"])
    layout = writer.close()
    assert layout.segments > 1 and layout.doc_order == "none"
    multi = PassageSearcher(tmp_path / "idx", snap.index_config, doc_order=layout.doc_order)
    assert not multi.ordered
    titles = [r["title"] for r in rows[:: max(1, len(rows) // 40)]]
    saw_tie = False
    for q in [*TIE_QUERIES, *titles]:
        for k in (1, 3, 10, 50):
            a = fast.search(q, k)
            assert a == checked.search(q, k) == multi.search(q, k), (q, k)
            saw_tie |= any(x.score == y.score for x, y in itertools.pairwise(a))
    assert saw_tie


def test_page_lookup_redirects_and_case(snaps: tuple[Snapshot, Snapshot]) -> None:
    snap = snaps[0]
    page = snap.page("Anarchism")
    assert page is not None and page.title == "Anarchism"
    assert page.sections[0].path == ()
    assert len(page.sections) > 3
    assert any(s.path and s.path[0] == "History" for s in page.sections)
    assert page.links and all(link.passage_id in _ids(page) for link in page.links)
    assert snap.page("anarchism").doc_id == page.doc_id  # type: ignore[union-attr]
    assert snap.page("  ANARCHISM ").doc_id == page.doc_id  # type: ignore[union-attr]
    assert snap.page(page.doc_id).title == "Anarchism"  # type: ignore[union-attr]
    assert snap.page(str(page.doc_id)).title == "Anarchism"  # type: ignore[union-attr]
    # A redirect title in the dump leads to its target and is listed as an alias.
    rows = snap.sql(
        "SELECT title, redirects_from FROM articles WHERE len(redirects_from) > 0 ORDER BY doc_id"
    ).to_pylist()
    assert rows, "the enwiki excerpt has redirects to articles it contains"
    alias = rows[0]["redirects_from"][0]
    via = snap.page(alias)
    assert via is not None and via.title == rows[0]["title"] and via.resolved_from == alias
    assert snap.page("No such page at all") is None
    assert snap.page(10**9) is None
    assert snap.page(-1) is None


def _ids(page: object) -> set[int]:
    return {pid for s in page.sections for pid in s.passage_ids}  # type: ignore[attr-defined]


def test_sql_views(snaps: tuple[Snapshot, Snapshot]) -> None:
    snap = snaps[0]
    counts = snap.manifest["counts"]
    n = snap.sql("SELECT count(*) AS n FROM passages").column("n")[0].as_py()
    assert n == counts["passages"]
    ids = snap.sql("SELECT doc_id FROM articles ORDER BY doc_id").column("doc_id").to_pylist()
    assert ids == list(range(counts["articles"]))  # dense
    facts = snap.sql("SELECT * FROM facts WHERE source = 'infobox' LIMIT 5").to_pylist()
    assert facts and all(f["relation"] and f["object"] for f in facts)
    spans = snap.sql(
        "SELECT p.text, substr(a.text, p.char_start + 1, p.char_end - p.char_start) AS cut "
        "FROM passages p JOIN articles a USING (doc_id) LIMIT 200"
    ).to_pylist()
    assert all(r["text"] == r["cut"] for r in spans)


def test_shared_across_threads(snaps: tuple[Snapshot, Snapshot]) -> None:
    snap = snaps[0]
    expected = {q: [h.passage_id for h in snap.search(q, 10)] for q in TIE_QUERIES}
    errors: list[str] = []

    def work() -> None:
        for _ in range(5):
            for q in TIE_QUERIES:
                if [h.passage_id for h in snap.search(q, 10)] != expected[q]:
                    errors.append(q)
                if snap.page("Anarchism") is None:
                    errors.append("page")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_skipped_pages_named_in_manifest(snaps: tuple[Snapshot, Snapshot]) -> None:
    manifest = snaps[0].manifest
    assert manifest["counts"]["pages_skipped"] == len(manifest["skipped"])
    assert all({"title", "reason", "source"} <= set(s) for s in manifest["skipped"])
    names = [f["name"] for src in manifest["sources"] for f in src["files"]]
    assert Path(ENWIKI).name in names
    assert all("/" not in n for n in names)


def test_corruption_detected(snaps: tuple[Snapshot, Snapshot], tmp_path: Path, capsys) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(snaps[0].path, copy)
    assert cli(["corpus", "verify", str(copy)]) == 0
    target = copy / "passages.parquet"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    with pytest.raises(SnapshotCorruptedError, match=r"passages\.parquet"):
        Snapshot.open(copy)
    capsys.readouterr()
    assert cli(["corpus", "verify", str(copy)]) == 1
    assert "passages.parquet" in capsys.readouterr().err
    (copy / "links.parquet").unlink()
    with pytest.raises(SnapshotCorruptedError, match=r"files\[links\.parquet\]: missing"):
        Snapshot.open(copy, verify="sizes")
    with pytest.raises(SnapshotError, match=r"manifest\.json is missing"):
        Snapshot.open(tmp_path)


def test_truncated_source_leaves_nothing(shared_data: Path, tmp_path: Path) -> None:
    raw = (shared_data / ENWIKI).read_bytes()
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(raw[: len(raw) * 6 // 10])
    out = tmp_path / "snap"
    with pytest.raises(SourceError):
        build_snapshot([open_build_source(cut)], out, progress=False)
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["cut.xml.bz2"]
    xml = tmp_path / "cut.xml"
    xml.write_bytes(bz2.decompress(raw)[:200_000])
    with pytest.raises(SourceError):
        build_snapshot([open_build_source(xml)], out, progress=False)
    assert not out.exists()
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 40)
    with pytest.raises(SourceError):
        open_build_source(garbage)


def test_refuses_to_overwrite(snaps: tuple[Snapshot, Snapshot], shared_data: Path) -> None:
    with pytest.raises(BuildError, match="exists"):
        build_snapshot(
            [open_build_source(shared_data / "wiki/enwiki-3pages-schema09.xml.bz2")],
            snaps[0].path,
            progress=False,
        )


@pytest.mark.parametrize(
    "name",
    [
        "wiki/kilt-99articles.jsonl",
        "wiki/dpr-wiki18-1000passages.jsonl",
        "qa/hotpotqa-distractor-300.jsonl",
        "wiki/bgwiki-utf16-excerpt.xml.bz2",
        "wiki/enwiki-table-markup-nositeinfo.xml.bz2",
        "wiki/enwiki-3pages-schema09.xml.bz2",
    ],
)
def test_every_format_builds_and_searches(shared_data: Path, tmp_path: Path, name: str) -> None:
    snap = _build(shared_data, tmp_path / "s", 1, name)
    assert snap.num_articles > 0 and snap.num_passages >= snap.num_articles
    first = snap.sql(
        "SELECT a.title FROM passages p JOIN articles a USING (doc_id) ORDER BY p.passage_id LIMIT 1"
    )
    title = first.column("title")[0].as_py()
    hits = snap.search(title, 3)
    assert hits and any(h.title == title for h in hits)


def test_cli_info_search_sql(snaps: tuple[Snapshot, Snapshot], capsys) -> None:
    path = str(snaps[0].path)
    assert cli(["corpus", "info", path]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["snapshot_id"] == snaps[0].snapshot_id
    assert cli(["corpus", "search", path, "anarchism", "-k", "2", "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["rank"] for x in lines] == [1, 2] and lines[0]["title"] == "Anarchism"
    assert cli(["corpus", "sql", path, "SELECT count(*) AS n FROM articles", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == snaps[0].num_articles
    assert cli(["corpus", "info", path + "-missing"]) == 1
    assert "manifest.json is missing" in capsys.readouterr().err


def test_numeric_titles_win_over_doc_ids(tmp_path: Path) -> None:
    src = tmp_path / "pages"
    src.mkdir()
    (src / "Alpha.txt").write_text("Alpha is the first page. It links to [[1]].", encoding="utf-8")
    (src / "Beta.txt").write_text("Beta is the second page about rivers.", encoding="utf-8")
    (src / "1.txt").write_text("The year one is a page whose title is a number.", encoding="utf-8")
    build_snapshot([open_build_source(src)], tmp_path / "s", progress=False)
    snap = Snapshot.open(tmp_path / "s")
    titles = snap.sql("SELECT doc_id, title FROM articles ORDER BY doc_id").to_pylist()
    assert [r["title"] for r in titles] == ["1", "Alpha", "Beta"]  # sorted file names
    by_title = snap.page("1")
    assert by_title is not None and by_title.title == "1"
    assert snap.page(1).title == "Alpha"  # type: ignore[union-attr]  # an int is a doc id
    assert snap.page("2").title == "Beta"  # type: ignore[union-attr]  # no such title: doc id
    assert snap.page("7") is None
    assert len(snap.search("page", 10**12)) == snap.num_passages  # k is clamped, not a heap size
