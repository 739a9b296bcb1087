"""verifiers (v1 API): wikigym as an environment module that ``vf-eval`` loads.

``vf-eval wikigym.integrations.verifiers --env.taskset.env-id WikiSearch-v1 ...`` loads this
module as the taskset package: :class:`WikigymTaskset` yields one task per wikigym task
(Calc-v0: one per seed), :class:`WikigymEnv` plays each episode with the env itself as the
run's user (the model's reply is the action, the env's observation the next user turn,
as verifiers' TextArena env does), and the env's reward is the rollout's reward ``wikigym`` (its
components, the mask and how the episode ended in the trace's ``info``). An episode the env
masks (step budget spent without an answer) stops with verifiers' ``max_turns`` condition, so
``trace.is_truncated`` (what verifiers' trainers read to leave a rollout out) is true. The
tools are the env's own: the first observation describes them from the env's tool registry
and the env parses the calls from the reply, so a rollout needs no tool server. The harness
is a plain chat loop run in a local subprocess. Install from a wikigym checkout with
``pip install -e '.[verifiers]'``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

from pydantic import Field

from wikigym.integrations.common import DEFAULT_ENV_ID, episode_rows, make_env, reset_row

try:
    import verifiers.v1 as vf
    from verifiers.v1.harnesses.null.harness import NullHarness, NullHarnessConfig
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError(
        f"wikigym.integrations.verifiers needs verifiers ({exc}); from a wikigym checkout: "
        "pip install -e '.[verifiers]'"
    ) from exc


class WikigymTasksetConfig(vf.TasksetConfig):
    """``--env.taskset.*``: which wikigym env and episodes."""

    env_id: str = DEFAULT_ENV_ID
    """``WikiSearch-v1`` or ``Calc-v0``."""
    corpus: str | None = None
    """Snapshot directory (None: the embedded default world)."""
    tasks: str | None = None
    """TaskSet file (None: the corpus's default tasks)."""
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Other arguments of the env (``max_steps``, ``python``, ``reward``, ...)."""
    num_tasks: int | None = None
    """The first N tasks (Calc-v0: N seeded problems, default 100)."""
    seed: int = 0
    """Task i resets with ``seed + i``."""

    def env_config(self) -> dict[str, Any]:
        """The keyword arguments of the wikigym env."""
        return {"corpus": self.corpus, "tasks": self.tasks, **self.env_kwargs}


class WikigymData(vf.TaskData):
    info: dict[str, Any]
    """How the env re-creates the episode: env id, env arguments, task id, seed."""


class WikigymTask(vf.Task[WikigymData, vf.State, vf.TaskConfig]):
    pass


class WikigymTaskset(vf.Taskset[WikigymTask, WikigymTasksetConfig]):
    """One verifiers task per wikigym episode row (prompt = the env's first observation)."""

    def load(self) -> Iterator[WikigymTask]:
        config = self.config.env_config()
        env = make_env(self.config.env_id, **config)
        rows = episode_rows(env, n=self.config.num_tasks, seed=self.config.seed)
        env.close()
        for row in rows:
            name = row.task_id or f"{self.config.env_id}#{row.seed}"
            yield WikigymTask(
                WikigymData(
                    id=name,
                    name=name,
                    prompt=row.prompt,
                    info={
                        "env_id": self.config.env_id,
                        "env_config": config,
                        "task_id": row.task_id,
                        "seed": row.seed,
                        "golds": list(row.golds),
                    },
                ),
                self.config.task,
            )


class WikigymHarnessConfig(NullHarnessConfig):
    pass


class WikigymHarness(NullHarness):
    """A plain chat loop (verifiers' null harness): no bash, no tools of its own."""


class WikigymEnvConfig(vf.EnvConfig):
    # Local by default: the episode needs the snapshot on this machine, not a remote box.
    player: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class WikigymEnv(vf.Env[WikigymEnvConfig]):
    """Plays one wikigym episode per rollout; records the env's reward and components."""

    async def run(self, task: WikigymTask, agents: Any) -> None:
        info = task.data.info
        env = make_env(info["env_id"], **info["env_config"])
        reset_row(env, info["task_id"], info["seed"])
        reward, steps, end = 0.0, 0, "model_stopped"
        last: dict[str, Any] = {}
        async with agents.player.interaction(task) as interaction:
            segment = await interaction.turn()
            while not segment.terminated:
                # Off the event loop: verifiers plays many rollouts on one loop.
                step = await asyncio.to_thread(env.step, segment.last_reply)
                obs, raw_reward, terminated, truncated, last = step
                reward = float(raw_reward)
                steps += 1
                if terminated or truncated:
                    end = "answered" if terminated else "budget_spent"
                    if truncated:
                        # The env's step budget is a turn cap: verifiers' own truncation,
                        # which its trainers read (trace.is_truncated) to leave it out.
                        interaction.trace.stop("max_turns")
                    break
                segment = await interaction.turn(obs)
        env.close()
        trace = interaction.trace
        trace.record_reward("wikigym", float(reward), 1.0)
        trace.info["wikigym_end"] = end
        trace.info["wikigym_steps"] = steps
        trace.info["wikigym_task_id"] = last.get("task_id", info["task_id"])
        trace.info["reward_components"] = dict(last.get("reward_components") or {})
        # No answer: the env's mask (stop_condition "max_turns" above), or cut short by
        # verifiers' own caps (which set their stop condition themselves).
        trace.info["mask"] = end != "answered"


__all__ = [
    "WikigymData",
    "WikigymEnv",
    "WikigymEnvConfig",
    "WikigymHarness",
    "WikigymHarnessConfig",
    "WikigymTask",
    "WikigymTaskset",
    "WikigymTasksetConfig",
]
