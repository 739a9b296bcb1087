"""verl (0.9): an agent loop named ``"wikigym"`` that plays one wikigym episode per sample.

verl builds an agent loop per sample and its tool classes per call, so neither can keep an
episode between turns; this loop holds the env for the whole sample instead. Each turn the
model's tokens are decoded and given to ``env.step``; the observation comes back as the next
user message, rendered and appended alone (as verl's ``ToolAgentLoop`` appends its tool
messages), so the context holds each turn once. ``response_mask`` is 1 on the model's tokens
and 0 on the observations' (and on the chat template's tokens around them), and all 0 for an
episode that ended without an answer (the env's mask: step budget spent; or cut by
``response_length``): verl leaves a fully masked sequence out of the policy loss.
``reward_score`` is the env's reward, so verl needs no reward function. The env is named in
the agent-loop config (see ``docs/integrations.md``); each dataset row's ``extra_info``
carries ``task_id``, ``seed`` and the snapshot and TaskSet ids (a row of other data is
refused). Install from a wikigym checkout with ``pip install -e '.[verl]'`` in its own
environment (verl pins transformers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import uuid4

from wikigym.integrations.common import (
    DEFAULT_ENV_ID,
    EpisodeRow,
    check_row,
    dataset_rows,
    make_env,
    plain,
    reset_row,
    write_rows,
)

try:
    from verl.experimental.agent_loop.agent_loop import (
        AgentLoopBase,
        AgentLoopMetrics,
        AgentLoopOutput,
        register,
    )
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError(
        f"wikigym.integrations.verl needs verl ({exc}); from a wikigym checkout, in its own "
        "venv: pip install -e '.[verl]'"
    ) from exc

AGENT_NAME = "wikigym"


@register(AGENT_NAME)
class WikigymAgentLoop(AgentLoopBase):
    """verl's agent loop over a wikigym env.

    Args:
        env_id: ``WikiSearch-v1`` or ``Calc-v0``.
        corpus: Snapshot directory (None: the embedded default world).
        tasks: TaskSet file (None: the corpus's default tasks).
        env_kwargs: Other arguments of the env (``max_steps``, ``python``, ...).
        *args, **kwargs: What verl passes every agent loop (config, server, tokenizer, ...).
    """

    def __init__(
        self,
        *args: Any,
        env_id: str = DEFAULT_ENV_ID,
        corpus: str | None = None,
        tasks: str | None = None,
        env_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.env_id = env_id
        self.env_config = {"corpus": corpus, "tasks": tasks, **plain(env_kwargs or {})}
        self.response_length = int(self.rollout_config.response_length)

    async def run(self, sampling_params: dict[str, Any], **row: Any) -> AgentLoopOutput:
        """Play the episode of ``row`` (``extra_info.task_id``/``seed``) to its end, the step
        budget, or ``rollout.response_length`` tokens."""
        extra = plain(row.get("extra_info") or {})
        # The env runs off the event loop: verl plays many samples on one loop.
        env = await self.loop.run_in_executor(
            None, lambda: make_env(self.env_id, **self.env_config)
        )
        try:
            check_row(env, extra)
            obs, _ = await self.loop.run_in_executor(
                None, reset_row, env, extra.get("task_id"), extra.get("seed")
            )
            return await self._play(env, obs, extra, sampling_params, row.get("raw_prompt"))
        finally:
            env.close()

    async def _play(
        self,
        env: Any,
        obs: str,
        extra: dict[str, Any],
        sampling_params: dict[str, Any],
        raw_prompt: Any,
    ) -> AgentLoopOutput:
        messages = plain(list(raw_prompt)) if raw_prompt is not None and len(raw_prompt) else []
        messages = messages or [{"role": "user", "content": obs}]
        ids: list[int] = list(await self.ct_build_initial_tokens(messages))
        mask: list[int] = []
        logprobs: list[float] = []
        reward, turns, info, end = 0.0, 0, {}, "response_length"
        request_id = uuid4().hex
        metrics: dict[str, Any] = {"generate_sequences": 0.0, "tool_calls": 0.0}
        max_turns = int(getattr(env.unwrapped, "max_steps", 1))
        while len(mask) < self.response_length and turns < max_turns:
            out = await self.server_manager.generate(
                request_id=request_id, prompt_ids=ids, sampling_params=sampling_params
            )
            turns += 1
            merged, mask, merged_logprobs = await self.ct_merge_assistant_token(
                ids,
                out.token_ids,
                mask,
                logprobs if (logprobs or out.log_probs) else None,
                assistant_logprobs=out.log_probs or None,
            )
            logprobs = merged_logprobs or []
            ids = list(merged.token_ids)
            text = self.tokenizer.decode(out.token_ids, skip_special_tokens=True)
            obs, reward, terminated, truncated, info = await self.loop.run_in_executor(
                None, env.step, text
            )
            # As verl's ToolAgentLoop: the model's message joins the chat as its tokens
            # already did; only the new observation is rendered and appended (each turn once).
            messages.append({"role": "assistant", "content": text})
            if terminated or truncated:
                end = "answered" if terminated else "budget_spent"
                break
            before = list(messages)
            messages.append({"role": "user", "content": obs})
            merged, mask, merged_logprobs = await self.ct_merge_context_msg(
                before, messages, ids, mask, logprobs or None
            )
            logprobs = merged_logprobs or []
            ids = list(merged.token_ids)
        masked = end != "answered"  # the env's mask, or cut by turns or response length
        n_prompt = len(ids) - len(mask)  # as verl's own loops split prompt and response
        response_mask = mask[: self.response_length]
        if masked:
            # verl's own mechanism: a sequence whose response_mask is all zero is excluded
            # from the policy loss (agg_loss) and gets zero advantage.
            response_mask = [0] * len(response_mask)
        return AgentLoopOutput(
            prompt_ids=ids[:n_prompt],
            response_ids=ids[n_prompt:][: self.response_length],
            response_mask=response_mask,
            response_logprobs=logprobs[: self.response_length] if logprobs else None,
            reward_score=float(reward),
            num_turns=2 * turns + 1,
            metrics=AgentLoopMetrics(**metrics),
            extra_fields={
                "turn_scores": [],
                "tool_rewards": [],
                "wikigym_task_id": info.get("task_id", extra.get("task_id")),
                "wikigym_end": end,
                "wikigym_mask": masked,
                "reward_components": dict(info.get("reward_components") or {}),
            },
        )


def _verl_columns(row: EpisodeRow, info: dict[str, Any]) -> dict[str, Any]:
    return {
        "agent_name": AGENT_NAME,
        "ability": "search" if row.task_id is not None else "math",
        # Search-R1's layout, which verl's Search-R1 recipes and reward functions read.
        "reward_model": {"style": "rule", "ground_truth": {"target": list(row.golds)}},
        "extra_info": info,
    }


def verl_rows(
    env_id: str = DEFAULT_ENV_ID, *, n: int | None = None, seed: int = 0, **config: Any
) -> list[dict[str, Any]]:
    """The rows of a verl dataset (``RLHFDataset``): ``prompt`` (the env's first
    observation), ``agent_name`` ``"wikigym"``, ``data_source``, ``ability``,
    ``reward_model`` (``{"style": "rule", "ground_truth": {"target": golds}}``, the answer
    format of verl's Search-R1 recipes; the loop's reward is the env's) and ``extra_info``
    (``index``, ``task_id``, ``seed``, the snapshot and TaskSet ids). ``config`` must be the
    agent loop's env arguments."""
    return dataset_rows(env_id, _verl_columns, n=n, seed=seed, **config)


def verl_dataset(
    path: str | Path,
    env_id: str = DEFAULT_ENV_ID,
    *,
    n: int | None = None,
    seed: int = 0,
    **config: Any,
) -> Path:
    """Write :func:`verl_rows` as Parquet at ``path`` (atomically) for ``data.train_files``."""
    return write_rows(path, verl_rows(env_id, n=n, seed=seed, **config))


__all__ = ["AGENT_NAME", "WikigymAgentLoop", "verl_dataset", "verl_rows"]
