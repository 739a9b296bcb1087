"""wikigym environments as TRL ``GRPOTrainer`` inputs: a dataset and an ``environment_factory``.

TRL 1.16's contract (``GRPOTrainer(environment_factory=...)``): the factory returns an object
whose ``reset(**row)`` starts an episode for a dataset row, whose public methods are tools
(TRL builds the tool schema from their type hints and Google docstrings and calls them with the
parsed ``<tool_call>`` arguments), and whose optional ``get_reward()`` scores the finished
rollout. TRL pools instances and resets them between rollouts.

:class:`ToolEnv` is that object for any wikigym env. Each tool method turns its arguments into
the equivalent ``<tool_call>`` action and calls ``env.step``, so validation, rewards, masking,
error codes and metrics all come from the env, exactly as in evaluation. The tool methods a
class exposes are the env's enabled tools: every tool set has its own module-level subclass,
generated from the tool registry at import (``WikigymEnv_search_open_find_python_answer`` for
WikiSearch-v1, ``WikigymEnv_answer`` for Calc-v0): the classes, and so :class:`EnvironmentFactory`,
pickle by reference (TRL's ``AsyncGRPOTrainer`` pickles the factory).

``get_reward()`` returns the env's total reward, or None for a masked episode. TRL 1.16 turns
None into NaN; a rollout for which every reward source is NaN is "unscorable": it is left out
of its group's mean and std and its advantage is forced to 0, so it sends no policy gradient
(its tokens still count in the KL term when ``beta > 0``: a regulariser, not a penalty).

A rollout can end without an answer tool call: the model may write ``<answer>X</answer>`` or a
bare JSON call as plain text (the env's parser accepts those), or its completion may be cut by
``max_completion_length``. :class:`FinishEpisodes` is a reward function, registered
*before* the env's ``get_reward`` (TRL calls reward sources in order), that hands the final
assistant text to the env, marks length-cut rollouts as masked, measures the text for the
diagnostics, and itself returns None (it scores nothing).

Many env instances share one read-only snapshot and TaskSet (``tasks.defaults.shared_snapshot``):
:class:`EnvSpec` resolves paths once per process.
"""

from __future__ import annotations

import functools
import json
import threading
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec as GymEnvSpec

from wikigym.codes import NO_ATTEMPT_CODES, PARSE_FAILURE_CODES
from wikigym.corpora.snapshot import Snapshot
from wikigym.envs.recipe import env_spec, make_env, takes_corpus
from wikigym.envs.registration import WIKI_SEARCH
from wikigym.envs.rewards import EpisodeOutcome, compute_reward
from wikigym.tasks.defaults import EmbeddedPin, resolve_resources
from wikigym.tasks.taskset import TaskSet
from wikigym.tools import format_tool_call, tool_names
from wikigym.tools.methods import trl_method
from wikigym.trainers.episodes import (
    EpisodeRecord,
    EpisodeSink,
    repeat_ngram_share,
)

_FINISHED = "The episode is over (it was answered or its step budget is spent); no tool runs now."


@dataclass
class EnvSpec:
    """Which env to train on: the run's side of the one env recipe (:mod:`wikigym.envs.recipe`).

    :meth:`recipe` is Gymnasium's own ``EnvSpec`` (plain data: paths, numbers, names);
    :meth:`make` makes envs from it, all sharing the snapshot and TaskSet, opened once.

    Attributes:
        env_id: A registered Gymnasium id (``WikiSearch-v1``, ``Calc-v0``, ...).
        corpus: Snapshot directory (WikiSearch); None for the default world.
        tasks: TaskSet file (WikiSearch), or a TaskSet; None for the default TaskSet.
        kwargs: Other keyword arguments of the env (``max_steps``, ``reward``, ``python``,
            ``tools``, ``level``, ...).
    """

    env_id: str = WIKI_SEARCH
    corpus: str | Path | None = None
    tasks: str | Path | TaskSet | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    _resolved: dict[str, Any] | None = field(default=None, init=False, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        """Plain data only: the opened snapshot and TaskSet are reopened where it is unpickled."""
        state = dict(self.__dict__)
        state["_resolved"] = None
        return state

    def recipe(self) -> GymEnvSpec:
        """Gymnasium's spec of the env with the run's data kwargs (corpus and tasks as paths)."""
        data = dict(self.kwargs)
        if self.corpus is not None:
            data["corpus"] = str(self.corpus)
        if self.tasks is not None and not isinstance(self.tasks, TaskSet):
            data["tasks"] = str(self.tasks)
        return env_spec(self.env_id, **data)

    def is_wiki(self) -> bool:
        """Whether the env reads a snapshot and a TaskSet (asked of its class)."""
        return takes_corpus(self.recipe())

    def make_kwargs(self) -> dict[str, Any]:
        """The objects given to every env over the recipe: the snapshot and TaskSet, opened
        once and shared (empty for envs without them)."""
        if self._resolved is None:
            kwargs: dict[str, Any] = {}
            if self.is_wiki():
                pin = EmbeddedPin.from_value(self.recipe().kwargs.get("embedded"))
                snapshot, taskset = resolve_resources(self.corpus, self.tasks, pin=pin)
                kwargs.update(corpus=snapshot, tasks=taskset)
            elif self.corpus is not None or self.tasks is not None:
                raise ValueError(
                    f"{self.env_id} takes no corpus or tasks (got corpus={self.corpus!r}, "
                    f"tasks={self.tasks!r}); drop them or use WikiSearch-v1"
                )
            self._resolved = kwargs
        return self._resolved

    def make(self) -> gym.Env:
        """A new env instance (sharing the snapshot and TaskSet)."""
        return make_env(self.recipe(), disable_env_checker=True, **self.make_kwargs())

    def snapshot(self) -> Snapshot | None:
        """The snapshot of a WikiSearch env (None for envs without one)."""
        corpus = self.make_kwargs().get("corpus")
        return corpus if isinstance(corpus, Snapshot) else None

    def taskset(self) -> TaskSet | None:
        """The TaskSet of a WikiSearch env (None for envs without one)."""
        tasks = self.make_kwargs().get("tasks")
        return tasks if isinstance(tasks, TaskSet) else None


# ---- the adapter ---------------------------------------------------------------------------
def tool_method(name: str) -> Callable[..., str]:
    """The method of tool ``name``, generated from the tool registry (:mod:`wikigym.tools`):
    its signature and docstring are the schema TRL shows the model; its body is one env step.

    Raises:
        ValueError: No tool is called ``name``.
    """
    if name not in tool_names():
        raise ValueError(f"no tool method for {[name]}; known tools: {sorted(tool_names())}")
    return trl_method(name)


class ToolEnv:
    """One pooled env for TRL: ``reset(**row)``, the tools, ``get_reward()``.

    Args:
        env: The wikigym env (a new instance per adapter).
        sink: Where finished episodes are recorded for the diagnostics (optional).
    """

    _tool_names: tuple[str, ...] = ()
    """The tools this class exposes as methods (``tools=`` of the class statement); underscored,
    as every public name of the class is a tool for TRL."""

    def __init_subclass__(cls, tools: Sequence[str] = (), **kwargs: Any) -> None:
        """Give a subclass one generated method per tool (``class X(ToolEnv, tools=[...])``)."""
        super().__init_subclass__(**kwargs)
        unknown = [t for t in tools if t not in tool_names()]
        if unknown:
            raise ValueError(f"no tool method for {unknown}; known tools: {sorted(tool_names())}")
        for name in tools:
            setattr(cls, name, tool_method(name))
        cls._tool_names = tuple(tools)

    def __init__(self, env: gym.Env, sink: EpisodeSink | None = None) -> None:
        self._env = env
        self._sink = sink
        self._begin(None)

    def _begin(self, task_id: str | None) -> None:
        self._task_id = task_id or ""
        self._info: dict[str, Any] = {}
        self._done = False
        self._reward: float | None = None
        self._masked = False
        self._mask_reason: str | None = None
        self._finished_by = "no_answer"
        self._tool_calls = 0
        self._valid_calls = 0
        self._text_chars = 0
        self._repeat = 0.0
        self._recorded = False

    def reset(self, **row: Any) -> str | None:
        """Start the episode of a dataset row (``task_id`` and/or ``seed`` columns).

        The row's prompt already holds the env's first observation (see
        :func:`build_dataset`), so nothing is appended to it: returns None.
        """
        seed = row.get("seed")
        task_id = row.get("task_id")
        options = {"task_id": task_id} if task_id and self._env_has_tasks() else None
        _, info = self._env.reset(seed=None if seed is None else int(seed), options=options)
        self._begin(str(info.get("task_id", task_id or "")))
        self._info = dict(info)
        return None

    def get_reward(self) -> float | None:
        """The env's total reward for the finished rollout; None when the episode is masked.

        An episode that ended without an answer (and was not masked) is scored as a missing
        answer by the env's own reward config.
        """
        if not self._done:
            self._score_no_answer()
        self._record()
        return None if self._masked else self._reward

    # ---- internals (underscored: TRL exposes every public method as a tool) ---------------
    def _env_has_tasks(self) -> bool:
        return isinstance(getattr(self._env.unwrapped, "tasks", None), TaskSet)

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self._done:
            return _FINISHED
        action = format_tool_call(name, {k: v for k, v in arguments.items() if v is not None})
        self._tool_calls += 1
        obs, reward, terminated, truncated, info = self._env.step(action)
        if info.get("tool_error") is None:
            self._valid_calls += 1
        self._after_step(float(reward), terminated, truncated, info, by="tool")
        return obs

    def _after_step(
        self, reward: float, terminated: bool, truncated: bool, info: dict[str, Any], by: str
    ) -> None:
        self._info = dict(info)
        if terminated or truncated:
            self._done = True
            self._reward = reward
            if info.get("mask", False):
                self._masked, self._mask_reason = True, "env_truncated"
                self._finished_by = "budget"
            else:
                self._finished_by = by if info.get("answer") is not None else "no_answer"

    def _act(self, text: str) -> tuple[str, bool]:
        """One model turn given to the env as raw text (the ``rollout_func`` path).

        The env parses the text exactly as in evaluation. Returns the observation and whether
        the turn attempted a tool call (a parsed call, or a malformed or invalid one): a turn
        without any attempt ends the rollout, as in TRL's own tool loop.
        """
        if self._done:
            return _FINISHED, False
        self._text_chars += len(text)
        obs, reward, terminated, truncated, info = self._env.step(text)
        called = list(info.get("tools") or [])
        error = info.get("tool_error")
        attempted = bool(called) or error not in NO_ATTEMPT_CODES
        if attempted:
            self._tool_calls += max(1, len(called))
            if error is None:
                self._valid_calls += len(called)
        self._after_step(
            float(reward), terminated, truncated, info, by="tool" if called else "text"
        )
        return obs, attempted

    def _finish_with_text(self, text: str) -> None:
        """Give the final assistant text to the env when no answer tool call ended the episode."""
        if self._done or not text.strip():
            return
        obs, reward, terminated, truncated, info = self._env.step(text)
        del obs
        self._after_step(float(reward), terminated, truncated, info, by="text")

    def _mask_length_truncated(self) -> None:
        if not self._masked:
            self._masked, self._mask_reason = True, "length_truncated"

    def _score_no_answer(self) -> None:
        env = self._env.unwrapped
        self._done = True
        self._finished_by = "no_answer"
        tasks = getattr(env, "tasks", None)
        config = getattr(env, "reward_config", None)
        if not isinstance(tasks, TaskSet) or config is None:
            self._reward = 0.0
            return
        task = tasks.get(self._task_id)
        outcome = EpisodeOutcome(
            answer=None,
            golds=task.golds,
            steps_used=int(self._info.get("step", 0)),
            max_steps=int(getattr(env, "max_steps", max(1, int(self._info.get("step", 0))))),
            tool_errors=dict(self._info.get("tool_error_counts", {})),
            unanswerable=task.unanswerable,
        )
        breakdown = compute_reward(outcome, config)
        self._info.update(breakdown.to_info())
        self._info["mask"] = False
        self._reward = float(breakdown.total)

    def _record(self) -> None:
        if self._recorded or self._sink is None:
            return
        self._recorded = True
        errors = {str(k): int(v) for k, v in self._info.get("tool_error_counts", {}).items()}
        self._sink.add(
            EpisodeRecord(
                task_id=self._task_id,
                reward=None if self._masked else self._reward,
                masked=self._masked,
                mask_reason=self._mask_reason,
                answered=self._finished_by in ("tool", "text"),
                finished_by=self._finished_by,
                steps=int(self._info.get("step", 0)),
                tool_calls=self._tool_calls,
                valid_tool_calls=self._valid_calls,
                tool_errors=dict(sorted(errors.items())),
                components={
                    str(k): float(v) for k, v in self._info.get("reward_components", {}).items()
                },
                completion_chars=self._text_chars,
                repeat_ngram_share=self._repeat,
                parse_failures=sum(errors.get(c, 0) for c in PARSE_FAILURE_CODES),
            )
        )


def env_tool_names(env: gym.Env) -> tuple[str, ...]:
    """The tools an env instance enables, in the env's order (``answer`` for envs without a
    tool list, such as Calc-v0)."""
    tools = getattr(env.unwrapped, "tools", None)
    if tools is None:
        return ("answer",)
    return tuple(getattr(t, "value", str(t)) for t in tools)


_CLASS_PREFIX = "WikigymEnv_"
_TOOL_ENV_CLASSES: dict[tuple[str, ...], type[ToolEnv]] = {}
_CLASSES_LOCK = threading.Lock()


def _module_level_body(qualname: str, namespace: dict[str, Any]) -> None:
    """A generated class body that names the class as a top-level attribute of this module."""
    namespace.update(__module__=__name__, __qualname__=qualname)


def tool_env_class(tool_names_: Sequence[str]) -> type[ToolEnv]:
    """The module-level :class:`ToolEnv` subclass whose public tool methods are exactly
    ``tool_names_`` (in any order; duplicates count once), made on first use.

    Its name lists the tools in registry order (``WikigymEnv_search_open_find_python_answer``
    for WikiSearch-v1, ``WikigymEnv_answer`` for Calc-v0) and it is a module attribute, so
    pickle finds it by name (a process that unpickles one makes it again, see ``__getattr__``).

    Raises:
        ValueError: An unknown tool name, or no tool at all.
    """
    known = tool_names()
    unknown = sorted({t for t in tool_names_ if t not in known})
    if unknown or not tool_names_:
        raise ValueError(
            f"no tool method for {unknown or 'an empty tool list'}; known tools: {sorted(known)}"
        )
    wanted = set(tool_names_)
    combo = tuple(n for n in known if n in wanted)
    with _CLASSES_LOCK:
        cls = _TOOL_ENV_CLASSES.get(combo)
        if cls is None:
            cls_name = _CLASS_PREFIX + "_".join(combo)
            body = functools.partial(_module_level_body, cls_name)
            cls = types.new_class(cls_name, (ToolEnv,), {"tools": combo}, body)
            _TOOL_ENV_CLASSES[combo] = cls
            globals()[cls_name] = cls
        return cls


def _tools_in_class_name(suffix: str, known: Sequence[str]) -> tuple[str, ...] | None:
    """The tools a generated class name lists (registry order), or None if it lists none."""
    if not suffix:
        return ()
    for i, name in enumerate(known):
        if suffix == name or suffix.startswith(name + "_"):
            rest = _tools_in_class_name(suffix[len(name) + 1 :], known[i + 1 :])
            if rest is not None:
                return (name, *rest)
    return None


def __getattr__(name: str) -> Any:
    """A generated tool-set class asked for by name (unpickling in a fresh process)."""
    if name.startswith(_CLASS_PREFIX):
        combo = _tools_in_class_name(name[len(_CLASS_PREFIX) :], tool_names())
        if combo:
            return tool_env_class(combo)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class EnvironmentFactory:
    """The ``environment_factory`` for ``GRPOTrainer``: each call makes a new env (sharing the
    snapshot and TaskSet) wrapped in the :class:`ToolEnv` class of its tools.

    Picklable (TRL's ``AsyncGRPOTrainer`` sends it to a spawned process): it holds the
    :class:`EnvSpec` (plain data; the snapshot and TaskSet are reopened, and the snapshot's id
    verified, on the other side), the sink and a module-level class.

    Args:
        spec: The env to make.
        sink: Where finished episodes are recorded (optional; a pickled copy starts empty and
            records in its own process).
    """

    def __init__(self, spec: EnvSpec, sink: EpisodeSink | None = None) -> None:
        self.spec = spec
        self.sink = sink
        probe = spec.make()
        self.env_class = tool_env_class(env_tool_names(probe))
        probe.close()

    def __call__(self) -> ToolEnv:
        return self.env_class(self.spec.make(), self.sink)


def make_environment_factory(spec: EnvSpec, sink: EpisodeSink | None = None) -> EnvironmentFactory:
    """:class:`EnvironmentFactory` of ``spec`` (kept for callers of the function form)."""
    return EnvironmentFactory(spec, sink)


# ---- dataset ----------------------------------------------------------------------------------
def dataset_rows(
    spec: EnvSpec, *, num_rows: int | None = None, seed: int = 0
) -> list[dict[str, Any]]:
    """One row per task: ``prompt`` (one user message: the env's first observation),
    ``task_id``, ``seed``.

    WikiSearch: every task of the TaskSet, in TaskSet order (the first ``num_rows`` when
    given). Envs without a TaskSet (Calc-v0): ``num_rows`` (default 256) episodes drawn with
    seeds ``seed``, ``seed + 1``, ...
    """
    env = spec.make()
    rows: list[dict[str, Any]] = []
    taskset = spec.taskset()
    if taskset is not None:
        chosen = list(taskset)[: num_rows or len(taskset)]
        for i, task in enumerate(chosen):
            obs, info = env.reset(seed=seed + i, options={"task_id": task.task_id})
            rows.append(_row(obs, str(info["task_id"]), seed + i))
    else:
        for i in range(num_rows or 256):
            obs, info = env.reset(seed=seed + i)
            rows.append(_row(obs, str(info.get("task_id", i)), seed + i))
    env.close()
    return rows


def _row(obs: str, task_id: str, seed: int) -> dict[str, Any]:
    return {"prompt": [{"role": "user", "content": obs}], "task_id": task_id, "seed": seed}


def build_dataset(spec: EnvSpec, *, num_rows: int | None = None, seed: int = 0):  # -> Dataset
    """:func:`dataset_rows` as a ``datasets.Dataset`` (what ``GRPOTrainer`` takes)."""
    from datasets import Dataset

    return Dataset.from_list(dataset_rows(spec, num_rows=num_rows, seed=seed))


# ---- the pre-reward hook -------------------------------------------------------------------
class FinishEpisodes:
    """A TRL reward function that finishes each rollout's episode before ``get_reward`` reads it.

    TRL's tool loop ends a rollout at the first assistant turn without a tool call and never
    shows that turn to the environment. For every rollout this hook gives the final assistant
    text to the env when no answer call ended the episode (so ``<answer>...</answer>`` and bare
    JSON calls count, as in evaluation); masks a completion whose last token is not a stop
    token (cut by ``max_completion_length``) when ``mask_length_truncated``; and measures the
    text the model wrote for the diagnostics. Returns None for every rollout: it contributes
    nothing to the reward. Register it *before* the env's ``get_reward`` (TRL calls reward
    sources in order and adds the env's own last).

    The stop ids can be given here or learnt from the trainer by
    :class:`~wikigym.trainers.trl_inputs.TrainerStopTokens` (a callback); without them no
    completion is taken for cut. Picklable (a plain object of ints and flags).

    Args:
        stop_token_ids: EOS and pad ids (a completion ending otherwise was cut); None: unknown
            until :meth:`configure` is called.
        mask_length_truncated: Mask length-cut rollouts (conservative negative filtering).
    """

    def __init__(
        self, stop_token_ids: Sequence[int] | None = None, *, mask_length_truncated: bool = True
    ) -> None:
        self.__name__ = "finish_episodes"  # TRL's name for the reward column
        self.masked_last_call = 0  # masked rollouts in the batch last scored
        self.stop_token_ids: frozenset[int] | None = None
        self.mask_length_truncated = mask_length_truncated
        if stop_token_ids is not None:
            self.configure(stop_token_ids, mask_length_truncated=mask_length_truncated)

    def configure(self, stop_token_ids: Sequence[int], *, mask_length_truncated: bool) -> None:
        """Set the stop ids and the masking choice (the trainer's, read by the callback)."""
        self.stop_token_ids = frozenset(int(t) for t in stop_token_ids)
        self.mask_length_truncated = mask_length_truncated

    def __call__(
        self,
        completions: list[Any],
        environments: list[Any] | None = None,
        completion_ids: list[list[int]] | None = None,
        **_: Any,
    ) -> list[float | None]:
        stops = self.stop_token_ids
        for i, env in enumerate(environments or []):
            if not isinstance(env, ToolEnv):
                continue
            messages = completions[i] if isinstance(completions[i], list) else None
            written = _assistant_text(completions[i])
            env._text_chars = len(written)
            env._repeat = repeat_ngram_share(written)
            ids = completion_ids[i] if completion_ids else None
            cut = bool(stops is not None and ids and ids[-1] not in stops)
            if messages and not env._done:
                last = messages[-1]
                if last.get("role") == "assistant" and not last.get("tool_calls"):
                    env._finish_with_text(str(last.get("content") or ""))
            if cut and self.mask_length_truncated:
                env._mask_length_truncated()
        self.masked_last_call = sum(
            1 for env in environments or [] if isinstance(env, ToolEnv) and env._masked
        )
        return [None] * len(completions)


def make_finish_episodes(
    stop_token_ids: Sequence[int], *, mask_length_truncated: bool = True
) -> FinishEpisodes:
    """:class:`FinishEpisodes` with known stop ids (kept for callers of the function form)."""
    return FinishEpisodes(stop_token_ids, mask_length_truncated=mask_length_truncated)


def _assistant_text(completion: Any) -> str:
    if isinstance(completion, str):
        return completion
    parts: list[str] = []
    for message in completion or []:
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        for call in message.get("tool_calls") or []:
            fn = call.get("function", {})
            parts.append(f"{fn.get('name', '')} {json.dumps(fn.get('arguments', {}))}")
    return "\n".join(parts)
