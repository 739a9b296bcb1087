"""Synthesis throughput: verified tasks per second on a large generated world.

Builds (once, under ``benchmarks/work/``) a generated world of ``--articles`` articles, then
measures on it:

1. the knowledge graph build (DuckDB -> in-memory indexes), once per snapshot;
2. ``generate_tasks`` for each level: tasks per second, every task proved unique by
   evaluating its whole query over all facts, checked for leaks and given an oracle;
3. ``verify_taskset`` on the phd tasks: the full re-proof (evaluation, measures, evidence,
   and the oracle replayed through the env's tools), tasks per second.

Target: at least 20 verified phd tasks per second at 100k articles (generation, with the
uniqueness checks included).

Usage:
    python benchmarks/bench_synth.py [--articles 100000] [--seed 0] [--n 200]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: wikigym
sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks: common

import common
import psutil

from wikigym.corpora import Snapshot
from wikigym.corpora.default import build_world_snapshot
from wikigym.synth import SynthConfig, generate_tasks, verify_taskset
from wikigym.synth.graph import graph_of

TARGET_PHD_PER_S = 20.0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--articles", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n", type=int, default=200, help="tasks per level")
    p.add_argument("--out", type=Path, default=common.RESULTS)
    args = p.parse_args()
    snap_dir = common.WORK / f"synth-world-{args.articles // 1000}k"
    build_s = None
    if not (snap_dir / "manifest.json").is_file():
        t0 = time.perf_counter()
        build_world_snapshot(args.articles, args.seed, snap_dir, progress=True)
        build_s = time.perf_counter() - t0
    snap = Snapshot.open(snap_dir, verify="sizes")
    rss0 = psutil.Process().memory_info().rss
    t0 = time.perf_counter()
    g = graph_of(snap)
    graph_s = time.perf_counter() - t0
    graph_mib = (psutil.Process().memory_info().rss - rss0) / 2**20
    rows = []
    results: dict[str, dict[str, float]] = {}
    phd_tasks = None
    for level in ("easy", "medium", "hard", "phd"):
        t0 = time.perf_counter()
        ts = generate_tasks(snap, SynthConfig(difficulty=level, n=args.n, seed=args.seed))
        dt = time.perf_counter() - t0
        results[level] = {"tasks": len(ts), "seconds": round(dt, 3), "per_s": len(ts) / dt}
        rows.append([level, len(ts), dt, len(ts) / dt])
        if level == "phd":
            phd_tasks = ts
    assert phd_tasks is not None
    t0 = time.perf_counter()
    failures = verify_taskset(phd_tasks, snap)
    verify_s = time.perf_counter() - t0
    verify_rate = len(phd_tasks) / verify_s
    phd_rate = results["phd"]["per_s"]
    data = {
        "articles": snap.num_articles,
        "facts": len(g.f_id),
        "snapshot_id": snap.snapshot_id,
        "world_build_s": build_s,
        "graph_build_s": round(graph_s, 3),
        "graph_rss_growth_mib": round(graph_mib, 1),
        "generate": results,
        "verify_phd": {
            "tasks": len(phd_tasks),
            "seconds": round(verify_s, 3),
            "per_s": verify_rate,
            "failures": len(failures),
        },
        "target_phd_per_s": TARGET_PHD_PER_S,
        "target_met": phd_rate >= TARGET_PHD_PER_S and not failures,
    }
    md = (
        f"World: {snap.num_articles:,} articles, {len(g.f_id):,} facts in the graph "
        f"(snapshot {snap.snapshot_id[:16]}). Graph build: {graph_s:.1f} s (once per snapshot), "
        f"resident memory +{graph_mib:,.0f} MiB."
        "\n\nGeneration (each task proved unique by evaluating its whole query over all facts, "
        "leak-checked, with evidence, rubric and oracle), one process, one thread:\n\n"
        + common.markdown_table(["level", "tasks", "seconds", "tasks/s"], rows)
        + f"\n\nFull re-verification of the {len(phd_tasks)} phd tasks (evaluation, measures, "
        f"evidence, oracle replayed through the env tools): {verify_s:.2f} s, "
        f"{verify_rate:.1f} tasks/s, {len(failures)} failures.\n\n"
        f"Target: >= {TARGET_PHD_PER_S:.0f} verified phd tasks/s: "
        f"{'met' if data['target_met'] else 'NOT met'} ({phd_rate:.1f}/s).\n"
    )
    path = common.write_results("synth", data, md, args.out)
    print(md)
    print(f"-> {path}")
    return 0 if data["target_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
