"""MediaWiki XML export reader (``.xml``, ``.xml.bz2``, ``.xml.gz``, ``.xml.xz``).

Streams ``<page>`` elements with an incremental expat parser and clears each page once it
is turned into a record, so memory stays bounded on a full dump. Handles export schemas
0.8-0.11 (tags are matched on their local names), UTF-8 and UTF-16 files (expat reads the
BOM / encoding declaration), files with or without ``<siteinfo>``, and history dumps (the
latest revision by timestamp wins, ties by file order). Only main-namespace pages are kept;
pages of other namespaces are dropped silently (they are not content, and a full dump holds
millions of them).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from wikigym.corpora.analysis import language_code
from wikigym.corpora.readers.base import FileSource, Progress, open_input
from wikigym.corpora.records import RawPage, SkippedPage
from wikigym.errors import SourceError

_CHUNK = 1 << 18
_REDIRECT_RE = re.compile(r"^\s*#\s*REDIRECT\s*:?\s*\[\[([^\]|#]+)", re.IGNORECASE)

# Namespace names of a default English wiki, used when a page has no <ns> and the file no
# <siteinfo> ("Image" is the old name of "File").
_DEFAULT_NAMESPACES = frozenset(
    {
        "Media", "Special", "Talk", "User", "User talk", "Wikipedia", "Wikipedia talk",
        "File", "File talk", "Image", "Image talk", "MediaWiki", "MediaWiki talk",
        "Template", "Template talk", "Help", "Help talk", "Category", "Category talk",
        "Portal", "Portal talk", "Draft", "Draft talk", "Module", "Module talk",
        "TimedText", "TimedText talk", "Book", "Book talk", "Project", "Project talk",
    }
)  # fmt: skip


def redirect_target(wikitext: str) -> str | None:
    """The target of a ``#REDIRECT [[Target]]`` page, or None."""
    match = _REDIRECT_RE.match(wikitext)
    return match.group(1).strip() or None if match else None


def _local(tag: str) -> str:
    """``{namespace-uri}page`` -> ``page``."""
    return tag.rpartition("}")[2]


def _child_text(elem: ET.Element, name: str) -> str | None:
    for child in elem:
        if _local(child.tag) == name:
            return child.text
    return None


_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_DBNAME_RE = re.compile(r"^([a-z_]+?)wiki$")
# dbnames of multilingual wikis, whose prefix is no language.
_NOT_LANGUAGES = frozenset({"commons", "meta", "species", "wikidata", "mediawiki", "simple"})


@dataclass
class _SiteInfo:
    url_prefix: str | None = None
    namespaces: frozenset[str] = _DEFAULT_NAMESPACES
    language: str | None = None


@dataclass
class _PageState:
    number: int
    best_time: str | None = None
    best_text: str | None = None
    revisions: int = 0


@dataclass
class _Reader:
    """Turns parser events into records; one per file."""

    path: Path
    site: _SiteInfo = field(default_factory=_SiteInfo)
    root: ET.Element | None = None
    root_closed: bool = False
    page: _PageState | None = None
    pages_seen: int = 0

    def handle(self, events: Iterator[tuple[str, ET.Element]]) -> Iterator[RawPage | SkippedPage]:
        for event, elem in events:
            name = _local(elem.tag)
            if event == "start":
                if self.root is None:
                    self.root = elem
                    if name != "mediawiki":
                        raise SourceError(
                            f"{self.path} is not a MediaWiki XML export: its root element is "
                            f"<{name}>, expected <mediawiki>"
                        )
                    lang = elem.get(_XML_LANG)
                    if lang:
                        self.site.language = language_code(lang)
                elif name == "page":
                    self.pages_seen += 1
                    self.page = _PageState(number=self.pages_seen)
                continue
            if elem is self.root:
                self.root_closed = True
            elif name == "revision" and self.page is not None:
                self._revision(elem)
            elif name == "page" and self.page is not None:
                record = self._page(elem, self.page)
                self.page = None
                self._drop_children()
                if record is not None:
                    yield record
            elif name == "siteinfo":
                self._siteinfo(elem)
                self._drop_children()

    def _drop_children(self) -> None:
        # Detach finished pages from the root: the tree never grows past the pages in flight.
        if self.root is not None:
            self.root.clear()

    def _revision(self, elem: ET.Element) -> None:
        assert self.page is not None
        page = self.page
        page.revisions += 1
        timestamp = _child_text(elem, "timestamp") or ""
        # ISO 8601 UTC timestamps compare as strings; ">=" makes the later one win a tie.
        if page.best_time is None or timestamp >= page.best_time:
            page.best_time = timestamp
            page.best_text = _child_text(elem, "text")
        elem.clear()

    def _siteinfo(self, elem: ET.Element) -> None:
        dbname = _DBNAME_RE.match((_child_text(elem, "dbname") or "").strip())
        if self.site.language is None and dbname and dbname.group(1) not in _NOT_LANGUAGES:
            self.site.language = language_code(dbname.group(1))
        base = _child_text(elem, "base")
        if base:
            if "?title=" in base:
                prefix = base.partition("?title=")[0] + "?title="
            else:
                prefix = base.rpartition("/")[0] + "/"
            self.site.url_prefix = prefix
        names: set[str] = set()
        for child in elem:
            if _local(child.tag) != "namespaces":
                continue
            for ns in child:
                if ns.get("key") not in (None, "0") and ns.text:
                    names.add(ns.text)
        if names:
            self.site.namespaces = frozenset(names | {"Image", "Image talk"})

    def _in_main_namespace(self, ns: str | None, title: str | None) -> bool:
        if ns is not None:
            return ns.strip() == "0"
        if title and ":" in title:
            return title.partition(":")[0] not in self.site.namespaces
        return True

    def _page(self, elem: ET.Element, state: _PageState) -> RawPage | SkippedPage | None:
        title = _child_text(elem, "title")
        ns = _child_text(elem, "ns")
        if not self._in_main_namespace(ns, title):
            return None
        if not title or not title.strip():
            return SkippedPage(
                title=f"<page #{state.number} in {self.path.name}>",
                reason="page has no <title>",
                source=str(self.path),
            )
        title = title.strip()
        if state.revisions == 0 or state.best_text is None:
            reason = "page has no <revision>" if state.revisions == 0 else "revision has no text"
            return SkippedPage(title=title, reason=reason, source=str(self.path))
        redirect: str | None = None
        for child in elem:
            if _local(child.tag) == "redirect":
                redirect = child.get("title") or redirect_target(state.best_text)
                break
        else:
            redirect = redirect_target(state.best_text)
        page_id = _child_text(elem, "id")
        url = None
        if self.site.url_prefix is not None:
            url = self.site.url_prefix + title.replace(" ", "_")
        return RawPage(
            title=title,
            wikitext=state.best_text,
            source_id=page_id.strip() if page_id else None,
            url=url,
            redirect=redirect,
            language=self.site.language,
        )


def _element_events(parser: ET.XMLPullParser[ET.Element]) -> Iterator[tuple[str, ET.Element]]:
    """The parser's pending ``(event, element)`` pairs.

    A parser asked only for start and end events gives elements; the stub's type also
    admits namespace events, which this drops.
    """
    for item in parser.read_events():
        elem = item[-1]
        if isinstance(elem, ET.Element):
            yield item[0], elem


def site_language(path: Path) -> str | None:
    """The language of a MediaWiki export (root ``xml:lang``, else siteinfo's ``dbname``),
    read from the head of the file; None when it names none."""
    reader = _Reader(path=path)
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start", "end"))
    with open_input(path) as inp:
        while True:
            chunk = inp.read(1 << 16)
            if not chunk:
                return reader.site.language
            try:
                parser.feed(chunk)
                for event, elem in _element_events(parser):
                    name = _local(elem.tag)
                    if reader.root is None:
                        reader.root = elem
                        lang = elem.get(_XML_LANG)
                        if lang:
                            return language_code(lang)
                    elif event == "end" and name == "siteinfo":
                        reader._siteinfo(elem)
                        return reader.site.language
                    elif name == "page":
                        return None
            except ET.ParseError:
                return None


def iter_mediawiki(path: Path, progress: Progress | None = None) -> Iterator[RawPage | SkippedPage]:
    """Stream the main-namespace pages of a MediaWiki XML export.

    Args:
        path: An ``.xml`` file, possibly bz2/gzip/xz compressed (detected by magic bytes).
        progress: Called with the number of bytes read from disk since the previous call.

    Yields:
        RawPage per main-namespace page (latest revision); SkippedPage for a page without
        title or text.

    Raises:
        SourceError: The file is not a MediaWiki export, or it is truncated or corrupt
            (raised when the stream breaks; earlier pages have been yielded already).
    """
    reader = _Reader(path=path)
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start", "end"))
    with open_input(path) as inp:
        while True:
            chunk = inp.read(_CHUNK)
            if not chunk:
                break
            try:
                parser.feed(chunk)
                # read_events re-raises a ParseError that feed deferred.
                yield from reader.handle(_element_events(parser))
            except ET.ParseError as exc:
                raise SourceError(f"{path}: invalid XML ({exc}); not a MediaWiki export") from exc
            inp.report(progress)
        try:
            parser.close()
            yield from reader.handle(_element_events(parser))
        except ET.ParseError as exc:
            if reader.root is None:
                raise SourceError(f"{path}: no XML content ({exc})") from exc
            raise SourceError(
                f"{path}: the XML ends before </mediawiki> ({exc}); the file is truncated"
            ) from exc
        if not reader.root_closed:
            raise SourceError(f"{path}: the XML ends before </mediawiki>; the file is truncated")
        inp.finish(progress)


class MediaWikiSource(FileSource):
    """A MediaWiki XML export; yields RawPage (wikitext) and SkippedPage."""

    format = "mediawiki"

    def records(self, progress: Progress | None = None) -> Iterator[RawPage | SkippedPage]:
        """Stream the main-namespace pages; see :func:`iter_mediawiki`."""
        return iter_mediawiki(self.path, progress)

    def language(self) -> str | None:
        """The wiki's language code from the export's head (see :func:`site_language`)."""
        return site_language(self.path)
