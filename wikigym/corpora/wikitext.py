"""Fast wikitext to structured plain text.

:func:`parse_wikitext` turns a :class:`RawPage` into a :class:`ParsedPage`: sections with
heading paths, plain prose, wikilinks with character offsets, categories, the first
infobox and flags for redirects and disambiguation pages. It never raises on any input.

It is a handful of linear passes, each a precompiled regex plus, for the nesting
constructs, a small stack-based scanner:

1. strip comments and tags whose content is not prose (``<ref>``, ``<math>``,
   ``<gallery>``, ...); ``<nowiki>``/``<pre>`` content is escaped so it stays literal;
2. templates ``{{...}}`` (nested): dropped, except a few inline content templates
   (``{{convert}}``, ``{{lang}}``, ``{{nowrap}}``, dates, ...) that become their text;
   the infobox and disambiguation templates are recorded on the way;
3. tables ``{| ... |}`` (nested; also indented ``:{|`` and mid-line ones) are dropped;
4. wikilinks ``[[...]]`` (nested, e.g. links inside file captions): main-namespace links
   become their anchor wrapped in private-use marker characters so that later passes can
   move text around and the final offsets are read off the finished text; files,
   categories and language links are removed (categories are recorded);
5. inline cleanup: external links, bare URLs, bold/italic quotes, HTML tags (inner text
   kept), behaviour switches, HTML entities;
6. lines: headings open sections, list items become plain lines, table residue is dropped,
   consecutive prose lines are joined into paragraphs.

Choices worth knowing:

* ``<math>`` and ``<chem>`` are removed without a placeholder (TeX is no prose).
* Inside a section, paragraphs are separated by ``"\\n\\n"``; a run of list items is one
  paragraph whose items are separated by ``"\\n"``; whitespace inside a line is collapsed.
* Sections titled like References, External links, See also, Notes, Further reading,
  Bibliography, Sources, Citations, Footnotes (and their German counterparts) are dropped
  with their subsections, as are sections without text.
* Unbalanced ``{{``, ``}}``, ``[[`` and ``]]`` are dropped (the text around them is kept);
  an unclosed comment hides the rest of the page (as in MediaWiki).
* Wikitext that was XML-escaped twice (``&lt;ref&gt;`` and no ``<`` at all) is unescaped first.
* Link targets: fragment dropped, ``_`` to space, whitespace collapsed, first letter upper;
  links to files, categories, other namespaces, other wikis and languages give no
  :class:`Link` (categories are recorded, file and language links vanish with their text).
* Nesting deeper than :data:`MAX_DEPTH` is dropped wholesale, which keeps every pass linear.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from wikigym.corpora.records import InfoboxField, Link, ParsedPage, RawPage, Section

__all__ = ["MAX_DEPTH", "parse_wikitext"]

#: Deeper nesting of templates or links than this is dropped without being rendered.
MAX_DEPTH = 40

# Link markers: chr(_MARK_BASE + i) opens link i, _MARK_END closes the innermost open link.
_MARK_BASE = 0xF0000
_MARK_MAX_IDS = 0x10FFFD - _MARK_BASE  # planes 15 and 16 (private use)
_MARK_END = "\ue001"
_PUA_RE = re.compile("[\ue001\ue002\U000f0000-\U0010ffff]")
_MARK_RE = re.compile("[\ue001\U000f0000-\U0010fffd]")
_MARK_START_WS_RE = re.compile(r"([\U000f0000-\U0010fffd])(\s+)")
_MARK_END_WS_RE = re.compile(r"(?<!\s)(\s+)(\ue001)")


def _words(text: str) -> list[str]:
    """Split a space-separated word list (keeps the long constant lists readable)."""
    return text.split()


# ---------------------------------------------------------------------------- redirects

_REDIRECT_RE = re.compile(
    r"\s*#\s*(?:REDIRECT|REDIRECTION|WEITERLEITUNG|ПРЕНАСОЧВАНЕ|ПЕРЕНАПРАВЛЕНИЕ|"
    r"REDIRECCIÓN|RINVIA|RINVIO|DOORVERWIJZING|PATRZ|PRZEKIERUJ|YÖNLENDİRME|"
    r"OMDIRIGERING|UUDELLEENOHJAUS|REDIRECIONAMENTO|PŘESMĚRUJ|ĐỔI|重定向|転送|リダイレクト)"
    r"\s*:?\s*\[\[([^\]\|\n]*)",
    re.IGNORECASE,
)

# ---------------------------------------------------------------------- tags & comments

# Tags dropped with their content.
_DROP_TAGS = (
    "ref",
    "references",
    "gallery",
    "math",
    "chem",
    "ce",
    "timeline",
    "imagemap",
    "score",
    "graph",
    "mapframe",
    "maplink",
    "templatedata",
    "templatestyles",
    "syntaxhighlight",
    "source",
    "includeonly",
    "inputbox",
    "categorytree",
    "hiero",
)
# Tags whose content is shown literally.
_LITERAL_TAGS = ("nowiki", "pre")
_TAG_OPEN_RE = re.compile(
    r"<!--|<(" + "|".join(_DROP_TAGS + _LITERAL_TAGS) + r")(?:\s[^<>]*?)?(/?)>",
    re.IGNORECASE,
)
_TAG_CLOSE_RE = {
    name: re.compile(r"</" + name + r"\s*>", re.IGNORECASE) for name in _DROP_TAGS + _LITERAL_TAGS
}
_LITERAL_ESCAPE = str.maketrans(
    {c: f"&#{ord(c)};" for c in "[]{}|'<>=*#:;!_~-&"}  # unescaped again at the very end
)

# --------------------------------------------------------------------------- templates

_BRACE_RE = re.compile(r"\{\{+|\}\}+")
_BRACKET_RE = re.compile(r"\[\[+|\]\]+")
_PIPE_SPLIT_RE = re.compile(r"\[\[|\]\]|\{\{|\}\}|\|")
_WS_RE = re.compile(r"\s+")

_DISAMBIG_NAMES = frozenset(
    {
        "disambiguation",
        "disambig",
        "disamb",
        "dab",
        "hndis",
        "geodis",
        "numberdis",
        "mathdab",
        "letter-numbercombdisambig",
        "set index article",
        "sia",
        "shipindex",
        "mountainindex",
        "roadindex",
        "begriffsklärung",
        "homonymie",
        "desambiguación",
        "disambigua",
        "пояснителна страница",
        "многозначност",
        "неоднозначность",
    }
)

# --------------------------------------------------------------------------- wikilinks

_FILE_NS = frozenset(
    _words(
        "file image media datei bild fichier archivo imagen immagine файл изображение plik "
        "bestand afbeelding ficheiro arquivo fil tiedosto soubor kép dosya"
    )
)
_CATEGORY_NS = frozenset(
    _words(
        "category kategorie catégorie categoría categoria категория kategoria kategori "
        "categorie luokka kategória kategorija"
    )
)
_OTHER_NS = frozenset(
    _words(
        "wikipedia wp project help template portal user talk special mediawiki module draft "
        "timedtext book gadget topic wiktionary wikt wikisource s wikiquote q wikibooks b "
        "wikinews n wikiversity v wikivoyage voy species wikispecies commons meta m mw d "
        "wikidata w phab phabricator google mailarchive foundation wmf outreach incubator "
        "vorlage hilfe benutzer diskussion spezial шаблон уикипедия потребител"
    )
)
_LANG_CODES = frozenset(
    _words(
        "aa ab ace ady af ak als alt am an ang ar arc ary arz as ast atj av avk awa ay az azb "
        "ba ban bar bat-smg bcl be be-tarask be-x-old bg bh bi bjn bm bn bo bpy br bs bug bxr "
        "ca cbk-zam cdo ce ceb ch cho chr chy ckb co cr crh cs csb cu cv cy da de din diq dsb "
        "dty dv dz ee el eml en eo es et eu ext fa ff fi fiu-vro fj fo fr frp frr fur fy ga "
        "gag gan gcr gd gl glk gn gom gor got gu gv ha hak haw he hi hif ho hr hsb ht hu hy hyw "
        "hz ia id ie ig ii ik ilo inh io is it iu ja jam jbo jv ka kaa kab kbd kbp kg ki kj kk "
        "kl km kn ko koi kr krc ks ksh ku kv kw ky la lad lb lbe lez lfn lg li lij lld lmo ln "
        "lo lrc lt ltg lv mad mai map-bms mdf mg mh mhr mi min mk ml mn mni mnw mo mr mrj ms "
        "mt mus mwl my myv mzn na nah nap nds nds-nl ne new ng nia nl nn no nov nqo nrm nso "
        "nv ny oc olo om or os pa pag pam pap pcd pdc pfl pi pih pl pms pnb pnt ps pt qu rm "
        "rmy rn ro roa-rup roa-tara ru rue rw sa sah sat sc scn sco sd se sg sh shi shn si "
        "simple sk skr sl sm smn sn so sq sr srn ss st stq su sv sw szl szy ta tay tcy te tet "
        "tg th ti tk tl tn to tpi tr trv ts tt tum tw ty tyv udm ug uk ur uz ve vec vep vi "
        "vls vo wa war wo wuu xal xh xmf yi yo za zea zh zh-classical zh-min-nan zh-yue zu"
    )
)
_BAD_TITLE_RE = re.compile(r"[<>\[\]{}\n|]")
_LINK_TRAIL_RE = re.compile(r"[a-zß-öø-ÿа-яё]+")

# ------------------------------------------------------------------------------ tables

# Tables are matched anywhere, not only at line starts: indented tables (":{|") and pages
# whose newlines were flattened away exist, and templates are gone by then.
_TABLE_RE = re.compile(r"(\{\||\|\})")

# ------------------------------------------------------------------------ inline clean

_EXT_LINK_RE = re.compile(
    r"\[(?:(?:https?|ftps?|mailto|news|irc|ircs|gopher|nntp|telnet|svn|git|mms|sftp|ssh|"
    r"worldwind|urn|geo|tel|sip|xmpp):|//)[^\s\[\]<>\"\ue001\U000f0000-\U0010fffd]*"
    r"(?:[ \t]+([^\[\]\n]*))?\]",
    re.IGNORECASE,
)
_BARE_URL_RE = re.compile(
    r"(?<![\w/])(?:https?|ftp)://[^\s<>\[\]{}|\"\ue001\U000f0000-\U0010fffd]+", re.IGNORECASE
)
_QUOTES_RE = re.compile(r"'{2,}")
_HTML_TAGS = _words(
    "span small big sup sub b i u s del ins div center font blockquote cite code tt abbr "
    "p hr poem nowiki pre noinclude onlyinclude strike mark var kbd samp q ruby rb rp rt "
    "rtc em strong dfn bdi bdo wbr section table tr td th caption tbody thead tfoot li ul "
    "ol dl dt dd h1 h2 h3 h4 h5 h6 time data meta link references ref gallery math chem "
    "includeonly syntaxhighlight source"
)
_HTML_TAG_RE = re.compile(
    r"</?(?:" + "|".join(sorted(_HTML_TAGS, key=len, reverse=True)) + r")(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)
_BR_RE = re.compile(r"<br\s*/?\s*>|</br\s*>", re.IGNORECASE)
# Patterns that start with a run of spaces look behind first, so that a long run of spaces
# is tried once, not once per character (which would be quadratic).
# "( , )" and " ," left behind by removed pronunciation/reference templates
_EMPTY_PARENS_RE = re.compile(r"(?<![ \t])[ \t]*\([\s,;:–-]*\)")
_SPACE_PUNCT_RE = re.compile(r"(?<![ \t])[ \t]+(?=[,.;:](?:\s|$))", re.MULTILINE)
_MAGIC_RE = re.compile(r"__[A-ZÄÖÜ_]{3,40}__")
_HEADING_RE = re.compile(r"^(={1,6})(.+?)(={1,6})\s*$")

_BOILERPLATE = frozenset(
    {
        "references",
        "external links",
        "see also",
        "notes",
        "further reading",
        "bibliography",
        "sources",
        "citations",
        "footnotes",
        "notes and references",
        "references and notes",
        "external link",
        "reference",
        "einzelnachweise",
        "weblinks",
        "literatur",
        "siehe auch",
        "anmerkungen",
        "quellen",
        "belege",
    }
)
_SKIP_KEY_PARTS = ("image", "caption", "map", "logo", "signature", "alt_text")


# ============================================================================ public API


def parse_wikitext(page: RawPage) -> ParsedPage:
    """Parse a raw wikitext page into structured plain text.

    Args:
        page: The raw page; ``title``, ``source_id``, ``url`` and ``world_facts`` are
            copied to the result.

    Returns:
        The parsed page. Redirects (``#REDIRECT [[Target]]`` or ``page.redirect``) come back
        with ``redirect`` set and no sections.
    """
    text = page.wikitext if isinstance(page.wikitext, str) else ""
    if page.redirect:
        return _from_raw(page, sections=(), redirect=_normalise_title(page.redirect) or None)
    match = _REDIRECT_RE.match(text)
    if match:
        target = _normalise_title(match.group(1))
        if target:
            return _from_raw(page, sections=(), redirect=target)

    state = _State(capture=True)
    body = _to_marked_text(text, state)
    sections = _split_sections(body, state.links)
    infobox_type, infobox = _build_infobox(state)
    return _from_raw(
        page,
        sections=sections,
        categories=tuple(dict.fromkeys(state.categories)),
        infobox=infobox,
        infobox_type=infobox_type,
        is_disambiguation=state.is_disambiguation,
    )


def _from_raw(
    page: RawPage,
    *,
    sections: tuple[Section, ...],
    redirect: str | None = None,
    categories: tuple[str, ...] = (),
    infobox: tuple[InfoboxField, ...] = (),
    infobox_type: str | None = None,
    is_disambiguation: bool = False,
) -> ParsedPage:
    """Build the parsed page, copying what passes through from the raw page unchanged."""
    return ParsedPage(
        title=page.title,
        sections=sections,
        source_id=page.source_id,
        url=page.url,
        categories=categories,
        infobox=infobox,
        infobox_type=infobox_type,
        is_disambiguation=is_disambiguation,
        redirect=redirect,
        world_facts=page.world_facts,
        language=page.language,
    )


# ============================================================================== internals


@dataclass
class _State:
    """What the passes collect besides the text.

    Attributes:
        capture: Whether to record infobox and disambiguation templates (top level only).
        links: ``(target)`` per link id, in order of creation.
        categories: Category names in order of appearance.
        infobox: ``(open position, raw content)`` of the first infobox candidate.
        lead_template: The first top-level template of the lead shaped like an infobox
            (used when no template has an infobox name).
        is_disambiguation: Whether a disambiguation template was seen.
        items_sep: What joins the items of a list template (``{{hlist}}``, ``{{ubl}}``):
            ``", "`` in prose, a line break in an infobox value (one value per line).
    """

    capture: bool = False
    items_sep: str = ", "
    links: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    infobox: tuple[int, str] | None = None
    lead_template: tuple[int, str] | None = None
    is_disambiguation: bool = False


def _to_marked_text(text: str, state: _State) -> str:
    """Run passes 1-5: wikitext to plain text with link markers, lines kept."""
    if _PUA_RE.search(text):
        text = _PUA_RE.sub("", text)
    if "&lt;" in text and "<" not in text:
        # XML-escaped once too often (some exports): markup would otherwise show as text
        text = html.unescape(text)
    text = _strip_tags(text)
    text = _expand_templates(text, state)
    text = _strip_tables(text)
    text = _replace_links(text, state)
    return _inline_cleanup(text)


@lru_cache(maxsize=65536)
def _normalise_title(raw: str) -> str:
    """Normalise a title as MediaWiki does: no fragment, spaces, first letter upper."""
    title = raw.split("#", 1)[0] if "#" in raw else raw
    if "&" in title:
        title = html.unescape(title)
    if "_" in title:
        title = title.replace("_", " ")
    title = " ".join(title.split()).lstrip(":").lstrip()
    if not title:
        return ""
    return title[0].upper() + title[1:]


# ------------------------------------------------------------------ pass 1: tags/comments


def _strip_tags(text: str) -> str:
    """Remove comments and non-prose tags with their content; escape literal tags."""
    if "<" not in text:
        return text
    out: list[str] = []
    pos = 0
    no_close_from: dict[str, int] = {}  # tag name -> position after which it never closes
    search = _TAG_OPEN_RE.search
    while True:
        m = search(text, pos)
        if m is None:
            break
        out.append(text[pos : m.start()])
        if m.group(0) == "<!--":
            end = text.find("-->", m.end())
            if end < 0:
                pos = len(text)  # an unclosed comment hides the rest of the page
                break
            pos = end + 3
            continue
        name = m.group(1).lower()
        if m.group(2):  # self-closing
            pos = m.end()
            continue
        close = None
        if no_close_from.get(name, len(text) + 1) > m.end():
            close = _TAG_CLOSE_RE[name].search(text, m.end())
            if close is None:
                no_close_from[name] = m.end()
        if close is None:  # unclosed: drop the opening tag only
            pos = m.end()
            continue
        if name in _LITERAL_TAGS:
            out.append(text[m.end() : close.start()].translate(_LITERAL_ESCAPE))
        pos = close.end()
    out.append(text[pos:])
    return "".join(out)


# ----------------------------------------------------------------------- pass 2: templates


def _expand_templates(text: str, state: _State) -> str:
    """Replace every template by its rendering (mostly nothing), innermost first."""
    if "{{" not in text:
        return text.replace("}}", "") if "}}" in text else text
    root: list[str] = []
    # frame: [pieces, content start, opener length, open position]
    stack: list[tuple[list[str], int, int, int]] = []
    pos = 0
    for m in _BRACE_RE.finditer(text):
        start, end = m.span()
        cur = stack[-1][0] if stack else root
        if start > pos:
            cur.append(text[pos:start])
        pos = end
        run = end - start
        if text[start] == "{":
            at = start
            if run % 2:  # an odd run opens with a triple brace (template parameter)
                stack.append(([], at + 3, 3, at))
                at += 3
                run -= 3
            while run >= 2:
                stack.append(([], at + 2, 2, at))
                at += 2
                run -= 2
            continue
        at = start
        while run >= 2 and stack:
            pieces, content_start, opener_len, open_pos = stack.pop()
            take = 3 if opener_len == 3 and run >= 3 else 2
            parent = stack[-1][0] if stack else root
            if opener_len == 2 and len(stack) < MAX_DEPTH:
                rendered = _render_template(
                    "".join(pieces), text, content_start, at, open_pos, state, not stack
                )
                if rendered:
                    parent.append(rendered)
            at += take
            run -= take
        # leftover closing braces are unbalanced: dropped
    cur = stack[-1][0] if stack else root
    cur.append(text[pos:])
    for pieces, *_ in stack:  # unclosed templates: keep their text, drop the braces
        root.extend(pieces)
    return "".join(root)


def _split_top_pipes(text: str) -> list[str]:
    """Split on ``|`` outside nested ``[[...]]`` and ``{{...}}``."""
    if "[[" not in text and "{{" not in text:
        return text.split("|")
    parts: list[str] = []
    depth = 0
    last = 0
    for m in _PIPE_SPLIT_RE.finditer(text):
        tok = m.group(0)
        if tok == "|":
            if depth == 0:
                parts.append(text[last : m.start()])
                last = m.end()
        elif tok in ("[[", "{{"):
            depth += 1
        elif depth:
            depth -= 1
    parts.append(text[last:])
    return parts


def _template_args(params: list[str]) -> tuple[list[str], dict[str, str]]:
    """Split template parameters into positional and named ones (both stripped)."""
    positional: list[str] = []
    named: dict[str, str] = {}
    for param in params:
        key, eq, value = param.partition("=")
        if eq and "[" not in key and "<" not in key and "{" not in key:
            key = key.strip().lower()
            if key.isdigit():
                idx = int(key) - 1
                while len(positional) <= idx < 64:
                    positional.append("")
                if 0 <= idx < len(positional):
                    positional[idx] = value.strip()
            else:
                named[key] = value.strip()
        else:
            positional.append(param.strip())
    return positional, named


def _render_template(
    content: str,
    text: str,
    raw_start: int,
    raw_end: int,
    open_pos: int,
    state: _State,
    top: bool = False,
) -> str:
    """Render one template given its already expanded content (``top``: not nested)."""
    name_part, sep, rest = content.partition("|")
    name = _WS_RE.sub(" ", name_part.replace("_", " ")).strip().lower()
    if name.startswith("template:"):
        name = name[9:].strip()
    if ":" in name:
        head, _, arg = name_part.partition(":")
        head = head.strip().lower()
        if head in ("formatnum", "lc", "uc", "lcfirst", "ucfirst"):
            return arg.strip()
        return ""
    if state.capture:
        if name in _DISAMBIG_NAMES or name.endswith("disambiguation"):
            state.is_disambiguation = True
        if infobox_kind(name) is not None:
            if state.infobox is None or open_pos < state.infobox[0]:
                state.infobox = (open_pos, text[raw_start:raw_end])
        elif top and state.infobox is None and state.lead_template is None:
            raw = text[raw_start:raw_end]
            if _looks_like_infobox(name, raw) and "\n==" not in text[:open_pos]:
                state.lead_template = (open_pos, raw)
    renderer = _RENDERERS.get(name)
    if renderer is None:
        if name.startswith("lang-"):
            renderer = _first
        else:
            return ""
    positional, named = _template_args(_split_top_pipes(rest)) if sep else ([], {})
    if renderer is _items:
        joined = state.items_sep.join(p for p in positional if p)
        # In a value (one item per line) a list is its own lines: two lists side by side
        # ("{{hlist|A|B}} {{hlist|C}}") are three items, not "A", "B C".
        return f"\n{joined}\n" if joined and state.items_sep == "\n" else joined
    return renderer(positional, named)


def _first(pos: list[str], named: dict[str, str]) -> str:
    return pos[0] if pos else ""


def _last(pos: list[str], named: dict[str, str]) -> str:
    return pos[-1] if pos else ""


def _second(pos: list[str], named: dict[str, str]) -> str:
    return pos[1] if len(pos) > 1 else ""


def _convert(pos: list[str], named: dict[str, str]) -> str:
    if len(pos) >= 4 and pos[1] in ("-", "–", "to", "and", "or", "by", "x", "×", "+", "to(-)"):
        sep = "–" if pos[1] in ("-", "–") else f" {pos[1]} "
        return f"{pos[0]}{sep}{pos[2]} {pos[3]}"
    if len(pos) >= 2:
        return f"{pos[0]} {pos[1]}"
    return _first(pos, named)


def _date(pos: list[str], named: dict[str, str]) -> str:
    parts = [p for p in pos if p][:3]
    if not parts:
        return ""
    if all(p.isdigit() for p in parts):
        year, rest = parts[0], parts[1:]
        return "-".join([year, *(p.zfill(2) for p in rest)])
    return parts[0]


def _items(pos: list[str], named: dict[str, str]) -> str:
    return ", ".join(p for p in pos if p)


def _frac(pos: list[str], named: dict[str, str]) -> str:
    if len(pos) >= 3:
        return f"{pos[0]} {pos[1]}/{pos[2]}"
    if len(pos) == 2:
        return f"{pos[0]}/{pos[1]}"
    return f"1/{pos[0]}" if pos else ""


def _val(pos: list[str], named: dict[str, str]) -> str:
    unit = named.get("u") or named.get("ul") or ""
    return f"{pos[0]} {unit}".strip() if pos else ""


def _quote(pos: list[str], named: dict[str, str]) -> str:
    return named.get("text") or named.get("quote") or (pos[0] if pos else "")


def _interlanguage(pos: list[str], named: dict[str, str]) -> str:
    if not pos or not pos[0]:
        return ""
    return f"[[{pos[0]}|{named.get('lt') or pos[0]}]]"


def _const(value: str) -> Callable[[list[str], dict[str, str]], str]:
    return lambda pos, named: value


_RENDERERS: dict[str, Callable[[list[str], dict[str, str]], str]] = {
    **dict.fromkeys(("convert", "cvt"), _convert),
    **dict.fromkeys(("lang", "script"), _second),
    **dict.fromkeys(("transl", "transliteration"), _last),
    **dict.fromkeys(
        _words(
            "nowrap nobr nobreak small smaller big larger large midsize nobold noitalic "
            "tooltip abbr abbrlink sic smallcaps sc vanchor em strong var code mono samp "
            "kbd tt math mvar flag flagcountry flagu nihongo marriage url nowiki "
            "lang-en"
        ),
        _first,
    ),
    "visible anchor": _first,
    "keep together": _first,
    "resize": _last,
    "sortname": lambda pos, named: " ".join(pos[:2]),
    **dict.fromkeys(
        (
            "birth date",
            "birth date and age",
            "birth-date",
            "death date",
            "death date and age",
            "start date",
            "start date and age",
            "end date",
            "end date and age",
            "dob",
            "bda",
            "dda",
            "dts",
            "film date",
        ),
        _date,
    ),
    **dict.fromkeys(
        (
            "hlist",
            "ubl",
            "unbulleted list",
            "flatlist",
            "plainlist",
            "plain list",
            "bulleted list",
            "collapsible list",
            "indented plainlist",
        ),
        _items,
    ),
    "frac": _frac,
    "val": _val,
    **dict.fromkeys(("quote", "blockquote", "quotation", "cquote", "quote box"), _quote),
    **dict.fromkeys(("ill", "interlanguage link", "interlanguage link multi"), _interlanguage),
    "!": _const("|"),
    "=": _const("="),
    "ndash": _const("–"),
    "mdash": _const("—"),
    **dict.fromkeys(("snd", "spnd", "spaced ndash", "sndash"), _const(" – ")),
    "nbsp": _const(" "),
    **dict.fromkeys(("·", "dot", "middot", "dot-sep"), _const(" · ")),
    "'": _const("'"),
    "pipe": _const("|"),
    "okina": _const("ʻ"),
    **dict.fromkeys(("circa", "c."), lambda pos, named: f"c. {pos[0]}" if pos else "c."),
    "us$": lambda pos, named: f"US${pos[0]}" if pos else "",
}


# -------------------------------------------------------------------------- pass 3: tables


def _strip_tables(text: str) -> str:
    """Drop ``{| ... |}`` tables (nested).

    Openers and closers are paired with a stack first; paired tables are dropped whole,
    an unpaired opener loses its own line only (the row residue is dropped with the lines),
    an unpaired closer is dropped alone.
    """
    if "{|" not in text and "|}" not in text:
        return text
    cuts: list[tuple[int, int]] = []
    opened: list[int] = []
    for m in _TABLE_RE.finditer(text):
        if m.group(1) == "{|":
            opened.append(m.start())
        elif opened:
            cuts.append((opened.pop(), m.end()))
        else:
            cuts.append((m.start(), m.end()))
    for start in opened:
        eol = text.find("\n", start)
        cuts.append((start, len(text) if eol < 0 else eol))
    cuts.sort()
    out: list[str] = []
    pos = 0
    for start, end in cuts:
        if end <= pos:  # inside a cut already made
            continue
        if start > pos:
            out.append(text[pos:start])
        pos = max(pos, end)
    out.append(text[pos:])
    return "".join(out)


# ----------------------------------------------------------------------- pass 4: wikilinks


def _replace_links(text: str, state: _State) -> str:
    """Replace wikilinks by marked anchors; drop files, categories and language links."""
    if "[[" not in text:
        return text.replace("]]", "") if "]]" in text else text
    root: list[str] = []
    stack: list[list[str]] = []
    pending_end = False  # a link was closed: its end marker waits for a link trail
    pos = 0
    for m in _BRACKET_RE.finditer(text):
        start, end = m.span()
        cur = stack[-1] if stack else root
        if start > pos:
            seg = text[pos:start]
            if pending_end:
                trail = _LINK_TRAIL_RE.match(seg)
                if trail:
                    cur.append(trail.group(0))
                    seg = seg[trail.end() :]
                cur.append(_MARK_END)
                pending_end = False
            cur.append(seg)
        elif pending_end:
            cur.append(_MARK_END)
            pending_end = False
        pos = end
        run = end - start
        if text[start] == "[":
            if run % 2:
                cur.append("[")
            for _ in range(run // 2):
                stack.append([])
            continue
        while run >= 2 and stack:
            pieces = stack.pop()
            parent = stack[-1] if stack else root
            run -= 2
            if len(stack) >= MAX_DEPTH:
                continue
            rendered, is_link = _render_link("".join(pieces), state)
            if rendered:
                parent.append(rendered)
            if is_link:
                if run >= 1:  # another bracket follows at once: no trail possible
                    parent.append(_MARK_END)
                else:
                    pending_end = True
        if run % 2:
            (stack[-1] if stack else root).append("]")
    cur = stack[-1] if stack else root
    seg = text[pos:]
    if pending_end:
        trail = _LINK_TRAIL_RE.match(seg)
        if trail:
            cur.append(trail.group(0))
            seg = seg[trail.end() :]
        cur.append(_MARK_END)
    cur.append(seg)
    for pieces in stack:  # unclosed links: keep their text, drop the brackets
        root.extend(pieces)
    return "".join(root)


def _render_link(content: str, state: _State) -> tuple[str, bool]:
    """Render the inside of ``[[...]]``; returns (text, whether it opened a link marker)."""
    target_raw, pipe, anchor = content.partition("|")
    if "://" in target_raw:  # not a wikilink: leave it to the external-link pass
        return "[" + _plain_anchor(content) + "]", False
    if _BAD_TITLE_RE.search(target_raw) or _PUA_RE.search(target_raw):
        return _plain_anchor(content), False
    stripped = target_raw.strip()
    leading_colon = stripped.startswith(":")
    if leading_colon:
        stripped = stripped[1:].strip()
    if not stripped:
        return "", False
    if ":" in stripped:
        prefix = stripped.split(":", 1)[0].strip().replace("_", " ").lower()
        if prefix in _FILE_NS:
            return "", False
        if prefix in _CATEGORY_NS:
            if leading_colon:
                return _plain_anchor(anchor if pipe else stripped), False
            name = _normalise_title(stripped.split(":", 1)[1])
            if name:
                state.categories.append(name)
            return "", False
        if prefix in _LANG_CODES:
            if leading_colon:
                return _plain_anchor(anchor if pipe else stripped), False
            return "", False
        if prefix in _OTHER_NS or prefix.endswith(" talk"):
            return _plain_anchor(anchor if pipe else stripped), False
    target = _normalise_title(stripped)
    shown = _plain_anchor(anchor if pipe and anchor.strip() else stripped)
    if not target or len(state.links) >= _MARK_MAX_IDS:
        return shown, False
    state.links.append(target)
    return chr(_MARK_BASE + len(state.links) - 1) + shown, True


def _plain_anchor(anchor: str) -> str:
    """Anchor text without markers of links nested inside it."""
    return _PUA_RE.sub("", anchor) if _PUA_RE.search(anchor) else anchor


# -------------------------------------------------------------------- pass 5: inline clean


def _quotes(m: re.Match[str]) -> str:
    n = len(m.group(0))
    if n == 4:
        return "'"
    return "'" * (n - 5) if n > 5 else ""


def _inline_cleanup(text: str) -> str:
    """External links, URLs, bold/italic, HTML tags, behaviour switches, entities."""
    if "[" in text:
        text = _EXT_LINK_RE.sub(lambda m: m.group(1) or "", text)
    if "//" in text:
        text = _BARE_URL_RE.sub("", text)
    if "''" in text:
        text = _QUOTES_RE.sub(_quotes, text)
    if "<" in text:
        text = _BR_RE.sub(" ", text)
        text = _HTML_TAG_RE.sub("", text)
    if "__" in text:
        text = _MAGIC_RE.sub("", text)
    if "&" in text:
        text = html.unescape(text)
    if "(" in text:
        text = _EMPTY_PARENS_RE.sub("", text)
    return _SPACE_PUNCT_RE.sub("", text)


# --------------------------------------------------------------------- pass 6: sections


def _split_sections(text: str, link_targets: list[str]) -> tuple[Section, ...]:
    """Split marked text into sections of paragraphs and resolve link offsets."""
    if link_targets:
        text = _MARK_START_WS_RE.sub(r"\2\1", text)
        text = _MARK_END_WS_RE.sub(r"\2\1", text)
    sections: list[Section] = []
    headings: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    paragraphs: list[str] = []
    prose: list[str] = []
    items: list[str] = []

    def flush() -> None:
        if prose:
            paragraphs.append(" ".join(" ".join(prose).split()))
            prose.clear()
        if items:
            paragraphs.append("\n".join(items))
            items.clear()

    def close_section() -> None:
        flush()
        if paragraphs and not any(p.lower() in _BOILERPLATE for p in path):
            section = _finish_section(path, "\n\n".join(p for p in paragraphs if p), link_targets)
            if section is not None:
                sections.append(section)
        paragraphs.clear()

    for line in text.split("\n"):
        s = line.strip()
        if not s:
            flush()
            continue
        first = s[0]
        if first == "=":
            m = _HEADING_RE.match(s)
            if m:
                title = " ".join(_MARK_RE.sub("", m.group(2)).split()).strip("= ")
                if title:
                    close_section()
                    level = min(len(m.group(1)), len(m.group(3)))
                    while headings and headings[-1][0] >= level:
                        headings.pop()
                    headings.append((level, title))
                    path = tuple(t for _, t in headings)
                    continue
        if first in "*#:;":
            if prose:
                flush()
            item = " ".join(s.lstrip("*#:; \t").split())
            if item:
                items.append(item)
            continue
        if first in "|!" or s.startswith("{|"):  # residue of a broken table
            continue
        if first == "-" and len(s) >= 4 and not s.strip("-"):  # horizontal rule
            flush()
            continue
        if items:
            flush()
        prose.append(s)
    close_section()
    return tuple(sections)


def _finish_section(path: tuple[str, ...], marked: str, link_targets: list[str]) -> Section | None:
    """Remove link markers from a section's text and compute link offsets."""
    if not marked.strip():
        return None
    if not link_targets or not _MARK_RE.search(marked):
        return Section(path=path, text=marked.strip())
    out: list[str] = []
    spans: list[tuple[int, int, int]] = []
    length = 0
    pos = 0
    open_id = -1
    open_at = 0
    used: set[int] = set()
    for m in _MARK_RE.finditer(marked):
        piece = marked[pos : m.start()]
        out.append(piece)
        length += len(piece)
        pos = m.end()
        ch = m.group(0)
        if ch == _MARK_END:
            if open_id >= 0:
                spans.append((open_id, open_at, length))
                open_id = -1
        else:
            link_id = ord(ch) - _MARK_BASE
            if 0 <= link_id < len(link_targets) and link_id not in used:
                used.add(link_id)
                open_id, open_at = link_id, length
    out.append(marked[pos:])
    plain = "".join(out)
    lead = len(plain) - len(plain.lstrip())
    plain = plain.strip()
    if not plain:
        return None
    links: list[Link] = []
    for link_id, start, end in spans:
        anchor = plain[max(start - lead, 0) : max(end - lead, 0)]
        begin = max(start - lead, 0) + (len(anchor) - len(anchor.lstrip()))
        anchor = anchor.strip()
        if anchor:
            links.append(Link(target=link_targets[link_id], anchor=anchor, start=begin))
    return Section(path=path, text=plain, links=tuple(links))


# ------------------------------------------------------------------------------ infobox

# Names of infobox templates across wikis (lower case): the template name starts or ends
# with one of them, and the rest is the infobox type ("Infobox settlement", "基礎情報 国",
# "Ficha de persona", "Polityk infobox").
INFOBOX_PREFIXES: tuple[str, ...] = (
    "infobox", "infoboks", "infokutija", "infocaseta", "infotaula", "infoquadro",
    "ficha de", "ficha", "info/", "faktamall", "tietolaatikko", "карточка", "картка",
    "инфокутия", "инфобокс", "bilgi kutusu", "hộp thông tin", "정보상자", "صندوق معلومات",
    "جعبه اطلاعات", "taxobox", "基礎情報", "信息框",
)  # fmt: skip
INFOBOX_SUFFIXES: tuple[str, ...] = ("infobox", "基礎情報", " 정보", "信息框")
# Templates (first words of the name) that can have key = value lines in a lead but are
# not infoboxes.
_NOT_INFOBOX = (
    "cite", "citation", "literatur", "internetquelle", "webarchiv", "navbox", "sidebar",
    "coord", "short description", "use", "multiple issues", "about", "for", "redirect",
    "taxonbar", "authority control", "reflist", "commons", "portal",
)  # fmt: skip
_NAMED_LINE_RE = re.compile(r"\n[ \t]*\|[ \t]*[^=|\n{}\[\]<]{1,60}=")


def infobox_kind(name: str) -> str | None:
    """The infobox type of a template named ``name`` (lower case), or None when the name
    is not an infobox name: ``"infobox settlement"`` -> ``"settlement"``, ``"基礎情報 国"``
    -> ``"国"``, ``"infobox"`` -> ``""``."""
    for prefix in INFOBOX_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :].strip(" /_-")
    for suffix in INFOBOX_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)].strip(" /_-")
    return None


def _looks_like_infobox(name: str, raw: str) -> bool:
    """A lead template laid out as an infobox: three or more ``| key = value`` lines."""
    if not name or any(name == x or name.startswith(x + " ") for x in _NOT_INFOBOX):
        return False
    return len(_NAMED_LINE_RE.findall(raw, 0, 20_000)) >= 3


def _build_infobox(state: _State) -> tuple[str | None, tuple[InfoboxField, ...]]:
    """Turn the recorded infobox template into a type and plain-text fields."""
    found = state.infobox or state.lead_template
    if found is None:
        return None, ()
    raw = found[1]
    params = _split_top_pipes(raw)
    name = _WS_RE.sub(" ", params[0].replace("_", " ")).strip().lower()
    kind = infobox_kind(name)
    if kind is None:  # found by its structure: the template's own name is its type
        kind = name
    fields: list[InfoboxField] = []
    seen: set[str] = set()
    for param in params[1:]:
        key, eq, value = param.partition("=")
        if not eq:
            continue
        key = "_".join(key.lower().split())
        if not key or key in seen or any(part in key for part in _SKIP_KEY_PARTS):
            continue
        if key == "alt" or key.endswith(("_alt", "size")):
            continue
        plain = _plain_value(value)
        if plain.text:
            seen.add(key)
            fields.append(
                InfoboxField(
                    key=key,
                    value=plain.text,
                    link_target=plain.targets[0] if plain.targets else None,
                    link_targets=plain.targets,
                    leading_link=plain.leading,
                    links=plain.links,
                    lines=plain.lines,
                )
            )
    return kind, tuple(fields)


# A {{small}} gloss on a line after a value (an anthem's translation, "(de jure)"), whole.
_GLOSS_LINE_RE = re.compile(r"(?<=\S)\s*\n\s*\{\{\s*small\s*\|[^{}]*\}\}\s*(?=\n|$)", re.IGNORECASE)
_LINE_MARK = "\ue002"  # where a line of a multi-line value starts (removed below)


def _plain_value(value: str) -> _PlainValue:
    """Plain text of an infobox value (lines joined by ', '), its link targets, whether the
    value starts with its first link, every link's offset, and where each line starts."""
    if not value.strip():
        return _PlainValue("", (), False, (), ())
    if "<" in value:
        value = _BR_RE.sub("\n", value)
    if "small" in value:  # a gloss on a line of its own is no value of the field
        value = _GLOSS_LINE_RE.sub("", value)
    local = _State(items_sep="\n")
    marked = _to_marked_text(value, local)
    lines = [" ".join(line.strip().lstrip("*#:; \t").split()) for line in marked.split("\n")]
    lines = [line for line in lines if line]
    several = len(lines) > 1
    joined = (", " + _LINE_MARK).join(lines) if several else "".join(lines)
    if local.links:
        joined = _MARK_START_WS_RE.sub(r"\2\1", joined)
        joined = _MARK_END_WS_RE.sub(r"\2\1", joined)
    section = _finish_section((), joined, local.links)
    if section is None:
        return _PlainValue("", (), False, (), ())
    text = section.text
    starts: tuple[int, ...] = ()
    links = tuple((link.start, link.target) for link in section.links)
    if several:  # drop the line marks, moving the offsets after each one back
        cuts = []
        at = text.find(_LINE_MARK)
        while at >= 0:
            cuts.append(at)
            at = text.find(_LINE_MARK, at + 1)
        text = text.replace(_LINE_MARK, "")
        starts = (0, *(c - k for k, c in enumerate(cuts)))
        links = tuple((at - sum(1 for c in cuts if c < at), t) for at, t in links)
    if links:
        targets = tuple(dict.fromkeys(t for _, t in links))
        return _PlainValue(text, targets, links[0][0] == 0, links, starts)
    return _PlainValue(text, tuple(dict.fromkeys(local.links)), False, (), starts)


@dataclass(frozen=True, slots=True)
class _PlainValue:
    text: str
    targets: tuple[str, ...]
    leading: bool
    links: tuple[tuple[int, str], ...]
    lines: tuple[int, ...]
