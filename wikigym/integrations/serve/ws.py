"""``/ws`` sessions on picows: RFC 6455 frames parsed in Cython, one listener per connection.

picows checks the handshake (GET, HTTP/1.1, ``Upgrade``/``Connection`` headers, a 16-byte
``Sec-WebSocket-Key``), masking, opcodes, control frame sizes, payload length encodings, the
frame size bound and close codes, and answers pings. This module adds what it leaves to its
user: version 13 only, reserved bits (no extension is negotiated), UTF-8 text, message
reassembly from fragments under the message bound, the close handshake, read backpressure, and
the OpenEnv messages themselves, and the bounds of :class:`~.config.ServeLimits`: a message's
size, the messages and bytes a session queues unanswered, and the replies it leaves unread
(past the send budget the session stops taking messages until the client reads; the
connection sweep closes one that never does). Every violation closes that connection with
its RFC code; nothing a client sends raises out of a callback, and no reply echoes more than
a short prefix of what it sent.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from http import HTTPStatus
from typing import Any, cast
from urllib.parse import parse_qs

from picows import (
    WSAutoPingStrategy,
    WSCloseCode,
    WSFrame,
    WSListener,
    WSMsgType,
    WSProtocolError,
    WSTransport,
    WSUpgradeRequest,
    WSUpgradeResponse,
    WSUpgradeResponseWithListener,
)
from picows.picows import WSProtocol  # type: ignore[attr-defined, unused-ignore]

from wikigym.integrations.serve.config import ServeLimits
from wikigym.integrations.serve.connections import Connections
from wikigym.integrations.serve.protocol import (
    ProtocolError,
    WireCode,
    action_text,
    dumps,
    error_message,
    parse_message,
    quote,
)
from wikigym.integrations.serve.sessions import Ran, Session, SessionPool

log = logging.getLogger("wikigym.serve")

MAX_MESSAGE_BYTES = ServeLimits().max_message_bytes
"""The default largest message (one frame, or the sum of a fragmented message's frames)."""

HANDSHAKE_TIMEOUT_S = 10.0
"""A connection that has not completed the handshake in this long is closed."""

MAX_PENDING = ServeLimits().max_pending_messages
"""The default of messages a session holds unanswered before its socket is no longer read."""


class TrackedWSProtocol(WSProtocol):  # type: ignore[misc, valid-type, unused-ignore]
    """picows' server protocol, which frees its connection slot when the connection ends."""

    connections: Connections | None = None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.connections is not None:
            self.connections.release(self)
        super().connection_lost(exc)


_DATA_FRAMES = (WSMsgType.TEXT, WSMsgType.BINARY)


class Hub:
    """What every connection of one server shares: the pool, the open sockets, the state.

    Attributes:
        pool: The sessions and their env threads.
        sockets: Open ``/ws`` connections by session id (the reaper and shutdown close them).
        stopping: Set once shutdown starts: new connections are told ``SHUTTING_DOWN``.
        authorized: ``(path, headers) -> path`` without the token prefix, or None when the
            request lacks the server's token (see :func:`~.app.authorized_path`).
    """

    def __init__(
        self,
        pool: SessionPool,
        authorized: Callable[[str, dict[bytes, bytes]], str | None],
        connections: Connections | None = None,
    ) -> None:
        self.pool = pool
        self.sockets: dict[str, WsSession] = {}
        self.stopping = False
        self.authorized = authorized
        self.limits = pool.config.limits
        self.connections = connections or Connections(self.limits)

    def listener(self, request: WSUpgradeRequest) -> WSListener | WSUpgradeResponseWithListener:
        """picows' router: a session for ``/ws`` (a new one, or with ``?session_id=`` the
        session made over HTTP ``/mcp`` that OpenEnv's ``MCPToolClient`` attaches to), an
        HTTP error for anything else."""
        headers = {k.lower().encode(): v.encode() for k, v in request.headers.items()}
        target, _, query = request.path.decode("latin-1").partition("?")
        path = self.authorized(target, headers)
        if path is None:
            return _refusal(HTTPStatus.FORBIDDEN, b"missing or wrong token")
        if path != "/ws":
            return _refusal(HTTPStatus.NOT_FOUND, b"WebSocket sessions are served on /ws")
        if request.headers.get("sec-websocket-version") != "13":
            response = WSUpgradeResponse.create_error_response(
                HTTPStatus.UPGRADE_REQUIRED, b"WebSocket version 13 only"
            )
            response.headers["Sec-WebSocket-Version"] = "13"
            return WSUpgradeResponseWithListener(response, None)
        attach = parse_qs(query).get("session_id", [None])[0]
        return WsSession(self, attach)

    def protocol(self) -> asyncio.BufferedProtocol:
        """A picows server-side protocol for one connection, routed by :meth:`listener`."""
        # the class ws_create_server makes, for one socket (not in picows' stubs)
        protocol: TrackedWSProtocol = TrackedWSProtocol(
            None,  # host and port: a client's
            None,  # path: a client's
            False,  # server side
            self.listener,
            log,
            True,  # a bug in a callback closes that connection (1011), logged
            HANDSHAKE_TIMEOUT_S,
            False,  # no pings from the server: sessions end by the idle timeout
            20.0,
            20.0,
            WSAutoPingStrategy.PING_WHEN_IDLE,
            True,  # answer pings
            self.limits.max_message_bytes,  # a frame past it: close 1009
            None,  # extra headers: a client's
            16 * 1024,  # initial read buffer
        )
        protocol.connections = self.connections
        return cast(asyncio.BufferedProtocol, protocol)


def _refusal(status: HTTPStatus, body: bytes) -> WSUpgradeResponseWithListener:
    return WSUpgradeResponseWithListener(
        WSUpgradeResponse.create_error_response(status, body), None
    )


class WsSession(WSListener):
    """One connection's OpenEnv session: messages answered in order, env work in threads.

    A message is read whole (reassembled from its fragments), decoded, and queued; the
    session runs one at a time: a reset or step goes to an env thread and its reply is sent
    from the event loop when it is done, then the next message starts. Past
    :data:`MAX_PENDING` queued messages the socket stops being read until the queue drains.
    """

    def __init__(self, hub: Hub, attach: str | None = None) -> None:
        super().__init__()
        self.hub = hub
        self.attach = attach
        self.limits = hub.limits
        self.transport: WSTransport | None = None
        self.session: Session | None = None
        self.pending: deque[tuple[str, int]] = deque()  # messages and their sizes in bytes
        self.pending_bytes = 0
        self.running = False  # a reset or step is in an env thread
        self.paused = False  # the socket is not read
        self.write_paused = False  # the client has left its send budget unread
        self.fragments: list[bytes] | None = None
        self.fragment_type = WSMsgType.TEXT
        self.fragment_bytes = 0
        self.loop: asyncio.AbstractEventLoop | None = None

    # ---- picows callbacks (the event loop's thread) -------------------------------------
    def on_ws_connected(self, transport: WSTransport) -> None:
        self.transport = transport
        self.loop = asyncio.get_running_loop()
        pool = self.hub.pool
        if self.hub.stopping:
            message = error_message(WireCode.SHUTTING_DOWN, "server stopping")
            self._close_with(message, WSCloseCode.GOING_AWAY)
            return
        # the send budget: picows calls pause_writing past it, resume_writing once drained
        transport.underlying_transport.set_write_buffer_limits(high=self.limits.send_buffer_bytes)
        if self.attach is not None:
            found = pool.find(self.attach)
            if found is None or found.attached:
                why = "is already attached" if found is not None else "is not open"
                message = error_message(
                    WireCode.SESSION_ERROR,
                    f"session {quote(self.attach)} {why}; open one with openenv/session/create",
                )
                self._close_with(message, WSCloseCode.POLICY_VIOLATION)
                return
            found.attached = True
            self.session = found
            self.hub.sockets[self.attach] = self
            return
        try:
            self.session = pool.open()
        except ProtocolError as exc:
            pool.metrics.error(exc.code.value)
            message = error_message(
                exc.code,
                exc.message,
                active_sessions=pool.held,
                max_sessions=pool.config.max_sessions,
            )
            self._close_with(message, WSCloseCode.TRY_AGAIN_LATER)
            return
        assert self.session.session_id is not None
        self.hub.sockets[self.session.session_id] = self

    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        kind = frame.msg_type
        if frame.rsv1 or frame.rsv2 or frame.rsv3:
            raise WSProtocolError(WSCloseCode.PROTOCOL_ERROR, "reserved bits set: no extension")
        if kind in _DATA_FRAMES:
            if self.fragments is not None:
                raise WSProtocolError(
                    WSCloseCode.PROTOCOL_ERROR, "a new message began inside a fragmented one"
                )
            if frame.fin:
                self._message(kind, frame.get_payload_as_bytes())
                return
            self.fragments, self.fragment_type = [], kind
            self.fragment_bytes = 0
            self._fragment(frame)
        elif kind is WSMsgType.CONTINUATION:
            if self.fragments is None:
                raise WSProtocolError(WSCloseCode.PROTOCOL_ERROR, "continuation of no message")
            self._fragment(frame)
            if frame.fin:
                payload, self.fragments = b"".join(self.fragments), None
                self._message(self.fragment_type, payload)
        elif kind is WSMsgType.CLOSE:
            code = frame.get_close_code()
            transport.send_close(WSCloseCode.OK if code is WSCloseCode.NO_INFO else code)
            transport.disconnect()
        # PONG: nothing to do (PING is answered by picows)

    def on_ws_disconnected(self, transport: WSTransport) -> None:
        self.pending.clear()
        self.pending_bytes = 0
        if not self.running:  # else the env thread's reply finds the socket gone and frees it
            self._free()

    def pause_writing(self) -> None:
        """The client left more than its send budget unread: take no message until it reads."""
        self.write_paused = True
        self._update_reading()

    def resume_writing(self) -> None:
        self.write_paused = False
        self._update_reading()
        if not self.running and self.pending and self.session is not None:
            self._next()

    # ---- messages -------------------------------------------------------------------------
    def _fragment(self, frame: WSFrame) -> None:
        assert self.fragments is not None
        self.fragment_bytes += frame.payload_size
        if self.fragment_bytes > MAX_MESSAGE_BYTES:
            raise WSProtocolError(
                WSCloseCode.MESSAGE_TOO_BIG, f"a message is at most {MAX_MESSAGE_BYTES} bytes"
            )
        self.fragments.append(frame.get_payload_as_bytes())

    def _message(self, kind: WSMsgType, payload: bytes) -> None:
        if kind is not WSMsgType.TEXT:
            raise WSProtocolError(
                WSCloseCode.UNSUPPORTED_DATA, "messages are JSON text frames, not binary"
            )
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            raise WSProtocolError(WSCloseCode.INVALID_TEXT, "a text frame is not UTF-8") from None
        if self.session is None:  # refused at connect: its close is on the way
            return
        self.pending.append((text, len(payload)))
        self.pending_bytes += len(payload)
        self._update_reading()
        if not self.running:
            self._next()

    def _update_reading(self) -> None:
        """Read the socket only while the session has room for messages and the client
        reads its replies (backpressure: what a client sends waits in its own buffers)."""
        if self.transport is None or self.transport.is_disconnected:
            return
        full = (
            len(self.pending) >= self.limits.max_pending_messages
            or self.pending_bytes >= self.limits.max_message_bytes
            or self.write_paused
        )
        if full and not self.paused:
            self.paused = True
            self.transport.underlying_transport.pause_reading()
        elif not full and self.paused:
            self.paused = False
            self.transport.underlying_transport.resume_reading()

    def _next(self) -> None:
        """Answer queued messages until one needs an env thread (or none is left, or the
        client has stopped reading its replies)."""
        pool, session = self.hub.pool, self.session
        assert session is not None and session.session_id is not None
        while self.pending and not self.write_paused:
            raw, size = self.pending.popleft()
            self.pending_bytes -= size
            if session.session_id not in pool.sessions:  # reaped while this message came in
                self.pending.clear()
                self.pending_bytes = 0
                return
            session.last_active = time.monotonic()
            kind = ""
            try:
                kind, data = parse_message(raw)
                if kind == "reset":
                    self._submit(pool.reset_sync, session, data)
                    return
                if kind == "step":
                    text = action_text(data)
                    self._start(pool.submit_step(session, text))
                    return
                if kind == "state":
                    self._send({"type": "state", "data": session.state()})
                    continue
                if kind == "close":
                    self.pending.clear()
                    self.pending_bytes = 0
                    if self.transport is not None:
                        self.transport.send_close(WSCloseCode.OK)
                        self.transport.disconnect()
                    return
                raise ProtocolError(
                    WireCode.UNKNOWN_TYPE,
                    f"unknown message type {quote(kind)}; expected reset, step, state or close",
                )
            except ProtocolError as exc:
                pool.metrics.error(exc.code.value)
                self._send(error_message(exc.code, exc.message))
        self._update_reading()

    def _submit(self, fn: Callable[..., dict[str, Any]], *args: Any) -> None:
        self._start(self.hub.pool.submit(fn, *args))

    def _start(self, future: Future[dict[str, Any]] | Ran[dict[str, Any]]) -> None:
        assert self.session is not None
        self.running = self.session.busy = True
        loop = self.loop
        assert loop is not None
        if isinstance(future, Ran):  # ran inline: reply on the loop's next turn (no recursion)
            loop.call_soon(self._done, future)
        else:
            future.add_done_callback(lambda f: loop.call_soon_threadsafe(self._done, f))

    def _done(self, future: Future[dict[str, Any]] | Ran[dict[str, Any]]) -> None:
        """A reset or step finished (in an env thread, or inline): reply, then take the next
        message."""
        session, pool = self.session, self.hub.pool
        assert session is not None
        self.running = session.busy = False
        session.last_active = time.monotonic()
        try:
            response = {"type": "observation", "data": future.result()}
        except ProtocolError as exc:
            pool.metrics.error(exc.code.value)
            response = error_message(exc.code, exc.message)
        except Exception as exc:  # an env bug: logged with its trace, this session only
            log.error("session %s failed", session.session_id, exc_info=exc)
            pool.metrics.error(WireCode.EXECUTION_ERROR.value)
            session.done = True  # the env may be half-stepped: a reset starts clean
            response = error_message(
                WireCode.EXECUTION_ERROR,
                f"{type(exc).__name__}: {exc}; the episode was ended, send a reset",
            )
        if self.transport is None or self.transport.is_disconnected:
            self._free()
            return
        self._send(response)
        self._next()

    def _send(self, message: dict[str, Any]) -> None:
        if self.transport is not None and not self.transport.is_close_frame_sent:
            self.transport.send(WSMsgType.TEXT, dumps(message))

    # ---- ending ---------------------------------------------------------------------------
    def _close_with(self, message: dict[str, Any] | None, code: WSCloseCode) -> None:
        if message is not None:
            self._send(message)
        if self.transport is not None and not self.transport.is_close_frame_sent:
            self.transport.send_close(code)
            self.transport.disconnect()

    def expire(self, message: dict[str, Any] | None = None) -> None:
        """Closed by the server (idle timeout, shutdown): a last message, then close 1001."""
        self._close_with(message, WSCloseCode.GOING_AWAY)

    def _free(self) -> None:
        """Free the session's slot and close its envs (once the socket is gone)."""
        session, self.session = self.session, None
        if session is None or session.session_id is None:
            return
        self.hub.sockets.pop(session.session_id, None)
        if session.persistent:  # made over /mcp: it lives on until closed there (or idle)
            session.attached = False
            return
        self.hub.pool.close(session)
