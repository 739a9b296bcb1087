"""The agent interface of the evaluation runner, the oracle agent and the agent factory.

An agent sees text and answers text, like a model does: :meth:`Agent.reset` gives it the
first observation of an episode (the task prompt: instructions, tools and the question),
then :meth:`Agent.act` is called with the latest observation (on the first call, that same
prompt) and returns the next action (a ``<tool_call>`` or any text the env parses).

Only agents that set ``privileged = True`` (the oracle) receive the :class:`Task`; the
runner passes ``None`` to every other agent, so a baseline cannot read the answer.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from wikigym.envs.tasks import Task
from wikigym.envs.tool_specs import format_tool_call
from wikigym.errors import WikigymError


class EvalError(WikigymError):
    """An evaluation cannot run or found a broken task (bad agent spec, oracle failure, ...)."""


@runtime_checkable
class Agent(Protocol):
    """What the runner drives: text in, text out."""

    def reset(self, task_prompt: str, task: Task | None) -> None:
        """Start an episode with its first observation (and the task, for privileged agents)."""
        ...

    def act(self, observation: str) -> str:
        """The next action, given the latest observation."""
        ...


tool_call = format_tool_call  # kept under the name the eval API has always exported


class OracleAgent:
    """Replays each task's oracle trajectory; it must solve every task.

    When the oracle calls run out before the episode ends (a malformed oracle), it emits
    a no-op text action so the failure shows up as an unsolved, truncated episode.
    """

    privileged = True
    name = "oracle"

    def __init__(self) -> None:
        self._calls: list[str] = []
        self._next = 0

    def reset(self, task_prompt: str, task: Task | None) -> None:
        if task is None:
            raise EvalError("the oracle agent needs the task (its oracle trajectory); got None")
        self._calls = [tool_call(c.name, dict(c.arguments)) for c in task.oracle]
        self._next = 0

    def act(self, observation: str) -> str:
        if self._next >= len(self._calls):
            return "(the oracle trajectory has no more calls)"
        action = self._calls[self._next]
        self._next += 1
        return action


AGENT_SPECS = ("oracle", "heuristic", "openai:URL", "hf:PATH")


def make_agent(
    spec: str,
    *,
    seed: int = 0,
    model: str | None = None,
    timeout_s: float = 120.0,
    max_new_tokens: int = 512,
    max_steps: int = 12,
) -> Agent:
    """Build an agent from its command-line spec.

    Args:
        spec: ``oracle``, ``heuristic``, ``openai:URL`` (an OpenAI-compatible endpoint,
            e.g. ``openai:http://127.0.0.1:8000/v1``) or ``hf:PATH`` (a local transformers
            model directory).
        seed: Sampling seed passed to model-driven agents.
        model: Model name sent to an OpenAI-compatible endpoint (default: ``default``).
        timeout_s: Per-request timeout of the OpenAI agent.
        max_new_tokens: Generation budget per turn of model-driven agents.
        max_steps: The env's step budget (the heuristic answers before it is spent).

    Raises:
        EvalError: An unknown spec (the message lists the accepted forms).
    """
    if spec == "oracle":
        return OracleAgent()
    if spec == "heuristic":
        from wikigym.eval.heuristic import HeuristicAgent

        return HeuristicAgent(max_steps=max_steps)
    kind, _, target = spec.partition(":")
    if kind == "openai" and target:
        from wikigym.eval.openai_agent import OpenAIAgent

        return OpenAIAgent(
            target, model=model or "default", seed=seed, timeout_s=timeout_s,
            max_tokens=max_new_tokens,
        )  # fmt: skip
    if kind == "hf" and target:
        from wikigym.eval.hf_agent import HFAgent

        return HFAgent(target, seed=seed, max_new_tokens=max_new_tokens)
    raise EvalError(f"unknown agent {spec!r}; expected one of {', '.join(AGENT_SPECS)}")
