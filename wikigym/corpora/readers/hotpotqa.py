"""HotpotQA context paragraphs as a corpus (distractor or fullwiki question files).

Two layouts of a question row are read:

- Hugging Face: ``context: {title: [...], sentences: [[...], ...]}``;
- original: ``context: [[title, [sentences]], ...]``;

from a JSONL file (one question per line) or a JSON array file (the original
``hotpot_dev_distractor_v1.json``, streamed item by item). Each distinct paragraph title
becomes one ParsedPage (first occurrence wins, in file order) whose lead text is the
sentences joined as they are (they carry their own leading spaces).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from wikigym.corpora.readers.base import (
    FileSource,
    Input,
    Progress,
    iter_json_array,
    iter_json_lines,
    open_input,
)
from wikigym.corpora.records import ParsedPage, Section, SkippedPage

Paragraph = tuple[str, list[str]]


def context_paragraphs(row: object) -> list[Paragraph] | None:
    """The ``(title, sentences)`` pairs of a question row in either layout; None if malformed."""
    context = row.get("context") if isinstance(row, dict) else None
    pairs: list[tuple[object, object]]
    if isinstance(context, dict):
        titles, sentences = context.get("title"), context.get("sentences")
        if not isinstance(titles, list) or not isinstance(sentences, list):
            return None
        if len(titles) != len(sentences):
            return None
        pairs = list(zip(titles, sentences, strict=True))
    elif isinstance(context, list):
        if not all(isinstance(item, list) and len(item) == 2 for item in context):
            return None
        pairs = [(item[0], item[1]) for item in context]
    else:
        return None
    result: list[Paragraph] = []
    for title, sentences in pairs:
        if not isinstance(title, str) or not isinstance(sentences, list):
            return None
        if not all(isinstance(s, str) for s in sentences):
            return None
        result.append((title, sentences))
    return result


def _first_char(inp: Input) -> bytes:
    """The first non-blank byte of the decompressed stream (peeked, not consumed)."""
    return inp.peek(4096).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]


class HotpotQaSource(FileSource):
    """HotpotQA question file (JSONL or JSON array); yields one ParsedPage per title."""

    format = "hotpotqa"

    def records(self, progress: Progress | None = None) -> Iterator[ParsedPage | SkippedPage]:
        """Distinct context paragraphs as pages, in file order."""
        return _iter_hotpotqa(self.path, progress)


def _iter_rows(inp: Input, progress: Progress | None) -> Iterator[tuple[str, object]]:
    """``(where, row)`` per question; a row that is not JSON comes as ``(where, exception)``."""
    name = inp.path.name
    if _first_char(inp) == b"[":
        for number, item in enumerate(iter_json_array(inp, progress), 1):
            yield f"<item {number} in {name}>", item
        return
    yield from iter_json_lines(inp, progress)


def _iter_hotpotqa(path: Path, progress: Progress | None) -> Iterator[ParsedPage | SkippedPage]:
    seen: set[str] = set()
    with open_input(path) as inp:
        for where, row in _iter_rows(inp, progress):
            if isinstance(row, ValueError):
                yield SkippedPage(title=where, reason=f"invalid JSON: {row}", source=str(path))
                continue
            paragraphs = context_paragraphs(row)
            if paragraphs is None:
                yield SkippedPage(
                    title=where,
                    reason="no 'context' as {title, sentences} or [[title, sentences], ...]",
                    source=str(path),
                )
                continue
            for title, sentences in paragraphs:
                title = title.strip()
                if not title or title in seen:
                    continue
                seen.add(title)
                yield ParsedPage(
                    title=title, sections=(Section(path=(), text="".join(sentences).strip()),)
                )
