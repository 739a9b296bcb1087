"""What a server serves and how much of it: plain data, checked once at start."""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass, field, fields
from typing import Any

from wikigym.envs.recipe import env_spec, steps_can_wait, takes_corpus
from wikigym.envs.registration import CALC, ENV_IDS, WIKI_SEARCH
from wikigym.errors import ConfigError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_SESSIONS = 256
DEFAULT_IDLE_TIMEOUT_S = 300.0
DEFAULT_SANDBOX_WORKERS = 8  # threads for steps that run the python sandbox
DEFAULT_RETRIEVE_TOPK = 3  # Search-R1's retrieval_server.py --topk default


@dataclass(frozen=True)
class ServeLimits:
    """What one client may hold of the server: connections, bytes and time.

    Every limit has a default that a well-behaved client never meets (Search-R1's, SkyRL's and
    verl's search clients, OpenEnv's and MCP clients); each field is also a ``wikigym serve``
    option (``--max-body-bytes`` ...). A client past one is answered with a short error (an
    HTTP 4xx/503, a WebSocket close code) and, where it holds resources, disconnected; no
    error reply quotes more than :data:`~wikigym.integrations.serve.protocol.QUOTE_CHARS`
    characters of what the client sent.
    """

    max_connections: int | None = field(
        default=None,
        metadata={
            "help": "TCP connections held at once (default: the process's open-file limit "
            "less --fd-reserve); past it, the connection that has waited longest on an "
            "unfinished request is dropped for the newcomer, else the newcomer gets 503",
            "min": 1,
        },
    )
    fd_reserve: int = field(
        default=128,
        metadata={
            "help": "file descriptors kept free of connections for the snapshot, the sandbox's "
            "pipes and logs (sizes the default --max-connections)",
            "min": 16,
        },
    )
    head_timeout_s: float = field(
        default=10.0,
        metadata={"help": "seconds a request head (HTTP headers) may take to arrive", "min": 0.01},
    )
    max_head_bytes: int = field(
        default=16 * 1024,
        metadata={"help": "largest request head in bytes (past it: 431)", "min": 256},
    )
    body_timeout_s: float = field(
        default=30.0,
        metadata={
            "help": "seconds an HTTP request body may take to arrive after its head (past it: 408)",
            "min": 0.01,
        },
    )
    max_body_bytes: int = field(
        default=8 * 1024 * 1024,
        metadata={
            "help": "largest HTTP request body in bytes, declared by Content-Length (past "
            "it: 413; a body without a length: 411)",
            "min": 1024,
        },
    )
    max_message_bytes: int = field(
        default=1 << 20,
        metadata={
            "help": "largest WebSocket message in bytes (a frame, or a fragmented message; "
            "past it: close 1009)",
            "min": 1024,
        },
    )
    max_pending_messages: int = field(
        default=16,
        metadata={
            "help": "WebSocket messages a session holds unanswered before its socket is no "
            "longer read (also at max-message-bytes of them)",
            "min": 1,
        },
    )
    send_buffer_bytes: int = field(
        default=4 * 1024 * 1024,
        metadata={
            "help": "bytes of replies a connection may leave unread: past it the server stops "
            "reading that client's requests until it reads",
            "min": 64 * 1024,
        },
    )
    send_timeout_s: float = field(
        default=30.0,
        metadata={
            "help": "a connection that keeps more than send-buffer-bytes unread for this "
            "many seconds is closed",
            "min": 0.01,
        },
    )
    sandbox_workers: int = field(
        default=DEFAULT_SANDBOX_WORKERS,
        metadata={
            "help": "threads that run steps calling the python sandbox (apart from every "
            "other step, so a search never waits behind python)",
            "min": 1,
        },
    )
    drain_s: float = field(
        default=5.0,
        metadata={
            "help": "on SIGTERM, seconds running steps and requests get to finish before every "
            "connection is closed",
            "min": 0,
        },
    )
    retrieve_max_queries: int = field(
        default=4096,
        metadata={"help": "queries in one POST /retrieve (past it: 422)", "min": 1},
    )
    retrieve_max_topk: int = field(
        default=100,
        metadata={"help": "largest topk of POST /retrieve (past it: 422)", "min": 1},
    )

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            low = f.metadata.get("min")
            if value is not None and low is not None and value < low:
                option = "--" + f.name.replace("_", "-")
                raise ConfigError(f"{option} must be >= {low}, got {value}")

    def connection_limit(self) -> int:
        """``max_connections`` resolved: the open-file limit less the reserve (at least 16)."""
        if self.max_connections is not None:
            return self.max_connections
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            soft = 1 << 16
        return max(16, soft - self.fd_reserve)


@dataclass(frozen=True)
class ServeConfig:
    """A server's recipe and bounds.

    Attributes:
        corpus: Snapshot directory of WikiSearch-v1 (None: the embedded default world).
        tasks: TaskSet file of WikiSearch-v1 (None: the default TaskSet).
        env_ids: The env ids a session may ask for; the first is the default.
        env_kwargs: Other env arguments per env id (``max_steps``, ``python``, ...), the same
            for every session (a session's recipe is ``env_spec(env_id, **kwargs)``).
        max_sessions: WebSocket sessions held at once (HTTP one-shots take a slot while they
            run); a connection past it is refused with ``CAPACITY_REACHED``.
        idle_timeout_s: A session with no message for this long is closed (0: never).
        workers: Threads that run env work other than the python sandbox's (resets, steps
            of search, open, find and answer, env creation); 0 or None runs it on the event
            loop. Those steps are CPU work under the GIL, so threads buy no parallelism, only a
            handoff per step (measured: about a fifth of the server's CPU per step,
            benchmarks/results/serve.md). A step that calls ``python`` always runs on its own
            pool (``limits.sandbox_workers`` threads), so a slow program never holds up a
            search.
        token: When set, every request must carry it (``Authorization: Bearer TOKEN``, or
            the base URL ``http://HOST:PORT/TOKEN``).
        retrieve_topk: The ``topk`` of a ``POST /retrieve`` that names none (Search-R1's
            retriever default, 3).
        retrieve_threads: Threads a ``POST /retrieve`` batch is spread over (None: the
            machine's cores, at most 8).
        limits: Connections, bytes and time one client may hold (:class:`ServeLimits`).
    """

    corpus: str | None = None
    tasks: str | None = None
    env_ids: tuple[str, ...] = (WIKI_SEARCH, CALC)
    env_kwargs: dict[str, dict[str, Any]] = field(default_factory=dict)
    max_sessions: int = DEFAULT_MAX_SESSIONS
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S
    workers: int | None = None
    token: str | None = None
    retrieve_topk: int = DEFAULT_RETRIEVE_TOPK
    retrieve_threads: int | None = None
    limits: ServeLimits = field(default_factory=ServeLimits)

    def __post_init__(self) -> None:
        if self.max_sessions < 1:
            raise ConfigError(f"max_sessions must be >= 1, got {self.max_sessions}")
        if self.idle_timeout_s < 0:
            raise ConfigError(f"idle_timeout_s must be >= 0, got {self.idle_timeout_s}")
        if self.workers is not None and self.workers < 0:
            raise ConfigError(
                f"workers must be >= 0, got {self.workers}; pass 0 to run env work on the "
                "event loop, or a number of env threads"
            )
        if not self.env_ids:
            raise ConfigError("env_ids must name at least one env id")
        unknown = [e for e in self.env_ids if e not in ENV_IDS]
        if unknown:
            raise ConfigError(f"env id must be one of {list(ENV_IDS)}, got {unknown[0]!r}")
        stray = sorted(set(self.env_kwargs) - set(self.env_ids))
        if stray:
            raise ConfigError(f"env_kwargs names {stray[0]!r}, which is not served {self.env_ids}")
        if self.token is not None and not self.token:
            raise ConfigError("token must be a non-empty string when given")
        if not 1 <= self.retrieve_topk <= self.limits.retrieve_max_topk:
            raise ConfigError(
                f"retrieve_topk must be 1 to {self.limits.retrieve_max_topk}, got "
                f"{self.retrieve_topk}"
            )
        if self.retrieve_threads is not None and self.retrieve_threads < 1:
            raise ConfigError(f"retrieve_threads must be >= 1, got {self.retrieve_threads}")

    @property
    def env_threads(self) -> int:
        """Threads for env work other than the sandbox's (0: the event loop runs it)."""
        return 0 if self.workers is None else self.workers

    @property
    def sandbox_threads(self) -> int:
        """Threads for steps that can wait on the python sandbox (0: no served env can)."""
        can_wait = any(steps_can_wait(env_spec(e, **self.spec_kwargs(e))) for e in self.env_ids)
        return self.limits.sandbox_workers if can_wait else 0

    @property
    def search_threads(self) -> int:
        """Threads a ``/retrieve`` batch is spread over."""
        if self.retrieve_threads is not None:
            return self.retrieve_threads
        return max(1, min(8, os.cpu_count() or 1))

    @property
    def default_env_id(self) -> str:
        """The env a session gets when its reset names none."""
        return self.env_ids[0]

    def spec_kwargs(self, env_id: str) -> dict[str, Any]:
        """The recipe's keyword arguments for ``env_id`` (corpus/tasks only where it takes them)."""
        kwargs = dict(self.env_kwargs.get(env_id, {}))
        if takes_corpus(env_spec(env_id)):
            if self.corpus is not None:
                kwargs["corpus"] = self.corpus
            if self.tasks is not None:
                kwargs["tasks"] = self.tasks
        return kwargs
