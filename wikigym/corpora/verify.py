"""Check a snapshot's manifest against its files, field by field.

Every manifest field that changes behaviour is verified, and each problem names the field
(``counts.articles``, ``files[index/meta.json]``, ``tables.links.sha256``...):

- ``format_version`` (read by :func:`~wikigym.corpora.manifest.read_manifest`),
  ``snapshot_id`` and ``content_config``: the id is recomputed from the table hashes and
  the content config (full check); the content config is parsed strictly (every check).
- ``files`` / ``file_sizes``: the same paths, matching the files on disk (sizes always,
  sha256 in a full check); ``tables``: the fixed file names with the sha256 of ``files``.
- ``counts``: ``articles``, ``passages``, ``links``, ``facts`` and ``links_resolved`` are
  derived from the tables' Parquet metadata; ``pages_read`` must equal ``articles +
  redirects + pages_skipped``, and ``skipped`` name every skipped page up to
  ``MAX_SKIPPED_NAMED``.
- ``index_layout``: segment count and ``doc_order`` recomputed from the index (full check;
  :class:`~wikigym.corpora.snapshot.Snapshot` checks the segment count at every open).
- ``build_config.passage_words`` equals the content config's, ``build_config.formats``
  the sources' formats.

- ``provenance_sha256``: the sha256 of each of ``build_config``, ``package_version``,
  ``skipped`` and ``sources``, the record of how the snapshot was built (every check).

Informational (read by nothing, shown by ``corpus info``): ``package_version``,
``build_config.threads``, the names, sizes, sha256 and extra keys of ``sources`` (the
input files, which the snapshot does not contain), and the titles, reasons and source
names of ``skipped``; :data:`INFORMATIONAL` lists them. They change no behaviour, and an
edit there is still reported, through ``provenance_sha256``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from wikigym.corpora.index import DOC_ORDER_PASSAGE_ID, IndexConfig, IndexLayout, read_layout
from wikigym.corpora.manifest import (
    FORMAT_VERSION,
    INDEX_DIR,
    MAX_SKIPPED_NAMED,
    PROVENANCE_FIELDS,
    TABLE_FILES,
    compute_snapshot_id,
    file_sizes,
    hash_files,
    provenance_sha256,
)
from wikigym.errors import SnapshotError

# Fields (as paths) whose values nothing reads: they change no behaviour. An edit there is
# still reported (as provenance_sha256, which covers them; types are checked too).
INFORMATIONAL: tuple[tuple[str, ...], ...] = (
    ("package_version",),
    ("build_config", "threads"),
    ("sources",),  # the input files' names, sizes, sha256; extra keys such as the generator
    ("skipped",),  # the skipped pages' titles, reasons, source names
    ("source_counts",),  # per-source build statistics (what came in, went out, was dropped)
)
FIELDS = (
    "build_config",
    "content_config",
    "counts",
    "file_sizes",
    "files",
    "format_version",
    "index_layout",
    "language",
    "package_version",
    "provenance_sha256",
    "skipped",
    "snapshot_id",
    "source_counts",
    "sources",
    "tables",
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
DERIVED_COUNTS = ("articles", "passages", "links", "facts", "links_resolved")
INDEX_KEYS = {
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


@dataclass(frozen=True)
class RowCounts:
    """Rows of a table and, for links, how many have a target."""

    rows: int
    resolved: int = 0


def count_rows(path: Path) -> RowCounts:
    """Rows of a Parquet table from its footer; for ``links``, rows with a target_doc_id.

    Raises:
        OSError: The file cannot be read.
        pyarrow.ArrowInvalid: It is not Parquet.
    """
    meta = pq.ParquetFile(path).metadata
    rows = meta.num_rows
    names = meta.schema.names
    if "target_doc_id" not in names:
        return RowCounts(rows)
    col = names.index("target_doc_id")
    nulls = 0
    for i in range(meta.num_row_groups):
        stats = meta.row_group(i).column(col).statistics
        if stats is None or not stats.has_null_count:
            table = pq.read_table(path, columns=["target_doc_id"])
            return RowCounts(rows, rows - table.column(0).null_count)
        nulls += stats.null_count
    return RowCounts(rows, rows - nulls)


@dataclass(frozen=True)
class Observed:
    """What the files of a snapshot say (to compare with what its manifest says).

    Attributes:
        sizes: Size of every content file.
        hashes: sha256 of every content file (None unless a full check).
        counts: Derived row counts (None when a table cannot be read).
        unreadable: One line per table that is not readable Parquet.
        layout: The index layout (None unless a full check).
    """

    sizes: dict[str, int]
    hashes: dict[str, str] | None
    counts: dict[str, int] | None
    unreadable: tuple[str, ...]
    layout: IndexLayout | None


def observe(root: Path, full: bool) -> Observed:
    """Read sizes (and, if ``full``, hashes and the index layout) and row counts.

    Raises:
        SnapshotError: A file cannot be read (permissions): that is not corruption.
    """
    try:
        sizes = file_sizes(root)
        hashes = hash_files(root) if full else None
        unreadable: list[str] = []
        counts: dict[str, int] | None = {}
        for name, fname in TABLE_FILES.items():
            if fname not in sizes:
                counts = None
                continue
            try:
                got = count_rows(root / fname)
            except PermissionError:
                raise
            except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
                unreadable.append(f"{fname}: not a readable Parquet file ({exc})")
                counts = None
                continue
            if counts is not None:
                counts[name] = got.rows
                if name == "links":
                    counts["links_resolved"] = got.resolved
        layout = None
        if full and (root / INDEX_DIR / "meta.json").is_file():
            try:
                layout = read_layout(root / INDEX_DIR)
            except ValueError as exc:
                unreadable.append(f"{INDEX_DIR}: cannot open the index ({exc})")
    except PermissionError as exc:
        raise SnapshotError(
            f"cannot read {exc.filename or root}: permission denied; the snapshot's files must "
            "be readable by this user (ask its owner to run `chmod -R a+rX` on it)"
        ) from exc
    return Observed(sizes, hashes, counts, tuple(unreadable), layout)


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
        for k in sorted(set(cfg) - {"passage_words", "index"})
    ]
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


def _check_count_sums(manifest: dict[str, Any]) -> list[str]:
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


def compare(manifest: dict[str, Any], seen: Observed) -> list[str]:
    """Every disagreement between ``manifest`` and the files, one line each, naming the field."""
    problems = check_structure(manifest)
    if problems:
        return problems
    expected_sizes: dict[str, int] = manifest.get("file_sizes", {})
    listed: dict[str, str] = manifest["files"]
    problems += [f"files[{rel}]: missing" for rel in sorted(set(listed) - set(seen.sizes))]
    problems += [
        f"files: {rel} is not in the manifest" for rel in sorted(set(seen.sizes) - set(listed))
    ]
    problems += [
        f"file_sizes[{rel}]: {seen.sizes[rel]} bytes on disk, manifest {size}"
        for rel, size in sorted(expected_sizes.items())
        if rel in seen.sizes and seen.sizes[rel] != size
    ]
    if seen.hashes is not None:
        problems += [
            f"files[{rel}]: changed (sha256 {seen.hashes[rel][:12]}..., manifest {digest[:12]}...)"
            for rel, digest in sorted(listed.items())
            if rel in seen.hashes and seen.hashes[rel] != digest
        ]
    problems += list(seen.unreadable)
    if problems:
        return problems
    counts = manifest["counts"]
    if seen.counts is not None:
        problems += [
            f"counts.{key}: manifest {counts[key]}, the tables have {seen.counts[key]}"
            for key in DERIVED_COUNTS
            if counts[key] != seen.counts[key]
        ]
    problems += _check_count_sums(manifest)
    recorded = manifest["provenance_sha256"]
    problems += [
        f"{key}: edited since the build (sha256 {digest[:12]}..., "
        f"provenance_sha256.{key} {recorded[key][:12]}...)"
        for key, digest in provenance_sha256(manifest).items()
        if digest != recorded[key]
    ]
    if seen.hashes is not None:
        tables = {name: listed[fname] for name, fname in TABLE_FILES.items()}
        recomputed = compute_snapshot_id(tables, manifest["content_config"])
        if recomputed != manifest["snapshot_id"]:
            problems.append(
                f"snapshot_id / content_config: the id of the tables and content_config is "
                f"{recomputed[:12]}..., the manifest's snapshot_id {manifest['snapshot_id'][:12]}..."
            )
    layout = manifest.get("index_layout")
    if seen.layout is not None and layout is not None:
        for key, value in seen.layout.to_dict().items():
            if layout[key] != value:
                problems.append(
                    f"index_layout.{key}: manifest {layout[key]!r}, the index has {value!r}"
                )
    return problems


def verify_snapshot(root: Path, manifest: dict[str, Any], full: bool) -> list[str]:
    """Check ``manifest`` against the files under ``root`` (hashes too if ``full``).

    Raises:
        SnapshotError: A file cannot be read (permissions, not corruption).
    """
    return compare(manifest, observe(root, full))
