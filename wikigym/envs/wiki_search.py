"""``WikiSearch-v1``: answer a question by searching and reading a frozen snapshot.

An episode is one task. The first observation is the question and the tool descriptions;
each action is the model's text, parsed into tool calls (see :mod:`wikigym.envs.actions`);
each later observation is what the tools returned, or a model-facing error. The episode
ends when the agent answers (``terminated``) or when ``max_steps`` actions were taken
without an answer (``truncated`` with ``info["mask"] = True``: leave it out of the loss).
Every action, valid or not, costs one step.

``info`` on every step: ``snapshot_id``, ``taskset_id``, ``task_id``, ``step``,
``tools`` (names called this step), ``tool_error`` (first error code this step, or None),
``tool_error_counts`` (per code, this episode), ``mask``. On the last step also
``reward_components``, ``reward_metrics``, ``answer``, ``citations`` and, when the reward
config asks for it, ``step_rewards``. Nothing in ``info`` depends on time or memory.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import gymnasium as gym

from wikigym.codes import ErrorCode
from wikigym.corpora.snapshot import Snapshot
from wikigym.envs.actions import parse_action
from wikigym.envs.results import ActionErrorOutput, NoticeOutput, StepOutput
from wikigym.envs.rewards import EpisodeOutcome, RewardConfig, compute_reward
from wikigym.envs.spaces import UnicodeText
from wikigym.sandbox import PythonSandbox, SandboxLimits
from wikigym.tasks.defaults import EmbeddedPin, resolve_resources
from wikigym.tasks.limits import MAX_K
from wikigym.tasks.refs import parse_ref
from wikigym.tasks.taskset import Task, TaskSet
from wikigym.tools import (
    AnswerOutput,
    ToolBox,
    ToolConfig,
    all_tools,
    describe_tools,
    get_tool,
    run_tool,
    select_tools,
    tool_names,
)

ToolFormat = Literal["hermes", "json", "search-r1"]
PythonMode = Literal["auto", "off", "unsafe"]
MAX_ACTION_CHARS = 2_000_000

_FORMAT_HELP: dict[str, str] = {
    "hermes": 'Call one tool per turn as <tool_call>{"name": ..., "arguments": {...}}</tool_call>.',
    "json": 'Call one tool per turn as a JSON object {"name": ..., "arguments": {...}}.',
    "search-r1": (
        "Search with <search>query</search>; give the final answer with <answer>text</answer>. "
        'Other tools: <tool_call>{"name": ..., "arguments": {...}}</tool_call>.'
    ),
}


@dataclass
class _Episode:
    task: Task
    steps: int = 0
    seen: set[str] = field(default_factory=set)
    errors: Counter[str] = field(default_factory=Counter)
    done: bool = False


class WikiSearchEnv(gym.Env[str, str]):
    """Multi-turn search over a snapshot with typed tools and component rewards.

    Args:
        corpus: Snapshot directory or an open :class:`Snapshot`; None for the embedded
            default (the generated world, built once into the user cache).
        tasks: TaskSet file (``.jsonl``/``.parquet``) or a :class:`TaskSet`; None for the
            default TaskSet of the default world, or one-hop questions drawn from the
            facts of ``corpus``.
        max_steps: Step budget (actions) per episode.
        reward: A preset name (``binary``, ``f1``, ``shaped``) or a :class:`RewardConfig`.
        tool_format: Call format described in the first observation (all formats are
            accepted whatever this says).
        tools: Tool names to enable (default: every registered tool; a registered id pins
            its list). Listed in the registry's order.
        max_calls_per_step: Tool calls run per action (the rest are a ``too_many_calls``
            error).
        python: ``auto`` runs ``python`` in the namespace sandbox (disabled with a clear
            message where namespaces are unavailable); ``off`` disables it; ``unsafe`` runs
            it without namespaces (resource limits only): only for trusted models.
        sandbox: Limits of ``python``: a :class:`SandboxLimits` or a dict of some of its fields
            (e.g. ``{"cpu_seconds": 2, "memory_mb": 256}``); recorded for replay.
        max_obs_chars: Observations longer than this are cut (with a marker).
        tool_config: Presentation limits of the tools (page part size, ...).
        render_mode: None or ``ansi``.
        search_k: Results of a search that names no ``k``: every Search-R1 ``<search>`` tag
            (the tag has no place for one; Search-R1's retriever returns 3) and calls that
            leave it out. None: ``tool_config``'s (5 by default).
        embedded: The embedded default this env stands for when given no corpus and no
            tasks (an :class:`~wikigym.tasks.defaults.EmbeddedPin` or its fields): data built
            that differs is refused. None: whatever this wikigym builds. Every registered id
            pins one (:mod:`wikigym.envs.registration`).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012
    takes_corpus: ClassVar[bool] = True  # reads corpus= and tasks= (see envs.recipe)

    @staticmethod
    def steps_can_wait(kwargs: Mapping[str, Any]) -> bool:
        """Whether a step of an env made with ``kwargs`` can wait on a subprocess: only a tool
        that runs code in the sandbox does (``python``); search, open, find and answer are
        in-process CPU work (see :func:`wikigym.envs.recipe.steps_can_wait`)."""
        if kwargs.get("python", "auto") == "off":
            return False
        return any(get_tool(t).uses_sandbox for t in _tool_names(kwargs.get("tools")))

    def __init__(
        self,
        corpus: str | Path | Snapshot | None = None,
        tasks: str | Path | TaskSet | None = None,
        max_steps: int = 12,
        reward: str | RewardConfig = "binary",
        tool_format: ToolFormat = "hermes",
        tools: list[str] | tuple[str, ...] | None = None,
        max_calls_per_step: int = 1,
        python: PythonMode = "auto",
        sandbox: SandboxLimits | dict[str, Any] | None = None,
        max_obs_chars: int = 16_000,
        tool_config: ToolConfig | None = None,
        render_mode: str | None = None,
        search_k: int | None = None,
        embedded: EmbeddedPin | Mapping[str, str] | None = None,
    ) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        if search_k is not None and not 1 <= search_k <= MAX_K:
            raise ValueError(f"search_k must be 1 to {MAX_K}, got {search_k}")
        if tool_format not in _FORMAT_HELP:
            raise ValueError(
                f"tool_format must be one of {sorted(_FORMAT_HELP)}, got {tool_format!r}"
            )
        if python not in ("auto", "off", "unsafe"):
            raise ValueError(f"python must be 'auto', 'off' or 'unsafe', got {python!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        limits = SandboxLimits.from_value(sandbox)
        self.snapshot, self.tasks = resolve_resources(
            corpus, tasks, pin=EmbeddedPin.from_value(embedded)
        )
        # JSON-able arguments that re-create this env (for trajectories and replay).
        self.spec_kwargs: dict[str, Any] = {
            "corpus": None if corpus is None else str(self.snapshot.path),
            "tasks": str(Path(tasks).resolve()) if isinstance(tasks, str | Path) else None,
            "max_steps": max_steps,
            "reward": reward if isinstance(reward, str) else None,
            "tool_format": tool_format,
            "tools": None if tools is None else list(tools),
            "max_calls_per_step": max_calls_per_step,
            "search_k": search_k,
            "python": python,
            "sandbox": limits.to_dict(),
            "max_obs_chars": max_obs_chars,
        }
        self.replayable = (tasks is None or isinstance(tasks, str | Path)) and (
            isinstance(reward, str) and tool_config is None
        )
        self.max_steps = max_steps
        self.reward_config = (
            reward if isinstance(reward, RewardConfig) else RewardConfig.from_name(reward)
        )
        self.tool_format = tool_format
        self.tools = _tool_names(tools)
        if python == "off":
            self.tools = tuple(t for t in self.tools if not get_tool(t).uses_sandbox)
        python_sandbox = None
        if any(get_tool(t).uses_sandbox for t in self.tools):
            python_sandbox = PythonSandbox(limits, allow_unsafe=python == "unsafe")
        tool_config = tool_config or ToolConfig()
        if search_k is not None:
            tool_config = dataclasses.replace(tool_config, search_k=search_k)
        self.toolbox = ToolBox(self.snapshot, python_sandbox, tool_config)
        self.max_calls_per_step = max_calls_per_step
        self.max_obs_chars = max_obs_chars
        self.render_mode = render_mode
        self.observation_space = UnicodeText(max_obs_chars + 200)
        self.action_space = UnicodeText(MAX_ACTION_CHARS)
        self._episode: _Episode | None = None
        self._last_obs = ""
        # The structured outputs of the last step, in observation order (what wrappers and
        # agents read instead of the text; empty after reset).
        self.last_outputs: tuple[StepOutput, ...] = ()

    # ---- gymnasium API --------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode: the task named in ``options["task_id"]``, else one drawn with
        ``self.np_random``.

        Raises:
            TaskSetError: ``options["task_id"]`` is not in the TaskSet; the env is left as it
                was (the episode in progress, if any, goes on; the RNG is not reseeded).
        """
        options = options or {}
        named = self.tasks.get(str(options["task_id"])) if "task_id" in options else None
        super().reset(seed=seed)
        if named is not None:
            task = named
        else:
            task = self.tasks[int(self.np_random.integers(len(self.tasks)))]
        self._episode = _Episode(task=task)
        self.last_outputs = ()
        obs = self._first_observation(task)
        self._last_obs = obs
        return obs, self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Run the tool calls in ``action``; see the module docstring for ``info``."""
        ep = self._episode
        if ep is None or ep.done:
            raise RuntimeError(
                "step() called on a finished or unstarted episode; call reset() first"
            )
        if isinstance(action, bytes):
            action = action.decode("utf-8", errors="replace")
        if not isinstance(action, str):
            raise TypeError(f"action must be str, got {type(action).__name__}")
        ep.steps += 1
        parsed = parse_action(action, max_calls=self.max_calls_per_step, tools=self.tools)
        outputs: list[StepOutput] = []
        step_errors: list[ErrorCode] = []
        called: list[str] = []
        answer: AnswerOutput | None = None
        for error in parsed.errors:
            ep.errors[error.code] += 1
            step_errors.append(error.code)
            outputs.append(ActionErrorOutput(error.code, error.message))
        for call in parsed.calls:
            called.append(call.name)
            result = run_tool(self.toolbox, call.name, call.args, seed=self._python_seed())
            ep.seen.update(result.seen)
            if result.error is not None:
                ep.errors[result.error] += 1
                step_errors.append(result.error)
            if result.answer is not None:
                answer = result.answer
                break
            outputs.append(result.output)
        terminated = answer is not None
        truncated = not terminated and ep.steps >= self.max_steps
        info = self._info(tools=called, tool_error=step_errors[0] if step_errors else None)
        reward = 0.0
        if terminated or truncated:
            ep.done = True
            reward = self._finish(ep, answer, truncated, info)
        if terminated and not outputs:
            outputs.append(NoticeOutput("(episode finished)"))
        obs = "\n\n".join(out.render() for out in outputs)
        if truncated:
            notice = (
                f"The step budget ({self.max_steps}) is spent; the episode ends without an answer."
            )
            outputs.append(NoticeOutput(notice))
            obs += f"\n\n{notice}"
        self.last_outputs = tuple(outputs)
        obs = self._clip(obs)
        self._last_obs = obs
        return obs, reward, terminated, truncated, info

    def render(self) -> str | None:
        return self._last_obs if self.render_mode == "ansi" else None

    def step_can_wait(self, action: str) -> bool:
        """Whether :meth:`step` of ``action`` would run the sandbox (tools that use it are
        the only ones that wait on a subprocess): the action parsed as ``step`` parses it,
        nothing run."""
        if self.toolbox.sandbox is None or not isinstance(action, str | bytes):
            return False
        parsed = parse_action(action, max_calls=self.max_calls_per_step, tools=self.tools)
        return any(get_tool(call.name).uses_sandbox for call in parsed.calls)

    # ---- internals ------------------------------------------------------------------
    def _python_seed(self) -> int:
        ep = self._episode
        return 0 if ep is None else ep.steps

    def _first_observation(self, task: Task) -> str:
        return (
            "Answer the question by searching and reading the encyclopedia. Cite the passage ids "
            "(like p12) that support your answer.\n"
            f"{_FORMAT_HELP[self.tool_format]}\n\n"
            f"{describe_tools(self.tools, search_r1_tags=self.tool_format == 'search-r1')}\n\n"
            f"Question: {task.question}"
        )

    def _clip(self, text: str) -> str:
        if len(text) <= self.max_obs_chars:
            return text
        return (
            text[: self.max_obs_chars]
            + f"\n... [observation cut at {self.max_obs_chars} characters]"
        )

    def _info(
        self, tools: list[str] | None = None, tool_error: ErrorCode | None = None
    ) -> dict[str, Any]:
        ep = self._episode
        assert ep is not None
        return {
            "snapshot_id": self.snapshot.snapshot_id,
            "taskset_id": self.tasks.taskset_id,
            "task_id": ep.task.task_id,
            "step": ep.steps,
            "tools": list(tools or []),
            "tool_error": tool_error,
            "tool_error_counts": dict(sorted(ep.errors.items())),
            "mask": False,
        }

    def _exists(self, ref: str) -> bool:
        parsed = parse_ref(ref)
        if parsed is None:
            return False
        kind, n = parsed
        return n < (self.snapshot.num_passages if kind == "p" else self.snapshot.num_articles)

    def _ref_text(self, ref: str) -> str | None:
        parsed = parse_ref(ref)
        if parsed is None:
            return None
        kind, n = parsed
        if kind == "p":
            p = self.snapshot.passage(n)
            return None if p is None else p.text
        page = self.snapshot.page(n)
        return None if page is None else page.text

    def _finish(
        self, ep: _Episode, answer: AnswerOutput | None, truncated: bool, info: dict[str, Any]
    ) -> float:
        citations = tuple(_canonical_ref(c) for c in answer.citations) if answer is not None else ()
        outcome = EpisodeOutcome(
            answer=None if answer is None else answer.text,
            golds=ep.task.golds,
            steps_used=ep.steps,
            max_steps=self.max_steps,
            truncated=truncated,
            citations=citations,
            seen_passages=frozenset(ep.seen),
            existing=self._exists,
            rubric=tuple(ep.task.rubric),
            passage_text=self._ref_text,
            tool_errors=dict(ep.errors),
            abstained=answer is not None and answer.abstain,
            unanswerable=ep.task.unanswerable,
        )
        breakdown = compute_reward(outcome, self.reward_config)
        info.update(breakdown.to_info())
        info["answer"] = outcome.answer
        info["citations"] = list(citations)
        if breakdown.step_rewards is not None:
            info["step_rewards"] = list(breakdown.step_rewards)
        return float(breakdown.total)


def _canonical_ref(ref: str) -> str:
    parsed = parse_ref(ref)
    return ref.strip() if parsed is None else f"{parsed[0]}{parsed[1]}"


def _tool_names(tools: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """The tools enabled, in listing order (default: every registered tool)."""
    if tools is None:
        return tool_names()
    known = tool_names()
    for name in tools:
        if name not in known:
            raise ValueError(f"unknown tool {name!r}; expected some of {list(known)}")
    chosen = select_tools(tools)
    if not any(t.ends_episode for t in chosen):
        ending = [t.name for t in all_tools() if t.ends_episode]
        raise ValueError(
            f"the {' or '.join(ending)} tool must be enabled: it is how an episode ends"
        )
    return tuple(t.name for t in chosen)
