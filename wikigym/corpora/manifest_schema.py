"""The shape of a snapshot manifest: its fields, their types, and the rules between them.

:func:`check_structure` needs no file; :mod:`wikigym.corpora.verify` compares the result
with the files. Every problem names its field.
"""

from __future__ import annotations

import re
from typing import Any

from wikigym.corpora.index import DOC_ORDER_PASSAGE_ID, IndexConfig
from wikigym.corpora.manifest import (
    FIELDS,
    FORMAT_VERSION,
    MAX_SKIPPED_NAMED,
    PROVENANCE_FIELDS,
    TABLE_FILES,
)

# Fields (as paths) whose values nothing reads: they change no behaviour. An edit there is
# still reported (as provenance_sha256, which covers them; types are checked too).
INFORMATIONAL: tuple[tuple[str, ...], ...] = (
    ("package_version",),
    ("build_config", "threads"),
    ("sources",),  # the input files' names, sizes, sha256; extra keys such as the generator
    ("skipped",),  # the skipped pages' titles, reasons, source names
    ("source_counts",),  # per-source build statistics (what came in, went out, was dropped)
)
COUNT_KEYS = (
    "articles",
    "facts",
    "links",
    "links_resolved",
    "pages_read",
    "pages_skipped",
    "passages",
    "redirects",
)
INDEX_KEYS: dict[str, type | tuple[type, ...]] = {
    "tokenizer": str,
    "stopwords": list,
    "title_in_body": bool,
    "title_boost": float,
    "max_query_terms": int,
    "language": str,
    "stemmer": (str, type(None)),
    "cjk_bigrams": bool,
}
DOC_ORDERS = (DOC_ORDER_PASSAGE_ID, "none")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def check_structure(manifest: dict[str, Any]) -> list[str]:
    """Fields, types and the cross-field rules that need no file; one line per problem."""
    out: list[str] = []
    version = manifest.get("format_version")
    if "format_version" in manifest and (type(version) is not int or version != FORMAT_VERSION):
        out.append(f"format_version: expected {FORMAT_VERSION}, got {version!r}")
    for key in FIELDS:
        if key not in manifest:
            out.append(f"{key}: missing from the manifest")
    for key in sorted(set(manifest) - set(FIELDS)):
        out.append(f"{key}: not a manifest field")
    sid = manifest.get("snapshot_id")
    if "snapshot_id" in manifest and not (isinstance(sid, str) and _HEX64.match(sid)):
        out.append(f"snapshot_id: expected 64 hex digits, got {sid!r}")
    out += _check_provenance_shape(manifest.get("provenance_sha256", {}))
    if "package_version" in manifest and not isinstance(manifest["package_version"], str):
        out.append("package_version: expected a string")
    out += _check_content_config(manifest.get("content_config"))
    out += _check_counts_shape(manifest.get("counts"))
    out += _check_files(manifest)
    out += _check_tables(manifest)
    out += _check_build_config(manifest)
    out += _check_sources(manifest.get("sources", []))
    out += _check_language(manifest)
    out += _check_source_counts(manifest.get("source_counts", []))
    out += _check_skipped(manifest)
    out += _check_layout_shape(manifest.get("index_layout", {"segments": 1, "doc_order": "none"}))
    return out


def _is_int(value: object, minimum: int = 0) -> bool:
    return type(value) is int and value >= minimum


def _check_content_config(cfg: object) -> list[str]:
    if cfg is None:
        return []
    if not isinstance(cfg, dict):
        return ["content_config: expected an object"]
    out = [
        f"content_config.{k}: not a content setting"
        for k in sorted(set(cfg) - {"passage_words", "index", "facts"})
    ]
    facts = cfg.get("facts", {})
    if not isinstance(facts, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in facts.items()
    ):
        out.append(f"content_config.facts: expected an object of version strings, got {facts!r}")
    if not _is_int(cfg.get("passage_words"), 10):
        out.append(
            f"content_config.passage_words: expected an int >= 10, got {cfg.get('passage_words')!r}"
        )
    index = cfg.get("index")
    if not isinstance(index, dict):
        return [*out, "content_config.index: expected an object"]
    for key in sorted(index):
        kind = INDEX_KEYS.get(key)
        value = index[key]
        if kind is None:
            out.append(f"content_config.index.{key}: not an index setting")
        elif kind is float:
            if type(value) not in (int, float):
                out.append(f"content_config.index.{key}: expected a number, got {value!r}")
        elif kind is int:
            if not _is_int(value, 1):
                out.append(f"content_config.index.{key}: expected an int >= 1, got {value!r}")
        elif isinstance(kind, tuple):
            if type(value) not in kind:
                names = " or ".join("null" if k is type(None) else k.__name__ for k in kind)
                out.append(f"content_config.index.{key}: expected {names}, got {value!r}")
        elif type(value) is not kind:
            out.append(f"content_config.index.{key}: expected {kind.__name__}, got {value!r}")
    if not out:
        try:
            IndexConfig.from_dict(index)
        except ValueError as exc:
            out.append(f"content_config.index: {exc}")
    return out


def _check_counts_shape(counts: object) -> list[str]:
    if counts is None:
        return []
    if not isinstance(counts, dict):
        return ["counts: expected an object"]
    out = [f"counts.{k}: missing" for k in COUNT_KEYS if k not in counts]
    out += [f"counts.{k}: not a count" for k in sorted(set(counts) - set(COUNT_KEYS))]
    out += [
        f"counts.{k}: expected an int >= 0, got {counts[k]!r}"
        for k in COUNT_KEYS
        if k in counts and not _is_int(counts[k])
    ]
    return out


def check_count_sums(manifest: dict[str, Any]) -> list[str]:
    """The build statistics add up, and the skipped pages are named."""
    counts = manifest["counts"]
    out = []
    parts = counts["articles"] + counts["redirects"] + counts["pages_skipped"]
    if counts["pages_read"] != parts:
        out.append(
            f"counts.pages_read ({counts['pages_read']}) != counts.articles + counts.redirects "
            f"+ counts.pages_skipped ({parts})"
        )
    named = len(manifest["skipped"])
    if named != min(counts["pages_skipped"], MAX_SKIPPED_NAMED):
        out.append(
            f"skipped names {named} pages, counts.pages_skipped says "
            f"{counts['pages_skipped']} (named up to {MAX_SKIPPED_NAMED})"
        )
    return out


def _check_files(manifest: dict[str, Any]) -> list[str]:
    files = manifest.get("files")
    sizes = manifest.get("file_sizes")
    out: list[str] = []
    if files is not None:
        if not isinstance(files, dict):
            return ["files: expected an object"]
        out += [
            f"files[{rel}]: expected a sha256 (64 hex digits), got {digest!r}"
            for rel, digest in sorted(files.items())
            if not (isinstance(digest, str) and _HEX64.match(digest))
        ]
    if sizes is not None:
        if not isinstance(sizes, dict):
            return [*out, "file_sizes: expected an object"]
        out += [
            f"file_sizes[{rel}]: expected an int >= 0, got {size!r}"
            for rel, size in sorted(sizes.items())
            if not _is_int(size)
        ]
        if isinstance(files, dict):
            out += [f"file_sizes[{r}]: not in files" for r in sorted(set(sizes) - set(files))]
            out += [f"files[{r}]: not in file_sizes" for r in sorted(set(files) - set(sizes))]
    return out


def _check_tables(manifest: dict[str, Any]) -> list[str]:
    tables = manifest.get("tables")
    files = manifest.get("files")
    if tables is None:
        return []
    if not isinstance(tables, dict):
        return ["tables: expected an object"]
    out = [f"tables.{k}: not a table" for k in sorted(set(tables) - set(TABLE_FILES))]
    for name, fname in TABLE_FILES.items():
        entry = tables.get(name)
        if not isinstance(entry, dict) or set(entry) != {"file", "sha256"}:
            out.append(f"tables.{name}: expected {{file, sha256}}, got {entry!r}")
            continue
        if entry["file"] != fname:
            out.append(f"tables.{name}.file: expected {fname!r}, got {entry['file']!r}")
        if isinstance(files, dict) and entry["sha256"] != files.get(fname):
            out.append(f"tables.{name}.sha256 differs from files[{fname}]")
    return out


def _check_build_config(manifest: dict[str, Any]) -> list[str]:
    cfg = manifest.get("build_config")
    if cfg is None:
        return []
    if not isinstance(cfg, dict):
        return ["build_config: expected an object"]
    keys = ("formats", "language", "passage_words", "threads")
    out = [f"build_config.{k}: missing" for k in keys if k not in cfg]
    out += [f"build_config.{k}: not a build setting" for k in sorted(set(cfg) - set(keys))]
    if "threads" in cfg and not _is_int(cfg["threads"], 1):
        out.append(f"build_config.threads: expected an int >= 1, got {cfg['threads']!r}")
    content = manifest.get("content_config")
    if (
        "passage_words" in cfg
        and isinstance(content, dict)
        and cfg["passage_words"] != content.get("passage_words")
    ):
        out.append(
            f"build_config.passage_words ({cfg['passage_words']!r}) differs from "
            f"content_config.passage_words ({content.get('passage_words')!r})"
        )
    formats = cfg.get("formats")
    sources = manifest.get("sources")
    if "formats" in cfg and isinstance(sources, list):
        expected = [s.get("format") if isinstance(s, dict) else None for s in sources]
        if formats != expected:
            out.append(
                f"build_config.formats ({formats!r}) differs from the formats of sources "
                f"({expected!r})"
            )
    return out


def _check_language(manifest: dict[str, Any]) -> list[str]:
    """The top-level and build language must be the index's (which snapshot_id covers)."""
    content = manifest.get("content_config")
    index = content.get("index") if isinstance(content, dict) else None
    expected = index.get("language", "en") if isinstance(index, dict) else None
    out: list[str] = []
    cfg = manifest.get("build_config")
    for name, value in (
        ("language", manifest.get("language")),
        ("build_config.language", cfg.get("language") if isinstance(cfg, dict) else None),
    ):
        if not isinstance(value, str):
            out.append(f"{name}: expected a language code, got {value!r}")
        elif expected is not None and value != expected:
            out.append(
                f"{name} ({value!r}) differs from content_config.index.language ({expected!r})"
            )
    return out


def _check_source_counts(entries: object) -> list[str]:
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        return ["source_counts: expected a list of objects"]
    return []


def _check_sources(sources: object) -> list[str]:
    if not isinstance(sources, list):
        return ["sources: expected a list"]
    out = []
    for i, src in enumerate(sources):
        where = f"sources[{i}]"
        if not isinstance(src, dict):
            out.append(f"{where}: expected an object")
            continue
        for key in ("name", "format"):
            if not isinstance(src.get(key), str):
                out.append(f"{where}.{key}: expected a string, got {src.get(key)!r}")
        files = src.get("files")
        if not isinstance(files, list):
            out.append(f"{where}.files: expected a list")
            continue
        for j, f in enumerate(files):
            ok = (
                isinstance(f, dict)
                and set(f) == {"name", "size", "sha256"}
                and isinstance(f["name"], str)
                and _is_int(f["size"])
                and isinstance(f["sha256"], str)
                and _HEX64.match(f["sha256"])
            )
            if not ok:
                out.append(f"{where}.files[{j}]: expected {{name, size, sha256}}, got {f!r}")
    return out


def _check_skipped(manifest: dict[str, Any]) -> list[str]:
    skipped = manifest.get("skipped", [])
    if not isinstance(skipped, list):
        return ["skipped: expected a list"]
    out = [
        f"skipped[{i}]: expected {{title, reason, source}} strings, got {s!r}"
        for i, s in enumerate(skipped)
        if not (
            isinstance(s, dict)
            and set(s) == {"title", "reason", "source"}
            and all(isinstance(v, str) for v in s.values())
        )
    ]
    return out


def _check_provenance_shape(recorded: object) -> list[str]:
    if not isinstance(recorded, dict):
        return ["provenance_sha256: expected an object"]
    out = [f"provenance_sha256.{k}: missing" for k in PROVENANCE_FIELDS if k not in recorded]
    out += [
        f"provenance_sha256.{k}: not a provenance field"
        for k in sorted(set(recorded) - set(PROVENANCE_FIELDS))
    ]
    out += [
        f"provenance_sha256.{k}: expected 64 hex digits, got {v!r}"
        for k, v in sorted(recorded.items())
        if not (isinstance(v, str) and _HEX64.match(v))
    ]
    return out


def _check_layout_shape(layout: object) -> list[str]:
    if not isinstance(layout, dict) or set(layout) != {"segments", "doc_order"}:
        return [f"index_layout: expected {{segments, doc_order}}, got {layout!r}"]
    out = []
    if not _is_int(layout["segments"], 1):
        out.append(f"index_layout.segments: expected an int >= 1, got {layout['segments']!r}")
    if layout["doc_order"] not in DOC_ORDERS:
        out.append(
            f"index_layout.doc_order: expected one of {DOC_ORDERS}, got {layout['doc_order']!r}"
        )
    return out
