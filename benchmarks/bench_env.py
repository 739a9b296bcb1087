"""Env step throughput and the memory of many environments sharing one snapshot.

Measures, in one run on one snapshot:

1. ``Snapshot.search`` alone (the raw cost of a search step), then ``WikiSearch-v1`` search
   steps and open steps per second, with 1 and 2 threads (one env per thread, one shared
   snapshot). The env layer (parsing, validation, formatting, bookkeeping) must add less
   than 50% to a search step.
2. Resident memory of 1 env vs 64 envs made with ``gymnasium.make_vec`` (they share one
   snapshot and one TaskSet): target within 1.2x.

Usage:
    python benchmarks/bench_env.py SNAPSHOT [--steps 2000] [--out benchmarks/results/env]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import threading
import time
from datetime import date
from pathlib import Path

import gymnasium as gym
import psutil

import wikigym  # noqa: F401  (registers the env ids)
from wikigym.corpora import Snapshot
from wikigym.tasks.one_hop import one_hop_tasks
from wikigym.tools import format_tool_call


def queries_for(snap: Snapshot, n: int) -> list[str]:
    rows = snap.sql(
        "SELECT a.title, p.text FROM passages p JOIN articles a USING (doc_id) "
        f"WHERE p.passage_id % 97 = 0 ORDER BY p.passage_id LIMIT {n}"
    ).to_pylist()
    out = []
    for r in rows:
        words = r["text"].split()
        out.append(" ".join([r["title"], *words[3:8]]))
    return out


def titles_for(snap: Snapshot, n: int) -> list[str]:
    rows = snap.sql(f"SELECT title FROM articles WHERE doc_id % 13 = 0 ORDER BY doc_id LIMIT {n}")
    return rows.column("title").to_pylist()


def call(name: str, **arguments: object) -> str:
    return format_tool_call(name, arguments)


def run_threads(n_threads: int, work) -> float:  # type: ignore[no-untyped-def]
    """Run ``work(thread_index)`` in n threads; return wall seconds."""
    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def bench_steps(snap_path: Path, tasks_path: Path, steps: int) -> dict[str, float]:
    snap = Snapshot.open(snap_path)
    queries = queries_for(snap, 500)
    titles = titles_for(snap, 500)
    res: dict[str, float] = {}
    for n_threads in (1, 2):
        per = steps // n_threads

        def raw(i: int, per: int = per) -> None:
            for j in range(per):
                snap.search(queries[(i * per + j) % len(queries)], 5)

        envs = [
            gym.make(
                "WikiSearch-v1",
                corpus=str(snap_path),
                tasks=str(tasks_path),
                python="off",
                max_steps=10**9,
            ).unwrapped
            for _ in range(n_threads)
        ]
        for k, e in enumerate(envs):
            e.reset(seed=k)

        def env_search(i: int, per: int = per, envs: list = envs) -> None:  # type: ignore[type-arg]
            e = envs[i]
            for j in range(per):
                q = queries[(i * per + j) % len(queries)]
                e.step(call("search", query=q, k=5))

        def env_open(i: int, per: int = per, envs: list = envs) -> None:  # type: ignore[type-arg]
            e = envs[i]
            for j in range(per // 4):
                t = titles[(i * per + j) % len(titles)]
                e.step(call("open", page=t))

        raw(0)  # warm caches
        samples: dict[str, list[float]] = {"raw": [], "search": [], "open": []}
        for _ in range(3):
            samples["raw"].append(steps / run_threads(n_threads, raw))
            samples["search"].append(steps / run_threads(n_threads, env_search))
            samples["open"].append((per // 4) * n_threads / run_threads(n_threads, env_open))
        for k, v in samples.items():
            res[f"{k}_per_s_{n_threads}t"] = statistics.median(v)
    res["env_search_overhead"] = res["raw_per_s_1t"] / res["search_per_s_1t"] - 1.0
    return res


def _vector_envs(snap_path: Path, tasks_path: Path, n: int) -> gym.vector.VectorEnv:
    """``n`` envs in one process, reset and stepped once (so every lazy cache is filled)."""
    envs = gym.make_vec(
        "WikiSearch-v1",
        num_envs=n,
        vectorization_mode="sync",
        corpus=str(snap_path),
        tasks=str(tasks_path),
        python="off",
    )
    envs.reset(seed=0)
    envs.step(["<search>river</search>"] * n)
    return envs


def bench_memory(snap_path: Path, tasks_path: Path) -> dict[str, float]:
    proc = psutil.Process()
    gc.collect()
    base = proc.memory_info().rss
    one = _vector_envs(snap_path, tasks_path, 1)
    gc.collect()
    rss_one = proc.memory_info().rss
    many = _vector_envs(snap_path, tasks_path, 64)
    gc.collect()
    rss_many = proc.memory_info().rss
    del one, many
    return {
        "rss_before_mb": base / 2**20,
        "rss_1_env_mb": rss_one / 2**20,
        "rss_1_plus_64_envs_mb": rss_many / 2**20,
        # The 64 envs reuse the snapshot the first env opened, so compare the process
        # with 1 env to the process with 1 + 64 envs.
        "ratio_64_vs_1": rss_many / rss_one,
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("snapshot", type=Path)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/env"))
    args = ap.parse_args()
    snap = Snapshot.open(args.snapshot)
    tasks_path = args.out.parent / "work-env-tasks.jsonl"
    tasks_path.parent.mkdir(parents=True, exist_ok=True)
    one_hop_tasks(snap, n=200).save(tasks_path)
    mem = bench_memory(args.snapshot, tasks_path)
    steps = bench_steps(args.snapshot, tasks_path, args.steps)
    tasks_path.unlink()
    result = {
        "command": "python " + " ".join(sys.argv),
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"{psutil.virtual_memory().total / 2**30:.0f} GiB",
        "snapshot": {
            "passages": snap.num_passages,
            "articles": snap.num_articles,
            "id": snap.snapshot_id,
        },
        "steps": steps,
        "memory": mem,
    }
    lines = [
        "# Env steps and memory",
        "",
        f"Command: `{result['command']}`  ",
        f"Date: {result['date']}; machine: {result['machine']}  ",
        f"Snapshot: {snap.num_passages:,} passages, {snap.num_articles:,} articles",
        "",
        "| threads | raw Snapshot.search /s | env search steps /s | env open steps /s |",
        "|---|---|---|---|",
    ]
    for t in (1, 2):
        lines.append(
            f"| {t} | {steps[f'raw_per_s_{t}t']:.0f} | {steps[f'search_per_s_{t}t']:.0f} | "
            f"{steps[f'open_per_s_{t}t']:.0f} |"
        )
    lines += [
        "",
        f"Env layer overhead on a search step (1 thread): {steps['env_search_overhead'] * 100:.1f}% "
        "(target < 50%)",
        "",
        f"Memory: 1 env {mem['rss_1_env_mb']:.0f} MB, 1 + 64 envs {mem['rss_1_plus_64_envs_mb']:.0f} MB: "
        f"ratio {mem['ratio_64_vs_1']:.3f} (target <= 1.2)",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
