"""Benchmark the world generator: articles per second and peak memory.

Usage: ``python benchmarks/bench_world.py [N] [--seed S] [--out DIR]`` (N defaults to 100000).
Prints wall time, CPU time of this process, articles/s (by both) and peak RSS.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from wikigym.corpora.world import WorldConfig, generate_world


def main(argv: list[str] | None = None) -> int:
    """Run one generation and print the measurements."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("articles", nargs="?", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="keep the output here")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_world_") as tmp:
        out = args.out or Path(tmp)
        wall0, cpu0 = time.perf_counter(), time.process_time()
        paths = generate_world(WorldConfig(articles=args.articles, seed=args.seed), out)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        sizes = {p.name: p.stat().st_size for p in paths}
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"articles:        {args.articles}")
    print(f"wall_s:          {wall:.2f}  ({args.articles / wall:,.0f} articles/s)")
    print(f"cpu_s:           {cpu:.2f}  ({args.articles / cpu:,.0f} articles/s of CPU)")
    print(f"peak_rss_mb:     {peak_mb:,.0f}")
    for name, size in sizes.items():
        print(f"{name + ':':<17}{size / 1e6:,.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
