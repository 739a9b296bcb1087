"""Peak RSS of the build's resolution queries (as in ``build._resolve``) over a built snapshot.

For the scale curve when a full rebuild does not fit the session: the staged tables are
re-created as views over SNAP's final tables (articles, links, facts; redirects from
``articles.redirects_from``), then the narrow (id, value) queries the build runs are read to
the end under ``--memory`` (DuckDB's limit). Prints rows, seconds and the peak RSS of this
process (sampled every 50 ms) as JSON.

Usage:
    python benchmarks/scale_resolve_memory.py SNAP [--memory 256MB]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from pathlib import Path

import duckdb
import psutil

QUERIES = {
    "articles.redirects_from": """
        SELECT a.doc_id, coalesce(rf.titles, []::VARCHAR[]) AS redirects_from
        FROM s_articles a
        LEFT JOIN (SELECT doc_id, list(title ORDER BY title) AS titles
                   FROM redirect_map GROUP BY doc_id) rf USING (doc_id)
        ORDER BY a.doc_id""",
    "links.target_doc_id": """
        SELECT l.link_id, m.doc_id FROM s_links l
        LEFT JOIN title_map m ON m.title = l.target_title ORDER BY l.link_id""",
    "facts.object_doc_id": """
        SELECT f.fact_id, m.doc_id FROM s_facts f
        LEFT JOIN title_map m ON m.title = f.object_title ORDER BY f.fact_id""",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("snapshot", type=Path)
    parser.add_argument("--memory", default="256MB")
    args = parser.parse_args()
    peak = [0]
    proc = psutil.Process()

    def sample() -> None:
        while True:
            peak[0] = max(peak[0], proc.memory_info().rss)
            time.sleep(0.05)

    threading.Thread(target=sample, daemon=True).start()
    tmp = tempfile.mkdtemp(prefix="scale-resolve-")
    con = duckdb.connect(
        config={
            "threads": 2,
            "memory_limit": args.memory,
            "temp_directory": tmp,
            "preserve_insertion_order": False,
        }
    )
    snap = args.snapshot
    for name in ("articles", "links", "facts"):
        con.read_parquet(str(snap / f"{name}.parquet")).create_view(f"s_{name}")
    con.execute(
        "CREATE VIEW s_redirects AS "
        "SELECT unnest(redirects_from) AS title, title AS target FROM s_articles"
    )
    start = time.perf_counter()
    base = proc.memory_info().rss
    con.execute(
        "CREATE TABLE r1 AS SELECT r.title, min(r.target) AS target FROM s_redirects r "
        "ANTI JOIN s_articles a ON a.title = r.title GROUP BY r.title"
    )
    con.execute(
        "CREATE TABLE redirect_map AS SELECT r1.title, coalesce(a1.doc_id, a2.doc_id) AS doc_id "
        "FROM r1 LEFT JOIN s_articles a1 ON a1.title = r1.target "
        "LEFT JOIN r1 AS r2 ON r2.title = r1.target "
        "LEFT JOIN s_articles a2 ON a2.title = r2.target "
        "WHERE coalesce(a1.doc_id, a2.doc_id) IS NOT NULL"
    )
    con.execute(
        "CREATE VIEW title_map AS SELECT title, doc_id FROM s_articles "
        "UNION ALL SELECT title, doc_id FROM redirect_map"
    )
    rows = {}
    for name, sql in QUERIES.items():
        rows[name] = sum(b.num_rows for b in con.execute(sql).to_arrow_reader(16_384))
    out = {
        "snapshot": str(snap),
        "memory_limit": args.memory,
        "rows": rows,
        "seconds": time.perf_counter() - start,
        "rss_before_bytes": base,
        "peak_rss_bytes": peak[0],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
