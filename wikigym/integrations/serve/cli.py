"""``wikigym serve``: the command line of the OpenEnv server."""

from __future__ import annotations

import argparse
import ipaddress
import signal
import sys
from typing import Any

from wikigym.cliutil import require_extra
from wikigym.envs.registration import CALC, WIKI_SEARCH
from wikigym.errors import ConfigError
from wikigym.integrations.serve.config import (
    DEFAULT_HOST,
    DEFAULT_IDLE_TIMEOUT_S,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_PORT,
    ServeConfig,
)


def add_parser(sub: Any) -> None:
    """Mount ``serve`` on the ``wikigym`` parser."""
    p = sub.add_parser(
        "serve",
        help="serve WikiSearch-v0 and Calc-v0 over the OpenEnv protocol (WebSocket /ws, "
        "HTTP /reset /step /health /schema /metrics); no authentication unless --token",
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
        help="threads that run env steps (0: on the event loop; default: 0 when --python off "
        "leaves no tool that waits on a subprocess, else 8)",
    )
    p.add_argument(
        "--env",
        dest="env_ids",
        action="append",
        help="env id to serve (repeatable; the first is a session's default; "
        "default: WikiSearch-v0 and Calc-v0)",
    )
    p.add_argument("--max-steps", type=int, help="WikiSearch-v0 step budget")
    p.add_argument(
        "--python", choices=["auto", "off", "unsafe"], help="WikiSearch-v0's python tool mode"
    )
    p.add_argument(
        "--token",
        help="require this token (header 'Authorization: Bearer TOKEN', or base URL "
        "http://HOST:PORT/TOKEN); without it the server has no authentication",
    )
    p.set_defaults(func=cmd_serve)


def _config(args: argparse.Namespace) -> ServeConfig:
    wiki: dict[str, Any] = {}
    if args.max_steps is not None:
        wiki["max_steps"] = args.max_steps
    if args.python is not None:
        wiki["python"] = args.python
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
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    # Uvicorn shuts down gracefully on SIGTERM, then re-raises it to the handler it found:
    # this one, so the process ends with status 0 once every session is closed.
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    try:
        server.run(sockets=[sock])
    finally:
        signal.signal(signal.SIGTERM, previous)
    print("wikigym serve: stopped", flush=True)
    return 0
