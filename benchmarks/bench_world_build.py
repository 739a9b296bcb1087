"""Build time and peak memory of a generated world: this tree against a baseline tree.

The same world folder is built by the baseline's code and by this tree's, in ABBA order
(baseline, this, this, baseline, ...) so drift of a loaded machine falls on both; each
build is a fresh process (``python -m wikigym corpus build``) whose tree's peak RSS and PSS
are sampled. Prints the medians and the ratios this/baseline.

    git -C . archive <base-commit> wikigym | tar -x -C /work/big/base --one-top-level=tree
    PYTHONPATH=$PWD python3 benchmarks/bench_world_build.py --world /work/big/world1m \\
        --baseline /work/big/base/tree --work /work/big/builds --rounds 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from common import (
    ROOT,
    build_command,
    command_line,
    environment,
    gib,
    markdown_table,
    run_measured,
    write_results,
)


def _imports_from(tree: Path) -> Path:
    """Where ``python -m wikigym`` run as :func:`_build` runs it imports wikigym from."""
    got = subprocess.run(
        [sys.executable, "-c", "import wikigym; print(wikigym.__file__)"],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(got.stdout.strip()).resolve()


def _build(tree: Path, world: Path, out: Path, threads: int) -> dict[str, Any]:
    # The build runs in the tree's folder: ``python -m`` puts the working directory first on
    # sys.path, so run from this checkout it would import this checkout's wikigym whatever
    # PYTHONPATH says (both sides would then be the same code).
    env = os.environ.copy()
    os.environ["PYTHONPATH"] = str(tree)
    try:
        got = run_measured(build_command(world, out, threads), cwd=tree)
    finally:
        os.environ.clear()
        os.environ.update(env)
    shutil.rmtree(out, ignore_errors=True)
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", type=Path, required=True, help="a generated world folder")
    parser.add_argument("--baseline", type=Path, required=True, help="the baseline's tree")
    parser.add_argument(
        "--tree", type=Path, default=ROOT, help="the tree measured (default: this checkout)"
    )
    parser.add_argument("--work", type=Path, required=True, help="where snapshots are built")
    parser.add_argument("--rounds", type=int, default=2, help="ABBA rounds (2 builds each side)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--name", default="world_build_facts")
    args = parser.parse_args()
    args.world, args.work = args.world.resolve(), args.work.resolve()  # builds run elsewhere
    args.work.mkdir(parents=True, exist_ok=True)
    sides = {"baseline": args.baseline.resolve(), "this": args.tree.resolve()}
    for side, tree in sides.items():
        got = _imports_from(tree)
        if not got.is_relative_to(tree):
            sys.exit(f"error: the {side} build would import wikigym from {got}, not {tree}")
    if sides["baseline"] == sides["this"]:
        sys.exit("error: --baseline and --tree are the same tree; give two trees to compare")
    runs: list[dict[str, Any]] = []
    for r in range(args.rounds):
        for side in ("baseline", "this", "this", "baseline"):
            out = args.work / f"snap-{side}"
            got = _build(sides[side], args.world, out, args.threads)
            got.update(side=side, round=r)
            got.pop("stdout", None)
            runs.append(got)
            print(
                f"{side:8s} {got['seconds']:9.1f} s  CPU {got['cpu_seconds']:9.1f} s  peak RSS {gib(got['peak_rss_bytes']):.3f} GiB"
                f"  PSS {gib(got['peak_pss_bytes']):.3f} GiB",
                flush=True,
            )
    summary: dict[str, dict[str, float]] = {}
    for side in sides:
        mine = [x for x in runs if x["side"] == side]
        summary[side] = {
            "seconds_median": statistics.median(x["seconds"] for x in mine),
            "cpu_seconds_median": statistics.median(x["cpu_seconds"] for x in mine),
            "peak_rss_gib_max": max(gib(x["peak_rss_bytes"]) for x in mine),
            "peak_pss_gib_max": max(gib(x["peak_pss_bytes"]) for x in mine),
        }
    ratio = {
        k: summary["this"][k] / summary["baseline"][k] if summary["baseline"][k] else 0.0
        for k in summary["this"]
    }
    data = {
        "command": command_line(),
        "environment": environment(),
        "world": str(args.world),
        "baseline": str(args.baseline),
        "runs": runs,
        "summary": summary,
        "ratio_this_over_baseline": ratio,
    }
    md = [
        "The same world built by the baseline tree and this one, ABBA order, on a machine "
        "shared with other builds (the load average above): medians and the tree's peaks.",
        "",
    ]
    md.append(
        markdown_table(
            [
                "side",
                "median build s",
                "median CPU s",
                "peak RSS GiB (tree, max)",
                "peak PSS GiB (max)",
            ],
            [
                [
                    s,
                    f"{v['seconds_median']:.1f}",
                    f"{v['cpu_seconds_median']:.1f}",
                    f"{v['peak_rss_gib_max']:.3f}",
                    f"{v['peak_pss_gib_max']:.3f}",
                ]
                for s, v in summary.items()
            ],
        )
    )
    md += ["", "ratios this / baseline: " + ", ".join(f"{k} {v:.3f}" for k, v in ratio.items())]
    md += ["", "runs (ABBA order):", ""]
    md.append(
        markdown_table(
            ["round", "side", "s", "CPU s", "peak RSS GiB", "peak PSS GiB"],
            [
                [
                    x["round"],
                    x["side"],
                    f"{x['seconds']:.1f}",
                    f"{x['cpu_seconds']:.1f}",
                    f"{gib(x['peak_rss_bytes']):.3f}",
                    f"{gib(x['peak_pss_bytes']):.3f}",
                ]
                for x in runs
            ],
        )
    )
    path = write_results(args.name, data, "\n".join(md) + "\n")
    print("\n".join(md))
    print(f"-> {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
