"""Re-index a built snapshot's passages with today's PassageIndexWriter (tables shared).

For the scale curve when a full rebuild does not fit the session: the tables of SNAP are
linked (not copied) into OUT, the index is written anew from them in passage_id order (what
the build feeds the writer) and the manifest gets the new ``index_layout``. Prints the
writer's seconds, peak RSS and layout as JSON.

Usage:
    python benchmarks/scale_reindex.py SNAP OUT [--segment-docs N] [--heap-mb M]

``--segment-docs`` and ``--heap-mb`` set the passages per segment and the writer heap of
the new index (the build's defaults when omitted), so one snapshot's tables give indexes of
any segment count (the segment count's effect on search, measured apart from the corpus).
The champion lists are written too (``corpora.champions``) and timed apart.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb

from wikigym.corpora.index import (
    INDEX_HEAP_MB,
    SEGMENT_DOCS,
    IndexConfig,
    PassageIndexWriter,
    write_champions,
)
from wikigym.corpora.manifest import INDEX_DIR, TABLE_FILES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("snapshot", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--segment-docs", type=int, default=SEGMENT_DOCS)
    parser.add_argument("--heap-mb", type=int, default=INDEX_HEAP_MB)
    args = parser.parse_args()
    snap, out = args.snapshot.resolve(), args.out
    out.mkdir(parents=True)
    manifest = json.loads((snap / "manifest.json").read_text(encoding="utf-8"))
    for fname in TABLE_FILES.values():
        os.symlink(snap / fname, out / fname)
    config = IndexConfig.from_dict(manifest["content_config"]["index"])
    con = duckdb.connect(config={"threads": 1, "memory_limit": "256MB"})
    con.read_parquet(str(snap / TABLE_FILES["passages"])).create_view("p")
    con.read_parquet(str(snap / TABLE_FILES["articles"])).create_view("a")
    reader = con.execute(
        "SELECT p.passage_id, p.doc_id, a.title, p.text, p.source_passage_id FROM p "
        "JOIN a USING (doc_id) ORDER BY p.passage_id"
    ).to_arrow_reader(16_384)
    start = time.perf_counter()
    writer = PassageIndexWriter(
        out / INDEX_DIR, config, heap_mb=args.heap_mb, segment_docs=args.segment_docs
    )
    for batch in reader:
        cols = [batch.column(i).to_pylist() for i in range(5)]
        for pid, doc, title, text, src in zip(*cols, strict=True):
            writer.add(pid, doc, title, text, src)
    layout = writer.close()
    index_seconds = time.perf_counter() - start
    champions = write_champions(
        out / INDEX_DIR, config, snap / TABLE_FILES["passages"], layout.doc_order
    )
    seconds = time.perf_counter() - start
    manifest["index_layout"] = layout.to_dict()
    manifest["reindexed_from"] = str(snap)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(
        json.dumps(
            {
                "seconds": seconds,
                "index_seconds": index_seconds,
                "champion_terms": champions,
                "peak_rss_bytes": rss,
                "index_layout": layout.to_dict(),
            }
        )
    )


if __name__ == "__main__":
    main()
