"""Dump a snapshot's search results with the code on PYTHONPATH, or compare two dumps.

For "results identical to today's" across code versions and index layouts: run ``dump``
once with today's code (``git archive`` of main on PYTHONPATH) and once with this one,
over the same snapshot or re-indexed copies of it (``scale_reindex.py``), then
``compare``. The queries: ``bench_scale``'s 600 three-word queries (seed 0) and 400 of
4-8 words drawn from passages (seed 1), top 10 and top 50, hits as (passage_id, score)
with the score's exact float. ``--checked`` opens the index as unordered (``doc_order:
none``): the search that fetches past the cut and orders ties itself, exact in any code.

Usage:
    python benchmarks/scale_same_results.py dump SNAP OUT.json [--checked]
    python benchmarks/scale_same_results.py compare A.json B.json
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks: bench_scale

_WORD = re.compile(r"\w+", re.UNICODE)


def queries(snap: Any) -> list[str]:
    """The three-word queries of bench_scale, then longer ones of random passage words."""
    from bench_scale import three_word_queries

    def text_at(i: int) -> str:
        row = snap.sql("SELECT text FROM passages WHERE passage_id = ?", [i])
        return str(row.column("text")[0].as_py())

    out = three_word_queries(snap.num_passages, text_at, 600, 0)
    rng = random.Random(1)
    while len(out) < 1000:
        words = _WORD.findall(text_at(rng.randrange(snap.num_passages)).lower())
        n = rng.randint(4, 8)
        if len(words) >= n:
            out.append(" ".join(rng.sample(words, n)))
    return out


def dump(path: Path, out: Path, checked: bool) -> None:
    from wikigym.corpora import Snapshot
    from wikigym.corpora.index import PassageSearcher

    snap = Snapshot.open(path, verify="none")
    search = snap.search
    if checked:
        searcher = PassageSearcher(path / "index", snap.index_config, doc_order=None)
        search = searcher.search
    results = {
        q: {str(k): [[h.passage_id, h.score] for h in search(q, k)] for k in (10, 50)}
        for q in queries(snap)
    }
    out.write_text(
        json.dumps({"snapshot_id": snap.snapshot_id, "checked": checked, "results": results}),
        encoding="utf-8",
    )
    print(f"{len(results)} queries -> {out}")


def compare(a: Path, b: Path) -> int:
    left = json.loads(a.read_text(encoding="utf-8"))
    right = json.loads(b.read_text(encoding="utf-8"))
    if left["snapshot_id"] != right["snapshot_id"]:
        print(f"different snapshots: {left['snapshot_id']} vs {right['snapshot_id']}")
        return 1
    differ = [q for q in left["results"] if left["results"][q] != right["results"].get(q)]
    same_ids = [
        q
        for q in differ
        if all(
            [h[0] for h in left["results"][q][k]] == [h[0] for h in right["results"][q][k]]
            for k in ("10", "50")
        )
    ]
    print(
        json.dumps(
            {
                "queries": len(left["results"]),
                "differ": len(differ),
                "differ_in_scores_only": len(same_ids),
                "examples": differ[:5],
            }
        )
    )
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("snapshot", type=Path)
    d.add_argument("out", type=Path)
    d.add_argument("--checked", action="store_true")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.cmd == "dump":
        dump(args.snapshot, args.out, args.checked)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
