"""The agent interface of the evaluation runner and the oracle agent (the factory: ``factory``).

An agent sees text and answers text, like a model does: :meth:`Agent.reset` gives it the
first observation of an episode (the task prompt: instructions, tools and the question),
then :meth:`Agent.act` is called with the latest observation (on the first call, that same
prompt) and returns the next action (a ``<tool_call>`` or any text the env parses).

Only agents that set ``privileged = True`` (the oracle) receive the :class:`Task`; an agent
that sets ``sees_query = True`` (the reference planner) receives the task's question and
formal query alone (:func:`wikigym.eval.runner.query_view`); the runner passes ``None`` to
every other agent, so a baseline cannot read the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from wikigym.envs.results import StepOutput
from wikigym.errors import EvalError
from wikigym.tasks.taskset import Task
from wikigym.tools import format_tool_call


@runtime_checkable
class Agent(Protocol):
    """What the runner drives: text in, text out."""

    def reset(self, task_prompt: str, task: Task | None) -> None:
        """Start an episode with its first observation (and the task, for privileged agents)."""
        ...

    def act(self, observation: str, outputs: Sequence[StepOutput] = ()) -> str:
        """The next action, given the latest observation and its structured outputs (the
        env's ``last_outputs``: what an agent that is not a language model reads)."""
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

    def act(self, observation: str, outputs: Sequence[StepOutput] = ()) -> str:
        if self._next >= len(self._calls):
            return "(the oracle trajectory has no more calls)"
        action = self._calls[self._next]
        self._next += 1
        return action
