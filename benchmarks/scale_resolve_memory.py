"""Peak RSS of the build's resolution (:class:`wikigym.corpora.resolve.Resolver`) over a snapshot.

For the scale curve when a full rebuild does not fit the session: a stage folder is made
from SNAP's final tables (articles, links, facts linked in; redirects written from
``articles.redirects_from``), then the build's partitioned resolution runs and each
resolved ``(id, value)`` column is read to the end under ``--memory`` (DuckDB's limit), in
the partition count the build would choose (or ``--partition-titles``). Prints rows,
partitions, seconds and the peak RSS of this process (sampled every 50 ms) as JSON.

Usage:
    python benchmarks/scale_resolve_memory.py SNAP [--memory 256MB] [--partition-titles N]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import tempfile
import threading
import time
from pathlib import Path

import duckdb
import psutil
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from wikigym.corpora.resolve import PARTITION_TITLES, Resolver, partitions_for
from wikigym.corpora.tables import REDIRECTS_STAGE


def _prepare(stage: Path) -> None:
    """Write ``stage/redirects.parquet`` (title, target) from the articles' redirect lists."""
    source = pq.ParquetFile(stage / "articles.parquet")
    with pq.ParquetWriter(stage / "redirects.parquet", REDIRECTS_STAGE) as writer:
        for batch in source.iter_batches(columns=["title", "redirects_from"]):
            lists = batch.column("redirects_from")
            titles = pc.list_flatten(lists)
            targets = pc.take(batch.column("title"), pc.list_parent_indices(lists))
            writer.write_table(pa.table([titles, targets], schema=REDIRECTS_STAGE))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("snapshot", type=Path)
    parser.add_argument("--memory", default="128MB")
    parser.add_argument("--partition-titles", type=int, default=PARTITION_TITLES)
    args = parser.parse_args()
    peak = [0]
    proc = psutil.Process()

    def sample() -> None:
        while True:
            peak[0] = max(peak[0], proc.memory_info().rss)
            time.sleep(0.05)

    threading.Thread(target=sample, daemon=True).start()
    tmp = tempfile.mkdtemp(prefix="scale-resolve-")
    stage = Path(tmp) / "stage"
    stage.mkdir()
    snap = args.snapshot
    for name in ("articles", "links", "facts"):
        (stage / f"{name}.parquet").symlink_to((snap / f"{name}.parquet").resolve())
    # The staged redirects are written by a child process: its memory is not ours.
    child = mp.get_context("fork").Process(target=_prepare, args=(stage,))
    child.start()
    child.join()
    if child.exitcode != 0:
        raise SystemExit(f"preparing the stage failed (exit {child.exitcode})")
    redirects = pq.ParquetFile(stage / "redirects.parquet").metadata.num_rows
    titles_total = redirects + pq.ParquetFile(stage / "articles.parquet").metadata.num_rows
    con = duckdb.connect(
        config={
            "threads": 2,
            "memory_limit": args.memory,
            "temp_directory": str(stage / "duckdb"),
            "preserve_insertion_order": False,
        }
    )
    parts = partitions_for(titles_total, args.partition_titles)
    start = time.perf_counter()
    base = proc.memory_info().rss
    resolver = Resolver(con, stage, parts)
    resolver.redirect_map()
    rows = {}
    for table in ("articles", "links", "facts"):
        rows[table] = sum(b.num_rows for b in resolver.resolved(table))
    out = {
        "snapshot": str(snap),
        "memory_limit": args.memory,
        "partitions": parts,
        "rows": rows,
        "seconds": time.perf_counter() - start,
        "rss_before_bytes": base,
        "peak_rss_bytes": peak[0],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
