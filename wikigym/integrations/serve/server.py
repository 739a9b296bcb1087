"""Running the app: a bound socket, one port for HTTP (Uvicorn) and ``/ws`` (picows), in the
foreground (the CLI) or in a thread."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, cast

from wikigym.errors import ConfigError
from wikigym.integrations.serve.config import ServeConfig
from wikigym.integrations.serve.ws import Hub

STARTUP_TIMEOUT_S = 30.0
HEAD_TIMEOUT_S = 60.0
"""A connection that sends no complete request head in this long is closed (generous: a client
starved of CPU may take many seconds between its TCP connect and its request)."""
MAX_HEAD_BYTES = 16 * 1024
"""Past this many bytes without a head's end, the request goes to Uvicorn (which refuses it)."""


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (0: a free port).

    Raises:
        ConfigError: The port is out of range or cannot be bound.
    """
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port must be in 0..65535, got {port}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)  # connections wait in the backlog until Uvicorn serves them
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot bind {host}:{port} ({exc.strerror}); pick another --port"
        ) from None
    return sock


class Dispatch(asyncio.Protocol):
    """A connection's first protocol: reads the request head, then hands the connection over.

    A WebSocket upgrade (``Upgrade: websocket``) goes to picows with :meth:`~.ws.Hub.listener`
    as its router; anything else to Uvicorn's HTTP protocol and the Starlette app. Both get the
    bytes read so far and parse them in full themselves: this only looks for the header.
    """

    def __init__(self, hub: Hub, http: Callable[..., Any], **uvicorn_kwargs: Any) -> None:
        self.hub = hub
        self.http = http
        self.uvicorn_kwargs = uvicorn_kwargs
        self.head = bytearray()
        self.transport: asyncio.Transport | None = None
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport, but not always an asyncio.Transport subclass: uvloop's (which
        # Uvicorn picks when it is installed) only has the same methods.
        self.transport = cast(asyncio.Transport, transport)
        self.timer = asyncio.get_running_loop().call_later(HEAD_TIMEOUT_S, self.transport.close)

    def data_received(self, data: bytes) -> None:
        self.head += data
        end = self.head.find(b"\r\n\r\n")
        if end < 0 and len(self.head) < MAX_HEAD_BYTES:
            return
        assert self.transport is not None
        if self.timer is not None:
            self.timer.cancel()
        head = bytes(self.head[: max(end, 0)]).lower()
        if _is_upgrade(head):
            _hand_over_buffered(self.transport, self.hub.protocol(), bytes(self.head))
        else:
            protocol = self.http(**self.uvicorn_kwargs)
            self.transport.set_protocol(protocol)
            protocol.connection_made(self.transport)
            protocol.data_received(bytes(self.head))

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()


def _is_upgrade(head: bytes) -> bool:
    """Whether a (lower-cased) request head asks for a WebSocket upgrade."""
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip() == b"upgrade" and value.strip() == b"websocket":
            return True
    return False


def _hand_over_buffered(
    transport: asyncio.Transport, protocol: asyncio.BufferedProtocol, data: bytes
) -> None:
    """Switch ``transport`` to a buffered ``protocol`` and feed it the bytes already read."""
    transport.set_protocol(protocol)
    protocol.connection_made(transport)
    view = memoryview(data)
    while view:
        buffer = memoryview(protocol.get_buffer(len(view)))
        n = min(len(buffer), len(view))
        buffer[:n] = view[:n]
        protocol.buffer_updated(n)
        view = view[n:]


def uvicorn_server(app: Any, loop: str = "auto") -> Any:
    """A Uvicorn server for ``app``: quiet, graceful on SIGTERM (5 s for open requests).

    Every connection starts in :class:`Dispatch`: HTTP requests are Uvicorn's (with
    ``loop="auto"`` it picks uvloop, and httptools, when they are installed), ``/ws``
    sessions picows'. ``loop``: Uvicorn's event loop setting (``auto``, ``asyncio``,
    ``uvloop``).
    """
    import uvicorn
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    hub: Hub = app.state.hub

    def protocol(**kwargs: Any) -> Dispatch:
        return Dispatch(hub, AutoHTTPProtocol, **kwargs)

    return uvicorn.Server(
        uvicorn.Config(
            app,
            http=protocol,  # type: ignore[arg-type, unused-ignore]  # any protocol factory
            ws="none",  # WebSocket upgrades never reach Uvicorn
            log_level="warning",
            timeout_graceful_shutdown=5,
            loop=loop,
        )
    )


@contextlib.contextmanager
def serve_in_thread(
    config: ServeConfig, host: str = "127.0.0.1", loop: str = "auto"
) -> Iterator[tuple[str, Any]]:
    """Serve ``config`` on a free loopback port in a thread; yields ``(base_url, app)``.

    For tests, notebooks and benchmarks; the server stops when the block ends. ``loop``: as
    in :func:`uvicorn_server`.
    """
    from wikigym.integrations.serve.app import create_app

    app = create_app(config)
    sock = bind(host, 0)
    addr, port = sock.getsockname()[:2]
    server = uvicorn_server(app, loop)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.01)
    try:
        yield f"http://{addr}:{port}", app
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()
