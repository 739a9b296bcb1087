"""Sessions: one env per client over the process's shared snapshot, bounded and reaped.

Env work (creation, reset, step, close) runs on the event loop, or in ``workers`` threads;
a step that calls the python sandbox runs on the sandbox's own threads, so a slow program
never holds up another session's search. Each session runs one message at a time, so its
episode is exactly the sequence of calls an in-process loop makes. The snapshot is opened
once per process by the defaults resolver and shared read-only (its Tantivy searcher is
thread-safe, DuckDB runs through one cursor per thread).
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec

from wikigym.corpora.snapshot import Snapshot
from wikigym.envs.recipe import env_spec, make_env, step_can_wait
from wikigym.errors import WikigymError
from wikigym.integrations.serve.config import ServeConfig
from wikigym.integrations.serve.metrics import Metrics
from wikigym.integrations.serve.protocol import (
    ProtocolError,
    WireCode,
    observation_payload,
    quote,
    reset_arguments,
)

T = TypeVar("T")


@dataclass
class Session:
    """One client's env and episode.

    Attributes:
        session_id: The server's id of the session (sent in every observation; None for
            an HTTP one-shot, which holds no session).
        env_id: The env of the current episode (None before the first reset).
        episode_id: The client's id of the episode (``reset(episode_id=...)``), if any.
        step_count: Steps of the current episode.
        done: Whether the current episode has ended.
        last_active: ``time.monotonic()`` of the last message.
        busy: Whether a message is being handled (an idle reaper never closes it then).
        attached: Whether a WebSocket serves it now (a session made over HTTP ``/mcp`` takes
            one WebSocket at a time, as OpenEnv's ``MCPToolClient`` attaches one).
        persistent: Made over HTTP ``/mcp`` (``openenv/session/create``): it outlives its
            WebSockets until it is closed there, or idle past the timeout.
    """

    session_id: str | None
    env_id: str | None = None
    episode_id: str | None = None
    task_id: str | None = None
    step_count: int = 0
    done: bool = False
    last_active: float = field(default_factory=time.monotonic)
    busy: bool = False
    attached: bool = False
    persistent: bool = False
    envs: dict[str, gym.Env[Any, Any]] = field(default_factory=dict)

    def state(self) -> dict[str, Any]:
        """OpenEnv's ``state`` of the session."""
        return {
            "session_id": self.session_id,
            "episode_id": self.episode_id,
            "env_id": self.env_id,
            "step_count": self.step_count,
            "task_id": self.task_id,
            "done": self.done,
        }


class Ran(Generic[T]):
    """Env work run on the calling thread: what a done future answers, without its lock."""

    __slots__ = ("_error", "_value")

    def __init__(self, fn: Callable[..., T], *args: Any) -> None:
        self._value: T | None = None
        self._error: Exception | None = None
        try:
            self._value = fn(*args)
        except Exception as exc:  # noqa: BLE001 - re-raised by result(), as a future does
            self._error = exc

    def result(self) -> T:
        """The work's value; raises what it raised."""
        if self._error is not None:
            raise self._error
        return cast(T, self._value)


class SessionPool:
    """The sessions of one server: creation under a bound, env work, reaping.

    Env work runs in ``config.env_threads`` threads, or, when that is 0, on the event loop's
    thread as it is submitted (:meth:`submit` then returns a :class:`Ran`, the finished work):
    no handoff, and no other message is read while a step runs. A step that calls the python
    sandbox runs in ``config.sandbox_threads`` threads of its own (:meth:`submit_step`).
    """

    def __init__(self, config: ServeConfig, metrics: Metrics) -> None:
        self.config = config
        self.metrics = metrics
        self.sessions: dict[str, Session] = {}
        self._one_shots = 0
        self._ids = itertools.count(1)
        threads = config.env_threads
        self._executor = (
            ThreadPoolExecutor(threads, thread_name_prefix="wikigym-env") if threads else None
        )
        sandbox = config.sandbox_threads
        self._sandbox = (
            ThreadPoolExecutor(sandbox, thread_name_prefix="wikigym-sandbox") if sandbox else None
        )
        self._specs = {e: env_spec(e, **config.spec_kwargs(e)) for e in config.env_ids}
        self.snapshot: Snapshot | None = None  # the served snapshot, once warm()

    def spec(self, env_id: str) -> EnvSpec:
        """The recipe of a served env id."""
        return self._specs[env_id]

    def warm(self) -> None:
        """Make and close one env of each id: opens the shared snapshot and TaskSet once and
        raises their typed errors (a wrong path) before any client connects; keeps the
        snapshot (``/retrieve`` searches it)."""
        for spec in self._specs.values():
            env = make_env(spec)
            found = getattr(env.unwrapped, "snapshot", None)
            if isinstance(found, Snapshot) and self.snapshot is None:
                self.snapshot = found
            env.close()

    # ---- capacity ---------------------------------------------------------------------
    @property
    def held(self) -> int:
        """Slots in use: WebSocket sessions and running HTTP one-shots."""
        return len(self.sessions) + self._one_shots

    def _refuse_if_full(self) -> None:
        if self.held >= self.config.max_sessions:
            self.metrics.refused()
            raise ProtocolError(
                WireCode.CAPACITY_REACHED,
                f"server full: {self.held} of {self.config.max_sessions} sessions in use; "
                "retry later or start the server with a larger --max-sessions",
            )

    def open(self, *, persistent: bool = False) -> Session:
        """A new session (the event loop's thread only, so the bound check is atomic).

        Raises:
            ProtocolError: ``CAPACITY_REACHED`` when every slot is held.
        """
        self._refuse_if_full()
        # a count for order, a random part so that no client can guess another's id (a
        # session made over /mcp is attached to by its id)
        session_id = f"s{next(self._ids):08d}-{secrets.token_hex(6)}"
        session = Session(session_id=session_id, persistent=persistent)
        self.sessions[session_id] = session
        self.metrics.session_opened()
        return session

    def close(self, session: Session, *, expired: bool = False) -> None:
        """Free the session's slot and close its envs in an env thread (idempotent).

        Called only while no reset or step of the session runs (its env is never closed
        under a running step).
        """
        if session.session_id is None or self.sessions.pop(session.session_id, None) is None:
            return
        self.metrics.session_closed(expired=expired)
        envs, session.envs = list(session.envs.values()), {}
        for env in envs:
            self.submit(env.close)

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T] | Ran[T]:
        """``fn(*args)`` in an env thread, its future; or, with no env threads, run now."""
        if self._executor is not None:
            return self._executor.submit(fn, *args)
        return Ran(fn, *args)

    def waits(self, session: Session, text: str) -> bool:
        """Whether a step of ``text`` in ``session`` can wait on the sandbox (parsed, not run)."""
        if self._sandbox is None or session.env_id is None or session.done:
            return False
        return step_can_wait(session.envs[session.env_id], text)

    def submit_step(
        self, session: Session, text: str
    ) -> Future[dict[str, Any]] | Ran[dict[str, Any]]:
        """A step of ``text``: on the sandbox's threads when it calls python, else as
        :meth:`submit` runs env work."""
        if self._sandbox is not None and self.waits(session, text):
            return self._sandbox.submit(self.step_sync, session, text)
        return self.submit(self.step_sync, session, text)

    async def step(self, session: Session, text: str) -> dict[str, Any]:
        """:meth:`submit_step`, awaited."""
        if self._sandbox is not None and self.waits(session, text):
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._sandbox, self.step_sync, session, text)
        return await self.run(self.step_sync, session, text)

    def find(self, session_id: str) -> Session | None:
        """The open session of that id, if any."""
        return self.sessions.get(session_id)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in an env thread (or now, with no env threads), awaited."""
        if self._executor is None:
            return fn(*args)
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    # ---- episodes -----------------------------------------------------------------------
    def _env_of(self, session: Session, env_id: str) -> gym.Env[Any, Any]:
        env = session.envs.get(env_id)
        if env is None:
            env = make_env(self._specs[env_id])
            session.envs[env_id] = env
        return env

    def reset_sync(self, session: Session, data: dict[str, Any]) -> dict[str, Any]:
        """Start an episode (in an env thread); the OpenEnv observation data.

        Raises:
            ProtocolError: Bad reset fields, an env id that is not served, an unknown task.
        """
        args = reset_arguments(data)
        env_id = args.get("env_id", self.config.default_env_id)
        if env_id not in self._specs:
            raise ProtocolError(
                WireCode.VALIDATION_ERROR,
                f"env_id must be one of {list(self._specs)}, got {quote(env_id)}",
            )
        options = dict(args.get("options") or {})
        if "task_id" in args:
            options["task_id"] = args["task_id"]
        env = self._env_of(session, env_id)
        session.env_id = None  # until this reset succeeds, a step is refused (NOT_RESET)
        try:
            obs, info = env.reset(seed=args.get("seed"), options=options or None)
        except WikigymError as exc:  # TaskSetError: an unknown task id
            raise ProtocolError(WireCode.VALIDATION_ERROR, str(exc)) from None
        session.env_id, session.episode_id = env_id, args.get("episode_id")
        session.task_id = info.get("task_id")
        session.step_count, session.done = 0, False
        self.metrics.reset(env_id)
        return observation_payload(
            obs,
            info,
            reward=None,
            terminated=False,
            truncated=False,
            session_id=session.session_id,
            episode_id=session.episode_id,
        )

    def step_sync(self, session: Session, text: str) -> dict[str, Any]:
        """One env step (in an env thread); the OpenEnv observation data.

        Raises:
            ProtocolError: No episode started, or the episode has ended.
        """
        if session.env_id is None:
            raise ProtocolError(WireCode.NOT_RESET, "step before reset: send a reset first")
        if session.done:
            raise ProtocolError(
                WireCode.EPISODE_DONE, "the episode has ended: send a reset to start another"
            )
        env = session.envs[session.env_id]
        start = time.perf_counter()
        obs, reward, terminated, truncated, info = env.step(text)
        self.metrics.step(session.env_id, time.perf_counter() - start, info.get("tool_error"))
        session.step_count += 1
        session.done = bool(terminated or truncated)
        return observation_payload(
            obs,
            info,
            reward=float(reward),
            terminated=terminated,
            truncated=truncated,
            session_id=session.session_id,
            episode_id=session.episode_id,
        )

    async def one_shot(self, data: dict[str, Any], text: str | None) -> dict[str, Any]:
        """A stateless HTTP call: a fresh env, a reset, then one step when ``text`` is given."""
        self._refuse_if_full()
        self._one_shots += 1
        session = Session(session_id=None)
        try:
            payload = await self.run(self.reset_sync, session, data)
            if text is not None:
                payload = await self.step(session, text)
            return payload
        finally:
            self._one_shots -= 1
            for env in session.envs.values():
                await self.run(env.close)

    # ---- idle sessions and shutdown -----------------------------------------------------
    def idle(self, now: float) -> list[Session]:
        """Sessions with no message for longer than the idle timeout, in id order."""
        limit = self.config.idle_timeout_s
        if limit <= 0:
            return []
        return [
            s
            for _, s in sorted(self.sessions.items())
            if not s.busy and now - s.last_active > limit
        ]

    def capacity(self) -> dict[str, Any]:
        """OpenEnv's ``ServerCapacityStatus`` (``active_sessions``, ``max_sessions``) and the
        env ids served."""
        return {
            "active_sessions": self.held,
            "max_sessions": self.config.max_sessions,
            "env_ids": list(self.config.env_ids),
        }

    def shutdown(self) -> None:
        """Stop the env threads once the work queued on them (env closes) is done; a sandbox
        step still running is not waited for (its program is killed by its own time limit)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        if self._sandbox is not None:
            self._sandbox.shutdown(wait=False, cancel_futures=True)
