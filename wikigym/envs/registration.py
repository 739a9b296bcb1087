"""Registration of the environments with Gymnasium.

- ``WikiSearch-v0``: :class:`wikigym.envs.wiki_search.WikiSearchEnv`
- ``Calc-v0``: :class:`wikigym.envs.calc.CalcEnv`

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
from collections.abc import Sequence
from types import ModuleType
from typing import Any

ENV_IDS: tuple[str, ...] = ("WikiSearch-v0", "Calc-v0")
_GYMNASIUM = "gymnasium"


def register_envs() -> None:
    """Register the environments with Gymnasium (idempotent)."""
    import gymnasium as gym  # on use: registering is the only reason to load it

    registry = gym.envs.registration.registry
    # No passive env checker: Gymnasium's (1.4) marks its first reset or step as checked
    # before calling the env, so one that raises (an unknown task id) leaves it holding no
    # data, and every later step raises TypeError; the env could never be used again, nor a
    # served session. The envs pass Gymnasium's full `check_env` in the tests instead.
    if "WikiSearch-v0" not in registry:
        # No TimeLimit: the env spends its own step budget so that it can mark the
        # truncated episode as masked (a TimeLimit truncation would carry no mask).
        gym.register(
            id="WikiSearch-v0",
            entry_point="wikigym.envs.wiki_search:WikiSearchEnv",
            disable_env_checker=True,
        )
    if "Calc-v0" not in registry:
        gym.register(
            id="Calc-v0", entry_point="wikigym.envs.calc:CalcEnv", disable_env_checker=True
        )


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
