"""Hugging Face ``wikimedia/wikipedia`` Parquet files (columns ``id, url, title, text``).

Read in record batches so memory stays bounded. The text is plain, with section headings
as their own short lines; it is kept simple: paragraphs are split on blank lines and all go
to the lead section.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from wikigym.corpora.readers.base import FileSource, Progress
from wikigym.corpora.records import ParsedPage, Section, SkippedPage
from wikigym.errors import SourceError

REQUIRED_COLUMNS: tuple[str, ...] = ("title", "text")
OPTIONAL_COLUMNS: tuple[str, ...] = ("id", "url")
_BATCH_ROWS = 512
_BLANK_LINES_RE = re.compile(r"\n[ \t]*\n")


def plain_paragraphs(text: str) -> str:
    """Paragraphs split on blank lines, stripped, joined by one blank line."""
    return "\n\n".join(p.strip() for p in _BLANK_LINES_RE.split(text) if p.strip())


def open_parquet(path: Path) -> pq.ParquetFile:
    """Open a Parquet file with ``title`` and ``text`` columns, or raise SourceError."""
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise SourceError(f"{path}: not a readable Parquet file ({exc})") from exc
    names = parquet.schema_arrow.names
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise SourceError(
            f"{path}: a Parquet file without the column(s) {', '.join(missing)} "
            f"(has {', '.join(names)}); hf-parquet expects id, url, title, text"
        )
    return parquet


class HfParquetSource(FileSource):
    """A ``wikimedia/wikipedia`` Parquet file; yields ParsedPage and SkippedPage."""

    format = "hf-parquet"

    def records(self, progress: Progress | None = None) -> Iterator[ParsedPage | SkippedPage]:
        """One ParsedPage per row, in file order."""
        return _iter_parquet(self.path, progress)


def _iter_parquet(path: Path, progress: Progress | None) -> Iterator[ParsedPage | SkippedPage]:
    parquet = open_parquet(path)
    names = parquet.schema_arrow.names
    columns = [c for c in (*OPTIONAL_COLUMNS, *REQUIRED_COLUMNS) if c in names]
    total_rows = max(parquet.metadata.num_rows, 1)
    size = path.stat().st_size
    reported = 0
    row_number = 0
    try:
        for batch in parquet.iter_batches(batch_size=_BATCH_ROWS, columns=columns):
            for row in batch.to_pylist():
                row_number += 1
                yield _page(row, row_number, path)
            if progress is not None:
                # Parquet has no byte offset per row: report the share of rows read.
                done = size * row_number // total_rows
                if done > reported:
                    progress(done - reported)
                    reported = done
    except (pa.ArrowException, OSError) as exc:
        raise SourceError(f"{path}: the Parquet file is truncated or corrupt ({exc})") from exc
    finally:
        parquet.close()
    if progress is not None and size > reported:
        progress(size - reported)


def _page(row: dict[str, object], number: int, path: Path) -> ParsedPage | SkippedPage:
    title, text = row.get("title"), row.get("text")
    if not isinstance(title, str) or not title.strip():
        return SkippedPage(
            title=f"<row {number} in {path.name}>", reason="no title", source=str(path)
        )
    if not isinstance(text, str):
        return SkippedPage(title=title, reason="no text", source=str(path))
    source_id, url = row.get("id"), row.get("url")
    return ParsedPage(
        title=title.strip(),
        sections=(Section(path=(), text=plain_paragraphs(text)),),
        source_id=str(source_id) if source_id is not None else None,
        url=url if isinstance(url, str) and url else None,
    )
