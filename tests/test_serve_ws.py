"""The ``/ws`` wire of ``wikigym serve`` against raw RFC 6455 frames on a socket: every
malformed frame or handshake gets its close code or HTTP status, never a crash or a hang; the
server keeps serving other sessions; HTTP shares the port. Loopback only, every wait bounded."""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import struct
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from integration_support import need

need("uvicorn")
need("picows")

from wikigym.integrations.serve import ServeConfig  # noqa: E402
from wikigym.integrations.serve.config import ServeLimits  # noqa: E402
from wikigym.integrations.serve.server import serve_in_thread  # noqa: E402
from wikigym.integrations.serve.ws import MAX_MESSAGE_BYTES, MAX_PENDING  # noqa: E402
from wikigym.tasks.defaults import default_resources, default_tasks_path  # noqa: E402

pytestmark = pytest.mark.timeout(120)

TEXT, BINARY, CONT, CLOSE, PING, PONG = 0x1, 0x2, 0x0, 0x8, 0x9, 0xA
RESET = json.dumps({"type": "reset", "data": {"seed": 1}}).encode()


@pytest.fixture(
    scope="module",
    params=[(None, "asyncio"), (2, "asyncio"), (None, "uvloop")],
    ids=["on-the-loop", "in-threads", "uvloop"],
)
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, Any]]:
    """A server that runs env work on its event loop (the default for CPU-only steps), one
    that runs it in env threads, and one on uvloop (which Uvicorn picks when it is installed;
    its transports are not asyncio's classes): every wire test holds for each."""
    workers, loop = request.param
    if loop == "uvloop":
        need("uvloop")
    snapshot, _ = default_resources(progress=False)
    config = ServeConfig(
        corpus=str(snapshot.path),
        tasks=str(default_tasks_path()),
        env_kwargs={"WikiSearch-v1": {"python": "off"}},
        workers=workers,
    )
    with serve_in_thread(config, loop=loop) as served:
        yield served


def frame(
    opcode: int, payload: bytes, *, fin: bool = True, mask: bool = True, rsv: int = 0
) -> bytes:
    """One client frame (masked unless asked not to)."""
    head = bytes([(0x80 if fin else 0) | rsv << 4 | opcode])
    n = len(payload)
    bit = 0x80 if mask else 0
    if n < 126:
        head += bytes([bit | n])
    elif n < 1 << 16:
        head += bytes([bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", n)
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


class Raw:
    """A WebSocket client on a plain socket: sends any bytes, reads server frames."""

    def __init__(self, url: str, path: str = "/ws", **headers: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        fields = {
            "Host": f"{host}:{port}",
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
            "Sec-WebSocket-Version": "13",
            **{k.replace("_", "-"): v for k, v in headers.items()},
        }
        head = f"GET {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items())
        self.sock.sendall(head.encode() + b"\r\n")
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.buf += chunk
        status, _, self.buf = self.buf.partition(b"\r\n\r\n")
        self.status = int(status.split()[1]) if status else 0

    def _read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self) -> tuple[int, bytes]:
        b0, b1 = self._read(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._read(8))[0]
        return b0 & 0x0F, self._read(n)

    def message(self) -> dict[str, Any]:
        opcode, payload = self.recv()
        assert opcode == TEXT, (opcode, payload)
        return json.loads(payload)

    def close_code(self) -> int:
        """The code of the server's close frame (skipping data frames before it)."""
        while True:
            opcode, payload = self.recv()
            if opcode == CLOSE:
                return struct.unpack("!H", payload[:2])[0]

    def closed_after(self) -> bool:
        """Whether the server then drops the TCP connection."""
        self.sock.settimeout(10)
        try:
            while self.sock.recv(65536):
                pass
        except OSError:
            pass
        return True

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)


def active(url: str) -> float:
    text = urllib.request.urlopen(f"{url}/metrics", timeout=5).read().decode()
    line = next(x for x in text.splitlines() if x.startswith("wikigym_sessions_active "))
    return float(line.split()[-1])


def wait_idle(url: str) -> None:
    deadline = time.monotonic() + 10
    while active(url) != 0:
        assert time.monotonic() < deadline, "a session was not freed"
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (frame(TEXT, RESET, mask=False), 1002),  # a client frame must be masked
        (frame(TEXT, RESET, rsv=4), 1002),  # reserved bit, no extension negotiated
        (frame(0x3, b"x"), 1002),  # reserved opcode
        (frame(PING, b"x", fin=False), 1002),  # fragmented control frame
        (frame(PING, b"x" * 126), 1002),  # control frame past 125 bytes
        (frame(CONT, b"x"), 1002),  # continuation of no message
        (frame(TEXT, b'{"ty', fin=False) + frame(TEXT, b"x"), 1002),  # new message inside one
        (frame(TEXT, b"\xff\xfe"), 1007),  # not UTF-8
        (frame(BINARY, RESET), 1003),  # JSON comes in text frames
        (frame(TEXT, b"x" * (MAX_MESSAGE_BYTES + 1)), 1009),  # one frame past the bound
        (
            frame(TEXT, b"x" * (MAX_MESSAGE_BYTES // 2 + 1), fin=False)
            + frame(CONT, b"x" * (MAX_MESSAGE_BYTES // 2 + 1)),
            1009,
        ),  # fragments past the bound together
        (frame(CLOSE, struct.pack("!H", 999)), 1002),  # invalid close code
    ],
    ids=[
        "unmasked", "rsv", "opcode", "fragmented-control", "big-control", "orphan-continuation",
        "interleaved", "utf8", "binary", "too-big", "too-big-fragments", "bad-close-code",
    ],
)  # fmt: skip
def test_malformed_frames_close_with_their_code(server, data: bytes, code: int) -> None:
    url, _ = server
    bad = Raw(url)
    assert bad.status == 101
    bad.send(data)
    assert bad.close_code() == code
    assert bad.closed_after()
    wait_idle(url)  # the session's slot is freed
    good = Raw(url)  # and the server still serves
    good.send(frame(TEXT, RESET))
    assert good.message()["type"] == "observation"
    good.send(frame(CLOSE, struct.pack("!H", 1000)))
    assert good.close_code() == 1000


def test_fragments_ping_and_close_handshake(server) -> None:
    url, _ = server
    ws = Raw(url)
    half = len(RESET) // 2
    # a message in three fragments, with a ping between them (control frames may interleave)
    ws.send(frame(TEXT, RESET[:half], fin=False) + frame(PING, b"hello"))
    ws.send(frame(CONT, RESET[half:-1], fin=False) + frame(CONT, RESET[-1:]))
    assert ws.recv() == (PONG, b"hello")
    reply = ws.message()
    assert reply["type"] == "observation" and reply["data"]["observation"]["info"]["step"] == 0
    ws.send(frame(PONG, b"unsolicited"))  # ignored
    ws.send(frame(TEXT, json.dumps({"type": "state"}).encode()))
    assert ws.message()["data"]["step_count"] == 0
    ws.send(frame(CLOSE, struct.pack("!H", 1000) + b"bye"))
    assert ws.close_code() == 1000
    assert ws.closed_after()
    wait_idle(url)


def test_pipelined_messages_are_answered_in_order(server) -> None:
    """More messages than a session queues (reading pauses, then resumes): every one answered,
    in order."""
    url, _ = server
    ws = Raw(url)
    n = 3 * MAX_PENDING
    ws.send(frame(TEXT, RESET) + frame(TEXT, json.dumps({"type": "state"}).encode()) * n)
    assert ws.message()["type"] == "observation"
    replies = [ws.message() for _ in range(n)]
    assert [r["type"] for r in replies] == ["state"] * n
    ws.send(frame(TEXT, json.dumps({"type": "close"}).encode()))
    assert ws.close_code() == 1000
    wait_idle(url)


@pytest.mark.parametrize(
    ("path", "headers", "status"),
    [
        ("/ws", {"Sec-WebSocket-Version": "8"}, 426),
        ("/ws", {"Sec-WebSocket-Key": "short"}, 400),
        ("/ws", {"Connection": "close"}, 400),
        ("/elsewhere", {}, 404),
    ],
    ids=["version", "key", "connection", "path"],
)
def test_bad_handshakes_are_refused(
    server, path: str, headers: dict[str, str], status: int
) -> None:
    url, _ = server
    raw = Raw(url, path, **headers)
    assert raw.status == status
    assert raw.closed_after()
    assert active(url) == 0


def test_http_shares_the_port_and_silent_connections_are_dropped(
    server, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = server
    host, port = url.removeprefix("http://").split(":")
    # keep-alive HTTP on one connection, next to a WebSocket session
    ws = Raw(url)
    ws.send(frame(TEXT, RESET))
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    sockets = []
    for route in ("/health", "/schema"):
        conn.request("GET", route)
        reply = conn.getresponse()
        assert reply.status == 200 and json.loads(reply.read())
        sockets.append(conn.sock)
    assert sockets[0] is sockets[1]  # one connection, kept alive
    conn.close()
    assert ws.message()["type"] == "observation"
    # a request head that never ends is refused, not buffered without bound
    with socket.create_connection((host, int(port)), timeout=30) as slow:
        slow.sendall(b"GET /health HTTP/1.1\r\nX: " + b"a" * (ServeLimits().max_head_bytes + 1))
        reply = slow.recv(65536)
        assert reply.startswith(b"HTTP/1.1 4") or reply == b""
    # a connection that sends nothing is closed after the head timeout
    connections = server[1].state.hub.connections
    monkeypatch.setattr(connections, "limits", ServeLimits(head_timeout_s=0.3))
    with socket.create_connection((host, int(port)), timeout=10) as silent:
        start = time.monotonic()
        assert silent.recv(1) == b""
        assert time.monotonic() - start < 5


def test_an_env_exception_ends_that_episode_only(server) -> None:
    """A bug in one session's env (simulated: its step raises) is that session's
    EXECUTION_ERROR; another session steps on, and the failed one can reset."""
    url, app = server
    step = json.dumps({"type": "step", "data": {"message": "<search>city</search>"}}).encode()
    bad, good = Raw(url), Raw(url)
    ids = []
    for ws in (bad, good):
        ws.send(frame(TEXT, RESET))
        ids.append(ws.message()["data"]["observation"]["session_id"])

    def broken(action: str) -> None:
        raise RuntimeError("env bug")

    app.state.pool.sessions[ids[0]].envs["WikiSearch-v1"].step = broken
    bad.send(frame(TEXT, step))
    good.send(frame(TEXT, step))
    error = bad.message()
    assert error["type"] == "error" and error["data"]["code"] == "EXECUTION_ERROR"
    assert "env bug" in error["data"]["message"]
    assert good.message()["data"]["observation"]["info"]["step"] == 1
    bad.send(frame(TEXT, step))  # the episode was ended
    assert bad.message()["data"]["code"] == "EPISODE_DONE"
    bad.send(frame(TEXT, RESET))
    assert bad.message()["data"]["observation"]["info"]["step"] == 0
    for ws in (bad, good):
        ws.send(frame(CLOSE, struct.pack("!H", 1000)))
        assert ws.close_code() == 1000
    wait_idle(url)


def test_a_failed_first_reset_leaves_the_session_usable(server) -> None:
    """Issue 33: a session whose first reset fails (an unknown task id) resets and steps on;
    Gymnasium's passive checker used to turn every later step into EXECUTION_ERROR."""
    url, _ = server
    ws = Raw(url)
    bad = json.dumps({"type": "reset", "data": {"seed": 1, "task_id": "no-such-task"}})
    for _ in range(2):
        ws.send(frame(TEXT, bad.encode()))
        error = ws.message()
        assert error["type"] == "error" and error["data"]["code"] == "VALIDATION_ERROR", error
    ws.send(frame(TEXT, RESET))
    assert ws.message()["data"]["observation"]["info"]["step"] == 0
    for n in (1, 2):
        ws.send(frame(TEXT, json.dumps({"type": "step", "data": {"message": "hi"}}).encode()))
        reply = ws.message()
        assert reply["type"] == "observation", reply
        assert reply["data"]["observation"]["info"]["step"] == n
    ws.send(frame(CLOSE, struct.pack("!H", 1000)))
    assert ws.close_code() == 1000
    wait_idle(url)


def test_connections_send_without_nagle_delay(server) -> None:
    """Accepted sockets have TCP_NODELAY (asyncio sets it only on a socket whose proto is TCP):
    an HTTP response written as head then body is not held for the client's delayed ACK."""
    url, app = server
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("GET", "/health")
    assert conn.getresponse().read()
    transports = list(app.state.hub.connections.open.values())
    assert transports
    for transport in transports:
        sock = transport.get_extra_info("socket")
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    conn.close()


def test_kept_alive_connections_are_bounded_request_by_request(server) -> None:
    """The second request of a kept-alive connection is held to the same bounds as the
    first (a 413 after a 200 on one socket); an upgrade after HTTP requests on one connection
    is refused in words (clients open a connection for a WebSocket)."""
    url, _ = server
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("GET", "/health")
    assert conn.getresponse().read()
    too_big = ServeLimits().max_body_bytes + 1
    conn.putrequest("POST", "/reset")
    conn.putheader("Content-Length", str(too_big))
    conn.endheaders()
    reply = conn.getresponse()
    assert reply.status == 413 and len(reply.read()) < 512
    conn.close()
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        first = b""
        while not first.endswith(b"}"):  # the whole JSON reply
            first += sock.recv(4096)
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(
            (
                "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = sock.recv(4096)
        assert head.startswith(b"HTTP/1.1 400") and b"first request" in head, head
