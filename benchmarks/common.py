"""Shared helpers of the corpora benchmarks: machine facts, timing, tables, result files.

Every benchmark writes ``benchmarks/results/<name>.json`` and ``<name>.md``; both state the
exact command, the machine (CPU, nproc, RAM, load), package versions, git commit and date.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import json
import os
import platform
import resource
import shlex
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Self

import psutil

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
WORK = ROOT / "benchmarks" / "work"  # git-ignored: cached worlds and snapshots
PACKAGES = (
    "wikigym",
    "tantivy",
    "bm25s",
    "numba",
    "PyStemmer",
    "duckdb",
    "duckdb-extension-fts",
    "mwparserfromhell",
    "pyarrow",
    "psutil",
)


def shared_data() -> Path:
    """The shared real-data folder: ``$WIKIGYM_SHARED_DATA``, else ``../shared/data``."""
    env = os.environ.get("WIKIGYM_SHARED_DATA")
    return Path(env) if env else (ROOT.parent / "shared" / "data").resolve()


def command_line() -> str:
    """The command that is running, as a user would type it from the repository root."""
    return shlex.join(["python", *sys.argv])


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out + (" (working tree modified)" if dirty else "")


def versions() -> dict[str, str]:
    """Installed versions of the packages the benchmarks touch."""
    found: dict[str, str] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def machine() -> dict[str, Any]:
    """CPU, cores, RAM and the load average when the benchmark started."""
    return {
        "cpu": _cpu_model(),
        "nproc": os.cpu_count(),
        "ram_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "os": platform.platform(),
        "load_avg_1_5_15": [round(x, 2) for x in os.getloadavg()],
    }


def environment() -> dict[str, Any]:
    """Everything a result file states about how it was produced."""
    return {
        "command": command_line(),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
        "machine": machine(),
        "versions": versions(),
    }


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation; nan for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub Markdown table; floats get 3 significant decimals."""

    def cell(v: Any) -> str:
        if isinstance(v, float):
            if v != v:  # nan
                return "-"
            return f"{v:,.3f}" if abs(v) < 100 else f"{v:,.1f}"
        if isinstance(v, int):
            return f"{v:,}"
        return str(v)

    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_results(name: str, data: dict[str, Any], markdown: str, out: Path = RESULTS) -> Path:
    """Write ``<name>.json`` (data + environment) and ``<name>.md`` (header + body)."""
    out.mkdir(parents=True, exist_ok=True)
    env = environment()
    payload = {"benchmark": name, **env, **data}
    (out / f"{name}.json").write_text(
        json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    m = env["machine"]
    vers = ", ".join(f"{k} {v}" for k, v in env["versions"].items())
    header = (
        f"# {name}\n\n"
        f"- command: `{env['command']}`\n"
        f"- date (UTC): {env['date']}\n"
        f"- git commit: {env['git_commit']}\n"
        f"- machine: {m['cpu']}, nproc {m['nproc']}, RAM {m['ram_gb']} GiB, {m['os']}\n"
        f"- load average at start (1/5/15 min): {m['load_avg_1_5_15']}\n"
        f"- versions: {vers}\n\n"
    )
    path = out / f"{name}.md"
    path.write_text(header + markdown.rstrip() + "\n", encoding="utf-8")
    return path


def timed(func: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call."""
    start = time.perf_counter()
    result = func()
    return time.perf_counter() - start, result


class Poller:
    """A background thread that calls ``_sample`` every ``interval`` s while in a ``with``.

    Subclasses (dataclasses) define ``interval``, ``_stop`` (a ``threading.Event``),
    ``_thread`` and ``_sample``.
    """

    interval: float
    _stop: threading.Event
    _thread: threading.Thread | None

    def _sample(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> Self:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


@dataclass
class TreeMemory(Poller):
    """Peak memory of a process and all its descendants, sampled by a background thread.

    ``peak_rss`` sums RSS over the tree (over-counts pages that forked workers share with
    their parent); ``peak_pss`` sums PSS (shared pages split between sharers; Linux only).
    """

    pid: int
    interval: float = 0.5
    pss_every: int = 4  # PSS reads smaps (costly for big processes): every 4th sample
    peak_rss: int = 0
    peak_pss: int = 0
    peak_procs: int = 0
    samples: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _sample(self) -> None:
        try:
            root = psutil.Process(self.pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return
        full = self.samples % self.pss_every == 0
        rss = pss = 0
        for proc in procs:
            try:
                info = proc.memory_full_info() if full else proc.memory_info()
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
            rss += info.rss
            pss += getattr(info, "pss", info.rss)
        self.peak_rss = max(self.peak_rss, rss)
        if full:
            self.peak_pss = max(self.peak_pss, pss)
        self.peak_procs = max(self.peak_procs, len(procs))
        self.samples += 1


def die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the benchmark dies, so that a killed benchmark
    leaves no build running on (the build cleans up after itself on SIGTERM)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG (Linux)


def run_measured(
    cmd: Sequence[str], interval: float = 0.5, cwd: Path | None = None
) -> dict[str, Any]:
    """Run a command to completion (in ``cwd``, default the repository root); return its
    seconds, CPU seconds and the peak memory of its tree.

    Raises:
        subprocess.CalledProcessError: The command failed (its stderr tail is printed).
    """
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(
        list(cmd),
        cwd=cwd or ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=die_with_parent,
    )
    with TreeMemory(proc.pid, interval) as mem:
        stdout, stderr = proc.communicate()
    seconds = time.perf_counter() - start
    # CPU time of the command's tree (its waited-for processes): what a loaded machine's
    # wall clock hides (another job's share of the cores is not in it).
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        sys.stderr.write(stderr.decode("utf-8", "replace")[-4000:])
        raise subprocess.CalledProcessError(proc.returncode, list(cmd), stdout, stderr)
    return {
        "command": shlex.join(cmd),
        "seconds": seconds,
        "cpu_seconds": cpu,
        "peak_rss_bytes": mem.peak_rss,
        "peak_pss_bytes": mem.peak_pss,
        "peak_processes": mem.peak_procs,
        "samples": mem.samples,
        "stdout": stdout.decode("utf-8", "replace"),
    }


def world_dir(articles: int, seed: int) -> Path:
    return WORK / f"world-n{articles}-s{seed}"


def ensure_world(articles: int, seed: int) -> Path:
    """Generate (once, cached under benchmarks/work) a world of ``articles`` articles."""
    path = world_dir(articles, seed)
    if (path / "world.json").is_file() and (path / ".complete").is_file():
        return path
    try:
        from wikigym.corpora.world import WorldConfig, generate_world
    except ImportError as exc:
        raise SystemExit(
            f"the world generator is not importable yet ({exc}); run the real-text parts only"
        ) from exc
    print(f"generating a world of {articles:,} articles (seed {seed}) into {path} ...", flush=True)
    seconds, _ = timed(lambda: generate_world(WorldConfig(articles=articles, seed=seed), path))
    (path / ".complete").write_text(f"{seconds:.1f} s\n", encoding="utf-8")
    print(f"  generated in {seconds:.1f} s", flush=True)
    return path


def is_current(snap: Path) -> bool:
    """A cached snapshot exists and was built with today's result-changing settings and
    format (otherwise it is rebuilt: e.g. after a change of the index analysis)."""
    from wikigym.corpora import BuildConfig
    from wikigym.corpora.manifest import FIELDS, FORMAT_VERSION

    path = snap / "manifest.json"
    if not path.is_file():
        return False
    manifest = json.loads(path.read_text(encoding="utf-8"))
    return (
        manifest.get("format_version") == FORMAT_VERSION
        and manifest.get("content_config") == BuildConfig().content_config()
        and set(FIELDS) <= set(manifest)  # a field added since (e.g. provenance_sha256)
    )


def build_command(source: Path, out: Path, threads: int) -> list[str]:
    """The CLI command that builds ``source`` into ``out`` (quiet, overwriting)."""
    return [
        sys.executable,
        "-m",
        "wikigym",
        "corpus",
        "build",
        str(source),
        "--out",
        str(out),
        "--threads",
        str(threads),
        "--overwrite",
        "--quiet",
    ]


def ensure_world_snapshot(articles: int, seed: int, threads: int) -> tuple[Path, dict[str, Any]]:
    """Build (once, cached) the snapshot of a generated world through the CLI, measured.

    Returns the snapshot path and the build measurement (seconds, peak RSS/PSS of the
    process tree) saved next to it, from the build that created it.
    """
    world = ensure_world(articles, seed)
    snap = WORK / f"snap-world-n{articles}-s{seed}"
    stats_path = WORK / f"snap-world-n{articles}-s{seed}.build.json"
    if is_current(snap) and stats_path.is_file():
        return snap, json.loads(stats_path.read_text(encoding="utf-8"))
    print(f"building {snap} with {threads} threads ...", flush=True)
    stats = run_measured(build_command(world, snap, threads))
    stats["threads"] = threads
    stats_path.write_text(json.dumps(stats, indent=2) + "\n", encoding="utf-8")
    print(f"  built in {stats['seconds']:.1f} s", flush=True)
    return snap, stats


def real_sources() -> list[Path]:
    """Every real-text source in the shared data folder (largest real corpus we have)."""
    d = shared_data()
    return [
        d / "wiki" / "enwiki-excerpt-206pages.xml.bz2",
        d / "wiki" / "kilt-99articles.jsonl",
        d / "wiki" / "wikitext",
        d / "qa" / "hotpotqa-distractor-300.jsonl",
        d / "wiki" / "dpr-wiki18-1000passages.jsonl",
    ]


def ensure_real_snapshot(threads: int = 2) -> tuple[Path, dict[str, Any]]:
    """Build (once, cached) one snapshot of all real-text sources.

    Returns the snapshot path and the build facts saved next to it (seconds, threads).
    """
    from wikigym.corpora import BuildConfig, build_snapshot, open_build_source

    snap = WORK / "snap-real-all"
    stats_path = WORK / "snap-real-all.build.json"
    if is_current(snap) and stats_path.is_file():
        return snap, json.loads(stats_path.read_text(encoding="utf-8"))
    sources = [open_build_source(p) for p in real_sources()]
    report = build_snapshot(
        sources, snap, BuildConfig(threads=threads), progress=False, overwrite=True
    )
    stats = {
        "seconds": report.seconds,
        "threads": threads,
        "sources": [p.name for p in real_sources()],
        "counts": report.counts(),
    }
    stats_path.write_text(json.dumps(stats, indent=2) + "\n", encoding="utf-8")
    return snap, stats


def gib(n_bytes: float) -> float:
    return n_bytes / 2**30
