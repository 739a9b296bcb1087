"""Lucene peer of bench_scale, run by the Pyserini venv's python (not wikigym's).

Indexes a JsonCollection folder with ``python -m pyserini.index.lucene`` (2 threads, raw
documents stored), then answers the queries with ``LuceneSearcher`` (BM25 k1=1.2 b=0.75,
Tantivy's defaults, so scores are comparable): per-query latency of search + hit texts
(``json.loads(doc.raw())["contents"]``, what Search-R1's retriever returns) and of the
search alone, and ``batch_search`` throughput on 1 and 2 threads.

Usage (from bench_scale.py):
    /work/venv-lucene/bin/python benchmarks/scale_lucene.py --collection DIR --index DIR \
        --queries Q.json --out R.json
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (as numpy's default)."""
    s = sorted(values)
    pos = (len(s) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--collection", type=Path, required=True)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pyserini.index.lucene",
            "--collection",
            "JsonCollection",
            "--input",
            str(args.collection),
            "--index",
            str(args.index),
            "--generator",
            "DefaultLuceneDocumentGenerator",
            "--threads",
            str(args.threads),
            "--storeRaw",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    index_seconds = time.perf_counter() - start
    index_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024

    from pyserini.search.lucene import LuceneSearcher

    queries = json.loads(args.queries.read_text(encoding="utf-8"))
    searcher = LuceneSearcher(str(args.index))
    searcher.set_bm25(1.2, 0.75)

    def with_texts(q: str) -> list[tuple[str, str]]:
        hits = searcher.search(q, 10)
        return [(h.docid, json.loads(h.lucene_document.get("raw"))["contents"]) for h in hits]

    for q in queries[:50]:  # JIT warm-up
        with_texts(q)
    results = {}
    for name, func in (("texts", with_texts), ("search_only", lambda q: searcher.search(q, 10))):
        p50s, p99s = [], []
        for _ in range(args.repeat):
            times = []
            for q in queries:
                t = time.perf_counter()
                func(q)
                times.append((time.perf_counter() - t) * 1000)
            p50s.append(percentile(times, 50))
            p99s.append(percentile(times, 99))
        results[name] = {
            "p50_ms": sorted(p50s)[len(p50s) // 2],
            "p99_ms": sorted(p99s)[len(p99s) // 2],
        }
    qids = [str(i) for i in range(len(queries))]
    qps = {}
    for threads in (1, 2):
        rates = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            out = searcher.batch_search(queries, qids, k=10, threads=threads)
            for hits in out.values():  # with texts, as the latency figure
                _ = [json.loads(h.lucene_document.get("raw"))["contents"] for h in hits]
            rates.append(len(queries) / (time.perf_counter() - t))
        qps[str(threads)] = sorted(rates)[len(rates) // 2]
    top = {q: [h.docid for h in searcher.search(q, 10)] for q in queries}
    record = {
        "index_seconds": index_seconds,
        "index_peak_rss_bytes": index_rss,
        "search_peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "latency": results,
        "qps": qps,
        "top10": top,
        "index_bytes": sum(p.stat().st_size for p in args.index.rglob("*") if p.is_file()),
    }
    args.out.write_text(json.dumps(record) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
