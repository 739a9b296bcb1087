"""Lucene peer of bench_scale, run by the Pyserini venv's python (not wikigym's).

Indexes a JsonCollection folder with ``python -m pyserini.index.lucene`` (2 threads, raw
documents stored), then answers the queries with ``LuceneSearcher`` (BM25 k1=1.2 b=0.75,
Tantivy's defaults, so scores are comparable): per-query latency of search + hit texts
(``json.loads(doc.raw())["contents"]``, what Search-R1's retriever returns) and of the
search alone, and ``batch_search`` throughput on 1 and 2 threads.

With ``--serve`` it answers one query per line of stdin instead (after the same warm-up),
writing one JSON line per query: the wall and thread-CPU milliseconds of search + hit texts
measured here, and the hit ids; ``bench_scale.py`` interleaves these with its in-process
systems query by query. A line ``{"qps": true}`` runs the ``batch_search`` throughput and
answers with it; end of input ends the process. ``--reuse-index`` searches an index left by
an earlier run (indexing 10M passages takes minutes).

Usage (from bench_scale.py):
    /work/venvs/lucene/bin/python benchmarks/scale_lucene.py --collection DIR --index DIR \
        --queries Q.json --out R.json [--serve] [--reuse-index]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (as numpy's default)."""
    s = sorted(values)
    pos = (len(s) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def index_collection(args: argparse.Namespace) -> tuple[float, int]:
    """Index the collection (``--threads``, raw documents stored): seconds and peak RSS."""
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
    seconds = time.perf_counter() - start
    return seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def throughput(searcher: Any, queries: list[str], repeat: int) -> dict[str, float]:
    """``batch_search`` queries/s on 1 and 2 threads, hit texts included (median of passes)."""
    qids = [str(i) for i in range(len(queries))]
    qps = {}
    for threads in (1, 2):
        rates = []
        for _ in range(repeat):
            t = time.perf_counter()
            out = searcher.batch_search(queries, qids, k=10, threads=threads)
            for hits in out.values():  # with texts, as the latency figure
                _ = [json.loads(h.lucene_document.get("raw"))["contents"] for h in hits]
            rates.append(len(queries) / (time.perf_counter() - t))
        qps[str(threads)] = sorted(rates)[len(rates) // 2]
    return qps


def serve(
    searcher: Any,
    with_texts: Callable[[str], list[tuple[str, str]]],
    queries: list[str],
    repeat: int,
) -> None:
    """One JSON line in, one out: ``{"q": text}`` -> timings and ids; ``{"qps": true}``."""
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("qps"):
            answer: dict[str, Any] = {"qps": throughput(searcher, queries, repeat)}
        else:
            cpu, wall = time.thread_time(), time.perf_counter()
            hits = with_texts(request["q"])
            answer = {
                "wall_ms": (time.perf_counter() - wall) * 1000,
                "cpu_ms": (time.thread_time() - cpu) * 1000,
                "ids": [docid for docid, _text in hits],
            }
        answer["rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def measure(
    searcher: Any,
    with_texts: Callable[[str], list[tuple[str, str]]],
    queries: list[str],
    repeat: int,
) -> dict[str, Any]:
    """Latency one query at a time (search + texts, and search alone), then throughput."""
    results = {}

    def search_only(q: str) -> Any:
        return searcher.search(q, 10)

    for name, func in (("texts", with_texts), ("search_only", search_only)):
        p50s, p99s = [], []
        for _ in range(repeat):
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
    return {
        "latency": results,
        "qps": throughput(searcher, queries, repeat),
        "top10": {q: [h.docid for h in search_only(q)] for q in queries},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--collection", type=Path, required=True)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--serve", action="store_true", help="answer queries from stdin")
    parser.add_argument("--reuse-index", action="store_true", help="search --index if it exists")
    args = parser.parse_args()
    if args.reuse_index and args.index.is_dir() and any(args.index.glob("segments_*")):
        index_seconds, index_rss = float("nan"), 0
    else:
        index_seconds, index_rss = index_collection(args)

    from pyserini.search.lucene import LuceneSearcher

    queries = json.loads(args.queries.read_text(encoding="utf-8"))
    searcher = LuceneSearcher(str(args.index))
    searcher.set_bm25(1.2, 0.75)

    def with_texts(q: str) -> list[tuple[str, str]]:
        hits = searcher.search(q, 10)
        return [(h.docid, json.loads(h.lucene_document.get("raw"))["contents"]) for h in hits]

    for q in queries[:50]:  # JIT warm-up
        with_texts(q)
    record: dict[str, Any] = {
        "index_seconds": index_seconds,
        "index_peak_rss_bytes": index_rss,
        "index_bytes": sum(p.stat().st_size for p in args.index.rglob("*") if p.is_file()),
        "index_segments": len(list(args.index.glob("*.si"))),
    }
    args.out.write_text(json.dumps(record) + "\n", encoding="utf-8")  # before serving
    if args.serve:
        serve(searcher, with_texts, queries, args.repeat)
        return
    record |= measure(searcher, with_texts, queries, args.repeat)
    record["search_peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    args.out.write_text(json.dumps(record) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
