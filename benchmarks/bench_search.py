"""Search latency and throughput: wikigym vs raw tantivy vs bm25s (numba) vs DuckDB FTS.

Runs the same deterministic queries (top-10, hit texts included) against four systems
over the same passages, in one process, on two corpora:

- ``world``: a generated world big enough for >= 1M passages (cached under benchmarks/work);
- ``real``: one snapshot of every real-text source in the shared data folder (enwiki excerpt,
  KILT 99 articles, wikitext folder, HotpotQA contexts, DPR 1000 passages).

Systems:

- ``wikigym``: ``Snapshot.search(q, 10)`` (query cleaning, query parsing over the body
  field that holds title + text, tie handling by passage_id, stored text fetch).
- ``tantivy-raw``: the ceiling on the SAME index: ``searcher.search(index.parse_query(q,
  ["body"]), 10, count=False)`` + ``searcher.doc`` x10 (no tie handling, no query cleaning).
- ``bm25s``: ``bm25s.BM25(backend="numba")`` over "title text" per passage, tokenized with
  ``\\w+``, bm25s's English stop words (Lucene's 33, the same list as wikigym's) and the
  PyStemmer English (Snowball) stemmer, i.e. the same analysis as wikigym's index; hit texts
  come from an in-memory Python list.
- ``duckdb-fts``: ``PRAGMA create_fts_index`` (english stemmer, the same 33 stop words from a
  table) over title and body, ``fts_main_passages.match_bm25``; slow, so only
  ``--duckdb-queries`` queries.

Latency is measured one query at a time on one thread (p50/p99; the median over
``--repeat`` passes). Throughput runs all queries through a thread pool of 1 and 2 threads
that share one searcher / retriever / connection (DuckDB: one cursor per thread).

Usage:
    python benchmarks/bench_search.py                 # full: world >= 1M passages + real
    python benchmarks/bench_search.py --quick         # small world, fewer queries
    python benchmarks/bench_search.py --corpus real --no-duckdb
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: wikigym
sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks: common

import common

Result = list[tuple[int, str, str]]  # (passage_id, title, text) of each hit
K = 10
_WORD = re.compile(r"\w+", re.UNICODE)
QUESTION_TEMPLATES = (
    "who is {t}",
    "what is {t}",
    "when was {t} founded",
    "where is {t} located",
    "what is {t} known for",
)


@dataclass
class Corpus:
    """Passages of a snapshot, in passage_id order."""

    name: str
    snapshot: Path
    pids: list[int]
    titles: list[str]
    texts: list[str]
    build_info: dict[str, Any] = field(default_factory=dict)


def load_corpus(name: str, snapshot: Path) -> Corpus:
    """Every passage with its article title, read through the snapshot's SQL views."""
    from wikigym.corpora import Snapshot

    snap = Snapshot.open(snapshot, verify="none")
    table = snap.sql(
        "SELECT p.passage_id, a.title, p.text FROM passages p JOIN articles a USING (doc_id) "
        "ORDER BY p.passage_id"
    )
    return Corpus(
        name,
        snapshot,
        table.column("passage_id").to_pylist(),
        table.column("title").to_pylist(),
        table.column("text").to_pylist(),
    )


def make_queries(corpus: Corpus, n: int, seed: int = 0) -> list[str]:
    """Deterministic realistic queries: title + passage words, passage phrases, questions.

    Lower-case words only, so the raw tantivy query parser sees no operators.
    """
    rng = random.Random(seed)
    queries: list[str] = []
    while len(queries) < n:
        i = rng.randrange(len(corpus.pids))
        title = " ".join(_WORD.findall(corpus.titles[i].lower()))
        words = _WORD.findall(corpus.texts[i].lower())
        kind = len(queries) % 3
        if kind == 0 and len(words) >= 3:
            start = rng.randrange(len(words) - 2)
            q = f"{title} {' '.join(words[start : start + 3])}"
        elif kind == 1 and len(words) >= 5:
            start = rng.randrange(len(words) - 4)
            q = " ".join(words[start : start + 5])
        elif kind == 2 and title:
            q = rng.choice(QUESTION_TEMPLATES).format(t=title)
        else:
            continue
        queries.append(q)
    return queries


# ---- systems -------------------------------------------------------------------------


class System:
    """A retriever under test: ``search(query) -> [(passage_id, title, text)] * <=10``."""

    name = ""
    build_seconds = float("nan")
    build_note = ""

    def search(self, query: str) -> Result:
        raise NotImplementedError

    def close(self) -> None:
        """Release resources."""


class Ours(System):
    name = "wikigym"

    def __init__(self, corpus: Corpus, snap: Any = None) -> None:
        from wikigym.corpora import Snapshot

        self.snap = snap if snap is not None else Snapshot.open(corpus.snapshot, verify="none")
        self.build_seconds = float(corpus.build_info.get("seconds", float("nan")))
        self.build_note = "full snapshot build (parse, tables, index), threads as recorded"

    def search(self, query: str) -> Result:
        return [(h.passage_id, h.title, h.text) for h in self.snap.search(query, K)]


class RawTantivy(System):
    """The ceiling: the same index queried directly, as its layout asks (no wikigym layer)."""

    name = "tantivy-raw"

    def __init__(self, corpus: Corpus, config: Any) -> None:
        import tantivy

        self.index = tantivy.Index.open(str(corpus.snapshot / "index"))
        config.register(self.index)  # the snapshot's analyzer (stop words), as any reader must
        self.searcher = self.index.searcher()
        self.config = config
        self.build_note = "same index as wikigym"

    def search(self, query: str) -> Result:
        if self.config.title_in_body:
            q = self.index.parse_query(query, ["body"])
        else:
            boosts = {"title": self.config.title_boost}
            q = self.index.parse_query(query, ["title", "body"], field_boosts=boosts)
        out = []
        for _score, address in self.searcher.search(q, K, count=False).hits:
            doc = self.searcher.doc(address)
            text = doc["text"][0].decode() if self.config.title_in_body else doc["body"][0]
            out.append((doc["passage_id"][0], doc["title"][0], text))
        return out


class TantivyIndexOnly:
    """Times writing a tantivy index of the same passages (no parsing, no tables)."""

    @staticmethod
    def build_seconds(corpus: Corpus, threads: int) -> float:
        from wikigym.corpora.index import IndexConfig, PassageIndexWriter

        tmp = Path(tempfile.mkdtemp(prefix="bench-tantivy-", dir=common.WORK))
        try:
            start = time.perf_counter()
            writer = PassageIndexWriter(tmp / "index", IndexConfig(), threads=threads)
            for pid, title, text in zip(corpus.pids, corpus.titles, corpus.texts, strict=True):
                writer.add(pid, 0, title, text)
            writer.close()
            return time.perf_counter() - start
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class Bm25s(System):
    name = "bm25s"

    def __init__(self, corpus: Corpus, stopwords: str | None) -> None:
        import bm25s
        import Stemmer

        self.bm25s = bm25s
        self.stemmer = Stemmer.Stemmer("english")
        self.stopwords = stopwords
        self.corpus = corpus
        start = time.perf_counter()
        docs = [f"{t} {x}" for t, x in zip(corpus.titles, corpus.texts, strict=True)]
        tokens = self._tokenize(docs, ids=True)
        del docs
        self.retriever = bm25s.BM25(backend="numba")
        self.retriever.index(tokens, show_progress=False)
        self.build_seconds = time.perf_counter() - start
        self.build_note = "tokenize + stem + index (1 thread)"
        # numba compiles on first use (tens of seconds): keep it out of the timings
        self.search("warm up numba")

    def _tokenize(self, texts: Sequence[str] | str, ids: bool) -> Any:
        return self.bm25s.tokenize(
            texts,
            token_pattern=r"(?u)\b\w+\b",
            stopwords=self.stopwords,
            stemmer=self.stemmer,
            return_ids=ids,
            show_progress=False,
        )

    def search(self, query: str) -> Result:
        tokens = self._tokenize([query], ids=False)
        docs, scores = self.retriever.retrieve(
            tokens, k=min(K, len(self.corpus.pids)), show_progress=False, n_threads=1
        )
        c = self.corpus
        return [
            (c.pids[i], c.titles[i], c.texts[i])
            for i, s in zip(docs[0].tolist(), scores[0].tolist(), strict=True)
            if s > 0
        ]

    def batch_qps(self, queries: Sequence[str], threads: int) -> float:
        """bm25s's own batched mode: all queries in one ``retrieve`` with n_threads."""
        start = time.perf_counter()
        tokens = self._tokenize(list(queries), ids=False)
        docs, _scores = self.retriever.retrieve(tokens, k=K, show_progress=False, n_threads=threads)
        c = self.corpus
        for row in docs.tolist():
            _ = [(c.pids[i], c.titles[i], c.texts[i]) for i in row]
        return len(queries) / (time.perf_counter() - start)


class DuckFts(System):
    name = "duckdb-fts"

    def __init__(self, corpus: Corpus) -> None:
        import duckdb
        import duckdb_extension_fts
        import pyarrow as pa

        ext = next(
            Path(duckdb_extension_fts.__file__).parent.glob("extensions/*/fts.duckdb_extension")
        )
        self.con = duckdb.connect(config={"threads": 1})
        self.con.execute(f"LOAD '{ext}'")
        start = time.perf_counter()
        table = pa.table({"passage_id": corpus.pids, "title": corpus.titles, "body": corpus.texts})
        self.con.register("src", table)
        self.con.execute("CREATE TABLE passages AS SELECT * FROM src")
        self.con.unregister("src")
        from wikigym.corpora.index import ENGLISH_STOPWORDS

        self.con.execute("CREATE TABLE stop33 (sw VARCHAR)")
        self.con.executemany("INSERT INTO stop33 VALUES (?)", [[w] for w in ENGLISH_STOPWORDS])
        self.con.execute(
            "PRAGMA create_fts_index('passages', 'passage_id', 'title', 'body', "
            "stemmer='english', stopwords='stop33', overwrite=1)"
        )
        self.build_seconds = time.perf_counter() - start
        self.build_note = "load table + create_fts_index (1 thread)"
        self._local = threading.local()
        self._lock = threading.Lock()

    def _cursor(self) -> Any:
        cur = getattr(self._local, "cur", None)
        if cur is None:
            with self._lock:
                cur = self.con.cursor()
            self._local.cur = cur
        return cur

    def search(self, query: str) -> Result:
        rows = (
            self._cursor()
            .execute(
                "SELECT passage_id, title, body FROM (SELECT *, "
                "fts_main_passages.match_bm25(passage_id, ?) AS score FROM passages) "
                "WHERE score IS NOT NULL ORDER BY score DESC, passage_id LIMIT 10",
                [query],
            )
            .fetchall()
        )
        return [(int(p), t, b) for p, t, b in rows]

    def close(self) -> None:
        self.con.close()


# ---- measurement ---------------------------------------------------------------------


def latency(system: System, queries: Sequence[str], repeat: int) -> dict[str, float]:
    """p50/p99 (ms) of single queries on one thread: median over ``repeat`` passes."""
    p50s, p99s, means = [], [], []
    for _ in range(repeat):
        times = []
        for q in queries:
            start = time.perf_counter()
            system.search(q)
            times.append((time.perf_counter() - start) * 1000)
        p50s.append(common.percentile(times, 50))
        p99s.append(common.percentile(times, 99))
        means.append(sum(times) / len(times))
    return {
        "p50_ms": common.median(p50s),
        "p99_ms": common.median(p99s),
        "mean_ms": common.median(means),
        "p50_ms_passes": p50s,
    }


def throughput(
    search: Callable[[str], Result], queries: Sequence[str], threads: int, repeat: int
) -> dict[str, Any]:
    """Queries/s through a pool of ``threads`` sharing one system: median over passes."""
    rates = []
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(search, queries[: threads * 4]))  # start the workers
        for _ in range(repeat):
            start = time.perf_counter()
            for _res in pool.map(search, queries):
                pass
            rates.append(len(queries) / (time.perf_counter() - start))
    return {"qps": common.median(rates), "qps_passes": rates}


def paired_ratio(a: System, b: System, queries: Sequence[str], repeat: int) -> dict[str, float]:
    """a/b time per query, the two run back to back on each query (robust to load drift)."""
    ratios = []
    for _ in range(repeat):
        for q in queries:
            start = time.perf_counter()
            a.search(q)
            mid = time.perf_counter()
            b.search(q)
            ratios.append((mid - start) / (time.perf_counter() - mid))
    return {"p50": common.percentile(ratios, 50), "mean": sum(ratios) / len(ratios)}


def overlap(a: Sequence[Result], b: Sequence[Result]) -> float:
    """Mean share of top-10 passage ids that two systems agree on."""
    shares = []
    for x, y in zip(a, b, strict=False):
        ids_x, ids_y = {h[0] for h in x}, {h[0] for h in y}
        if ids_x or ids_y:
            shares.append(len(ids_x & ids_y) / max(len(ids_x), len(ids_y)))
    return sum(shares) / len(shares) if shares else float("nan")


def bench_corpus(corpus: Corpus, args: argparse.Namespace) -> dict[str, Any]:
    """All systems over one corpus; returns rows per system and the ratios."""
    queries = make_queries(corpus, args.queries, args.seed)
    print(
        f"\n== {corpus.name}: {len(corpus.pids):,} passages, {len(queries)} queries "
        f"(e.g. {queries[:3]})",
        flush=True,
    )
    from wikigym.corpora.snapshot import Snapshot

    config = Snapshot.open(corpus.snapshot, verify="none").index_config
    systems: list[System] = [Ours(corpus), RawTantivy(corpus, config)]
    if not args.no_bm25s:
        print("  indexing bm25s ...", flush=True)
        stop = None if args.bm25s_stopwords == "none" else args.bm25s_stopwords
        systems.append(Bm25s(corpus, stop))
    if not args.no_duckdb:
        print("  indexing duckdb fts ...", flush=True)
        systems.append(DuckFts(corpus))
    paired = paired_ratio(systems[0], systems[1], queries, args.repeat)
    rows: dict[str, dict[str, Any]] = {}
    hits: dict[str, list[Result]] = {}
    for system in systems:
        qs = queries[: args.duckdb_queries] if isinstance(system, DuckFts) else queries
        hits[system.name] = [system.search(q) for q in qs]  # warm-up pass; kept for agreement
        passes = args.duckdb_repeat if isinstance(system, DuckFts) else args.repeat
        lat = latency(system, qs, passes)
        row: dict[str, Any] = {"queries": len(qs), "passes": passes, **lat}
        for threads in args.threads:
            row[f"threads_{threads}"] = throughput(system.search, qs, threads, passes)
        if isinstance(system, Bm25s):
            for t in args.threads:  # numba compiles the parallel path on first use
                system.batch_qps(queries[:20], t)
            row["batch_qps"] = {
                t: common.median([system.batch_qps(queries, t) for _ in range(args.repeat)])
                for t in args.threads
            }
        row["build_seconds"] = system.build_seconds
        row["build_note"] = system.build_note
        rows[system.name] = row
        print(
            f"  {system.name:<12} p50 {lat['p50_ms']:.3f} ms  p99 {lat['p99_ms']:.3f} ms  "
            + "  ".join(f"{t}t {row[f'threads_{t}']['qps']:.0f} q/s" for t in args.threads),
            flush=True,
        )
        system.close()
    if not args.no_build_times:
        print("  timing a tantivy index build of the same passages ...", flush=True)
        rows["tantivy-raw"]["build_seconds"] = TantivyIndexOnly.build_seconds(corpus, 2)
        rows["tantivy-raw"]["build_note"] = "PassageIndexWriter only, 2 writer threads"
    agreement = {
        f"wikigym~{name}": overlap(hits["wikigym"], hits[name])
        for name in hits
        if name != "wikigym"
    }
    ours, raw = rows["wikigym"], rows["tantivy-raw"]
    t_lo, t_hi = min(args.threads), max(args.threads)
    ratios: dict[str, float] = {
        "wikigym/tantivy-raw p50": ours["p50_ms"] / raw["p50_ms"],
        "wikigym/tantivy-raw p99": ours["p99_ms"] / raw["p99_ms"],
        "wikigym/tantivy-raw per query, paired (median)": paired["p50"],
    }
    if "bm25s" in rows:
        ratios["wikigym/bm25s p50"] = ours["p50_ms"] / rows["bm25s"]["p50_ms"]
    if "duckdb-fts" in rows:
        ratios["wikigym/duckdb-fts p50"] = ours["p50_ms"] / rows["duckdb-fts"]["p50_ms"]
    if t_hi != t_lo:
        for name, row in rows.items():
            ratios[f"{name} qps {t_hi}t/{t_lo}t"] = (
                row[f"threads_{t_hi}"]["qps"] / row[f"threads_{t_lo}"]["qps"]
            )
    return {
        "corpus": corpus.name,
        "snapshot": str(corpus.snapshot.relative_to(common.ROOT)),
        "passages": len(corpus.pids),
        "queries": queries,
        "systems": rows,
        "top10_agreement": agreement,
        "ratios": ratios,
        "corpus_build": corpus.build_info,
    }


def render(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    """Markdown tables of one run."""
    parts = []
    for res in results:
        headers = ["system", "queries", "p50 ms", "p99 ms"]
        headers += [f"q/s {t} thr" for t in args.threads]
        headers += ["build s", "build is"]
        table = []
        for name, row in res["systems"].items():
            line = [name, row["queries"], row["p50_ms"], row["p99_ms"]]
            line += [row[f"threads_{t}"]["qps"] for t in args.threads]
            line += [row["build_seconds"], row["build_note"]]
            table.append(line)
            if "batch_qps" in row:
                batch = ["bm25s (own batch API)", len(res["queries"]), float("nan"), float("nan")]
                batch += [row["batch_qps"][t] for t in args.threads]
                batch += [float("nan"), "one retrieve(n_threads) call for all queries"]
                table.append(batch)
        parts.append(
            f"## {res['corpus']}: {res['passages']:,} passages (`{res['snapshot']}`)\n\n"
            + common.markdown_table(headers, table)
            + "\n\nRatios:\n\n"
            + common.markdown_table(["ratio", "value"], [[k, v] for k, v in res["ratios"].items()])
            + "\n\nTop-10 agreement with wikigym (share of the same passage ids): "
            + ", ".join(f"{k} {v:.3f}" for k, v in res["top10_agreement"].items())
        )
    return "\n\n".join(parts)


def plot(results: list[dict[str, Any]], args: argparse.Namespace, path: Path) -> None:
    """p50 latency and throughput per system and corpus (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(results), 2, figsize=(11, 3.6 * len(results)), squeeze=False)
    for row_axes, res in zip(axes, results, strict=True):
        names = list(res["systems"])
        p50 = [res["systems"][n]["p50_ms"] for n in names]
        row_axes[0].barh(names, p50, color="tab:blue")
        row_axes[0].set_xscale("log")
        row_axes[0].set_xlabel("p50 latency, ms (log)")
        row_axes[0].set_title(f"{res['corpus']} ({res['passages']:,} passages)")
        width = 0.8 / len(args.threads)
        for j, t in enumerate(args.threads):
            qps = [res["systems"][n][f"threads_{t}"]["qps"] for n in names]
            pos = [i + j * width for i in range(len(names))]
            row_axes[1].barh(pos, qps, height=width, label=f"{t} thread(s)")
        row_axes[1].set_yticks([i + width * (len(args.threads) - 1) / 2 for i in range(len(names))])
        row_axes[1].set_yticklabels(names)
        row_axes[1].set_xscale("log")
        row_axes[1].set_xlabel("queries/s (log)")
        row_axes[1].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Search latency/throughput: wikigym vs raw tantivy vs bm25s vs DuckDB FTS."
    )
    parser.add_argument("--corpus", choices=["world", "real", "both"], default="both")
    parser.add_argument(
        "--world-articles",
        type=int,
        default=230_000,
        help="articles of the generated world (230k gives ~1.03M passages)",
    )
    parser.add_argument("--seed", type=int, default=0, help="world and query seed")
    parser.add_argument("--build-threads", type=int, default=2, help="threads of the world build")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--duckdb-queries", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3, help="timed passes (median reported)")
    parser.add_argument("--duckdb-repeat", type=int, default=1, help="timed passes of DuckDB")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--bm25s-stopwords",
        default="en",
        help="bm25s stop words: 'en' (default; Lucene's 33, the same as wikigym's) or 'none'",
    )
    parser.add_argument("--no-bm25s", action="store_true")
    parser.add_argument("--no-duckdb", action="store_true")
    parser.add_argument("--no-build-times", action="store_true", help="skip the tantivy-only build")
    parser.add_argument(
        "--quick", action="store_true", help="5k-article world, 100 queries, 20 DuckDB, 1 pass"
    )
    parser.add_argument("--name", default=None, help="result file name (default bench_search)")
    args = parser.parse_args()
    if args.quick:
        args.world_articles = min(args.world_articles, 5000)
        args.queries = min(args.queries, 100)
        args.duckdb_queries = min(args.duckdb_queries, 20)
        args.repeat = 1
    name = args.name or ("bench_search_quick" if args.quick else "bench_search")

    results = []
    if args.corpus in ("world", "both"):
        snap, stats = common.ensure_world_snapshot(
            args.world_articles, args.seed, args.build_threads
        )
        corpus = load_corpus(f"world-n{args.world_articles}", snap)
        corpus.build_info = {k: v for k, v in stats.items() if k != "stdout"}
        results.append(bench_corpus(corpus, args))
        del corpus
    if args.corpus in ("real", "both"):
        snap, stats = common.ensure_real_snapshot()
        corpus = load_corpus("real-text (all shared sources)", snap)
        corpus.build_info = stats
        results.append(bench_corpus(corpus, args))

    body = render(results, args)
    png = common.RESULTS / f"{name}.png"
    common.RESULTS.mkdir(parents=True, exist_ok=True)
    plot(results, args, png)
    notes = (
        "\n\nNotes: latency = one query at a time on one thread (median of the per-pass "
        "percentiles); q/s = a thread pool sharing one searcher/retriever (DuckDB: one cursor "
        "per thread, DuckDB threads=1). DuckDB FTS runs only the first "
        f"{args.duckdb_queries} queries. bm25s: numba backend, PyStemmer english stemmer, "
        f"token pattern \\w+, stop words {args.bm25s_stopwords} ('en' = Lucene's 33, the same "
        "list as wikigym's index and the DuckDB FTS stop table), title prepended to "
        "the text; its hit texts come from an in-memory list. Plot: "
        f"`{png.name}`."
    )
    md = common.write_results(name, {"args": vars(args), "results": results}, body + notes)
    print("\n" + body)
    print(f"\nwrote {md} and {md.with_suffix('.json')}, {png}")


if __name__ == "__main__":
    main()
