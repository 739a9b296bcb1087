"""The ASGI app: OpenEnv's HTTP routes over a :class:`~wikigym.integrations.serve.sessions.SessionPool`,
Search-R1's ``POST /retrieve`` and MCP's ``/mcp``.

Routes: ``POST /reset`` and ``POST /step`` (stateless one-shots), ``GET /state`` (a session's
env state), ``GET /capacity``, ``GET /health``, ``GET /metadata``, ``GET /schema``,
``GET /metrics``, ``GET /openapi.json``, ``POST /retrieve`` (:mod:`.retrieve`), ``/mcp``
(:mod:`.mcp_server`); ``/ws`` sessions on the same port are :mod:`.ws`'s. The lifespan runs
the idle reaper, the connection sweep and the drain on shutdown.
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

from wikigym.envs.registration import WIKI_SEARCH
from wikigym.integrations.serve.config import ServeConfig
from wikigym.integrations.serve.connections import Connections, sweep_forever
from wikigym.integrations.serve.metrics import Metrics
from wikigym.integrations.serve.protocol import (
    ProtocolError,
    WireCode,
    action_text,
    dumps,
    error_message,
    loads,
    quote,
    schema,
)
from wikigym.integrations.serve.retrieve import RetrieveError, Retriever, parse_request
from wikigym.integrations.serve.sessions import Session, SessionPool
from wikigym.integrations.serve.ws import Hub
from wikigym.version import __version__

log = logging.getLogger("wikigym.serve")

ENV_NAME = "wikigym"
DESCRIPTION = (
    "Offline, deterministic Wikipedia search environments (WikiSearch-v1: search, open, find, "
    "python, answer over a frozen snapshot; Calc-v0) for training and evaluating LLM search "
    "agents; also Search-R1's POST /retrieve and MCP on /mcp."
)
DOCUMENTATION_URL = "https://github.com/wikigym/wikigym/blob/main/docs/serve.md"


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
    """A session's env state (``?session_id=``: a WebSocket or ``/mcp`` session); without
    one, a fresh session's (HTTP one-shots keep no episode), as OpenEnv's ``/state`` gives a
    fresh env's."""
    pool: SessionPool = request.app.state.pool
    session_id = request.query_params.get("session_id")
    if session_id is None:
        return JSONResponse(Session(session_id=None).state())
    session = pool.find(session_id)
    if session is None:
        return JSONResponse(
            {"detail": f"no open session {quote(session_id)}", "code": "NOT_FOUND"},
            status_code=404,
        )
    return JSONResponse(session.state())


async def http_capacity(request: Request) -> Response:
    """The server's capacity: OpenEnv's ``ServerCapacityStatus`` and the env ids served."""
    pool: SessionPool = request.app.state.pool
    return JSONResponse(pool.capacity())


async def http_metadata(request: Request) -> Response:
    """OpenEnv's ``EnvironmentMetadata``, and the session limit as OpenEnv's server config
    names it (``max_concurrent_envs``, ``SUPPORTS_CONCURRENT_SESSIONS``, ``session_timeout``)."""
    pool: SessionPool = request.app.state.pool
    config = pool.config
    return JSONResponse(
        {
            "name": ENV_NAME,
            "description": DESCRIPTION,
            "version": __version__,
            "author": "wikigym",
            "documentation_url": DOCUMENTATION_URL,
            "readme_content": None,
            "env_ids": list(config.env_ids),
            "max_concurrent_envs": config.max_sessions,
            "SUPPORTS_CONCURRENT_SESSIONS": True,
            "session_timeout": config.idle_timeout_s or None,
        }
    )


def openapi(routes: list[tuple[str, str, str]]) -> dict[str, Any]:
    """A minimal OpenAPI document of the routes (OpenEnv's validator reads its version and
    paths: 1.x is OpenEnv's HTTP standard, and /reset, /step, /state mark simulation mode)."""
    paths: dict[str, Any] = {}
    for path, method, summary in routes:
        paths.setdefault(path, {})[method] = {
            "summary": summary,
            "responses": {"200": {"description": "OK"}},
        }
    return {
        "openapi": "3.1.0",
        "info": {"title": "wikigym serve (OpenEnv HTTP API)", "version": "1.0.0"},
        "paths": paths,
    }


ROUTES_DOC: list[tuple[str, str, str]] = [
    ("/reset", "post", "Stateless reset: a fresh env's first observation"),
    ("/step", "post", "Stateless step: a fresh env reset with body.reset, then body.action"),
    ("/state", "get", "A session's env state (?session_id=)"),
    ("/capacity", "get", "Sessions held and allowed"),
    ("/health", "get", "Health"),
    ("/metadata", "get", "Environment metadata"),
    ("/schema", "get", "JSON schemas of action, observation, state"),
    ("/metrics", "get", "Prometheus metrics"),
    ("/retrieve", "post", "Search-R1's retriever protocol"),
    ("/mcp", "post", "MCP (streamable HTTP) and OpenEnv's MCP JSON-RPC"),
]


async def http_openapi(request: Request) -> Response:
    return JSONResponse(openapi(ROUTES_DOC))


async def http_retrieve(request: Request) -> Response:
    """Search-R1's ``POST /retrieve`` (:mod:`.retrieve`): a batch spread over the search
    threads, the reply in the request's order. A bad request is FastAPI's 422 shape."""
    pool: SessionPool = request.app.state.pool
    retriever: Retriever | None = request.app.state.retriever
    limits = pool.config.limits
    if retriever is None:
        detail = "no snapshot is served (serve WikiSearch-v1 for /retrieve)"
        return JSONResponse({"detail": detail, "code": "NOT_FOUND"}, status_code=404)
    try:
        try:
            body = loads(await request.body())
        except json.JSONDecodeError as exc:
            raise RetrieveError(
                [{"loc": ["body"], "msg": f"invalid JSON: {exc}", "type": "json_invalid"}]
            ) from None
        queries, topk, scores, _ = parse_request(
            body,
            default_topk=pool.config.retrieve_topk,
            max_topk=limits.retrieve_max_topk,
            max_queries=limits.retrieve_max_queries,
        )
    except RetrieveError as exc:
        pool.metrics.error(WireCode.VALIDATION_ERROR.value)
        return JSONResponse({"detail": exc.detail}, status_code=422)
    loop = asyncio.get_running_loop()
    parts = await asyncio.gather(
        *(
            loop.run_in_executor(retriever.executor, fn, chunk, k, s)
            for fn, chunk, k, s in retriever.chunks(queries, topk, scores)
        )
    )
    pool.metrics.retrieved(len(queries))
    result = [rows for part in parts for rows in part]
    return Response(dumps({"result": result}), media_type="application/json")


class McpRoute:
    """``/mcp``: MCP's streamable HTTP, or OpenEnv's JSON-RPC dialect (:class:`.McpHttp`)."""

    def __init__(self, mcp: Any) -> None:
        self.mcp = mcp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        mcp = self.mcp
        if mcp is None:
            response = JSONResponse(
                {
                    "detail": "MCP needs WikiSearch-v1 served and the mcp package (pip install "
                    "'wikigym[serve]')",
                    "code": "NOT_FOUND",
                },
                status_code=404,
            )
            await response(scope, receive, send)
            return
        if mcp.is_transport(scope):
            await mcp.transport(scope, receive, send)
            return
        from wikigym.integrations.serve.mcp_tools import PARSE_ERROR, openenv_rpc

        request = Request(scope, receive)
        try:
            body = loads(await request.body())
        except json.JSONDecodeError:
            reply = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": PARSE_ERROR, "message": "Parse error"},
            }
        else:
            reply = await openenv_rpc(mcp.episodes, body)
        await Response(dumps(reply), media_type="application/json")(scope, receive, send)


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
            session.persistent = False  # an idle /mcp session ends with its socket
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
    """The drain: refuse new connections, close every socket (1001), let running steps end
    (``limits.drain_s`` at most), close every env, then drop every connection left."""
    hub.stopping = True
    hub.connections.stopping = True
    for session_id in sorted(hub.sockets):
        hub.sockets.pop(session_id).expire()
    deadline = time.monotonic() + hub.limits.drain_s
    while any(s.busy for s in hub.pool.sessions.values()) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    for _, session in sorted(hub.pool.sessions.items()):
        hub.pool.close(session)
    hub.pool.shutdown()
    hub.connections.close_all()


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
    hub = Hub(
        pool,
        lambda path, headers: authorized_path(path, headers, token),
        Connections(config.limits),
    )
    retriever = Retriever(pool.snapshot, config.search_threads) if pool.snapshot else None
    mcp = _mcp_http(pool)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if mcp is not None:
                await stack.enter_async_context(mcp.running())
            tasks = [
                asyncio.create_task(_reap(hub)),
                asyncio.create_task(sweep_forever(hub.connections)),
            ]
            try:
                yield
            finally:
                for task in tasks:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                if retriever is not None:
                    retriever.close()
                await _stop(hub)

    app = Starlette(
        routes=[
            Route("/reset", http_reset, methods=["POST"]),
            Route("/step", http_step, methods=["POST"]),
            Route("/state", http_state, methods=["GET"]),
            Route("/capacity", http_capacity, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/metadata", http_metadata, methods=["GET"]),
            Route("/schema", get_schema, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
            Route("/openapi.json", http_openapi, methods=["GET"]),
            Route("/retrieve", http_retrieve, methods=["POST"]),
            Route("/mcp", McpRoute(mcp), methods=["GET", "POST", "DELETE"]),
        ],
        middleware=[Middleware(TokenGate, token=config.token)] if config.token else [],
        lifespan=lifespan,
    )
    app.state.pool, app.state.hub = pool, hub
    app.state.retriever, app.state.mcp = retriever, mcp
    return app


def _mcp_http(pool: SessionPool) -> Any:
    """``/mcp``'s app, or None where it cannot serve (no WikiSearch env, no ``mcp`` package)."""
    if WIKI_SEARCH not in pool.config.env_ids:
        return None
    try:
        from wikigym.integrations.serve.mcp_server import McpHttp
        from wikigym.integrations.serve.mcp_tools import McpEpisodes
    except ImportError:  # the mcp package is not installed: /mcp answers 404 saying so
        return None
    return McpHttp(McpEpisodes(pool))
