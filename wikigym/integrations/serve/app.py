"""The ASGI app: OpenEnv's routes over a :class:`~wikigym.integrations.serve.sessions.SessionPool`.

Routes: ``/ws`` (sessions), ``POST /reset`` and ``POST /step`` (stateless one-shots),
``GET /state`` (the server's capacity), ``GET /health``, ``GET /schema``, ``GET /metrics``.
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
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from wikigym.integrations.serve.config import ServeConfig
from wikigym.integrations.serve.metrics import Metrics
from wikigym.integrations.serve.protocol import (
    ProtocolError,
    WireCode,
    action_text,
    dumps,
    error_message,
    loads,
    parse_message,
    schema,
)
from wikigym.integrations.serve.sessions import Session, SessionPool
from wikigym.version import __version__

log = logging.getLogger("wikigym.serve")

CLOSE_GOING_AWAY = 1001
CLOSE_POLICY = 1008
CLOSE_TRY_AGAIN = 1013


def _send(message: dict[str, Any]) -> str:
    return dumps(message)


async def _handle(pool: SessionPool, session: Session, kind: str, data: dict[str, Any]) -> Any:
    """The response to one session message (``None`` for ``close``)."""
    if kind == "reset":
        return {"type": "observation", "data": await pool.run(pool.reset_sync, session, data)}
    if kind == "step":
        text = action_text(data)
        return {"type": "observation", "data": await pool.run(pool.step_sync, session, text)}
    if kind == "state":
        return {"type": "state", "data": session.state()}
    if kind == "close":
        return None
    raise ProtocolError(
        WireCode.UNKNOWN_TYPE,
        f"unknown message type {kind!r}; expected reset, step, state or close",
    )


async def websocket_session(websocket: WebSocket) -> None:
    """One OpenEnv session: messages in order until ``close``, a disconnect or the idle timeout."""
    pool: SessionPool = websocket.app.state.pool
    await websocket.accept()
    if websocket.app.state.stopping:
        await websocket.send_text(_send(error_message(WireCode.SHUTTING_DOWN, "server stopping")))
        await websocket.close(CLOSE_GOING_AWAY)
        return
    try:
        session = pool.open()
    except ProtocolError as exc:
        pool.metrics.error(exc.code.value)
        await websocket.send_text(
            _send(
                error_message(
                    exc.code,
                    exc.message,
                    active_sessions=pool.held,
                    max_sessions=pool.config.max_sessions,
                )
            )
        )
        await websocket.close(CLOSE_TRY_AGAIN)
        return
    websocket.app.state.sockets[session.session_id] = websocket
    try:
        while True:
            raw = await websocket.receive_text()
            if session.session_id not in pool.sessions:  # reaped while this message came in
                break
            session.busy, session.last_active = True, time.monotonic()
            try:
                kind, data = parse_message(raw)
                response = await _handle(pool, session, kind, data)
            except ProtocolError as exc:
                pool.metrics.error(exc.code.value)
                response = error_message(exc.code, exc.message)
            except Exception as exc:  # an env bug: logged with its trace, this session only
                log.exception("session %s: %s failed", session.session_id, kind)
                pool.metrics.error(WireCode.EXECUTION_ERROR.value)
                session.done = True  # the env may be half-stepped: a reset starts clean
                response = error_message(
                    WireCode.EXECUTION_ERROR,
                    f"{type(exc).__name__}: {exc}; the episode was ended, send a reset",
                )
            finally:
                session.busy, session.last_active = False, time.monotonic()
            if response is None:
                break
            await websocket.send_text(_send(response))
    except WebSocketDisconnect:
        pass  # the client went away mid-episode: its slot is freed below
    finally:
        websocket.app.state.sockets.pop(session.session_id, None)
        await pool.close(session)
        with contextlib.suppress(RuntimeError, WebSocketDisconnect):  # closed by either side
            await websocket.close()


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
    stopping = request.app.state.stopping
    return JSONResponse(
        {"status": "unhealthy" if stopping else "healthy", "version": __version__},
        status_code=503 if stopping else 200,
    )


async def get_schema(request: Request) -> Response:
    return JSONResponse(schema())


async def metrics(request: Request) -> Response:
    pool: SessionPool = request.app.state.pool
    return PlainTextResponse(pool.metrics.render(), media_type="text/plain; version=0.0.4")


async def _reap(app: Starlette, pool: SessionPool) -> None:
    """Close sessions idle past the timeout: an error message, then the socket."""
    interval = min(1.0, max(pool.config.idle_timeout_s / 4, 0.05))
    while True:
        await asyncio.sleep(interval)
        for session in pool.idle(time.monotonic()):
            websocket = app.state.sockets.pop(session.session_id, None)
            await pool.close(session, expired=True)
            if websocket is None:
                continue
            message = error_message(
                WireCode.SESSION_TIMEOUT,
                f"session {session.session_id} idle for more than "
                f"{pool.config.idle_timeout_s:g} s was closed; open a new one",
            )
            with contextlib.suppress(RuntimeError, WebSocketDisconnect, OSError):
                await websocket.send_text(_send(message))
                await websocket.close(CLOSE_GOING_AWAY)


class TokenGate:
    """ASGI middleware: with a token, a request carries ``Authorization: Bearer TOKEN`` or is
    addressed under ``/TOKEN/`` (OpenEnv's client sends no headers: give it the base URL
    ``http://HOST:PORT/TOKEN``)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()
        self.prefix = f"/{token}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        headers = dict(scope.get("headers") or [])
        bearer = headers.get(b"authorization", b"")
        if bearer.startswith(b"Bearer ") and hmac.compare_digest(bearer[7:], self.token):
            await self.app(scope, receive, send)
            return
        head, _, rest = path.partition("/")[2].partition("/")
        if hmac.compare_digest(f"/{head}".encode(), self.prefix.encode()):
            await self.app({**scope, "path": f"/{rest}"}, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": CLOSE_POLICY})
            return
        response = JSONResponse(
            {"detail": "missing or wrong token", "code": WireCode.UNAUTHORIZED.value},
            status_code=401,
        )
        await response(scope, receive, send)


def create_app(config: ServeConfig) -> ASGIApp:
    """The server's ASGI app (the snapshot and TaskSet are opened here, once)."""
    pool = SessionPool(config, Metrics())
    pool.warm()  # a wrong corpus or tasks path fails here, before the port opens

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        reaper = asyncio.create_task(_reap(app, pool))
        try:
            yield
        finally:
            app.state.stopping = True
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper
            for session_id in sorted(app.state.sockets):
                websocket = app.state.sockets.pop(session_id)
                with contextlib.suppress(RuntimeError, WebSocketDisconnect, OSError):
                    await websocket.close(CLOSE_GOING_AWAY)
            for _, session in sorted(pool.sessions.items()):
                await pool.close(session)
            pool.shutdown()

    app = Starlette(
        routes=[
            WebSocketRoute("/ws", websocket_session),
            Route("/reset", http_reset, methods=["POST"]),
            Route("/step", http_step, methods=["POST"]),
            Route("/state", http_state, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/schema", get_schema, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    app.state.pool, app.state.sockets, app.state.stopping = pool, {}, False
    return TokenGate(app, config.token) if config.token else app
