"""The scale curve: build time, peak RSS, index size and search latency from 100k to 4.5M+
passages, for wikigym, raw tantivy (the same index), bm25s and Lucene (Pyserini).

Stages (each writes a JSON record under ``--work``; ``report`` gathers them):

- ``build``: ``python -m wikigym corpus build WORLD --threads 2`` measured with psutil over
  the process tree (peak RSS sum and PSS), plus the snapshot's index size and layout.
- ``search``: the same 600 three-word queries (drawn with a fixed seed from the corpus's
  own passages) against every system, top-10 with hit texts: p50/p99 one query at a time,
  q/s on 1 and 2 threads sharing one searcher. bm25s only below ``--bm25s-max`` passages
  (it holds ~1 GB per 1M passages); Lucene runs as a subprocess of the Pyserini venv
  (``--lucene-python``), indexing the same passages as a JsonCollection.
- ``report``: ``benchmarks/results/scale.{md,json,png}`` with the extrapolation to wiki-18
  (21M passages) and English Wikipedia (fit of each measured quantity against passages).

Usage:
    python benchmarks/bench_scale.py build --world W --out SNAP
    python benchmarks/bench_scale.py search --snapshot SNAP
    python benchmarks/bench_scale.py report --records /work/big/scale-*.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: wikigym
sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks: common

import common


def dir_bytes(path: Path) -> int:
    """Bytes of the files under ``path``."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def stage_build(args: argparse.Namespace) -> dict[str, Any]:
    """Build one snapshot through the CLI, measured."""
    cmd = [
        sys.executable,
        "-m",
        "wikigym",
        "corpus",
        "build",
        str(args.world),
        "--out",
        str(args.out),
        "--threads",
        str(args.threads),
        "--overwrite",
        "--quiet",
    ]
    stats = common.run_measured(cmd, interval=0.25)
    manifest = json.loads((Path(args.out) / "manifest.json").read_text(encoding="utf-8"))
    record = {
        "stage": "build",
        "snapshot": str(args.out),
        "world": str(args.world),
        "threads": args.threads,
        "seconds": stats["seconds"],
        "peak_rss_bytes": stats["peak_rss_bytes"],
        "peak_pss_bytes": stats["peak_pss_bytes"],
        "command": stats["command"],
        "counts": manifest["counts"],
        "index_layout": manifest["index_layout"],
        "index_bytes": dir_bytes(Path(args.out) / "index"),
        "snapshot_bytes": dir_bytes(Path(args.out)),
        "snapshot_id": manifest["snapshot_id"],
        "environment": common.environment(),
    }
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="stage", required=True)
    b = sub.add_parser("build")
    b.add_argument("--world", type=Path, required=True)
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--threads", type=int, default=2)
    b.add_argument("--record", type=Path, default=None)
    args = parser.parse_args()
    if args.stage == "build":
        record = stage_build(args)
        path = args.record or args.out.with_name(args.out.name + ".build.json")
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in record.items() if k != "environment"}, indent=2))


if __name__ == "__main__":
    main()
