"""Source readers: stream records from dumps and corpus files.

Usage::

    source = open_source("enwiki-latest-pages-articles.xml.bz2")  # format="auto"
    for record in source.records(progress=bar.update):
        ...

Readers of wikitext sources (``mediawiki``, ``wikitext-dir``) yield
:class:`~wikigym.corpora.records.RawPage`; readers of plain-text sources (``kilt``,
``dpr-jsonl``, ``dpr-tsv``, ``hf-parquet``, ``hotpotqa``) yield
:class:`~wikigym.corpora.records.ParsedPage`; all may yield
:class:`~wikigym.corpora.records.SkippedPage` for a single bad record and go on. A source
that is truncated or not of its format raises :class:`~wikigym.errors.SourceError`.
Records always come in the same order for the same files.
"""

from __future__ import annotations

from pathlib import Path

from wikigym.corpora.readers.base import FORMATS, FileSource, Progress, Source, SourceFile
from wikigym.corpora.readers.detect import detect_format
from wikigym.corpora.readers.dpr import DprJsonlSource, DprTsvSource
from wikigym.corpora.readers.hf_parquet import HfParquetSource
from wikigym.corpora.readers.hotpotqa import HotpotQaSource
from wikigym.corpora.readers.kilt import KiltSource
from wikigym.corpora.readers.mediawiki import MediaWikiSource, iter_mediawiki
from wikigym.corpora.readers.wikitext_dir import WikitextDirSource
from wikigym.errors import SourceError

__all__ = [
    "FORMATS",
    "Progress",
    "Source",
    "SourceFile",
    "detect_format",
    "iter_mediawiki",
    "open_source",
]

_READERS: dict[str, type[FileSource]] = {
    "mediawiki": MediaWikiSource,
    "wikitext-dir": WikitextDirSource,
    "kilt": KiltSource,
    "dpr-jsonl": DprJsonlSource,
    "dpr-tsv": DprTsvSource,
    "hf-parquet": HfParquetSource,
    "hotpotqa": HotpotQaSource,
}


def open_source(path: str | Path, format: str = "auto") -> Source:
    """Open a build source.

    Args:
        path: A file (``.bz2``/``.gz``/``.xz`` compressed or not) or a folder.
        format: One of :data:`FORMATS`, or ``"auto"`` to detect it from the content.

    Returns:
        A :class:`Source`; nothing is read until ``records()`` or ``files()`` is called.

    Raises:
        SourceError: The path is missing, the format name is unknown, or (with ``auto``)
            the content matches no format.
    """
    source_path = Path(path).expanduser().resolve()
    if format != "auto" and format not in _READERS:
        raise SourceError(
            f"unknown source format {format!r}: expected 'auto' or one of {', '.join(FORMATS)}"
        )
    if not source_path.exists():
        raise SourceError(f"source not found: {source_path}")
    chosen = detect_format(source_path) if format == "auto" else format
    return _READERS[chosen](source_path)
