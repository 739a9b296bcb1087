"""The ``mcp`` client on both of its APIs (1.x: OpenEnv 0.10's pin; 2.x): one episode over
stdio or streamable HTTP, as transcripts comparable with an in-process one."""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def mcp_major() -> int:
    return int(importlib.metadata.version("mcp").split(".")[0])


@contextlib.asynccontextmanager
async def http_session(url: str) -> AsyncIterator[Any]:
    """An initialized ``ClientSession`` on ``url`` (the handshake: a session id)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(url) as streams, ClientSession(streams[0], streams[1]) as s:
        await s.initialize()
        yield s


@contextlib.asynccontextmanager
async def stdio_session(*args: str) -> AsyncIterator[Any]:
    """An initialized ``ClientSession`` on ``wikigym mcp ARGS`` started as a subprocess."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "wikigym", "mcp", *args],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    async with stdio_client(params) as streams, ClientSession(streams[0], streams[1]) as s:
        await s.initialize()
        yield s


def structured_of(result: Any) -> Any:
    """A ``CallToolResult``'s structured content (``structuredContent`` in mcp 1.x,
    ``structured_content`` in 2.x)."""
    if hasattr(result, "structured_content"):
        return result.structured_content
    return result.structuredContent


def is_error(result: Any) -> bool:
    return bool(result.is_error if hasattr(result, "is_error") else result.isError)


def as_step(result: Any) -> tuple[str, Any, Any, bool]:
    """``(text, info, reward, done)`` of a ``CallToolResult``."""
    structured = structured_of(result)
    if structured is None:  # refused before any step (no episode, unknown tool)
        return (result.content[0].text, None, None, False)
    return (
        result.content[0].text,
        structured["info"],
        structured["reward"],
        structured["done"],
    )


async def play(session: Any, reset: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]):
    """A reset and the calls (until the episode ends), as ``as_step`` tuples."""
    out = [as_step(await session.call_tool("reset", reset))]
    for name, arguments in calls:
        out.append(as_step(await session.call_tool(name, arguments)))
        if out[-1][3]:
            break
    return out
