"""Turn one reader record into the rows of one article (runs in worker processes).

Everything here is a pure function of the record and the passage budget, so the rows do
not depend on which process built them or in which order workers finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wikigym.corpora.factsources import page_facts
from wikigym.corpora.passages import split_passages
from wikigym.corpora.records import ParsedPage, RawPage, SkippedPage, WorldFact
from wikigym.corpora.titles import normalize_title
from wikigym.corpora.vocabulary import untyped_value_type
from wikigym.corpora.wikitext import parse_wikitext


@dataclass(frozen=True, slots=True)
class PassageRow:
    section: tuple[str, ...]
    text: str
    start: int
    end: int
    origin: str | None = None  # the source's own id(s) of what the passage covers


def origin_of(origins: tuple[tuple[int, str], ...], start: int, end: int) -> str | None:
    """The original id of the units of ``origins`` that span ``[start, end)`` of a section:
    one id, or ``first..last`` when the passage covers several (None without origins)."""
    if not origins:
        return None
    end = max(end, start + 1)  # an empty passage (a DPR passage with a title only)
    covered = [
        oid
        for i, (offset, oid) in enumerate(origins)
        if offset < end and (i + 1 == len(origins) or origins[i + 1][0] > start)
    ]
    if not covered:
        return None
    return covered[0] if len(covered) == 1 else f"{covered[0]}..{covered[-1]}"


@dataclass(frozen=True, slots=True)
class LinkRow:
    passage: int  # ordinal of the passage inside the article
    anchor: str
    target: str


@dataclass(frozen=True, slots=True)
class FactRow:
    relation: str
    object: str
    object_title: str | None
    value_type: str
    source: str
    passage: int | None
    key: str | None = None  # the infobox key (None for world facts)
    value_text: str | None = None  # the value as the infobox shows it
    typed: bool = True  # typed by the world or the vocabulary (untyped: raw infobox key)
    statement: str | None = None  # the category line or lead sentence that states it
    restates: int | None = None  # index in the article's facts of the fact it restates


@dataclass(frozen=True, slots=True)
class ArticleRows:
    title: str
    url: str | None
    source_id: str | None
    text: str
    categories: tuple[str, ...]
    is_disambiguation: bool
    infobox_type: str | None
    passages: tuple[PassageRow, ...]
    links: tuple[LinkRow, ...]
    facts: tuple[FactRow, ...]


@dataclass(frozen=True, slots=True)
class RedirectRow:
    title: str
    target: str


def value_type_of(value: str, link_target: str | None, key: str = "") -> str:
    """Classify an untyped infobox value as ``entity``, ``date``, ``number`` or ``text``
    (a four-digit number is a date only where ``key`` says so)."""
    return untyped_value_type(key, value, link_target)


def _passage_at(starts: list[int], offset: int) -> int:
    """Ordinal of the passage whose span starts at or before ``offset`` (bisect)."""
    lo, hi = 0, len(starts)
    while lo < hi:
        mid = (lo + hi) // 2
        if starts[mid] <= offset:
            lo = mid + 1
        else:
            hi = mid
    return max(0, lo - 1)


def build_rows(page: ParsedPage, passage_words: int) -> ArticleRows | RedirectRow:
    """Lay out one parsed page as article text, passages, links and facts."""
    title = normalize_title(page.title)
    if page.redirect is not None:
        return RedirectRow(title=title, target=normalize_title(page.redirect))
    parts: list[str] = []
    pos = 0
    passages: list[PassageRow] = []
    links: list[LinkRow] = []
    section_bases: list[tuple[int, int]] = []  # (article offset of section text, first passage)
    lead_at: int | None = None  # article offset of the lead section's text
    for section in page.sections:
        if not section.text.strip() and not section.whole:
            continue
        if parts:
            parts.append("\n\n")
            pos += 2
        if section.path:
            heading = section.path[-1]
            parts.append(heading + "\n\n")
            pos += len(heading) + 2
        base = pos
        parts.append(section.text)
        pos += len(section.text)
        first = len(passages)
        # A source passage (DPR) stays one passage, even when its text is empty.
        spans = (
            [(0, len(section.text))]
            if section.whole
            else split_passages(section.text, passage_words)
        )
        for s, e in spans:
            origin = origin_of(section.origin_ids, s, e)
            passages.append(PassageRow(section.path, section.text[s:e], base + s, base + e, origin))
        section_bases.append((base, first))
        if lead_at is None and not section.path:
            lead_at = base
        starts = [base + s for s, _ in spans]
        for link in section.links:
            target = normalize_title(link.target)
            if not target or not starts:
                continue
            links.append(
                LinkRow(first + _passage_at(starts, base + link.start), link.anchor, target)
            )
    text = "".join(parts)
    all_starts = [p.start for p in passages]
    facts: list[FactRow] = []
    if page.world_facts:
        for fact in page.world_facts:
            ordinal = None
            if fact.sentence:
                at = text.find(fact.sentence)
                if at >= 0 and all_starts:
                    ordinal = _passage_at(all_starts, at)
            object_title = normalize_title(fact.object_title) if fact.object_title else None
            facts.append(
                FactRow(fact.relation, fact.object, object_title, fact.value_type, "world", ordinal)
            )
    else:
        for f in page_facts(page, text, lead_at):
            ordinal = _passage_at(all_starts, f.offset) if f.offset is not None else None
            object_title = normalize_title(f.object_title) if f.object_title else None
            facts.append(
                FactRow(
                    f.relation,
                    f.object,
                    object_title,
                    f.value_type,
                    f.source,
                    ordinal if all_starts else None,
                    f.key,
                    f.value_text,
                    f.typed,
                    f.statement,
                    f.restates,
                )
            )
    return ArticleRows(
        title=title,
        url=page.url,
        source_id=page.source_id,
        text=text,
        categories=tuple(page.categories),
        is_disambiguation=page.is_disambiguation,
        infobox_type=page.infobox_type,
        passages=tuple(passages),
        links=tuple(links),
        facts=tuple(facts),
    )


def process_record(
    record: RawPage | ParsedPage | SkippedPage, passage_words: int, source: str
) -> ArticleRows | RedirectRow | SkippedPage:
    """Parse (if needed) and lay out one record; a page that fails is skipped, not fatal."""
    if isinstance(record, SkippedPage):
        return record
    try:
        page = parse_wikitext(record) if isinstance(record, RawPage) else record
        if not normalize_title(page.title):
            return SkippedPage(page.title or "<empty title>", "empty title", source)
        return build_rows(page, passage_words)
    # A page is data: whatever a parser bug does with it must cost that page, not the
    # build. The reason (type and message) goes to the report and the manifest.
    except Exception as exc:  # noqa: BLE001
        return SkippedPage(record.title, f"{type(exc).__name__}: {exc}"[:300], source)


# ---- wire format -------------------------------------------------------------------------
# Batches cross process boundaries as plain tuples: pickling a tuple of str/int is C-speed,
# while slotted dataclasses go through __reduce_ex__ per object (measured: ~8x slower to
# pickle and ~13x slower to unpickle), which made the main process the bottleneck.
WireRecord = tuple[Any, ...]
WireResult = tuple[Any, ...]
ARTICLE, REDIRECT, SKIPPED, PARSED = "a", "r", "s", "p"


def encode_record(record: RawPage | ParsedPage | SkippedPage) -> WireRecord:
    """A reader record as a plain tuple (raw pages, the bulk of a dump, flattened)."""
    if isinstance(record, RawPage):
        facts = tuple(
            (f.relation, f.object, f.value_type, f.sentence, f.object_title)
            for f in record.world_facts
        )
        return (
            "w",
            record.title,
            record.wikitext,
            record.source_id,
            record.url,
            record.redirect,
            facts,
            record.language,
        )
    if isinstance(record, SkippedPage):
        return (SKIPPED, record.title, record.reason, record.source)
    return (PARSED, record)


def decode_record(wire: WireRecord) -> RawPage | ParsedPage | SkippedPage:
    """Inverse of :func:`encode_record`."""
    kind = wire[0]
    if kind == "w":
        _, title, text, source_id, url, redirect, facts, language = wire
        return RawPage(
            title=title,
            wikitext=text,
            source_id=source_id,
            url=url,
            redirect=redirect,
            world_facts=tuple(WorldFact(*f) for f in facts),
            language=language,
        )
    if kind == SKIPPED:
        return SkippedPage(wire[1], wire[2], wire[3])
    return wire[1]


def encode_result(result: ArticleRows | RedirectRow | SkippedPage) -> WireResult:
    """A processed page as a plain tuple (see :func:`process_batch`)."""
    if isinstance(result, ArticleRows):
        return (
            ARTICLE,
            result.title,
            result.url,
            result.source_id,
            result.text,
            result.categories,
            result.is_disambiguation,
            result.infobox_type,
            tuple((p.section, p.text, p.start, p.end, p.origin) for p in result.passages),
            tuple((link.passage, link.anchor, link.target) for link in result.links),
            tuple(
                (
                    f.relation,
                    f.object,
                    f.object_title,
                    f.value_type,
                    f.source,
                    f.passage,
                    f.key,
                    f.value_text,
                    f.typed,
                    f.statement,
                    f.restates,
                )
                for f in result.facts
            ),
        )
    if isinstance(result, RedirectRow):
        return (REDIRECT, result.title, result.target)
    return (SKIPPED, result.title, result.reason, result.source)


def process_batch(batch: list[WireRecord], passage_words: int, source: str) -> list[WireResult]:
    """Worker entry point: one batch of encoded records, encoded results in input order.

    An article result is ``("a", title, url, source_id, text, categories, is_disambiguation,
    infobox_type, passages, links, facts)`` with passages ``(section, text, start, end,
    origin)``, links ``(passage ordinal, anchor, target)`` and facts ``(relation, object,
    object_title, value_type, source, passage ordinal or None, key, value_text, typed,
    statement, index of the fact it restates or None)``; a redirect ``("r", title,
    target)``; a skipped page ``("s", title, reason, source)``.
    """
    return [encode_result(process_record(decode_record(r), passage_words, source)) for r in batch]
