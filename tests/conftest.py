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
