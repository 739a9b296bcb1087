"""The one env recipe: Gymnasium's own :class:`~gymnasium.envs.registration.EnvSpec`.

Eval, trainers, replay (and, next, the server, Ray workers and adapters) describe the env
they want as an ``EnvSpec``: the registered spec of an id with the keyword arguments of the
run (corpus and tasks as paths, ``max_steps``, ``reward``, ...). A spec is plain data
(``spec.to_json()``, picklable); :func:`make_env` turns it into an env, and the snapshot and
TaskSet it names are opened once per process by the defaults resolver. What an env takes is
asked of its class (:func:`takes_corpus`), never read from its id.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec, load_env_creator

from wikigym.envs.registration import WIKI_SEARCH, register_envs


def env_spec(env_id: str = WIKI_SEARCH, **kwargs: Any) -> EnvSpec:
    """The registered spec of ``env_id`` with ``kwargs`` over its own.

    Raises:
        gymnasium.error.Error: ``env_id`` is not registered (the message names the known ids).
    """
    register_envs()
    base = gym.spec(env_id)
    return dataclasses.replace(base, kwargs={**base.kwargs, **kwargs})


def env_class(spec: EnvSpec) -> Any:
    """The class (or creator) the spec's entry point names."""
    entry = spec.entry_point
    return load_env_creator(entry) if isinstance(entry, str) else entry


def takes_corpus(spec: EnvSpec) -> bool:
    """Whether the env reads a snapshot and a TaskSet (``corpus=``/``tasks=``)."""
    return bool(getattr(env_class(spec), "takes_corpus", False))


def steps_can_wait(spec: EnvSpec) -> bool:
    """Whether a step of the env can block on something outside the process (a subprocess),
    rather than only compute: a server runs CPU-only steps on its event loop, since under the
    GIL a thread adds only handoff cost. An env class that does not say is assumed to wait."""
    ask = getattr(env_class(spec), "steps_can_wait", None)
    return True if ask is None else bool(ask(spec.kwargs))


def step_can_wait(env: gym.Env[Any, Any], action: Any) -> bool:
    """Whether ``env.step(action)`` can block on a subprocess (the python sandbox): a server
    runs such a step on the sandbox's own threads and every other step where CPU work runs.
    Asked of the env (its ``step_can_wait(action)``), else of its class
    (:func:`steps_can_wait`)."""
    ask = getattr(env.unwrapped, "step_can_wait", None)
    if ask is not None:
        return bool(ask(action))
    return True if env.spec is None else steps_can_wait(env.spec)


def make_env(spec: EnvSpec, **overrides: Any) -> gym.Env[Any, Any]:
    """A new env from the recipe (``overrides``: objects that are not recipe data, such as
    an open snapshot shared by the caller)."""
    return gym.make(spec, **overrides)
