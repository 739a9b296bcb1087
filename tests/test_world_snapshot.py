"""The generated world through the real build: determinism, facts located in passages."""

from __future__ import annotations

from pathlib import Path

import pytest

from wikigym.cli import main as cli
from wikigym.corpora import BuildConfig, Snapshot
from wikigym.corpora.default import build_world_snapshot


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Snapshot]:
    root = tmp_path_factory.mktemp("worlds")
    out = {}
    for name, seed, threads in (("a1", 5, 1), ("a2", 5, 2), ("b1", 6, 1)):
        build_world_snapshot(500, seed, root / name, BuildConfig(threads=threads), progress=False)
        out[name] = Snapshot.open(root / name)
    return out


def test_same_seed_same_id_any_threads(worlds: dict[str, Snapshot]) -> None:
    assert worlds["a1"].snapshot_id == worlds["a2"].snapshot_id
    assert worlds["a1"].manifest["tables"] == worlds["a2"].manifest["tables"]
    assert worlds["a1"].snapshot_id != worlds["b1"].snapshot_id
    gen = worlds["a1"].manifest["sources"][0]["generator"]
    assert gen["config"] == {"articles": 500, "seed": 5}


def test_world_facts_are_located(worlds: dict[str, Snapshot]) -> None:
    snap = worlds["a1"]
    rows = snap.sql(
        "SELECT f.relation, f.object, f.value_type, f.object_doc_id, p.text "
        "FROM facts f JOIN passages p USING (passage_id) WHERE f.source = 'world'"
    ).to_pylist()
    total = (
        snap.sql("SELECT count(*) AS n FROM facts WHERE source = 'world'").column("n")[0].as_py()
    )
    assert rows and len(rows) == total  # every world fact is stated in a known passage
    relations = {r["relation"] for r in rows}
    assert len(relations) >= 30
    entity = [r for r in rows if r["value_type"] == "entity"]
    assert entity and all(r["object_doc_id"] is not None for r in entity)
    types = snap.sql("SELECT count(DISTINCT object) AS n FROM facts WHERE relation = 'instance_of'")
    assert types.column("n")[0].as_py() >= 8


def test_search_identical_across_threads(worlds: dict[str, Snapshot]) -> None:
    titles = (
        worlds["a1"]
        .sql("SELECT title FROM articles ORDER BY doc_id LIMIT 20")
        .column(0)
        .to_pylist()
    )
    for q in [*titles, "born", "river", "founded in", "the"]:
        a = [(h.passage_id, h.score) for h in worlds["a1"].search(q, 10)]
        b = [(h.passage_id, h.score) for h in worlds["a2"].search(q, 10)]
        assert a == b


def test_cli_build_synthetic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "w"
    assert (
        cli(
            [
                "corpus",
                "build",
                "synthetic",
                "--articles",
                "200",
                "--seed",
                "1",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    assert "snapshot" in capsys.readouterr().out
    assert cli(["corpus", "verify", str(out)]) == 0
    assert (
        cli(["corpus", "build", "synthetic", "--articles", "200", "--out", str(out), "--quiet"])
        == 1
    )
    assert "exists" in capsys.readouterr().err
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp leftovers
