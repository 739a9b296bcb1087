"""The scale curve: build time, peak RSS, index size and search latency from 100k to 4.5M+
passages, for wikigym, raw tantivy (the same index), bm25s and Lucene (Pyserini).

Stages (each writes a JSON record under ``--work``; ``report`` gathers them):

- ``build``: ``python -m wikigym corpus build WORLD --threads 2`` measured with psutil over
  the process tree (peak RSS sum and PSS; anonymous and file-mapped RSS by build phase,
  ``scale_memory.py``), plus the snapshot's index size and layout.
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
    python benchmarks/bench_scale.py report --records-from benchmarks/results/scale.json \
        --records NEW.build.json NEW.search.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: wikigym
sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks: common

import bench_search as bs
import common
from scale_memory import PhaseMemory

_WORD = re.compile(r"\w+", re.UNICODE)
WIKI18_PASSAGES = 21_015_324  # DPR's psgs_w100 (wiki-18), 100-word passages
# English Wikipedia as 100-word passages: ~6.9M articles, ~4.5B words of prose (2025).
ENWIKI_PASSAGES = 45_000_000


def dir_bytes(path: Path) -> int:
    """Bytes of the files under ``path``."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def stage_build(args: argparse.Namespace) -> dict[str, Any]:
    """Build one snapshot through the CLI, measured."""
    cmd = common.build_command(Path(args.world), Path(args.out), args.threads)
    if args.index_memory_mb is not None:
        cmd += ["--index-memory-mb", str(args.index_memory_mb)]
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=common.ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=common.die_with_parent,
    )
    with common.TreeMemory(proc.pid, 0.25) as mem, PhaseMemory(proc.pid, Path(args.out)) as phases:
        _stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        sys.stderr.write(stderr.decode("utf-8", "replace")[-4000:])
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    stats = {
        "seconds": time.perf_counter() - start,
        # CPU of the build's process tree (the main process and its parsing workers).
        "cpu_seconds": used.ru_utime + used.ru_stime - children.ru_utime - children.ru_stime,
        "peak_rss_bytes": mem.peak_rss,
        "peak_pss_bytes": mem.peak_pss,
        "command": shlex.join(cmd),
    }
    manifest = json.loads((Path(args.out) / "manifest.json").read_text(encoding="utf-8"))
    record = {
        "stage": "build",
        "snapshot": str(args.out),
        "world": str(args.world),
        "threads": args.threads,
        "seconds": stats["seconds"],
        "cpu_seconds": stats["cpu_seconds"],
        "peak_rss_bytes": stats["peak_rss_bytes"],
        "peak_pss_bytes": stats["peak_pss_bytes"],
        **phases.summary(),
        "command": stats["command"],
        "counts": manifest["counts"],
        "index_layout": manifest["index_layout"],
        "index_bytes": dir_bytes(Path(args.out) / "index"),
        "snapshot_bytes": dir_bytes(Path(args.out)),
        "snapshot_id": manifest["snapshot_id"],
        "environment": common.environment(),
    }
    return record


class RawTantivy(bs.RawTantivy):
    """bench_search's raw tantivy, with the lenient parser for the few word triples that the
    strict one refuses (e.g. a triple whose words all analyse away, like "not as to")."""

    def search(self, query: str) -> bs.Result:
        try:
            return super().search(query)
        except ValueError:
            q, _errors = self.index.parse_query_lenient(query, ["body"])
            out = []
            for _score, address in self.searcher.search(q, bs.K, count=False).hits:
                doc = self.searcher.doc(address)
                out.append((doc["passage_id"][0], doc["title"][0], doc["text"][0].decode()))
            return out


class Bm25s(bs.Bm25s):
    """bench_search's bm25s; a query of stop words only has no tokens: no hits (as ours)."""

    def search(self, query: str) -> bs.Result:
        if not self._tokenize([query], ids=False)[0]:
            return []
        return super().search(query)


def three_word_queries(
    passages: int, text_at: Callable[[int], str], n: int, seed: int = 0
) -> list[str]:
    """``n`` queries of three consecutive words of random passages (lower case, seeded):
    passage ``i`` is the i-th in passage_id order (ids are dense from 0)."""
    rng = random.Random(seed)
    queries: list[str] = []
    while len(queries) < n:
        words = _WORD.findall(text_at(rng.randrange(passages)).lower())
        if len(words) >= 3:
            start = rng.randrange(len(words) - 2)
            queries.append(" ".join(words[start : start + 3]))
    return queries


def agreement(a: list[list[int]], b: list[list[int]]) -> float:
    """Mean share of the same top-10 passage ids."""
    shares = [len(set(x) & set(y)) / max(len(x), len(y), 1) for x, y in zip(a, b, strict=True)]
    return sum(shares) / len(shares)


class LuceneServer:
    """The Lucene peer (``scale_lucene.py --serve`` in the Pyserini venv): one query at a
    time over a pipe, timed inside its process (wall and thread CPU of search + hit texts),
    so it is interleaved query by query with the in-process systems."""

    def __init__(self, corpus: bs.Corpus, queries: list[str], args: argparse.Namespace) -> None:
        work = Path(args.work) / f"lucene-{corpus.snapshot.name}"
        index = Path(args.lucene_index) if args.lucene_index else work / "index"
        work.mkdir(parents=True, exist_ok=True)
        self.reused = args.lucene_index is not None and any(index.glob("segments_*"))
        if not self.reused:
            shutil.rmtree(work / "collection", ignore_errors=True)
            (work / "collection").mkdir(parents=True)
            with open(work / "collection" / "docs.jsonl", "w", encoding="utf-8") as f:
                for pid, title, text in zip(corpus.pids, corpus.titles, corpus.texts, strict=True):
                    f.write(json.dumps({"id": str(pid), "contents": f"{title}\n{text}"}) + "\n")
        (work / "queries.json").write_text(json.dumps(queries), encoding="utf-8")
        cmd = [
            str(args.lucene_python),
            str(Path(__file__).resolve().parent / "scale_lucene.py"),
            "--collection",
            str(work / "collection"),
            "--index",
            str(index),
            "--queries",
            str(work / "queries.json"),
            "--out",
            str(work / "index.json"),
            "--repeat",
            str(args.repeat),
            "--serve",
            "--reuse-index",
        ]
        print("  lucene (pyserini): indexing or opening, warming up ...", flush=True)
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=work,
            preexec_fn=common.die_with_parent,
        )
        self.work = work

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the Lucene peer exited (code {self.proc.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def search(self, query: str) -> dict[str, Any]:
        """Timings (wall_ms, cpu_ms, measured in the peer) and the hit ids of one query."""
        return self._ask({"q": query})

    def qps(self) -> dict[str, float]:
        return dict(self._ask({"qps": True})["qps"])

    def close(self) -> dict[str, Any]:
        """End the process; what it recorded of its index (seconds, peak RSS, bytes)."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()
        info: dict[str, Any] = json.loads((self.work / "index.json").read_text(encoding="utf-8"))
        info["index_reused"] = self.reused
        if not self.reused:
            shutil.rmtree(self.work / "collection", ignore_errors=True)
        return info


class Timed:
    """Per-query wall and thread-CPU milliseconds of one system, pass by pass."""

    def __init__(self, repeat: int) -> None:
        self.wall: list[list[float]] = [[] for _ in range(repeat)]
        self.cpu: list[list[float]] = [[] for _ in range(repeat)]

    def summary(self) -> dict[str, float]:
        """p50/p99 (median over passes) of wall and CPU time, and the means."""

        def over(passes: list[list[float]], q: float) -> float:
            return common.median([common.percentile(p, q) for p in passes])

        return {
            "p50_ms": over(self.wall, 50),
            "p99_ms": over(self.wall, 99),
            "mean_ms": common.median([sum(p) / len(p) for p in self.wall]),
            "cpu_p50_ms": over(self.cpu, 50),
            "cpu_p99_ms": over(self.cpu, 99),
            "cpu_mean_ms": common.median([sum(p) / len(p) for p in self.cpu]),
        }

    def best(self) -> list[float]:
        """Each query's fastest wall time over the passes."""
        return [min(times) for times in zip(*self.wall, strict=True)]


def paired(a: Timed, b: Timed) -> dict[str, float]:
    """Per-query ratio a/b of the fastest passes (the same queries, interleaved): its
    median and quartiles, which the load moves less than a ratio of percentiles."""
    ratios = sorted(x / y for x, y in zip(a.best(), b.best(), strict=True) if y > 0)
    return {q: common.percentile(ratios, v) for q, v in (("p25", 25), ("p50", 50), ("p75", 75))}


def open_layouts(args: argparse.Namespace) -> list[tuple[str, Path, int]]:
    """(label, snapshot path, search threads) of every wikigym layout under test: the
    snapshot, then ``--layouts`` (re-indexed copies of it, ``scale_reindex.py``), each with
    every ``--search-threads``."""
    from wikigym.corpora import Snapshot

    out = []
    for path in [args.snapshot, *args.layouts]:
        segments = Snapshot.open(path, verify="none").index_segments
        for threads in args.search_threads:
            label = f"{segments}seg" + (f"/t{threads}" if threads > 1 else "")
            out.append((label, Path(path), threads))
    return out


def stage_search(args: argparse.Namespace) -> dict[str, Any]:
    """Every system over one snapshot (and its re-indexed layouts), the same queries,
    interleaved query by query (the order rotates), each timed in wall and CPU time."""
    from wikigym.corpora import Snapshot

    snap_path = Path(args.snapshot)
    snap = Snapshot.open(snap_path, verify="none")
    config = snap.index_config
    total = snap.num_passages
    peers = [name for name in args.systems if name in ("bm25s", "lucene")]
    if total > args.bm25s_max and "bm25s" in peers:  # decided here, once: it does not fit
        peers.remove("bm25s")
    if peers:  # the peers index every passage: hold them all
        corpus = bs.load_corpus(snap_path.name, snap_path)
        queries = three_word_queries(total, corpus.texts.__getitem__, args.queries, args.seed)
    else:  # the same queries from point look-ups
        corpus = bs.Corpus(snap_path.name, snap_path, [], [], [])

        def text_at(i: int) -> str:
            row = snap.sql("SELECT text FROM passages WHERE passage_id = ?", [i])
            return str(row.column("text")[0].as_py())

        queries = three_word_queries(total, text_at, args.queries, args.seed)
    print(f"== {snap_path}: {total:,} passages, e.g. {queries[:3]}", flush=True)

    layouts = open_layouts(args)
    primary = layouts[0][0]
    opened: dict[str, Any] = {}
    systems: dict[str, Callable[[str], Any]] = {}
    layout_of: dict[str, dict[str, Any]] = {}
    for label, path, threads in layouts:
        one = Snapshot.open(path, verify="none", search_threads=threads)
        if one.snapshot_id != snap.snapshot_id:
            raise SystemExit(f"{path} is another snapshot ({one.snapshot_id[:12]})")
        name = "wikigym" if label == primary else f"wikigym@{label}"
        opened[name] = one
        systems[name] = bs.Ours(bs.Corpus(path.name, path, [], [], []), one).search
        layout_of[name] = {"snapshot": str(path), "label": label, "threads": threads}
        if threads == 1:
            raw_name = "tantivy-raw" if label == primary else f"tantivy-raw@{label}"
            systems[raw_name] = RawTantivy(bs.Corpus(path.name, path, [], [], []), config).search
            layout_of[raw_name] = layout_of[name]
    bm = None
    added_rss = 0
    if "bm25s" in peers:
        import psutil

        print("  indexing bm25s ...", flush=True)
        before = psutil.Process().memory_info().rss
        bm = Bm25s(corpus, "en")
        added_rss = psutil.Process().memory_info().rss - before
        systems["bm25s"] = bm.search
    lucene = LuceneServer(corpus, queries, args) if "lucene" in peers else None

    # Warm-up pass: every system's top 10; every wikigym layout's hits with their scores.
    top = {
        name: [[hit[0] for hit in search(q)] for q in queries] for name, search in systems.items()
    }
    if lucene is not None:
        top["lucene"] = [[int(d) for d in lucene.search(q)["ids"]] for q in queries]
    scored = {
        name: [[(h.passage_id, h.score, h.text) for h in s.search(q, 10)] for q in queries]
        for name, s in opened.items()
    }
    mismatches = {
        name: [q for q, a, b in zip(queries, got, scored["wikigym"], strict=True) if a != b]
        for name, got in scored.items()
    }

    names = [*systems, *(["lucene"] if lucene is not None else [])]
    timed = {name: Timed(args.repeat) for name in names}
    # A fresh seeded order for every query: a system run right after another process
    # (the Lucene peer) finds the CPU caches cold, so no system may always follow it.
    order = random.Random(args.seed)
    for rep in range(args.repeat):
        for q in queries:
            for name in order.sample(names, len(names)):
                if name == "lucene":
                    assert lucene is not None
                    answer = lucene.search(q)
                    timed[name].wall[rep].append(answer["wall_ms"])
                    timed[name].cpu[rep].append(answer["cpu_ms"])
                    continue
                cpu, wall = time.thread_time(), time.perf_counter()
                systems[name](q)
                timed[name].wall[rep].append((time.perf_counter() - wall) * 1000)
                timed[name].cpu[rep].append((time.thread_time() - cpu) * 1000)
        print(f"  pass {rep + 1}/{args.repeat}, load {os.getloadavg()[0]:.1f}", flush=True)

    rows: dict[str, Any] = {}
    for name in names:
        row: dict[str, Any] = dict(timed[name].summary())
        if name == "lucene":
            assert lucene is not None
            qps = lucene.qps()
            row["qps_1"], row["qps_2"] = qps["1"], qps["2"]
        else:
            for threads in (1, 2):
                rate = bs.throughput(systems[name], queries, threads, args.repeat)["qps"]
                row[f"qps_{threads}"] = rate
        if name in layout_of:
            row["layout"] = layout_of[name]
        if name != "wikigym":
            row["agreement_with_wikigym"] = agreement(top["wikigym"], top[name])
        rows[name] = row
        print(
            f"  {name:<24} p50 {row['p50_ms']:.3f} p99 {row['p99_ms']:.3f} ms  cpu p50 "
            f"{row['cpu_p50_ms']:.3f} p99 {row['cpu_p99_ms']:.3f}  q/s {row['qps_1']:.0f} / "
            f"{row['qps_2']:.0f}",
            flush=True,
        )
    for peer in ("tantivy-raw", "lucene"):
        if peer in timed:
            rows[f"paired wikigym/{peer}"] = paired(timed["wikigym"], timed[peer])
    if bm is not None:
        rows["bm25s"]["build_seconds"] = bm.build_seconds
        rows["bm25s"]["added_rss_bytes"] = added_rss
    if lucene is not None:
        rows["lucene"] |= lucene.close()
    return {
        "stage": "search",
        "snapshot": str(snap_path),
        "snapshot_id": snap.snapshot_id,
        "passages": total,
        "queries": len(queries),
        "query_examples": queries[:5],
        "seed": args.seed,
        "interleaved": True,
        "systems": rows,
        "identical_across_layouts": not any(mismatches.values()),
        "layout_mismatches": {k: v[:10] for k, v in mismatches.items() if v},
        "pruner_paths": {name: one.search_paths for name, one in opened.items()},
        "environment": common.environment(),
        "load_average_end": list(os.getloadavg()),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def stage_curve(args: argparse.Namespace) -> dict[str, Any]:
    """wikigym, raw tantivy and Lucene over several snapshots (sizes) in one run, every
    (size, system, query) interleaved in a seeded order: the growth with size measured
    under one load, which a loaded machine does not give across separate runs."""
    from wikigym.corpora import Snapshot

    sizes = []
    for path, lucene_index in zip(args.snapshots, args.lucene_indexes, strict=True):
        snap = Snapshot.open(path, verify="none")

        def text_at(i: int, snap: Any = snap) -> str:
            row = snap.sql("SELECT text FROM passages WHERE passage_id = ?", [i])
            return str(row.column("text")[0].as_py())

        queries = three_word_queries(snap.num_passages, text_at, args.queries, args.seed)
        systems: dict[str, Callable[[str], Any]] = {
            "wikigym": bs.Ours(bs.Corpus(path.name, path, [], [], []), snap).search,
            "tantivy-raw": RawTantivy(
                bs.Corpus(path.name, path, [], [], []), snap.index_config
            ).search,
        }
        lucene = None
        if lucene_index is not None:
            if not any(Path(lucene_index).glob("segments_*")):
                raise SystemExit(f"{lucene_index}: no Lucene index (run the search stage first)")
            peer = argparse.Namespace(**vars(args))
            peer.lucene_index = lucene_index
            lucene = LuceneServer(bs.Corpus(path.name, path, [], [], []), queries, peer)
        sizes.append((snap, queries, systems, lucene))
        print(f"== {path}: {snap.num_passages:,} passages", flush=True)
    for _snap, queries, systems, _lucene in sizes:  # warm-up pass
        for search in systems.values():
            for q in queries:
                search(q)
    cells = [
        (s, name)
        for s, (_snap, _q, systems, lucene) in enumerate(sizes)
        for name in [*systems, *(["lucene"] if lucene is not None else [])]
    ]
    timed = {cell: Timed(args.repeat) for cell in cells}
    order = random.Random(args.seed)
    for rep in range(args.repeat):
        for i in range(args.queries):
            for cell in order.sample(cells, len(cells)):
                s, name = cell
                _snap, queries, systems, lucene = sizes[s]
                if name == "lucene":
                    assert lucene is not None
                    answer = lucene.search(queries[i])
                    timed[cell].wall[rep].append(answer["wall_ms"])
                    timed[cell].cpu[rep].append(answer["cpu_ms"])
                    continue
                cpu, wall = time.thread_time(), time.perf_counter()
                systems[name](queries[i])
                timed[cell].wall[rep].append((time.perf_counter() - wall) * 1000)
                timed[cell].cpu[rep].append((time.thread_time() - cpu) * 1000)
        print(f"  pass {rep + 1}/{args.repeat}, load {os.getloadavg()[0]:.1f}", flush=True)
    rows = []
    for (s, name), t in timed.items():
        snap = sizes[s][0]
        rows.append(
            {
                "passages": snap.num_passages,
                "snapshot": str(snap.path),
                "system": name,
                **t.summary(),
            }
        )
        r = rows[-1]
        print(
            f"  {snap.num_passages:>11,} {name:<12} p50 {r['p50_ms']:.3f} p99 {r['p99_ms']:.3f} cpu p50 {r['cpu_p50_ms']:.3f} p99 {r['cpu_p99_ms']:.3f}",
            flush=True,
        )
    for _snap, _q, _systems, lucene in sizes:
        if lucene is not None:
            lucene.close()
    exponents = {}
    for name in {r["system"] for r in rows}:
        mine = sorted((r for r in rows if r["system"] == name), key=lambda r: r["passages"])
        for key in ("p50_ms", "p99_ms", "cpu_p50_ms", "cpu_p99_ms"):
            _a, b = fit_power([r["passages"] for r in mine], [r[key] for r in mine])
            exponents[f"{name} {key}"] = b
    return {
        "stage": "curve",
        "rows": rows,
        "exponents": exponents,
        "queries": args.queries,
        "seed": args.seed,
        "environment": common.environment(),
        "load_average_end": list(os.getloadavg()),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def fit_power(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least-squares ``y = a * x**b`` in log-log space; returns (a, b)."""
    import math

    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    n = len(lx)
    mx, my = sum(lx) / n, sum(ly) / n
    var = sum((x - mx) ** 2 for x in lx)
    b = sum((x - mx) * (y - my) for x, y in zip(lx, ly, strict=True)) / var if var else 1.0
    return math.exp(my - b * mx), b


def records_from_results(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The build and search records of the rows of earlier ``scale.json`` files (their raw
    record files need not be kept: each row holds its records whole)."""
    records: list[dict[str, Any]] = []
    for path in paths:
        for row in json.loads(path.read_text(encoding="utf-8"))["rows"]:
            records += [row[stage] for stage in ("build", "search") if stage in row]
    return records


def load_records(
    paths: Sequence[Path], earlier: Sequence[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """One row per snapshot: its build record joined with its search record, by snapshot id
    (a search measured on another build of the same id reads the same tables and index), or
    by path for a record that names no id. ``earlier`` records come first, so a record file
    of the same snapshot and stage replaces one of them."""
    records = [*earlier, *(json.loads(path.read_text(encoding="utf-8")) for path in paths)]
    ids = {r["snapshot"]: r["snapshot_id"] for r in records if r.get("snapshot_id")}
    by_snap: dict[str, dict[str, Any]] = {}
    for rec in records:
        key = rec.get("snapshot_id") or ids.get(rec["snapshot"], rec["snapshot"])
        by_snap.setdefault(key, {})[rec["stage"]] = rec
    rows = [r for r in by_snap.values() if "build" in r]
    return sorted(rows, key=lambda r: r["build"]["counts"]["passages"])


def _lat(row: dict[str, Any], system: str, key: str) -> float:
    s = row.get("search", {}).get("systems", {}).get(system)
    if s is None:
        return float("nan")
    if "latency" in s:  # Lucene, measured apart (records before the interleaved search)
        return float(s["latency"]["texts"][key])
    return float(s.get(key, float("nan")))


def _qps(row: dict[str, Any], system: str, threads: int) -> float:
    s = row.get("search", {}).get("systems", {}).get(system)
    if s is None:
        return float("nan")
    if "latency" in s:
        return float(s["qps"][str(threads)])
    return float(s[f"qps_{threads}"])


SYSTEMS = ("wikigym", "tantivy-raw", "bm25s", "lucene")


def extrapolate(
    rows: list[dict[str, Any]], curves: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    """Power-law fits over the measured sizes, evaluated at wiki-18 and English Wikipedia.

    Builds by another code (a "note" says so) stay out of the build fits: a fit across codes
    measures the change of code, not size (no build fit when fewer than two remain). With
    ``curves`` (growth runs), latency is fitted on the last one's sizes, measured in one run
    under one load, instead of on search records of several days."""
    xs = [float(r["build"]["counts"]["passages"]) for r in rows]
    own = [("note" not in r["build"]) for r in rows]
    nan = float("nan")

    def built(key: str, scale: Callable[[float], float]) -> list[float]:
        return [scale(r["build"][key]) if o else nan for r, o in zip(rows, own, strict=True)]

    series: dict[str, list[float]] = {
        "build seconds": built("seconds", float),
        "peak RSS GiB": built("peak_rss_bytes", common.gib),
        "index GiB": built("index_bytes", common.gib),
        "snapshot GiB": built("snapshot_bytes", common.gib),
    }
    if curves:
        curve = curves[-1]
        sizes = sorted({r["passages"] for r in curve["rows"]})
        lat: dict[str, list[float]] = {}
        for system in SYSTEMS:
            for key in ("p50_ms", "p99_ms"):
                by_size = {r["passages"]: r[key] for r in curve["rows"] if r["system"] == system}
                if by_size:
                    lat[f"{system} {key}"] = [by_size.get(n, nan) for n in sizes]
        return _fits(xs, series) | _fits([float(n) for n in sizes], lat)
    # Latency of the current search code only when two sizes have it (interleaved records):
    # a fit across code versions measures the change of code, not of size.
    fresh = [bool(r.get("search", {}).get("interleaved")) for r in rows]
    if sum(fresh) < 2:
        fresh = [True] * len(rows)
    for system in SYSTEMS:
        for key in ("p50_ms", "p99_ms"):
            series[f"{system} {key}"] = [
                _lat(r, system, key) if f else nan for r, f in zip(rows, fresh, strict=True)
            ]
    return _fits(xs, series)


def _fits(xs: Sequence[float], series: dict[str, list[float]]) -> dict[str, Any]:
    """Each series' power-law fit (latency: the two largest sizes), at 21M and 45M."""
    out: dict[str, Any] = {}
    for name, ys in series.items():
        pts = [(x, y) for x, y in zip(xs, ys, strict=True) if y == y and y > 0]
        if len(pts) < 2:
            continue
        # Latency: fit the largest sizes only (the curve bends once the index leaves the
        # CPU cache); memory and sizes: all points.
        use = pts[-2:] if name.endswith("_ms") else pts
        a, b = fit_power([p[0] for p in use], [p[1] for p in use])
        entry: dict[str, Any] = {"fit": f"{a:.4g} * passages^{b:.3f}", "from_points": use}
        if name.endswith("_ms") and b < 0:
            # A latency that falls as the corpus grows is no scaling law: the points differ
            # by load or warm-up, not by size. Shown, not extrapolated.
            entry |= {"wiki18_21M": None, "enwiki_45M": None}
            entry["excluded"] = "latency falls with size, a negative exponent"
        else:
            entry |= {"wiki18_21M": a * WIKI18_PASSAGES**b, "enwiki_45M": a * ENWIKI_PASSAGES**b}
        out[name] = entry
    return out


def render(rows: list[dict[str, Any]], extra: dict[str, Any]) -> str:
    """The Markdown of scale.md."""
    head = ["passages", "build s", "peak RSS GiB (tree)", "peak PSS GiB", "index GiB"]
    head += ["segments / order"]
    table = []
    for r in rows:
        b = r["build"]
        lay = b["index_layout"]
        table.append(
            [
                b["counts"]["passages"],
                b["seconds"],
                common.gib(b["peak_rss_bytes"]),
                common.gib(b["peak_pss_bytes"]),
                common.gib(b["index_bytes"]),
                f"{lay['segments']} / {lay['doc_order']}",
            ]
        )
    parts = ["## Build\n", common.markdown_table(head, table), ""]
    head = ["passages", "system", "p50 ms", "p99 ms", "CPU p50 ms", "CPU p99 ms", "q/s 1t"]
    head += ["q/s 2t", "top-10 agree", "measured"]
    table = []
    for r in rows:
        search = r.get("search", {})
        how = "interleaved" if search.get("interleaved") else "one after another"
        for system in SYSTEMS:
            s = search.get("systems", {}).get(system)
            if s is None:
                continue
            table.append(
                [
                    r["build"]["counts"]["passages"],
                    system,
                    _lat(r, system, "p50_ms"),
                    _lat(r, system, "p99_ms"),
                    _lat(r, system, "cpu_p50_ms"),
                    _lat(r, system, "cpu_p99_ms"),
                    _qps(r, system, 1),
                    _qps(r, system, 2),
                    float(s.get("agreement_with_wikigym", 1.0)),
                    f"{how}, {search.get('measured_at', '?')[:10]}",
                ]
            )
    parts += ["## Search (600 three-word queries, top-10 with hit texts)\n"]
    parts += [common.markdown_table(head, table), ""]
    parts += render_layouts(rows)
    head = ["passages", "wikigym/raw p50", "wikigym/raw p99", "wikigym/bm25s p50"]
    head += ["wikigym/lucene p50", "paired wikigym/raw (median)"]
    table = []
    for r in rows:
        if "search" not in r:
            continue
        n = r["build"]["counts"]["passages"]
        g50, g99 = _lat(r, "wikigym", "p50_ms"), _lat(r, "wikigym", "p99_ms")
        pair = r["search"]["systems"].get("paired wikigym/tantivy-raw", {}).get("p50", float("nan"))
        table.append(
            [
                n,
                g50 / _lat(r, "tantivy-raw", "p50_ms"),
                g99 / _lat(r, "tantivy-raw", "p99_ms"),
                g50 / _lat(r, "bm25s", "p50_ms"),
                g50 / _lat(r, "lucene", "p50_ms"),
                float(pair),
            ]
        )
    parts += ["## Ratios\n", common.markdown_table(head, table), ""]
    head = ["quantity", "fit", "fitted on (passages, value)", "wiki-18 (21.0M)", "enwiki (45M)"]
    nan = float("nan")
    table = [
        [
            name,
            e["fit"],
            "; ".join(f"{x:,.0f}: {y:.3g}" for x, y in e["from_points"]),
            nan if e["wiki18_21M"] is None else e["wiki18_21M"],
            nan if e["enwiki_45M"] is None else e["enwiki_45M"],
        ]
        for name, e in extra.items()
    ]
    parts += ["## Extrapolation\n", common.markdown_table(head, table), ""]
    excluded = [f"`{name}` ({e['excluded']})" for name, e in extra.items() if "excluded" in e]
    if excluded:
        parts += ['Not extrapolated ("-"): ' + "; ".join(excluded) + ".", ""]
    return "\n".join(parts)


def render_layouts(rows: list[dict[str, Any]]) -> list[str]:
    """One table per size whose search measured several index layouts of one snapshot
    (``--layouts``, ``--search-threads``), side by side in the same interleaved run."""
    parts: list[str] = []
    for r in rows:
        systems = r.get("search", {}).get("systems", {})
        layouts = [(n, s) for n, s in systems.items() if "layout" in s]
        if len({s["layout"]["label"] for _, s in layouts}) < 2:
            continue
        head = ["system", "segments / threads", "p50 ms", "p99 ms", "CPU p50 ms", "CPU p99 ms"]
        head += ["q/s 1t", "q/s 2t"]
        table = [
            [
                name.split("@")[0],
                s["layout"]["label"],
                s["p50_ms"],
                s["p99_ms"],
                s["cpu_p50_ms"],
                s["cpu_p99_ms"],
                s["qps_1"],
                s["qps_2"],
            ]
            for name, s in sorted(
                layouts, key=lambda x: (x[0].split("@")[0], x[1]["layout"]["label"])
            )
        ]
        same = r["search"].get("identical_across_layouts")
        parts += [
            f"## Search by index layout, {r['build']['counts']['passages']:,} passages\n",
            common.markdown_table(head, table),
            "",
            f"Hits and scores identical across the wikigym layouts: **{same}**.",
            "",
        ]
    return parts


def render_curves(curves: Sequence[dict[str, Any]]) -> list[str]:
    """The interleaved growth runs (``curve`` stage): each size's latency and the power-law
    exponent between the sizes, measured under one load, then what that exponent gives at
    wiki-18 and English Wikipedia from the largest size measured."""
    parts: list[str] = []
    for curve in curves:
        sizes = sorted({r["passages"] for r in curve["rows"]})
        head = ["passages", "system", "p50 ms", "p99 ms", "CPU p50 ms", "CPU p99 ms"]
        rows = sorted(curve["rows"], key=lambda r: (r["passages"], SYSTEMS.index(r["system"])))
        table = [
            [
                r["passages"],
                r["system"],
                r["p50_ms"],
                r["p99_ms"],
                r["cpu_p50_ms"],
                r["cpu_p99_ms"],
            ]
            for r in rows
        ]
        load = curve["environment"]["machine"]["load_avg_1_5_15"]
        parts += [
            f"## Growth, {' and '.join(f'{n:,}' for n in sizes)} passages in one interleaved "
            f"run ({curve.get('measured_at', curve['environment']['date'])[:16]}, load "
            f"{load[0]:.1f} at start)\n",
            f"`{curve['environment']['command']}`",
            "",
            common.markdown_table(head, table),
            "",
        ]
        head = ["system", "exponent p50", "exponent p99", "exponent CPU p50", "exponent CPU p99"]
        # At wiki-18 and English Wikipedia: the top size's latency grown by the exponent.
        head += ["p50 ms at 21.0M", "p99 ms at 21.0M", "p50 ms at 45M", "p99 ms at 45M"]
        table = []
        top = sizes[-1]
        for system in SYSTEMS:
            at_top = [r for r in curve["rows"] if r["system"] == system and r["passages"] == top]
            if not at_top:
                continue
            row, ex = at_top[0], curve["exponents"]
            table.append(
                [
                    system,
                    *(
                        ex[f"{system} {k}"]
                        for k in ("p50_ms", "p99_ms", "cpu_p50_ms", "cpu_p99_ms")
                    ),
                    *(
                        row[k] * (n / top) ** ex[f"{system} {k}"]
                        for n in (WIKI18_PASSAGES, ENWIKI_PASSAGES)
                        for k in ("p50_ms", "p99_ms")
                    ),
                ]
            )
        parts += [common.markdown_table(head, table), ""]
    return parts


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Latency and build memory against passages (log x)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["build"]["counts"]["passages"] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for system in SYSTEMS:
        for key, style in (("p50_ms", "-o"), ("p99_ms", ":x")):
            ys = [_lat(r, system, key) for r in rows]
            pts = [(x, y) for x, y in zip(xs, ys, strict=True) if y == y]
            if pts:
                ax1.plot(*zip(*pts, strict=True), style, label=f"{system} {key[:3]}")
    ax1.set(xscale="log", yscale="log", xlabel="passages", ylabel="ms / query (top-10, texts)")
    ax1.legend(fontsize=7)
    # Builds whose figures are another code's (a "note" says so) are drawn apart.
    own = [r for r in rows if "note" not in r["build"]]
    other = [r for r in rows if "note" in r["build"]]
    ox = [r["build"]["counts"]["passages"] for r in own]
    ax2.plot(ox, [common.gib(r["build"]["peak_rss_bytes"]) for r in own], "-o", label="RSS")
    ax2.plot(ox, [common.gib(r["build"]["peak_pss_bytes"]) for r in own], "-s", label="PSS")
    if other:
        ax2.plot(
            [r["build"]["counts"]["passages"] for r in other],
            [common.gib(r["build"]["peak_rss_bytes"]) for r in other],
            "x",
            color="grey",
            label="another code's build (see notes)",
        )
    ax2.set(xscale="log", xlabel="passages", ylabel="build peak GiB (process tree)")
    ax2.set_ylim(bottom=0)
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def stage_report(args: argparse.Namespace) -> None:
    """scale.{md,json,png} from the records."""
    if not args.records and not args.records_from:
        raise SystemExit("report: give --records, --records-from or both")
    rows = load_records(args.records, records_from_results(args.records_from))
    curves = [json.loads(p.read_text(encoding="utf-8")) for p in args.curves]
    extra = extrapolate(rows, curves)
    md = render(rows, extra)
    if curves:
        md += "\n" + "\n".join(render_curves(curves))
    if args.notes is not None:
        md += "\n" + args.notes.read_text(encoding="utf-8")
    data = {
        "rows": rows,
        "extrapolation": extra,
        "records": [str(p) for p in args.records],
        "records_from": [str(p) for p in args.records_from],
        "curves": curves,
    }
    path = common.write_results("scale", data, md)
    plot(rows, path.with_suffix(".png"))
    print(path.read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="stage", required=True)
    b = sub.add_parser("build")
    b.add_argument("--world", type=Path, required=True)
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--threads", type=int, default=2)
    b.add_argument("--record", type=Path, default=None)
    b.add_argument("--index-memory-mb", type=int, default=None, help="the build's writer heap")
    q = sub.add_parser("search")
    q.add_argument("--snapshot", type=Path, required=True)
    q.add_argument("--queries", type=int, default=600)
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--repeat", type=int, default=3)
    q.add_argument("--systems", nargs="+", default=["bm25s", "lucene"])
    q.add_argument("--bm25s-max", type=int, default=5_000_000)
    q.add_argument("--lucene-python", type=Path, default=Path("/work/venvs/lucene/bin/python"))
    q.add_argument(
        "--lucene-index",
        type=Path,
        default=None,
        help="keep Lucene's index here and reuse it when it exists (default: a fresh one)",
    )
    q.add_argument(
        "--layouts",
        type=Path,
        nargs="*",
        default=[],
        help="re-indexed copies of --snapshot (scale_reindex.py): measured beside it",
    )
    q.add_argument(
        "--search-threads",
        type=int,
        nargs="+",
        default=[1],
        help="Snapshot search_threads values to measure for each layout",
    )
    q.add_argument("--work", type=Path, default=Path("/tmp"))
    q.add_argument("--record", type=Path, default=None)
    c = sub.add_parser("curve", help="several sizes in one interleaved run (the growth)")
    c.add_argument("--snapshots", type=Path, nargs="+", required=True)
    c.add_argument(
        "--lucene-indexes",
        type=lambda v: None if v == "-" else Path(v),
        nargs="+",
        required=True,
        help="each snapshot's Lucene index from its search stage ('-': no Lucene)",
    )
    c.add_argument("--queries", type=int, default=600)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--repeat", type=int, default=3)
    c.add_argument("--lucene-python", type=Path, default=Path("/work/venvs/lucene/bin/python"))
    c.add_argument("--work", type=Path, default=Path("/tmp"))
    c.add_argument("--record", type=Path, required=True)
    r = sub.add_parser("report")
    r.add_argument("--records", type=Path, nargs="+", default=[])
    r.add_argument(
        "--records-from",
        type=Path,
        nargs="+",
        default=[],
        help="earlier scale.json files: their rows' records, replaced by --records of the "
        "same snapshot and stage",
    )
    r.add_argument(
        "--curves",
        type=Path,
        nargs="*",
        default=[],
        help="records of the curve stage: the growth measured in one interleaved run",
    )
    r.add_argument("--notes", type=Path, default=None, help="Markdown appended to scale.md")
    args = parser.parse_args()
    if args.stage == "report":
        stage_report(args)
        return
    if args.stage == "curve":
        record = stage_curve(args)
        args.record.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        return
    if args.stage == "build":
        record = stage_build(args)
        path = args.record or args.out.with_name(args.out.name + ".build.json")
    else:
        path = args.record or args.snapshot.with_name(args.snapshot.name + ".search.json")
        record = stage_search(args)
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in record.items() if k != "environment"}, indent=2))


if __name__ == "__main__":
    main()
