from __future__ import annotations

import os
from pathlib import Path

import pytest

from wikigym.corpora import Snapshot

DATA_DIR = Path(
    os.environ.get(
        "WIKIGYM_SHARED_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
    )
).resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of real test data (../shared/data or $WIKIGYM_SHARED_DATA)."""
    if not DATA_DIR.is_dir():
        pytest.skip(f"shared data not found at {DATA_DIR}; set WIKIGYM_SHARED_DATA")
    return DATA_DIR


@pytest.fixture(scope="session")
def enwiki_snapshot(shared_data: Path, tmp_path_factory: pytest.TempPathFactory):
    """A snapshot of the real enwiki excerpt, built once per session (read-only: never modify
    it in a test; copy it first)."""
    from wikigym.corpora import BuildConfig, build_snapshot, open_build_source

    out = tmp_path_factory.mktemp("enwiki") / "snap"
    src = open_build_source(shared_data / "wiki/enwiki-excerpt-206pages.xml.bz2")
    build_snapshot([src], out, BuildConfig(), progress=False)
    return Snapshot.open(out)


def pytest_configure(config: pytest.Config) -> None:
    """Keep the suite's default world, TaskSet and tiny model out of the user's cache."""
    if "WIKIGYM_CACHE" not in os.environ:
        import tempfile

        path = tempfile.mkdtemp(prefix="wikigym-test-cache-")
        os.environ["WIKIGYM_CACHE"] = path
        config.stash[_CACHE_KEY] = path


def pytest_unconfigure(config: pytest.Config) -> None:
    path = config.stash.get(_CACHE_KEY, None)
    if path:
        import shutil

        shutil.rmtree(path, ignore_errors=True)
        os.environ.pop("WIKIGYM_CACHE", None)


_CACHE_KEY = pytest.StashKey[str]()
