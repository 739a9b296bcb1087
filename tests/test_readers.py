"""Tests of the source readers on the real files of the shared data folder."""

from __future__ import annotations

import bz2
import csv
import gzip
import hashlib
import json
import tracemalloc
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from wikigym.corpora.readers import (
    FORMATS,
    Source,
    SourceFile,
    detect_format,
    iter_mediawiki,
    open_source,
)
from wikigym.corpora.readers.base import iter_json_array, open_input
from wikigym.corpora.records import ParsedPage, RawPage, SkippedPage
from wikigym.errors import SourceError

ENWIKI = "wiki/enwiki-excerpt-206pages.xml.bz2"
BGWIKI = "wiki/bgwiki-utf16-excerpt.xml.bz2"
NOSITEINFO = "wiki/enwiki-table-markup-nositeinfo.xml.bz2"
SCHEMA09 = "wiki/enwiki-3pages-schema09.xml.bz2"
HISTORY = "wiki/history-dump-schema08.xml"
WIKITEXT = "wiki/wikitext"
KILT = "wiki/kilt-99articles.jsonl"
DPR = "wiki/dpr-wiki18-1000passages.jsonl"
HOTPOT = "qa/hotpotqa-distractor-300.jsonl"


def read_all(source: Source) -> tuple[list[RawPage | ParsedPage | SkippedPage], int]:
    """All records and the sum of the progress callbacks."""
    consumed = [0]

    def progress(n: int) -> None:
        assert n > 0
        consumed[0] += n

    records = list(source.records(progress=progress))
    return records, consumed[0]


def by_title(records: list) -> dict[str, RawPage | ParsedPage]:
    return {r.title: r for r in records if not isinstance(r, SkippedPage)}


def write_xml(path: Path, body: str, siteinfo: str = "") -> Path:
    path.write_text(
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11">'
        f"{siteinfo}{body}</mediawiki>",
        encoding="utf-8",
    )
    return path


def page_xml(title: str | None, text: str | None, ns: str | None = "0", extra: str = "") -> str:
    parts = ["<page>"]
    if title is not None:
        parts.append(f"<title>{title}</title>")
    if ns is not None:
        parts.append(f"<ns>{ns}</ns>")
    parts.append(f"<id>1</id>{extra}")
    if text is not None:
        parts.append(
            f"<revision><timestamp>2020-01-01T00:00:00Z</timestamp><text>{text}</text></revision>"
        )
    parts.append("</page>")
    return "".join(parts)


# --- mediawiki -----------------------------------------------------------------------------


def test_enwiki_excerpt_pages_redirects_and_progress(shared_data: Path) -> None:
    path = shared_data / ENWIKI
    source = open_source(path)
    assert source.format == "mediawiki"
    assert isinstance(source, Source)
    records, consumed = read_all(source)
    # 206 pages in the file, one in namespace 4 (Wikipedia:) is dropped.
    assert len(records) == 205
    assert all(isinstance(r, RawPage) for r in records)
    assert not any(r.title.startswith("Wikipedia:") for r in records)
    redirects = [r for r in records if r.redirect]
    assert len(redirects) == 99
    pages = by_title(records)
    assert pages["AccessibleComputing"].redirect == "Computer accessibility"
    anarchism = pages["Anarchism"]
    assert anarchism.redirect is None
    assert "'''Anarchism''' is a [[political philosophy]]" in anarchism.wikitext
    assert anarchism.url == "https://en.wikipedia.org/wiki/Anarchism"
    assert anarchism.source_id == "12"
    assert records[0].title == "AccessibleComputing"
    # Progress counts compressed bytes and adds up to the file size.
    assert consumed == source.total_bytes() == path.stat().st_size
    expected_sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert source.files() == [SourceFile(path=path.resolve(), sha256=expected_sha, size=consumed)]


def test_url_uses_underscores(shared_data: Path) -> None:
    pages = by_title(list(iter_mediawiki(shared_data / SCHEMA09)))
    assert pages["Computer accessibility"].url == (
        "http://en.wikipedia.org/wiki/Computer_accessibility"
    )


def test_utf16_bgwiki(shared_data: Path) -> None:
    records = list(open_source(shared_data / BGWIKI).records())
    # Three pages, two of them in the project namespace (4).
    assert [r.title for r in records] == ["Григориански календар"]
    page = records[0]
    assert isinstance(page, RawPage)
    assert "Григориански" in page.wikitext
    assert page.url == "https://bg.wikipedia.org/wiki/Григориански_календар"


def test_schema09_three_pages_one_redirect(shared_data: Path) -> None:
    records = list(open_source(shared_data / SCHEMA09).records())
    assert [r.title for r in records] == [
        "AccessibleComputing",
        "Computer accessibility",
        "Accessibility",
    ]
    assert [r.redirect for r in records] == ["Computer accessibility", None, None]


def test_no_siteinfo(shared_data: Path) -> None:
    records = list(open_source(shared_data / NOSITEINFO).records())
    assert len(records) == 5
    assert records[0].title == "Constructive vote of no confidence"
    assert "Brahui language" in by_title(records)
    assert all(r.url is None and r.wikitext for r in records)


def test_history_dump_takes_latest_revision(shared_data: Path) -> None:
    records = list(open_source(shared_data / HISTORY).records())
    # "Bar" is in namespace 1 (Talk) and is dropped.
    assert [(r.title, r.wikitext) for r in records] == [("Foo", "Revision 2 text")]


def test_latest_revision_by_timestamp_then_order(tmp_path: Path) -> None:
    def rev(ts: str, text: str) -> str:
        return f"<revision><timestamp>{ts}</timestamp><text>{text}</text></revision>"

    body = (
        "<page><title>Out of order</title><ns>0</ns><id>1</id>"
        + rev("2005-01-01T00:00:00Z", "newest")
        + rev("2004-01-01T00:00:00Z", "older")
        + "</page><page><title>Tie</title><ns>0</ns><id>2</id>"
        + rev("2004-01-01T00:00:00Z", "first")
        + rev("2004-01-01T00:00:00Z", "second")
        + "</page>"
    )
    records = list(iter_mediawiki(write_xml(tmp_path / "h.xml", body)))
    assert [(r.title, r.wikitext) for r in records] == [
        ("Out of order", "newest"),
        ("Tie", "second"),
    ]


def test_namespace_by_title_prefix_when_ns_missing(tmp_path: Path) -> None:
    siteinfo = (
        "<siteinfo><base>https://x.org/wiki/Main_Page</base><namespaces>"
        '<namespace key="0" /><namespace key="1">Talk</namespace>'
        '<namespace key="100">Portal</namespace></namespaces></siteinfo>'
    )
    body = "".join(
        page_xml(t, "text", ns=None)
        for t in ["Talk:Foo", "Portal:Bar", "Star Wars: A New Hope", "Plain"]
    )
    records = list(iter_mediawiki(write_xml(tmp_path / "ns.xml", body, siteinfo)))
    assert [r.title for r in records] == ["Star Wars: A New Hope", "Plain"]
    assert records[1].url == "https://x.org/wiki/Plain"
    # Without siteinfo the default English namespace names apply.
    records = list(iter_mediawiki(write_xml(tmp_path / "ns2.xml", body)))
    assert [r.title for r in records] == ["Star Wars: A New Hope", "Plain"]


def test_page_without_title_or_text_is_skipped(tmp_path: Path) -> None:
    body = (
        page_xml("First", "one")
        + page_xml(None, "orphan text")
        + page_xml("No text", None)
        + page_xml("Deleted", None, extra="").replace(
            "</page>", '<revision><text deleted="deleted" /></revision></page>'
        )
        + page_xml("Last", "#REDIRECT [[First]]")
    )
    path = write_xml(tmp_path / "skip.xml", body)
    records = list(open_source(path).records())
    assert [type(r).__name__ for r in records] == [
        "RawPage",
        "SkippedPage",
        "SkippedPage",
        "SkippedPage",
        "RawPage",
    ]
    assert records[1].title == "<page #2 in skip.xml>"
    assert records[1].source == str(path.resolve())
    assert records[2].title == "No text"
    assert records[2].reason == "page has no <revision>"
    assert records[3].reason == "revision has no text"
    # A redirect without <redirect/> is recognised from the text.
    assert records[4].redirect == "First"


def test_truncated_bz2_raises_after_some_pages(shared_data: Path, tmp_path: Path) -> None:
    data = (shared_data / ENWIKI).read_bytes()
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(data[: int(len(data) * 0.6)])
    assert detect_format(cut) == "mediawiki"
    seen = []
    with pytest.raises(SourceError, match=r"cut\.xml\.bz2.*truncated") as info:
        seen.extend(open_source(cut).records())
    assert "\n" not in str(info.value)
    assert 0 < len(seen) < 205


def test_xml_cut_in_the_middle_raises(shared_data: Path, tmp_path: Path) -> None:
    xml = bz2.decompress((shared_data / ENWIKI).read_bytes())
    cut = tmp_path / "cut.xml"
    cut.write_bytes(xml[: len(xml) // 2])
    with pytest.raises(SourceError, match=r"cut\.xml: the XML ends before </mediawiki>"):
        list(open_source(cut).records())


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("random.bin", bytes(range(256)) * 40),
        ("page.html", b"<!DOCTYPE html><html><body><p>Not a dump</body></html>"),
        ("data.json", b'{"name": "not a corpus", "rows": [1, 2, 3]}'),
        ("other.xml", b'<?xml version="1.0"?><rss><channel/></rss>'),
        ("fake.bz2", b"BZh9" + bytes(range(256)) * 10),
        ("empty.txt", b""),
    ],
)
def test_non_sources_raise_on_detection(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(SourceError) as info:
        open_source(path)
    message = str(info.value)
    assert name in message and "pass --format" in message
    assert all(fmt in message for fmt in FORMATS)


@pytest.mark.parametrize(
    "content",
    [
        b"<!DOCTYPE html><html><body><p>Not a dump</body></html>",
        bytes(range(256)) * 40,
        b'{"name": "json"}',
        b"",
    ],
)
def test_forced_mediawiki_on_non_dump_raises(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "forced.xml"
    path.write_bytes(content)
    with pytest.raises(SourceError, match=r"forced\.xml"):
        list(open_source(path, format="mediawiki").records())


def test_gzip_dump_reads_like_plain(shared_data: Path, tmp_path: Path) -> None:
    gz = tmp_path / "history.xml.gz"
    gz.write_bytes(gzip.compress((shared_data / HISTORY).read_bytes()))
    source = open_source(gz)
    records, consumed = read_all(source)
    assert [(r.title, r.wikitext) for r in records] == [("Foo", "Revision 2 text")]
    assert consumed == gz.stat().st_size


def test_mediawiki_memory_stays_bounded(tmp_path: Path) -> None:
    pages = 20_000
    filler = "Lorem ipsum dolor sit amet [[link]] " * 12
    path = tmp_path / "big.xml"
    with path.open("w", encoding="utf-8") as out:
        out.write('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">')
        for i in range(pages):
            out.write(page_xml(f"Page {i}", f"{filler}{i}"))
        out.write("</mediawiki>")
    size = path.stat().st_size
    assert size > 10_000_000
    tracemalloc.start()
    try:
        count = sum(1 for _ in iter_mediawiki(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == pages
    # The whole tree would take several times the file size; bounded reading holds ~chunks.
    assert peak < 6_000_000, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB file"


# --- wikitext-dir --------------------------------------------------------------------------


def test_wikitext_dir(shared_data: Path) -> None:
    folder = shared_data / WIKITEXT
    source = open_source(folder)
    assert source.format == "wikitext-dir"
    records, consumed = read_all(source)
    assert len(records) == 71
    assert all(isinstance(r, RawPage) for r in records)
    assert consumed == source.total_bytes()
    names = [f.path.name for f in source.files()]
    assert names == sorted(names) and len(names) == 71
    pages = by_title(records)
    assert "Arts Club of Chicago" in pages  # "_" -> " "
    assert "Alanine—oxo-acid-transaminase" in pages  # hyphens kept
    assert "2008-British-motorcycle-Grand-Prix" in pages
    assert pages["redirect"].redirect == "Toronto"
    assert pages["anarchism"].redirect is None
    assert pages["anarchism"].source_id == "anarchism.txt"


def test_wikitext_dir_non_utf8_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "Good_page.wiki").write_text("'''Good''' page.", encoding="utf-8")
    (tmp_path / "Latin1.txt").write_bytes("Caf\xe9 au lait".encode("latin-1"))
    (tmp_path / "notes.md").write_text("ignored", encoding="utf-8")
    records = list(open_source(tmp_path).records())
    assert [type(r).__name__ for r in records] == ["RawPage", "SkippedPage"]
    assert records[0].title == "Good page"
    assert records[1].title == "Latin1" and "not UTF-8" in records[1].reason


def test_folder_without_wikitext_raises(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("x", encoding="utf-8")
    with pytest.raises(SourceError, match="cannot tell the format"):
        open_source(tmp_path)


# --- kilt ----------------------------------------------------------------------------------


def test_kilt(shared_data: Path) -> None:
    source = open_source(shared_data / KILT)
    assert source.format == "kilt"
    records, consumed = read_all(source)
    assert len(records) == 99 and all(isinstance(r, ParsedPage) for r in records)
    assert consumed == source.total_bytes()
    page = records[0]
    assert page.title == "A"
    assert page.sections[0].path == ()
    assert page.sections[0].text.startswith('A (named , plural "As"')  # title line dropped
    paths = [s.path for s in page.sections]
    assert ("History",) in paths and ("History", "Typographic variants") in paths
    assert all("::::" not in s.text for r in records for s in r.sections)
    atlas = by_title(records)["List of Atlas Shrugged characters"]
    assert ("Major characters", "Protagonists", "Dagny Taggart") in [s.path for s in atlas.sections]


def test_kilt_markers_and_malformed_line(shared_data: Path, tmp_path: Path) -> None:
    lines = (shared_data / KILT).read_text(encoding="utf-8").splitlines()
    extra = {
        "wikipedia_id": 42,
        "wikipedia_title": "Marked",
        "text": [
            "Marked\n",
            "Lead.\n",
            "BLANK::::\n",
            "Section::::Part one:::Detail.\n",
            "BULLET::::- item\n",
        ],
        "categories": "Tests,Examples",
    }
    path = tmp_path / "kilt.jsonl"
    path.write_text(
        "\n".join([*lines[:3], '{"wikipedia_title": "Broken", "text": [', *lines[3:5]])
        + "\n"
        + json.dumps(extra)
        + "\n",
        encoding="utf-8",
    )
    records = list(open_source(path).records())
    kinds = Counter(type(r).__name__ for r in records)
    assert kinds == {"ParsedPage": 6, "SkippedPage": 1}
    skipped = records[3]
    assert isinstance(skipped, SkippedPage)
    assert skipped.title == "<line 4 in kilt.jsonl>" and "invalid JSON" in skipped.reason
    marked = records[-1]
    assert [(s.path, s.text) for s in marked.sections] == [
        ((), "Lead."),
        (("Part one", "Detail"), "- item"),
    ]
    assert marked.source_id == "42" and marked.categories == ("Tests", "Examples")
    # KILT paragraph ids: index in the ``text`` list, as KILT provenance counts them.
    assert [s.origin_ids for s in marked.sections] == [((0, "42:1"),), ((0, "42:4"),)]


# --- dpr -----------------------------------------------------------------------------------


def test_dpr_jsonl_keeps_every_passage_with_its_id(shared_data: Path) -> None:
    source = open_source(shared_data / DPR)
    assert source.format == "dpr-jsonl"
    records, consumed = read_all(source)
    assert consumed == source.total_bytes()
    assert all(isinstance(r, ParsedPage) for r in records)
    rows = [json.loads(x) for x in (shared_data / DPR).read_text(encoding="utf-8").splitlines()]
    # The sample is shuffled: 1000 passages of 472 titles, in 746 runs. One page per title,
    # every passage a whole section with its original id.
    assert len(records) == 472 == len({r.title for r in records})
    sections = [s for r in records for s in r.sections]
    assert all(s.whole and len(s.origin_ids) == 1 for s in sections)
    assert sorted(s.origin_ids[0][1] for s in sections) == sorted(str(r["id"]) for r in rows)
    texts = {str(r["id"]): r["contents"].partition("\n")[2].strip() for r in rows}
    assert all(s.text == texts[s.origin_ids[0][1]] for s in sections)
    first = records[0]
    assert (first.title, first.source_id) == ("Evan Morris", "0")
    assert first.sections[0].text.startswith("Evan Morris Evan L. Morris")
    assert "Absalon" in by_title(records)  # a title without quotes


def test_dpr_scattered_titles_grouped_in_first_appearance_order(tmp_path: Path) -> None:
    lines = [
        {"id": "7", "contents": '"A"\na one'},
        {"id": "8", "contents": '"B"\nb one'},
        {"id": "9", "contents": '"A"\na two'},
        {"id": "3", "contents": '"C"\nc one'},
        {"id": "4", "contents": '"C"\nc two'},
        {"id": "5", "contents": '"B"\nb two'},
    ]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    pages = list(open_source(path, "dpr-jsonl").records())
    # C is consecutive: it comes as it is read; A and B (scattered) follow, first-seen order.
    assert [(p.title, [s.origin_ids[0][1] for s in p.sections]) for p in pages] == [
        ("C", ["3", "4"]),
        ("A", ["7", "9"]),
        ("B", ["8", "5"]),
    ]


def test_dpr_tsv_matches_jsonl(shared_data: Path, tmp_path: Path) -> None:
    rows = [json.loads(x) for x in (shared_data / DPR).read_text(encoding="utf-8").splitlines()]
    path = tmp_path / "psgs_w100.tsv"
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(["id", "text", "title"])
        for row in rows[:200]:
            title, _, text = row["contents"].partition("\n")
            writer.writerow([row["id"], text, title.strip('"')])
    source = open_source(path)
    assert source.format == "dpr-tsv"
    tsv_records, consumed = read_all(source)
    assert consumed == path.stat().st_size
    jsonl = tmp_path / "first200.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows[:200]), encoding="utf-8")
    assert tsv_records == list(open_source(jsonl).records())
    # gzip'd TSV (how DPR distributes psgs_w100.tsv.gz) reads the same.
    gz = tmp_path / "psgs_w100.tsv.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert list(open_source(gz).records()) == tsv_records


# --- hf-parquet ----------------------------------------------------------------------------


def kilt_rows(shared_data: Path, n: int) -> list[dict]:
    rows = []
    with (shared_data / KILT).open(encoding="utf-8") as handle:
        for i, line in zip(range(n), handle, strict=False):
            article = json.loads(line)
            title = article["wikipedia_title"]
            text = "\n\n".join(p.strip().removeprefix("Section::::") for p in article["text"][1:])
            rows.append(
                {
                    "id": str(1000 + i),
                    "url": f"https://en.wikipedia.org/wiki/{title.replace(' ', '_')}",
                    "title": title,
                    "text": text,
                }
            )
    return rows


def test_hf_parquet(shared_data: Path, tmp_path: Path) -> None:
    rows = kilt_rows(shared_data, 12)
    path = tmp_path / "train-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=5)
    source = open_source(path)
    assert source.format == "hf-parquet"
    records, consumed = read_all(source)
    assert consumed == path.stat().st_size
    assert [r.title for r in records] == [r["title"] for r in rows]
    first = records[0]
    assert isinstance(first, ParsedPage)
    assert (first.source_id, first.url) == ("1000", "https://en.wikipedia.org/wiki/A")
    assert len(first.sections) == 1 and first.sections[0].path == ()
    assert first.sections[0].text.startswith('A (named , plural "As"')
    assert "\n\n\n" not in first.sections[0].text


def test_parquet_without_text_column_raises(tmp_path: Path) -> None:
    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"title": ["x"], "body": ["y"]}), path)
    with pytest.raises(SourceError, match="text"):
        detect_format(path)


# --- hotpotqa ------------------------------------------------------------------------------


def test_hotpotqa_hf_layout(shared_data: Path) -> None:
    source = open_source(shared_data / HOTPOT)
    assert source.format == "hotpotqa"
    records, consumed = read_all(source)
    assert consumed == source.total_bytes()
    # 300 questions x 10 paragraphs, 2958 distinct titles.
    assert len(records) == 2958
    assert len({r.title for r in records}) == 2958
    first = records[0]
    assert first.title == "Socialist Revolutionary Party" and first.source_id is None
    text = first.sections[0].text
    assert text.startswith("The Socialist Revolutionary Party")
    assert "Russian Revolution. Its general ideology" in text


def test_hotpotqa_original_layout(shared_data: Path, tmp_path: Path) -> None:
    lines = (shared_data / HOTPOT).read_text(encoding="utf-8").splitlines()[:20]
    hf_path = tmp_path / "hf.jsonl"
    hf_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = list(open_source(hf_path).records())
    original = []
    for line in lines:
        row = json.loads(line)
        context = row.pop("context")
        row["context"] = [
            [t, s] for t, s in zip(context["title"], context["sentences"], strict=True)
        ]
        original.append(row)
    array = tmp_path / "hotpot_dev_distractor_v1.json"
    array.write_text(json.dumps(original, indent=1), encoding="utf-8")
    jsonl = tmp_path / "original.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in original), encoding="utf-8")
    for path in (array, jsonl):
        source = open_source(path)
        assert source.format == "hotpotqa"
        records, consumed = read_all(source)
        assert records == expected
        assert consumed == path.stat().st_size


def test_json_array_stream_across_chunk_boundaries(tmp_path: Path) -> None:
    items = [{"n": i, "s": "x" * (i % 7), "v": [i, 1.5, None]} for i in range(50)] + [7, 12345]
    path = tmp_path / "a.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    with open_input(path) as inp:
        assert list(iter_json_array(inp, None, chunk=5)) == items
    path.write_text(json.dumps(items)[:-20], encoding="utf-8")
    with open_input(path) as inp, pytest.raises(SourceError, match=r"a\.json"):
        list(iter_json_array(inp, None, chunk=5))


# --- detection and API ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        (ENWIKI, "mediawiki"),
        (BGWIKI, "mediawiki"),
        (NOSITEINFO, "mediawiki"),
        (SCHEMA09, "mediawiki"),
        (HISTORY, "mediawiki"),
        (WIKITEXT, "wikitext-dir"),
        (KILT, "kilt"),
        (DPR, "dpr-jsonl"),
        (HOTPOT, "hotpotqa"),
    ],
)
def test_detect_real_files(shared_data: Path, relative: str, expected: str) -> None:
    assert detect_format(shared_data / relative) == expected


def test_detect_utf16_without_bz2(shared_data: Path, tmp_path: Path) -> None:
    path = tmp_path / "bg.xml"
    path.write_bytes(bz2.decompress((shared_data / BGWIKI).read_bytes()))
    assert detect_format(path) == "mediawiki"
    assert [r.title for r in open_source(path).records()] == ["Григориански календар"]


def test_open_source_errors(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="source not found"):
        open_source(tmp_path / "missing.xml")
    (tmp_path / "x.jsonl").write_text("{}\n", encoding="utf-8")
    with pytest.raises(SourceError, match="unknown source format 'csv'"):
        open_source(tmp_path / "x.jsonl", format="csv")


@pytest.mark.parametrize("fmt", ["kilt", "dpr-jsonl", "hotpotqa"])
def test_forced_jsonl_format_on_non_json_raises(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "page.html"
    path.write_text("<html><body>hi</body></html>\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"page\.html: not JSON lines"):
        list(open_source(path, format=fmt).records())


def test_records_are_deterministic(shared_data: Path) -> None:
    for relative in (ENWIKI, KILT, WIKITEXT):
        source = open_source(shared_data / relative)
        assert list(source.records()) == list(source.records())
