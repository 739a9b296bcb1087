"""The python sandbox, hardened: no nested namespaces, memory for the sandbox as a whole, CPU
timeouts named as such, limits set from the env's kwargs and reproduced by replay."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import wikigym  # noqa: F401  (registers the env ids)
from wikigym.corpora import Snapshot
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.errors import SandboxLimitsError
from wikigym.sandbox.cgroups import find_parent, remove_stale
from wikigym.sandbox.sandbox import PythonSandbox, SandboxLimits
from wikigym.sandbox.seccomp import BLOCKED_SYSCALLS, namespace_filter, syscall_numbers
from wikigym.tools import format_tool_call

AVAILABLE, REASON = PythonSandbox.available()
needs_sandbox = pytest.mark.skipif(not AVAILABLE, reason=f"namespaces unavailable: {REASON}")
REPO = Path(__file__).resolve().parents[1]

# Model code that tries every way into a new namespace or a mount it knows of; each attempt
# prints "<name> <return value> <errno>".
ESCAPES = r"""
import ctypes, os, threading
libc = ctypes.CDLL(None, use_errno=True)
NR = json_numbers
NEWUSER, NEWNS, NEWNET, NEWPID = 0x10000000, 0x20000, 0x40000000, 0x20000000
def attempt(name, rc):
    print(name, rc, ctypes.get_errno() if rc == -1 else 0, flush=True)
    ctypes.set_errno(0)
attempt("unshare-user-ns-net", libc.unshare(NEWUSER | NEWNS | NEWNET))
attempt("unshare-user", libc.unshare(NEWUSER))
attempt("unshare-ns", libc.unshare(NEWNS))
attempt("clone-newuser", libc.syscall(NR["clone"], NEWUSER | 17, 0, 0, 0, 0))
attempt("clone-newpid", libc.syscall(NR["clone"], NEWPID | 17, 0, 0, 0, 0))
attempt("clone3", libc.syscall(NR["clone3"], 0, 0))
fd = os.open("/proc/self/ns/net", os.O_RDONLY)
attempt("setns", libc.setns(fd, 0))
attempt("mount-tmpfs", libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
attempt("umount", libc.umount2(b"/tmp", 2))
attempt("chroot", libc.chroot(b"/tmp"))
for name in ("bpf", "userfaultfd", "keyctl", "io_uring_setup", "fsopen", "open_tree"):
    attempt(name, libc.syscall(NR[name], 0, 0, 0, 0, 0))
attempt("ptrace-parent", libc.ptrace(16, os.getppid(), 0, 0))  # PTRACE_ATTACH
try:
    open(f"/proc/{os.getppid()}/mem", "rb").close()
    print("parent-mem 0 0")
except OSError as exc:
    print("parent-mem -1", exc.errno)
# What ordinary code needs still works: fork, threads, a subprocess.
pid = os.fork()
if pid == 0:
    os._exit(7)
print("fork-ok", os.waitpid(pid, 0)[1] >> 8)
box = []
thread = threading.Thread(target=lambda: box.append("thread-ok"))
thread.start(); thread.join()
print(box[0])
import subprocess
print("subprocess-ok", subprocess.run(["/usr/bin/true"]).returncode)
"""


def escapes_code() -> str:
    numbers = syscall_numbers()
    assert numbers is not None
    return ESCAPES.replace("json_numbers", json.dumps(numbers))


def check_escapes_failed(stdout: str) -> None:
    results = {line.split()[0]: line.split()[1:] for line in stdout.splitlines()}
    eperm, enosys = "1", "38"
    for name in ("unshare-user-ns-net", "unshare-user", "unshare-ns", "clone-newuser"):
        assert results[name] == ["-1", eperm], (name, stdout)
    for name in ("clone-newpid", "setns", "mount-tmpfs", "umount", "chroot", "bpf"):
        assert results[name] == ["-1", eperm], (name, stdout)
    for name in ("userfaultfd", "keyctl", "io_uring_setup", "fsopen", "open_tree"):
        assert results[name] == ["-1", eperm], (name, stdout)
    assert results["clone3"] == ["-1", enosys], stdout
    assert results["ptrace-parent"] == ["-1", eperm], stdout
    assert results["parent-mem"][0] == "-1", stdout  # the supervisor's memory is out of reach
    assert results["fork-ok"] == ["7"] and "thread-ok" in results, stdout
    assert results["subprocess-ok"] == ["0"], stdout


@needs_sandbox
def test_nested_namespaces_and_mounts_are_refused() -> None:
    """The mode of this process (root here: no user namespace, a fresh uid inside)."""
    result = PythonSandbox(SandboxLimits(wall_seconds=20)).run(escapes_code())
    assert result.error is None, result.stderr
    check_escapes_failed(result.stdout)


def _system_python() -> str | None:
    """An interpreter an unprivileged user can run (ours may sit under a private /root)."""
    for path in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.path.exists(path):
            out = subprocess.run(
                [path, "-c", "import sys; print(sys.version_info >= (3, 10))"],
                capture_output=True,
                text=True,
                check=False,
            )
            if out.stdout.strip() == "True":
                return path
    return None


# Loads wikigym/sandbox/sandbox.py (and what it imports from wikigym) without the package's
# __init__, which needs gymnasium, absent from the system interpreter.
USERNS_RUNNER = r"""
import json, sys, types
repo, code = sys.argv[1], sys.stdin.read()
for name, sub in (("wikigym", ""), ("wikigym.sandbox", "/sandbox")):
    module = types.ModuleType(name)
    module.__path__ = [repo + "/wikigym" + sub]
    sys.modules[name] = module
from wikigym.sandbox.sandbox import PythonSandbox, SandboxLimits
usable, reason = PythonSandbox.available()
sandbox = PythonSandbox(SandboxLimits(wall_seconds=20, max_processes=4, memory_mb=512,
                                      max_output_bytes=1 << 20))
result = sandbox.run(code) if usable else None
print(json.dumps({"usable": usable, "reason": reason, "uid": __import__("os").getuid(),
                  "result": None if result is None else result.__dict__}))
"""

# CI sets it: a sandbox test that cannot run as a non-root uid fails instead of skipping.
REQUIRE_UNPRIVILEGED = os.environ.get("WIKIGYM_REQUIRE_UNPRIVILEGED_SANDBOX") == "1"
UNPRIVILEGED_UID = 65534  # nobody


def _skip_unprivileged(reason: str) -> None:
    if REQUIRE_UNPRIVILEGED:
        pytest.fail(f"WIKIGYM_REQUIRE_UNPRIVILEGED_SANDBOX=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def readable_tree() -> Iterator[Path]:
    """A copy of the package that the unprivileged uid can read (the checkout may sit under a
    private /root, as in CI), in a folder of its own."""
    folder = Path(tempfile.mkdtemp(prefix="wikigym-unpriv-", dir="/tmp"))
    try:
        shutil.copytree(
            REPO / "wikigym", folder / "wikigym", ignore=shutil.ignore_patterns("__pycache__")
        )
        for path in [folder, *folder.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_as_unprivileged_user(
    code: str,
    tree: Path,
    *,
    env: dict[str, str] | None = None,
    cwd: str = "/",
    pass_fds: tuple[int, ...] = (),
) -> dict[str, object]:
    """Run `code` in a sandbox made by an unprivileged user (bwrap's user-namespace mode), from
    the package copy `tree`; `env`, `cwd` and `pass_fds` are that user's process's."""
    # Root switches to `nobody`; any other user already is an unprivileged caller.
    switch = os.geteuid() == 0
    as_user = UNPRIVILEGED_UID if switch else os.geteuid()
    python = _system_python()
    if python is None or shutil.which("bwrap") is None:
        _skip_unprivileged("no system python >= 3.10 or no bwrap for an unprivileged user")
    assert python is not None
    out = subprocess.run(
        [python, "-S", "-c", USERNS_RUNNER, str(tree)],
        input=code,
        capture_output=True,
        text=True,
        timeout=120,
        user=as_user if switch else None,
        group=as_user if switch else None,
        extra_groups=[] if switch else None,
        cwd=cwd,
        env=env if env is not None else {"PATH": "/usr/bin:/bin"},
        pass_fds=pass_fds,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    if not report["usable"]:
        _skip_unprivileged(f"an unprivileged user cannot make namespaces here: {report['reason']}")
    assert report["uid"] == as_user and "user namespace" in str(report["reason"])
    return report


# Model code that looks everywhere a caller's secret could show through: every process's
# environment and command line, working directory and root (listed), every open descriptor
# (named, and read when it is a file). It prints what it found as JSON.
SNOOP = r"""
import json, os, stat
found = {}
def read(path, limit=4096):
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError as exc:
        return f"<errno {exc.errno}>"
for pid in sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int):
    base = f"/proc/{pid}"
    entry = {"environ": read(f"{base}/environ"), "cmdline": read(f"{base}/cmdline", 400)}
    for link in ("cwd", "root", "exe"):
        try:
            entry[link] = os.readlink(f"{base}/{link}")
            if link != "exe":
                entry[link + "_list"] = sorted(os.listdir(f"{base}/{link}"))
        except OSError as exc:
            entry[link] = f"<errno {exc.errno}>"
    fds = {}
    try:
        names = os.listdir(f"{base}/fd")
    except OSError as exc:
        names = []
        fds["*"] = f"<errno {exc.errno}>"
    for fd in names:
        try:
            target = os.readlink(f"{base}/fd/{fd}")
            fds[fd] = target
            if stat.S_ISREG(os.stat(f"{base}/fd/{fd}").st_mode):
                fds[fd] += " = " + read(f"{base}/fd/{fd}")
        except OSError as exc:
            fds[fd] = f"<errno {exc.errno}>"
    entry["fds"] = fds
    found[pid] = entry
found["self_environ"] = dict(os.environ)
print(json.dumps(found))
"""


def test_unprivileged_caller_environment_files_and_descriptors_are_out_of_reach(
    readable_tree: Path,
) -> None:
    """Issue 33: in the user-namespace mode bwrap is the sandbox's pid 1, of the code's uid; it
    must hold nothing of its caller: environment, working directory, descriptors, paths."""
    env_secret, file_secret = "sk-env-canary-8f3a1c", "file-canary-5d92e7"
    (readable_tree / "secret.txt").write_text(file_secret)
    (readable_tree / "secret.txt").chmod(0o644)
    env = {
        "PATH": "/usr/bin:/bin",
        "OPENAI_API_KEY": env_secret,
        "WIKIGYM_TEST_TOKEN": env_secret,
        "PYTHONPATH": str(readable_tree),
    }
    secret_fd = os.open(readable_tree / "secret.txt", os.O_RDONLY)  # inherited by the caller
    try:
        report = run_as_unprivileged_user(
            SNOOP, readable_tree, env=env, cwd=str(readable_tree), pass_fds=(secret_fd,)
        )
    finally:
        os.close(secret_fd)
    result = report["result"]
    assert isinstance(result, dict) and result["error"] is None, result
    stdout = str(result["stdout"])
    for secret in (env_secret, file_secret, "secret.txt", str(readable_tree), str(REPO)):
        assert secret not in stdout, f"{secret!r} reached the sandbox: {stdout[:2000]}"
    found = json.loads(stdout)
    # The probe did reach bwrap (pid 1): what it shows is the sandbox's own allow-list.
    bwrap = found["1"]
    assert "HOME=/tmp" in bwrap["environ"] and "OPENAI_API_KEY" not in bwrap["environ"]
    assert bwrap["cwd"] == "/tmp" and bwrap["root"] == "/"
    assert "--ro-bind" not in bwrap["cmdline"]  # its options, host paths among them, are hidden
    allowed = {"PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONSAFEPATH", "PYTHONIOENCODING"}
    allowed |= {"HOME", "LANG", "PATH", "PWD", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"}
    assert set(found["self_environ"]) <= allowed | {"MKL_NUM_THREADS", "LC_CTYPE"}
    for pid, entry in found.items():
        if pid == "self_environ":
            continue
        names = {line.split("=", 1)[0] for line in entry["environ"].split("\0") if "=" in line}
        assert names <= allowed | {"MKL_NUM_THREADS"}, (pid, names)
        for fd, target in entry["fds"].items():
            assert not target.startswith("/") or target.startswith("/dev/"), (pid, fd, target)


@needs_sandbox
def test_caller_is_out_of_reach_in_this_process_mode(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The same probe in this process's own mode (root here: bwrap's options, host paths
    among them, were readable in /proc/1/cmdline by any uid)."""
    monkeypatch.setenv("WIKIGYM_TEST_TOKEN", "sk-env-canary-31f0")
    monkeypatch.chdir(tmp_path)
    result = PythonSandbox(SandboxLimits(wall_seconds=20, max_output_bytes=1 << 20)).run(SNOOP)
    assert result.error is None, result.stderr
    for secret in ("sk-env-canary-31f0", str(tmp_path), str(REPO)):
        assert secret not in result.stdout
    assert "--ro-bind" not in json.loads(result.stdout)["1"]["cmdline"]


@needs_sandbox
def test_nested_namespaces_are_refused_in_user_namespace_mode(readable_tree: Path) -> None:
    report = run_as_unprivileged_user(escapes_code(), readable_tree)
    result = report["result"]
    assert isinstance(result, dict) and result["error"] is None, result
    check_escapes_failed(str(result["stdout"]))


@needs_sandbox
def test_process_cap_in_user_namespace_mode_counts_only_the_sandbox(readable_tree: Path) -> None:
    """RLIMIT_NPROC in a user namespace: the code gets exactly the processes the plan says."""
    code = (
        "import os, time\nn = 0\nwhile n < 50:\n    try:\n        pid = os.fork()\n"
        "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(5)\n"
        "        os._exit(0)\n    n += 1\nprint(n)\n"
    )
    report = run_as_unprivileged_user(code, readable_tree)
    result = report["result"]
    assert isinstance(result, dict) and result["error"] is None, result
    if result["limit_mode"] == "per-process":  # 4 processes of 128 MiB: the parent + 3
        assert result["stdout"] == "3\n"


@pytest.mark.parametrize(
    ("machine", "header"),
    [
        ("x86_64", "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
        ("aarch64", "/usr/include/asm-generic/unistd.h"),
    ],
)
def test_syscall_numbers_match_the_kernel_headers(machine: str, header: str) -> None:
    if not os.path.exists(header):
        pytest.skip(f"{header} not installed")
    text = Path(header).read_text()
    table = {m[0]: int(m[1]) for m in re.findall(r"#define __NR_(\w+)\s+(\d+)", text)}
    numbers = syscall_numbers(machine)
    assert numbers is not None
    assert {k: v for k, v in numbers.items() if table.get(k) != v} == {}


def test_filter_refuses_other_abis_and_unknown_machines() -> None:
    program = namespace_filter("x86_64")
    assert program is not None and len(program) % 8 == 0
    # load arch; jump over the kill if it is x86_64; kill the process otherwise.
    first = [program[i : i + 8] for i in range(0, 24, 8)]
    assert first[0][:2] == b"\x20\x00" and first[1][4:] == (0xC000003E).to_bytes(4, "little")
    assert first[2][4:] == (0x80000000).to_bytes(4, "little")
    assert namespace_filter("aarch64") != program
    assert namespace_filter("sparc64") is None and syscall_numbers("sparc64") is None
    numbers = syscall_numbers("x86_64")
    assert numbers is not None and all(name in numbers for name in BLOCKED_SYSCALLS)


FIVE_FORKS = r"""
import os
budget = {budget}
r, w = os.pipe()
kids, refused = 0, 0
for _ in range(5):
    try:
        pid = os.fork()
    except OSError:
        refused += 1
        continue
    if pid == 0:
        os.close(r)
        chunks = []
        try:
            while len(chunks) < 25:  # 400 MiB in 16 MiB chunks, every page written
                chunks.append(b"x" * (16 << 20))
                os.write(w, b"+")
        except MemoryError:
            pass
        os._exit(0)
    kids += 1
os.close(w)
got = 0
while True:
    data = os.read(r, 4096)
    if not data:
        break
    got += len(data)
for _ in range(kids):
    os.wait()
print("kids", kids, "refused", refused, "allocated_mib", got * 16)
"""


@needs_sandbox
def test_five_forks_of_400_mib_stay_within_the_budget() -> None:
    """The attack of issue 9: five processes of 400 MiB against memory_mb=512."""
    limits = SandboxLimits(memory_mb=512, wall_seconds=30, cpu_seconds=20)
    sandbox = PythonSandbox(limits)
    plan = sandbox.limit_plan()
    result = sandbox.run(FIVE_FORKS.format(budget=512))
    assert result.limit_mode == plan.mode
    if plan.mode == "cgroup":
        # The kernel keeps the group at memory.max: a kill for memory, or allocations refused.
        assert result.error in ("memory", None), result
        if result.error is None:
            allocated = int(result.stdout.split()[-1])
            assert allocated < 512
        else:
            assert "[memory limit exceeded: 512 MiB for the sandbox as a whole]" in result.stderr
        return
    assert plan.mode == "per-process"
    assert plan.processes * plan.process_memory_mb <= 512
    assert result.error is None, result.stderr
    words = result.stdout.split()
    kids, refused, allocated = int(words[1]), int(words[3]), int(words[5])
    assert kids + 1 <= plan.processes and refused == 5 - kids
    assert allocated + 16 * (kids + 1) <= 512  # each process also holds its interpreter


def test_per_process_plan_splits_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WIKIGYM_SANDBOX_CGROUP", "/nonexistent/cgroup")
    cases = {(512, 16): (4, 128), (512, 1): (1, 512), (100, 16): (1, 100), (1024, 3): (3, 341)}
    for (memory_mb, processes), expected in cases.items():
        sandbox = PythonSandbox(SandboxLimits(memory_mb=memory_mb, max_processes=processes))
        plan = sandbox.limit_plan()
        assert plan.mode == "per-process" and plan.cgroup_parent is None
        assert (plan.processes, plan.process_memory_mb) == expected
        assert plan.processes * plan.process_memory_mb <= memory_mb
        assert "/nonexistent/cgroup" in plan.description


def test_cgroup_parent_needs_the_memory_controller(tmp_path: Path) -> None:
    assert find_parent(str(tmp_path / "missing"))[0] is None
    fake = tmp_path / "group"
    fake.mkdir()
    (fake / "cgroup.controllers").write_text("cpu io\n")
    (fake / "cgroup.subtree_control").write_text("cpu\n")
    folder, reason = find_parent(str(fake))
    assert folder is None and "offers no memory controller" in reason
    (fake / "cgroup.controllers").write_text("cpu io memory pids\n")
    folder, reason = find_parent(str(fake))
    assert folder is None and "not enabled for the children" in reason
    (fake / "cgroup.subtree_control").write_text("memory pids\n")
    # The right file names are not enough: the folder must be in a cgroup2 mount.
    folder, reason = find_parent(str(fake))
    assert folder is None and "not in a cgroup v2 file system" in reason


def test_groups_of_dead_owners_are_removed(tmp_path: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    names = [
        f"wikigym-sandbox-{gone.pid}-0",
        f"wikigym-sandbox-{gone.pid}-7",
        f"wikigym-sandbox-{os.getpid()}-0",
        "other-group",
    ]
    for name in names:
        (tmp_path / name).mkdir()
    busy = tmp_path / f"wikigym-sandbox-{gone.pid}-9"
    (busy / "still-populated").mkdir(parents=True)  # rmdir refuses it, as a populated group
    assert remove_stale(tmp_path) == names[:2]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*names[2:], busy.name])


IGNORES_SIGXCPU = (
    "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass"
)


@needs_sandbox
def test_busy_loop_that_ignores_sigxcpu_is_a_cpu_timeout() -> None:
    sandbox = PythonSandbox(SandboxLimits(cpu_seconds=1, wall_seconds=15))
    result = sandbox.run(IGNORES_SIGXCPU)
    assert result.error == "timeout" and result.timed_out, result
    assert result.stderr.endswith("[CPU time limit of 1 s exceeded]\n")
    plain = sandbox.run("while True:\n    pass")
    assert plain.error == "timeout" and "CPU time limit of 1 s exceeded" in plain.stderr
    # A kill that is not the CPU limit stays a kill.
    for code in (
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
        "import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)",
    ):
        killed = sandbox.run(code)
        assert killed.error == "killed" and not killed.timed_out, killed
        assert "time limit" not in killed.stderr


@needs_sandbox
def test_wall_timeout_names_its_limit() -> None:
    result = PythonSandbox(SandboxLimits(wall_seconds=1.5)).run("import time\ntime.sleep(30)")
    assert result.error == "timeout" and result.exit_code is None
    assert result.stderr.endswith("[wall time limit of 1.5 s exceeded]\n")


def test_unsafe_mode_names_the_cpu_limit_too() -> None:
    sandbox = PythonSandbox(
        SandboxLimits(cpu_seconds=1, wall_seconds=15),
        allow_unsafe=True,
        bwrap_path="/nonexistent/bwrap",
    )
    result = sandbox.run(IGNORES_SIGXCPU)
    assert result.error == "timeout" and result.limit_mode == "unsafe", result
    assert "[CPU time limit of 1 s exceeded]" in result.stderr


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"cpu_seconds": 0}, "cpu_seconds"),
        ({"cpu_seconds": float("nan")}, "cpu_seconds"),
        ({"wall_seconds": "10"}, "wall_seconds"),
        ({"memory_mb": 12.5}, "memory_mb"),
        ({"memory_mb": 8}, "memory_mb"),
        ({"max_processes": True}, "max_processes"),
        ({"max_processes": 0}, "max_processes"),
        ({"max_output_bytes": -1}, "max_output_bytes"),
        ({"max_file_bytes": None}, "max_file_bytes"),
        ({"memroy_mb": 256}, "memroy_mb"),
    ],
)
def test_bad_limits_raise_a_typed_error_naming_the_field(value: dict, field: str) -> None:
    with pytest.raises(SandboxLimitsError, match=field):
        SandboxLimits.from_value(value)


def test_limits_from_values() -> None:
    assert SandboxLimits.from_value(None) == SandboxLimits()
    given = SandboxLimits(cpu_seconds=2, memory_mb=256)
    assert SandboxLimits.from_value(given) is given
    assert SandboxLimits.from_value({"cpu_seconds": 2, "memory_mb": 256}) == given
    assert SandboxLimits.from_value(given.to_dict()) == given
    assert json.loads(json.dumps(given.to_dict())) == given.to_dict()
    with pytest.raises(SandboxLimitsError, match="SandboxLimits, a dict"):
        SandboxLimits.from_value(5)  # type: ignore[arg-type]


def test_env_takes_limits_from_kwargs(enwiki_snapshot: Snapshot) -> None:
    corpus = str(enwiki_snapshot.path)
    env = gym.make("WikiSearch-v1", corpus=corpus, sandbox={"cpu_seconds": 2, "memory_mb": 256})
    base = env.unwrapped
    assert isinstance(base, WikiSearchEnv) and base.toolbox.sandbox is not None
    assert base.toolbox.sandbox.limits == SandboxLimits(cpu_seconds=2, memory_mb=256)
    assert base.spec_kwargs["sandbox"] == SandboxLimits(cpu_seconds=2, memory_mb=256).to_dict()
    limits = SandboxLimits(max_output_bytes=100)
    base = gym.make("WikiSearch-v1", corpus=corpus, sandbox=limits).unwrapped
    assert isinstance(base, WikiSearchEnv) and base.toolbox.sandbox is not None
    assert base.toolbox.sandbox.limits is limits
    with pytest.raises(SandboxLimitsError, match="memory_mb"):
        gym.make("WikiSearch-v1", corpus=corpus, sandbox={"memory_mb": -1})
    with pytest.raises(SandboxLimitsError, match="cpu_secs"):
        gym.make("WikiSearch-v1", corpus=corpus, sandbox={"cpu_secs": 1})


@needs_sandbox
def test_replay_reproduces_the_limits(enwiki_snapshot: Snapshot, tmp_path: Path) -> None:
    from wikigym.envs.replay import RecordTrajectory, replay

    env = RecordTrajectory(
        gym.make(
            "WikiSearch-v1",
            corpus=str(enwiki_snapshot.path),
            max_steps=2,
            sandbox={"max_output_bytes": 1000},
        ),
        tmp_path,
    )
    env.reset(seed=0)
    obs, *_ = env.step(format_tool_call("python", {"code": "print('y' * 3000)"}))
    assert "[output truncated at 1000 bytes]" in obs
    env.step(format_tool_call("answer", {"text": "x", "citations": []}))
    path = env.last_path
    assert path is not None
    header = json.loads(path.read_text().splitlines()[0])
    assert header["env_kwargs"]["sandbox"]["max_output_bytes"] == 1000
    assert replay(path) == (2, None)
    # The limits come from the file: other limits give another observation.
    lines = path.read_text().splitlines()
    header["env_kwargs"]["sandbox"]["max_output_bytes"] = 2000
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    steps, divergence = replay(edited)
    assert divergence is not None and divergence.step == 1 and divergence.field == "observation"
