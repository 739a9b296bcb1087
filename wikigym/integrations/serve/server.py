"""Running the app: a bound socket, one port for HTTP (Uvicorn) and ``/ws`` (picows), in the
foreground (the CLI) or in a thread."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

from wikigym.errors import ConfigError
from wikigym.integrations.serve.config import ServeConfig
from wikigym.integrations.serve.connections import HttpFront
from wikigym.integrations.serve.ws import Hub

STARTUP_TIMEOUT_S = 30.0


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (0: a free port).

    Raises:
        ConfigError: The port is out of range or cannot be bound.
    """
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port must be in 0..65535, got {port}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say so, and without it
    # a response written as head then body waits out the client's delayed ACK (40 ms)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
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


def uvicorn_server(app: Any, loop: str = "auto") -> Any:
    """A Uvicorn server for ``app``: quiet, drained on SIGTERM within the limits' ``drain_s``.

    Every connection starts in :class:`~.connections.HttpFront`, which holds it to the
    limits: whole HTTP requests go to Uvicorn's protocol (with ``loop="auto"`` it picks
    uvloop, and httptools, when they are installed), ``/ws`` sessions to picows. ``loop``:
    Uvicorn's event loop setting (``auto``, ``asyncio``, ``uvloop``).
    """
    import uvicorn
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    hub: Hub = app.state.hub

    def protocol(**kwargs: Any) -> HttpFront:
        return HttpFront(hub.connections, lambda: AutoHTTPProtocol(**kwargs), hub.protocol)

    return uvicorn.Server(
        uvicorn.Config(
            app,
            http=protocol,  # type: ignore[arg-type, unused-ignore]  # any protocol factory
            ws="none",  # WebSocket upgrades never reach Uvicorn
            log_level="warning",
            timeout_graceful_shutdown=max(1, int(hub.limits.drain_s + 0.999)),
            loop=loop,
            # asyncio accepts up to `backlog` connections in one go before any protocol sees
            # them: half the reserve, so an accept burst stays under the descriptor limit
            backlog=max(16, hub.limits.fd_reserve // 2),
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
