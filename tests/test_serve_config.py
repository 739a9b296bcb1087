"""Where ``wikigym serve`` runs env work: threads only when a served step can wait on a
subprocess (no server: runs without the ``serve`` extra)."""

from __future__ import annotations

import pytest
from gymnasium.envs.registration import EnvSpec

from wikigym.envs.recipe import steps_can_wait
from wikigym.errors import ConfigError
from wikigym.integrations.serve import ServeConfig
from wikigym.integrations.serve.config import DEFAULT_WORKERS


@pytest.mark.parametrize(
    ("env_ids", "kwargs", "workers", "threads"),
    [
        (("WikiSearch-v0",), {"python": "off"}, None, 0),  # CPU-only steps: on the loop
        (("WikiSearch-v0",), {"tools": ["search", "answer"]}, None, 0),
        (("Calc-v0",), {}, None, 0),
        (("WikiSearch-v0", "Calc-v0"), {}, None, DEFAULT_WORKERS),  # python: the sandbox waits
        (("WikiSearch-v0",), {"python": "unsafe"}, None, DEFAULT_WORKERS),
        (("WikiSearch-v0",), {"python": "off"}, 3, 3),  # an explicit --workers wins
        (("WikiSearch-v0",), {}, 0, 0),
    ],
)
def test_env_threads_follow_what_a_step_can_wait_on(env_ids, kwargs, workers, threads) -> None:
    env_kwargs = {"WikiSearch-v0": kwargs} if kwargs else {}
    config = ServeConfig(env_ids=env_ids, env_kwargs=env_kwargs, workers=workers)
    assert config.env_threads == threads


def test_negative_workers_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="workers must be >= 0, got -1"):
        ServeConfig(workers=-1)


def test_an_env_class_that_does_not_say_is_assumed_to_wait() -> None:
    cartpole = EnvSpec("Probe-v0", entry_point="gymnasium.envs.classic_control:CartPoleEnv")
    assert steps_can_wait(cartpole)
