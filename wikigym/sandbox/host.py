"""What this host offers a sandbox: the interpreter's layout, bwrap's options, the cgroup to
use, the environment of a run."""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from wikigym.sandbox.cgroups import find_parent, remove_stale

#: Host packages bound read-only into the sandbox (with their `<name>.libs` sibling) if present.
SANDBOX_PACKAGES: tuple[str, ...] = ("numpy",)

PREFIX_IN_SANDBOX = "/opt/python"
SITE_IN_SANDBOX = "/sandbox/site"
CODE_IN_SANDBOX = "/sandbox/main.py"


@dataclass(frozen=True)
class Layout:
    """Where the interpreter lives on the host and how it is reached in the sandbox."""

    prefix: str  # realpath of sys.base_prefix
    executable: str  # path of the interpreter inside the sandbox
    site_packages: tuple[str, ...]  # host site-packages folders under the prefix, to hide
    packages: tuple[tuple[str, str], ...]  # (host folder, name) bound into SITE_IN_SANDBOX


def interpreter_layout() -> Layout:
    """Find the interpreter's prefix and the packages to expose, from sys.* (no imports)."""
    prefix = os.path.realpath(sys.base_prefix)
    real_exe = os.path.realpath(sys.executable)
    under_usr = prefix == "/usr" or prefix.startswith("/usr/")
    if under_usr:
        executable = real_exe
    elif real_exe.startswith(prefix + os.sep):
        executable = PREFIX_IN_SANDBOX + real_exe[len(prefix) :]
    else:
        executable = ""  # unsupported layout; reported by the probe
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site_packages = tuple(
        str(p)
        for p in (Path(prefix, "lib", version, "site-packages"),)
        if p.is_dir() and not under_usr
    )
    packages: list[tuple[str, str]] = []
    for name in SANDBOX_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        folder = Path(next(iter(spec.submodule_search_locations))).resolve()
        packages.append((str(folder), name))
        libs = folder.parent / f"{name}.libs"
        if libs.is_dir():
            packages.append((str(libs.resolve()), f"{name}.libs"))
    return Layout(prefix, executable, site_packages, tuple(packages))


def system_binds() -> list[str]:
    """Bind /usr read-only and reproduce the host's /lib, /lib64, /bin (links or folders)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/lib", "/lib64", "/bin"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def user_process_count(uid: int) -> int:
    """Processes and threads the host user `uid` has now (RLIMIT_NPROC counts them all)."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid:
                count += len(os.listdir(f"/proc/{entry.name}/task"))
        except OSError:  # the process ended while we looked
            continue
    return count


def kernel_counts_nproc_per_userns() -> bool:
    """Linux 5.14 made RLIMIT_NPROC count the tasks of a uid per user namespace."""
    match = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return match is not None and (int(match.group(1)), int(match.group(2))) >= (5, 14)


@functools.lru_cache(maxsize=8)
def bwrap_options(bwrap_path: str) -> frozenset[str]:
    """The options the installed bwrap lists in its --help (they vary across versions)."""
    try:
        out = subprocess.run(
            [bwrap_path, "--help"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(re.findall(r"^\s+(--[a-z0-9-]+)", out.stdout + out.stderr, re.MULTILINE))


@functools.lru_cache(maxsize=8)
def cgroup_parent(explicit: str | None, from_env: str | None) -> tuple[Path | None, str]:
    """find_parent, once per (argument, environment value): the host does not change. Groups
    left by owners that died are removed then."""
    parent, reason = find_parent(explicit or from_env)
    if parent is not None:
        remove_stale(parent)
    return parent, reason


def sandbox_env() -> dict[str, str]:
    """The whole environment of bwrap and of the sandboxed program (an allow-list)."""
    return {
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONSAFEPATH": "1",
        "PYTHONIOENCODING": "utf-8",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "PATH": "/usr/bin:/bin",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
