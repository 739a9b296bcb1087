"""What a sandboxed run returns (:class:`SandboxResult`) and how its end is named."""

from __future__ import annotations

from dataclasses import dataclass

from wikigym.codes import SandboxCode


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


def classify(
    exit_code: int | None, stderr: str, timed_out: bool, truncated: bool, out_of_memory: bool
) -> str | None:
    if timed_out:
        return SandboxCode.TIMEOUT
    if truncated:
        return SandboxCode.OUTPUT_LIMIT
    if out_of_memory:
        return SandboxCode.MEMORY
    if exit_code == 0:
        return None
    tail = stderr.strip().splitlines()[-1:] or [""]
    if tail[0].startswith("MemoryError"):
        return SandboxCode.MEMORY
    if exit_code is not None and exit_code > 128:
        return SandboxCode.KILLED
    return SandboxCode.NONZERO_EXIT


def not_started(reason: str) -> SandboxResult:
    return SandboxResult("", reason, None, False, False, SandboxCode.UNAVAILABLE)


def with_stderr_prefix(result: SandboxResult, prefix: str) -> SandboxResult:
    return SandboxResult(
        result.stdout,
        prefix + result.stderr,
        result.exit_code,
        result.timed_out,
        result.truncated,
        result.error,
        result.limit_mode,
    )
