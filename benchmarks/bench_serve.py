"""``wikigym serve`` under load, next to in-process steps and Search-R1 retrieval servers.

1. Sessions: 64, 256 and 1,024 concurrent WebSocket sessions on loopback against a
   ``wikigym serve`` subprocess, each running scripted multi-step episodes (the oracle's tool
   calls of its task) in turn. Tool calls/s per wall second and per server CPU second, p50/p99
   step latency (client side), server and client CPU, server RSS per idle session, protocol
   errors (must be 0), crosstalk (each episode's transcript equals its in-process replay
   through the env recipe: must be 0 differences). Against in-process env steps/s: the same
   episodes in one process, one env after another (the server is one process too).
2. Search only, against what users run today: Search-R1's retrieval-server protocol
   (FastAPI ``POST /retrieve`` with ``{queries, topk}``) over the same passages, backed by
   bm25s and by Pyserini's Lucene BM25 (when a Python with pyserini is found: this one, or
   ``--lucene-python``), driven by 1, 64 and 256 concurrent clients, next to wikigym's
   in-process search step and ``wikigym serve`` search steps.

Clients speak the wire protocol with ``websockets`` directly (the messages of OpenEnv's
client, whose import alone takes ~20 s here), encoded before the clock starts; every reply is
parsed in full. All traffic stays on 127.0.0.1; every run is bounded in count and time.

Usage (in a venv with the ``serve`` extra, fastapi and httpx):
    python benchmarks/bench_serve.py [--corpus DIR --tasks FILE] [--sessions 64 256 1024]
        [--lucene-python /path/to/venv-lucene/bin/python]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common

ROOT = Path(__file__).resolve().parents[1]
SEARCH_STEPS = 8  # per client in the search comparison


def oracle_plan(task: Any) -> list[str]:
    from wikigym.tools import format_tool_call

    return [format_tool_call(c.name, c.arguments) for c in task.oracle]


def episodes(tasks: list[Any], n: int) -> list[tuple[str, int, list[str]]]:
    """Episode ``i``: task ``i mod T`` with seed ``i``, the oracle's calls."""
    return [
        (tasks[i % len(tasks)].task_id, i, oracle_plan(tasks[i % len(tasks)])) for i in range(n)
    ]


def in_process(corpus: str, tasks_path: str, plan: list[tuple[str, int, list[str]]], sessions: int):
    """The transcripts of the plan's episodes in one process, one env after another, and the
    steps per wall second and per CPU second of that loop (the resets of episodes past each
    session's first counted in, as the served clock counts them)."""
    from wikigym.envs.recipe import env_spec, make_env
    from wikigym.integrations.serve.protocol import jsonable

    env = make_env(env_spec("WikiSearch-v1", corpus=corpus, tasks=tasks_path, python="off"))
    out, steps, wall, cpu = [], 0, 0.0, 0.0
    for i, (task_id, seed, actions) in enumerate(plan):
        t, c = time.perf_counter(), time.thread_time()
        obs, info = env.reset(seed=seed, options={"task_id": task_id})
        if i < sessions:  # a session's first reset happens before the served clock starts
            t, c = time.perf_counter(), time.thread_time()
        raw: list[tuple[str, Any, Any, bool]] = [(obs, info, None, False)]
        for a in actions:
            obs, r, term, trunc, info = env.step(a)
            steps += 1
            raw.append((obs, info, r, bool(term or trunc)))
        wall += time.perf_counter() - t
        cpu += time.thread_time() - c
        # the wire form, off the clock (an in-process trainer does not pay for it)
        out.append([(o, jsonable(i), None if r is None else float(r), d) for o, i, r, d in raw])
    return out, steps / wall, steps / cpu


def start_server(args: argparse.Namespace, max_sessions: int) -> tuple[subprocess.Popen, str]:
    cmd = [sys.executable, "-m", "wikigym", "serve", "--port", "0", "--python", "off",
           "--max-sessions", str(max_sessions), "--idle-timeout", "0", "--env", "WikiSearch-v1"]  # fmt: skip
    if args.workers is not None:
        cmd += ["--workers", str(args.workers)]
    if args.corpus:
        cmd += ["--corpus", args.corpus, "--tasks", args.tasks]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline()
    if not line.startswith("wikigym serve: http://"):
        proc.kill()
        raise SystemExit(f"server did not start: {line!r}")
    return proc, line.split()[2]


def encoded(episode: tuple[str, int, list[str]]) -> tuple[str, list[str]]:
    """An episode's reset and step messages, encoded before the clock starts."""
    task_id, seed, actions = episode
    reset = json.dumps({"type": "reset", "data": {"seed": seed, "task_id": task_id}})
    return reset, [json.dumps({"type": "step", "data": {"message": a}}) for a in actions]


async def session_run(ws_url: str, mine: list[tuple[str, list[str]]], ready, go, lat):
    """One session: its episodes in turn (the first reset before ``go``); every reply is
    parsed in full and kept, to be compared with its in-process replay."""
    import websockets

    transcripts, errors = [], 0
    async with websockets.connect(
        ws_url, max_size=1 << 22, open_timeout=240, compression=None
    ) as ws:
        for k, (reset, steps) in enumerate(mine):
            await ws.send(reset)
            replies = [json.loads(await ws.recv())]
            if k == 0:
                ready.append(1)
                await go.wait()  # every session is open and idle: the RSS is read, then all step
            for message in steps:
                t = time.perf_counter()
                await ws.send(message)
                replies.append(json.loads(await ws.recv()))
                lat.append(time.perf_counter() - t)
            rows = []
            for msg in replies:
                if msg["type"] != "observation":
                    errors += 1
                    continue
                d = msg["data"]
                rows.append(
                    (d["observation"]["text"], d["observation"]["info"], d["reward"], d["done"])
                )
            transcripts.append(rows)
        await ws.send(json.dumps({"type": "close"}))
    return transcripts, errors


def cpu_s(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return t.user + t.system


async def load(url: str, per_session: list[list[tuple[str, list[str]]]], proc_pid: int):
    ws_url = url.replace("http://", "ws://") + "/ws"
    ready: list[int] = []
    go = asyncio.Event()
    lat: list[float] = []
    server = psutil.Process(proc_pid)
    rss0 = server.memory_info().rss
    tasks = [asyncio.create_task(session_run(ws_url, m, ready, go, lat)) for m in per_session]
    deadline = time.monotonic() + 300
    while len(ready) < len(per_session):
        if time.monotonic() > deadline or any(t.done() for t in tasks):
            break
        await asyncio.sleep(0.05)
    rss_idle = server.memory_info().rss
    server_cpu0, client_cpu0 = cpu_s(server), time.process_time()
    t0 = time.perf_counter()
    go.set()
    results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 600)
    wall = time.perf_counter() - t0
    return {
        "results": results,
        "latencies": lat,
        "wall_s": wall,
        "server_cpu_s": cpu_s(server) - server_cpu0,
        "client_cpu_s": time.process_time() - client_cpu0,
        "rss_before_mb": rss0 / 2**20,
        "rss_idle_mb": rss_idle / 2**20,
    }


def episodes_per_session(args: argparse.Namespace, sessions: int) -> int:
    """At least ``--episodes-per-session``, and enough that every session count runs
    ``--min-episodes`` in all: 64 sessions of 3 episodes are ~1 s of server CPU, too short
    to measure a ratio on."""
    return max(args.episodes_per_session, -(-args.min_episodes // sessions))


def bench_sessions(args, tasks, corpus, tasks_path) -> list[dict[str, Any]]:
    """Per session count, ``--repeats`` paired runs (in-process, then served, back to back):
    the row is the run with the median CPU ratio, with the range of all runs beside it
    (another process on the 2 cores moves a single run's ratio by +-10%)."""
    rows = []
    for n in args.sessions:
        runs = [paired_run(args, n, tasks, corpus, tasks_path) for _ in range(args.repeats)]
        ratios = sorted(r["served_over_in_process_cpu"] for r in runs)
        row = min(runs, key=lambda r: abs(r["served_over_in_process_cpu"] - ratios[len(runs) // 2]))
        row = {
            **row,
            "repeats": len(runs),
            "served_over_in_process_cpu_runs": [r["served_over_in_process_cpu"] for r in runs],
            "errors": sum(r["errors"] for r in runs),
            "crosstalk": sum(r["crosstalk"] for r in runs),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def paired_run(args, n: int, tasks, corpus, tasks_path) -> dict[str, Any]:
    """One paired run at ``n`` sessions: the in-process replay, then the served load."""
    rounds = episodes_per_session(args, n)
    plan = episodes(tasks, n * rounds)  # session i: episodes i, i + n, i + 2n, ...
    reference, inproc_wall, inproc_cpu = in_process(corpus, tasks_path, plan, n)
    per_session = [[encoded(plan[i + k * n]) for k in range(rounds)] for i in range(n)]
    proc, url = start_server(args, n)
    try:
        out = asyncio.run(load(url, per_session, proc.pid))
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    errors, crosstalk = 0, 0
    for i, res in enumerate(out["results"]):
        if isinstance(res, BaseException):
            errors += 1
            continue
        got, err = res
        errors += err
        want = [reference[i + k * n] for k in range(rounds)]
        crosstalk += sum(int(g != w) for g, w in zip(got, want, strict=True))
    steps = len(out["latencies"])
    lat = out["latencies"]
    served = steps / out["wall_s"]
    served_cpu = steps / out["server_cpu_s"]
    return {
        "sessions": n,
        "episodes": len(plan),
        "steps": steps,
        "tool_calls_per_s": served,
        "tool_calls_per_server_cpu_s": served_cpu,
        "p50_ms": 1000 * common.percentile(lat, 50),
        "p99_ms": 1000 * common.percentile(lat, 99),
        "in_process_steps_per_s": inproc_wall,
        "in_process_steps_per_cpu_s": inproc_cpu,
        "served_over_in_process_wall": served / inproc_wall,
        "served_over_in_process_cpu": served_cpu / inproc_cpu,
        "server_cpu_s": out["server_cpu_s"],
        "client_cpu_s": out["client_cpu_s"],
        "wall_s": out["wall_s"],
        "server_rss_idle_mb": out["rss_idle_mb"],
        "rss_per_idle_session_kb": 1024 * (out["rss_idle_mb"] - out["rss_before_mb"]) / n,
        "errors": errors,
        "crosstalk": crosstalk,
        "loadavg_1m": os.getloadavg()[0],
    }


# Search-R1's retrieval-server protocol (POST /retrieve {queries, topk}), shared by both peers;
# each peer's script sets up its retriever and `retrieve_rows(queries, topk)` before this.
RETRIEVER_SERVER = """
import sys, uvicorn
from fastapi import FastAPI
from pydantic import BaseModel
app = FastAPI()
class Req(BaseModel):
    queries: list[str]
    topk: int = 3
    return_scores: bool = False
@app.post("/retrieve")
def retrieve(req: Req):
    return {"result": retrieve_rows(req.queries, req.topk)}
print("ready", flush=True)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning", timeout_keep_alive=600)
"""

RETRIEVER = (
    """
import sys, bm25s, pyarrow.parquet as pq
table = pq.read_table(sys.argv[1] + "/passages.parquet", columns=["passage_id", "text"])
ids, texts = table["passage_id"].to_pylist(), table["text"].to_pylist()
retriever = bm25s.BM25()
retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
def retrieve_rows(queries, topk):
    docs, scores = retriever.retrieve(bm25s.tokenize(queries, stopwords="en", show_progress=False), k=topk, show_progress=False)
    return [[{"id": ids[int(d)], "contents": texts[int(d)]} for d in row] for row in docs]
"""
    + RETRIEVER_SERVER
)


LUCENE_RETRIEVER = (
    """
import json, sys
from pyserini.search.lucene import LuceneSearcher
searcher = LuceneSearcher(sys.argv[1])  # Lucene BM25 (k1=0.9, b=0.4), as Search-R1 serves it
def retrieve_rows(queries, topk):
    result = []
    for q in queries:
        hits = searcher.search(q, k=topk)
        result.append([{"id": h.docid, "contents": json.loads(searcher.doc(h.docid).raw())["contents"]} for h in hits])
    return result
"""
    + RETRIEVER_SERVER
)


def lucene_python(args: argparse.Namespace) -> str | None:
    """The interpreter that has Pyserini (``--lucene-python``, else this one), or None."""
    python = args.lucene_python or sys.executable
    probe = subprocess.run(
        [python, "-c", "import pyserini.search.lucene, fastapi, uvicorn"],
        capture_output=True,
        timeout=120,
    )
    if probe.returncode != 0:
        if args.lucene_python:
            raise SystemExit(f"--lucene-python {python}: pyserini, fastapi or uvicorn missing")
        return None
    return python


def build_lucene_index(python: str, corpus: str, work: Path) -> Path:
    """The snapshot's passages as a Pyserini JsonCollection, indexed by Pyserini's Lucene
    indexer (the same passage texts bm25s and wikigym index)."""
    import pyarrow.parquet as pq

    table = pq.read_table(Path(corpus) / "passages.parquet", columns=["passage_id", "text"])
    docs = work / "collection"
    docs.mkdir(parents=True)
    with open(docs / "passages.jsonl", "w", encoding="utf-8") as f:
        for pid, text in zip(
            table["passage_id"].to_pylist(), table["text"].to_pylist(), strict=True
        ):
            f.write(json.dumps({"id": str(pid), "contents": text}) + "\n")
    index = work / "index"
    subprocess.run(
        [python, "-m", "pyserini.index.lucene", "--collection", "JsonCollection", "--input",
         str(docs), "--index", str(index), "--generator", "DefaultLuceneDocumentGenerator",
         "--threads", "1", "--storeRaw"],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return index


def run_retriever(cmd: list[str], port: int, clients: list[int], queries: list[str], name: str):
    """Start a Search-R1 style /retrieve server, drive it with each client count, stop it."""
    rows = []
    retr = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        line = retr.stdout.readline().strip()
        if line != "ready":
            raise SystemExit(f"{name} did not start: {line!r}")
        wait_http(f"http://127.0.0.1:{port}/docs")
        asyncio.run(drive_retriever(f"http://127.0.0.1:{port}", 1, queries))  # warm (JVM, JIT)
        for n in clients:
            lat, wall, err = asyncio.run(drive_retriever(f"http://127.0.0.1:{port}", n, queries))
            rows.append(_row(name, n, lat, wall, err))
            print(json.dumps(rows[-1]), flush=True)
    finally:
        retr.terminate()
        retr.wait(timeout=30)
    return rows


def search_queries(tasks) -> list[str]:
    qs = [c.arguments["query"] for t in tasks for c in t.oracle if c.name == "search"]
    return qs or [t.question for t in tasks]


async def drive_retriever(
    url: str, clients: int, queries: list[str]
) -> tuple[list[float], float, int]:
    import httpx

    lat: list[float] = []
    errors = 0
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=clients), timeout=60) as http:

        async def one(c: int) -> None:
            nonlocal errors
            for j in range(SEARCH_STEPS):
                q = queries[(c * SEARCH_STEPS + j) % len(queries)]
                t = time.perf_counter()
                r = await http.post(url + "/retrieve", json={"queries": [q], "topk": 5})
                lat.append(time.perf_counter() - t)
                errors += int(r.status_code != 200)

        t0 = time.perf_counter()
        await asyncio.gather(*(one(c) for c in range(clients)))
        return lat, time.perf_counter() - t0, errors


async def drive_serve(url: str, clients: int, queries: list[str]) -> tuple[list[float], float, int]:
    import websockets

    from wikigym.tools import format_tool_call

    lat: list[float] = []
    errors = 0

    async def one(c: int) -> None:
        nonlocal errors
        messages = [
            json.dumps({"type": "step", "data": {"message": format_tool_call(
                "search", {"query": queries[(c * SEARCH_STEPS + j) % len(queries)], "k": 5})}})
            for j in range(SEARCH_STEPS)
        ]  # fmt: skip
        async with websockets.connect(
            url.replace("http://", "ws://") + "/ws", max_size=1 << 22, compression=None
        ) as ws:
            await ws.send(json.dumps({"type": "reset", "data": {"seed": c}}))
            await ws.recv()
            for message in messages:
                t = time.perf_counter()
                await ws.send(message)
                msg = json.loads(await ws.recv())
                lat.append(time.perf_counter() - t)
                errors += int(msg["type"] != "observation")

    t0 = time.perf_counter()
    await asyncio.gather(*(one(c) for c in range(clients)))
    return lat, time.perf_counter() - t0, errors


def bench_search(args, tasks, corpus, tasks_path) -> list[dict[str, Any]]:
    from wikigym.envs.recipe import env_spec, make_env
    from wikigym.tools import format_tool_call

    queries = search_queries(tasks)
    rows = []
    env = make_env(env_spec("WikiSearch-v1", corpus=corpus, tasks=tasks_path, python="off"))
    env.reset(seed=0)
    lat = []
    for j in range(64 * SEARCH_STEPS // 8):
        t = time.perf_counter()
        env.step(format_tool_call("search", {"query": queries[j % len(queries)], "k": 5}))
        lat.append(time.perf_counter() - t)
        if j % 10 == 9:
            env.reset(seed=j)  # stay below the step budget
    rows.append(_row("wikigym in-process step", 1, lat, sum(lat), 0))
    port = common_free_port()
    rows += run_retriever(
        [sys.executable, "-c", RETRIEVER, corpus, str(port)],
        port, args.clients, queries, "Search-R1 /retrieve (bm25s, FastAPI)",
    )  # fmt: skip
    python = lucene_python(args)
    if python is None:
        print("Pyserini not importable (see --lucene-python): the Lucene peer is skipped")
    else:
        with tempfile.TemporaryDirectory(prefix="bench-serve-lucene-") as work:
            index = build_lucene_index(python, corpus, Path(work))
            port = common_free_port()
            rows += run_retriever(
                [python, "-c", LUCENE_RETRIEVER, str(index), str(port)],
                port, args.clients, queries, "Search-R1 /retrieve (Pyserini Lucene BM25, FastAPI)",
            )  # fmt: skip
    proc, url = start_server(args, max(args.clients))
    try:
        for clients in args.clients:
            lat, wall, err = asyncio.run(drive_serve(url, clients, queries))
            rows.append(_row("wikigym serve (WebSocket step)", clients, lat, wall, err))
            print(json.dumps(rows[-1]), flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return rows


def _row(system: str, clients: int, lat: list[float], wall: float, errors: int) -> dict[str, Any]:
    return {
        "system": system,
        "clients": clients,
        "calls": len(lat),
        "tool_calls_per_s": len(lat) / wall,
        "p50_ms": 1000 * common.percentile(lat, 50),
        "p99_ms": 1000 * common.percentile(lat, 99),
        "errors": errors,
    }


def common_free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, timeout: float = 60) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="snapshot (default: the embedded default world)")
    parser.add_argument("--tasks", help="TaskSet (default: the default TaskSet)")
    parser.add_argument("--sessions", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 64, 256])
    parser.add_argument(
        "--parts", nargs="+", choices=["sessions", "search"], default=["sessions", "search"]
    )
    parser.add_argument(
        "--episodes-per-session", type=int, default=3, help="episodes each session runs in turn"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="paired runs per session count (median kept)"
    )
    parser.add_argument(
        "--min-episodes",
        type=int,
        default=768,
        help="episodes per session count at least (more per session for fewer sessions)",
    )
    parser.add_argument(
        "--lucene-python",
        help="a Python with pyserini, fastapi and uvicorn (see benchmarks/README.md); default: "
        "this one when pyserini imports, else the Lucene peer is skipped",
    )
    parser.add_argument(
        "--workers", type=int, help="the server's --workers (default: the server's own default)"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "serve")
    args = parser.parse_args()
    from wikigym.tasks.defaults import default_resources, default_tasks_path, resolve_resources

    if args.corpus:
        snapshot, taskset = resolve_resources(args.corpus, args.tasks)
        corpus, tasks_path = str(snapshot.path), str(Path(args.tasks).resolve())
    else:
        snapshot, taskset = default_resources(progress=False)
        corpus, tasks_path = str(snapshot.path), str(default_tasks_path())
    args.corpus, args.tasks = corpus, tasks_path
    tasks = [t for t in taskset if t.oracle]
    load_before = os.getloadavg()
    result = {
        "environment": {
            **common.environment(),
            "server_stack": server_stack(),
            "nice": os.nice(0),  # both sides run at this niceness (the server inherits it)
            "server_env_threads": server_env_threads(args),
        },
        "snapshot_id": snapshot.snapshot_id,
        "passages": snapshot.num_passages,
        "loadavg_before": load_before,
        "sessions": bench_sessions(args, tasks, corpus, tasks_path)
        if "sessions" in args.parts
        else [],
        "search": bench_search(args, tasks, corpus, tasks_path) if "search" in args.parts else [],
        "loadavg_after": os.getloadavg(),
    }
    keep_parts_not_run(result, args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    tmp.replace(args.out.with_suffix(".json"))
    tmp_md = args.out.with_suffix(".md.tmp")
    tmp_md.write_text(markdown(result, args))
    tmp_md.replace(args.out.with_suffix(".md"))
    print(args.out.with_suffix(".md").read_text())


def keep_parts_not_run(result: dict[str, Any], args: argparse.Namespace) -> None:
    """A part not run this time is kept from the previous result file (same snapshot), with
    the environment (command, date, commit) that produced it, under ``kept``."""
    previous_file = args.out.with_suffix(".json")
    if not previous_file.is_file():
        return
    previous = json.loads(previous_file.read_text())
    if previous.get("snapshot_id") != result["snapshot_id"]:
        return
    kept = dict(previous.get("kept", {}))
    for part in ("sessions", "search"):
        if part in args.parts:
            kept.pop(part, None)
        elif previous.get(part):
            result[part] = previous[part]
            kept.setdefault(part, {"environment": previous["environment"]})
    if kept:
        result["kept"] = kept


def server_env_threads(args: argparse.Namespace) -> int:
    """The env threads the benchmark's server runs with (0: env work on its event loop)."""
    from wikigym.integrations.serve import ServeConfig

    wiki = {"python": "off"}  # as start_server serves it
    return ServeConfig(
        env_ids=("WikiSearch-v1",), env_kwargs={"WikiSearch-v1": wiki}, workers=args.workers
    ).env_threads


def server_stack() -> dict[str, bool]:
    """What the server process finds: picows (``/ws``, required) and the optional speedups
    (Uvicorn uses uvloop and httptools when present; orjson is the codec when present)."""
    import importlib.util

    modules = ("picows", "uvloop", "httptools", "orjson")
    return {m: importlib.util.find_spec(m) is not None for m in modules}


def markdown(result: dict[str, Any], args: argparse.Namespace) -> str:
    env = result["environment"]
    cores = os.cpu_count()
    stack = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in env["server_stack"].items())
    threads = env.get("server_env_threads", 0)
    work = f"in {threads} env threads" if threads else "on the event loop"
    md = ["# wikigym serve under load", "", f"Command: `{env['command']}`", ""]
    md += [
        f"Machine: {cores} cores shared with other work; load average (1 min) "
        f"{result['loadavg_before'][0]:.1f} before, {result['loadavg_after'][0]:.1f} after; "
        f"niceness {env.get('nice', 0)}. Server: one process (HTTP on Uvicorn and `/ws` on "
        f"picows on one port, env work "
        f"{work}, "
        f"no compression; {stack}); "
        "in-process: one process, one env after another, the same episodes. Same core count: "
        "both are one process; the load clients run in the benchmark's own process on the "
        "same cores, so their CPU is reported apart and the per-CPU ratio charges the server "
        f"only for its own CPU. Each session runs its episodes in turn (the `episodes` column: "
        f"at least {args.episodes_per_session} per session and {args.min_episodes} in all). "
        f"Each row is the median of {args.repeats} paired runs (in-process, then served, back "
        "to back) by CPU ratio; errors and crosstalk are summed over all of them.",
        "",
    ]
    if result["sessions"]:
        md.append(sessions_table(result["sessions"]))
    if result["search"]:
        md += ["", "Search only (k=5), the same queries:", ""]
        if "search" in result.get("kept", {}):
            was = result["kept"]["search"]["environment"]
            md += [
                f"(Kept from an earlier run: `{was['command']}`, {was['date']}, commit "
                f"{str(was.get('git_commit'))[:10]}.)",
                "",
            ]
        md.append(common.markdown_table(
            ["system", "clients", "calls", "tool calls/s", "p50 ms", "p99 ms", "errors"],
            [[r["system"], r["clients"], f"{r['calls']:,}", f"{r['tool_calls_per_s']:.0f}", f"{r['p50_ms']:.2f}",
              f"{r['p99_ms']:.2f}", r["errors"]] for r in result["search"]],
        ))  # fmt: skip
        if not any("Lucene" in r["system"] for r in result["search"]):
            md += [
                "",
                "Pyserini's Lucene peer: not run (no Python with pyserini; see --lucene-python).",
            ]
    return "\n".join(md) + "\n"


def sessions_table(sessions: list[dict[str, Any]]) -> str:
    return common.markdown_table(
        ["sessions", "episodes", "steps", "tool calls/s (wall)", "per server CPU s", "p50 ms", "p99 ms",
         "in-process steps/s (wall)", "per CPU s", "served/in-process wall", "served/in-process CPU", "CPU ratio of each run",
         "server CPU s", "client CPU s", "server RSS idle MB", "RSS/idle session KB", "errors",
         "crosstalk", "load 1m"],
        [[r["sessions"], f"{r['episodes']:,}", f"{r['steps']:,}", f"{r['tool_calls_per_s']:.0f}", f"{r['tool_calls_per_server_cpu_s']:.0f}",
          f"{r['p50_ms']:.1f}", f"{r['p99_ms']:.1f}", f"{r['in_process_steps_per_s']:.0f}",
          f"{r['in_process_steps_per_cpu_s']:.0f}", f"{r['served_over_in_process_wall']:.2f}",
          f"{r['served_over_in_process_cpu']:.2f}",
          " / ".join(f"{x:.2f}" for x in r.get("served_over_in_process_cpu_runs", [])),
          f"{r['server_cpu_s']:.2f}", f"{r['client_cpu_s']:.2f}",
          f"{r['server_rss_idle_mb']:.0f}", f"{r['rss_per_idle_session_kb']:.0f}", r["errors"], r["crosstalk"],
          f"{r['loadavg_1m']:.1f}"] for r in sessions],
    )  # fmt: skip


if __name__ == "__main__":
    main()
