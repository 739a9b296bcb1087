"""The episode viewer at 200, 2,000 and 10,000 episodes: episodes in chunks loaded on demand
(wikigym's layout, 50 a file) against every transcript in one data file (the layout of a
viewer that embeds the run), in the same run, in Debian's headless Chromium.

Measured per size and layout: the time to write the page, the data the browser loads to show
the list and the last episode, and the wall time of Chromium opening the page at that episode
(median of 3, Chromium's own start included, the same in both layouts).

    python benchmarks/bench_viewer.py [--sizes 200,2000,10000] [--out benchmarks/results]

Results: benchmarks/results/viewer.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import environment  # benchmarks/common.py

from wikigym.eval.factory import make_agent
from wikigym.eval.report import write_report
from wikigym.eval.runner import run_eval
from wikigym.eval.viewer import data_folder, write_run_page
from wikigym.tasks.defaults import default_resources, default_tasks_path

CHROMIUM = shutil.which("chromium") or "chromium"


def open_ms(page: Path, fragment: str, profile: Path) -> float:
    t0 = time.perf_counter()
    out = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", "--dump-dom", page.as_uri() + fragment],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    took = (time.perf_counter() - t0) * 1000
    if f'data-episode="{fragment.split("=")[1]}"' not in out.stdout:
        raise RuntimeError(f"the page did not show the episode: {out.stderr[-500:]}")
    return took


def grow(report: Path, n: int, out: Path) -> Path:
    """A copy of ``report`` with ``n`` episodes (its episodes repeated, renumbered)."""
    shutil.copytree(report, out, ignore=shutil.ignore_patterns("index.html", "viewer"))
    lines = (report / "episodes.jsonl").read_text().splitlines()
    with (out / "episodes.jsonl").open("w") as f:
        for i in range(n):
            row = json.loads(lines[i % len(lines)])
            row["index"] = i
            f.write(json.dumps(row) + "\n")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="200,2000,10000")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    work = Path(tempfile.mkdtemp(prefix="bench-viewer-"))
    snapshot, _ = default_resources(progress=False)
    base = work / "heuristic"
    run = run_eval(make_agent("heuristic"), default_tasks_path(), base, agent_name="heuristic",
                   corpus=snapshot.path)  # fmt: skip
    write_report(run, base, viewer=False)
    rows = []
    for n in sizes:
        report = grow(base, n, work / f"n{n}")
        for layout, chunk in (("on demand (50 a file)", 50), ("one file", n)):
            t0 = time.perf_counter()
            page = write_run_page(report, report / f"{chunk}.html", chunk=chunk)
            write_s = time.perf_counter() - t0
            data = data_folder(page)
            last = (n - 1) // chunk
            loaded = (data / "list.js").stat().st_size + (data / f"ep-{last:05d}.js").stat().st_size
            total = sum(p.stat().st_size for p in data.iterdir())
            times = [open_ms(page, f"#e={n - 1}", work / f"profile-{n}-{chunk}") for _ in range(3)]
            rows.append({
                "episodes": n, "layout": layout, "write_s": round(write_s, 2),
                "data_mb": round(total / 1e6, 2), "loaded_mb": round(loaded / 1e6, 2),
                "open_ms_median": round(statistics.median(times)), "open_ms": [round(t) for t in times],
            })  # fmt: skip
            print(rows[-1], flush=True)
    env = environment()
    command = env["command"]
    note = f"{env['machine']['cpu']}, {env['machine']['nproc']} cores, load {env['machine']['load_avg_1_5_15']}"
    result = {**env, "rows": rows}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "viewer.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# The episode viewer at scale", "", f"`{command}`", "", f"Machine: {note}; commit {env['git_commit']}", "",
        "| episodes | layout | write (s) | data (MB) | loaded to show the last episode (MB) | "
        "Chromium opens it at that episode (ms, median of 3) |",
        "|---:|---|---:|---:|---:|---:|",
    ]  # fmt: skip
    for r in rows:
        lines.append(
            f"| {r['episodes']:,} | {r['layout']} | {r['write_s']} | {r['data_mb']} | "
            f"{r['loaded_mb']} | {r['open_ms_median']:,} |"
        )
    by = {(r["episodes"], r["layout"]): r for r in rows}
    lines += ["", "Ratio (one file / on demand), time to open at the last episode:", ""]
    for n in sizes:
        a, b = by[(n, "on demand (50 a file)")], by[(n, "one file")]
        lines.append(f"- {n:,} episodes: {b['open_ms_median'] / a['open_ms_median']:.2f}x")
    (args.out / "viewer.md").write_text("\n".join(lines) + "\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
