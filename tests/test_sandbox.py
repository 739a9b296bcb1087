"""The python sandbox: escapes must fail, limits must hold, results must be deterministic."""

from __future__ import annotations

import os
import time
from pathlib import Path

import psutil
import pytest

from wikigym.sandbox.sandbox import PythonSandbox, SandboxLimits, SandboxResult

AVAILABLE, REASON = PythonSandbox.available()
needs_sandbox = pytest.mark.skipif(not AVAILABLE, reason=f"namespaces unavailable: {REASON}")

FAST = SandboxLimits(cpu_seconds=2.0, wall_seconds=3.0, memory_mb=256, max_output_bytes=4096)
REPO_FILE = Path(__file__).resolve().parents[1] / "pyproject.toml"


@pytest.fixture(scope="module")
def sandbox() -> PythonSandbox:
    return PythonSandbox(FAST)


def run(sandbox: PythonSandbox, code: str, **kwargs: int) -> SandboxResult:
    started = time.monotonic()
    result = sandbox.run(code, **kwargs)
    assert time.monotonic() - started < FAST.wall_seconds + 2.0, "the wall limit did not hold"
    return result


def _sandbox_leftovers() -> list[psutil.Process]:
    """Processes started by this test process's sandbox runs that are still alive."""
    tag = f"wgsb-{os.getpid()}-"
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if any(part.startswith(tag) for part in cmdline):
            found.append(proc)
    return found


@needs_sandbox
def test_normal_program_prints_the_answer(sandbox: PythonSandbox) -> None:
    result = run(sandbox, "print(sum(range(101)))")
    mode = sandbox.limit_plan().mode
    assert mode in ("cgroup", "per-process")
    assert result == SandboxResult("5050\n", "", 0, False, False, None, mode)


@needs_sandbox
def test_startup_cost_is_small(sandbox: PythonSandbox) -> None:
    started = time.monotonic()
    for _ in range(5):
        assert run(sandbox, "print(1)").stdout == "1\n"
    per_run = (time.monotonic() - started) / 5
    print(f"sandboxed print(1): {per_run * 1000:.1f} ms per run")
    assert per_run < 1.0


@needs_sandbox
def test_exceptions_and_syntax_errors_come_back_on_stderr(sandbox: PythonSandbox) -> None:
    raised = run(sandbox, "x = 1\nraise ValueError('boom')")
    assert raised.error == "nonzero_exit" and raised.exit_code == 1
    assert "ValueError: boom" in raised.stderr and 'main.py", line 2' in raised.stderr
    syntax = run(sandbox, "def f(:\n  pass")
    assert syntax.error == "nonzero_exit"
    assert "SyntaxError" in syntax.stderr


@needs_sandbox
def test_host_files_are_invisible(sandbox: PythonSandbox, tmp_path: Path) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_text("the secret answer is 42")
    for path in (str(REPO_FILE), "/etc/passwd", "/etc/hostname", "/root", str(answer)):
        code = f"open({path!r}).read()\nprint('LEAK')"
        result = run(sandbox, code)
        assert "LEAK" not in result.stdout, path
        assert "FileNotFoundError" in result.stderr or "PermissionError" in result.stderr, path
        assert result.error == "nonzero_exit", path
    listing = run(
        sandbox,
        "import os\nfor top in ('/', '/root', '/work', '/home', '/etc'):\n"
        "    print(top, sorted(os.listdir(top)) if os.path.isdir(top) else None)",
    )
    assert listing.error is None, listing.stderr
    lines = dict(line.split(" ", 1) for line in listing.stdout.splitlines())
    assert lines["/work"] == lines["/home"] == lines["/etc"] == "None"
    assert lines["/root"] in ("None", "[]")
    top = run(sandbox, "import os; print(sorted(os.listdir('/')))").stdout
    assert "work" not in top and "home" not in top and "etc" not in top


@needs_sandbox
def test_writes_outside_tmp_fail_and_file_size_is_capped() -> None:
    sandbox = PythonSandbox(SandboxLimits(wall_seconds=3.0, max_file_bytes=1_048_576))
    code = (
        "import os\n"
        "for path in ('/x', '/usr/x', '/opt/python/x', '/sandbox/x', '/dev/x', '/proc/x'):\n"
        "    try:\n"
        "        open(path, 'w').write('x')\n"
        "        print('WROTE', path)\n"
        "    except OSError as exc:\n"
        "        print('denied', path, type(exc).__name__)\n"
        "open('/tmp/ok.txt', 'w').write('fine')\n"
        "print('tmp', open('/tmp/ok.txt').read())\n"
        "try:\n"
        "    with open('/tmp/big.bin', 'wb') as f:\n"
        "        for _ in range(100):\n"
        "            f.write(b'x' * 1_048_576)\n"
        "except OSError as exc:\n"
        "    print('capped', exc.errno)\n"
        "print('size', os.path.getsize('/tmp/big.bin'))\n"
    )
    result = sandbox.run(code)
    assert result.error is None, result.stderr
    assert "WROTE" not in result.stdout
    assert result.stdout.count("denied") == 6
    assert "tmp fine" in result.stdout and "capped 27" in result.stdout  # EFBIG
    size = int(result.stdout.split("size ")[1])
    assert size <= 1_048_576


@needs_sandbox
def test_no_network(sandbox: PythonSandbox) -> None:
    code = (
        "import socket\n"
        "for addr in (('127.0.0.1', 22), ('1.1.1.1', 443), ('8.8.8.8', 53)):\n"
        "    try:\n"
        "        socket.create_connection(addr, timeout=2).close()\n"
        "        print('CONNECTED', addr)\n"
        "    except OSError as exc:\n"
        "        print('failed', addr, exc.errno)\n"
    )
    started = time.monotonic()
    result = run(sandbox, code)
    assert time.monotonic() - started < 2.0, "connections must fail at once, not time out"
    assert result.error is None, result.stderr
    assert "CONNECTED" not in result.stdout and result.stdout.count("failed") == 3


@needs_sandbox
def test_fork_bomb_is_contained(sandbox: PythonSandbox) -> None:
    code = (
        "import os, time\n"
        "children = 0\n"
        "while True:\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60)\n"
        "            os._exit(0)\n"
        "        children += 1\n"
        "    except OSError:\n"
        "        break\n"
        "print('children', children, flush=True)\n"
        "time.sleep(60)\n"
    )
    # Processes of earlier tests (multiprocessing's resource tracker, say) are not the sandbox's.
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    result = run(sandbox, code)
    assert result.timed_out and result.error == "timeout"
    children = int(result.stdout.split()[1])
    assert children < FAST.max_processes
    deadline = time.monotonic() + 3.0
    while _sandbox_leftovers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _sandbox_leftovers() == []
    assert [p for p in psutil.Process().children(recursive=True) if p.pid not in before] == []


@needs_sandbox
def test_infinite_loop_hits_cpu_or_wall_limit(sandbox: PythonSandbox) -> None:
    result = run(sandbox, "while True:\n    pass")
    assert result.timed_out and result.error == "timeout"
    sleeper = run(sandbox, "import time\ntime.sleep(30)")
    assert sleeper.timed_out and sleeper.error == "timeout" and sleeper.exit_code is None


@needs_sandbox
def test_memory_bomb_is_refused(sandbox: PythonSandbox) -> None:
    result = run(sandbox, "data = bytearray(4 * 1024**3)\nprint('ALLOCATED')")
    assert "ALLOCATED" not in result.stdout
    assert result.error == "memory" and "MemoryError" in result.stderr


@needs_sandbox
def test_huge_output_is_truncated_without_buffering_it(sandbox: PythonSandbox) -> None:
    rss_before = psutil.Process().memory_info().rss
    result = run(sandbox, "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)")
    assert result.truncated and result.error == "output_limit"
    assert len(result.stdout) < FAST.max_output_bytes + 100
    assert result.stdout.startswith("x" * 100) and "truncated" in result.stdout
    assert psutil.Process().memory_info().rss - rss_before < 50 * 1024 * 1024


@needs_sandbox
def test_signals_cannot_reach_the_host(sandbox: PythonSandbox) -> None:
    code = (
        "import os, signal\n"
        "for pid in (os.getppid(), 1):\n"
        "    try:\n"
        "        os.kill(pid, signal.SIGKILL)\n"
        "    except OSError as exc:\n"
        "        print('kill', pid, type(exc).__name__)\n"
        f"for pid in (1, {os.getpid()}, {os.getpgrp()}):\n"
        "    try:\n"
        "        os.killpg(pid, signal.SIGKILL)\n"
        "    except OSError as exc:\n"
        "        print('killpg', pid, type(exc).__name__)\n"
        f"try:\n    os.kill({os.getpid()}, signal.SIGKILL)\n"
        "except OSError as exc:\n    print('host', type(exc).__name__)\n"
        "print('alive')\n"
    )
    result = run(sandbox, code)
    assert result.error is None, result.stderr
    # killpg(1) is kill(-1): "every process I may signal"; the kernel reports success when the
    # sandbox holds any other process (the supervisor, which the fresh uid cannot signal).
    assert "alive" in result.stdout and result.stdout.count("Error") >= 5
    assert result.exit_code == 0  # the supervisor survived, or the run would end 128+9
    assert psutil.pid_exists(os.getpid())  # we are still here


@needs_sandbox
def test_host_environment_is_not_visible(
    sandbox: PythonSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WIKIGYM_TEST_SECRET", "s3cr3t-token")
    result = run(sandbox, "import os\nprint(sorted(os.environ.items()))")
    assert result.error is None
    assert "s3cr3t-token" not in result.stdout and "WIKIGYM_TEST_SECRET" not in result.stdout
    assert "('HOME', '/tmp')" in result.stdout


@needs_sandbox
def test_runs_are_deterministic(sandbox: PythonSandbox) -> None:
    code = "import random\nprint(hash('abc'), random.random(), hash(('a', 1)))"
    first, second = run(sandbox, code, seed=7), run(sandbox, code, seed=7)
    assert first.error is None and first == second
    other = run(sandbox, code, seed=8)
    assert other.stdout.split()[1] != first.stdout.split()[1]
    assert other.stdout.split()[0] == first.stdout.split()[0]  # hashing ignores the seed


@needs_sandbox
def test_numpy_is_available_and_seeded(sandbox: PythonSandbox) -> None:
    pytest.importorskip("numpy")
    code = "import numpy as np\nprint(np.random.rand(), np.arange(5).sum())"
    first, second = run(sandbox, code, seed=3), run(sandbox, code, seed=3)
    assert first.error is None, first.stderr
    assert first.stdout == second.stdout and first.stdout.split()[1] == "10"


def test_unavailable_path_says_how_to_enable() -> None:
    sandbox = PythonSandbox(FAST, bwrap_path="/nonexistent/bwrap")
    result = sandbox.run("print(1)")
    assert result.error == "unavailable" and result.stdout == "" and result.exit_code is None
    assert "disabled" in result.stderr and "bubblewrap" in result.stderr
    assert "allow_unsafe=True" in result.stderr


def test_unsafe_fallback_runs_with_limits_and_says_so() -> None:
    sandbox = PythonSandbox(FAST, allow_unsafe=True, bwrap_path="/nonexistent/bwrap")
    result = sandbox.run("import random\nprint(hash('abc'), random.random())", seed=5)
    assert result.error is None and result.stderr.startswith("[unsafe")
    again = sandbox.run("import random\nprint(hash('abc'), random.random())", seed=5)
    assert again.stdout == result.stdout
    loop = sandbox.run("while True:\n    pass")
    assert loop.timed_out and loop.error == "timeout"


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="wall_seconds"):
        SandboxLimits(wall_seconds=0)
    with pytest.raises(ValueError, match="max_output_bytes"):
        SandboxLimits(max_output_bytes=0)
