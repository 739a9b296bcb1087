"""Where ``wikigym serve`` runs env work: the sandbox's own threads only when a served step
can wait on a subprocess, other env work on the loop unless ``workers`` asks for threads; the
limits' checks (no server: runs without the ``serve`` extra)."""

from __future__ import annotations

import pytest
from gymnasium.envs.registration import EnvSpec

from wikigym.envs.recipe import steps_can_wait
from wikigym.errors import ConfigError
from wikigym.integrations.serve import ServeConfig
from wikigym.integrations.serve.config import DEFAULT_SANDBOX_WORKERS, ServeLimits


@pytest.mark.parametrize(
    ("env_ids", "kwargs", "workers", "threads", "sandbox"),
    [
        (("WikiSearch-v1",), {"python": "off"}, None, 0, 0),  # CPU-only steps: on the loop
        (("WikiSearch-v1",), {"tools": ["search", "answer"]}, None, 0, 0),
        (("Calc-v0",), {}, None, 0, 0),
        # python: its steps on the sandbox's threads, every other step still on the loop
        (("WikiSearch-v1", "Calc-v0"), {}, None, 0, DEFAULT_SANDBOX_WORKERS),
        (("WikiSearch-v1",), {"python": "unsafe"}, None, 0, DEFAULT_SANDBOX_WORKERS),
        (("WikiSearch-v1",), {"python": "off"}, 3, 3, 0),  # an explicit --workers wins
        (("WikiSearch-v1",), {}, 0, 0, DEFAULT_SANDBOX_WORKERS),
    ],
)
def test_env_threads_follow_what_a_step_can_wait_on(
    env_ids, kwargs, workers, threads, sandbox
) -> None:
    env_kwargs = {"WikiSearch-v1": kwargs} if kwargs else {}
    config = ServeConfig(env_ids=env_ids, env_kwargs=env_kwargs, workers=workers)
    assert config.env_threads == threads
    assert config.sandbox_threads == sandbox


def test_the_connection_limit_stays_under_the_descriptor_limit(monkeypatch) -> None:
    import resource

    monkeypatch.setattr(resource, "getrlimit", lambda kind: (1024, 4096))
    assert ServeLimits().connection_limit() == 1024 - 128
    assert ServeLimits(fd_reserve=512).connection_limit() == 512
    assert ServeLimits(max_connections=10).connection_limit() == 10


def test_a_limit_below_its_minimum_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="--max-body-bytes must be >= 1024, got 10"):
        ServeLimits(max_body_bytes=10)
    with pytest.raises(ConfigError, match="retrieve_topk must be 1 to 100, got 0"):
        ServeConfig(retrieve_topk=0)


def test_negative_workers_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="workers must be >= 0, got -1"):
        ServeConfig(workers=-1)


def test_an_env_class_that_does_not_say_is_assumed_to_wait() -> None:
    cartpole = EnvSpec("Probe-v0", entry_point="gymnasium.envs.classic_control:CartPoleEnv")
    assert steps_can_wait(cartpole)


@pytest.mark.parametrize(
    ("python", "action", "waits"),
    [
        ("unsafe", "<python>print(1)</python>", True),
        ("unsafe", '<tool_call>{"name": "python", "arguments": {"code": "1"}}</tool_call>', True),
        ("unsafe", "<search>city</search>", False),
        ("unsafe", "no call at all", False),
        ("off", "<python>print(1)</python>", False),  # the tool is off: an error, no sandbox
    ],
)
def test_a_step_waits_only_when_it_calls_the_sandbox(python, action, waits) -> None:
    """The server sends a step to the sandbox's threads exactly when the env would run
    ``python`` for it (parsed as the env parses it, nothing run)."""
    from wikigym.envs.recipe import env_spec, make_env, step_can_wait

    env = make_env(env_spec("WikiSearch-v1", python=python))
    try:
        env.reset(seed=0)
        assert step_can_wait(env, action) is waits
    finally:
        env.close()
    calc = make_env(env_spec("Calc-v0"))
    assert step_can_wait(calc, "<answer>3</answer>") is False  # asked of the class
