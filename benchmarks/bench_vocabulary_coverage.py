"""Typed facts of real dumps per source (infobox, lead, category) and language, against the
infobox-only typing of a baseline tree, and the share of infobox fields the vocabulary types.

Each page is parsed and typed in this process (:func:`wikigym.corpora.factsources.page_facts`:
the facts a build writes); ``--baseline`` runs the baseline tree's ``type_infobox`` over the
same pages in a subprocess (the same run, the same pages). "distinct" leaves out the facts
that restate another fact of their page (a category's year beside the infobox's date).

    PYTHONPATH=$PWD python3 benchmarks/bench_vocabulary_coverage.py \\
        [--data ../shared/data] [--baseline /path/to/baseline/tree]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from common import command_line, environment, markdown_table, shared_data, write_results

from wikigym.corpora.factsources import page_facts
from wikigym.corpora.readers import iter_mediawiki
from wikigym.corpora.records import RawPage
from wikigym.corpora.vocabulary import coverage
from wikigym.corpora.wikitext import parse_wikitext

DUMPS = (
    ("wiki/enwiki-excerpt-206pages.xml.bz2", "en"),
    ("wiki/enwiki-2014-excerpt-215articles.xml.bz2", "en"),
    ("wiki/jawiki-excerpt-204articles.xml.bz2", "ja"),
)
FOLDERS = (  # real pages of other languages, as files (the language is not in the file)
    ("wiki/wikitext", "de", ("Sara-C.-Bisel", "Wendy-Mogel", "BBDO", "Bazooka", "Keilwelle",
                             "Maurische-Netzwuhle", "Mozilla-Firefox", "HMS-Irresistible")),
    ("wiki/infobox-fixtures/infobox-parser-fixtures/data", "fr", ("ligne", "french")),
)  # fmt: skip
SOURCES = ("infobox", "lead", "category")
_BASELINE = """
import json, sys
from pathlib import Path
from wikigym.corpora.records import RawPage
from wikigym.corpora.vocabulary import type_infobox
from wikigym.corpora.wikitext import parse_wikitext
total = 0
for line in sys.stdin:
    r = json.loads(line)
    p = parse_wikitext(RawPage(title=r["title"], wikitext=r["text"], language=r["language"]))
    if p.redirect is None:
        total += sum(f.typed for f in type_infobox(p.infobox, p.infobox_type, p.language))
print(total)
"""


def _pages(data: Path) -> list[tuple[str, str, list[RawPage]]]:
    out = []
    for rel, lang in DUMPS:
        pages = [r for r in iter_mediawiki(data / rel) if isinstance(r, RawPage)]
        out.append((Path(rel).name, lang, pages))
    for rel, lang, names in FOLDERS:
        pages = [
            RawPage(title=n, wikitext=(data / rel / f"{n}.txt").read_text("utf-8"), language=lang)
            for n in names
        ]
        out.append((f"{Path(rel).name} ({lang})", lang, pages))
    return out


def _count(pages: list[RawPage]) -> dict[str, Any]:
    typed: Counter[str] = Counter()
    distinct: Counter[str] = Counter()
    with_facts = 0
    infoboxes = []
    for record in pages:
        page = parse_wikitext(record)
        if page.redirect is not None:
            continue
        if page.infobox:
            infoboxes.append((page.infobox, page.infobox_type, page.language))
        text = "\n\n".join(s.text for s in page.sections)
        facts = [f for f in page_facts(page, text, 0) if f.typed]
        with_facts += bool(facts)
        for f in facts:
            typed[f.source] += 1
            distinct[f.source] += f.restates is None
    return {
        "typed": {s: typed[s] for s in SOURCES},
        "distinct": {s: distinct[s] for s in SOURCES},
        "typed_total": sum(typed.values()),
        "distinct_total": sum(distinct.values()),
        "pages_with_typed_facts": with_facts,
        "infobox_coverage": coverage(infoboxes),
    }


def _baseline(tree: Path, pages: list[RawPage]) -> int:
    lines = "".join(
        json.dumps({"title": p.title, "text": p.wikitext, "language": p.language}) + "\n"
        for p in pages
    )
    env = {**os.environ, "PYTHONPATH": str(tree)}
    got = subprocess.run(
        [sys.executable, "-c", _BASELINE], input=lines, capture_output=True, text=True,
        env=env, check=True, cwd=tree,  # not this checkout: "-c" puts the cwd on sys.path
    )  # fmt: skip
    return int(got.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=shared_data())
    parser.add_argument("--baseline", type=Path, help="a baseline tree (infobox typing only)")
    parser.add_argument("--name", default="vocabulary_coverage")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    rows = []
    for name, lang, pages in _pages(args.data):
        got = _count(pages)
        if args.baseline is not None:
            base = _baseline(args.baseline, pages)
            got["baseline_typed"] = base
            got["ratio_typed"] = round(got["typed_total"] / base, 3) if base else None
            got["ratio_distinct"] = round(got["distinct_total"] / base, 3) if base else None
        results[name] = {"language": lang, **got}
        rows.append(
            [name, lang, got.get("baseline_typed", "-"),
             *(f"{got['typed'][s]} ({got['distinct'][s]})" for s in SOURCES),
             f"{got['typed_total']} ({got['distinct_total']})",
             got.get("ratio_typed", "-"), got.get("ratio_distinct", "-"),
             got["infobox_coverage"]["content_coverage"]]
        )  # fmt: skip
    md = [
        "- typed facts per source (distinct: not restating another fact of the page); "
        "baseline: the baseline tree's infobox typing of the same pages",
        "",
        markdown_table(
            [
                "dump",
                "lang",
                "baseline typed",
                *SOURCES,
                "total",
                "x typed",
                "x distinct",
                "infobox content coverage",
            ],
            rows,
        ),
    ]
    data = {"command": command_line(), "environment": environment(), "results": results}
    path = write_results(args.name, data, "\n".join(md) + "\n")
    print("\n".join(md))
    print(f"-> {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
