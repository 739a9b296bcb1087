"""Every TCP connection of a server, bounded: how many, how long a request may take to arrive,
how large it may be, how much of the server's replies a client may leave unread.

A connection starts in :class:`HttpFront`, which reads whole requests (head, then the body its
``Content-Length`` declares) before Uvicorn sees them, under the head and body timeouts and
sizes of :class:`~.config.ServeLimits`; a WebSocket upgrade is handed to picows
(:meth:`~.ws.Hub.protocol`). :class:`Connections` counts the connections under a limit
set below the process's open-file limit (so ``accept`` never fails for want of a descriptor),
makes room for a newcomer by dropping the connection that has waited longest on an unfinished
request (slow, half-sent requests cannot fill the server), and closes a connection that
leaves more than its send budget unread for longer than the send timeout.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, cast

from wikigym.integrations.serve.config import ServeLimits

log = logging.getLogger("wikigym.serve")

SWEEP_INTERVAL_S = 0.25
"""How often send buffers are checked against the budget."""

_REASONS = {
    400: "Bad Request",
    408: "Request Timeout",
    411: "Length Required",
    413: "Content Too Large",
    431: "Request Header Fields Too Large",
    503: "Service Unavailable",
}


def refusal(status: int, message: str) -> bytes:
    """A complete HTTP/1.1 error response that closes the connection (a JSON body)."""
    body = b'{"detail": "' + message.encode() + b'", "code": "HTTP_' + str(status).encode() + b'"}'
    return (
        f"HTTP/1.1 {status} {_REASONS[status]}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body


class Connections:
    """The open connections of one server, under :meth:`ServeLimits.connection_limit`.

    Attributes:
        limits: The bounds.
        limit: Connections held at once.
        open: Each open connection's transport, by its protocol object.
        waiting: Connections with an unfinished request, the longest-waiting first.
        stopping: Set at shutdown: a new connection is refused.
    """

    def __init__(self, limits: ServeLimits) -> None:
        self.limits = limits
        self.limit = limits.connection_limit()
        self.open: dict[object, asyncio.BaseTransport] = {}
        self.waiting: dict[HttpFront, None] = {}
        self.stopping = False
        self._over: dict[object, float] = {}
        self.refused = 0
        self.dropped = 0

    def admit(self, conn: object, transport: asyncio.BaseTransport) -> bool:
        """Count a new connection in; False when there is no room (the caller refuses it).

        At the limit, the connection that has waited longest on an unfinished request is
        dropped to make room: a client that opens many connections and sends slowly holds
        only what nobody else asks for.
        """
        if self.stopping:
            self.refused += 1
            return False
        if len(self.open) >= self.limit:
            victim = next(iter(self.waiting), None)
            if victim is None:
                self.refused += 1
                return False
            self.dropped += 1
            victim.drop()
        self.open[conn] = transport
        return True

    def replace(self, old: object, new: object) -> None:
        """``new`` (a protocol taking over the transport) holds ``old``'s slot."""
        transport = self.open.pop(old, None)
        self.waiting.pop(cast(Any, old), None)
        if transport is not None:
            self.open[new] = transport

    def release(self, conn: object) -> None:
        """The connection is gone (idempotent)."""
        self.open.pop(conn, None)
        self.waiting.pop(cast(Any, conn), None)
        self._over.pop(conn, None)

    def sweep(self, now: float) -> None:
        """Close every connection that has kept more than its send budget unread for longer
        than the send timeout (a client that never reads)."""
        budget, timeout = self.limits.send_buffer_bytes, self.limits.send_timeout_s
        for conn, transport in list(self.open.items()):
            size = cast(asyncio.WriteTransport, transport).get_write_buffer_size()
            if size <= budget:
                self._over.pop(conn, None)
                continue
            since = self._over.setdefault(conn, now)
            if now - since > timeout:
                log.warning("closing a connection that left %d bytes unread", size)
                self.release(conn)
                cast(asyncio.WriteTransport, transport).abort()

    def close_all(self) -> None:
        """Drop every connection now (the end of a drain)."""
        self.stopping = True
        for conn, transport in list(self.open.items()):
            self.release(conn)
            cast(asyncio.WriteTransport, transport).abort()


async def sweep_forever(connections: Connections) -> None:
    """:meth:`Connections.sweep`, every :data:`SWEEP_INTERVAL_S`."""
    while True:
        await asyncio.sleep(SWEEP_INTERVAL_S)
        connections.sweep(time.monotonic())


def _header(head: bytes, name: bytes) -> bytes | None:
    """The value of header ``name`` (lower case) in a lower-cased request head."""
    for line in head.split(b"\r\n")[1:]:
        key, sep, value = line.partition(b":")
        if sep and key.strip() == name:
            return value.strip()
    return None


class HttpFront(asyncio.Protocol):
    """A connection's protocol: reads each request whole, then hands it on.

    The first request that asks for a WebSocket upgrade hands the connection, bytes read so
    far included, to ``websocket()`` (picows). Any other complete request (head and the body
    its ``Content-Length`` declares) goes to Uvicorn's HTTP protocol, made on the first one,
    which parses it in full itself; the connection stays here for the next request (HTTP
    keep-alive), so every request is held to the same bounds. A request that is not whole in
    time, is too large, or has a body without a length is answered 408, 413/431 or 411 and the
    connection closed.
    """

    def __init__(
        self,
        connections: Connections,
        http: Callable[[], asyncio.Protocol],
        websocket: Callable[[], asyncio.BufferedProtocol],
    ) -> None:
        self.connections = connections
        self.limits = connections.limits
        self.make_http = http
        self.make_websocket = websocket
        self.http: asyncio.Protocol | None = None
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.need: int | None = None  # bytes of the current request, once its head is read
        self.timer: asyncio.TimerHandle | None = None
        self.done = False

    # ---- asyncio callbacks --------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport, but not always an asyncio.Transport subclass: uvloop's (which
        # Uvicorn picks when it is installed) only has the same methods.
        self.transport = cast(asyncio.Transport, transport)
        if not self.connections.admit(self, transport):
            self._refuse(503, "server at its connection limit; retry later")
            return
        self._start_waiting(self.limits.head_timeout_s)

    def data_received(self, data: bytes) -> None:
        if self.done:
            return
        if self.need is None and not self.buffer and self.timer is None:
            self._start_waiting(self.limits.head_timeout_s)  # a keep-alive request begins
        self.buffer += data
        while self.buffer and not self.done:
            if self.need is None and not self._read_head():
                return
            assert self.need is not None
            if len(self.buffer) < self.need:
                return
            request, self.need = bytes(self.buffer[: self.need]), None
            del self.buffer[: len(request)]
            self._stop_waiting()
            self._forward(request)
            if self.buffer and not self.done:
                self._start_waiting(self.limits.head_timeout_s)

    def eof_received(self) -> bool | None:
        if self.http is not None:
            return self.http.eof_received()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        self.connections.release(self)
        if self.http is not None:
            self.http.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.http is not None:
            self.http.pause_writing()

    def resume_writing(self) -> None:
        if self.http is not None:
            self.http.resume_writing()

    # ---- requests -----------------------------------------------------------------------
    def _read_head(self) -> bool:
        """Find the head of the buffered request and size the request; False until whole."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > self.limits.max_head_bytes:
                self._refuse(431, "request head too large")
            return False
        if end > self.limits.max_head_bytes:
            self._refuse(431, "request head too large")
            return False
        head = bytes(self.buffer[:end]).lower()
        if _upgrade(head):
            if self.http is not None:  # Uvicorn holds the connection (and would close it)
                self._refuse(400, "a WebSocket upgrade must be a connection's first request")
            else:
                self._hand_to_websocket()
            return False
        if _header(head, b"transfer-encoding") is not None:
            self._refuse(411, "a request body needs a Content-Length")
            return False
        raw = _header(head, b"content-length")
        length = 0
        if raw is not None:
            if not raw.isdigit():
                self._refuse(400, "bad Content-Length")
                return False
            length = int(raw)
        if length > self.limits.max_body_bytes:
            self._refuse(413, f"request body over {self.limits.max_body_bytes} bytes")
            return False
        self.need = end + 4 + length
        if len(self.buffer) < self.need:
            self._stop_waiting()
            self._start_waiting(self.limits.body_timeout_s)
            if _header(head, b"expect") == b"100-continue" and self.transport is not None:
                self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # curl waits for it
        return True

    def _forward(self, request: bytes) -> None:
        assert self.transport is not None
        if self.http is None:
            self.http = self.make_http()
            self.http.connection_made(self.transport)
        self.http.data_received(request)

    def _hand_to_websocket(self) -> None:
        assert self.transport is not None
        self._stop_waiting()
        self.done = True
        protocol = self.make_websocket()
        self.connections.replace(self, protocol)
        self.transport.set_protocol(protocol)
        protocol.connection_made(self.transport)
        view = memoryview(bytes(self.buffer))
        self.buffer.clear()
        while view:
            buffer = memoryview(protocol.get_buffer(len(view)))
            n = min(len(buffer), len(view))
            buffer[:n] = view[:n]
            protocol.buffer_updated(n)
            view = view[n:]

    # ---- waiting and refusing -----------------------------------------------------------
    def _start_waiting(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        self.timer = loop.call_later(seconds, self._timed_out)
        self.connections.waiting[self] = None

    def _stop_waiting(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.connections.waiting.pop(self, None)

    def _timed_out(self) -> None:
        self.timer = None
        if self.need is None and not self.buffer:  # idle between requests: Uvicorn's keep-alive
            self.connections.waiting.pop(self, None)
            if self.http is None and self.transport is not None:
                self.done = True
                self.transport.close()  # a connection that never sent a request
            return
        self._refuse(408, "request not received in time")

    def _refuse(self, status: int, message: str) -> None:
        self._stop_waiting()
        self.done = True
        self.buffer.clear()
        if self.transport is None or self.transport.is_closing():
            return
        if self._between_responses():
            self.transport.write(refusal(status, message))
        self.transport.close()

    def _between_responses(self) -> bool:
        """Whether no response of Uvicorn's is under way (a refusal may be written)."""
        if self.http is None:
            return True
        cycle = getattr(self.http, "cycle", None)  # Uvicorn's request cycle (h11, httptools)
        return cycle is None or bool(getattr(cycle, "response_complete", False))

    def drop(self) -> None:
        """Close the connection at once (made room for a newcomer)."""
        self._stop_waiting()
        self.done = True
        self.connections.release(self)
        if self.transport is not None:
            self.transport.abort()


def _upgrade(head: bytes) -> bool:
    """Whether a (lower-cased) request head asks for a WebSocket upgrade."""
    value = _header(head, b"upgrade")
    return value == b"websocket"
