"""A sandbox for model-written Python: the `python(code)` tool of the environments.

Each run starts a fresh interpreter inside Linux namespaces made by bubblewrap (`bwrap`):

- Filesystem: a new root that holds only read-only binds of `/usr` (with the `/lib`, `/lib64`,
  `/bin` links or binds the host uses), the interpreter's own prefix (mounted at
  `/opt/python`, so host paths such as `/root/...` do not even appear), numpy if the host has it
  (read-only, at `/sandbox/site`), the user code (read-only at `/sandbox/main.py`), a size-capped
  tmpfs `/tmp` (the only writable place, and the working directory), `/proc` of the sandbox's
  own PID namespace and a read-only minimal `/dev`. Nothing of `/etc`, `/home`, `/root`, `/work`
  is bound. The prefix's `site-packages` is hidden under an empty tmpfs.
- The caller: bwrap starts from the allow-listed environment the code gets (nothing of the
  caller's, whose API keys would otherwise show in `/proc/1/environ`: in the user-namespace
  mode bwrap is the sandbox's pid 1, of the code's own uid), in `/`, with no descriptor but
  its pipes, and reads its options (host paths among them) from a descriptor, so that
  `/proc/1/cmdline` shows none of them.
- Network: a new, empty network namespace (connections fail at once).
- Processes: a new PID namespace; killing bwrap (which the parent does on timeout, on output
  overflow and at the end) kills everything in it.
- No nested namespaces, no mounts: a seccomp filter (:mod:`wikigym.envs.seccomp`, loaded by
  bwrap before the interpreter starts) refuses `unshare`, `setns`, `clone` with namespace
  flags, `clone3`, every mount call and a few other kernel interfaces no Python program needs;
  in the user-namespace mode bwrap's `--disable-userns` closes user namespaces as well, where
  the installed bwrap has it. A machine for which no filter exists gets no sandbox.
- Identity: run as root (the usual case in containers), bwrap makes no user namespace and the
  prelude drops to a fresh unprivileged uid (>= 1,000,000, unique per concurrent run) before the
  user code runs, so `RLIMIT_NPROC` (which root ignores) really caps processes, and signals to
  anything outside fail. Run as another user, bwrap makes a user namespace, in which the kernel
  (5.14 and later) counts `RLIMIT_NPROC` over the sandbox's own processes (on older kernels
  the cap is set to the processes that user already has plus `max_processes`).
- Limits: `RLIMIT_CPU`, `RLIMIT_AS`, `RLIMIT_NPROC`, `RLIMIT_FSIZE`, set by the trusted
  prelude before the user code; wall time and output size are enforced by the parent, which
  reads both pipes incrementally and never holds more than `max_output_bytes` of each. The
  prelude forks and stays behind as a supervisor that reports the code's CPU time (bwrap
  reports only an exit status), so a run the CPU limit killed, even one that ignored SIGXCPU,
  is a `timeout` whose message names the limit (`[CPU time limit of 5 s exceeded]`), and any
  other kill stays `killed`. The supervisor is out of the code's reach: another uid (root
  mode), or non-dumpable with `ptrace` refused by the filter (user-namespace mode).
- Memory, for the sandbox as a whole, in one of two modes (`SandboxResult.limit_mode`,
  `PythonSandbox.limit_plan()`):
  `cgroup`: where a cgroup v2 group with the memory controller is available to this process
  (:mod:`wikigym.envs.cgroups`), each run gets its own group with `memory.max = memory_mb`,
  no swap and `pids.max = max_processes`; an out-of-memory kill is a `memory` error.
  `per-process` (no such group, as in most containers): the run may hold at most
  `n = min(max_processes, max(1, memory_mb // 128))` processes and threads (`RLIMIT_NPROC`),
  each with `memory_mb // n` MiB of address space (`RLIMIT_AS`), so that all of them together
  stay within `memory_mb`. Set `max_processes=1` to give one process the whole budget.
- Determinism: a clean environment (`PYTHONHASHSEED=0`, `HOME=/tmp`, `LANG=C.UTF-8`), `random`
  seeded with `seed`, and `numpy.random` seeded on its first import.

Where bwrap is missing or cannot make namespaces, `run` returns `error="unavailable"` with a
message saying how to enable the tool, unless `allow_unsafe=True`, which runs a plain
subprocess with the same rlimits and no isolation at all (for trusted local experiments only).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import itertools
import math
import os
import platform
import re
import select
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from wikigym.envs.cgroups import CGROUP_ENV, SandboxCgroup, find_parent, remove_stale
from wikigym.envs.codes import SandboxCode
from wikigym.envs.seccomp import namespace_filter
from wikigym.errors import SandboxLimitsError

__all__ = ["LimitPlan", "PythonSandbox", "SandboxLimits", "SandboxResult"]

# Stable error codes of SandboxResult.error.
ERROR_TIMEOUT = SandboxCode.TIMEOUT
ERROR_MEMORY = SandboxCode.MEMORY
ERROR_KILLED = SandboxCode.KILLED
ERROR_OUTPUT_LIMIT = SandboxCode.OUTPUT_LIMIT
ERROR_NONZERO_EXIT = SandboxCode.NONZERO_EXIT
ERROR_UNAVAILABLE = SandboxCode.UNAVAILABLE

# Memory limit modes (SandboxResult.limit_mode, LimitPlan.mode).
MODE_CGROUP = "cgroup"
MODE_PER_PROCESS = "per-process"
MODE_UNSAFE = "unsafe"

#: The least address space a process gets in the per-process mode (numpy needs about this).
MIN_PROCESS_MB = 128

#: Host packages bound read-only into the sandbox (with their `<name>.libs` sibling) if present.
SANDBOX_PACKAGES: tuple[str, ...] = ("numpy",)

_PREFIX_IN_SANDBOX = "/opt/python"
_SITE_IN_SANDBOX = "/sandbox/site"
_CODE_IN_SANDBOX = "/sandbox/main.py"
_UID_BASE = 1_000_000
_TRUNCATION_MARKER = "\n[output truncated at {n} bytes]\n"
_READ_CHUNK = 65_536
_run_counter = itertools.count()
# wait4 reports CPU time sampled by ticks: a run stopped by RLIMIT_CPU at 1 s showed 0.90-1.01
# on a loaded machine. A kill after half the budget counts as the limit; a code that kills
# itself after burning that much is the only run misnamed.
_CPU_REPORTED_FRACTION = 0.5
# Tasks of the sandbox's uid beside the code in the user-namespace mode: bwrap's pid 1 and
# the prelude's supervisor (measured: the code then gets exactly `processes` tasks).
_USERNS_EXTRA_TASKS = 2

# The trusted prelude: runs before the user code, inside the sandbox. It forks: the parent
# stays behind as a supervisor that waits for the child (the user code) with wait4 and writes
# "<wait status> <CPU seconds>" to the status pipe, the only way to tell a kill by RLIMIT_CPU
# from any other SIGKILL (bwrap reports an exit status, not the CPU time); then it exits with
# the child's status (128+N for signal N). Run as root, the supervisor keeps its uid, so the
# code (a fresh uid) cannot signal or trace it; otherwise it makes itself non-dumpable.
# argv: code_path seed uid cpu_s memory_bytes nproc fsize_bytes site_dir status_fd run_tag
_PRELUDE = r"""
import os, sys, resource, random
code_path, seed, uid, cpu, mem, nproc, fsize, site, status_fd = sys.argv[1:10]
seed, uid, cpu, mem, nproc, fsize = int(seed), int(uid), int(cpu), int(mem), int(nproc), int(fsize)
status_fd = int(status_fd)
if uid < 0:  # same uid as the code: /proc/<pid>/mem and ptrace must refuse the supervisor
    import ctypes
    prctl = ctypes.CDLL(None).prctl
    prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0, before the fork: no window for the code
child = os.fork()
if child:
    _, status, usage = os.wait4(child, 0)
    os.write(status_fd, b"%d %.3f\n" % (status, usage.ru_utime + usage.ru_stime))
    code = os.waitstatus_to_exitcode(status)
    os._exit(128 - code if code < 0 else code)
os.close(status_fd)
if uid < 0:
    prctl(4, 1, 0, 0, 0)  # the code's own process stays an ordinary, dumpable one
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
if uid >= 0:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
with open(code_path, encoding="utf-8") as f:
    source = f.read()
random.seed(seed)
if site:
    sys.path.append(site)
    class _SeedNumpy:
        def find_spec(self, name, path=None, target=None, _seed=seed):
            if name != "numpy.random":
                return None
            sys.meta_path.remove(self)
            import importlib.util
            spec = importlib.util.find_spec(name)
            run = spec.loader.exec_module
            def exec_module(module):
                run(module)
                module.seed(_seed)
            spec.loader.exec_module = exec_module
            return spec
    sys.meta_path.insert(0, _SeedNumpy())
sys.argv = [code_path]
exec(compile(source, code_path, "exec"), {"__name__": "__main__", "__file__": code_path,
     "__builtins__": __builtins__})
"""

# sh -c SCRIPT PROCS_FILE BWRAP ARGS...: join the group, then become bwrap.
_INTO_CGROUP = (
    'echo 0 > "$0" || { echo "wikigym: could not move the sandbox into the cgroup $0" >&2; '
    'exit 125; }; exec "$@"'
)

_UNAVAILABLE_HELP = (
    "The python tool is disabled: {reason}. It runs model-written code only inside Linux "
    "namespaces. To enable it, install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`) "
    "and run where user namespaces are allowed (not in a container that forbids them), or pass "
    "allow_unsafe=True to PythonSandbox to run code WITHOUT isolation (trusted code only)."
)
_UNSAFE_NOTE = "[unsafe: no sandbox; the code ran as a plain subprocess with rlimits only]\n"


# (kind, least, most) of each limit; kind "real" takes int or float, "int" only int.
_LIMIT_RULES: dict[str, tuple[str, float, float]] = {
    "cpu_seconds": ("real", 0.0, 86_400.0),
    "wall_seconds": ("real", 0.0, 86_400.0),
    "memory_mb": ("int", 32, 1 << 20),
    "max_processes": ("int", 1, 4096),
    "max_output_bytes": ("int", 1, 1 << 30),
    "max_file_bytes": ("int", 1, 1 << 40),
}


def _check_limit(name: str, value: object) -> float | int:
    """`value` as the type of limit `name`; SandboxLimitsError naming the field otherwise."""
    kind, least, most = _LIMIT_RULES[name]
    ok_type = isinstance(value, int | float) if kind == "real" else isinstance(value, int)
    if isinstance(value, bool) or not ok_type:
        expected = "a number" if kind == "real" else "an integer"
        raise SandboxLimitsError(
            f"sandbox limit {name} must be {expected}, got {type(value).__name__} {value!r}"
        )
    assert isinstance(value, int | float)
    if kind == "real":
        if not (math.isfinite(value) and least < value <= most):
            raise SandboxLimitsError(
                f"sandbox limit {name} must be > {least:g} and <= {most:g} seconds, got {value!r}"
            )
        return float(value)
    if not least <= value <= most:
        raise SandboxLimitsError(
            f"sandbox limit {name} must be between {least:g} and {most:g}, got {value!r}"
        )
    return int(value)


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one run.

    Attributes:
        cpu_seconds: CPU time (RLIMIT_CPU, rounded up to whole seconds).
        wall_seconds: wall-clock time, enforced by the parent (kills the whole sandbox).
        memory_mb: memory of the sandbox as a whole in MiB (see the module docstring for how
            it is enforced with and without a cgroup).
        max_processes: processes and threads of the run (RLIMIT_NPROC; fewer in the
            per-process memory mode).
        max_output_bytes: bytes kept of stdout and of stderr each; more stops the run.
        max_file_bytes: largest file the code may write (RLIMIT_FSIZE); /tmp holds at most
            16 times this in total.

    Raises:
        SandboxLimitsError: a value of the wrong type or out of range (the message names it).
    """

    cpu_seconds: float = 5.0
    wall_seconds: float = 10.0
    memory_mb: int = 512
    max_processes: int = 16
    max_output_bytes: int = 16_384
    max_file_bytes: int = 1_048_576

    def __post_init__(self) -> None:
        for f in fields(self):
            object.__setattr__(self, f.name, _check_limit(f.name, getattr(self, f.name)))

    @classmethod
    def from_value(cls, value: SandboxLimits | Mapping[str, Any] | None) -> SandboxLimits:
        """Limits from an instance, a mapping of some of the fields, or None (the defaults).

        Raises:
            SandboxLimitsError: an unknown field, a bad value, or a value of another type.
        """
        if value is None:
            return cls()
        if isinstance(value, SandboxLimits):
            return value
        if not isinstance(value, Mapping):
            raise SandboxLimitsError(
                "sandbox must be a SandboxLimits, a dict of its fields or None, got "
                f"{type(value).__name__}"
            )
        known = [f.name for f in fields(cls)]
        unknown = sorted(str(k) for k in value if k not in known)
        if unknown:
            raise SandboxLimitsError(
                f"unknown sandbox limit {unknown[0]!r}; expected some of {known}"
            )
        return cls(**dict(value))

    def to_dict(self) -> dict[str, float | int]:
        """The limits as a JSON-able dict (what `from_value` reads back)."""
        return asdict(self)


@dataclass(frozen=True)
class LimitPlan:
    """How the limits are enforced on this host (the same for every run of a sandbox).

    Attributes:
        mode: "cgroup", "per-process" or "unsafe" (see the module docstring).
        processes: processes and threads a run may hold.
        process_memory_mb: address space of each process (RLIMIT_AS), in MiB.
        cgroup_parent: the group runs are made under (cgroup mode), else None.
        summary: the memory limit in a few words (shown to the model when it is exceeded).
        description: one line saying all of the above, and why a cgroup is not used.
    """

    mode: str
    processes: int
    process_memory_mb: int
    cgroup_parent: Path | None
    summary: str
    description: str


@dataclass(frozen=True)
class SandboxResult:
    """Outcome of one run.

    Attributes:
        stdout: what the code printed (decoded as UTF-8, bad bytes replaced), possibly truncated.
        stderr: its error output (tracebacks), or the reason the tool is unavailable; a limit
            that stopped the run adds a last line naming it (``[CPU time limit of 5 s
            exceeded]``).
        exit_code: the interpreter's exit status as bwrap reports it (128+N when killed by
            signal N); None when the parent killed the run (timeout, output limit) or it never ran.
        timed_out: the wall or CPU time limit stopped the run.
        truncated: output went past max_output_bytes and was cut (a marker line says so).
        error: None on success, else one of "timeout", "memory", "killed", "output_limit",
            "nonzero_exit", "unavailable".
        limit_mode: how memory was limited: "cgroup", "per-process", "unsafe"; "" when the
            code did not run.
    """

    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    truncated: bool
    error: str | None
    limit_mode: str = ""


@dataclass(frozen=True)
class _Layout:
    """Where the interpreter lives on the host and how it is reached in the sandbox."""

    prefix: str  # realpath of sys.base_prefix
    executable: str  # path of the interpreter inside the sandbox
    site_packages: tuple[str, ...]  # host site-packages folders under the prefix, to hide
    packages: tuple[tuple[str, str], ...]  # (host folder, name) bound into _SITE_IN_SANDBOX


def _interpreter_layout() -> _Layout:
    """Find the interpreter's prefix and the packages to expose, from sys.* (no imports)."""
    prefix = os.path.realpath(sys.base_prefix)
    real_exe = os.path.realpath(sys.executable)
    under_usr = prefix == "/usr" or prefix.startswith("/usr/")
    if under_usr:
        executable = real_exe
    elif real_exe.startswith(prefix + os.sep):
        executable = _PREFIX_IN_SANDBOX + real_exe[len(prefix) :]
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
    return _Layout(prefix, executable, site_packages, tuple(packages))


def _system_binds() -> list[str]:
    """Bind /usr read-only and reproduce the host's /lib, /lib64, /bin (links or folders)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/lib", "/lib64", "/bin"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def _user_process_count(uid: int) -> int:
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


def _kernel_counts_nproc_per_userns() -> bool:
    """Linux 5.14 made RLIMIT_NPROC count the tasks of a uid per user namespace."""
    match = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return match is not None and (int(match.group(1)), int(match.group(2))) >= (5, 14)


@functools.lru_cache(maxsize=8)
def _bwrap_options(bwrap_path: str) -> frozenset[str]:
    """The options the installed bwrap lists in its --help (they vary across versions)."""
    try:
        out = subprocess.run(
            [bwrap_path, "--help"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(re.findall(r"^\s+(--[a-z0-9-]+)", out.stdout + out.stderr, re.MULTILINE))


@functools.lru_cache(maxsize=8)
def _cgroup_parent(explicit: str | None, from_env: str | None) -> tuple[Path | None, str]:
    """find_parent, once per (argument, environment value): the host does not change. Groups
    left by owners that died are removed then."""
    parent, reason = find_parent(explicit or from_env)
    if parent is not None:
        remove_stale(parent)
    return parent, reason


def _per_process_plan(lim: SandboxLimits, mode: str, reason: str) -> LimitPlan:
    """Split the memory budget over a process cap: processes x per-process limit <= budget."""
    processes = min(lim.max_processes, max(1, lim.memory_mb // MIN_PROCESS_MB))
    each = lim.memory_mb // processes
    return LimitPlan(
        mode=mode,
        processes=processes,
        process_memory_mb=each,
        cgroup_parent=None,
        summary=(
            f"{each} MiB per process, at most {processes} processes and threads "
            f"({processes * each} MiB in all)"
        ),
        description=(
            f"per process ({reason}): at most {processes} processes and threads of {each} MiB "
            f"each, {processes * each} MiB in all"
        ),
    )


@functools.lru_cache(maxsize=8)
def _probe(bwrap_path: str) -> tuple[bool, str]:
    """Start `print(1)` in a sandbox once; cached per bwrap path."""
    if shutil.which(bwrap_path) is None:
        return False, f"bubblewrap not found at {bwrap_path!r}"
    if not sys.platform.startswith("linux"):
        return False, f"Linux namespaces are not available on {sys.platform}"
    if namespace_filter() is None:
        return False, (
            f"no seccomp filter is known for this machine ({platform.machine()}), so nested "
            "namespaces could not be blocked"
        )
    layout = _interpreter_layout()
    if not layout.executable:
        return False, (
            f"the interpreter {os.path.realpath(sys.executable)!r} is outside its prefix "
            f"{layout.prefix!r}"
        )
    sandbox = PythonSandbox(SandboxLimits(wall_seconds=20.0), bwrap_path=bwrap_path)
    result = sandbox._run_isolated("print(1)", 0, sandbox._plan(isolated=True))
    if result.stdout == "1\n" and result.error is None:
        mode = "root: unprivileged uid inside" if os.geteuid() == 0 else "user namespace"
        return True, f"bubblewrap at {shutil.which(bwrap_path)} works ({mode})"
    detail = (result.stderr or result.error or "no output").strip().splitlines()
    return False, f"bubblewrap could not start a sandbox: {detail[-1] if detail else '?'}"


class PythonSandbox:
    """Runs untrusted Python code with no network, no view of the host and hard limits."""

    def __init__(
        self,
        limits: SandboxLimits | None = None,
        *,
        allow_unsafe: bool = False,
        bwrap_path: str = "bwrap",
        cgroup_parent: str | None = None,
    ) -> None:
        """Create a sandbox; never raises for an unusable machine (see `run`).

        Args:
            limits: resource limits of every run; defaults to SandboxLimits().
            allow_unsafe: where namespaces are unavailable, run a plain subprocess with rlimits
                only instead of refusing. Never use it for untrusted code.
            bwrap_path: the bubblewrap executable (name looked up on PATH, or a path).
            cgroup_parent: a cgroup v2 directory to make the runs' groups in; None for
                ``$WIKIGYM_SANDBOX_CGROUP`` or this process's own group (see
                :mod:`wikigym.envs.cgroups`).
        """
        self.limits = limits if limits is not None else SandboxLimits()
        self.allow_unsafe = allow_unsafe
        self.bwrap_path = bwrap_path
        self.cgroup_parent = cgroup_parent

    @staticmethod
    def available() -> tuple[bool, str]:
        """Whether sandboxed runs work here (tried once with `bwrap` on PATH, then cached).

        Returns:
            (usable, reason): reason says which mode works, or why it does not.
        """
        return _probe("bwrap")

    def limit_plan(self) -> LimitPlan:
        """How this sandbox's limits are enforced on this host (cgroup or per process)."""
        usable, _ = _probe(self.bwrap_path)
        return self._plan(isolated=usable or not self.allow_unsafe)

    def run(self, code: str, *, seed: int = 0) -> SandboxResult:
        """Run `code` as a `__main__` module and collect its output.

        Args:
            code: Python source.
            seed: seeds `random` (and `numpy.random` when imported) before the code runs.

        Returns:
            A SandboxResult; failures of the code are results, never exceptions.
        """
        usable, reason = _probe(self.bwrap_path)
        if usable:
            return self._run_isolated(code, seed, self._plan(isolated=True))
        if self.allow_unsafe:
            result = self._run_unsafe(code, seed, self._plan(isolated=False))
            return _with_stderr_prefix(result, _UNSAFE_NOTE)
        return SandboxResult(
            stdout="",
            stderr=_UNAVAILABLE_HELP.format(reason=reason),
            exit_code=None,
            timed_out=False,
            truncated=False,
            error=ERROR_UNAVAILABLE,
        )

    # -- modes ---------------------------------------------------------------------------

    def _plan(self, *, isolated: bool) -> LimitPlan:
        lim = self.limits
        if not isolated:
            return _per_process_plan(lim, MODE_UNSAFE, "unsafe mode: no sandbox, no cgroup")
        parent, reason = _cgroup_parent(self.cgroup_parent, os.environ.get(CGROUP_ENV))
        if parent is None:
            return _per_process_plan(lim, MODE_PER_PROCESS, reason)
        return LimitPlan(
            mode=MODE_CGROUP,
            processes=lim.max_processes,
            process_memory_mb=lim.memory_mb,
            cgroup_parent=parent,
            summary=f"{lim.memory_mb} MiB for the sandbox as a whole",
            description=(
                f"{reason}: {lim.memory_mb} MiB and {lim.max_processes} processes and threads "
                "for the sandbox as a whole"
            ),
        )

    def _prelude_args(
        self,
        code_path: str,
        seed: int,
        uid: int,
        nproc: int,
        memory_mb: int,
        site: str,
        status_fd: int,
    ) -> list[str]:
        lim = self.limits
        tag = f"wgsb-{os.getpid()}-{next(_run_counter)}"
        return [
            "-S",  # no site: site-packages are not on sys.path
            "-s",
            "-B",
            "-c",
            _PRELUDE,
            code_path,
            str(int(seed)),
            str(uid),
            str(_cpu_limit(lim)),
            str(memory_mb * 1024 * 1024),
            str(nproc),
            str(lim.max_file_bytes),
            site,
            str(status_fd),
            tag,
        ]

    def _run_isolated(self, code: str, seed: int, plan: LimitPlan) -> SandboxResult:
        layout = _interpreter_layout()
        lim = self.limits
        program = namespace_filter()
        if program is None:
            return _not_started(f"no seccomp filter is known for {platform.machine()}")
        cgroup = None
        if plan.cgroup_parent is not None:
            try:
                # pids.max also counts bwrap's outer process, its pid 1 and the supervisor.
                cgroup = SandboxCgroup.create(
                    plan.cgroup_parent, lim.memory_mb * 1024 * 1024, lim.max_processes + 3
                )
            except OSError as exc:
                reason = f"could not make a cgroup v2 group: {exc.strerror or exc}"
                plan = _per_process_plan(lim, MODE_PER_PROCESS, reason)
        if os.geteuid() == 0:
            # No user namespace: the prelude drops to a fresh uid (root ignores RLIMIT_NPROC).
            uid = _UID_BASE + ((os.getpid() & 0xFFFF) << 8 | (next(_run_counter) & 0xFF))
            nproc = plan.processes
            namespaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
            namespaces += ["--unshare-cgroup-try", "--cap-add", "CAP_SETUID"]
            namespaces += ["--cap-add", "CAP_SETGID"]
        else:
            uid = -1
            nproc = plan.processes + _USERNS_EXTRA_TASKS
            if not _kernel_counts_nproc_per_userns():
                nproc += _user_process_count(os.getuid())
            namespaces = ["--unshare-all", "--unshare-user"]
            if "--disable-userns" in _bwrap_options(self.bwrap_path):
                namespaces.append("--disable-userns")
        bwrap = shutil.which(self.bwrap_path)
        if bwrap is None:
            return _not_started(f"bubblewrap not found at {self.bwrap_path!r}")
        site = _SITE_IN_SANDBOX if layout.packages else ""
        # bwrap's own options (host paths among them) go through a file descriptor, so that
        # the sandbox's pid 1 (bwrap, readable in the user-namespace mode) shows in
        # /proc/1/cmdline only `bwrap --args N` and the command.
        args = [*namespaces, "--die-with-parent", "--new-session"]
        args += _system_binds()
        for top in ("/opt", "/sandbox", _SITE_IN_SANDBOX):
            args += ["--perms", "0755", "--dir", top]
        if not layout.executable.startswith("/usr/"):
            args += ["--ro-bind", layout.prefix, _PREFIX_IN_SANDBOX]
            for folder in layout.site_packages:
                inside = _PREFIX_IN_SANDBOX + folder[len(layout.prefix) :]
                args += ["--tmpfs", inside]
        for folder, name in layout.packages:
            args += ["--ro-bind", folder, f"{_SITE_IN_SANDBOX}/{name}"]
        read_fd, write_fd = os.pipe()
        args += ["--perms", "0444", "--ro-bind-data", str(read_fd), _CODE_IN_SANDBOX]
        tmp_size = max(4 * 1024 * 1024, 16 * lim.max_file_bytes)
        args += ["--size", str(tmp_size), "--perms", "1777", "--tmpfs", "/tmp"]
        args += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev"]
        args += ["--remount-ro", "/", "--chdir", "/tmp", "--clearenv"]
        for key, value in _sandbox_env().items():
            args += ["--setenv", key, value]
        filter_fd = _pipe_with(program)  # the program is far smaller than a pipe's buffer
        args += ["--seccomp", str(filter_fd)]
        options_fd = _memfd_with(b"".join(a.encode() + b"\0" for a in args))
        status_read, status_write = os.pipe()
        prelude = self._prelude_args(
            _CODE_IN_SANDBOX, seed, uid, nproc, plan.process_memory_mb, site, status_write
        )
        args = [bwrap, "--args", str(options_fd), layout.executable, *prelude]
        if cgroup is not None:
            # A shell moves itself into the group, then becomes bwrap: nothing starts outside.
            args = ["/bin/sh", "-c", _INTO_CGROUP, cgroup.procs_file, *args]
        data = code.encode("utf-8", errors="surrogateescape")
        try:
            # The code goes through a pipe that bwrap copies into the sandbox; a writer thread
            # is not needed for small code, but large code must not block the pipe buffer.
            # Nothing of the caller reaches bwrap: in the user-namespace mode bwrap is the
            # sandbox's pid 1, of the code's own uid, and its /proc/1/environ is readable.
            # So bwrap starts from the allow-listed environment, at /, with only these fds.
            proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(read_fd, filter_fd, options_fd, status_write),
                start_new_session=True,
                close_fds=True,
                cwd="/",
                env=_sandbox_env(),
            )
        except OSError as exc:
            for fd in (read_fd, write_fd, filter_fd, options_fd, status_read, status_write):
                os.close(fd)
            if cgroup is not None:
                cgroup.remove()
            return _not_started(f"could not start bubblewrap: {exc}")
        for fd in (read_fd, filter_fd, options_fd, status_write):
            os.close(fd)
        try:
            return self._collect(proc, write_fd, data, plan, cgroup, status_read)
        finally:
            os.close(status_read)
            if cgroup is not None:
                cgroup.remove()

    def _run_unsafe(self, code: str, seed: int, plan: LimitPlan) -> SandboxResult:
        with tempfile.TemporaryDirectory(prefix="wikigym-unsafe-") as work:
            code_path = os.path.join(work, "main.py")
            fd = os.open(code_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(code)
            # The supervisor is a process of this user too.
            nproc = _user_process_count(os.getuid()) + plan.processes + 1
            status_read, status_write = os.pipe()
            prelude = self._prelude_args(
                code_path, seed, -1, nproc, plan.process_memory_mb, "", status_write
            )
            args = [sys.executable, *prelude]
            env = {**_sandbox_env(), "HOME": work}
            try:
                proc = subprocess.Popen(
                    args,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=work,
                    env=env,
                    pass_fds=(status_write,),
                    start_new_session=True,
                    close_fds=True,
                )
            except OSError as exc:
                os.close(status_read)
                os.close(status_write)
                return _not_started(f"could not start {sys.executable}: {exc}")
            os.close(status_write)
            try:
                return self._collect(proc, None, b"", plan, None, status_read)
            finally:
                os.close(status_read)

    # -- collection ----------------------------------------------------------------------

    def _collect(
        self,
        proc: subprocess.Popen[bytes],
        code_fd: int | None,
        code: bytes,
        plan: LimitPlan,
        cgroup: SandboxCgroup | None,
        status_fd: int,
    ) -> SandboxResult:
        """Feed the code, read both pipes within the limits, kill the process group at the end."""
        lim = self.limits
        deadline = time.monotonic() + lim.wall_seconds
        cap = lim.max_output_bytes
        buffers: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
        selector = selectors.DefaultSelector()
        assert proc.stdout is not None and proc.stderr is not None
        selector.register(proc.stdout, selectors.EVENT_READ, "stdout")
        selector.register(proc.stderr, selectors.EVENT_READ, "stderr")
        pending = memoryview(code)
        if code_fd is not None:
            os.set_blocking(code_fd, False)
            selector.register(code_fd, selectors.EVENT_WRITE, "code")
            if not pending:
                selector.unregister(code_fd)
                os.close(code_fd)
                code_fd = None
        open_streams = 2
        timed_out = truncated = False
        try:
            while open_streams:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                for key, _ in selector.select(timeout=remaining):
                    if key.data == "code":
                        try:
                            written = os.write(key.fd, pending)  # key.fd is code_fd
                        except BrokenPipeError:
                            written = len(pending)
                        pending = pending[written:]
                        if not pending:
                            selector.unregister(key.fd)
                            os.close(key.fd)
                            code_fd = None
                        continue
                    chunk = os.read(key.fd, _READ_CHUNK)
                    if not chunk:
                        selector.unregister(key.fileobj)
                        open_streams -= 1
                        continue
                    buf = buffers[key.data]
                    buf += chunk[: cap + 1 - len(buf)]
                    if len(buf) > cap:
                        truncated = True
                        del buf[cap:]
                        open_streams = 0
                        break
        finally:
            selector.close()
            if code_fd is not None:
                os.close(code_fd)
        if timed_out or truncated:
            _kill_group(proc)
        try:
            returncode = _wait(proc, max(0.0, deadline - time.monotonic()) + 1.0)
        except subprocess.TimeoutExpired:
            # Output pipes closed but the process lingers (e.g. closed its stdout and loops).
            timed_out = True
            _kill_group(proc)
            returncode = proc.wait()
        cpu_used = _supervisor_cpu(status_fd)
        if code_fd is None and not code:
            # Unsafe mode: no PID namespace, so kill what the code left in its group.
            _kill_group(proc)
        proc.stdout.close()
        proc.stderr.close()
        stdout = buffers["stdout"].decode("utf-8", errors="replace")
        stderr = buffers["stderr"].decode("utf-8", errors="replace")
        if truncated:
            marker = _TRUNCATION_MARKER.format(n=cap)
            if len(buffers["stdout"]) >= cap:
                stdout += marker
            else:
                stderr += marker
        exit_code: int | None = None if (timed_out or truncated) else _exit_status(returncode)
        out_of_memory = cgroup is not None and cgroup.oom_kills() > 0
        note = None
        if timed_out and not truncated:
            note = f"wall time limit of {lim.wall_seconds:g} s exceeded"
        elif (
            exit_code in (128 + signal.SIGKILL, 128 + signal.SIGXCPU)
            and not out_of_memory
            and cpu_used is not None
            and cpu_used >= _CPU_REPORTED_FRACTION * _cpu_limit(lim)
        ):
            # RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL one second later if ignored.
            timed_out = True
            note = f"CPU time limit of {_cpu_limit(lim)} s exceeded"
        error = _classify(exit_code, stderr, timed_out, truncated, out_of_memory)
        if error == ERROR_MEMORY:
            note = f"memory limit exceeded: {plan.summary}"
        if note is not None:
            stderr += ("" if not stderr or stderr.endswith("\n") else "\n") + f"[{note}]\n"
        return SandboxResult(stdout, stderr, exit_code, timed_out, truncated, error, plan.mode)


def _cpu_limit(lim: SandboxLimits) -> int:
    """RLIMIT_CPU takes whole seconds: the limit rounded up."""
    return max(1, math.ceil(lim.cpu_seconds))


def _pipe_with(data: bytes) -> int:
    """The read end of a pipe that holds `data` (which must fit in the pipe's buffer)."""
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, data)
    finally:
        os.close(write_fd)
    return read_fd


def _memfd_with(data: bytes) -> int:
    """A file descriptor, at offset 0, of an anonymous file that holds `data` (any size)."""
    fd = os.memfd_create("wikigym-sandbox", os.MFD_CLOEXEC)  # Popen's pass_fds hands it on
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


def _sandbox_env() -> dict[str, str]:
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


def _supervisor_cpu(status_fd: int) -> float | None:
    """CPU seconds of the user code as its supervisor reported them; None if it did not."""
    os.set_blocking(status_fd, False)
    try:
        line = os.read(status_fd, 256).decode("ascii", errors="replace").split()
    except BlockingIOError:
        return None
    try:
        return float(line[1]) if len(line) == 2 else None
    except ValueError:
        return None


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> int:
    """Wait for the exit; a pidfd wakes at once where Popen.wait(timeout) would poll and sleep."""
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(proc.pid)
        except OSError:  # already reaped, or an old kernel
            return proc.wait(timeout=timeout)
        try:
            ready, _, _ = select.select([pidfd], [], [], timeout)
        finally:
            os.close(pidfd)
        if not ready:
            raise subprocess.TimeoutExpired(proc.args, timeout)
        return proc.wait()
    return proc.wait(timeout=timeout)


def _exit_status(returncode: int) -> int:
    """bwrap reports a signal death of its child as 128+N; map a direct one the same way."""
    return 128 - returncode if returncode < 0 else returncode


def _classify(
    exit_code: int | None, stderr: str, timed_out: bool, truncated: bool, out_of_memory: bool
) -> str | None:
    if timed_out:
        return ERROR_TIMEOUT
    if truncated:
        return ERROR_OUTPUT_LIMIT
    if out_of_memory:
        return ERROR_MEMORY
    if exit_code == 0:
        return None
    tail = stderr.strip().splitlines()[-1:] or [""]
    if tail[0].startswith("MemoryError"):
        return ERROR_MEMORY
    if exit_code is not None and exit_code > 128:
        return ERROR_KILLED
    return ERROR_NONZERO_EXIT


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the run's process group (bwrap: its PID namespace dies with it)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _not_started(reason: str) -> SandboxResult:
    return SandboxResult("", reason, None, False, False, ERROR_UNAVAILABLE)


def _with_stderr_prefix(result: SandboxResult, prefix: str) -> SandboxResult:
    return SandboxResult(
        result.stdout,
        prefix + result.stderr,
        result.exit_code,
        result.timed_out,
        result.truncated,
        result.error,
        result.limit_mode,
    )
