"""Resolution in hash partitions of the titles: the tables do not depend on the partition count.

Forced partition counts (``partition_titles`` small) against one partition: duplicate
redirect titles, a redirect title that is also an article, double redirects (followed),
triple ones (not), redirects and links to missing pages, titles whose hashes share a
partition; and the pinned snapshot ids of the generated world and the enwiki excerpt.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from tests.test_build_scale import EXCERPT_ID, WORLD_400_S3_ID
from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source, resolve
from wikigym.corpora.default import build_world_snapshot
from wikigym.corpora.resolve import partitions_for
from wikigym.corpora.tables import TABLES

PROSE = "This page has enough prose to be kept as an article by the build of the test. "


def _page(title: str, text: str, redirect: str | None = None) -> str:
    tag = f'<redirect title="{redirect}"/>' if redirect else ""
    return (
        f"<page><title>{title}</title><ns>0</ns><id>1</id>{tag}<revision>"
        f"<timestamp>2020-01-01T00:00:00Z</timestamp><text>{text}</text></revision></page>"
    )


def _redirect(title: str, target: str) -> str:
    return _page(title, f"#REDIRECT [[{target}]]", target)


LINKED = ["A1", "A2", "A3", "Missing", "Gamma", "Dup", "Beta", "Loose", "Beta2"]


def _dump(path: Path) -> Path:
    links = " ".join(f"See [[{t}]]." for t in LINKED)
    pages = [
        _page("Alpha", PROSE + links),
        _page("Beta", PROSE + "Back to [[Alpha]]."),
        _page("Gamma", PROSE),
        _redirect("A1", "Beta"),
        _redirect("A2", "A1"),  # double redirect: followed
        _redirect("A3", "A2"),  # triple: not followed
        _redirect("Dup", "Gamma"),  # a duplicate redirect title keeps the smallest target
        _redirect("Dup", "Beta"),
        _redirect("Beta", "Gamma"),  # a redirect title that is an article: dropped
        _redirect("Loose", "Nowhere"),  # to a missing page
        _redirect("Beta2", "Beta"),
    ]
    pages += [
        _page(f"Filler {i}", PROSE + f"[[A{1 + i % 3}]] [[Filler {i + 1}]]") for i in range(40)
    ]
    path.write_text(
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11">'
        + "".join(pages)
        + "</mediawiki>",
        encoding="utf-8",
    )
    return path


def _build(dump: Path, out: Path, partition_titles: int) -> Snapshot:
    config = BuildConfig(partition_titles=partition_titles)
    build_snapshot([open_build_source(dump)], out, config, progress=False)
    return Snapshot.open(out)


def test_partition_count_from_titles() -> None:
    assert partitions_for(0) == 1
    assert partitions_for(10, 10) == 1
    assert partitions_for(11, 10) == 2
    assert partitions_for(1_190_000, 1 << 18) == 5
    with pytest.raises(ValueError):
        partitions_for(10, 0)


def test_partitions_give_the_same_tables(tmp_path: Path) -> None:
    """One partition, three, and one per title (so several titles share each partition's
    hash slot) write identical tables and resolve redirects as MediaWiki would, plus one
    extra hop."""
    dump = _dump(tmp_path / "dump.xml")
    snaps = {p: _build(dump, tmp_path / f"p{p}", p) for p in (10**6, 20, 1)}
    one = snaps[10**6]
    titles = [r["title"] for r in one.sql("SELECT title FROM articles").to_pylist()]
    parts = partitions_for(len(titles) + 7, 1)
    slots = duckdb.sql(
        "SELECT count(DISTINCT hash(t) % $p) FROM unnest($titles) u(t)",
        params={"p": parts, "titles": titles},
    ).fetchone()
    assert slots is not None and slots[0] < len(titles)  # some titles share a partition
    for p, snap in snaps.items():
        assert snap.snapshot_id == one.snapshot_id, p
        for name in TABLES:
            assert snap.manifest["tables"][name] == one.manifest["tables"][name], (p, name)
    doc = {
        r["title"]: r["doc_id"] for r in one.sql("SELECT title, doc_id FROM articles").to_pylist()
    }
    resolved = {
        r["target_title"]: r["target_doc_id"]
        for r in one.sql(
            "SELECT target_title, target_doc_id FROM links WHERE src_doc_id = $d",
            params={"d": doc["Alpha"]},
        ).to_pylist()
    }
    assert resolved == {
        "A1": doc["Beta"],
        "A2": doc["Beta"],
        "A3": None,
        "Missing": None,
        "Gamma": doc["Gamma"],
        "Dup": doc["Beta"],
        "Beta": doc["Beta"],
        "Loose": None,
        "Beta2": doc["Beta"],
    }
    aliases = {
        r["title"]: list(r["redirects_from"])
        for r in one.sql("SELECT title, redirects_from FROM articles").to_pylist()
    }
    assert aliases["Beta"] == ["A1", "A2", "Beta2", "Dup"]
    assert aliases["Gamma"] == []


def test_world_id_unchanged_with_many_partitions(tmp_path: Path) -> None:
    """The generated world (links, facts, redirects) in ~13 partitions: the pinned id."""
    build_world_snapshot(400, 3, tmp_path / "w", BuildConfig(partition_titles=37), progress=False)
    assert Snapshot.open(tmp_path / "w").snapshot_id == WORLD_400_S3_ID


def test_excerpt_id_unchanged_with_many_partitions(tmp_path: Path, shared_data: Path) -> None:
    """Real pages (unresolved links, redirects, double redirects) in ~13 partitions."""
    excerpt = shared_data / "wiki" / "enwiki-excerpt-206pages.xml.bz2"
    if not excerpt.is_file():
        pytest.skip(f"{excerpt} is not here")
    config = BuildConfig(threads=2, partition_titles=16)
    report = build_snapshot([open_build_source(excerpt)], tmp_path / "s", config, progress=False)
    assert report.snapshot_id == EXCERPT_ID


def test_ordering_in_small_id_ranges_gives_the_same_tables(
    tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The final order by id taken in ranges of 3 ids (hundreds of sorts, some ranges
    empty of links or facts) against the pinned ids: the ranges' concatenation is the one
    sort it replaced, byte for byte."""
    sorts: list[int] = []
    in_order = resolve.Resolver._in_order

    def counting(
        self: resolve.Resolver, table: str, key: str, rows: duckdb.DuckDBPyRelation
    ) -> Iterator[pa.RecordBatch]:
        for batch in in_order(self, table, key, rows):
            sorts.append(batch.num_rows)
            yield batch

    excerpt = shared_data / "wiki" / "enwiki-excerpt-206pages.xml.bz2"
    monkeypatch.setattr(resolve, "ORDER_IDS", 3)
    monkeypatch.setattr(resolve.Resolver, "_in_order", counting)
    report = build_snapshot(
        [open_build_source(excerpt)], tmp_path / "s", BuildConfig(threads=1), progress=False
    )
    assert report.snapshot_id == EXCERPT_ID
    assert sorts and max(sorts) <= 3  # no batch of a range sort holds more than its ids
    assert sum(sorts) == report.links + report.facts


@pytest.mark.slow  # a build of the 3,000-article world: ~30-60 s on 2 cores
def test_many_partitions_resolve_within_a_small_memory_limit(tmp_path: Path) -> None:
    """The default world in ~70 partitions under a 32 MB DuckDB limit: each resolved column
    is one scan over the partition files, sorted within the limit (a chain of per-file
    unions ran out of it, as the 4.5M-passage build did at 128 MB), and the snapshot is the
    default world's, byte for byte."""
    from wikigym.tasks.defaults import default_resources

    expected = default_resources(progress=False)[0].snapshot_id
    config = BuildConfig(threads=2, partition_titles=50, duckdb_memory="32MB")
    build_world_snapshot(3000, 0, tmp_path / "w", config, progress=False)
    assert Snapshot.open(tmp_path / "w").snapshot_id == expected
