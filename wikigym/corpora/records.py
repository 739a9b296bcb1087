"""Records that flow from readers to the snapshot builder.

Readers yield :class:`RawPage` (wikitext still to be parsed), :class:`ParsedPage`
(already plain text, e.g. KILT or DPR), or :class:`SkippedPage`. The builder turns
raw pages into parsed pages in worker processes (``wikitext.parse_wikitext``), so
the records are plain, picklable dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Link:
    """A wikilink inside a section's plain text.

    Attributes:
        target: Link target title as written (namespace-free, fragment removed).
        anchor: The visible text.
        start: Character offset of the anchor inside the section text.
    """

    target: str
    anchor: str
    start: int


@dataclass(frozen=True, slots=True)
class InfoboxField:
    """One ``| key = value`` line of an infobox.

    Attributes:
        key: Normalised key (lower case, spaces as ``_``).
        value: Plain text of the value.
        link_target: Target title when the value is (or starts with) a wikilink.
        link_targets: Every link target of the value, in order (lists of entities).
        leading_link: The value starts with its first link (``[[Mayfair]], London``), so
            that link names the value, not a later item of it.
        links: ``(offset in value, target)`` of every link, in order: which item of a
            list a link names (the one it starts).
        lines: Offsets in ``value`` where the lines of a value written as several lines
            (``<br>``, ``{{plainlist}}``, bullets) start; empty for a one-line value. A
            line is one value of the field ("Whig (before 1854), Republican (1854-1865)").
    """

    key: str
    value: str
    link_target: str | None = None
    link_targets: tuple[str, ...] = ()
    leading_link: bool = False
    links: tuple[tuple[int, str], ...] = ()
    lines: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class WorldFact:
    """An exact fact known to the generator of the fictional world.

    Attributes:
        relation: Relation name (snake case).
        object: Object as text (a title for entity objects, a literal otherwise).
        value_type: One of ``entity``, ``number``, ``date``, ``text``.
        sentence: Plain-text sentence of the article that states the fact; the builder
            maps it to the passage containing it.
        object_title: Title of the object entity, when the object is an entity.
    """

    relation: str
    object: str
    value_type: str
    sentence: str | None = None
    object_title: str | None = None


@dataclass(frozen=True, slots=True)
class Section:
    """A section of plain text.

    Attributes:
        path: Heading path, ``()`` for the lead, e.g. ``("History", "Early years")``.
        text: Plain text of the section body (paragraphs separated by blank lines).
        links: Wikilinks whose anchors lie inside ``text``.
        origin_ids: ``(offset in text, original id)`` of the source's own units, in order
            (DPR passage ids, KILT ``wikipedia_id:paragraph``): each passage cut from the
            section records the ids of the units it covers.
        whole: The section is one passage of the source (DPR): kept as exactly one
            passage, never re-split, so the user's passage ids map one to one.
    """

    path: tuple[str, ...]
    text: str
    links: tuple[Link, ...] = ()
    origin_ids: tuple[tuple[int, str], ...] = ()
    whole: bool = False


@dataclass(frozen=True, slots=True)
class RawPage:
    """A page still in wikitext.

    Attributes:
        title: Page title as in the source.
        wikitext: Raw wikitext of the latest revision.
        source_id: Identifier in the source (page id), for reports.
        url: Canonical URL if the source gives one.
        redirect: Target title when the source marks the page as a redirect.
        world_facts: Exact facts of a generated world (empty for real dumps).
        language: Base language code of the wiki (siteinfo), for locale-aware values.
    """

    title: str
    wikitext: str
    source_id: str | None = None
    url: str | None = None
    redirect: str | None = None
    world_facts: tuple[WorldFact, ...] = ()
    language: str | None = None


@dataclass(frozen=True, slots=True)
class ParsedPage:
    """A page as plain text with structure.

    Attributes:
        title: Page title.
        sections: Sections in order; the lead first.
        source_id: Identifier in the source.
        url: Canonical URL, if known.
        categories: Category names without the namespace.
        infobox: Infobox fields (source of ``facts`` with source=infobox).
        infobox_type: Template name of the infobox (e.g. ``settlement``), if any.
        is_disambiguation: True for disambiguation pages.
        redirect: Target title if the page is a redirect (then sections are empty).
        world_facts: Exact facts of a generated world.
        language: Base language code of the wiki, when known (locale of infobox values).
    """

    title: str
    sections: tuple[Section, ...]
    source_id: str | None = None
    url: str | None = None
    categories: tuple[str, ...] = ()
    infobox: tuple[InfoboxField, ...] = ()
    infobox_type: str | None = None
    is_disambiguation: bool = False
    redirect: str | None = None
    world_facts: tuple[WorldFact, ...] = field(default=())
    language: str | None = None


@dataclass(frozen=True, slots=True)
class SkippedPage:
    """A page a reader could not use; counted and named in the build report.

    Attributes:
        title: Title if known, else a placeholder naming the position in the source.
        reason: One line saying why.
        source: The source file it came from.
    """

    title: str
    reason: str
    source: str


Record = RawPage | ParsedPage | SkippedPage
