from __future__ import annotations

import os
from pathlib import Path

import pytest

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
