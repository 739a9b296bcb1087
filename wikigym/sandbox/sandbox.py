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
- No nested namespaces, no mounts: a seccomp filter (:mod:`wikigym.sandbox.seccomp`, loaded by
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
  (:mod:`wikigym.sandbox.cgroups`), each run gets its own group with `memory.max = memory_mb`,
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

import functools
import os
import platform
import shutil
import subprocess
import sys
import tempfile

from wikigym.codes import SandboxCode
from wikigym.sandbox.bwrap import bwrap_command, command_line
from wikigym.sandbox.cgroups import CGROUP_ENV, SandboxCgroup
from wikigym.sandbox.host import cgroup_parent, interpreter_layout, sandbox_env, user_process_count
from wikigym.sandbox.limits import (
    MODE_CGROUP,
    MODE_PER_PROCESS,
    MODE_UNSAFE,
    LimitPlan,
    SandboxLimits,
    per_process_plan,
)
from wikigym.sandbox.prelude import prelude_args
from wikigym.sandbox.process import collect, memfd_with, pipe_with
from wikigym.sandbox.result import SandboxResult, not_started, with_stderr_prefix
from wikigym.sandbox.seccomp import namespace_filter

__all__ = ["PythonSandbox"]

_UNAVAILABLE_HELP = (
    "The python tool is disabled: {reason}. It runs model-written code only inside Linux "
    "namespaces. To enable it, install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`) "
    "and run where user namespaces are allowed (not in a container that forbids them), or pass "
    "allow_unsafe=True to PythonSandbox to run code WITHOUT isolation (trusted code only)."
)
_UNSAFE_NOTE = "[unsafe: no sandbox; the code ran as a plain subprocess with rlimits only]\n"


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
    layout = interpreter_layout()
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
                :mod:`wikigym.sandbox.cgroups`).
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
            return with_stderr_prefix(result, _UNSAFE_NOTE)
        return SandboxResult(
            stdout="",
            stderr=_UNAVAILABLE_HELP.format(reason=reason),
            exit_code=None,
            timed_out=False,
            truncated=False,
            error=SandboxCode.UNAVAILABLE,
        )

    # -- modes ---------------------------------------------------------------------------

    def _plan(self, *, isolated: bool) -> LimitPlan:
        lim = self.limits
        if not isolated:
            return per_process_plan(lim, MODE_UNSAFE, "unsafe mode: no sandbox, no cgroup")
        parent, reason = cgroup_parent(self.cgroup_parent, os.environ.get(CGROUP_ENV))
        if parent is None:
            return per_process_plan(lim, MODE_PER_PROCESS, reason)
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

    def _run_isolated(self, code: str, seed: int, plan: LimitPlan) -> SandboxResult:
        layout = interpreter_layout()
        lim = self.limits
        program = namespace_filter()
        if program is None:
            return not_started(f"no seccomp filter is known for {platform.machine()}")
        cgroup = None
        if plan.cgroup_parent is not None:
            try:
                # pids.max also counts bwrap's outer process, its pid 1 and the supervisor.
                cgroup = SandboxCgroup.create(
                    plan.cgroup_parent, lim.memory_mb * 1024 * 1024, lim.max_processes + 3
                )
            except OSError as exc:
                reason = f"could not make a cgroup v2 group: {exc.strerror or exc}"
                plan = per_process_plan(lim, MODE_PER_PROCESS, reason)
        bwrap = shutil.which(self.bwrap_path)
        if bwrap is None:
            if cgroup is not None:
                cgroup.remove()
            return not_started(f"bubblewrap not found at {self.bwrap_path!r}")
        read_fd, write_fd = os.pipe()
        filter_fd = pipe_with(program)  # the program is far smaller than a pipe's buffer
        status_read, status_write = os.pipe()
        command = bwrap_command(
            self.bwrap_path,
            lim,
            plan,
            layout,
            seed=seed,
            code_fd=read_fd,
            filter_fd=filter_fd,
            status_fd=status_write,
        )
        # bwrap's own options (host paths among them) go through a file descriptor, so that
        # the sandbox's pid 1 (bwrap, readable in the user-namespace mode) shows in
        # /proc/1/cmdline only `bwrap --args N` and the command.
        options_fd = memfd_with(b"".join(a.encode() + b"\0" for a in command.options))
        args = command_line(
            bwrap, options_fd, command, None if cgroup is None else cgroup.procs_file
        )
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
                env=sandbox_env(),
            )
        except OSError as exc:
            for fd in (read_fd, write_fd, filter_fd, options_fd, status_read, status_write):
                os.close(fd)
            if cgroup is not None:
                cgroup.remove()
            return not_started(f"could not start bubblewrap: {exc}")
        for fd in (read_fd, filter_fd, options_fd, status_write):
            os.close(fd)
        try:
            return collect(lim, proc, write_fd, data, plan, cgroup, status_read)
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
            nproc = user_process_count(os.getuid()) + plan.processes + 1
            status_read, status_write = os.pipe()
            prelude = prelude_args(
                self.limits, code_path, seed, -1, nproc, plan.process_memory_mb, "", status_write
            )
            args = [sys.executable, *prelude]
            env = {**sandbox_env(), "HOME": work}
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
                return not_started(f"could not start {sys.executable}: {exc}")
            os.close(status_write)
            try:
                return collect(self.limits, proc, None, b"", plan, None, status_read)
            finally:
                os.close(status_read)
