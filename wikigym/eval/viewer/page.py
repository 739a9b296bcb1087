"""Write the viewer: one HTML page and the data scripts it loads (``list.js`` at once, episodes
in chunks on demand), from one or two eval reports.

The page is static: no server, no network (its Content-Security-Policy allows nothing but its
own scripts), opened from a ``file://`` URL or as a CI artefact. Its data lives in a folder next
to it (``viewer/`` beside an ``index.html``, ``NAME_files/`` beside any other ``NAME.html``),
written whole or not at all.
"""

from __future__ import annotations

import contextlib
import html
import json
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from wikigym.eval.levels import ordered_levels
from wikigym.eval.runner import HALLUCINATION_TYPES
from wikigym.eval.stats import paired_difference, wilson
from wikigym.eval.viewer.data import (
    Report,
    Sources,
    episode_detail,
    list_row,
    open_sources,
    read_report,
    transcript,
)
from wikigym.outputs import atomic_output

CHUNK = 50
"""Episodes per data chunk: a click loads one chunk (its transcripts and passages)."""
CHUNK_PREFIX = "ep-"
COMPARE_HEADER = ["level", "tasks", "A success", "B success", "B - A [95% CI]", "fixed", "broken"]


def data_folder(page: Path) -> Path:
    """The folder of a page's data: ``viewer/`` beside ``index.html``, else ``NAME_files/``."""
    name = "viewer" if page.name == "index.html" else f"{page.stem}_files"
    return page.parent / name


def _asset(name: str) -> str:
    return resources.files("wikigym.eval.viewer").joinpath(f"assets/{name}").read_text("utf-8")


def _script(call: str, *args: Any) -> str:
    body = ", ".join(json.dumps(a, ensure_ascii=False, sort_keys=True) for a in args)
    return f"window.wikigymView.{call}({body});\n"


def _page(title: str, data: str, mode: str) -> str:
    return (
        _asset("page.html")
        .replace("__CSS__", _asset("viewer.css"))
        .replace("__JS__", _asset("viewer.js"))
        .replace("__TITLE__", html.escape(title))
        .replace("__DATA__", html.escape(data))
        .replace("__MODE__", mode)
    )


def _rate(k: int, n: int) -> str:
    if n == 0:
        return "-"
    low, high = wilson(k, n)
    return f"{k / n:.3f} [{low:.3f}, {high:.3f}]"


def _levels_table(report: Report) -> dict[str, Any]:
    rows = []
    groups = [(lv, [r for r in report.rows if r["level"] == lv]) for lv in _levels(report)]
    for name, group in [*groups, ("overall", report.rows)]:
        n = len(group)
        rows.append(
            [
                name,
                n,
                _rate(sum(r["success"] for r in group), n),
                f"{sum(r['f1'] for r in group) / n:.3f}" if n else "-",
                f"{sum(r['steps'] for r in group) / n:.2f}" if n else "-",
                sum(r["truncated"] for r in group),
            ]
        )
    header = ["level", "episodes", "success [95% CI]", "mean F1", "mean steps", "masked"]
    return {"header": header, "rows": rows}


def _levels(report: Report) -> list[str]:
    return ordered_levels(r["level"] for r in report.rows)


def _write_chunks(
    report: Report,
    sources: Sources,
    folder: Path,
    prefix: str,
    on_chunk: Callable[[int], None] | None,
    chunk: int = CHUNK,
) -> None:
    n = len(report.rows)
    for start in range(0, n, chunk):
        passages: dict[str, dict[str, Any]] = {}
        episodes = {
            str(i): episode_detail(report, i, sources, passages)
            for i in range(start, min(start + chunk, n))
        }
        key = f"{prefix}{CHUNK_PREFIX}{start // chunk:05d}"
        (folder / f"{CHUNK_PREFIX}{start // chunk:05d}.js").write_text(
            _script("chunk", key, {"episodes": episodes, "passages": passages}),
            encoding="utf-8",
        )
        if on_chunk is not None:
            on_chunk(min(start + chunk, n))


def _subtitle(report: Report) -> str:
    s = report.summary
    return (
        f"{len(report.rows)} episodes, agent {s.get('agent')}, reward {s.get('reward')}, "
        f"max steps {s.get('max_steps')}, seed {s.get('seed')}; snapshot "
        f"{report.snapshot_id[:12]}, TaskSet {report.taskset_id[:12]}"
    )


def write_run_page(
    report_dir: str | Path,
    out: str | Path | None = None,
    *,
    corpus: str | Path | None = None,
    tasks: str | Path | None = None,
    overwrite: bool = True,
    on_chunk: Callable[[int], None] | None = None,
    chunk: int = CHUNK,
) -> Path:
    """Write the episode viewer of one eval report; returns the page.

    Args:
        report_dir: The folder ``wikigym eval --report`` wrote.
        out: The page (default: ``REPORT/index.html``); its data goes beside it
            (:func:`data_folder`).
        corpus: The snapshot for passage texts (default: the one the trajectories name).
        tasks: The TaskSet for questions and proofs (default: the one the trajectories name).
        overwrite: Replace an existing page (the report's own ``index.html`` always is).
        on_chunk: Called with the number of episodes written so far (progress).
        chunk: Episodes per data file (a click loads one; ``benchmarks/bench_viewer.py``
            compares the sizes).

    Raises:
        EvalError: ``report_dir`` is not an eval report.
        OutputExistsError: ``out`` exists and ``overwrite`` is false.
    """
    report = read_report(report_dir)
    page = Path(out) if out is not None else report.path / "index.html"
    sources = open_sources(report, corpus=corpus, tasks=tasks)
    meta: dict[str, Any] = {
        "mode": "run",
        "title": f"wikigym eval: {report.name}",
        "subtitle": _subtitle(report),
        "levels": _levels(report),
        "tool_error_codes": sorted({c for r in report.rows for c in r["tool_errors"]}),
        "hallucination_types": list(HALLUCINATION_TYPES),
        "levels_table": _levels_table(report),
        "notes": report.notes,
        "data": data_folder(page).name,
        "chunk_prefix": CHUNK_PREFIX,
    }
    rows = [list_row(r, r["i"] // chunk) for r in report.rows]
    with _outputs(page, overwrite) as (tmp_page, tmp_data):
        (tmp_data / "list.js").write_text(
            _script("list", {"meta": meta, "rows": rows}), encoding="utf-8"
        )
        _write_chunks(report, sources, tmp_data, "", on_chunk, chunk)
        tmp_page.write_text(_page(meta["title"], meta["data"], "run"), encoding="utf-8")
    return page


@contextlib.contextmanager
def _outputs(page: Path, overwrite: bool) -> Iterator[tuple[Path, Path]]:
    """The page and its data folder, each whole or absent (the data is installed first)."""
    with (
        atomic_output(page, overwrite=overwrite, kind="file") as tmp_page,
        atomic_output(data_folder(page), overwrite=True) as tmp_data,
    ):
        yield tmp_page, tmp_data


# ------------------------------------------------------------------------- comparison


def _key(row: dict[str, Any]) -> tuple[str, int]:
    return (row["task_id"], row["seed"])


def first_difference(sa: list[tuple[str, str]], sb: list[tuple[str, str]]) -> int | None:
    """The first step (1-based) where two episodes' (action, observation) pairs differ; the
    step after the shorter one's end when one is a prefix of the other; None when identical."""
    for n, (x, y) in enumerate(zip(sa, sb, strict=False), 1):
        if x != y:
            return n
    if len(sa) != len(sb):
        return min(len(sa), len(sb)) + 1
    return None


def compare_reports(a: Report, b: Report) -> dict[str, Any]:
    """Per-task outcome changes and per-level deltas (B - A) with 95% intervals.

    Tasks are matched by task id and seed; the runs must be on the same tasks.

    Raises:
        EvalError: The runs share no task, or are on different TaskSets.
    """
    from wikigym.errors import EvalError

    if a.taskset_id and b.taskset_id and a.taskset_id != b.taskset_id:
        raise EvalError(
            f"the runs are on different TaskSets ({a.taskset_id[:12]} and {b.taskset_id[:12]}); "
            "compare two runs of the same tasks"
        )
    in_b = {_key(r): r for r in b.rows}
    pairs = [(r, in_b[_key(r)]) for r in a.rows if _key(r) in in_b]
    if not pairs:
        raise EvalError("the two runs share no (task, seed): compare two runs of the same tasks")
    levels: dict[str, list[int]] = {}
    for ra, rb in pairs:
        for name in (ra["level"], "overall"):
            counts = levels.setdefault(name, [0, 0, 0, 0])
            counts[_cell(ra["success"], rb["success"])] += 1
    deltas = {}
    for name in [*ordered_levels(lv for lv in levels if lv != "overall"), "overall"]:
        both, only_a, only_b, neither = levels[name]
        n = both + only_a + only_b + neither
        diff, low, high = paired_difference(both, only_a, only_b, neither)
        deltas[name] = {
            "tasks": n,
            "a": round((both + only_a) / n, 6),
            "b": round((both + only_b) / n, 6),
            "delta": round(diff, 6),
            "ci95": [round(low, 6), round(high, 6)],
            "fixed": only_b,
            "broken": only_a,
        }
    return {
        "pairs": pairs,
        "levels": deltas,
        "only_a": len(a.rows) - len(pairs),
        "only_b": len(b.rows) - len(pairs),
    }


def _cell(a_ok: bool, b_ok: bool) -> int:
    """Index into ``[both, only_a, only_b, neither]``."""
    return {(True, True): 0, (True, False): 1, (False, True): 2, (False, False): 3}[(a_ok, b_ok)]


def _change(a_ok: bool, b_ok: bool) -> str:
    return "same" if a_ok == b_ok else ("fixed" if b_ok else "broken")


def write_compare_page(
    report_a: str | Path,
    report_b: str | Path,
    out: str | Path,
    *,
    corpus: str | Path | None = None,
    tasks: str | Path | None = None,
    overwrite: bool = False,
) -> tuple[Path, dict[str, Any]]:
    """Write the side-by-side page of two runs on the same tasks; returns the page and the
    per-level deltas (B - A, with 95% intervals).

    Raises:
        EvalError: Either folder is not an eval report, or the runs are not on the same tasks.
        OutputExistsError: ``out`` exists and ``overwrite`` is false.
    """
    a, b = read_report(report_a), read_report(report_b)
    comparison = compare_reports(a, b)
    sources_a = open_sources(a, corpus=corpus, tasks=tasks)
    sources_b = open_sources(b, corpus=corpus, tasks=tasks)
    page = Path(out)
    names = [f"A: {a.name} ({a.path.name})", f"B: {b.name} ({b.path.name})"]
    rows = []
    for ra, rb in comparison["pairs"]:
        diff = first_difference(transcript(a, ra["i"]), transcript(b, rb["i"]))
        rows.append(
            {
                "id": ra["task_id"],
                "lv": ra["level"],
                "change": _change(ra["success"], rb["success"]),
                "diff": diff,
                "a": _side(ra),
                "b": _side(rb),
            }
        )
    table = [
        [
            name,
            d["tasks"],
            f"{d['a']:.3f}",
            f"{d['b']:.3f}",
            f"{d['delta']:+.3f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}]",
            d["fixed"],
            d["broken"],
        ]
        for name, d in comparison["levels"].items()
    ]
    notes = [*a.notes, *b.notes]
    if comparison["only_a"] or comparison["only_b"]:
        notes.append(
            f"not compared: {comparison['only_a']} episodes only in A, "
            f"{comparison['only_b']} only in B"
        )
    meta: dict[str, Any] = {
        "mode": "compare",
        "title": f"wikigym: {names[0]} vs {names[1]}",
        "subtitle": f"{len(rows)} tasks in both runs; B - A per level, 95% intervals (Newcombe, "
        "paired); snapshot " + a.snapshot_id[:12] + ", TaskSet " + a.taskset_id[:12],
        "names": names,
        "levels_table": {"header": COMPARE_HEADER, "rows": table},
        "notes": notes,
        "data": data_folder(page).name,
        "chunk_prefix": CHUNK_PREFIX,
    }
    with _outputs(page, overwrite) as (tmp_page, tmp_data):
        (tmp_data / "list.js").write_text(
            _script("list", {"meta": meta, "rows": rows}), encoding="utf-8"
        )
        for side, report, sources in (("a", a, sources_a), ("b", b, sources_b)):
            folder = tmp_data / side
            folder.mkdir()
            _write_chunks(report, sources, folder, f"{side}/", None)
        tmp_page.write_text(_page(meta["title"], meta["data"], "compare"), encoding="utf-8")
    return page, comparison["levels"]


def _side(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "i": row["i"],
        "c": row["i"] // CHUNK,
        "ok": row["success"],
        "f1": row["f1"],
        "r": row["reward"],
        "n": row["steps"],
    }
