"""``POST /retrieve`` (Search-R1's retriever protocol on ``wikigym serve``) next to in-process
search, on a large snapshot.

Clients send what Search-R1's, SkyRL's and verl's search tools send: one request per search
call, ``{"queries": [q], "topk": 3, "return_scores": true}`` on a kept-alive HTTP/1.1
connection, each reply parsed in full. 1, 16 and 64 concurrent clients (one connection each)
against a ``wikigym serve`` subprocess; next to it, the same queries through
``Snapshot.search`` in this process (one thread: the cost of the search itself), and a
batched row (Search-R1's generation step sends every rollout's query in one request: 64 per
request). Rounds are interleaved (in process, then each served row, then again) and each row
reports the median of the rounds; the clients run in this process on the same cores as the
server, so the server's CPU is reported apart. Every reply is checked against the in-process
hits of its query (same ids, same order): a mismatch is an error.

Usage:
    nice -n 5 python benchmarks/bench_retrieve.py --corpus /work/big/i32/world-230k \
        [--queries 2000] [--rounds 3] [--clients 1 16 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common

ROOT = Path(__file__).resolve().parents[1]
TOPK = 3


def make_queries(snapshot: Any, n: int) -> list[str]:
    """``n`` queries from evenly spaced passages: the page title and the passage's first words
    (what a search agent asks about an entity), deterministic."""
    step = max(1, snapshot.num_passages // n)
    ids = list(range(0, step * n, step))[:n]
    table = snapshot.sql(
        "SELECT p.passage_id, a.title, p.text FROM passages p JOIN articles a USING (doc_id) "
        f"WHERE p.passage_id IN ({','.join(str(i) for i in ids)}) ORDER BY p.passage_id"
    )
    titles, texts = table.column("title").to_pylist(), table.column("text").to_pylist()
    return [f"{t} {' '.join(x.split()[:4])}" for t, x in zip(titles, texts, strict=True)]


def in_process(snapshot: Any, queries: list[str]) -> tuple[dict[str, Any], list[list[str]]]:
    """The queries one after another in this process: q/s, per-query latency, the hits."""
    lat, hits = [], []
    start, cpu = time.perf_counter(), time.thread_time()
    for q in queries:
        t = time.perf_counter()
        found = snapshot.search(q, TOPK)
        lat.append(time.perf_counter() - t)
        hits.append([str(h.passage_id) for h in found])
    wall, cpu = time.perf_counter() - start, time.thread_time() - cpu
    return _row("in-process Snapshot.search", 1, len(queries), wall, lat, 0, cpu), hits


async def client(
    host: str, port: int, bodies: list[bytes], lat: list[float], replies: list[Any]
) -> None:
    """One keep-alive connection sending its requests in turn, each reply read in full."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        for body in bodies:
            head = (
                f"POST /retrieve HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                f"Accept: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode()
            t = time.perf_counter()
            writer.write(head + body)
            status = await reader.readline()
            length = 0
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            payload = await reader.readexactly(length)
            lat.append(time.perf_counter() - t)
            replies.append((status, json.loads(payload)))
    finally:
        writer.close()


async def served(
    host: str, port: int, queries: list[str], clients: int, batch: int
) -> tuple[float, list[float], list[Any]]:
    bodies = [
        json.dumps(
            {"queries": queries[i : i + batch], "topk": TOPK, "return_scores": True}
        ).encode()
        for i in range(0, len(queries), batch)
    ]
    per = [bodies[i::clients] for i in range(clients)]
    lats: list[list[float]] = [[] for _ in range(clients)]
    replies: list[list[Any]] = [[] for _ in range(clients)]
    start = time.perf_counter()
    await asyncio.gather(*(client(host, port, per[i], lats[i], replies[i]) for i in range(clients)))
    wall = time.perf_counter() - start
    # back in request order, to check every reply against the in-process hits
    ordered: list[Any] = [None] * len(bodies)
    for i in range(clients):
        for j, reply in enumerate(replies[i]):
            ordered[i + j * clients] = reply
    return wall, [x for lat in lats for x in lat], ordered


def _row(
    system: str,
    clients: int,
    queries: int,
    wall: float,
    lat: list[float],
    errors: int,
    server_cpu: float | None,
    batch: int = 1,
) -> dict[str, Any]:
    return {
        "system": system,
        "clients": clients,
        "batch": batch,
        "queries": queries,
        "queries_per_s": queries / wall,
        "p50_ms": common.percentile(lat, 50) * 1000,
        "p99_ms": common.percentile(lat, 99) * 1000,
        "server_cpu_s": server_cpu,
        "queries_per_server_cpu_s": None if not server_cpu else queries / server_cpu,
        "errors": errors,
    }


def start_server(corpus: str, threads: int | None) -> tuple[subprocess.Popen, str, int]:
    cmd = [sys.executable, "-m", "wikigym", "serve", "--corpus", corpus, "--port", "0",
           "--python", "off", "--env", "WikiSearch-v1", "--max-sessions", "8"]  # fmt: skip
    if threads:
        cmd += ["--retrieve-threads", str(threads)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("wikigym serve: http://"):
        proc.kill()
        raise SystemExit(f"server did not start: {line!r}")
    host, port = line.split()[2].removeprefix("http://").split(":")
    return proc, host, int(port)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, help="snapshot directory (~1M passages)")
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument(
        "--batch", type=int, default=64, help="queries per request of the batch row"
    )
    parser.add_argument("--threads", type=int, help="--retrieve-threads of the server")
    parser.add_argument("--name", default="retrieve")
    args = parser.parse_args()

    from wikigym.corpora.snapshot import Snapshot

    snapshot = Snapshot.open(args.corpus)
    queries = make_queries(snapshot, args.queries)
    load_before = os.getloadavg()[0]
    proc, host, port = start_server(args.corpus, args.threads)
    server = psutil.Process(proc.pid)
    runs: dict[str, list[dict[str, Any]]] = {}
    try:
        asyncio.run(served(host, port, queries[:50], 4, 1))  # warm the server's pages
        for round_ in range(args.rounds):
            row, want = in_process(snapshot, queries)
            runs.setdefault("in-process", []).append(row)
            for clients, batch in [*((c, 1) for c in args.clients), (1, args.batch)]:
                cpu0 = sum(server.cpu_times()[:2])
                wall, lat, replies = asyncio.run(served(host, port, queries, clients, batch))
                cpu = sum(server.cpu_times()[:2]) - cpu0
                got = [
                    [d["document"]["id"] for d in hits]
                    for status, body in replies
                    for hits in body["result"]
                ]
                errors = sum(a != b for a, b in zip(got, want, strict=True))
                errors += sum(not status.startswith(b"HTTP/1.1 200") for status, _ in replies)
                name = "wikigym serve POST /retrieve" + (
                    f" ({batch} queries a request)" if batch > 1 else ""
                )
                runs.setdefault(f"{clients}x{batch}", []).append(
                    _row(name, clients, len(queries), wall, lat, errors, cpu, batch)
                )
            print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)
        rss = server.memory_info().rss
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    rows = []
    for key, found in runs.items():
        best = sorted(found, key=lambda r: r["queries_per_s"])[len(found) // 2]
        rows.append({**best, "runs_queries_per_s": [round(r["queries_per_s"]) for r in found],
                     "errors": sum(r["errors"] for r in found)})  # fmt: skip
        del key
    base = rows[0]["queries_per_s"]
    base_cpu = rows[0]["queries_per_server_cpu_s"]
    data = {
        "corpus": args.corpus,
        "passages": snapshot.num_passages,
        "snapshot_id": snapshot.snapshot_id,
        "queries": len(queries),
        "topk": TOPK,
        "rounds": args.rounds,
        "load_1m_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "server_rss_mb": round(rss / 2**20),
        "rows": rows,
    }
    table = common.markdown_table(
        ["system", "clients", "queries/request", "queries/s (median)", "runs", "vs in-process",
         "p50 ms", "p99 ms", "queries per CPU s (server's)", "vs in-process per CPU", "errors"],
        [
            [r["system"], r["clients"], r["batch"], r["queries_per_s"], " / ".join(map(str, r["runs_queries_per_s"])),
             f"{r['queries_per_s'] / base:.2f}", r["p50_ms"], r["p99_ms"],
             r["queries_per_server_cpu_s"], f"{r['queries_per_server_cpu_s'] / base_cpu:.2f}", r["errors"]]
            for r in rows
        ],
    )  # fmt: skip
    body = (
        f"Snapshot: {snapshot.num_passages:,} passages (`{args.corpus}`, a generated world, "
        f"snapshot_id {snapshot.snapshot_id[:12]}); {len(queries):,} queries (a page title and "
        f"the first words of one of its passages), topk {TOPK}, return_scores; "
        f"{args.rounds} interleaved rounds, each row the median round. Server: one "
        f"`wikigym serve` process (RSS {data['server_rss_mb']} MB at the end); clients: "
        "this process, asyncio, one kept-alive connection each, on the same cores. Latency: "
        "per request (per query for in-process). CPU: the server process's user+system time "
        "(in process: this thread's), the reading least moved by other work on the cores. "
        "Errors: replies whose hits differ from "
        "`Snapshot.search` for the same query and k, or non-200 statuses.\n\n"
        f"**The machine was shared and loaded**: 2 cores, other engineers' builds and tests "
        f"running (load average {data['load_1m_before_after'][0]} before, "
        f"{data['load_1m_before_after'][1]} after); absolute numbers are low and noisy, the "
        "ratios of the interleaved rounds are the reading to trust.\n\n" + table + "\n"
    )
    path = common.write_results(args.name, data, body)
    print(path.read_text())


if __name__ == "__main__":
    main()
