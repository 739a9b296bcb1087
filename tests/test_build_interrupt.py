"""A build given up half-way (Ctrl-C, SIGTERM, an error) leaves nothing next to its output.

Tantivy indexes on a thread of its own that keeps writing segment files after
``add_document`` returns; a folder removed while that thread still writes is left behind
with the files written after the walk (seen on a fast CI runner as a stray
``.NAME.building-*`` after SIGTERM).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

import wikigym.corpora.build as build
from wikigym.corpora.default import build_world_snapshot
from wikigym.corpora.index import IndexConfig, PassageIndexWriter
from wikigym.corpora.staging import remove_tree


@pytest.mark.parametrize("threads", [1, 2])
def test_abort_joins_the_indexing_thread(tmp_path: Path, threads: int) -> None:
    """After ``abort`` nothing writes into the index folder any more: it can be removed
    strictly (no ignored error) and stays removed. One thread writes runs of its own;
    several share one writer."""
    path = tmp_path / "index"
    writer = PassageIndexWriter(path, IndexConfig(), threads=threads)
    body = " ".join(f"word{i % 997}" for i in range(200))
    for i in range(20_000):
        writer.add(i, i // 4, f"Title {i}", body)
    writer.abort()
    writer.abort()  # twice is harmless
    shutil.rmtree(path)  # strict: a file appearing during the walk would raise
    time.sleep(0.2)
    assert not path.exists()


def test_remove_tree_is_quiet_when_gone_and_removes_nested(tmp_path: Path) -> None:
    remove_tree(tmp_path / "absent")
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f").write_text("x")
    remove_tree(tmp_path / "a")
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("at", [1, 700, 2_900])
def test_interrupted_world_build_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at: int
) -> None:
    """Interrupted at the first article, mid-stream and near the end of the stream."""
    add = build._Assembler.add
    seen = {"n": 0}

    def interrupted(self: build._Assembler, result: object, source: str) -> None:
        seen["n"] += 1
        if seen["n"] == at:
            raise KeyboardInterrupt
        add(self, result, source)  # type: ignore[arg-type]

    monkeypatch.setattr(build._Assembler, "add", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_world_snapshot(3000, 0, tmp_path / "w", progress=False)
    assert sorted(os.listdir(tmp_path)) == []
