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


def test_paired_ratio_takes_each_querys_fastest_pass() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_scale

    a, b = bench_scale.Timed(2), bench_scale.Timed(2)
    a.wall = [[1.0, 9.0, 3.0], [5.0, 2.0, 3.0]]  # fastest: 1, 2, 3
    b.wall = [[2.0, 4.0, 1.0], [4.0, 8.0, 3.0]]  # fastest: 2, 4, 1
    out = bench_scale.paired(a, b)
    assert out["p50"] == 0.5  # ratios 0.5, 0.5, 3.0
    assert out["p25"] == 0.5 and out["p75"] == 1.75


def test_curve_extrapolates_from_the_top_size_by_its_exponent() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_scale

    rows = [
        {"passages": n, "system": "wikigym", "p50_ms": ms, "p99_ms": 2 * ms}
        | {"cpu_p50_ms": ms, "cpu_p99_ms": 2 * ms}
        for n, ms in ((1_000_000, 1.0), (4_000_000, 2.0))  # exponent 0.5
    ]
    curve = {
        "rows": rows,
        "exponents": {
            f"wikigym {k}": 0.5 for k in ("p50_ms", "p99_ms", "cpu_p50_ms", "cpu_p99_ms")
        },
        "environment": {
            "command": "c",
            "date": "2026-12-06T00:00",
            "machine": {"load_avg_1_5_15": [1.0, 1.0, 1.0]},
        },
    }
    md = "\n".join(bench_scale.render_curves([curve]))
    line = next(x for x in md.splitlines() if x.startswith("| wikigym | 0.500"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    p50_21m = 2.0 * (bench_scale.WIKI18_PASSAGES / 4_000_000) ** 0.5
    assert cells[5] == f"{p50_21m:.3f}"
    assert cells[8] == f"{4.0 * (bench_scale.ENWIKI_PASSAGES / 4_000_000) ** 0.5:.3f}"


def test_extrapolation_fits_no_build_across_codes_and_latency_from_the_growth_run() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_scale

    def row(n: int, seconds: float, note: bool, p50: float) -> dict[str, object]:
        build = {"counts": {"passages": n}, "seconds": seconds, "peak_rss_bytes": 2**30}
        build |= {"index_bytes": 2**29, "snapshot_bytes": 2**30}
        if note:
            build["note"] = "another code's build"
        search = {"interleaved": True, "systems": {"wikigym": {"p50_ms": p50, "p99_ms": 9.0}}}
        return {"build": build, "search": search}

    rows = [row(1_000_000, 100.0, True, 5.0), row(4_000_000, 200.0, False, 50.0)]
    fits = bench_scale.extrapolate(rows)
    assert "build seconds" not in fits  # one build of this code is no curve
    assert fits["wikigym p50_ms"]["from_points"][0][1] == 5.0  # the search rows
    curve = {
        "rows": [
            {"passages": n, "system": "wikigym", "p50_ms": ms, "p99_ms": ms}
            for n, ms in ((1_000_000, 1.0), (4_000_000, 2.0))
        ]
    }
    fits = bench_scale.extrapolate(rows, [curve])
    assert fits["wikigym p50_ms"]["fit"].endswith("passages^0.500")  # the growth run's
    assert "build seconds" not in fits
