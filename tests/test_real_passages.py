"""DPR and KILT sources: every passage kept, searchable, with its original id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source

DPR = "wiki/dpr-wiki18-1000passages.jsonl"
KILT = "wiki/kilt-99articles.jsonl"


@pytest.fixture(scope="module")
def dpr_snapshot(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    out = tmp_path_factory.mktemp("dpr") / "snap"
    build_snapshot([open_build_source(shared_data / DPR)], out, BuildConfig(), progress=False)
    return Snapshot.open(out)


def test_dpr_every_passage_searchable_with_its_id(
    dpr_snapshot: Snapshot, shared_data: Path
) -> None:
    rows = [json.loads(x) for x in (shared_data / DPR).read_text(encoding="utf-8").splitlines()]
    table = dpr_snapshot.sql(
        "SELECT source_passage_id, text FROM passages ORDER BY passage_id"
    ).to_pylist()
    assert len(table) == len(rows) == 1000
    by_id = {r["source_passage_id"]: r["text"] for r in table}
    assert sorted(by_id) == sorted(str(r["id"]) for r in rows)  # ids round-trip, none lost
    for row in rows:
        assert by_id[str(row["id"])] == row["contents"].partition("\n")[2].strip()
    # Every passage is found by its own text, and the hit names its original id.
    for row in rows:
        text = row["contents"].partition("\n")[2]
        hits = dpr_snapshot.search(text, 3)
        assert str(row["id"]) in [h.source_passage_id for h in hits], row["id"]
    counts = dpr_snapshot.manifest["source_counts"]
    assert counts == [
        {
            "name": Path(DPR).name,
            "format": "dpr-jsonl",
            "pages_read": 472,
            "pages_skipped": 0,
            "redirects": 0,
            "articles": 472,
            "passages": 1000,
            "source_passages": 1000,
            "facts": 0,
            "typed_facts": {},
            "dropped": {},
        }
    ]


def test_kilt_passages_name_their_paragraphs(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "kilt"
    report = build_snapshot(
        [open_build_source(shared_data / KILT)], out, BuildConfig(), progress=False
    )
    snap = Snapshot.open(out)
    rows = snap.sql(
        "SELECT a.title, p.source_passage_id, p.text FROM passages p "
        "JOIN articles a USING (doc_id) ORDER BY p.passage_id"
    ).to_pylist()
    assert rows and all(r["source_passage_id"] for r in rows)
    first = json.loads((shared_data / KILT).read_text(encoding="utf-8").splitlines()[0])
    paragraphs = first["text"]
    # This sample has no wikipedia_id: paragraphs are named by title and index.
    key = str(first.get("wikipedia_id", first["wikipedia_title"]))
    mine = [r for r in rows if r["title"] == first["wikipedia_title"]]
    assert len(mine) > 5
    for r in mine:
        ids = r["source_passage_id"].split("..")
        assert all(i.startswith(f"{key}:") for i in ids)
        start = int(ids[0].rpartition(":")[2])
        # The passage begins with (a sentence of) the paragraph its first id names.
        assert r["text"].split("\n")[0][:30] in paragraphs[start], r["source_passage_id"]
    assert report.sources[0].source_passages == report.passages
    assert report.sources[0].pages_read == 99


def test_dpr_bad_rows_are_counted_by_cause(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"id": "1", "contents": "\\"T\\"\\nfirst"}\n{"id": "2"}\n{"id": "3", "contents": "\\nx"}\n'
        '{"id": "4", "contents": "\\"T\\"\\n"}\n',
        encoding="utf-8",
    )
    report = build_snapshot([open_build_source(path)], tmp_path / "s", progress=False)
    counts = report.sources[0].to_dict()
    assert counts["passages"] == counts["source_passages"] == 2  # a title-only passage too
    assert counts["dropped"] == {"no 'contents' string": 1, "passage has no title": 1}
    assert "dropped 1 (passage has no title)" in report.summary()
