"""Recall of CJK search on the real Japanese dump: is each article found by a word of its
own first sentence?

For every article, the "words" are the runs of kanji or of katakana (2 to 6 characters) in
the first sentence of its lead that are not part of its title; each is searched with k=10
and counts as found when a passage of that article is among the hits. The same dump is
built twice: with the Japanese analyzer (CJK bigrams) and with the English one (what every
wiki got before: one token per run of kana/kanji).

    PYTHONPATH=$PWD python3 benchmarks/bench_cjk_recall.py [--data ../shared/data] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
from wikigym.corpora.index import IndexConfig

DUMP = "wiki/jawiki-excerpt-204articles.xml.bz2"
_WORDS = re.compile(r"[\u4e00-\u9fff\u3005]{2,6}|[\u30a0-\u30ff]{2,6}")
_FIRST_SENTENCE = re.compile(r"^.*?。", re.DOTALL)


def probe_words(snap: Snapshot) -> list[tuple[int, str]]:
    """``(doc_id, word)`` pairs: CJK words of each article's first sentence, not in its title."""
    rows = snap.sql(
        "SELECT doc_id, a.title, p.text FROM passages p JOIN articles a USING (doc_id) "
        "WHERE ordinal = 0 ORDER BY doc_id"
    ).to_pylist()
    pairs = []
    for r in rows:
        match = _FIRST_SENTENCE.match(r["text"])
        sentence = match.group(0) if match else r["text"][:200]
        for word in dict.fromkeys(_WORDS.findall(sentence)):
            if word not in r["title"]:
                pairs.append((r["doc_id"], word))
    return pairs


def recall(snap: Snapshot, pairs: list[tuple[int, str]], k: int = 10) -> dict[str, float]:
    found = [doc in {h.doc_id for h in snap.search(word, k)} for doc, word in pairs]
    docs: dict[int, bool] = {}
    for (doc, _), ok in zip(pairs, found, strict=True):
        docs[doc] = docs.get(doc, False) or ok
    return {
        "words": len(pairs),
        "word_recall_at_10": round(sum(found) / len(found), 4) if found else 0.0,
        "articles": len(docs),
        "article_recall_at_10": round(sum(docs.values()) / len(docs), 4) if docs else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default=None, help="folder for the two snapshots (default: tmp)")
    args = parser.parse_args()
    root = Path(args.out or tempfile.mkdtemp(prefix="cjk-recall-"))
    dump = Path(args.data) / DUMP
    results = {}
    pairs: list[tuple[int, str]] = []
    for name, config in (
        ("ja (cjk bigrams)", BuildConfig()),
        ("en analyzer (before)", BuildConfig(language="en", index=IndexConfig(stopwords=()))),
    ):
        out = root / name.split()[0]
        build_snapshot([open_build_source(dump)], out, config, overwrite=True, progress=False)
        snap = Snapshot.open(out)
        pairs = pairs or probe_words(snap)  # the same probes for both (doc ids are equal)
        results[name] = recall(snap, pairs)
    print(json.dumps(results, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
