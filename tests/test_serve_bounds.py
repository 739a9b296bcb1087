"""``wikigym serve`` under slow and greedy clients (issue 32's four measured cases), each
against a server subprocess on real sockets: after each, ``/health`` answers within 2 s and
the server's resident memory grew by less than 100 MB.

1. 1,100 slow, half-sent requests under a 1,024 file-descriptor limit; then SIGTERM drains.
2. HTTP bodies far past the size limit (declared, or without a length), and error replies
   that would quote a huge client value.
3. A WebSocket client that never reads, and messages whose unknown type is 1 MB long.
4. Eight sessions running slow python calls while another session searches.
"""

from __future__ import annotations

import base64
import json
import os
import resource
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from integration_support import need

need("uvicorn")
need("picows")
psutil = need("psutil")

from wikigym.tasks.defaults import default_resources, default_tasks_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FD_LIMIT = 1024
MB = 1 << 20
pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # ~2 min; CI runs it in .venv-serve


class Server:
    """A ``wikigym serve`` subprocess (its address, its process, its memory)."""

    def __init__(self, *extra: str, fd_limit: int = FD_LIMIT) -> None:
        snapshot, _ = default_resources(progress=False)
        cmd = [
            sys.executable, "-m", "wikigym", "serve", "--port", "0",
            "--corpus", str(snapshot.path), "--tasks", str(default_tasks_path()), *extra,
        ]  # fmt: skip

        def limit_fds() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit))

        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            preexec_fn=limit_fds,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("wikigym serve: http://"), line
        self.url = line.split()[2]
        host, port = self.url.removeprefix("http://").split(":")
        self.addr = (host, int(port))
        self.ps = psutil.Process(self.proc.pid)
        self.health()  # warm: the first request loads what the server needs
        self.rss0 = self.ps.memory_info().rss

    def health(self, timeout: float = 2.0) -> float:
        """Seconds ``/health`` took (it must answer 200 within ``timeout``)."""
        start = time.monotonic()
        with urllib.request.urlopen(f"{self.url}/health", timeout=timeout) as reply:
            assert reply.status == 200 and json.loads(reply.read())["status"] == "healthy"
        return time.monotonic() - start

    def grown_mb(self) -> float:
        return (self.ps.memory_info().rss - self.rss0) / MB

    def open_fds(self) -> int:
        return self.ps.num_fds()

    def stop(self) -> tuple[int, float]:
        """SIGTERM; the exit status (143 once drained, as every long command) and the seconds
        it took to exit."""
        start = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode, time.monotonic() - start


@pytest.fixture
def many_fds() -> Iterator[None]:
    """This process may hold a few thousand sockets (its clients)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 8192)
    if want < 2600:
        pytest.skip(f"needs ~2,600 file descriptors for the clients, the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _connect(addr: tuple[str, int]) -> socket.socket | None:
    try:
        return socket.create_connection(addr, timeout=5)
    except OSError:
        return None


def test_slow_half_sent_requests_past_the_fd_limit_leave_the_server_answering(many_fds) -> None:
    server = Server("--python", "off", "--drain-s", "2")
    clients = []
    try:
        for i in range(1100):
            sock = _connect(server.addr)
            if sock is None:
                continue
            try:  # half a head, or a whole head and half its body
                if i % 2:
                    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
                else:
                    sock.sendall(b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
            except OSError:
                pass
            clients.append(sock)
        assert len(clients) >= 1000
        time.sleep(1.0)
        assert server.health() < 2.0
        fds = server.open_fds()
        assert fds < FD_LIMIT, fds  # accepted under the limit, with room left
        # a keep-alive client keeps being served among them
        assert server.health() < 2.0
        assert server.grown_mb() < 100
    finally:
        for sock in clients:
            sock.close()
    deadline = time.monotonic() + 10
    while server.open_fds() > 100 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert server.open_fds() <= 100  # the clients' connections are all released
    assert server.health() < 2.0
    # SIGTERM with slow clients connected: drained within the drain time, exit 0
    slow = [s for s in (_connect(server.addr) for _ in range(200)) if s is not None]
    for sock in slow:
        sock.sendall(b"GET /health HTTP/1.1\r\n")
    code, took = server.stop()
    for sock in slow:
        sock.close()
    assert code == 128 + signal.SIGTERM and took < 10, (code, took)  # drained, then 143


def _post(url: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, body, headers or {}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_huge_bodies_are_refused_and_never_echoed() -> None:
    server = Server("--python", "off", "--max-body-bytes", str(4 * MB))
    try:
        # a 256 MB body, declared: refused from its head, before the body is read
        with socket.create_connection(server.addr, timeout=30) as sock:
            sock.sendall(
                b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {256 * MB}\r\n\r\n".encode()
            )
            chunk = b'{"seed": "' + b"x" * MB
            sent = 0
            try:
                while sent < 256 * MB:
                    sock.sendall(chunk)
                    sent += len(chunk)
            except OSError:
                pass  # the server closed the connection: it read no more
            reply = sock.recv(65536)
        assert reply.startswith(b"HTTP/1.1 413") and len(reply) < 1024, reply[:200]
        assert sent < 64 * MB  # refused early, not after reading the lot
        # a body with no length (chunked): 411
        with socket.create_connection(server.addr, timeout=30) as sock:
            sock.sendall(
                b"POST /reset HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"100000\r\n" + b"x" * 4096
            )
            reply = sock.recv(65536)
        assert reply.startswith(b"HTTP/1.1 411"), reply[:200]
        # under the limit but wrong: the error quotes a short prefix, never the value
        huge = "y" * (3 * MB)
        for url, body in [
            ("/reset", {huge: 1}),
            ("/reset", {"seed": huge}),
            ("/reset", {"env_id": huge}),
            ("/reset", {"task_id": huge}),
            ("/step", {"action": {huge: 1}}),
            ("/step", {huge: 1}),
            ("/retrieve", {"queries": ["a"], "topk": huge}),
            ("/retrieve", {"queries": huge}),
            ("/mcp", {"jsonrpc": "2.0", "id": 1, "method": huge}),
        ]:
            status, reply = _post(
                server.url + url, json.dumps(body).encode(), {"Content-Type": "application/json"}
            )
            assert status in (200, 404, 422) and len(reply) < 2048, (url, status, reply[:300])
        assert server.health() < 2.0
        assert server.grown_mb() < 100, server.grown_mb()
    finally:
        server.stop()


def _ws(addr: tuple[str, int]) -> socket.socket:
    sock = socket.create_connection(addr, timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def _frame(payload: bytes) -> bytes:
    """A masked text frame."""
    n = len(payload)
    head = b"\x81"
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 1 << 16:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    key = b"\x00\x00\x00\x00"  # a zero mask: the payload as is
    return head + key + payload


def _send_until_blocked(sock: socket.socket, data: bytes, seconds: float) -> int:
    """Send ``data`` for at most ``seconds``; the bytes that went (the server stops reading)."""
    sock.settimeout(seconds)
    sent = 0
    try:
        sent = sock.send(data)
        while sent < len(data):
            sent += sock.send(data[sent:])
    except (TimeoutError, OSError):
        pass
    return sent


def test_websocket_clients_that_never_read_are_bounded() -> None:
    server = Server(
        "--python", "off", "--send-buffer-bytes", str(MB), "--send-timeout-s", "2"
    )  # fmt: skip
    try:
        # 300 messages of 1 MB whose type is unknown, never read: each error quotes a short
        # prefix, so 300 replies are a few KB (they were 300 MB, each echoing its message)
        greedy = _ws(server.addr)
        big = _frame(json.dumps({"type": "t" * (MB - 64)}).encode())
        _send_until_blocked(greedy, big * 300, 30.0)
        assert server.health() < 2.0
        assert server.grown_mb() < 100, server.grown_mb()
        replies = [_reply(greedy) for _ in range(300)]
        assert all(r["data"]["code"] == "UNKNOWN_TYPE" for r in replies)
        assert max(len(json.dumps(r)) for r in replies) < 512
        greedy.close()
        # a session whose replies are large (pages opened) and never read: stopped at its
        # send budget, then closed once it stays past it for the send timeout
        reader = _ws(server.addr)
        reset = _frame(json.dumps({"type": "reset", "data": {"seed": 1}}).encode())
        call = {"name": "open", "arguments": {"page": _longest_page()}}
        step = _frame(json.dumps({"type": "step", "data": {"message": json.dumps(call)}}).encode())
        episode = reset + step * 11  # the step budget is 12
        _send_until_blocked(reader, episode * 300, 10.0)
        assert server.health() < 2.0
        assert server.grown_mb() < 100, server.grown_mb()
        time.sleep(6)  # past the send timeout (2 s), without reading
        assert server.grown_mb() < 100, server.grown_mb()
        closed, got, deadline = False, 0, time.monotonic() + 30
        reader.settimeout(2)
        while time.monotonic() < deadline and not closed:
            try:  # what the kernel buffers held, then the end of the connection
                chunk = reader.recv(1 << 20)
                closed, got = chunk == b"", got + len(chunk)
            except TimeoutError:
                break
            except OSError:
                closed = True
        assert closed, f"the server kept a client that never read ({got} bytes read)"
        assert got < 300 * 11 * 16_000  # far from every reply: the server stopped, then closed
        assert server.health() < 2.0
    finally:
        server.stop()


def _longest_page() -> str:
    """The title of a page whose first part fills an observation (~16,000 characters)."""
    snapshot, _ = default_resources(progress=False)
    table = snapshot.sql("SELECT title FROM articles ORDER BY length(text) DESC, doc_id LIMIT 1")
    return str(table.column("title")[0].as_py())


def _reset(sock: socket.socket, seed: int) -> None:
    sock.sendall(_frame(json.dumps({"type": "reset", "data": {"seed": seed}}).encode()))


def _reply(sock: socket.socket) -> dict:
    """One server text frame (unmasked), parsed."""
    sock.settimeout(60)

    def read(n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = sock.recv(n - len(out))
            assert chunk, "connection closed"
            out += chunk
        return out

    head = read(2)
    n = head[1] & 0x7F
    if n == 126:
        n = struct.unpack("!H", read(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", read(8))[0]
    return json.loads(read(n))


def test_slow_python_calls_never_hold_up_a_search() -> None:
    mode = "auto" if _bwrap_works() else "unsafe"
    server = Server("--python", mode, "--sandbox-workers", "8")
    try:
        sleepers = []
        for i in range(8):
            sock = _ws(server.addr)
            _reset(sock, i)
            _reply(sock)
            sleepers.append(sock)
        searcher = _ws(server.addr)
        _reset(searcher, 99)
        _reply(searcher)
        slow = json.dumps(
            {"type": "step", "data": {"message": "<python>import time; time.sleep(4)</python>"}}
        ).encode()
        for sock in sleepers:
            sock.sendall(_frame(slow))
        time.sleep(0.5)  # the eight programs are running
        start = time.monotonic()
        searcher.sendall(
            _frame(
                json.dumps({"type": "step", "data": {"message": "<search>city</search>"}}).encode()
            )
        )
        reply = _reply(searcher)
        waited = time.monotonic() - start
        assert reply["type"] == "observation" and "search(" in reply["data"]["observation"]["text"]
        assert waited < 2.0, waited
        assert server.health() < 2.0
        for sock in sleepers:  # the programs ran (and ended) on the sandbox's threads
            assert _reply(sock)["type"] == "observation"
            sock.close()
        searcher.close()
        assert server.grown_mb() < 100
    finally:
        server.stop()


def _bwrap_works() -> bool:
    """Whether the namespace sandbox runs here (else the test runs python unsandboxed: its
    own program, a sleep)."""
    from wikigym.sandbox import PythonSandbox, SandboxLimits

    result = PythonSandbox(SandboxLimits()).run("print(1)", seed=0)
    return result.error is None
