"""``wikigym serve`` (the OpenEnv server, Search-R1's ``/retrieve``, MCP on ``/mcp``) and
``wikigym mcp`` (the env's tools over MCP on stdio): their command lines."""

from __future__ import annotations

import argparse
import ipaddress
import signal
import sys
from typing import Any

from wikigym.cli_args import add_dataclass_arguments, dataclass_from_args
from wikigym.cliutil import require_extra
from wikigym.envs.registration import CALC, WIKI_SEARCH
from wikigym.errors import ConfigError, Terminated
from wikigym.integrations.serve.config import (
    DEFAULT_HOST,
    DEFAULT_IDLE_TIMEOUT_S,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_PORT,
    DEFAULT_RETRIEVE_TOPK,
    ServeConfig,
    ServeLimits,
)


def add_parser(sub: Any) -> None:
    """Mount ``serve`` and ``mcp`` on the ``wikigym`` parser."""
    _add_mcp_parser(sub)
    p = sub.add_parser(
        "serve",
        help="serve WikiSearch-v1 and Calc-v0 over the OpenEnv protocol (WebSocket /ws, "
        "HTTP /reset /step /state /health /metadata /schema /metrics), Search-R1's POST "
        "/retrieve and MCP on /mcp; no authentication unless --token",
    )
    p.add_argument("--corpus", help="snapshot directory (default: the embedded default world)")
    p.add_argument("--tasks", help="TaskSet .jsonl (default: the default TaskSet)")
    p.add_argument("--host", default=DEFAULT_HOST, help="address to bind (default: loopback)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (0: any free port)")
    p.add_argument(
        "--max-sessions", type=int, default=DEFAULT_MAX_SESSIONS, help="sessions held at once"
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=DEFAULT_IDLE_TIMEOUT_S,
        help="close a session with no message for this many seconds (0: never)",
    )
    p.add_argument(
        "--workers",
        type=int,
        help="threads that run env work other than the python sandbox's (default 0: on the "
        "event loop; steps that call python run on --sandbox-workers threads of their own)",
    )
    p.add_argument(
        "--env",
        dest="env_ids",
        action="append",
        help="env id to serve (repeatable; the first is a session's default; "
        "default: WikiSearch-v1 and Calc-v0)",
    )
    p.add_argument("--max-steps", type=int, help="WikiSearch-v1 step budget")
    p.add_argument(
        "--python", choices=["auto", "off", "unsafe"], help="WikiSearch-v1's python tool mode"
    )
    p.add_argument(
        "--token",
        help="require this token (header 'Authorization: Bearer TOKEN', or base URL "
        "http://HOST:PORT/TOKEN); without it the server has no authentication",
    )
    p.add_argument(
        "--retrieve-topk",
        type=int,
        default=DEFAULT_RETRIEVE_TOPK,
        help="topk of a POST /retrieve that names none (Search-R1's default)",
    )
    p.add_argument(
        "--retrieve-threads",
        type=int,
        help="threads a POST /retrieve batch is spread over (default: the cores, at most 8)",
    )
    add_dataclass_arguments(
        p.add_argument_group("limits (what one client may hold; docs/serve.md)"), ServeLimits
    )
    p.set_defaults(func=cmd_serve)


def _add_mcp_parser(sub: Any) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve WikiSearch-v1's tools (reset, search, open, find, python, answer) over MCP "
        "on stdin/stdout, one episode at a time, for an MCP client that starts this command",
    )
    p.add_argument("--corpus", help="snapshot directory (default: the embedded default world)")
    p.add_argument("--tasks", help="TaskSet .jsonl (default: the default TaskSet)")
    p.add_argument("--max-steps", type=int, help="WikiSearch-v1 step budget")
    p.add_argument(
        "--python", choices=["auto", "off", "unsafe"], help="WikiSearch-v1's python tool mode"
    )
    p.set_defaults(func=cmd_mcp)


def _config(args: argparse.Namespace) -> ServeConfig:
    wiki = _wiki_kwargs(args)
    env_ids = tuple(args.env_ids) if args.env_ids else (WIKI_SEARCH, CALC)
    if wiki and WIKI_SEARCH not in env_ids:
        raise ConfigError(f"--max-steps/--python set {WIKI_SEARCH}, which --env does not serve")
    return ServeConfig(
        corpus=args.corpus,
        tasks=args.tasks,
        env_ids=env_ids,
        env_kwargs={WIKI_SEARCH: wiki} if wiki else {},
        max_sessions=args.max_sessions,
        idle_timeout_s=args.idle_timeout,
        workers=args.workers,
        token=args.token,
        retrieve_topk=args.retrieve_topk,
        retrieve_threads=args.retrieve_threads,
        limits=dataclass_from_args(ServeLimits, args),
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _wiki_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    wiki: dict[str, Any] = {}
    if args.max_steps is not None:
        wiki["max_steps"] = args.max_steps
    if args.python is not None:
        wiki["python"] = args.python
    return wiki


def cmd_mcp(args: argparse.Namespace) -> int:
    """Open the snapshot, serve the tools on stdio until the client closes them."""
    require_extra(["mcp"], "serve", "wikigym mcp")
    import anyio

    from wikigym.integrations.serve.mcp_server import run_stdio
    from wikigym.integrations.serve.mcp_tools import McpEpisodes
    from wikigym.integrations.serve.metrics import Metrics
    from wikigym.integrations.serve.sessions import SessionPool

    wiki = _wiki_kwargs(args)
    config = ServeConfig(
        corpus=args.corpus,
        tasks=args.tasks,
        env_ids=(WIKI_SEARCH,),
        env_kwargs={WIKI_SEARCH: wiki} if wiki else {},
        max_sessions=1,
        idle_timeout_s=0,
    )
    pool = SessionPool(config, Metrics())
    pool.warm()  # a wrong path fails here, in one line, before the client's first message
    try:
        anyio.run(run_stdio, McpEpisodes(pool))
    finally:
        pool.shutdown()
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Open the snapshot, bind, serve until SIGTERM/Ctrl-C, close every session."""
    require_extra(["starlette", "uvicorn", "picows"], "serve", "wikigym serve")
    from wikigym.integrations.serve.app import create_app
    from wikigym.integrations.serve.server import bind, uvicorn_server

    config = _config(args)
    app = create_app(config)
    sock = bind(args.host, args.port)
    host, port = sock.getsockname()[:2]
    if not _is_loopback(args.host) and not config.token:
        print(
            f"wikigym serve: warning: bound to {host}, not loopback, with no --token: anyone "
            "who can reach this port can use it; never expose it to the internet",
            file=sys.stderr,
            flush=True,
        )
    server = uvicorn_server(app)
    print(
        f"wikigym serve: http://{host}:{port} ({', '.join(config.env_ids)}; "
        f"max {config.max_sessions} sessions)",
        flush=True,
    )
    # Uvicorn shuts down gracefully on SIGTERM (it stops accepting, then closes every
    # session), then re-raises the signal to the handler it found: this one, which notes it.
    terminated: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: terminated.append(signum))
    try:
        server.run(sockets=[sock])
    finally:
        signal.signal(signal.SIGTERM, previous)
    print("wikigym serve: stopped", flush=True)
    if terminated:  # drained: exit as every long command does on SIGTERM (143, one line)
        raise Terminated("SIGTERM")
    return 0
