"""The limits of a sandboxed run, and how this host enforces them (:class:`LimitPlan`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from wikigym.errors import SandboxLimitsError

# Memory limit modes (SandboxResult.limit_mode, LimitPlan.mode).
MODE_CGROUP = "cgroup"
MODE_PER_PROCESS = "per-process"
MODE_UNSAFE = "unsafe"

#: The least address space a process gets in the per-process mode (numpy needs about this).
MIN_PROCESS_MB = 128


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


def per_process_plan(lim: SandboxLimits, mode: str, reason: str) -> LimitPlan:
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


def cpu_limit(lim: SandboxLimits) -> int:
    """RLIMIT_CPU takes whole seconds: the limit rounded up."""
    return max(1, math.ceil(lim.cpu_seconds))
