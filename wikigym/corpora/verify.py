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
names of ``skipped`` (listed in :data:`wikigym.corpora.manifest_schema.INFORMATIONAL`).
They change no behaviour, and an edit there is still reported, through
``provenance_sha256``. The field rules that need no file are in
:mod:`wikigym.corpora.manifest_schema`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from wikigym.corpora.index import IndexLayout, read_layout
from wikigym.corpora.manifest import (
    INDEX_DIR,
    TABLE_FILES,
    compute_snapshot_id,
    file_sizes,
    hash_files,
    provenance_sha256,
)
from wikigym.corpora.manifest_schema import check_count_sums, check_structure
from wikigym.errors import SnapshotError

DERIVED_COUNTS = ("articles", "passages", "links", "facts", "links_resolved")


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
                raise  # not corruption: reported below as a permission problem
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
    problems += check_count_sums(manifest)
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
