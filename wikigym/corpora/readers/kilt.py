"""KILT knowledge-source JSONL: ``{wikipedia_id?, wikipedia_title, text: [paragraphs], ...}``.

Each paragraph is one string ending in a newline. Markers at the start of a paragraph:

- ``Section::::History.:Early years.`` is a section header; levels are separated by ``.:``
  and each ends with ``.`` (the path becomes ``("History", "Early years")``). A ``:::``
  separator without the dots is accepted too.
- ``BULLET::::- item`` is a list item; the marker is dropped and ``- item`` kept.
- Any other ``WORD::::`` marker (e.g. ``BLANK::::``) is dropped with its marker; a paragraph
  left empty is dropped.

The first paragraph repeats the title and is dropped when equal to it. Every paragraph kept
records its KILT id ``wikipedia_id:paragraph_index`` (the title when there is no id), so
each passage of the snapshot names the KILT paragraphs it covers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from wikigym.corpora.readers.base import FileSource, Progress, iter_json_lines, open_input
from wikigym.corpora.records import ParsedPage, Section, SkippedPage

_MARKER_RE = re.compile(r"^([A-Za-z]+)::::(.*)$", re.DOTALL)


def section_path(header: str) -> tuple[str, ...]:
    """``History.:Typographic variants.`` -> ``("History", "Typographic variants")``."""
    header = header.strip()
    parts = header.split(".:") if ".:" in header else header.split(":::")
    path = []
    for part in parts:
        part = part.strip()
        if part.endswith("."):
            part = part[:-1].rstrip()
        if part:
            path.append(part)
    return tuple(path)


def kilt_sections(title: str, paragraphs: list[str], article_id: str = "") -> tuple[Section, ...]:
    """Group KILT paragraphs into sections; the lead (path ``()``) always comes first.

    Each section records ``(offset, "article_id:paragraph")`` per paragraph it holds
    (``paragraph`` = index in the KILT ``text`` list, as KILT provenance counts), when
    ``article_id`` is given.
    """
    sections: list[Section] = []
    path: tuple[str, ...] = ()
    body: list[str] = []
    origins: list[tuple[int, str]] = []
    size = 0

    def close() -> None:
        if not path or body:
            sections.append(Section(path=path, text="\n\n".join(body), origin_ids=tuple(origins)))

    for index, raw in enumerate(paragraphs):
        paragraph = raw.strip()
        if index == 0 and paragraph == title.strip():
            continue
        match = _MARKER_RE.match(paragraph)
        if match:
            kind, rest = match.group(1), match.group(2).strip()
            if kind == "Section":
                close()
                path, body, origins, size = section_path(rest) or path, [], [], 0
                continue
            paragraph = rest
        if paragraph:
            if body:
                size += 2
            if article_id:
                origins.append((size, f"{article_id}:{index}"))
            body.append(paragraph)
            size += len(paragraph)
    close()
    return tuple(sections)


def _categories(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(c.strip() for c in value.split(",") if c.strip())
    if isinstance(value, list):
        return tuple(str(c).strip() for c in value if str(c).strip())
    return ()


def kilt_page(row: object, where: str, source: str) -> ParsedPage | SkippedPage:
    """Turn one decoded KILT row into a ParsedPage, or a SkippedPage naming ``where``."""
    if not isinstance(row, dict):
        return SkippedPage(title=where, reason="line is not a JSON object", source=source)
    title = row.get("wikipedia_title")
    text = row.get("text")
    if not isinstance(title, str) or not title.strip():
        return SkippedPage(title=where, reason="no 'wikipedia_title' string", source=source)
    if not isinstance(text, list) or not all(isinstance(p, str) for p in text):
        return SkippedPage(
            title=title, reason="'text' is not a list of paragraph strings", source=source
        )
    wikipedia_id = row.get("wikipedia_id")
    history = row.get("history")
    url = history.get("url") if isinstance(history, dict) else None
    article_id = str(wikipedia_id) if wikipedia_id is not None else title.strip()
    return ParsedPage(
        title=title.strip(),
        sections=kilt_sections(title, text, article_id),
        source_id=str(wikipedia_id) if wikipedia_id is not None else None,
        url=url if isinstance(url, str) else None,
        categories=_categories(row.get("categories")),
    )


class KiltSource(FileSource):
    """A KILT knowledge-source JSONL file (optionally compressed); yields ParsedPage."""

    format = "kilt"

    def records(self, progress: Progress | None = None) -> Iterator[ParsedPage | SkippedPage]:
        """One ParsedPage per line; a malformed line becomes a SkippedPage."""
        return _iter_kilt(self.path, progress)


def _iter_kilt(path: Path, progress: Progress | None) -> Iterator[ParsedPage | SkippedPage]:
    with open_input(path) as inp:
        for where, row in iter_json_lines(inp, progress):
            if isinstance(row, ValueError):
                yield SkippedPage(title=where, reason=f"invalid JSON: {row}", source=str(path))
            else:
                yield kilt_page(row, where, str(path))
