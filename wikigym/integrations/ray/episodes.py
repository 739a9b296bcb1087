"""One episode of a policy in an env, the same in a Ray actor and in a serial run.

A policy is one of:

- an :class:`OpenAIPolicy` (an OpenAI-compatible chat endpoint, driven by eval's
  :class:`~wikigym.eval.openai_agent.OpenAIAgent`);
- an eval :class:`~wikigym.eval.agents.Agent` (``reset``/``act``);
- a plain callable ``policy(turn: Turn) -> str``.

Each episode runs on a fresh deep copy of the policy, so an episode's actions depend only
on the policy, the task and the seed, never on which episodes the same worker ran before:
that is what makes a pool's results equal to a serial run's.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from wikigym.envs.results import StepOutput
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.errors import EvalError
from wikigym.eval.agents import Agent
from wikigym.eval.openai_agent import OpenAIAgent
from wikigym.integrations.common import plain, reset_row


@dataclass(frozen=True)
class Turn:
    """What a callable policy sees before each action.

    Attributes:
        messages: The conversation so far, chat-style: the first observation as ``user``,
            then alternating ``assistant`` (actions) and ``user`` (observations).
        outputs: The structured outputs of the last step (``env.last_outputs``).
        info: The last ``info`` of the env (ids, step index; never the gold answer).
        policy_version: The version of the policy that acts (see the rollout service).
    """

    messages: tuple[dict[str, str], ...]
    outputs: tuple[StepOutput, ...]
    info: dict[str, Any]
    policy_version: int = 0


@dataclass(frozen=True)
class OpenAIPolicy:
    """An OpenAI-compatible endpoint as a policy (the arguments of ``OpenAIAgent``)."""

    base_url: str
    model: str = "default"
    seed: int = 0
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float = 120.0
    retries: int = 2

    def agent(self) -> OpenAIAgent:
        """A new agent for one episode."""
        return OpenAIAgent(
            self.base_url,
            model=self.model,
            seed=self.seed,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            timeout_s=self.timeout_s,
            retries=self.retries,
        )


Policy = OpenAIPolicy | Agent | Callable[[Turn], str]


@dataclass(frozen=True)
class Trajectory:
    """One finished episode.

    Attributes:
        index: The episode's number in its run (results are ordered by it).
        task_id: The task (None for Calc-v0).
        seed: The reset seed.
        policy_version: The version of the policy that produced it.
        messages: The conversation: first observation, then action/observation pairs.
        rewards: The reward of each step.
        infos: The ``info`` of the reset, then of each step (plain data).
        terminated: Whether the episode ended with an answer.
        truncated: Whether the step budget ran out (``mask`` is then true).
        worker: Which worker ran it (not part of equality: it depends on scheduling).
    """

    index: int
    task_id: str | None
    seed: int
    policy_version: int
    messages: tuple[dict[str, str], ...]
    rewards: tuple[float, ...]
    infos: tuple[dict[str, Any], ...]
    terminated: bool
    truncated: bool
    worker: int = field(default=-1, compare=False)

    @property
    def reward(self) -> float:
        """The episode's return (the sum of its step rewards)."""
        return float(sum(self.rewards))

    @property
    def mask(self) -> bool:
        """True when a trainer should leave the episode out of the loss (truncated)."""
        return bool(self.infos[-1].get("mask", self.truncated))

    @property
    def snapshot_id(self) -> str | None:
        """The snapshot the episode ran on (None for Calc-v0)."""
        return self.infos[0].get("snapshot_id")


@dataclass(frozen=True)
class EpisodeSpec:
    """Which episode to run: the ``index``-th of a run, reset with ``task_id`` and ``seed``."""

    index: int
    task_id: str | None
    seed: int


class _CallableAgent:
    """A callable policy behind the agent interface (it keeps the conversation)."""

    privileged = False

    def __init__(self, fn: Callable[[Turn], str], version: int) -> None:
        self.fn = fn
        self.version = version
        self.messages: list[dict[str, str]] = []
        self.info: dict[str, Any] = {}

    def reset(self, task_prompt: str, task: Any) -> None:
        self.messages = [{"role": "user", "content": task_prompt}]

    def act(self, observation: str, outputs: Sequence[StepOutput] = ()) -> str:
        if self.messages and self.messages[-1]["role"] == "assistant":
            self.messages.append({"role": "user", "content": observation})
        turn = Turn(tuple(self.messages), tuple(outputs), dict(self.info), self.version)
        action = self.fn(turn)
        self.messages.append({"role": "assistant", "content": action})
        return action


def as_agent(policy: Policy, version: int = 0) -> Any:
    """A fresh agent for one episode of ``policy`` (a deep copy: no state crosses episodes).

    Raises:
        EvalError: ``policy`` is none of the accepted kinds.
    """
    if isinstance(policy, OpenAIPolicy):
        return policy.agent()
    if isinstance(policy, Agent):
        return copy.deepcopy(policy)
    if callable(policy):
        return _CallableAgent(copy.deepcopy(policy), version)
    raise EvalError(
        f"a policy must be an OpenAIPolicy, an agent (reset/act) or a callable(turn) -> str, "
        f"got {type(policy).__name__}"
    )


def episode_specs(
    env: gym.Env[Any, Any], episodes: int | None, seed: int, task_ids: Sequence[str] | None
) -> list[EpisodeSpec]:
    """The episodes of a run: episode ``i`` resets with ``seed + i``.

    WikiSearch-v1: ``task_ids`` in order (default: every task of the TaskSet), cycled when
    ``episodes`` is larger. Calc-v0: ``episodes`` seeded problems (default 100).

    Raises:
        EvalError: ``episodes`` < 1, or a task id the TaskSet lacks.
    """
    if episodes is not None and episodes < 1:
        raise EvalError(f"episodes must be >= 1, got {episodes}; pass a positive count or None")
    base = env.unwrapped
    if not isinstance(base, WikiSearchEnv):
        return [
            EpisodeSpec(i, None, seed + i) for i in range(100 if episodes is None else episodes)
        ]
    ids = list(task_ids) if task_ids is not None else [t.task_id for t in base.tasks]
    known = {t.task_id for t in base.tasks}
    missing = [t for t in ids if t not in known]
    if missing or not ids:
        raise EvalError(
            f"task ids must name tasks of TaskSet {base.tasks.taskset_id[:12]}, got "
            f"{missing[:1] or 'none'}; pass ids from the env's TaskSet"
        )
    count = len(ids) if episodes is None else episodes
    return [EpisodeSpec(i, ids[i % len(ids)], seed + i) for i in range(count)]


def run_episode(
    env: gym.Env[Any, Any], spec: EpisodeSpec, policy: Policy, version: int = 0, worker: int = -1
) -> Trajectory:
    """Run one episode of ``policy`` in ``env``.

    Raises:
        EvalError: The policy returned something other than text (a policy bug).
    """
    agent = as_agent(policy, version)
    obs, info = reset_row(env, spec.task_id, spec.seed)
    agent.reset(obs, None)
    messages = [{"role": "user", "content": obs}]
    infos = [plain(info)]
    rewards: list[float] = []
    terminated = truncated = False
    base = env.unwrapped
    while not (terminated or truncated):
        if isinstance(agent, _CallableAgent):
            agent.info = infos[-1]
        action = agent.act(obs, tuple(getattr(base, "last_outputs", ())))
        if not isinstance(action, str):
            raise EvalError(f"the policy returned {type(action).__name__}, expected str")
        obs, reward, terminated, truncated, info = env.step(action)
        messages += [{"role": "assistant", "content": action}, {"role": "user", "content": obs}]
        rewards.append(float(reward))
        infos.append(plain(info))
    return Trajectory(
        index=spec.index,
        task_id=spec.task_id,
        seed=spec.seed,
        policy_version=version,
        messages=tuple(messages),
        rewards=tuple(rewards),
        infos=tuple(infos),
        terminated=bool(terminated),
        truncated=bool(truncated),
        worker=worker,
    )


__all__ = [
    "EpisodeSpec",
    "OpenAIPolicy",
    "Policy",
    "Trajectory",
    "Turn",
    "as_agent",
    "episode_specs",
    "run_episode",
]
