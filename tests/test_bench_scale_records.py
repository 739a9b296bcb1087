"""The scale report joins each build record with the search measured on the same snapshot."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _write(path: Path, record: dict[str, object]) -> Path:
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def test_records_join_by_snapshot_id_then_by_path(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_scale

    def build(path: str, sid: str, passages: int) -> dict[str, object]:
        return {
            "stage": "build",
            "snapshot": path,
            "snapshot_id": sid,
            "counts": {"passages": passages},
        }

    files = [
        # A search measured on another build (another path) of the same snapshot id.
        _write(tmp_path / "a.build", build("/big/rebuilt", "id-a", 200)),
        _write(
            tmp_path / "a.search",
            {
                "stage": "search",
                "snapshot": "/big/first",
                "snapshot_id": "id-a",
                "systems": {"x": 1},
            },
        ),
        # An older search record names no id: it joins its build by path.
        _write(tmp_path / "b.build", build("/big/b", "id-b", 100)),
        _write(tmp_path / "b.search", {"stage": "search", "snapshot": "/big/b", "systems": {}}),
        # A search with no build record is no row.
        _write(tmp_path / "c.search", {"stage": "search", "snapshot": "/big/c", "systems": {}}),
    ]
    rows = bench_scale.load_records(files)
    assert [r["build"]["snapshot_id"] for r in rows] == ["id-b", "id-a"]  # by passages
    assert rows[1]["search"]["snapshot"] == "/big/first"
    assert rows[0]["search"]["snapshot"] == "/big/b"
