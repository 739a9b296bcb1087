"""A started run, to its end: feed the code, read both pipes within the limits, wait, kill."""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import signal
import subprocess
import time

from wikigym.codes import SandboxCode
from wikigym.sandbox.cgroups import SandboxCgroup
from wikigym.sandbox.limits import LimitPlan, SandboxLimits, cpu_limit
from wikigym.sandbox.result import SandboxResult, classify

_TRUNCATION_MARKER = "\n[output truncated at {n} bytes]\n"
_READ_CHUNK = 65_536
# wait4 reports CPU time sampled by ticks: a run stopped by RLIMIT_CPU at 1 s showed 0.90-1.01
# on a loaded machine. A kill after half the budget counts as the limit; a code that kills
# itself after burning that much is the only run misnamed.
_CPU_REPORTED_FRACTION = 0.5


def collect(
    limits: SandboxLimits,
    proc: subprocess.Popen[bytes],
    code_fd: int | None,
    code: bytes,
    plan: LimitPlan,
    cgroup: SandboxCgroup | None,
    status_fd: int,
) -> SandboxResult:
    """Feed the code, read both pipes within the limits, kill the process group at the end."""
    lim = limits
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
        kill_group(proc)
    try:
        returncode = wait_exit(proc, max(0.0, deadline - time.monotonic()) + 1.0)
    except subprocess.TimeoutExpired:
        # Output pipes closed but the process lingers (e.g. closed its stdout and loops).
        timed_out = True
        kill_group(proc)
        returncode = proc.wait()
    cpu_used = supervisor_cpu(status_fd)
    if code_fd is None and not code:
        # Unsafe mode: no PID namespace, so kill what the code left in its group.
        kill_group(proc)
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
    exit_code: int | None = None if (timed_out or truncated) else exit_status(returncode)
    out_of_memory = cgroup is not None and cgroup.oom_kills() > 0
    note = None
    if timed_out and not truncated:
        note = f"wall time limit of {lim.wall_seconds:g} s exceeded"
    elif (
        exit_code in (128 + signal.SIGKILL, 128 + signal.SIGXCPU)
        and not out_of_memory
        and cpu_used is not None
        and cpu_used >= _CPU_REPORTED_FRACTION * cpu_limit(lim)
    ):
        # RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL one second later if ignored.
        timed_out = True
        note = f"CPU time limit of {cpu_limit(lim)} s exceeded"
    error = classify(exit_code, stderr, timed_out, truncated, out_of_memory)
    if error == SandboxCode.MEMORY:
        note = f"memory limit exceeded: {plan.summary}"
    if note is not None:
        stderr += ("" if not stderr or stderr.endswith("\n") else "\n") + f"[{note}]\n"
    return SandboxResult(stdout, stderr, exit_code, timed_out, truncated, error, plan.mode)


def pipe_with(data: bytes) -> int:
    """The read end of a pipe that holds `data` (which must fit in the pipe's buffer)."""
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, data)
    finally:
        os.close(write_fd)
    return read_fd


def memfd_with(data: bytes) -> int:
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


def supervisor_cpu(status_fd: int) -> float | None:
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


def wait_exit(proc: subprocess.Popen[bytes], timeout: float) -> int:
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


def exit_status(returncode: int) -> int:
    """bwrap reports a signal death of its child as 128+N; map a direct one the same way."""
    return 128 - returncode if returncode < 0 else returncode


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the run's process group (bwrap: its PID namespace dies with it)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
