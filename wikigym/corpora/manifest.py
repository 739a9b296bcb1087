"""Snapshot manifest: file hashes, row counts, build config and the content id.

Checking a manifest against its files is :mod:`wikigym.corpora.verify`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from wikigym.errors import SnapshotCorruptedError, SnapshotError

# 2: passages.source_passage_id; facts.key, value_text, typed. The facts of a real wiki also
# carry statement and restates (tables.FACTS); a generated world's facts have no such
# columns (tables.WORLD_FACTS), and a reader sees them as null where absent.
FORMAT_VERSION = 2
MANIFEST = "manifest.json"
TABLE_FILES = {
    "articles": "articles.parquet",
    "passages": "passages.parquet",
    "links": "links.parquet",
    "facts": "facts.parquet",
}
INDEX_DIR = "index"
MAX_SKIPPED_NAMED = 10_000  # skipped pages named in the manifest (all are counted)


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def snapshot_files(root: Path) -> list[tuple[str, Path]]:
    """Every content file under ``root`` (not the manifest, not Tantivy's lock files)."""
    out = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel == MANIFEST or path.name.startswith(".tantivy") or rel.endswith(".lock"):
            continue
        out.append((rel, path))
    return out


def hash_files(root: Path) -> dict[str, str]:
    """sha256 of every content file under ``root``, keyed by relative POSIX path."""
    return {rel: sha256_file(path) for rel, path in snapshot_files(root)}


def file_sizes(root: Path) -> dict[str, int]:
    """Size in bytes of every content file under ``root``."""
    return {rel: path.stat().st_size for rel, path in snapshot_files(root)}


def compute_snapshot_id(table_hashes: dict[str, str], content_config: dict[str, Any]) -> str:
    """Content id: sha256 over the table hashes and the config that changes results.

    Paths, times, thread counts and the package version are left out on purpose; the
    index files are too, since Tantivy's segment layout depends on writer threads while
    its results (ties broken by passage_id) do not.
    """
    payload = json.dumps(
        {"format_version": FORMAT_VERSION, "tables": table_hashes, "config": content_config},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode()).hexdigest()


# Fields that nothing reads (the record of how a snapshot was built). Their sha256 is kept
# in the manifest, so `corpus verify` also reports an edit there; not in snapshot_id, which
# must not depend on thread counts or the package version.
# The manifest's top-level fields (manifest_schema checks each one).
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
PROVENANCE_FIELDS = ("build_config", "package_version", "skipped", "source_counts", "sources")


def provenance_sha256(manifest: dict[str, Any]) -> dict[str, str]:
    """sha256 of each provenance field of ``manifest`` (canonical JSON), by field."""
    return {
        key: hashlib.sha256(
            json.dumps(
                manifest.get(key), sort_keys=True, separators=(",", ":"), ensure_ascii=False
            ).encode()
        ).hexdigest()
        for key in PROVENANCE_FIELDS
    }


def write_manifest(root: Path, manifest: dict[str, Any]) -> None:
    text = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    (root / MANIFEST).write_text(text, encoding="utf-8")


def read_manifest(root: Path) -> dict[str, Any]:
    """Load and sanity-check ``manifest.json``.

    Raises:
        SnapshotError: The directory has no readable manifest or an unknown format version.
    """
    path = root / MANIFEST
    try:
        path.stat()
    except PermissionError as exc:  # a folder this user may not enter: not "missing"
        raise SnapshotError(
            f"cannot read {path}: permission denied; the snapshot's files must be readable "
            "by this user (ask its owner to run `chmod -R a+rX` on it)"
        ) from exc
    except OSError:
        pass
    if not path.is_file():
        raise SnapshotError(
            f"{root} is not a wikigym snapshot: {MANIFEST} is missing; "
            "build one with `wikigym corpus build SOURCE --out DIR`"
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except PermissionError as exc:
        raise SnapshotError(
            f"cannot read {path}: permission denied; the snapshot's files must be readable "
            "by this user (ask its owner to run `chmod -R a+rX` on it)"
        ) from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SnapshotCorruptedError(
            f"{path} is not valid JSON ({exc}); rebuild the snapshot"
        ) from exc
    version = manifest.get("format_version") if isinstance(manifest, dict) else None
    if type(version) is not int or version != FORMAT_VERSION:
        got = (
            manifest.get("format_version")
            if isinstance(manifest, dict)
            else type(manifest).__name__
        )
        detail = ""
        if isinstance(manifest, dict) and "format_version" not in manifest:
            # A renamed key: name it (and any other unknown or missing field), not just the version.
            extra = sorted(set(manifest) - set(FIELDS))
            missing = sorted(set(FIELDS) - set(manifest))
            detail = (
                " ("
                + "; ".join(
                    [f"{k}: not a manifest field" for k in extra]
                    + [f"{k}: missing from the manifest" for k in missing]
                )
                + ")"
            )
        raise SnapshotError(
            f"{path}: expected snapshot format_version {FORMAT_VERSION}, got {got!r}{detail}; "
            "rebuild the snapshot with this wikigym version"
        )
    return manifest
