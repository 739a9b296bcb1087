"""DPR wiki passages: JSONL ``{id, contents}`` (Search-R1 / FlashRAG) and the original TSV.

- ``dpr-jsonl``: ``contents`` is ``"Title"\\ntext`` (the quotes around the title are removed
  when present).
- ``dpr-tsv``: ``psgs_w100.tsv`` with the header ``id<TAB>text<TAB>title``, quoted as the DPR
  code reads it (``csv`` with a tab delimiter).

Every passage is kept as exactly one passage of the snapshot, with its original id
(``Section.origin_ids``, ``whole=True``), so runs compare with e5/BM25 baselines on the same
passages. Passages are grouped into one ParsedPage per title; ``source_id`` is the id of the
first passage. The full ``psgs_w100`` file lists each article's passages together, but
samples of it (e.g. FlashRAG's) are shuffled: a first pass over the file finds the titles
whose passages are scattered (by an 8-byte digest per title, so memory is bounded by the
number of titles, not of passages); their passages are held and yielded, one page per title,
after the grouped ones, in order of first appearance. Grouping never drops a passage.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterator
from dataclasses import dataclass

from wikigym.corpora.readers.base import (
    DECOMPRESS_ERRORS,
    FileSource,
    Progress,
    broken_stream,
    iter_json_lines,
    open_input,
)
from wikigym.corpora.records import ParsedPage, Section, SkippedPage
from wikigym.errors import SourceError

TSV_HEADER: tuple[str, ...] = ("id", "text", "title")


def split_contents(contents: str) -> tuple[str, str]:
    """``'"Title"\\ntext'`` -> ``("Title", "text")``."""
    head, _, text = contents.partition("\n")
    head = head.strip()
    if len(head) >= 2 and head.startswith('"') and head.endswith('"'):
        head = head[1:-1].strip()
    return head, text.strip()


@dataclass(frozen=True, slots=True)
class DprRow:
    """One passage of a DPR file."""

    title: str
    passage_id: str
    text: str


def _digest(title: str) -> bytes:
    return hashlib.blake2b(title.encode("utf-8"), digest_size=8).digest()


def page_of(title: str, rows: list[DprRow]) -> ParsedPage:
    """One page whose sections are the passages of ``rows``, each whole, with its id."""
    return ParsedPage(
        title=title,
        sections=tuple(
            Section(path=(), text=r.text, origin_ids=((0, r.passage_id),), whole=True) for r in rows
        ),
        source_id=rows[0].passage_id,
    )


def scattered_titles(rows: Iterator[DprRow | SkippedPage]) -> set[bytes]:
    """Digests of the titles whose passages are not all consecutive."""
    closed: set[bytes] = set()
    scattered: set[bytes] = set()
    current: bytes | None = None
    for row in rows:
        if isinstance(row, SkippedPage):
            continue
        digest = _digest(row.title)
        if digest != current:
            if current is not None:
                closed.add(current)
            if digest in closed:
                scattered.add(digest)
            current = digest
    return scattered


def group_rows(
    rows: Iterator[DprRow | SkippedPage], scattered: set[bytes]
) -> Iterator[ParsedPage | SkippedPage]:
    """Pages of consecutive passages; the scattered titles' pages at the end."""
    held: dict[str, list[DprRow]] = {}
    title: str | None = None
    run: list[DprRow] = []
    for row in rows:
        if isinstance(row, SkippedPage):
            yield row
            continue
        if scattered and _digest(row.title) in scattered:
            held.setdefault(row.title, []).append(row)
            continue
        if row.title != title and run:
            yield page_of(run[0].title, run)
            run = []
        title = row.title
        run.append(row)
    if run:
        yield page_of(run[0].title, run)
    for held_title, held_rows in held.items():
        yield page_of(held_title, held_rows)


class _DprSource(FileSource):
    """Two passes over the file: scattered titles, then the pages."""

    def rows(self, progress: Progress | None) -> Iterator[DprRow | SkippedPage]:
        """The passages in file order; a bad row is a SkippedPage."""
        raise NotImplementedError

    def records(self, progress: Progress | None = None) -> Iterator[ParsedPage | SkippedPage]:
        """One ParsedPage per title, every passage kept whole with its original id."""
        scattered = scattered_titles(self.rows(None))
        return group_rows(self.rows(progress), scattered)


class DprJsonlSource(_DprSource):
    """DPR passages as JSONL ``{id, contents}``; yields ParsedPage and SkippedPage."""

    format = "dpr-jsonl"

    def rows(self, progress: Progress | None) -> Iterator[DprRow | SkippedPage]:
        """The passages of the JSONL file (``id`` defaults to the line number)."""
        path = self.path
        with open_input(path) as inp:
            for number, (where, row) in enumerate(iter_json_lines(inp, progress), 1):
                if isinstance(row, ValueError):
                    yield SkippedPage(title=where, reason=f"invalid JSON: {row}", source=str(path))
                    continue
                contents = row.get("contents") if isinstance(row, dict) else None
                if not isinstance(row, dict) or not isinstance(contents, str):
                    yield SkippedPage(title=where, reason="no 'contents' string", source=str(path))
                    continue
                title, text = split_contents(contents)
                if not title:
                    yield SkippedPage(title=where, reason="passage has no title", source=str(path))
                    continue
                yield DprRow(title, str(row.get("id", number)), text)


class DprTsvSource(_DprSource):
    """The original DPR ``psgs_w100.tsv`` (optionally gzip'd); yields ParsedPage."""

    format = "dpr-tsv"

    def rows(self, progress: Progress | None) -> Iterator[DprRow | SkippedPage]:
        """The passages of the TSV file, after its header."""
        path = self.path
        with open_input(path) as inp:
            text = io.TextIOWrapper(inp.stream, encoding="utf-8-sig", newline="")
            reader = csv.reader(text, delimiter="\t")
            number = 0
            while True:
                try:
                    row = next(reader)
                except StopIteration:
                    break
                except DECOMPRESS_ERRORS as exc:
                    raise broken_stream(path, inp.compression, exc) from exc
                except (csv.Error, UnicodeDecodeError) as exc:
                    raise SourceError(f"{path}: unreadable TSV after row {number} ({exc})") from exc
                number += 1
                if number == 1:
                    if tuple(c.strip() for c in row) != TSV_HEADER:
                        raise SourceError(
                            f"{path}: expected the DPR header 'id<TAB>text<TAB>title', found "
                            f"{'<TAB>'.join(row)[:80]!r}"
                        )
                    continue
                inp.report(progress)
                if not row:
                    continue
                if len(row) != 3 or not row[2].strip():
                    reason = (
                        f"expected 3 fields id, text, title; found {len(row)}"
                        if len(row) != 3
                        else "passage has no title"
                    )
                    yield SkippedPage(
                        title=f"<row {number} in {path.name}>", reason=reason, source=str(path)
                    )
                    continue
                yield DprRow(row[2].strip(), row[0].strip(), row[1].strip())
            inp.finish(progress)
