"""The env ids, each pinned to what it produces, and their registration with Gymnasium.

An id is a promise: the same id, corpus, tasks, seed and actions give the same observations,
rewards and infos in any later wikigym, so a trajectory recorded under it replays. So each id
in :data:`ENV_VERSIONS` pins, as Gymnasium kwargs, every default that decides what it produces:
the tools it enables (a tool added to the registry is not one of them), the step budget,
the reward preset, the call format, the observation cap, the sandbox limits, and the embedded
default it uses when given no corpus and no tasks (the default TaskSet's generator and the ids
of the world snapshot and of that TaskSet, checked when they are built or found). What is code,
not kwargs (tool descriptions, renderings, reward components), is pinned by a test: the first
observation and a few steps of every id, recorded in ``tests/data/env_ids/``.

When a change would make an id produce something else, the id's version moves: add the next
version here (``WikiSearch-v1``) with its kwargs, point :data:`WIKI_SEARCH` (the id the
package's own defaults use) at it, and record its pins with ``python tests/test_env_ids.py
--record``; the old id keeps its kwargs. An old id whose code is gone is removed from the
table: ``gym.make`` then names the newer version (Gymnasium's ``DeprecatedEnv``) and replay
refuses its trajectories with that reason.

Registration only records string entry points: nothing is opened or built until
``gymnasium.make`` is called. ``import wikigym`` must not load Gymnasium (a user who only
builds snapshots never needs it), so when Gymnasium is not loaded yet the registration waits
for it: :func:`register_when_gymnasium_loads` runs :func:`register_envs` right after
Gymnasium's own module has executed, whatever imports it first.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType, ModuleType
from typing import Any

WIKI_SEARCH_ENTRY = "wikigym.envs.wiki_search:WikiSearchEnv"
CALC_ENTRY = "wikigym.envs.calc:CalcEnv"


@dataclass(frozen=True)
class EnvVersion:
    """One registered id: its entry point and the kwargs it pins (read-only).

    Attributes:
        id: The Gymnasium id (``Name-vN``).
        entry_point: ``module:Class`` (Gymnasium imports it on ``make``).
        kwargs: Every default that decides what the id produces.
        note: What this version is (what moved it from the one before).
    """

    id: str
    entry_point: str
    kwargs: Mapping[str, Any]
    note: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "kwargs", MappingProxyType(dict(self.kwargs)))


ENV_VERSIONS: tuple[EnvVersion, ...] = (
    EnvVersion(
        "WikiSearch-v0",
        WIKI_SEARCH_ENTRY,
        {
            # The one deliberate copy of a tool list: an id does not grow with the registry.
            "tools": ("search", "open", "find", "python", "answer"),
            "max_steps": 12,
            "reward": "binary",
            "tool_format": "hermes",
            "max_calls_per_step": 1,
            "search_k": None,
            "python": "auto",
            "sandbox": {
                "cpu_seconds": 5.0,
                "wall_seconds": 10.0,
                "memory_mb": 512,
                "max_processes": 16,
                "max_output_bytes": 16_384,
                "max_file_bytes": 1_048_576,
            },
            "max_obs_chars": 16_000,
            "embedded": {
                "env_id": "WikiSearch-v0",
                "generator": "wikigym.synth/5",
                "snapshot_id": "81c225385fb4135d6c564d2438e8ce3a868b691b291436a8f939985e1faa4e58",
                "taskset_id": "5dc578a89013e0ff6a840bd524d9f365520c0177c20c27c4f9a362aebb53fd21",
            },
        },
        note=(
            "pinned at wikigym 3c40d63 + issue 34 (answer with abstain; default TaskSet "
            "wikigym.synth/5 of the world-v1 3000-article default). Before pinning the same id "
            "changed twice: the answer tool's abstain argument (9acc0cc) moved the first "
            "observation, and each synth version (/1 to /5) moved the default TaskSet; "
            "trajectories recorded before those commits do not replay (see docs/changelog.md)"
        ),
    ),
    EnvVersion(
        "WikiSearch-v1",
        WIKI_SEARCH_ENTRY,
        {
            # The one deliberate copy of a tool list: an id does not grow with the registry.
            "tools": ("search", "open", "find", "python", "answer"),
            "max_steps": 12,
            "reward": "binary",
            "tool_format": "hermes",
            "max_calls_per_step": 1,
            "search_k": None,
            "python": "auto",
            "sandbox": {
                "cpu_seconds": 5.0,
                "wall_seconds": 10.0,
                "memory_mb": 512,
                "max_processes": 16,
                "max_output_bytes": 16_384,
                "max_file_bytes": 1_048_576,
            },
            "max_obs_chars": 16_000,
            "embedded": {
                "env_id": "WikiSearch-v1",
                "generator": "wikigym.synth/6",
                "snapshot_id": "6f301e49e2c87b9da73f9c487a33468f6a0e8c654b1f00df15c9740c538ab795",
                "taskset_id": "1ebb2099a99d3ccabb4d83914adce383419d49339be18ee81c3ead2d11c99744",
                "corpus_tasks": "wikigym.synth/6",
                "world_version": "2",
            },
        },
        note=(
            "issue 36: the default TaskSet of wikigym.synth/6 (descriptions definite only when "
            "they denote one entity, natural forms, levels a reference agent tells apart) on the "
            "world of generator version 2 (one office per person: a new snapshot id); a corpus "
            "given without tasks gets synth's questions of typed relations (v0: one-hop "
            "questions of raw infobox keys)"
        ),
    ),
    EnvVersion(
        "Calc-v0",
        CALC_ENTRY,
        {"level": 2, "reward": "binary"},
        note="arithmetic word problems, one action (unchanged since 5669124)",
    ),
)
"""Every registered id, oldest first within a name."""

ENV_IDS: tuple[str, ...] = tuple(v.id for v in ENV_VERSIONS)
WIKI_SEARCH = "WikiSearch-v1"
"""The WikiSearch id the package's own defaults (trainers, eval, serve, adapters) use."""
CALC = "Calc-v0"
"""The Calc id the package's own defaults use."""
_GYMNASIUM = "gymnasium"


def env_version(env_id: str) -> EnvVersion:
    """The registered version ``env_id`` names.

    Raises:
        KeyError: ``env_id`` is not one of :data:`ENV_IDS`.
    """
    for version in ENV_VERSIONS:
        if version.id == env_id:
            return version
    raise KeyError(f"{env_id!r} is not a wikigym env id; known: {list(ENV_IDS)}")


def replayable_env_ids() -> tuple[str, ...]:
    """The ids whose trajectories replay: every WikiSearch version (Calc records none)."""
    return tuple(v.id for v in ENV_VERSIONS if v.entry_point == WIKI_SEARCH_ENTRY)


def register_envs() -> None:
    """Register the environments with Gymnasium (idempotent).

    No TimeLimit: WikiSearch spends its own step budget so that it can mark the truncated
    episode as masked (a TimeLimit truncation would carry no mask). No passive env checker:
    Gymnasium's (1.4) marks its first reset or step as checked before calling the env, so one
    that raises (an unknown task id) leaves it holding no data, and every later step raises
    TypeError; the env could never be used again, nor a served session. Every id passes
    Gymnasium's full ``check_env`` in the tests instead (``tests/test_env_ids.py``).
    """
    import gymnasium as gym  # on use: registering is the only reason to load it

    registry = gym.envs.registration.registry
    for version in ENV_VERSIONS:
        if version.id not in registry:
            gym.register(
                id=version.id,
                entry_point=version.entry_point,
                kwargs=_plain(version.kwargs),
                disable_env_checker=True,
            )


def _plain(value: Any) -> Any:
    """Pinned kwargs as fresh JSON-like data (no env can mutate the table)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


class _RegisteringLoader(importlib.abc.Loader):
    """Gymnasium's own loader, followed by :func:`register_envs`."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        # Hand the module back its real loader first (resource readers ask it for files).
        module.__loader__ = self.inner
        if module.__spec__ is not None:
            module.__spec__.loader = self.inner
        self.inner.exec_module(module)
        register_envs()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _GymnasiumWatch(importlib.abc.MetaPathFinder):
    """A one-shot finder: wraps the loader of ``gymnasium`` when it is first imported."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _GYMNASIUM:
            return None
        _unwatch()
        spec = importlib.util.find_spec(_GYMNASIUM)  # the finders after this one
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _RegisteringLoader(spec.loader)
        return spec


_WATCH = _GymnasiumWatch()
_WATCH_LOCK = threading.Lock()


def _unwatch() -> None:
    with _WATCH_LOCK:
        if _WATCH in sys.meta_path:
            sys.meta_path.remove(_WATCH)


def register_when_gymnasium_loads() -> None:
    """Register the envs now if Gymnasium is loaded, else as soon as it is (idempotent)."""
    if _GYMNASIUM in sys.modules:
        register_envs()
        return
    with _WATCH_LOCK:
        if _WATCH not in sys.meta_path:
            sys.meta_path.insert(0, _WATCH)
