"""Temporary siblings of a snapshot being built: owner-tagged names, stale clean-up, modes.

A build writes into a hidden sibling of its output (``.NAME.building-...``, the generated
dump in ``.NAME.world-...``, the replaced snapshot in ``.NAME.old-...``) and renames it at
the end. A build killed with SIGKILL cannot remove its sibling, so each name records its
owner: a tag of this host and PID namespace, the owner's PID and the owner's start time
(clock ticks since boot, from ``/proc``, so a reused PID is not taken for the owner). The
next build in the same folder removes the siblings whose owner is gone and leaves alone
the ones of a live process, or of another host or PID namespace (it cannot tell those).
The private folders through which a read-only index is opened
(:mod:`wikigym.corpora.readonly`) carry the same owner tag and are cleaned the same way.

A finished snapshot is data for every user who can read it: :func:`apply_modes` gives its
files ``0666`` and its folders ``0777`` less the process umask (Tantivy writes some index
files ``0600``, and ``mkdtemp`` makes ``0700`` folders).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import tempfile
import time
from pathlib import Path

KINDS = ("building", "world", "old")
_OWNER = r"(?P<tag>[0-9a-f]{8})-(?P<pid>\d+)-(?P<start>\d+)-[A-Za-z0-9_]+$"
_SIBLING = re.compile(r"^\..+\.(?:building|world|old)-" + _OWNER)


def process_start_time(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot; None if there is no such process.

    Returns 0 where ``/proc`` is not available but the process exists.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError:
        return _exists_without_proc(pid)
    # Field 2 (the command) may hold spaces and parentheses: split after its last ")".
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[19])  # field 22 of the whole line


def _exists_without_proc(pid: int) -> int | None:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return 0
    return 0


def host_tag() -> str:
    """8 hex digits naming this host and PID namespace (PIDs mean nothing elsewhere)."""
    try:
        pidns = os.readlink("/proc/self/ns/pid")
    except OSError:
        pidns = ""
    return hashlib.sha256(f"{socket.gethostname()}\0{pidns}".encode()).hexdigest()[:8]


def owner_token() -> str:
    """``TAG-PID-START-``: this process, as the name of a folder it owns records it."""
    pid = os.getpid()
    return f"{host_tag()}-{pid}-{process_start_time(pid) or 0}-"


def owner_prefix(out: Path, kind: str) -> str:
    """The name prefix of a ``kind`` sibling of ``out`` owned by this process."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return f".{out.name}.{kind}-{owner_token()}"


def make_sibling(out: Path, kind: str) -> Path:
    """Create an empty, owner-tagged hidden folder next to ``out``."""
    return Path(tempfile.mkdtemp(prefix=owner_prefix(out, kind), dir=out.parent))


def sibling_name(out: Path, kind: str) -> Path:
    """An owner-tagged name next to ``out`` that does not exist yet (for a rename)."""
    return out.parent / (owner_prefix(out, kind) + os.urandom(6).hex())


def make_owned_dir(parent: Path, prefix: str) -> Path:
    """Create an owner-tagged folder ``PREFIX + TAG-PID-START-random`` in ``parent``."""
    return Path(tempfile.mkdtemp(prefix=prefix + owner_token(), dir=parent))


def _owner_alive(pid: int, start: int) -> bool:
    now = process_start_time(pid)
    return now is not None and (start == 0 or now == 0 or now == start)


def _stale(parent: Path, pattern: re.Pattern[str]) -> list[Path]:
    tag = host_tag()
    found = []
    try:
        names = sorted(os.listdir(parent))
    except OSError:
        return []
    for name in names:
        m = pattern.match(name)
        if m is None or m["tag"] != tag:
            continue
        path = parent / name
        if path.is_symlink() or not path.is_dir():
            continue
        if not _owner_alive(int(m["pid"]), int(m["start"])):
            found.append(path)
    return found


def stale_siblings(parent: Path) -> list[Path]:
    """Owner-tagged build folders in ``parent`` whose owner process is gone (sorted)."""
    return _stale(parent, _SIBLING)


def remove_tree(path: str | Path, tries: int = 5, *, quiet: bool = False) -> None:
    """Remove ``path`` and everything under it, retrying while a file appears during the
    walk (a thread or child that is just finishing: Tantivy's writer or reader threads);
    quiet if it is already gone. Still there after ``tries``: the error is raised, unless
    ``quiet`` (a finaliser at exit, where nobody could act on it)."""
    for attempt in range(tries):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            return
        time.sleep(0.05 * (attempt + 1))
    if not quiet:
        shutil.rmtree(path)  # still there: say why, rather than leave it silently


def clean_stale_siblings(parent: Path) -> list[Path]:
    """Remove the build folders in ``parent`` left by killed builds; return them."""
    removed = stale_siblings(parent)
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


def clean_stale_owned(parent: Path, prefix: str) -> list[Path]:
    """Remove the folders made by :func:`make_owned_dir` whose owner is gone; return them."""
    removed = _stale(parent, re.compile("^" + re.escape(prefix) + _OWNER))
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


def current_umask() -> int:
    """The process umask, read without changing it where ``/proc`` allows."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)  # no /proc: the only portable read is a set and restore
    os.umask(mask)
    return mask


def apply_modes(root: Path) -> None:
    """Make every file ``0666 & ~umask`` and every folder ``0777 & ~umask`` under ``root``."""
    mask = current_umask()
    file_mode = 0o666 & ~mask
    dir_mode = 0o777 & ~mask
    os.chmod(root, dir_mode)
    for dirpath, dirnames, filenames in os.walk(root):
        for names, mode in ((dirnames, dir_mode), (filenames, file_mode)):
            for name in names:
                path = os.path.join(dirpath, name)
                if not os.path.islink(path):
                    os.chmod(path, mode)
