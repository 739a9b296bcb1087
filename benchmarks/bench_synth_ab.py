"""synth generation, one tree against another, interleaved in one run (a refactor's check).

Each run is a fresh process of ``benchmarks/bench_synth_graph.py --one`` from its own tree (its
own code on ``PYTHONPATH``): the graph build, then ``generate_tasks`` per level. Runs
alternate A, B, B, A, ... so that a load that changes during the run hits both alike; the
table shows medians of tasks per second and per CPU-second (the latter is what the work costs
on a shared machine) and B/A. The TaskSets of both trees must be the same (a refactor that
changes them is not one): the table says whether they were.

Usage (the old tree exported from git, the new one this checkout):
    git archive 3c40d63 | tar -x -C /tmp/old
    python benchmarks/bench_synth_ab.py --a /tmp/old --b . [--corpus DIR] [--runs 5]
        [--n 150] [--levels easy,medium,hard,phd]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks: common

import common


def one_run(tree: Path, corpus: str, n: int, levels: list[str]) -> dict[str, Any]:
    """bench_synth_graph's child mode, from ``tree``, in a fresh process."""
    script = tree / "benchmarks" / "bench_synth_graph.py"
    cmd = [sys.executable, str(script), "--one", corpus, "--n", str(n)]
    cmd += ["--levels", ",".join(levels)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--a", type=Path, required=True, help="the tree measured as A (the old code)")
    p.add_argument("--b", type=Path, default=common.ROOT, help="the tree measured as B")
    p.add_argument("--corpus", default="", help="snapshot directory (default: the embedded world)")
    p.add_argument("--runs", type=int, default=5, help="runs of each tree")
    p.add_argument("--n", type=int, default=150, help="tasks per level")
    p.add_argument("--levels", default="easy,medium,hard,phd")
    p.add_argument("--out", type=Path, default=common.RESULTS)
    args = p.parse_args()
    levels = [lv.strip() for lv in args.levels.split(",") if lv.strip()]
    trees = {"A": args.a.resolve(), "B": args.b.resolve()}
    runs: dict[str, list[dict[str, Any]]] = {"A": [], "B": []}
    for r in range(args.runs):
        for name in ("A", "B") if r % 2 == 0 else ("B", "A"):
            got = one_run(trees[name], args.corpus, args.n, levels)
            runs[name].append(got)
            rates = {lv: got["generate"][lv]["per_cpu_s"] for lv in levels}
            print(name, r, f"build {got['graph_build_s']} s", "tasks/CPU-s", rates, flush=True)

    def median(name: str, level: str, key: str) -> float:
        return statistics.median(d["generate"][level][key] for d in runs[name])

    rows: list[list[Any]] = []
    build = [statistics.median(d["graph_build_s"] for d in runs[k]) for k in ("A", "B")]
    rows.append(["graph build s", build[0], build[1], build[1] / build[0]])
    for lv in levels:
        for key, label in (("per_s", "tasks/s"), ("per_cpu_s", "tasks/CPU-s")):
            a, b = median("A", lv, key), median("B", lv, key)
            rows.append([f"{lv} {label}", a, b, b / a])
    same = all(
        a["generate"][lv]["taskset_id"] == b["generate"][lv]["taskset_id"]
        for a, b in zip(runs["A"], runs["B"], strict=True)
        for lv in levels
    )
    md = (
        f"A = `{trees['A']}`, B = `{trees['B']}`; {args.runs} runs each, interleaved, "
        f"{args.n} tasks per level, corpus {args.corpus or 'the embedded world'}; medians.\n\n"
        + common.markdown_table(["", "A", "B", "B/A"], rows)
        + f"\n\nSame TaskSets from both trees: {'yes' if same else 'NO'}.\n"
    )
    path = common.write_results("synth_ab", {"trees": {k: str(v) for k, v in trees.items()},
                                             "runs": runs, "same_tasksets": same}, md, args.out)  # fmt: skip
    print(md)
    print(f"-> {path}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
