"""The env's tools over MCP with the official ``mcp`` package: stdio and streamable HTTP.

The tools and their calls are :mod:`.mcp_tools`'; this module mounts them on ``mcp``'s
low-level :class:`~mcp.server.lowlevel.Server`, whose API differs between ``mcp`` 1.x and 2.x
(both are supported: OpenEnv 0.10's fastmcp pins ``mcp<2``). A session's episode is keyed by
its ``Mcp-Session-Id`` over HTTP, and is the one client's over stdio. Over HTTP the server
speaks the session-bearing protocol versions (up to 2025-11-25): a request at a later
version (whose protocol has no sessions to keep an episode in) is refused with
``METHOD_NOT_FOUND``, which ``mcp`` 2.x's client takes as its cue to open a session with the
``initialize`` handshake.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
from collections.abc import AsyncIterator
from typing import Any

from wikigym.integrations.serve.mcp_tools import METHOD_NOT_FOUND, McpEpisodes
from wikigym.version import __version__

SESSION_HEADER = "mcp-session-id"
PROTOCOL_HEADER = b"mcp-protocol-version"
HANDSHAKE_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
"""MCP protocol versions with sessions (the ``initialize`` handshake)."""

STDIO_KEY = "stdio"


def mcp_major() -> int:
    """The installed ``mcp`` package's major version."""
    return int(importlib.metadata.version("mcp").split(".")[0])


def _key(request: Any) -> str:
    """The episode key of a request context's HTTP request (None: stdio)."""
    if request is None:
        return STDIO_KEY
    headers = getattr(request, "headers", None)
    value = headers.get(SESSION_HEADER) if headers is not None else None
    return value or STDIO_KEY


def build_server(episodes: McpEpisodes) -> Any:
    """An ``mcp`` low-level ``Server`` listing and calling the env's tools."""
    import mcp.types as types
    from mcp.server.lowlevel import Server

    def tools() -> Any:
        return types.ListToolsResult(tools=[types.Tool(**t) for t in episodes.listed()])

    async def call(request: Any, name: str, arguments: Any) -> Any:
        result = await episodes.call(_key(request), name, arguments or {})
        return types.CallToolResult.model_validate(result)

    if mcp_major() >= 2:

        async def on_list_tools(ctx: Any, params: Any) -> Any:
            return tools()

        async def on_call_tool(ctx: Any, params: Any) -> Any:
            return await call(ctx.request, params.name, params.arguments)

        return Server(
            "wikigym",
            version=__version__,
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
        )

    server: Any = Server("wikigym", version=__version__)  # mcp 1.x: decorators

    @server.list_tools()
    async def list_tools() -> Any:
        return tools().tools

    # the env validates arguments itself: an invalid call is a step with its error code, as
    # in process (the hallucination penalty counts it)
    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
        return await call(server.request_context.request, name, arguments)

    return server


async def run_stdio(episodes: McpEpisodes) -> None:
    """Serve the tools to one client on stdin/stdout until it closes them."""
    from mcp.server.stdio import stdio_server

    server = build_server(episodes)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        episodes.close_all()


class McpHttp:
    """``/mcp`` as an ASGI app: MCP's streamable HTTP transport (``mcp``'s session manager)
    for MCP clients, OpenEnv's JSON-RPC dialect for its ``MCPToolClient``.

    An MCP client sends ``Accept: application/json, text/event-stream`` (the transport
    requires it) or an ``Mcp-Session-Id``; anything else on ``POST /mcp`` is OpenEnv's
    dialect (:func:`~.mcp_tools.openenv_rpc`).
    """

    def __init__(self, episodes: McpEpisodes) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        self.episodes = episodes
        self.manager = StreamableHTTPSessionManager(app=build_server(episodes), stateless=False)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The session manager's task group (the app's lifespan holds it)."""
        async with self.manager.run():
            try:
                yield
            finally:
                self.episodes.close_all()

    def is_transport(self, scope: dict[str, Any]) -> bool:
        """Whether a request is MCP's streamable HTTP (not OpenEnv's dialect)."""
        if scope["method"] != "POST":
            return True
        for name, value in scope.get("headers") or []:
            if name == SESSION_HEADER.encode() or (
                name == b"accept" and b"text/event-stream" in value
            ):
                return True
        return False

    async def transport(self, scope: Any, receive: Any, send: Any) -> None:
        """Hand a request to ``mcp``'s session manager (a request at a sessionless protocol
        version is refused first; a DELETE ends the session's episode too)."""
        headers = dict(scope.get("headers") or [])
        version = headers.get(PROTOCOL_HEADER, b"").decode("latin-1")
        if version and version not in HANDSHAKE_VERSIONS:
            from starlette.responses import JSONResponse

            error = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {
                    "code": METHOD_NOT_FOUND,
                    "message": "this server keeps an episode in an MCP session: use the "
                    "initialize handshake (protocol versions up to 2025-11-25)",
                },
            }
            await JSONResponse(error, status_code=400)(scope, receive, send)
            return
        await self.manager.handle_request(scope, receive, send)
        if scope["method"] == "DELETE":
            key = headers.get(SESSION_HEADER.encode(), b"").decode("latin-1")
            if key:
                self.episodes.end(key)
