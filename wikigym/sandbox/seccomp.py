"""A seccomp filter for the python sandbox, compiled to classic BPF in pure Python.

The filter closes what bubblewrap's namespaces leave open to code running inside them:

- new namespaces: ``unshare`` and ``setns`` fail with EPERM, ``clone`` fails with EPERM when
  its flags ask for any new namespace, and ``clone3`` fails with ENOSYS (its flags sit behind a
  pointer a filter cannot read; the C library then falls back to ``clone``, which is checked);
- mounts: ``mount``, ``umount2``, ``pivot_root``, ``chroot`` and the new mount API
  (``open_tree``, ``move_mount``, ``fsopen``, ``fsconfig``, ``fsmount``, ``fspick``,
  ``mount_setattr``) fail with EPERM;
- kernel attack surface no Python program needs: ``bpf``, ``perf_event_open``,
  ``userfaultfd``, the key-ring calls and ``io_uring``;
- other processes' memory: ``ptrace``, ``process_vm_readv``, ``process_vm_writev`` (in the
  user-namespace mode the code shares its uid with the trusted supervisor of the prelude).

Calls of another ABI (i386 through ``int 0x80``, the x32 numbers on x86_64) are refused too, so
the numbers checked are the only ones that can reach the kernel. bubblewrap loads the program
(``--seccomp FD``) just before it starts the interpreter, so it holds for the whole run.
"""

from __future__ import annotations

import errno
import platform
import struct

__all__ = ["BLOCKED_SYSCALLS", "CLONE_NAMESPACE_FLAGS", "namespace_filter", "syscall_numbers"]

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
_OFFSET_NR = 0
_OFFSET_ARCH = 4
_OFFSET_ARG0_LOW = 16  # little-endian: the low 32 bits of args[0] come first

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000

_X32_SYSCALL_BIT = 0x40000000

#: The clone flags that make a namespace (CLONE_NEWTIME is not among them: in clone() its bit
#: is part of the exit signal, and unshare, its only other door, is refused whole).
CLONE_NAMESPACE_FLAGS = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
)

#: Refused whole, with EPERM.
BLOCKED_SYSCALLS: tuple[str, ...] = (
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "add_key",
    "request_key",
    "keyctl",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
)

# (AUDIT_ARCH value, syscall numbers) per machine; numbers from the kernel's syscall tables.
_COMMON_NEW = {
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "clone3": 435,
    "mount_setattr": 442,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
}
_ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "clone": 56,
            "unshare": 272,
            "setns": 308,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "chroot": 161,
            "bpf": 321,
            "perf_event_open": 298,
            "userfaultfd": 323,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            **_COMMON_NEW,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "clone": 220,
            "unshare": 97,
            "setns": 268,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "chroot": 51,
            "bpf": 280,
            "perf_event_open": 241,
            "userfaultfd": 282,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            **_COMMON_NEW,
        },
    ),
}
_ARCHES["amd64"] = _ARCHES["x86_64"]
_ARCHES["arm64"] = _ARCHES["aarch64"]


def syscall_numbers(machine: str | None = None) -> dict[str, int] | None:
    """The syscall numbers the filter uses on `machine` (default: this one), or None."""
    entry = _ARCHES.get((machine or platform.machine()).lower())
    return None if entry is None else dict(entry[1])


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def namespace_filter(machine: str | None = None) -> bytes | None:
    """The compiled filter (an array of ``struct sock_filter``) for `machine`.

    Args:
        machine: ``platform.machine()`` name; None for this machine.

    Returns:
        The program bytes, or None where no syscall table is known for the machine (the
        caller must then refuse to run untrusted code rather than run it unfiltered).
    """
    name = (machine or platform.machine()).lower()
    entry = _ARCHES.get(name)
    if entry is None:
        return None
    arch, numbers = entry
    deny = _RET_ERRNO | errno.EPERM
    prog = [
        _insn(_LD_W_ABS, _OFFSET_ARCH),
        _insn(_JEQ_K, arch, jt=1),
        _insn(_RET_K, _RET_KILL_PROCESS),
        _insn(_LD_W_ABS, _OFFSET_NR),
    ]
    if name in ("x86_64", "amd64"):
        prog += [_insn(_JGE_K, _X32_SYSCALL_BIT, jf=1), _insn(_RET_K, _RET_ERRNO | errno.ENOSYS)]
    for syscall in BLOCKED_SYSCALLS:
        prog += [_insn(_JEQ_K, numbers[syscall], jf=1), _insn(_RET_K, deny)]
    prog += [
        _insn(_JEQ_K, numbers["clone3"], jf=1),
        _insn(_RET_K, _RET_ERRNO | errno.ENOSYS),
        _insn(_JEQ_K, numbers["clone"], jf=3),
        _insn(_LD_W_ABS, _OFFSET_ARG0_LOW),
        _insn(_JSET_K, CLONE_NAMESPACE_FLAGS, jf=1),
        _insn(_RET_K, deny),
        _insn(_RET_K, _RET_ALLOW),
    ]
    return b"".join(prog)
