"""The embedded default corpus: a generated world, built once into a cache folder.

Which cache, and whether the default is used at all, is decided by :mod:`wikigym.defaults`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from wikigym.corpora.build import BuildConfig, BuildReport, build_snapshot
from wikigym.corpora.manifest import read_manifest
from wikigym.corpora.manifest_schema import FIELDS
from wikigym.corpora.sources import open_build_source
from wikigym.corpora.staging import clean_stale_siblings, make_sibling, remove_tree
from wikigym.errors import BuildError, SnapshotError

DEFAULT_ARTICLES = 3000
DEFAULT_SEED = 0
MIN_WORLD_ARTICLES = 50


def build_world_snapshot(
    articles: int,
    seed: int,
    out: str | Path,
    config: BuildConfig | None = None,
    *,
    overwrite: bool = False,
    progress: bool = True,
    version: str | None = None,
) -> BuildReport:
    """Generate a world (``articles``, ``seed``) and build it into ``out``.

    The generated dump lives in a temporary folder next to ``out`` and is removed after
    the build; its hashes and the generator config are recorded in the manifest.
    ``version``: the world generator version to reproduce (default: the current one).
    """
    from wikigym.corpora.world import GENERATOR_VERSION, WorldConfig, generate_world

    if articles < MIN_WORLD_ARTICLES:
        raise BuildError(
            f"a synthetic world needs at least {MIN_WORLD_ARTICLES} articles (one of every "
            f"entity type), got {articles}"
        )
    out = Path(out).resolve()
    if out.parent.is_dir():
        clean_stale_siblings(out.parent)  # what builds killed here left behind
    if out.exists() and not overwrite:
        raise BuildError(f"{out} exists; pass --overwrite to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    work = make_sibling(out, "world")
    try:
        world = WorldConfig(articles=articles, seed=seed)
        generate_world(world, work, version=version or GENERATOR_VERSION)
        source = open_build_source(work, "world")
        source.name = "synthetic"
        return build_snapshot([source], out, config, overwrite=overwrite, progress=progress)
    finally:
        remove_tree(work)


def default_snapshot_path(cache: Path, version: str | None = None) -> Path:
    """Where the default world snapshot lives in the cache folder ``cache``.

    The name carries the generator version and a hash of the build settings that change
    results, so a release that changes either builds a new default instead of reusing a
    stale one. ``version``: the world generator's (default: the current one; an env id
    pinned to an older world names its own).
    """
    from wikigym.corpora.world import GENERATOR_VERSION

    version = version or GENERATOR_VERSION
    settings = json.dumps(BuildConfig().content_config(), sort_keys=True).encode()
    digest = hashlib.sha256(settings).hexdigest()[:8]
    name = f"world-v{version}-n{DEFAULT_ARTICLES}-s{DEFAULT_SEED}-{digest}"
    return cache / "snapshots" / name


def ensure_default_snapshot(cache: Path, progress: bool = True, version: str | None = None) -> Path:
    """Build the default snapshot into the cache folder ``cache`` unless it is there; return
    its path.

    A cached default whose manifest lacks a field this version verifies (it was built by
    an older wikigym with the same settings) is rebuilt in place: same content, same id.
    """
    path = default_snapshot_path(cache, version)
    if _current(path):
        return path
    try:
        build_world_snapshot(
            DEFAULT_ARTICLES,
            DEFAULT_SEED,
            path,
            overwrite=path.exists(),
            progress=progress,
            version=version,
        )
    except BuildError:
        # Another process may have finished the same build first; its result is identical.
        if not _current(path):
            raise
    return path


def _current(path: Path) -> bool:
    """A snapshot is in ``path`` with every manifest field this version verifies."""
    try:
        return set(FIELDS) <= set(read_manifest(path))
    except SnapshotError:
        return False
