"""Coverage of the relation vocabulary on real dumps: the share of infobox fields it types.

"content" leaves out the fields the vocabulary lists as presentation (names, images,
coordinates, codes).

    PYTHONPATH=$PWD python3 benchmarks/bench_vocabulary_coverage.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from wikigym.corpora.readers import iter_mediawiki
from wikigym.corpora.records import RawPage
from wikigym.corpora.vocabulary import coverage
from wikigym.corpora.wikitext import parse_wikitext

DUMPS = (
    "wiki/enwiki-excerpt-206pages.xml.bz2",
    "wiki/enwiki-2014-excerpt-215articles.xml.bz2",
    "wiki/jawiki-excerpt-204articles.xml.bz2",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    args = parser.parse_args()
    results = {}
    for dump in DUMPS:
        pages = []
        for record in iter_mediawiki(Path(args.data) / dump):
            if isinstance(record, RawPage):
                page = parse_wikitext(record)
                if page.infobox:
                    pages.append((page.infobox, page.infobox_type, page.language))
        results[Path(dump).name] = {"pages_with_infobox": len(pages), **coverage(pages)}
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
