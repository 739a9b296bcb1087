"""Format auto-detection: folders by their files, files by their first bytes.

Compressed files (bz2, gzip, xz) are sniffed after decompression. Rules, in order:

- a folder holding ``*.txt``/``*.wiki``/``*.wikitext`` files -> ``wikitext-dir``;
- Parquet magic ``PAR1`` with ``title`` and ``text`` columns -> ``hf-parquet``;
- ``<mediawiki`` (or ``<?xml`` followed by ``<mediawiki``), UTF-8 or UTF-16 -> ``mediawiki``;
- TSV header ``id<TAB>text<TAB>title`` -> ``dpr-tsv``;
- a JSON array whose first item has ``context`` -> ``hotpotqa``;
- JSON lines: keys ``wikipedia_title`` + ``text`` -> ``kilt``, ``id`` + ``contents`` ->
  ``dpr-jsonl``, ``context`` + ``question`` -> ``hotpotqa``.
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path

from wikigym.corpora.readers.base import FORMATS, Input, iter_json_array, open_input
from wikigym.corpora.readers.hf_parquet import open_parquet
from wikigym.corpora.readers.wikitext_dir import WIKITEXT_SUFFIXES, wikitext_files
from wikigym.errors import SourceError

_SNIFF_BYTES = 1 << 16
_MAX_FIRST_LINE = 64 << 20
_MEDIAWIKI_ROOT_RE = re.compile(r"<(?:[\w.-]+:)?mediawiki[\s>/]")


def _unknown(path: Path, what: str) -> SourceError:
    return SourceError(
        f"cannot tell the format of {path}: {what}; expected one of {', '.join(FORMATS)}; "
        "pass --format"
    )


def _decode_head(head: bytes) -> str:
    """Decode the sniffed bytes as UTF-16 (BOM or NUL pattern) or UTF-8, leniently."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return head.decode("utf-16", errors="replace")
    if head[:2] == b"<\x00":
        return head.decode("utf-16-le", errors="replace")
    if head[:2] == b"\x00<":
        return head.decode("utf-16-be", errors="replace")
    return head.decode("utf-8-sig", errors="replace")


def _sniff_json_line(inp: Input) -> str | None:
    try:
        line = inp.stream.readline(_MAX_FIRST_LINE)
        while line and not line.strip():
            line = inp.stream.readline(_MAX_FIRST_LINE)
    except (OSError, EOFError, ValueError):
        return None
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return None
    if not isinstance(row, dict):
        return None
    if "wikipedia_title" in row and "text" in row:
        return "kilt"
    if "id" in row and "contents" in row:
        return "dpr-jsonl"
    if "context" in row and "question" in row:
        return "hotpotqa"
    return None


def _sniff_file(path: Path) -> str:
    with open_input(path) as inp:
        try:
            head = inp.peek(_SNIFF_BYTES)
        except SourceError as exc:
            raise _unknown(path, f"its {inp.compression} stream cannot be read") from exc
        if not head:
            raise _unknown(path, "the file is empty")
        text = _decode_head(head).lstrip("\ufeff \t\r\n")
        if text.startswith("<mediawiki") or (
            text.startswith("<?xml") and _MEDIAWIKI_ROOT_RE.search(text)
        ):
            return "mediawiki"
        if text.startswith("<?xml"):
            raise _unknown(path, "an XML file without a <mediawiki> root element")
        if text.startswith("<"):
            raise _unknown(path, "it looks like HTML or XML, not a MediaWiki export")
        first_line = text.split("\n", 1)[0].rstrip("\r")
        if tuple(c.strip() for c in first_line.split("\t")) == ("id", "text", "title"):
            return "dpr-tsv"
        if text.startswith("["):
            try:
                first = next(iter(iter_json_array(inp, None)), None)
            except SourceError as exc:
                raise _unknown(path, "it starts with '[' but is not a JSON array") from exc
            if isinstance(first, dict) and "context" in first:
                return "hotpotqa"
            raise _unknown(path, "a JSON array whose first item has no 'context'")
        if text.startswith("{"):
            found = _sniff_json_line(inp)
            if found is not None:
                return found
            raise _unknown(path, "its first line is not a JSON object with known keys")
    raise _unknown(path, "unrecognised content")


def detect_format(path: Path) -> str:
    """Tell the format of a source from its content.

    Args:
        path: A file (possibly compressed) or a folder.

    Returns:
        One of :data:`FORMATS`.

    Raises:
        SourceError: The path does not exist, or its format is not recognised; the message
            names the path and the formats known.
    """
    path = Path(path)
    if not path.exists():
        raise SourceError(f"source not found: {path}")
    if path.is_dir():
        if wikitext_files(path):
            return "wikitext-dir"
        raise _unknown(path, f"a folder without {'/'.join(WIKITEXT_SUFFIXES)} files")
    with path.open("rb") as handle:
        magic = handle.read(4)
    if magic == b"PAR1":
        open_parquet(path)  # raises SourceError naming the missing columns
        return "hf-parquet"
    return _sniff_file(path)
