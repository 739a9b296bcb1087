"""``wikigym serve``: WikiSearch-v1 and Calc-v0 for every search-agent stack.

OpenEnv's protocol (WebSocket ``/ws`` sessions, stateless HTTP ``/reset`` and ``/step``,
``/state``, ``/metadata``, ``/schema``, ``/health``, a Prometheus ``/metrics``), Search-R1's
retriever (``POST /retrieve`` over the snapshot's BM25) and the env's tools over MCP
(``/mcp``; stdio with ``wikigym mcp``). Every session's env is made from the env recipe
(:mod:`wikigym.envs.recipe`) over one shared snapshot, so a served episode equals an
in-process one with the same task, seed and actions; every connection is held to the bounds
of :class:`ServeLimits`. Needs the ``serve`` extra (Starlette and Uvicorn for HTTP, picows for
``/ws``, ``mcp``); see ``docs/serve.md``.
"""

from __future__ import annotations

from wikigym.integrations.serve.config import ServeConfig, ServeLimits
from wikigym.integrations.serve.protocol import WireCode, observation_payload

__all__ = ["ServeConfig", "ServeLimits", "WireCode", "observation_payload"]
