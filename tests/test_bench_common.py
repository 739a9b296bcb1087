"""The benchmarks' measuring helpers: the code each side of a comparison runs, and no build
left running when a benchmark is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_world_build  # noqa: E402
from common import run_measured  # noqa: E402


def _tree(path: Path) -> Path:
    pkg = path / "wikigym"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    return path


def test_each_side_runs_its_own_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -m wikigym`` (like ``-c``) run from the repository root imports the root's
    wikigym whatever PYTHONPATH says; a side's build runs in its own tree, so it imports
    that tree."""
    tree = _tree(tmp_path / "other").resolve()
    monkeypatch.setenv("PYTHONPATH", str(tree))
    cmd = [sys.executable, "-c", "import wikigym; print(wikigym.__file__)"]
    from_root = run_measured(cmd)["stdout"].strip()
    assert not Path(from_root).resolve().is_relative_to(tree)  # the trap the bench fell in
    assert Path(run_measured(cmd, cwd=tree)["stdout"].strip()).resolve().is_relative_to(tree)
    assert bench_world_build._imports_from(tree).is_relative_to(tree)


def test_run_measured_child_dies_with_the_benchmark(tmp_path: Path) -> None:
    mark = tmp_path / "child.pid"
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from common import run_measured; "
        "run_measured(['sh', '-c', 'echo $$ > ' + sys.argv[2] + '; exec sleep 60'])"
    )
    bench = subprocess.Popen([sys.executable, "-c", code, str(ROOT / "benchmarks"), str(mark)])
    deadline = time.monotonic() + 30
    while not (mark.is_file() and mark.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(mark.read_text())
    os.kill(bench.pid, signal.SIGKILL)
    bench.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(child, signal.SIGKILL)
    pytest.fail("the measured command outlived the benchmark that ran it")
