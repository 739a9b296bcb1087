"""SIGTERM (what Slurm, Kubernetes and ``timeout`` send) ends every long command as Ctrl-C does:
it stops, removes what it made (hidden build siblings, partial outputs, worker processes), prints
one line and exits 143. Each command runs as a real subprocess and gets SIGTERM mid-work.

On 3c40d63 every one of these exited 143 with no message, and ``corpus build`` left its
``.NAME.building-*`` and ``.NAME.world-*`` folders behind.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil  # the dev extra's
import pytest

from wikigym.corpora import Snapshot
from wikigym.corpora.default import build_world_snapshot
from wikigym.synth.generate import SynthConfig, generate_tasks

ROOT = Path(__file__).resolve().parents[1]
WIKIGYM = [sys.executable, "-m", "wikigym"]
SYNTH = [sys.executable, "-m", "wikigym.synth.cli"]
HAS_TRL = importlib.util.find_spec("trl") is not None
TERMINATED = 128 + signal.SIGTERM


class Running:
    """A command started in ``cwd`` with its own cache; stdout and stderr go to files."""

    def __init__(self, cmd: list[str], cwd: Path, cache: Path) -> None:
        self.cwd = cwd
        self.err = cwd / "stderr.txt"
        env = dict(os.environ, PYTHONPATH=str(ROOT), WIKIGYM_CACHE=str(cache))
        with self.err.open("w") as err, (cwd / "stdout.txt").open("w") as out:
            self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err)
        self.ps = psutil.Process(self.proc.pid)
        self.children: list[psutil.Process] = []

    def wait_until(self, ready: Callable[[], bool], what: str, timeout: float = 240.0) -> None:
        """Poll until ``ready()`` (or fail naming ``what``); remember the process's children."""
        deadline = time.monotonic() + timeout
        while not ready():
            if self.proc.poll() is not None:
                pytest.fail(f"exited {self.proc.returncode} before {what}: {self.err.read_text()}")
            if time.monotonic() > deadline:
                self.proc.kill()
                pytest.fail(f"no {what} within {timeout} s")
            time.sleep(0.05)
        try:
            self.children = self.ps.children(recursive=True)
        except psutil.NoSuchProcess:
            self.children = []

    def busy_for(self, cpu_seconds: float) -> Callable[[], bool]:
        """Ready once the command has used ``cpu_seconds`` of CPU (imports done, working)."""

        def ready() -> bool:
            try:
                times = self.ps.cpu_times()
            except psutil.NoSuchProcess:
                return False
            return times.user + times.system >= cpu_seconds

        return ready

    def terminate(self) -> str:
        """Send SIGTERM; check the exit status, the one line and that no child outlives it."""
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=120)
        stderr = self.err.read_text()
        # Progress bars rewrite their line with \r: the last line is what a log file shows last.
        lines = stderr.replace("\r", "\n").strip().splitlines()
        last = lines[-1] if lines else "(nothing on stderr)"
        assert rc == TERMINATED, stderr
        assert last.endswith(": terminated (SIGTERM)"), stderr
        assert "Traceback" not in stderr, stderr
        gone, alive = psutil.wait_procs(self.children, timeout=10)
        assert not alive, f"children left running: {alive}"
        return stderr


def hidden(folder: Path) -> list[str]:
    """What a command may leave by mistake: hidden siblings and partial outputs."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def leftovers(*folders: Path) -> list[str]:
    return [f"{folder.name}/{name}" for folder in folders for name in hidden(folder)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A small generated world and 60 easy tasks of it."""
    root = tmp_path_factory.mktemp("sigterm-world")
    build_world_snapshot(600, 0, root / "world", progress=False)
    snap = Snapshot.open(root / "world")
    tasks = generate_tasks(snap, SynthConfig(difficulty="easy", n=60, seed=0))
    tasks.save(root / "tasks.jsonl")
    return root / "world", root / "tasks.jsonl"


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path]:
    cache = tmp_path / "cache"
    cache.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    return work, cache


@pytest.mark.parametrize("stage", ["world", "building"])
def test_corpus_build_synthetic(place: tuple[Path, Path], stage: str) -> None:
    """Terminated while it generates the world dump, and while it builds the snapshot (with
    its parsing workers running): no ``.w.world-*`` or ``.w.building-*`` folder stays."""
    work, cache = place
    cmd = [*WIKIGYM, "corpus", "build", "synthetic", "--articles", "40000", "--out", "w"]
    run = Running([*cmd, "--threads", "2"], work, cache)
    run.wait_until(lambda: any(f".w.{stage}-" in n for n in hidden(work)), f".w.{stage}-*")
    if stage == "building":  # the workers are forked once the build has read its first batch
        run.wait_until(lambda: len(run.ps.children()) >= 1, "build workers")
    run.terminate()
    assert leftovers(work, cache) == [] and not (work / "w").exists()


def test_synth_generate_on_the_default_world(place: tuple[Path, Path]) -> None:
    """With no ``--corpus`` it first builds the default world into the cache: terminated
    there, the cache keeps no half-built snapshot."""
    work, cache = place
    run = Running([*SYNTH, "generate", "--n", "50", "--out", "t.jsonl"], work, cache)
    snapshots = cache / "snapshots"
    run.wait_until(
        lambda: snapshots.is_dir() and any(".building-" in n for n in hidden(snapshots)),
        "the default world's build",
    )
    run.terminate()
    assert leftovers(work, snapshots) == [] and not (work / "t.jsonl").exists()


def test_synth_generate(place: tuple[Path, Path], world: tuple[Path, Path]) -> None:
    work, cache = place
    snap, _ = world
    cmd = [*SYNTH, "generate", "--difficulty", "phd", "--n", "100000", "--corpus", str(snap)]
    run = Running([*cmd, "--out", "t.jsonl"], work, cache)
    run.wait_until(run.busy_for(2.5), "generation")
    run.terminate()
    assert leftovers(work) == [] and not (work / "t.jsonl").exists()


def test_eval(place: tuple[Path, Path], world: tuple[Path, Path]) -> None:
    work, cache = place
    snap, tasks = world
    cmd = [*WIKIGYM, "eval", "--tasks", str(tasks), "--corpus", str(snap), "--agent", "heuristic"]
    # 20,000 episodes (the tasks repeated): still running when SIGTERM comes, however loaded.
    run = Running([*cmd, "--episodes", "20000", "--report", "r"], work, cache)
    run.wait_until(lambda: any(n.endswith(".r") for n in hidden(work)), "the partial report")
    run.terminate()
    assert leftovers(work) == [] and not (work / "r").exists()


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TRL, reason="needs the train extra")
@pytest.mark.parametrize("stage", ["tiny model", "GRPO"])
def test_train_grpo(place: tuple[Path, Path], stage: str) -> None:
    """Terminated while the tiny model is built into the cache, and during GRPO steps: no run
    directory, no partial one, no half-built model in the cache."""
    work, cache = place
    if stage == "GRPO":  # the tiny model first, so that the run reaches its steps
        from wikigym.trainers.grpo import TINY_MODEL_DIRNAME
        from wikigym.trainers.tiny import build_tiny_model

        build_tiny_model(cache / TINY_MODEL_DIRNAME, seed=0)
    cmd = [*WIKIGYM, "train", "grpo", "--preset", "cpu-tiny", "--env", "Calc-v0"]
    run = Running([*cmd, "--output-dir", "run", "--max-steps", "50"], work, cache)
    run.wait_until(lambda: f"[wikigym] {stage}" in run.err.read_text(), f"the {stage} stage")
    run.terminate()
    folders = [work, cache] + [cache / "snapshots"] * (cache / "snapshots").is_dir()
    assert leftovers(*folders) == [] and not (work / "run").exists()
    if stage == "tiny model":  # the default world it reads is whole and stays; no model
        assert not any("tiny" in p.name for p in cache.iterdir())


def test_an_interruption_wrapped_by_a_c_extension_still_ends_as_one() -> None:
    """SIGTERM raised while pydantic-core ran our serializer came back as a
    PydanticSerializationError (seen under load in test_eval): it still exits 143, one line."""
    import argparse
    import contextlib
    import io

    from wikigym.cliutil import CliParser, run_command
    from wikigym.errors import Terminated

    def wrapped(args: argparse.Namespace) -> int:
        try:
            raise Terminated("SIGTERM")
        except Terminated as exc:
            raise RuntimeError("Error calling function `_omit_empty_unresolved`") from exc

    def plain_bug(args: argparse.Namespace) -> int:
        raise RuntimeError("a bug")

    for func, code in ((wrapped, 143), (plain_bug, None)):
        parser = CliParser(prog="wikigym")
        parser.set_defaults(func=func)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            if code is None:
                with pytest.raises(RuntimeError, match="a bug"):  # a bug keeps its traceback
                    run_command(parser, [])
                continue
            assert run_command(parser, []) == code
        assert err.getvalue() == "wikigym: terminated (SIGTERM)\n"


SWALLOWING = """
import sys, time
from wikigym.cliutil import CliParser, run_command

def work(args):
    try:  # what a C extension's lazy import does: any failure means "module missing"
        import slow_module  # noqa: F401
    except BaseException:
        pass
    for _ in range(600):  # 60 s of work that SIGTERM must stop
        time.sleep(0.1)
    return 0

parser = CliParser(prog="wikigym")
parser.set_defaults(func=work)
sys.exit(run_command(parser, []))
"""


@pytest.mark.parametrize("where", ["import", "__del__"])
def test_sigterm_where_an_exception_would_be_lost_is_put_off(tmp_path: Path, where: str) -> None:
    """DuckDB's ``execute`` imports pandas lazily and swallows what the import raises: a
    SIGTERM that landed there was lost and eval ran to its end (exit 0). It is put off
    until the import (or a finaliser) is done, then ends the command: 143, one line."""
    marker = tmp_path / "started"
    if where == "import":
        body = f"open({str(marker)!r}, 'w').close()\nimport time\ntime.sleep(1.5)\n"
    else:  # a finaliser's exception is printed as 'ignored' and lost
        body = (
            "import time\nclass Slow:\n    def __del__(self):\n"
            f"        open({str(marker)!r}, 'w').close()\n        time.sleep(1.5)\n"
            "Slow()\n"
        )
    (tmp_path / "slow_module.py").write_text(body)
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")
    proc = subprocess.Popen(
        [sys.executable, "-c", SWALLOWING], env=env, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == TERMINATED, stderr
    assert stderr == "wikigym: terminated (SIGTERM)\n"
    assert time.monotonic() - started < 30  # not after the 60 s of work
