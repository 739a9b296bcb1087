"""The bubblewrap command of an isolated run: namespaces, binds, the seccomp filter, the prelude."""

from __future__ import annotations

import os
from dataclasses import dataclass

from wikigym.sandbox.host import (
    CODE_IN_SANDBOX,
    PREFIX_IN_SANDBOX,
    SITE_IN_SANDBOX,
    Layout,
    bwrap_options,
    kernel_counts_nproc_per_userns,
    sandbox_env,
    system_binds,
    user_process_count,
)
from wikigym.sandbox.limits import LimitPlan, SandboxLimits
from wikigym.sandbox.prelude import RUN_NUMBERS, prelude_args

_UID_BASE = 1_000_000
# Tasks of the sandbox's uid beside the code in the user-namespace mode: bwrap's pid 1 and
# the prelude's supervisor (measured: the code then gets exactly `processes` tasks).
_USERNS_EXTRA_TASKS = 2

# sh -c SCRIPT PROCS_FILE BWRAP ARGS...: join the group, then become bwrap.
_INTO_CGROUP = (
    'echo 0 > "$0" || { echo "wikigym: could not move the sandbox into the cgroup $0" >&2; '
    'exit 125; }; exec "$@"'
)


@dataclass(frozen=True)
class BwrapCommand:
    """One isolated run: bubblewrap's options (host paths among them: they reach bwrap through
    a descriptor, see :func:`command_line`) and the program it runs (the interpreter and the
    prelude's arguments)."""

    options: list[str]
    program: list[str]


def bwrap_command(
    bwrap_path: str,
    limits: SandboxLimits,
    plan: LimitPlan,
    layout: Layout,
    *,
    seed: int,
    code_fd: int,
    filter_fd: int,
    status_fd: int,
) -> BwrapCommand:
    """The bubblewrap options and program of one isolated run.

    Args:
        bwrap_path: The bubblewrap executable.
        limits: The run's limits.
        plan: How they are enforced here (``plan.processes``, ``plan.process_memory_mb``).
        layout: The interpreter's layout on this host.
        seed: Seeds ``random`` (and ``numpy.random``) in the prelude.
        code_fd: Read end of the pipe that holds the code (bound read-only at
            ``/sandbox/main.py``).
        filter_fd: Read end of the pipe that holds the seccomp program.
        status_fd: Write end of the supervisor's status pipe.
    """
    lim = limits
    if os.geteuid() == 0:
        # No user namespace: the prelude drops to a fresh uid (root ignores RLIMIT_NPROC).
        uid = _UID_BASE + ((os.getpid() & 0xFFFF) << 8 | (next(RUN_NUMBERS) & 0xFF))
        nproc = plan.processes
        namespaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        namespaces += ["--unshare-cgroup-try", "--cap-add", "CAP_SETUID"]
        namespaces += ["--cap-add", "CAP_SETGID"]
    else:
        uid = -1
        nproc = plan.processes + _USERNS_EXTRA_TASKS
        if not kernel_counts_nproc_per_userns():
            nproc += user_process_count(os.getuid())
        namespaces = ["--unshare-all", "--unshare-user"]
        if "--disable-userns" in bwrap_options(bwrap_path):
            namespaces.append("--disable-userns")
    site = SITE_IN_SANDBOX if layout.packages else ""
    args = [*namespaces, "--die-with-parent", "--new-session"]
    args += system_binds()
    for top in ("/opt", "/sandbox", SITE_IN_SANDBOX):
        args += ["--perms", "0755", "--dir", top]
    if not layout.executable.startswith("/usr/"):
        args += ["--ro-bind", layout.prefix, PREFIX_IN_SANDBOX]
        for folder in layout.site_packages:
            inside = PREFIX_IN_SANDBOX + folder[len(layout.prefix) :]
            args += ["--tmpfs", inside]
    for folder, name in layout.packages:
        args += ["--ro-bind", folder, f"{SITE_IN_SANDBOX}/{name}"]
    args += ["--perms", "0444", "--ro-bind-data", str(code_fd), CODE_IN_SANDBOX]
    tmp_size = max(4 * 1024 * 1024, 16 * lim.max_file_bytes)
    args += ["--size", str(tmp_size), "--perms", "1777", "--tmpfs", "/tmp"]
    args += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev"]
    args += ["--remount-ro", "/", "--chdir", "/tmp", "--clearenv"]
    for key, value in sandbox_env().items():
        args += ["--setenv", key, value]
    args += ["--seccomp", str(filter_fd)]
    prelude = prelude_args(
        lim, CODE_IN_SANDBOX, seed, uid, nproc, plan.process_memory_mb, site, status_fd
    )
    return BwrapCommand(args, [layout.executable, *prelude])


def command_line(
    bwrap: str, options_fd: int, command: BwrapCommand, cgroup_procs: str | None
) -> list[str]:
    """The argv that starts the run: ``bwrap --args FD`` (the options, NUL-separated, read
    from ``options_fd``) and the program; in cgroup mode behind a shell that joins the group
    (``cgroup_procs``: its ``cgroup.procs`` file) first."""
    args = [bwrap, "--args", str(options_fd), *command.program]
    if cgroup_procs is not None:
        # A shell moves itself into the group, then becomes bwrap: nothing starts outside.
        args = ["/bin/sh", "-c", _INTO_CGROUP, cgroup_procs, *args]
    return args
