"""Snapshots are read-only data: read-only mounts, other users, every manifest field checked,
no path in SQL text, a read-only ``corpus sql``, and no build leftovers after ``kill -9``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from wikigym.cli import main as cli
from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
from wikigym.corpora.manifest import sha256_file
from wikigym.corpora.manifest_schema import INFORMATIONAL
from wikigym.corpora.staging import (
    clean_stale_siblings,
    host_tag,
    process_start_time,
    stale_siblings,
)
from wikigym.corpora.verify import compare, observe
from wikigym.errors import SnapshotCorruptedError, SnapshotError

ROOT = Path(__file__).resolve().parents[1]
KILT = "wiki/kilt-99articles.jsonl"
QUERIES = ["anarchism political philosophy", "the history of", "city river", "born"]


@pytest.fixture(scope="module")
def kilt(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kilt") / "snap"
    build_snapshot([open_build_source(shared_data / KILT)], out, progress=False)
    return out


def _behaviour(snap: Snapshot) -> dict[str, Any]:
    """What a user of the snapshot sees (to compare two snapshots)."""
    last = snap.page(snap.num_articles - 1)
    return {
        "id": snap.snapshot_id,
        "articles": snap.num_articles,
        "passages": snap.num_passages,
        "index": snap.index_config,
        "search": {q: [(h.passage_id, h.score) for h in snap.search(q, 10)] for q in QUERIES},
        "all": len(snap.search("the", 10**9)),
        "last": None if last is None else (last.title, len(last.passages)),
        "sql": snap.sql("SELECT count(*) AS n FROM passages").column("n")[0].as_py(),
    }


def _tree(root: Path) -> dict[str, tuple[int, str]]:
    """Mode and sha256 of every file under ``root``."""
    return {
        p.relative_to(root).as_posix(): (p.stat().st_mode, sha256_file(p))
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


# The child imports everything first, then (optionally) drops to another uid: that uid may
# not read the interpreter's files, only the snapshot's.
_CHILD = """
import json, os, sys
from wikigym.corpora import Snapshot
from wikigym.errors import SnapshotError
import wikigym.corpora.verify, duckdb, tantivy, pyarrow.parquet
path, uid = sys.argv[1], int(sys.argv[2])
if uid:
    os.setgroups([]); os.setgid(uid); os.setuid(uid)
try:
    s = Snapshot.open(path, verify="full")
except SnapshotError as exc:
    print(json.dumps({"error": type(exc).__name__, "message": str(exc)})); sys.exit(0)
print(json.dumps({
    "uid": os.getuid(),
    "search": [[h.passage_id, h.score] for h in s.search("anarchism political philosophy", 5)],
    "page": s.page(s.num_articles - 1).title,
    "sql": s.sql("SELECT count(*) AS n FROM passages").column("n")[0].as_py(),
}))
"""


def _run_child(path: Path, uid: int = 0, wrap: list[str] | None = None) -> dict[str, Any]:
    cmd = [*(wrap or []), sys.executable, "-c", _CHILD, str(path), str(uid)]
    done = subprocess.run(cmd, env=_child_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _expected(snap: Snapshot) -> dict[str, Any]:
    return {
        "search": [
            [h.passage_id, h.score] for h in snap.search("anarchism political philosophy", 5)
        ],
        "page": snap.page(snap.num_articles - 1).title,  # type: ignore[union-attr]
        "sql": snap.num_passages,
    }


@pytest.fixture
def world_readable_tmp() -> Iterator[Path]:
    """A folder another uid can traverse (pytest's own tmp folders are 0700)."""
    path = Path(tempfile.mkdtemp(prefix="wikigym-trust-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for p in [path, *path.rglob("*")]:
            if not p.is_symlink():
                p.chmod(p.stat().st_mode | stat.S_IWUSR)
        shutil.rmtree(path, ignore_errors=True)


needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to switch uid / mount"
)


# ---- permissions and read-only mounts ------------------------------------------------------
@pytest.mark.parametrize("mask", [0o022, 0o027])
def test_build_writes_files_by_the_umask(shared_data: Path, tmp_path: Path, mask: int) -> None:
    old = os.umask(mask)
    try:
        build_snapshot([open_build_source(shared_data / KILT)], tmp_path / "s", progress=False)
    finally:
        os.umask(old)
    root = tmp_path / "s"
    modes = {
        p.relative_to(root).as_posix(): stat.S_IMODE(p.stat().st_mode)
        for p in [root, *root.rglob("*")]
    }
    assert "index/meta.json" in modes and "index/.managed.json" in modes
    for rel, mode in modes.items():
        want = 0o777 & ~mask if (root / rel).is_dir() else 0o666 & ~mask
        assert mode == want, (rel, oct(mode), oct(want))


@needs_root
def test_opens_as_another_user_from_a_read_only_tree(kilt: Path, world_readable_tmp: Path) -> None:
    snap = shutil.copytree(kilt, world_readable_tmp / "snap")
    for p in [snap, *snap.rglob("*")]:  # chmod -R a-w
        p.chmod(stat.S_IMODE(p.stat().st_mode) & ~0o222)
    before = _tree(snap)
    got = _run_child(snap, uid=65534)
    assert got.pop("uid") == 65534
    assert got == _expected(Snapshot.open(kilt))
    assert _tree(snap) == before  # only read


@needs_root
def test_a_folder_another_user_cannot_enter_is_not_missing(
    kilt: Path, world_readable_tmp: Path
) -> None:
    snap = shutil.copytree(kilt, world_readable_tmp / "snap")
    snap.chmod(0o700)
    got = _run_child(snap, uid=65534)
    assert got["error"] == "SnapshotError" and "permission denied" in got["message"], got


@needs_root
def test_opens_from_a_read_only_bind_mount(kilt: Path, tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    snap = shutil.copytree(kilt, tmp_path / "snap")
    for lock in snap.rglob("*.lock"):
        lock.unlink()  # nothing to reuse: the open must not need to create a lock file
    wrap = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(snap), str(snap)]
    probe = subprocess.run([*wrap, "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"bubblewrap cannot make a mount namespace here: {probe.stderr[-200:]!r}")
    got = _run_child(snap, wrap=wrap)
    got.pop("uid")
    assert got == _expected(Snapshot.open(kilt))
    assert not list(snap.rglob("*.lock"))


@needs_root
def test_unreadable_files_are_a_permission_error_not_corruption(
    kilt: Path, world_readable_tmp: Path
) -> None:
    snap = shutil.copytree(kilt, world_readable_tmp / "snap")
    (snap / "index" / "meta.json").chmod(0o600)  # what builds before this fix left
    got = _run_child(snap, uid=65534)
    assert got["error"] == "SnapshotError", got
    assert "permission denied" in got["message"] and "meta.json" in got["message"]
    (snap / "index" / "meta.json").chmod(0o644)
    (snap / "passages.parquet").chmod(0o600)
    got = _run_child(snap, uid=65534)
    assert got["error"] == "SnapshotError" and "passages.parquet" in got["message"], got


# ---- the manifest: every behavioural field verified, by name -------------------------------
def _diff(a: Any, b: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths where two JSON values differ (a renamed key gives its old and new path)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                out.append((*path, key))
            else:
                out += _diff(a[key], b[key], (*path, key))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            p for i, (x, y) in enumerate(zip(a, b, strict=True)) for p in _diff(x, y, (*path, i))
        ]
    return [] if a == b and type(a) is type(b) else [path]


def _informational(path: tuple[Any, ...]) -> bool:
    return any(path[: len(p)] == p for p in INFORMATIONAL)


def _named(path: tuple[Any, ...], message: str) -> bool:
    """The refusal names the field: its top-level key, and for nested objects with fixed keys
    (counts, tables, content_config, index_layout, build_config) the key below it."""
    if not path:
        return True
    top = str(path[0])
    if top not in message:
        return False
    fixed = ("counts", "tables", "index_layout", "build_config", "provenance_sha256")
    if top in fixed and len(path) > 1:
        return f"{top}.{path[1]}" in message or f"{top}: " in message
    return True


_CANDIDATES = '019afx-."e ,:]}'


def _one_char_edits(text: str, step: int = 1) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """One-character replacements (from a fixed set, and the next code point) at every
    ``step``-th position that keep the manifest valid JSON and change its value."""
    base = json.loads(text)
    for i in range(0, len(text), step):
        ch = text[i]
        for rep in dict.fromkeys([chr(ord(ch) + 1), *_CANDIDATES]):
            if rep == ch:
                continue
            edited = text[:i] + rep + text[i + 1 :]
            try:
                value = json.loads(edited)
            except ValueError:
                continue
            if not isinstance(value, dict) or not _diff(base, value):
                continue
            yield i, edited, value


def _sweep_manifest(
    snapshot: Snapshot, tmp_path: Path, capsys: pytest.CaptureFixture[str], step: int
) -> None:
    """Flip characters of a real manifest: a full verify refuses every edit that changes a
    value, naming the field; an edit of an informational field, opened unverified, changes
    nothing a user sees."""
    copy = shutil.copytree(snapshot.path, tmp_path / "snap")
    text = (copy / "manifest.json").read_text(encoding="utf-8")
    base = json.loads(text)
    seen = observe(copy, full=True)  # the files do not change; the manifest does
    assert compare(base, seen) == []
    refused: list[tuple[str, dict[str, Any]]] = []
    informational: list[str] = []
    for i, edited, value in _one_char_edits(text, step):
        paths = _diff(base, value)
        problems = compare(value, seen)
        message = "; ".join(problems)
        assert problems, ("accepted", paths, text[max(0, i - 40) : i + 40])
        assert all(_named(p, message) for p in paths), (text[max(0, i - 40) : i + 40], message)
        refused.append((edited, value))
        if all(_informational(p) for p in paths):
            informational.append(edited)
    assert len(refused) > 1000 and informational  # the sweep reached every part of the file
    reference = _behaviour(snapshot)
    for edited in informational[:: max(1, len(informational) // 10)]:
        (copy / "manifest.json").write_text(edited, encoding="utf-8")
        assert _behaviour(Snapshot.open(copy, verify="none")) == reference
    # The real entry points (open, `corpus verify`) agree with compare() and name the field.
    for edited, value in refused[:: max(1, len(refused) // 15)]:
        (copy / "manifest.json").write_text(edited, encoding="utf-8")
        with pytest.raises(SnapshotError):
            Snapshot.open(copy, verify="full")
        capsys.readouterr()
        assert cli(["corpus", "verify", str(copy)]) == 1
        err = capsys.readouterr().err
        assert all(_named(p, err) for p in _diff(base, value)), err
    print(f"one-char edits: {len(refused)}, all refused; {len(informational)} informational")


def test_every_manifest_edit_is_refused_by_name(
    enwiki_snapshot: Snapshot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every 7th character of the enwiki manifest (redirects, links, facts, skipped pages)."""
    _sweep_manifest(enwiki_snapshot, tmp_path, capsys, step=7)


@pytest.mark.slow
def test_manifest_edits_exhaustive(
    enwiki_snapshot: Snapshot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every character of the manifest (about 37,000 valid edits; ~90 s)."""
    _sweep_manifest(enwiki_snapshot, tmp_path, capsys, step=1)


@pytest.mark.parametrize(
    ("field", "value"),
    [("articles", "fewer"), ("passages", 1), ("links", 0), ("facts", 7), ("links_resolved", 1)],
)
def test_counts_come_from_the_tables(
    enwiki_snapshot: Snapshot,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    field: str,
    value: object,
) -> None:
    copy = shutil.copytree(enwiki_snapshot.path, tmp_path / "snap")
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    counts = manifest["counts"]
    counts[field] = counts["articles"] // 4 if value == "fewer" else value
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(SnapshotCorruptedError, match=rf"counts\.{field}"):
        Snapshot.open(copy)
    with pytest.raises(SnapshotCorruptedError, match=rf"counts\.{field}"):
        Snapshot.open(copy, verify="sizes")
    assert cli(["corpus", "verify", str(copy)]) == 1
    assert f"counts.{field}" in capsys.readouterr().err
    # Unverified, the snapshot still behaves by its tables, not by the edited counts.
    assert _behaviour(Snapshot.open(copy, verify="none")) == _behaviour(enwiki_snapshot)


# ---- no path in SQL text -------------------------------------------------------------------
@pytest.mark.parametrize("name", ["s' || '", "it's", 'q"uote\\d'])
def test_hostile_directory_names(shared_data: Path, kilt: Path, tmp_path: Path, name: str) -> None:
    """A quote in a snapshot's path must neither break the SQL nor redirect it: ``s' || '``
    once made the views read the sibling ``s``."""
    shutil.copytree(kilt, tmp_path / "s")  # the sibling a spliced path would reach
    out = tmp_path / name
    build_snapshot(
        [open_build_source(shared_data / "wiki" / "wikitext")], out, BuildConfig(), progress=False
    )
    snap = Snapshot.open(out)
    other = Snapshot.open(tmp_path / "s")
    assert snap.num_articles != other.num_articles
    for view in ("articles", "passages", "links", "facts"):
        n = snap.sql(f"SELECT count(*) AS n FROM {view}").column("n")[0].as_py()
        assert n == pq.ParquetFile(out / f"{view}.parquet").metadata.num_rows, view
    titles = snap.sql("SELECT title FROM articles ORDER BY doc_id").column("title").to_pylist()
    assert titles == [snap.title_of(d) for d in range(snap.num_articles)]
    assert (
        snap.sql("SELECT count(*) AS n FROM passages").column("n")[0].as_py() == snap.num_passages
    )
    assert cli(["corpus", "verify", str(out)]) == 0


# ---- corpus sql is read-only ---------------------------------------------------------------
def _refused_queries(snap: Path, tmp: Path) -> list[tuple[str, Path | None]]:
    return [
        (
            f"COPY (SELECT 1 AS x) TO '{snap}/articles.parquet' (FORMAT parquet, USE_TMP_FILE false)",
            None,
        ),
        (f"COPY articles TO '{tmp}/out.csv'", tmp / "out.csv"),
        (f"COPY (SELECT 1) TO '{tmp}/out2.csv'", tmp / "out2.csv"),
        (f"SELECT 1; COPY (SELECT 1) TO '{tmp}/two.csv'", tmp / "two.csv"),
        (f"ATTACH '{tmp}/x.db' AS x", tmp / "x.db"),
        (f"EXPORT DATABASE '{tmp}/exported'", tmp / "exported"),
        ("INSTALL fts", None),
        ("LOAD fts", None),
        ("SET enable_external_access = true", None),
        ("SET threads = 8", None),
        ("RESET lock_configuration", None),
        ("PRAGMA enable_profiling", None),
        ("SELECT * FROM read_csv('/etc/passwd')", None),
        (f"SELECT * FROM read_text('{snap}/manifest.json')", None),
        (f"SELECT * FROM glob('{snap}/*')", None),
        ("CREATE VIEW articles AS SELECT 1 AS doc_id", None),
        ("CREATE TABLE t AS SELECT 1", None),
        ("SELEC 1", None),
        ("SELECT nope FROM articles", None),
    ]


def test_corpus_sql_is_read_only(
    kilt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = shutil.copytree(kilt, tmp_path / "snap")
    before = {p.name: sha256_file(p) for p in snap.glob("*.parquet")}
    for query, created in _refused_queries(snap, tmp_path):
        assert cli(["corpus", "sql", str(snap), query]) == 1, query
        out = capsys.readouterr()
        lines = out.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("wikigym: error: "), (query, out.err)
        assert "Traceback" not in out.err and out.out == ""
        if created is not None:
            assert not created.exists(), query
    assert {p.name: sha256_file(p) for p in snap.glob("*.parquet")} == before
    assert cli(["corpus", "verify", str(snap)]) == 0
    for ok in ["DESCRIBE articles", "SHOW TABLES", "SELECT count(*) AS n FROM passages"]:
        assert cli(["corpus", "sql", str(snap), ok]) == 0, ok
    capsys.readouterr()
    with pytest.raises(SnapshotError, match="read-only: a COPY statement"):
        Snapshot.open(snap).sql(f"COPY articles TO '{tmp_path}/api.csv'")


def test_corpus_sql_error_is_one_line_in_a_real_process(kilt: Path) -> None:
    for query in ["SELEC 1", f"COPY articles TO '{kilt.parent}/x.csv'"]:
        done = subprocess.run(
            [sys.executable, "-m", "wikigym", "corpus", "sql", str(kilt), query],
            env=_child_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 1
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (kilt.parent / "x.csv").exists()


# A child that runs `corpus sql` and reports its exit status, stderr and peak memory.
_SQL_CHILD = """
import contextlib, io, json, sys
from wikigym.cli import main
err = io.StringIO()
with contextlib.redirect_stderr(err):
    code = main(["corpus", "sql", *sys.argv[1:]])
# VmHWM: this program's peak (ru_maxrss would count the forked parent's pages before exec)
with open("/proc/self/status") as f:
    peak = next(int(x.split()[1]) for x in f if x.startswith("VmHWM:")) // 1024
print(json.dumps({"code": code, "err": err.getvalue(), "peak_mb": peak}))
"""


@pytest.mark.parametrize(
    ("query", "budget"),
    [
        # One huge value, which DuckDB's own limit does not count; the default budget.
        ("SELECT length(repeat('a', 2000000000)) AS n", None),
        ("SELECT length(string_agg(text, '')) AS n FROM passages, range(4000)", 256),
    ],
    ids=["one-huge-string", "aggregate"],
)
def test_corpus_sql_stays_within_its_memory_limit(
    kilt: Path, query: str, budget: int | None
) -> None:
    """Issue 33: `corpus sql` holds a query to --memory-mb (default 1024 MiB), in one line."""
    argv = [] if budget is None else ["--memory-mb", str(budget)]
    done = subprocess.run(
        [sys.executable, "-c", _SQL_CHILD, str(kilt), query, *argv],
        env=_child_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["code"] == 1, report
    lines = report["err"].strip().splitlines()
    mb = budget or 1024
    assert len(lines) == 1 and "Out of Memory" in lines[0] and f"--memory-mb {mb}" in lines[0]
    assert report["peak_mb"] < mb + 400, report  # the budget over the process's own ~200 MB


def test_sql_limits_of_the_api(kilt: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import duckdb

    from wikigym.errors import ConfigError

    monkeypatch.chdir(tmp_path)
    snap = Snapshot.open(kilt, sql_memory_mb=32, sql_threads=2)
    settings = "SELECT current_setting('threads') AS t, current_setting('memory_limit') AS m"
    assert snap.sql(settings).to_pylist() == [{"t": 2, "m": "32.0 MiB"}]
    with pytest.raises(duckdb.OutOfMemoryException):
        snap.sql(
            "SELECT count(*) FROM (SELECT repeat('x', 100) || i::VARCHAR AS s "
            "FROM range(2000000) t(i) ORDER BY s)"
        )
    assert list(tmp_path.iterdir()) == []  # nothing spilled into the working directory
    assert Snapshot.open(kilt).sql(settings).to_pylist()[0]["t"] == 1  # the default
    for bad in ({"sql_memory_mb": 8}, {"sql_threads": 0}, {"search_threads": 0}):
        with pytest.raises(ConfigError):
            Snapshot.open(kilt, **bad)  # type: ignore[arg-type]


# ---- no build leftovers after kill -9 ------------------------------------------------------
_BUILD = """
import sys
from wikigym.corpora.default import build_world_snapshot
build_world_snapshot(int(sys.argv[2]), 3, sys.argv[1], progress=False)
"""


def _start_build(out: Path, articles: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", _BUILD, str(out), str(articles)],
        env=_child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _hidden(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def _wait_for(parent: Path, marker: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while not any(marker in n for n in _hidden(parent)):
        assert proc.poll() is None, "the build ended before its temporary folder was seen"
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_killed_build_leftovers_are_removed_by_the_next_build(
    shared_data: Path, tmp_path: Path
) -> None:
    proc = _start_build(tmp_path / "killed", 600)
    _wait_for(tmp_path, ".killed.building-", proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    left = _hidden(tmp_path)
    assert any(".killed.world-" in n for n in left) and any(".killed.building-" in n for n in left)
    assert [p.name for p in stale_siblings(tmp_path)] == left
    build_snapshot([open_build_source(shared_data / KILT)], tmp_path / "next", progress=False)
    assert _hidden(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["next"]


def test_a_running_build_is_left_alone(shared_data: Path, tmp_path: Path) -> None:
    proc = _start_build(tmp_path / "running", 300)
    try:
        _wait_for(tmp_path, ".running.building-", proc)
        proc.send_signal(signal.SIGSTOP)  # alive, and certain to still be building
        mine = _hidden(tmp_path)
        build_snapshot([open_build_source(shared_data / KILT)], tmp_path / "other", progress=False)
        assert _hidden(tmp_path) == mine and stale_siblings(tmp_path) == []
    finally:
        proc.send_signal(signal.SIGCONT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    assert _hidden(tmp_path) == []
    assert Snapshot.open(tmp_path / "running", verify="full").num_articles > 0


def test_owner_is_pid_and_start_time(tmp_path: Path) -> None:
    """A live PID with another start time is a reused PID (stale); another host's or PID
    namespace's folders are never touched; other names are never touched."""
    pid = os.getpid()
    start = process_start_time(pid)
    assert start is not None and start > 0
    tag = host_tag()
    live = tmp_path / f".a.building-{tag}-{pid}-{start}-x1"
    reused = tmp_path / f".a.building-{tag}-{pid}-{start + 1}-x2"
    foreign = tmp_path / f".a.world-{'0' * 8 if tag != '0' * 8 else '1' * 8}-{pid}-1-x3"
    unrelated = tmp_path / ".a.building-notours"
    for p in (live, reused, foreign, unrelated):
        p.mkdir()
    assert clean_stale_siblings(tmp_path) == [reused]
    assert sorted(_hidden(tmp_path)) == sorted(p.name for p in (live, foreign, unrelated))


def test_cached_default_from_an_older_manifest_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A default built before a manifest field existed would now be refused: the cache
    rebuilds it in place (same content, same id) instead of failing every env."""
    from wikigym.corpora import default
    from wikigym.defaults import cache_dir

    monkeypatch.setenv("WIKIGYM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(default, "DEFAULT_ARTICLES", 60)
    path = default.ensure_default_snapshot(cache_dir(), progress=False)
    first = Snapshot.open(path, verify="full").snapshot_id
    built = (path / "manifest.json").stat().st_mtime_ns
    assert default.ensure_default_snapshot(cache_dir(), progress=False) == path
    assert (path / "manifest.json").stat().st_mtime_ns == built  # current: not rebuilt
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    del manifest["provenance_sha256"]  # what the previous version wrote
    (path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(SnapshotCorruptedError, match="provenance_sha256: missing"):
        Snapshot.open(path)
    assert default.ensure_default_snapshot(cache_dir(), progress=False) == path
    assert Snapshot.open(path, verify="full").snapshot_id == first
    assert _hidden(path.parent) == []


_HOLD = """
import os, sys, time
from wikigym.corpora import Snapshot
import wikigym.corpora.verify, duckdb, tantivy, pyarrow.parquet
os.setgroups([]); os.setgid(65534); os.setuid(65534)
s = Snapshot.open(sys.argv[1])
print(s._searcher._opened.shadow, flush=True)
if sys.argv[2] == "hold":
    time.sleep(600)
"""


@needs_root
def test_private_index_folders_of_killed_readers_are_removed(
    kilt: Path, world_readable_tmp: Path
) -> None:
    snap = shutil.copytree(kilt, world_readable_tmp / "snap")
    tmp = world_readable_tmp / "tmp"
    tmp.mkdir()
    tmp.chmod(0o1777)
    env = {**_child_env(), "TMPDIR": str(tmp)}
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(snap), "hold"], env=env, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None
    shadow = Path(holder.stdout.readline().strip())
    assert shadow.parent == tmp and shadow.is_dir()
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=60)
    assert shadow.is_dir()  # a killed reader cannot clean up
    done = subprocess.run(
        [sys.executable, "-c", _HOLD, str(snap), "exit"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert not shadow.exists()
    assert list(tmp.iterdir()) == []  # the second reader removed its own folder at exit
