"""DPR wiki passages: JSONL ``{id, contents}`` (Search-R1 / FlashRAG) and the original TSV.

- ``dpr-jsonl``: ``contents`` is ``"Title"\\ntext`` (the quotes around the title are removed
  when present).
- ``dpr-tsv``: ``psgs_w100.tsv`` with the header ``id<TAB>text<TAB>title``, quoted as the DPR
  code reads it (``csv`` with a tab delimiter).

Consecutive passages with the same title become ONE ParsedPage whose lead section joins the
passages with a blank line (the builder re-splits by words); ``source_id`` is the id of the
first passage. A title that comes back later (non-consecutive passages) gives another page
with the same title: grouping them would need the whole file in memory.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

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


@dataclass
class _Grouper:
    """Merges consecutive passages of one title into a page."""

    title: str | None = None
    first_id: str | None = None
    passages: list[str] = field(default_factory=list)

    def add(self, title: str, passage_id: str, text: str) -> ParsedPage | None:
        """Add a passage; returns the previous page when the title changes."""
        done = self.flush() if title != self.title else None
        if self.title is None:
            self.title, self.first_id = title, passage_id
        if text:
            self.passages.append(text)
        return done

    def flush(self) -> ParsedPage | None:
        """The page being built (if any); resets the grouper."""
        if self.title is None:
            return None
        page = ParsedPage(
            title=self.title,
            sections=(Section(path=(), text="\n\n".join(self.passages)),),
            source_id=self.first_id,
        )
        self.title, self.first_id, self.passages = None, None, []
        return page


class DprJsonlSource(FileSource):
    """DPR passages as JSONL ``{id, contents}``; yields ParsedPage and SkippedPage."""

    format = "dpr-jsonl"

    def records(self, progress: Progress | None = None) -> Iterator[ParsedPage | SkippedPage]:
        """One ParsedPage per run of consecutive passages with the same title."""
        return _iter_jsonl(self.path, progress)


def _iter_jsonl(path: Path, progress: Progress | None) -> Iterator[ParsedPage | SkippedPage]:
    grouper = _Grouper()
    with open_input(path) as inp:
        for number, (where, row) in enumerate(iter_json_lines(inp, progress), 1):
            if isinstance(row, ValueError):
                yield SkippedPage(title=where, reason=f"invalid JSON: {row}", source=str(path))
                continue
            contents = row.get("contents") if isinstance(row, dict) else None
            if not isinstance(contents, str):
                yield SkippedPage(title=where, reason="no 'contents' string", source=str(path))
                continue
            title, text = split_contents(contents)
            if not title:
                yield SkippedPage(title=where, reason="passage has no title", source=str(path))
                continue
            page = grouper.add(title, str(row.get("id", number)), text)
            if page is not None:
                yield page
    last = grouper.flush()
    if last is not None:
        yield last


class DprTsvSource(FileSource):
    """The original DPR ``psgs_w100.tsv`` (optionally gzip'd); yields ParsedPage."""

    format = "dpr-tsv"

    def records(self, progress: Progress | None = None) -> Iterator[ParsedPage | SkippedPage]:
        """One ParsedPage per run of consecutive passages with the same title."""
        return _iter_tsv(self.path, progress)


def _iter_tsv(path: Path, progress: Progress | None) -> Iterator[ParsedPage | SkippedPage]:
    grouper = _Grouper()
    with open_input(path) as inp:
        text = io.TextIOWrapper(inp.stream, encoding="utf-8-sig", newline="")  # type: ignore[arg-type]
        rows = csv.reader(text, delimiter="\t")
        number = 0
        while True:
            try:
                row = next(rows)
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
            page = grouper.add(row[2].strip(), row[0].strip(), row[1].strip())
            if page is not None:
                yield page
        inp.finish(progress)
    last = grouper.flush()
    if last is not None:
        yield last
