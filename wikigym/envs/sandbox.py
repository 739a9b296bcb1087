"""A sandbox for model-written Python: the `python(code)` tool of the environments.

Each run starts a fresh interpreter inside Linux namespaces made by bubblewrap (`bwrap`):

- Filesystem: a new root that holds only read-only binds of `/usr` (with the `/lib`, `/lib64`,
  `/bin` links or binds the host uses), the interpreter's own prefix (mounted at
  `/opt/python`, so host paths such as `/root/...` do not even appear), numpy if the host has it
  (read-only, at `/sandbox/site`), the user code (read-only at `/sandbox/main.py`), a size-capped
  tmpfs `/tmp` (the only writable place, and the working directory), `/proc` of the sandbox's
  own PID namespace and a read-only minimal `/dev`. Nothing of `/etc`, `/home`, `/root`, `/work`
  is bound. The prefix's `site-packages` is hidden under an empty tmpfs.
- Network: a new, empty network namespace (connections fail at once).
- Processes: a new PID namespace; killing bwrap (which the parent does on timeout, on output
  overflow and at the end) kills everything in it.
- Identity: run as root (the usual case in containers), bwrap makes no user namespace and the
  prelude drops to a fresh unprivileged uid (>= 1,000,000, unique per concurrent run) before the
  user code runs, so `RLIMIT_NPROC` (which root ignores) really caps processes, and signals to
  anything outside fail. Run as another user, bwrap makes a user namespace; `RLIMIT_NPROC` is
  then counted over all processes of that host user, so the cap is set to the processes that
  user already has plus `max_processes`.
- Limits: `RLIMIT_CPU`, `RLIMIT_AS` (memory), `RLIMIT_NPROC`, `RLIMIT_FSIZE`, set by the trusted
  prelude before the user code; wall time and output size are enforced by the parent, which
  reads both pipes incrementally and never holds more than `max_output_bytes` of each.
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
import select
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from wikigym.envs.codes import SandboxCode

__all__ = ["PythonSandbox", "SandboxLimits", "SandboxResult"]

# Stable error codes of SandboxResult.error.
ERROR_TIMEOUT = SandboxCode.TIMEOUT
ERROR_MEMORY = SandboxCode.MEMORY
ERROR_KILLED = SandboxCode.KILLED
ERROR_OUTPUT_LIMIT = SandboxCode.OUTPUT_LIMIT
ERROR_NONZERO_EXIT = SandboxCode.NONZERO_EXIT
ERROR_UNAVAILABLE = SandboxCode.UNAVAILABLE

#: Host packages bound read-only into the sandbox (with their `<name>.libs` sibling) if present.
SANDBOX_PACKAGES: tuple[str, ...] = ("numpy",)

_PREFIX_IN_SANDBOX = "/opt/python"
_SITE_IN_SANDBOX = "/sandbox/site"
_CODE_IN_SANDBOX = "/sandbox/main.py"
_UID_BASE = 1_000_000
_TRUNCATION_MARKER = "\n[output truncated at {n} bytes]\n"
_READ_CHUNK = 65_536
_run_counter = itertools.count()

# The trusted prelude: runs before the user code, inside the sandbox.
# argv: code_path seed uid cpu_s memory_bytes nproc fsize_bytes site_dir run_tag
_PRELUDE = r"""
import os, sys, resource, random
code_path, seed, uid, cpu, mem, nproc, fsize, site = sys.argv[1:9]
seed, uid, cpu, mem, nproc, fsize = int(seed), int(uid), int(cpu), int(mem), int(nproc), int(fsize)
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

_UNAVAILABLE_HELP = (
    "The python tool is disabled: {reason}. It runs model-written code only inside Linux "
    "namespaces. To enable it, install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`) "
    "and run where user namespaces are allowed (not in a container that forbids them), or pass "
    "allow_unsafe=True to PythonSandbox to run code WITHOUT isolation (trusted code only)."
)
_UNSAFE_NOTE = "[unsafe: no sandbox; the code ran as a plain subprocess with rlimits only]\n"


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one run.

    Attributes:
        cpu_seconds: CPU time (RLIMIT_CPU, rounded up to whole seconds).
        wall_seconds: wall-clock time, enforced by the parent (kills the whole sandbox).
        memory_mb: address space (RLIMIT_AS) in MiB.
        max_processes: processes and threads of the run (RLIMIT_NPROC).
        max_output_bytes: bytes kept of stdout and of stderr each; more stops the run.
        max_file_bytes: largest file the code may write (RLIMIT_FSIZE); /tmp holds at most
            16 times this in total.
    """

    cpu_seconds: float = 5.0
    wall_seconds: float = 10.0
    memory_mb: int = 512
    max_processes: int = 16
    max_output_bytes: int = 16_384
    max_file_bytes: int = 1_048_576

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "wall_seconds", "memory_mb", "max_processes"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"SandboxLimits.{name} must be > 0, got {value!r}")
        for name in ("max_output_bytes", "max_file_bytes"):
            value = getattr(self, name)
            if value < 1:
                raise ValueError(f"SandboxLimits.{name} must be >= 1, got {value!r}")


@dataclass(frozen=True)
class SandboxResult:
    """Outcome of one run.

    Attributes:
        stdout: what the code printed (decoded as UTF-8, bad bytes replaced), possibly truncated.
        stderr: its error output (tracebacks), or the reason the tool is unavailable.
        exit_code: the interpreter's exit status as bwrap reports it (128+N when killed by
            signal N); None when the parent killed the run (timeout, output limit) or it never ran.
        timed_out: the wall or CPU time limit stopped the run.
        truncated: output went past max_output_bytes and was cut (a marker line says so).
        error: None on success, else one of "timeout", "memory", "killed", "output_limit",
            "nonzero_exit", "unavailable".
    """

    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    truncated: bool
    error: str | None


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


@functools.lru_cache(maxsize=8)
def _probe(bwrap_path: str) -> tuple[bool, str]:
    """Start `print(1)` in a sandbox once; cached per bwrap path."""
    if shutil.which(bwrap_path) is None:
        return False, f"bubblewrap not found at {bwrap_path!r}"
    if not sys.platform.startswith("linux"):
        return False, f"Linux namespaces are not available on {sys.platform}"
    layout = _interpreter_layout()
    if not layout.executable:
        return False, (
            f"the interpreter {os.path.realpath(sys.executable)!r} is outside its prefix "
            f"{layout.prefix!r}"
        )
    sandbox = PythonSandbox(SandboxLimits(wall_seconds=20.0), bwrap_path=bwrap_path)
    result = sandbox._run_isolated("print(1)", 0)
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
    ) -> None:
        """Create a sandbox; never raises for an unusable machine (see `run`).

        Args:
            limits: resource limits of every run; defaults to SandboxLimits().
            allow_unsafe: where namespaces are unavailable, run a plain subprocess with rlimits
                only instead of refusing. Never use it for untrusted code.
            bwrap_path: the bubblewrap executable (name looked up on PATH, or a path).
        """
        self.limits = limits if limits is not None else SandboxLimits()
        self.allow_unsafe = allow_unsafe
        self.bwrap_path = bwrap_path

    @staticmethod
    def available() -> tuple[bool, str]:
        """Whether sandboxed runs work here (tried once with `bwrap` on PATH, then cached).

        Returns:
            (usable, reason): reason says which mode works, or why it does not.
        """
        return _probe("bwrap")

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
            return self._run_isolated(code, seed)
        if self.allow_unsafe:
            result = self._run_unsafe(code, seed)
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

    def _prelude_args(
        self, code_path: str, seed: int, uid: int, nproc: int, site: str
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
            str(max(1, math.ceil(lim.cpu_seconds))),
            str(lim.memory_mb * 1024 * 1024),
            str(nproc),
            str(lim.max_file_bytes),
            site,
            tag,
        ]

    def _run_isolated(self, code: str, seed: int) -> SandboxResult:
        layout = _interpreter_layout()
        lim = self.limits
        if os.geteuid() == 0:
            # No user namespace: the prelude drops to a fresh uid (root ignores RLIMIT_NPROC).
            uid = _UID_BASE + ((os.getpid() & 0xFFFF) << 8 | (next(_run_counter) & 0xFF))
            nproc = lim.max_processes
            namespaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
            namespaces += ["--unshare-cgroup-try", "--cap-add", "CAP_SETUID"]
            namespaces += ["--cap-add", "CAP_SETGID"]
        else:
            uid = -1
            nproc = _user_process_count(os.getuid()) + lim.max_processes
            namespaces = ["--unshare-all"]
        site = _SITE_IN_SANDBOX if layout.packages else ""
        args = [self.bwrap_path, *namespaces, "--die-with-parent", "--new-session"]
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
        args += [layout.executable, *self._prelude_args(_CODE_IN_SANDBOX, seed, uid, nproc, site)]
        data = code.encode("utf-8", errors="surrogateescape")
        try:
            # The code goes through a pipe that bwrap copies into the sandbox; a writer thread
            # is not needed for small code, but large code must not block the pipe buffer.
            proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(read_fd,),
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            os.close(read_fd)
            os.close(write_fd)
            return _not_started(f"could not start bubblewrap: {exc}")
        os.close(read_fd)
        return self._collect(proc, write_fd, data)

    def _run_unsafe(self, code: str, seed: int) -> SandboxResult:
        with tempfile.TemporaryDirectory(prefix="wikigym-unsafe-") as work:
            code_path = os.path.join(work, "main.py")
            fd = os.open(code_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(code)
            nproc = _user_process_count(os.getuid()) + self.limits.max_processes
            args = [sys.executable, *self._prelude_args(code_path, seed, -1, nproc, "")]
            env = {**_sandbox_env(), "HOME": work}
            try:
                proc = subprocess.Popen(
                    args,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=work,
                    env=env,
                    start_new_session=True,
                    close_fds=True,
                )
            except OSError as exc:
                return _not_started(f"could not start {sys.executable}: {exc}")
            return self._collect(proc, None, b"")

    # -- collection ----------------------------------------------------------------------

    def _collect(
        self, proc: subprocess.Popen[bytes], code_fd: int | None, code: bytes
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
                            written = os.write(code_fd, pending)  # type: ignore[arg-type]
                        except BrokenPipeError:
                            written = len(pending)
                        pending = pending[written:]
                        if not pending:
                            selector.unregister(code_fd)  # type: ignore[arg-type]
                            os.close(code_fd)  # type: ignore[arg-type]
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
        if exit_code is not None and exit_code == 128 + signal.SIGXCPU:
            timed_out = True
        error = _classify(exit_code, stderr, timed_out, truncated)
        return SandboxResult(stdout, stderr, exit_code, timed_out, truncated, error)


def _sandbox_env() -> dict[str, str]:
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


def _classify(exit_code: int | None, stderr: str, timed_out: bool, truncated: bool) -> str | None:
    if timed_out:
        return ERROR_TIMEOUT
    if truncated:
        return ERROR_OUTPUT_LIMIT
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
    )
