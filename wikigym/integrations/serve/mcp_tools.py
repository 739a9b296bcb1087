"""The env's tools as MCP tools: one list, one call path, for every MCP transport.

The tools are ``reset`` (start an episode: ``seed``, ``task_id``) and the served
WikiSearch env's own tools (search, open, find, python when enabled, answer), each listed
from the one tool registry (:mod:`wikigym.tools`) with its pydantic argument model's JSON
schema and description. A call is one env step of the session's episode, the
step an in-process ``env.step`` of the same call takes (the ``<tool_call>`` text the TRL
adapter sends), so an MCP episode equals an in-process one: same observations, info, reward.
Its result is MCP's ``CallToolResult``: the observation text, and ``structuredContent`` with
``text``, ``reward``, ``done``, ``terminated``, ``truncated`` and ``info``; ``isError`` when the
step reported a tool error (the observation says which).

:class:`McpEpisodes` keeps one :class:`~.sessions.Session` per MCP session (the streamable
HTTP ``Mcp-Session-Id``, or the one stdio client), as a WebSocket session keeps its env.
:func:`openenv_rpc` serves the JSON-RPC dialect of OpenEnv's ``MCPToolClient`` on the same
route (``openenv/session/create`` and ``close``, ``tools/list``, ``tools/call`` with a
``session_id``), on the same sessions, which that client's WebSocket attaches to.
"""

from __future__ import annotations

from typing import Any, cast

from wikigym.envs.recipe import make_env
from wikigym.envs.registration import WIKI_SEARCH
from wikigym.integrations.serve.protocol import ProtocolError, clip, quote
from wikigym.integrations.serve.sessions import Session, SessionPool
from wikigym.tools import format_tool_call, get_tool, tool_parameters_schema

MCP_ENV_ID = WIKI_SEARCH
"""The env whose tools MCP serves."""

RESET_TOOL = "reset"

RESET_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "seed": {
            "type": "integer",
            "minimum": 0,
            "description": "Seed of the episode (picks the task when task_id is not given).",
        },
        "task_id": {"type": "string", "description": "The task to play."},
    },
    "additionalProperties": False,
}

RESET_DESCRIPTION = (
    "Start an episode: returns the question and the tools' use. Call it before any other "
    "tool; call it again for the next episode."
)

# JSON-RPC 2.0 error codes
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, SERVER_ERROR = (
    -32700,
    -32600,
    -32601,
    -32602,
    -32000,
)


def served_tools(pool: SessionPool) -> tuple[str, ...]:
    """The tools of the served WikiSearch env (``python`` only when its sandbox is on)."""
    env = make_env(pool.spec(MCP_ENV_ID))
    try:
        return tuple(cast(Any, env.unwrapped).tools)
    finally:
        env.close()


def tool_list(tools: tuple[str, ...]) -> list[dict[str, Any]]:
    """MCP's ``Tool`` objects (``name``, ``description``, ``inputSchema``), ``reset`` first."""
    listed = [
        {"name": RESET_TOOL, "description": RESET_DESCRIPTION, "inputSchema": RESET_INPUT_SCHEMA}
    ]
    for name in tools:
        listed.append(
            {
                "name": name,
                "description": get_tool(name).description,
                "inputSchema": tool_parameters_schema(name),
            }
        )
    return listed


def _result(payload: dict[str, Any], *, error: bool) -> dict[str, Any]:
    observation = payload["observation"]
    structured = {
        "text": observation["text"],
        "reward": payload["reward"],
        "done": payload["done"],
        "terminated": observation["terminated"],
        "truncated": observation["truncated"],
        "info": observation["info"],
    }
    return {
        "content": [{"type": "text", "text": observation["text"]}],
        "structuredContent": structured,
        "isError": error,
    }


def error_result(message: str) -> dict[str, Any]:
    """A ``CallToolResult`` that reports a mistake of the caller (no step was taken)."""
    return {"content": [{"type": "text", "text": clip(message)}], "isError": True}


async def call_tool(
    pool: SessionPool,
    session: Session,
    tools: tuple[str, ...],
    name: str,
    arguments: Any,
) -> dict[str, Any]:
    """One MCP tool call on ``session``'s episode, as a ``CallToolResult`` dict."""
    if not isinstance(arguments, dict):
        return error_result(f"arguments must be an object, got {type(arguments).__name__}")
    if session.busy:
        return error_result("the session is running another call; wait for its result")
    session.busy = True
    try:
        if name == RESET_TOOL:
            try:
                payload = await pool.run(pool.reset_sync, session, dict(arguments))
            except ProtocolError as exc:
                return error_result(exc.message)
            return _result(payload, error=False)
        if name not in tools:
            served = ", ".join([RESET_TOOL, *tools])
            return error_result(f"unknown tool {quote(name)}; the tools are {served}")
        if session.env_id is None:
            return error_result("no episode: call reset first (seed, task_id)")
        if session.done:
            return error_result("the episode has ended: call reset to start another")
        payload = await pool.step(session, format_tool_call(name, arguments))
        return _result(payload, error=payload["observation"]["info"].get("tool_error") is not None)
    finally:
        session.busy = False


class McpEpisodes:
    """One server session per MCP session, made on its first tool call.

    Attributes:
        pool: The server's sessions (an MCP session holds one of its slots).
        tools: The tools served.
        by_key: The session of each MCP session key (``Mcp-Session-Id``, or the stdio
            client's).
    """

    def __init__(self, pool: SessionPool) -> None:
        self.pool = pool
        self.tools = served_tools(pool)
        self.by_key: dict[str, Session] = {}

    def listed(self) -> list[dict[str, Any]]:
        return tool_list(self.tools)

    def session(self, key: str) -> Session:
        """The session of MCP session ``key`` (a new one, or a fresh one after the reaper
        closed an idle one).

        Raises:
            ProtocolError: ``CAPACITY_REACHED`` when every slot is held.
        """
        session = self.by_key.get(key)
        if session is None or session.session_id not in self.pool.sessions:
            # forget MCP sessions whose server session the idle reaper closed
            gone = [k for k, s in self.by_key.items() if s.session_id not in self.pool.sessions]
            for stale in gone:
                del self.by_key[stale]
            session = self.pool.open()
            self.by_key[key] = session
        return session

    async def call(self, key: str, name: str, arguments: Any) -> dict[str, Any]:
        try:
            session = self.session(key)
        except ProtocolError as exc:
            return error_result(exc.message)
        return await call_tool(self.pool, session, self.tools, name, arguments)

    def end(self, key: str) -> None:
        """The MCP session ended: free its slot and env."""
        session = self.by_key.pop(key, None)
        if session is not None:
            self.pool.close(session)

    def close_all(self) -> None:
        for key in sorted(self.by_key):
            self.end(key)


def _rpc_error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": clip(message)}}


def _rpc_result(request_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


async def openenv_rpc(episodes: McpEpisodes, body: Any) -> dict[str, Any]:
    """One JSON-RPC request of OpenEnv's ``MCPToolClient`` on ``POST /mcp``, its response.

    ``openenv/session/create`` opens a session (its id is what the client's WebSocket
    attaches to with ``/ws?session_id=``); ``tools/list``; ``tools/call`` with ``name``,
    ``arguments`` and ``session_id`` steps that session's episode (the result carries the
    structured content under ``data`` too, which that client returns); ``openenv/session/close``.
    """
    pool = episodes.pool
    request_id = body.get("id") if isinstance(body, dict) else None
    if not isinstance(body, dict) or not isinstance(body.get("method"), str):
        return _rpc_error(request_id, INVALID_REQUEST, "a JSON-RPC 2.0 request needs a method")
    method, params = body["method"], body.get("params") or {}
    if not isinstance(params, dict):
        return _rpc_error(request_id, INVALID_PARAMS, "params must be an object")
    if method == "tools/list":
        return _rpc_result(request_id, {"tools": episodes.listed()})
    if method == "openenv/session/create":
        try:
            session = pool.open(persistent=True)
        except ProtocolError as exc:
            return _rpc_error(request_id, SERVER_ERROR, exc.message)
        return _rpc_result(request_id, {"session_id": session.session_id})
    if method not in ("tools/call", "openenv/session/close"):
        return _rpc_error(request_id, METHOD_NOT_FOUND, f"method not found: {quote(method)}")
    session_id = params.get("session_id")
    found = pool.find(session_id) if isinstance(session_id, str) else None
    if found is None:
        return _rpc_error(
            request_id,
            INVALID_PARAMS,
            f"unknown session_id {quote(session_id)}; open one with openenv/session/create",
        )
    if method == "openenv/session/close":
        if found.attached:  # closed when its WebSocket detaches
            found.persistent = False
            return _rpc_result(
                request_id, {"session_id": session_id, "closed": False, "closing": True}
            )
        pool.close(found)
        return _rpc_result(request_id, {"session_id": session_id, "closed": True})
    name = params.get("name")
    if not isinstance(name, str):
        return _rpc_error(request_id, INVALID_PARAMS, "tools/call needs a tool name")
    result = await call_tool(pool, found, episodes.tools, name, params.get("arguments") or {})
    if "structuredContent" in result:
        result = {**result, "data": result["structuredContent"]}
    return _rpc_result(request_id, result)
