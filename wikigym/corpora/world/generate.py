"""Generate the world: plan the entity table, then render and write page by page.

Only the compact entity table (columns, titles) stays in memory; every page is
rendered, written to ``world.xml`` and ``world.facts.jsonl`` and dropped. Each
article draws its phrasing from its own stream, derived from (seed, global id).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from wikigym.corpora.world import schema
from wikigym.corpora.world.articles import RENDERERS
from wikigym.corpora.world.naming import name_world
from wikigym.corpora.world.plan import inverse, plan_arrays, to_lists, type_counts
from wikigym.corpora.world.render import FactRecord, World, type_of
from wikigym.errors import ConfigError

GENERATOR_VERSION = "2"
"""Bump whenever the output for a given config changes (2: one office per person, so no two
cities share a mayor and no two companies a chief executive; issue 36)."""
GENERATOR_VERSIONS = ("1", "2")
"""Every version this code still generates, byte for byte: an env id pinned to an older
default world (``WikiSearch-v0``: version 1) stays reproducible on a fresh machine."""

SITE_NAME = "WikiGym World"
BASE_URL = "https://world.wikigym.invalid/wiki/Main_Page"
TIMESTAMP = "2024-01-01T00:00:00Z"
_PROGRESS_EVERY = 1000

_HEADER = f"""<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.11/ \
http://www.mediawiki.org/xml/export-0.11.xsd" version="0.11" xml:lang="en">
  <siteinfo>
    <sitename>{SITE_NAME}</sitename>
    <dbname>worldwiki</dbname>
    <base>{BASE_URL}</base>
    <generator>wikigym-world {{version}}</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="10" case="first-letter">Template</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""


@dataclass(frozen=True)
class WorldConfig:
    """What to generate.

    Attributes:
        articles: Number of entity articles (redirects and disambiguation pages come on top);
            at least 50.
        seed: Non-negative seed; the same config gives byte-identical files.
    """

    articles: int
    seed: int


def _check(config: WorldConfig, version: str = GENERATOR_VERSION) -> None:
    if version not in GENERATOR_VERSIONS:
        raise ConfigError(
            f"world generator version must be one of {', '.join(GENERATOR_VERSIONS)}; "
            f"got {version!r}"
        )
    if not isinstance(config.articles, int) or config.articles < 50:
        raise ConfigError(
            f"WorldConfig.articles must be an int >= 50; got {config.articles!r}. "
            "Ask for at least 50 articles so every entity type is present."
        )
    if not isinstance(config.seed, int) or config.seed < 0:
        raise ConfigError(f"WorldConfig.seed must be an int >= 0; got {config.seed!r}.")


def build_world(config: WorldConfig, version: str = GENERATOR_VERSION) -> World:
    """Plan the whole entity table (no text yet), as generator ``version`` plans it."""
    _check(config, version)
    counts = type_counts(config.articles)
    cols = to_lists(plan_arrays(config.seed, counts, version))
    naming = name_world(config.seed, counts, cols)
    offsets: dict[str, int] = {}
    total = 0
    for t in schema.ENTITY_TYPES:
        offsets[t] = total
        total += counts[t]
    work = cols["work"]
    creators = [c if k < 2 else -1 for c, k in zip(work["creator"], work["kind"], strict=True)]
    inv = {
        "works_by_person": inverse(creators, counts["person"]),
        "people_by_birthplace": inverse(cols["person"]["born_in"], counts["city"]),
        "cities_by_country": inverse(cols["city"]["country"], counts["country"]),
        "people_by_award": inverse(cols["person"]["award"], counts["award"]),
    }
    return World(config.seed, counts, offsets, cols, naming, inv)


def _describe(world: World, gid: int) -> str:
    etype, i = type_of(world.offsets, world.counts, gid)
    if etype == "person":
        p = world.cols["person"]
        occ = schema.OCCUPATIONS[p["occupation"][i]]
        years = (
            f"born {p['birth_y'][i]}"
            if p["death_y"][i] == 0
            else f"{p['birth_y'][i]}–{p['death_y'][i]}"
        )
        return f"({years}), {occ}"
    if etype == "city":
        k = world.cols["city"]["country"][i]
        return f", a city in {world.link(world.gid('country', k))[0]}"
    return f", {etype}"


def _disambiguation_text(
    world: World, title: str, members: tuple[int, ...], kind: str, see_also: tuple[int, ...]
) -> str:
    base = title.removesuffix(" (disambiguation)").removesuffix(" (surname)")
    if kind == "surname":
        head = f"'''{base}''' is a surname. Notable people with the surname include:"
    else:
        head = f"'''{base}''' may refer to:"
    lines = [head, ""]
    for gid in members:
        desc = _describe(world, gid)
        sep = " " if desc.startswith("(") else ""
        lines.append(f"* {world.link(gid)[0]}{sep}{desc}")
    if see_also:
        lines += ["", "== See also ==", ""]
        lines += [f"* {world.link(gid)[0]} {_describe(world, gid)}" for gid in see_also]
    lines += ["", "{{disambiguation}}", ""]
    return "\n".join(lines)


def iter_pages(world: World) -> Iterator[tuple[str, str, str | None, list[FactRecord]]]:
    """Yield (title, wikitext, redirect target or None, facts) for every page, in dump order."""
    naming, seed = world.naming, world.seed
    for etype in schema.ENTITY_TYPES:
        render = RENDERERS[etype]
        off = world.offsets[etype]
        for i in range(world.counts[etype]):
            gid = off + i
            rng = random.Random(seed * 1_000_000_007 + gid)
            article = render(world, i, rng)
            title = naming.titles[gid]
            yield title, article.render(), None, article.facts
            for alias in naming.aliases[gid]:
                yield alias, f"#REDIRECT [[{title}]]\n", title, []
    for title, members, kind, see_also in naming.disambiguation:
        yield title, _disambiguation_text(world, title, members, kind, see_also), None, []


def _page_xml(page_id: int, title: str, text: str, redirect: str | None) -> str:
    red = f"    <redirect title={quoteattr(redirect)} />\n" if redirect is not None else ""
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n"
        f"{red}    <revision>\n      <id>{page_id + 1_000_000_000}</id>\n"
        f"      <timestamp>{TIMESTAMP}</timestamp>\n"
        "      <contributor>\n        <username>WorldGenerator</username>\n        <id>1</id>\n"
        "      </contributor>\n      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
        f'      <text bytes="{len(text.encode())}" xml:space="preserve">{escape(text)}</text>\n'
        "    </revision>\n  </page>\n"
    )


def generate_world(
    config: WorldConfig,
    out_dir: Path,
    progress: Callable[[int], None] | None = None,
    *,
    version: str = GENERATOR_VERSION,
) -> list[Path]:
    """Write ``world.xml``, ``world.facts.jsonl`` and ``world.json`` into ``out_dir``.

    Args:
        config: Size and seed.
        out_dir: Folder to write into (created if missing); files are written under
            temporary names and renamed when complete.
        progress: Called with the number of pages written so far, every 1000 pages
            and once at the end.
        version: The generator version to reproduce (one of :data:`GENERATOR_VERSIONS`;
            an older one for an env id pinned to its world).

    Returns:
        The written paths: XML dump, facts, metadata.

    Raises:
        ValueError: The config is out of range.
    """
    world = build_world(config, version)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "world.xml", out_dir / "world.facts.jsonl", out_dir / "world.json"]
    tmp = [p.with_name(p.name + ".tmp") for p in paths]
    n_pages = n_redirects = n_facts = 0
    relations: dict[str, int] = {}
    encode = json.JSONEncoder(ensure_ascii=False).encode
    with (
        open(tmp[0], "w", encoding="utf-8", newline="\n") as xml,
        open(tmp[1], "w", encoding="utf-8", newline="\n") as facts_out,
    ):
        xml.write(_HEADER.format(version=version))
        for title, text, redirect, facts in iter_pages(world):
            n_pages += 1
            n_redirects += redirect is not None
            n_facts += len(facts)
            for f in facts:
                rel = f["relation"]
                relations[rel] = relations.get(rel, 0) + 1
            xml.write(_page_xml(n_pages, title, text, redirect))
            facts_out.write(encode({"title": title, "facts": facts}))
            facts_out.write("\n")
            if progress is not None and n_pages % _PROGRESS_EVERY == 0:
                progress(n_pages)
        xml.write("</mediawiki>\n")
    meta = {
        "generator": "wikigym.corpora.world",
        "generator_version": version,
        "config": asdict(config),
        "site": {"sitename": SITE_NAME, "base": BASE_URL},
        "counts": {
            "pages": n_pages,
            "articles": config.articles,
            "redirects": n_redirects,
            "disambiguation": len(world.naming.disambiguation),
            "facts": n_facts,
            "near_duplicate_person_pairs": len(world.naming.near_duplicates),
            "entities": world.counts,
        },
        "relation_counts": {r: relations[r] for r in sorted(relations)},
        "relations": {
            r.name: {"subject": list(r.subject), "object": r.object, "value_type": r.value_type}
            for r in schema.RELATIONS
        },
    }
    tmp[2].write_text(json.dumps(meta, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    for t, p in zip(tmp, paths, strict=True):
        os.replace(t, p)
    if progress is not None:
        progress(n_pages)
    return paths
