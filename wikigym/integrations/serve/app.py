"""The ASGI app: OpenEnv's HTTP routes over a :class:`~wikigym.integrations.serve.sessions.SessionPool`.

Routes: ``POST /reset`` and ``POST /step`` (stateless one-shots), ``GET /state`` (the server's
capacity), ``GET /health``, ``GET /schema``, ``GET /metrics``; ``/ws`` sessions on the same
port are :mod:`wikigym.integrations.serve.ws`'s. The lifespan runs the idle reaper and the
graceful shutdown of both.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from wikigym.integrations.serve.config import ServeConfig
from wikigym.integrations.serve.metrics import Metrics
from wikigym.integrations.serve.protocol import (
    ProtocolError,
    WireCode,
    action_text,
    error_message,
    loads,
    schema,
)
from wikigym.integrations.serve.sessions import SessionPool
from wikigym.integrations.serve.ws import Hub
from wikigym.version import __version__

log = logging.getLogger("wikigym.serve")

SHUTDOWN_GRACE_S = 5.0
"""How long shutdown waits for running steps before closing every env."""


async def _json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = loads(raw)
    except json.JSONDecodeError as exc:
        raise ProtocolError(WireCode.INVALID_JSON, f"invalid JSON body: {exc}") from None
    if not isinstance(body, dict):
        raise ProtocolError(WireCode.VALIDATION_ERROR, "the body must be a JSON object")
    return body


def _error_response(pool: SessionPool, exc: ProtocolError) -> JSONResponse:
    pool.metrics.error(exc.code.value)
    status = 503 if exc.code is WireCode.CAPACITY_REACHED else 422
    return JSONResponse({"detail": exc.message, "code": exc.code.value}, status_code=status)


async def http_reset(request: Request) -> Response:
    """Stateless reset: a fresh env, reset with the body's fields (seed, task_id, ...)."""
    pool: SessionPool = request.app.state.pool
    try:
        body = await _json_body(request)
        return JSONResponse(await pool.one_shot(body, None))
    except ProtocolError as exc:
        return _error_response(pool, exc)


async def http_step(request: Request) -> Response:
    """Stateless step: a fresh env reset with the body's ``reset`` fields, then ``action``."""
    pool: SessionPool = request.app.state.pool
    try:
        body = await _json_body(request)
        extra = sorted(set(body) - {"action", "reset", "timeout_s", "request_id"})
        if extra:
            raise ProtocolError(
                WireCode.VALIDATION_ERROR,
                f"step takes action, reset, timeout_s, request_id; got unknown {extra[0]!r}",
            )
        reset = body.get("reset") or {}
        if not isinstance(reset, dict):
            raise ProtocolError(WireCode.VALIDATION_ERROR, "'reset' must be an object")
        return JSONResponse(await pool.one_shot(reset, action_text(body.get("action"))))
    except ProtocolError as exc:
        return _error_response(pool, exc)


async def http_state(request: Request) -> Response:
    """The server's state (HTTP holds no episode): capacity and the env ids served."""
    pool: SessionPool = request.app.state.pool
    return JSONResponse(
        {
            "active_sessions": pool.held,
            "max_sessions": pool.config.max_sessions,
            "env_ids": list(pool.config.env_ids),
        }
    )


async def health(request: Request) -> Response:
    """``{"status": "healthy"}`` while the server accepts sessions."""
    stopping = request.app.state.hub.stopping
    return JSONResponse(
        {"status": "unhealthy" if stopping else "healthy", "version": __version__},
        status_code=503 if stopping else 200,
    )


async def get_schema(request: Request) -> Response:
    return JSONResponse(schema())


async def metrics(request: Request) -> Response:
    pool: SessionPool = request.app.state.pool
    return PlainTextResponse(pool.metrics.render(), media_type="text/plain; version=0.0.4")


async def _reap(hub: Hub) -> None:
    """Close sessions idle past the timeout: an error message, then the socket."""
    pool = hub.pool
    interval = min(1.0, max(pool.config.idle_timeout_s / 4, 0.05))
    while True:
        await asyncio.sleep(interval)
        for session in pool.idle(time.monotonic()):
            assert session.session_id is not None
            websocket = hub.sockets.pop(session.session_id, None)
            pool.close(session, expired=True)
            if websocket is not None:
                websocket.expire(
                    error_message(
                        WireCode.SESSION_TIMEOUT,
                        f"session {session.session_id} idle for more than "
                        f"{pool.config.idle_timeout_s:g} s was closed; open a new one",
                    )
                )


async def _stop(hub: Hub) -> None:
    """Shutdown: close every socket (1001), let running steps end (5 s at most), close envs."""
    hub.stopping = True
    for session_id in sorted(hub.sockets):
        hub.sockets.pop(session_id).expire()
    deadline = time.monotonic() + SHUTDOWN_GRACE_S
    while any(s.busy for s in hub.pool.sessions.values()) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    for _, session in sorted(hub.pool.sessions.items()):
        hub.pool.close(session)
    hub.pool.shutdown()


def authorized_path(path: str, headers: dict[bytes, bytes], token: bytes | None) -> str | None:
    """The route a request asks for, or None when it lacks the server's token.

    With a token, a request carries ``Authorization: Bearer TOKEN`` or is addressed under
    ``/TOKEN/`` (OpenEnv's client sends no headers: give it the base URL
    ``http://HOST:PORT/TOKEN``); the prefix is taken off the route.
    """
    if token is None:
        return path
    bearer = headers.get(b"authorization", b"")
    if bearer.startswith(b"Bearer ") and hmac.compare_digest(bearer[7:], token):
        return path
    head, _, rest = path.partition("/")[2].partition("/")
    if hmac.compare_digest(head.encode(), token):
        return f"/{rest}"
    return None


class TokenGate:
    """ASGI middleware: HTTP requests without the server's token get 401 (see
    :func:`authorized_path`; ``/ws`` handshakes are checked the same way in :mod:`.ws`)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = authorized_path(scope["path"], dict(scope.get("headers") or []), self.token)
        if path is not None:
            await self.app({**scope, "path": path}, receive, send)
            return
        response = JSONResponse(
            {"detail": "missing or wrong token", "code": WireCode.UNAUTHORIZED.value},
            status_code=401,
        )
        await response(scope, receive, send)


def create_app(config: ServeConfig) -> Starlette:
    """The server's ASGI app (the snapshot and TaskSet are opened here, once).

    HTTP routes are Starlette's; ``/ws`` sessions are served by :mod:`.ws` on the same port
    (see :mod:`.server`), through the :class:`~.ws.Hub` in ``app.state.hub``.
    """
    pool = SessionPool(config, Metrics())
    pool.warm()  # a wrong corpus or tasks path fails here, before the port opens
    token = config.token.encode() if config.token else None
    hub = Hub(pool, lambda path, headers: authorized_path(path, headers, token))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        reaper = asyncio.create_task(_reap(hub))
        try:
            yield
        finally:
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper
            await _stop(hub)

    app = Starlette(
        routes=[
            Route("/reset", http_reset, methods=["POST"]),
            Route("/step", http_step, methods=["POST"]),
            Route("/state", http_state, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/schema", get_schema, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
        ],
        middleware=[Middleware(TokenGate, token=config.token)] if config.token else [],
        lifespan=lifespan,
    )
    app.state.pool, app.state.hub = pool, hub
    return app
