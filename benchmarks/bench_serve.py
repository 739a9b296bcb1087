"""``wikigym serve`` under load, next to in-process steps and a Search-R1 retrieval server.

1. Sessions: 64, 256 and 1,024 concurrent WebSocket sessions on loopback against a
   ``wikigym serve`` subprocess, each a scripted multi-step episode (the oracle's tool calls of
   its task). Tool calls/s, p50/p99 step latency (client side), server RSS per idle session,
   protocol errors (must be 0), crosstalk (each session's transcript equals its in-process
   replay through the env recipe: must be 0 differences). Served steps/s against in-process
   env steps/s (the same episodes in a loop, one process).
2. Search only, against what users run today: Search-R1's retrieval-server protocol
   (FastAPI ``POST /retrieve`` with ``{queries, topk}``) backed by bm25s over the same
   passages, driven by 1, 64 and 256 concurrent clients, next to wikigym's in-process search
   step and ``wikigym serve`` search steps. (Pyserini's Lucene needs Java: not run here.)

Clients speak the wire protocol with ``websockets`` directly (the messages of OpenEnv's
client, whose import alone takes ~20 s here). All traffic stays on 127.0.0.1; every run is
bounded in count and time.

Usage (in a venv with the ``serve`` extra, fastapi and httpx):
    python benchmarks/bench_serve.py [--corpus DIR --tasks FILE] [--sessions 64 256 1024]
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
SEARCH_STEPS = 8  # per client in the search comparison


def oracle_plan(task: Any) -> list[str]:
    from wikigym.envs.tool_specs import format_tool_call

    return [format_tool_call(c.name, c.arguments) for c in task.oracle]


def episodes(tasks: list[Any], n: int) -> list[tuple[str, int, list[str]]]:
    """Session ``i``: task ``i mod T`` with seed ``i``, the oracle's calls."""
    return [
        (tasks[i % len(tasks)].task_id, i, oracle_plan(tasks[i % len(tasks)])) for i in range(n)
    ]


def in_process(corpus: str, tasks_path: str, plan: list[tuple[str, int, list[str]]]):
    """The transcripts and the steps/s of the same episodes in one process."""
    from wikigym.envs.recipe import env_spec, make_env
    from wikigym.integrations.serve.protocol import jsonable

    env = make_env(env_spec("WikiSearch-v0", corpus=corpus, tasks=tasks_path, python="off"))
    out, steps, busy = [], 0, 0.0
    for task_id, seed, actions in plan:
        obs, info = env.reset(seed=seed, options={"task_id": task_id})
        rows = [(obs, jsonable(info), None, False)]
        for a in actions:
            t = time.perf_counter()
            obs, r, term, trunc, info = env.step(a)
            busy += time.perf_counter() - t
            steps += 1
            rows.append((obs, jsonable(info), float(r), bool(term or trunc)))
        out.append(rows)
    return out, steps / busy


def start_server(args: argparse.Namespace, max_sessions: int) -> tuple[subprocess.Popen, str]:
    cmd = [sys.executable, "-m", "wikigym", "serve", "--port", "0", "--python", "off",
           "--max-sessions", str(max_sessions), "--idle-timeout", "0", "--env", "WikiSearch-v0"]  # fmt: skip
    if args.corpus:
        cmd += ["--corpus", args.corpus, "--tasks", args.tasks]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline()
    if not line.startswith("wikigym serve: http://"):
        proc.kill()
        raise SystemExit(f"server did not start: {line!r}")
    return proc, line.split()[2]


async def session_run(ws_url: str, task_id: str, seed: int, actions: list[str], ready, go, lat):
    import websockets

    async with websockets.connect(ws_url, max_size=1 << 22, open_timeout=60) as ws:
        await ws.send(json.dumps({"type": "reset", "data": {"seed": seed, "task_id": task_id}}))
        rows, errors = [], 0
        msg = json.loads(await ws.recv())
        ready.append(1)
        await go.wait()  # every session is open and idle: the RSS is read, then all step
        for a in [None, *actions]:
            if a is not None:
                t = time.perf_counter()
                await ws.send(json.dumps({"type": "step", "data": {"message": a}}))
                msg = json.loads(await ws.recv())
                lat.append(time.perf_counter() - t)
            if msg["type"] != "observation":
                errors += 1
                continue
            d = msg["data"]
            rows.append(
                (d["observation"]["text"], d["observation"]["info"], d["reward"], d["done"])
            )
        await ws.send(json.dumps({"type": "close"}))
        return rows, errors


async def load(url: str, plan, proc_pid: int) -> dict[str, Any]:
    ws_url = url.replace("http://", "ws://") + "/ws"
    ready: list[int] = []
    go = asyncio.Event()
    lat: list[float] = []
    server = psutil.Process(proc_pid)
    rss0 = server.memory_info().rss
    tasks = [asyncio.create_task(session_run(ws_url, t, s, a, ready, go, lat)) for t, s, a in plan]
    deadline = time.monotonic() + 300
    while len(ready) < len(plan):
        if time.monotonic() > deadline or any(t.done() for t in tasks):
            break
        await asyncio.sleep(0.05)
    rss_idle = server.memory_info().rss
    t0 = time.perf_counter()
    go.set()
    results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 600)
    wall = time.perf_counter() - t0
    return {
        "results": results,
        "latencies": lat,
        "wall_s": wall,
        "rss_before_mb": rss0 / 2**20,
        "rss_idle_mb": rss_idle / 2**20,
    }


def bench_sessions(args, tasks, corpus, tasks_path) -> list[dict[str, Any]]:
    rows = []
    # one in-process run of the largest plan: its prefixes are the smaller plans' replays
    full_reference, inproc_sps = in_process(corpus, tasks_path, episodes(tasks, max(args.sessions)))
    for n in args.sessions:
        plan = episodes(tasks, n)
        reference = full_reference[:n]
        proc, url = start_server(args, n)
        try:
            out = asyncio.run(load(url, plan, proc.pid))
            cpu = psutil.Process(proc.pid).cpu_times()
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        errors, crosstalk = 0, 0
        for res, ref in zip(out["results"], reference, strict=True):
            if isinstance(res, BaseException):
                errors += 1
                continue
            got, err = res
            errors += err
            crosstalk += int(got != ref)
        steps = len(out["latencies"])
        lat = out["latencies"]
        rows.append(
            {
                "sessions": n,
                "steps": steps,
                "tool_calls_per_s": steps / out["wall_s"],
                "p50_ms": 1000 * common.percentile(lat, 50),
                "p99_ms": 1000 * common.percentile(lat, 99),
                "in_process_steps_per_s": inproc_sps,
                "served_over_in_process": steps / out["wall_s"] / inproc_sps,
                "server_rss_idle_mb": out["rss_idle_mb"],
                "rss_per_idle_session_kb": 1024 * (out["rss_idle_mb"] - out["rss_before_mb"]) / n,
                "server_cpu_s": cpu.user + cpu.system,
                "errors": errors,
                "crosstalk": crosstalk,
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


RETRIEVER = """
import sys, bm25s, pyarrow.parquet as pq, uvicorn
from fastapi import FastAPI
from pydantic import BaseModel
table = pq.read_table(sys.argv[1] + "/passages.parquet", columns=["passage_id", "text"])
ids, texts = table["passage_id"].to_pylist(), table["text"].to_pylist()
retriever = bm25s.BM25()
retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
app = FastAPI()
class Req(BaseModel):
    queries: list[str]
    topk: int = 3
    return_scores: bool = False
@app.post("/retrieve")
def retrieve(req: Req):
    docs, scores = retriever.retrieve(bm25s.tokenize(req.queries, stopwords="en", show_progress=False), k=req.topk, show_progress=False)
    return {"result": [[{"id": ids[int(d)], "contents": texts[int(d)]} for d in row] for row in docs]}
print("ready", flush=True)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning", timeout_keep_alive=600)
"""


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

    from wikigym.envs.tool_specs import format_tool_call

    lat: list[float] = []
    errors = 0

    async def one(c: int) -> None:
        nonlocal errors
        async with websockets.connect(
            url.replace("http://", "ws://") + "/ws", max_size=1 << 22
        ) as ws:
            await ws.send(json.dumps({"type": "reset", "data": {"seed": c}}))
            await ws.recv()
            for j in range(SEARCH_STEPS):
                q = queries[(c * SEARCH_STEPS + j) % len(queries)]
                t = time.perf_counter()
                await ws.send(
                    json.dumps(
                        {
                            "type": "step",
                            "data": {"message": format_tool_call("search", {"query": q, "k": 5})},
                        }
                    )
                )
                msg = json.loads(await ws.recv())
                lat.append(time.perf_counter() - t)
                errors += int(msg["type"] != "observation")

    t0 = time.perf_counter()
    await asyncio.gather(*(one(c) for c in range(clients)))
    return lat, time.perf_counter() - t0, errors


def bench_search(args, tasks, corpus, tasks_path) -> list[dict[str, Any]]:
    from wikigym.envs.recipe import env_spec, make_env
    from wikigym.envs.tool_specs import format_tool_call

    queries = search_queries(tasks)
    rows = []
    env = make_env(env_spec("WikiSearch-v0", corpus=corpus, tasks=tasks_path, python="off"))
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
    retr = subprocess.Popen(
        [sys.executable, "-c", RETRIEVER, corpus, str(port)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert retr.stdout.readline().strip() == "ready"
        _wait_http(f"http://127.0.0.1:{port}/docs")
        for clients in args.clients:
            lat, wall, err = asyncio.run(
                drive_retriever(f"http://127.0.0.1:{port}", clients, queries)
            )
            rows.append(_row("Search-R1 /retrieve (bm25s, FastAPI)", clients, lat, wall, err))
            print(json.dumps(rows[-1]), flush=True)
    finally:
        retr.terminate()
        retr.wait(timeout=30)
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


def _wait_http(url: str, timeout: float = 60) -> None:
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
    result = {
        "environment": common.environment(),
        "snapshot_id": snapshot.snapshot_id,
        "passages": snapshot.num_passages,
        "sessions": bench_sessions(args, tasks, corpus, tasks_path),
        "search": bench_search(args, tasks, corpus, tasks_path),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    tmp.replace(args.out.with_suffix(".json"))
    md = ["# wikigym serve under load", "", f"Command: `{result['environment']['command']}`", ""]
    md.append(common.markdown_table(
        ["sessions", "steps", "tool calls/s", "p50 ms", "p99 ms", "in-process steps/s", "served/in-process",
         "server RSS idle MB", "RSS/idle session KB", "errors", "crosstalk"],
        [[r["sessions"], r["steps"], f"{r['tool_calls_per_s']:.0f}", f"{r['p50_ms']:.1f}", f"{r['p99_ms']:.1f}",
          f"{r['in_process_steps_per_s']:.0f}", f"{r['served_over_in_process']:.2f}", f"{r['server_rss_idle_mb']:.0f}",
          f"{r['rss_per_idle_session_kb']:.0f}", r["errors"], r["crosstalk"]] for r in result["sessions"]],
    ))  # fmt: skip
    md += ["", "Search only (k=5), the same queries:", ""]
    md.append(common.markdown_table(
        ["system", "clients", "calls", "tool calls/s", "p50 ms", "p99 ms", "errors"],
        [[r["system"], r["clients"], r["calls"], f"{r['tool_calls_per_s']:.0f}", f"{r['p50_ms']:.2f}",
          f"{r['p99_ms']:.2f}", r["errors"]] for r in result["search"]],
    ))  # fmt: skip
    args.out.with_suffix(".md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
