"""What a server serves and how much of it: plain data, checked once at start."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wikigym.envs.recipe import env_spec, steps_can_wait, takes_corpus
from wikigym.envs.registration import CALC, ENV_IDS, WIKI_SEARCH
from wikigym.errors import ConfigError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_SESSIONS = 256
DEFAULT_IDLE_TIMEOUT_S = 300.0
DEFAULT_WORKERS = 8  # env threads when a served env can wait on a subprocess


@dataclass(frozen=True)
class ServeConfig:
    """A server's recipe and bounds.

    Attributes:
        corpus: Snapshot directory of WikiSearch-v0 (None: the embedded default world).
        tasks: TaskSet file of WikiSearch-v0 (None: the default TaskSet).
        env_ids: The env ids a session may ask for; the first is the default.
        env_kwargs: Other env arguments per env id (``max_steps``, ``python``, ...), the same
            for every session (a session's recipe is ``env_spec(env_id, **kwargs)``).
        max_sessions: WebSocket sessions held at once (HTTP one-shots take a slot while they
            run); a connection past it is refused with ``CAPACITY_REACHED``.
        idle_timeout_s: A session with no message for this long is closed (0: never).
        workers: Threads that run env work (resets, steps, env creation); 0 runs it on the
            event loop. None (the default): 0 when no served env's step can wait on a
            subprocess (``python`` off), else ``DEFAULT_WORKERS``. Steps are CPU work under
            the GIL, so threads buy no parallelism, only a handoff per step (measured: about
            a fifth of the server's CPU per step, benchmarks/results/serve.md); they are
            needed only so a sandboxed ``python`` call does not stall every other session.
        token: When set, every request must carry it (``Authorization: Bearer TOKEN``, or
            the base URL ``http://HOST:PORT/TOKEN``).
    """

    corpus: str | None = None
    tasks: str | None = None
    env_ids: tuple[str, ...] = (WIKI_SEARCH, CALC)
    env_kwargs: dict[str, dict[str, Any]] = field(default_factory=dict)
    max_sessions: int = DEFAULT_MAX_SESSIONS
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S
    workers: int | None = None
    token: str | None = None

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

    @property
    def env_threads(self) -> int:
        """Threads for env work (0: the event loop runs it), ``workers`` resolved."""
        if self.workers is not None:
            return self.workers
        can_wait = any(steps_can_wait(env_spec(e, **self.spec_kwargs(e))) for e in self.env_ids)
        return DEFAULT_WORKERS if can_wait else 0

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
