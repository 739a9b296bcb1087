"""``wikigym serve``: WikiSearch-v0 and Calc-v0 over the OpenEnv protocol.

WebSocket ``/ws`` sessions (reset/step/state/close messages), stateless HTTP ``/reset`` and
``/step`` one-shots, ``/health``, ``/schema`` and a Prometheus ``/metrics``. Every session's
env is made from the env recipe (:mod:`wikigym.envs.recipe`) over one shared snapshot, so a
served episode equals an in-process one with the same task, seed and actions. Needs the
``serve`` extra (Starlette and Uvicorn for HTTP, picows for ``/ws``); see ``docs/serve.md``.
"""

from __future__ import annotations

from wikigym.integrations.serve.config import ServeConfig
from wikigym.integrations.serve.protocol import WireCode, observation_payload

__all__ = ["ServeConfig", "WireCode", "observation_payload"]
