"""Throughput of ``parse_wikitext`` against ``mwparserfromhell.parse(text).strip_code()``.

Parses every page of the shared enwiki excerpt (export-0.10 XML, bz2) and every file of the
shared wikitext folder with both, single-threaded, and prints MB/s (UTF-8 bytes of wikitext
per second) for each and the ratio.

Usage:
    python benchmarks/bench_wikitext.py [--data ../shared/data] [--repeat 3]
"""

from __future__ import annotations

import argparse
import bz2
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from wikigym.corpora.records import RawPage
from wikigym.corpora.wikitext import parse_wikitext

_NS = "{http://www.mediawiki.org/xml/export-0.10/}"


def load_texts(data: Path) -> list[tuple[str, str]]:
    """(title, wikitext) of every excerpt page and every wikitext file."""
    texts: list[tuple[str, str]] = []
    with bz2.open(data / "wiki" / "enwiki-excerpt-206pages.xml.bz2") as fh:
        for _, elem in ET.iterparse(fh):
            if elem.tag == f"{_NS}page":
                title = elem.findtext(f"{_NS}title") or ""
                text = elem.findtext(f"{_NS}revision/{_NS}text") or ""
                texts.append((title, text))
                elem.clear()
    for path in sorted((data / "wiki" / "wikitext").glob("*.txt")):
        texts.append((path.stem, path.read_text(encoding="utf-8")))
    return texts


def best_time(func: Callable[[], object], repeat: int) -> float:
    """Fastest of ``repeat`` runs, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    """Run the benchmark and print the numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
    parser.add_argument("--data", type=Path, default=default, help="shared data folder")
    parser.add_argument("--repeat", type=int, default=3, help="runs per parser (best counts)")
    args = parser.parse_args()

    texts = load_texts(args.data)
    pages = [RawPage(title=title, wikitext=text) for title, text in texts]
    megabytes = sum(len(text.encode("utf-8")) for _, text in texts) / 1e6

    ours = best_time(lambda: [parse_wikitext(page) for page in pages], args.repeat)
    print(f"pages: {len(pages)}, wikitext: {megabytes:.2f} MB")
    print(f"wikigym parse_wikitext:       {megabytes / ours:7.2f} MB/s ({ours:.3f} s)")
    try:
        import mwparserfromhell
    except ImportError:
        print("mwparserfromhell not installed: no comparison")
        return
    theirs = best_time(
        lambda: [mwparserfromhell.parse(text).strip_code() for _, text in texts], args.repeat
    )
    print(f"mwparserfromhell strip_code: {megabytes / theirs:7.2f} MB/s ({theirs:.3f} s)")
    print(f"ratio (ours / mwparserfromhell): {theirs / ours:.2f}x")


if __name__ == "__main__":
    main()
