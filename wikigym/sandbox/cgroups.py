"""cgroup v2 groups that bound the python sandbox as a whole (memory, processes).

A run gets a fresh child group under a *parent* group that has the ``memory`` controller
enabled for its children (``cgroup.subtree_control``) and is writable by this process: the one
named by ``$WIKIGYM_SANDBOX_CGROUP``, else this process's own group when it qualifies (the
root of the hierarchy, or a group delegated so). Containers and hybrid hosts often offer none;
:func:`find_parent` then says why, and the sandbox falls back to per-process limits.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CGROUP_ENV", "SandboxCgroup", "find_parent", "remove_stale"]

#: Environment variable naming a prepared parent group (a directory in a cgroup2 mount).
CGROUP_ENV = "WIKIGYM_SANDBOX_CGROUP"

_counter = itertools.count()


def _cgroup2_mounts(mountinfo: str) -> list[str]:
    """The cgroup2 mount points listed in /proc/self/mountinfo text, in its order."""
    found = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        fstype = line.split(" - ", 1)[1].split()[0]
        if fstype == "cgroup2":
            found.append(fields[4].replace("\\040", " "))
    return found


def _own_path(cgroup_text: str) -> str | None:
    """This process's cgroup v2 path (the ``0::/path`` line of /proc/self/cgroup)."""
    for line in cgroup_text.splitlines():
        if line.startswith("0::"):
            return line[3:].strip() or "/"
    return None


def _qualifies(folder: Path) -> str | None:
    """None when `folder` can hold sandbox groups, else the reason it cannot."""
    try:
        enabled = (folder / "cgroup.subtree_control").read_text().split()
        available = (folder / "cgroup.controllers").read_text().split()
    except OSError as exc:
        return f"{folder} is not a readable cgroup v2 group ({exc.strerror})"
    if "memory" not in enabled:
        if "memory" not in available:
            return f"the cgroup v2 group {folder} offers no memory controller"
        return f"the memory controller is not enabled for the children of {folder}"
    if not os.access(folder, os.W_OK):
        return f"the cgroup v2 group {folder} is not writable by this user"
    return None


def find_parent(explicit: str | None = None) -> tuple[Path | None, str]:
    """The group to make sandbox groups in, or None and the reason there is none.

    Args:
        explicit: a cgroup v2 directory to use; None for ``$WIKIGYM_SANDBOX_CGROUP`` or this
            process's own group.

    Returns:
        (folder, reason): folder is None when no group qualifies; reason says which folder is
        used, or why none is.
    """
    try:
        mounts = _cgroup2_mounts(Path("/proc/self/mountinfo").read_text())
        own = _own_path(Path("/proc/self/cgroup").read_text())
    except OSError as exc:
        return None, f"cannot read this process's cgroups ({exc.strerror})"
    chosen = explicit or os.environ.get(CGROUP_ENV) or None
    if chosen is not None:
        folder = Path(chosen)
    elif not mounts or own is None:
        return None, "this host has no cgroup v2 hierarchy"
    else:
        folder = Path(mounts[0], own.lstrip("/"))
    reason = _qualifies(folder)
    if reason is not None:
        return None, reason
    # A plain folder with the same file names would take the limits and enforce nothing.
    real = os.path.realpath(folder)
    if not any(real == m or real.startswith(m.rstrip("/") + "/") for m in mounts):
        return None, f"{folder} is not in a cgroup v2 file system"
    return folder, f"cgroup v2 under {folder}"


_GROUP_NAME = re.compile(r"wikigym-sandbox-(\d+)-\d+")


def remove_stale(parent: Path) -> list[str]:
    """Remove the groups of sandbox owners that are gone (a parent killed with SIGKILL).

    Groups of live processes are left alone; a group the kernel still counts as populated
    refuses rmdir and stays.

    Returns:
        The names removed, sorted.
    """
    removed: list[str] = []
    try:
        entries = sorted(parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _GROUP_NAME.fullmatch(entry.name)
        if match is None or _alive(int(match.group(1))):
            continue
        with contextlib.suppress(OSError):
            entry.rmdir()
            removed.append(entry.name)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class SandboxCgroup:
    """One run's group: created with its limits, removed (with what is left in it) at the end.

    Attributes:
        path: the group's directory.
    """

    path: Path

    @classmethod
    def create(cls, parent: Path, memory_bytes: int, max_pids: int) -> SandboxCgroup:
        """Make a fresh group under `parent` with `memory_bytes` of memory and no swap.

        Args:
            parent: a folder found by :func:`find_parent`.
            memory_bytes: ``memory.max`` of the whole group.
            max_pids: ``pids.max`` (processes and threads), where the pids controller is on.

        Raises:
            OSError: the group could not be made or limited (nothing is left behind).
        """
        path = parent / f"wikigym-sandbox-{os.getpid()}-{next(_counter)}"
        path.mkdir(mode=0o755)
        group = cls(path)
        try:
            enabled = (parent / "cgroup.subtree_control").read_text().split()
            group._write("memory.max", str(memory_bytes))
            if (path / "memory.swap.max").exists():
                group._write("memory.swap.max", "0")
            if (path / "memory.oom.group").exists():
                group._write("memory.oom.group", "1")  # one OOM kill ends the whole run
            if "pids" in enabled:
                group._write("pids.max", str(max_pids))
        except OSError:
            group.remove()
            raise
        return group

    @property
    def procs_file(self) -> str:
        """The file a process writes ``0`` to, to move itself into the group."""
        return str(self.path / "cgroup.procs")

    def _write(self, name: str, value: str) -> None:
        (self.path / name).write_text(value)

    def _events(self, name: str) -> dict[str, int]:
        try:
            text = (self.path / name).read_text()
        except OSError:
            return {}
        out: dict[str, int] = {}
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if value.strip().isdigit():
                out[key] = int(value)
        return out

    def oom_kills(self) -> int:
        """Processes the kernel killed for the group's memory limit."""
        return self._events("memory.events").get("oom_kill", 0)

    def remove(self) -> None:
        """Kill what is left in the group and remove it (waits up to 2 s for it to empty)."""
        with contextlib.suppress(OSError):
            self._write("cgroup.kill", "1")
        deadline = time.monotonic() + 2.0
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return  # still busy: left for the kernel to empty; named by our pid
                time.sleep(0.01)
