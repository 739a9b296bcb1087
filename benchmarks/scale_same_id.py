"""Check that a build with forced resolution partitions gives a reference snapshot's id.

Builds SOURCE into OUT with ``partition_titles`` titles per hash partition (so the
resolution runs in several partitions even where the build would choose one), then compares
its snapshot_id and table hashes with REFERENCE's manifest (a snapshot built before the
partitioned resolution). Prints the result as JSON; exits 1 when they differ.

Usage:
    python benchmarks/scale_same_id.py SOURCE REFERENCE OUT [--partition-titles 4096]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wikigym.corpora import BuildConfig, build_snapshot, open_build_source
from wikigym.corpora.resolve import partitions_for


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("source", type=Path)
    parser.add_argument("reference", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--partition-titles", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    ref = json.loads((args.reference / "manifest.json").read_text(encoding="utf-8"))
    config = BuildConfig(threads=args.threads, partition_titles=args.partition_titles)
    report = build_snapshot(
        [open_build_source(args.source)], args.out, config, overwrite=True, progress=False
    )
    built = json.loads((args.out / "manifest.json").read_text(encoding="utf-8"))
    titles = report.articles + report.redirects
    out = {
        "source": str(args.source),
        "reference": str(args.reference),
        "partitions": partitions_for(titles, args.partition_titles),
        "reference_id": ref["snapshot_id"],
        "built_id": report.snapshot_id,
        "equal": report.snapshot_id == ref["snapshot_id"] and built["tables"] == ref["tables"],
        "seconds": report.seconds,
    }
    print(json.dumps(out))
    sys.exit(0 if out["equal"] else 1)


if __name__ == "__main__":
    main()
