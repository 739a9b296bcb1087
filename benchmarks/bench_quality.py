"""Retrieval quality on HotpotQA: recall@k of the supporting paragraphs, wikigym vs bm25s.

Builds one snapshot from the HotpotQA distractor file (every distinct context paragraph is
an article; ~100-word passages, so most paragraphs are one passage). For every question it
retrieves the top-k passages over the whole pool (all questions' paragraphs together) and
counts a supporting title as found when any hit's title equals it.

- ``wikigym``: ``Snapshot.search(question, k)`` (the title indexed inside the body field).
- ``bm25s``: the same passages with the title prepended to the text (ours indexes the title
  too), numba backend, ``\\w+`` tokens, PyStemmer English stemmer (like tantivy's
  ``en_stem``). Variants: bm25s defaults (k1=1.5, b=0.75), tantivy's parameters (k1=1.2),
  and English stop words.

recall@k = mean over questions of (supporting titles found) / (supporting titles);
all@k = share of questions with every supporting title found.

Usage:
    python benchmarks/bench_quality.py [--data ../shared/data] [--k 2 5 10]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: wikigym
sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks: common

import common

from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
from wikigym.corpora.index import IndexConfig
from wikigym.corpora.titles import normalize_title

HOTPOT = Path("qa") / "hotpotqa-distractor-300.jsonl"
Searcher = Callable[[str, int], list[str]]  # (question, k) -> titles of the top-k passages
_WORD = re.compile(r"\w+")


def load_questions(path: Path) -> list[dict[str, Any]]:
    """Question, type, level and the distinct supporting titles (normalised) of each row."""
    rows = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            support = sorted({normalize_title(t) for t in row["supporting_facts"]["title"]})
            rows.append(
                {
                    "id": row["id"],
                    "question": row["question"],
                    "type": row["type"],
                    "level": row["level"],
                    "support": support,
                }
            )
    return rows


def ours(snapshot: Path) -> Searcher:
    snap = Snapshot.open(snapshot, verify="none")
    return lambda q, k: [normalize_title(h.title) for h in snap.search(q, k)]


def bm25s_searcher(
    snapshot: Path, k1: float, b: float, stopwords: str | None
) -> tuple[Searcher, float]:
    """A bm25s retriever over the snapshot's passages, "title text" each; and its build s."""
    import bm25s
    import Stemmer

    snap = Snapshot.open(snapshot, verify="none")
    table = snap.sql(
        "SELECT a.title, p.text FROM passages p JOIN articles a USING (doc_id) "
        "ORDER BY p.passage_id"
    )
    titles = table.column("title").to_pylist()
    docs = [f"{t} {x}" for t, x in zip(titles, table.column("text").to_pylist(), strict=True)]
    stemmer = Stemmer.Stemmer("english")

    def tokenize(texts: Sequence[str], ids: bool) -> Any:
        return bm25s.tokenize(
            list(texts),
            token_pattern=r"(?u)\b\w+\b",
            stopwords=stopwords,
            stemmer=stemmer,
            return_ids=ids,
            show_progress=False,
        )

    start = time.perf_counter()
    retriever = bm25s.BM25(k1=k1, b=b, backend="numba")
    retriever.index(tokenize(docs, ids=True), show_progress=False)
    seconds = time.perf_counter() - start

    def search(q: str, k: int) -> list[str]:
        found, scores = retriever.retrieve(
            tokenize([q], ids=False), k=min(k, len(docs)), show_progress=False, n_threads=1
        )
        return [
            normalize_title(titles[i])
            for i, s in zip(found[0].tolist(), scores[0].tolist(), strict=True)
            if s > 0
        ]

    return search, seconds


def evaluate(
    search: Searcher, questions: Sequence[dict[str, Any]], ks: Sequence[int]
) -> dict[str, Any]:
    """recall@k and all@k overall and per question type; mean query ms."""
    kmax = max(ks)
    per_k: dict[int, list[float]] = {k: [] for k in ks}
    all_k: dict[int, list[float]] = {k: [] for k in ks}
    by_type: dict[str, dict[int, list[float]]] = {}
    start = time.perf_counter()
    for q in questions:
        titles = search(q["question"], kmax)
        for k in ks:
            top = set(titles[:k])
            found = sum(1 for t in q["support"] if t in top)
            per_k[k].append(found / len(q["support"]))
            all_k[k].append(float(found == len(q["support"])))
            by_type.setdefault(q["type"], {kk: [] for kk in ks})[k].append(
                found / len(q["support"])
            )
    ms = (time.perf_counter() - start) * 1000 / len(questions)
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    return {
        "recall": {k: mean(v) for k, v in per_k.items()},
        "all": {k: mean(v) for k, v in all_k.items()},
        "recall_by_type": {
            t: {k: mean(v) for k, v in d.items()} for t, d in sorted(by_type.items())
        },
        "mean_query_ms": ms,
    }


def plot(results: dict[str, dict[str, Any]], ks: Sequence[int], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for name, res in results.items():
        ax.plot(list(ks), [res["recall"][k] for k in ks], marker="o", label=name)
    ax.set_xlabel("k (passages retrieved)")
    ax.set_ylabel("recall of supporting paragraphs")
    ax.set_title("HotpotQA distractor (300 q), whole pool")
    ax.set_xticks(list(ks))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(
        description="HotpotQA recall@k of supporting paragraphs: wikigym vs bm25s."
    )
    parser.add_argument("--data", type=Path, default=common.shared_data(), help="shared data")
    parser.add_argument("--k", type=int, nargs="+", default=[2, 5, 10])
    parser.add_argument("--threads", type=int, default=2, help="build threads")
    parser.add_argument(
        "--boosts",
        type=float,
        nargs="*",
        default=[0.5, 2.0],
        help="also build the older layout (title as its own field with this boost) and "
        "compare (diagnostic rows)",
    )
    parser.add_argument("--name", default="bench_quality", help="result file name")
    args = parser.parse_args()
    ks = sorted(set(args.k))

    source_path = args.data / HOTPOT
    questions = load_questions(source_path)
    snap = common.WORK / "snap-hotpotqa"
    report = build_snapshot(
        [open_build_source(source_path, "hotpotqa")],
        snap,
        BuildConfig(threads=args.threads, passage_words=100),
        progress=False,
        overwrite=True,
    )
    print(
        f"{len(questions)} questions; pool: {report.articles:,} paragraphs, "
        f"{report.passages:,} passages ({report.seconds:.1f} s build)",
        flush=True,
    )
    systems: dict[str, tuple[Searcher, float]] = {
        "wikigym": (ours(snap), report.seconds),
        "bm25s (k1=1.5 b=0.75, no stop words)": bm25s_searcher(snap, 1.5, 0.75, None),
        "bm25s (k1=1.2 b=0.75 like tantivy, no stop words)": bm25s_searcher(snap, 1.2, 0.75, None),
        "bm25s (k1=1.5 b=0.75, english stop words)": bm25s_searcher(snap, 1.5, 0.75, "en"),
    }
    variants = {
        "wikigym without stop words (diagnostic)": ("no-stop", IndexConfig(stopwords=())),
        **{
            f"wikigym, title as its own field, boost {boost:g} (diagnostic)": (
                f"title-field-{boost:g}",
                IndexConfig(title_in_body=False, title_boost=boost),
            )
            for boost in args.boosts
        },
    }
    for label, (tag, index_config) in variants.items():
        alt = common.WORK / f"snap-hotpotqa-{tag}"
        alt_report = build_snapshot(
            [open_build_source(source_path, "hotpotqa")],
            alt,
            BuildConfig(
                threads=args.threads,
                passage_words=100,
                index=index_config,
            ),
            progress=False,
            overwrite=True,
        )
        systems[label] = (
            ours(alt),
            alt_report.seconds,
        )
    results: dict[str, dict[str, Any]] = {}
    for name, (search, build_s) in systems.items():
        search("warm up", 1)  # numba compiles on first use
        results[name] = {**evaluate(search, questions, ks), "build_seconds": build_s}
        print(f"  {name}: " + "  ".join(f"R@{k} {results[name]['recall'][k]:.3f}" for k in ks))

    baseline = "bm25s (k1=1.5 b=0.75, no stop words)"
    same_analysis = "bm25s (k1=1.5 b=0.75, english stop words)"  # the same 33 words as ours
    diff = {k: results["wikigym"]["recall"][k] - results[baseline]["recall"][k] for k in ks}
    diff_same = {
        k: results["wikigym"]["recall"][k] - results[same_analysis]["recall"][k] for k in ks
    }
    target_k = 5 if 5 in ks else ks[len(ks) // 2]
    met = diff[target_k] >= -0.01
    headers = ["system", *[f"recall@{k}" for k in ks], *[f"all@{k}" for k in ks], "ms/query"]
    rows = [
        [name, *[r["recall"][k] for k in ks], *[r["all"][k] for k in ks], r["mean_query_ms"]]
        for name, r in results.items()
    ]
    rows.append(["wikigym - bm25s (defaults)", *[diff[k] for k in ks], *["" for _ in ks], ""])
    rows.append(
        ["wikigym - bm25s (same stop words)", *[diff_same[k] for k in ks], *["" for _ in ks], ""]
    )
    type_rows = [
        [name, t, *[v[k] for k in ks]]
        for name, r in results.items()
        for t, v in r["recall_by_type"].items()
    ]
    png = common.RESULTS / f"{args.name}.png"
    common.RESULTS.mkdir(parents=True, exist_ok=True)
    plot(results, ks, png)
    body = (
        f"HotpotQA distractor, {len(questions)} questions; pool = every distinct context "
        f"paragraph of all questions: {report.articles:,} paragraphs, {report.passages:,} "
        f"passages (100 words). A supporting title counts as found when any of the top-k "
        f"passages belongs to it.\n\n"
        + common.markdown_table(headers, rows)
        + f"\n\nTarget: wikigym recall@{target_k} not below bm25s (defaults) by more than 0.01: "
        + f"difference {diff[target_k]:+.3f} -> {'MET' if met else 'MISSED'} "
        + f"(vs bm25s with the same 33 stop words: {diff_same[target_k]:+.3f}).\n\n"
        + "Recall by question type:\n\n"
        + common.markdown_table(["system", "type", *[f"recall@{k}" for k in ks]], type_rows)
        + f"\n\nPlot: `{png.name}`."
    )
    md = common.write_results(
        args.name,
        {
            "args": {**vars(args), "data": str(args.data)},
            "pool": {"paragraphs": report.articles, "passages": report.passages},
            "results": results,
            "difference_vs_bm25s_defaults": diff,
            "difference_vs_bm25s_same_stop_words": diff_same,
            "target_met": met,
        },
        body,
    )
    print("\n" + body)
    print(f"\nwrote {md}, {md.with_suffix('.json')}, {png}")


if __name__ == "__main__":
    main()
