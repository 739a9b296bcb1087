"""Multi-turn wikigym episodes for ``GRPOTrainer(rollout_func=...)``: generation driven here.

TRL 1.16's contract (``trl/trainer/grpo_trainer.py``, ``_generate``): ``rollout_func(prompts,
trainer)`` gets this process's prompts (the dataset's ``prompt`` messages, already repeated
``num_generations`` times by TRL's sampler; one rollout per entry) and returns a dict with
``prompt_ids``, ``completion_ids`` and ``logprobs`` (one list per rollout; ``logprobs`` may be
None, which TRL accepts when vLLM's importance-sampling correction is off). ``env_mask`` (1 for
a token the model wrote, 0 for a token it did not) is popped by TRL and used as its tool mask:
those tokens stay in the forward pass but leave the loss. Every other key is copied, per
rollout, into the inputs the reward functions receive as keyword arguments.

:func:`make_rollout_func` runs one wikigym episode per prompt:

1. the prompt is rendered with the tokenizer's chat template and the env's tools (the OpenAI
   schema, as in the SFT export), with the generation prompt;
2. all unfinished episodes generate one assistant turn together (the trainer's own generation:
   transformers ``generate``, or vLLM when the trainer uses it; or a user ``generate``);
3. each turn's text goes to the env *as raw text* (its parser, validation, rewards and error
   codes, exactly as in evaluation). A turn that attempts a tool call gets the env's
   observation back as a ``tool`` message (its tokens are the chat template's, with
   ``env_mask`` 0); a turn without any attempt, or the env ending the episode, ends the rollout;
4. a completion that outgrows ``max_completion_length`` (a turn cut mid-way, or a tool result
   that does not fit) is masked like a length-cut completion when the trainer masks those. A
   turn that ends at the generator's per-turn cap (``max_new_tokens`` below the budget) is not
   cut: the env judges it as written, as evaluation does, and scores a rambling turn.

Extra fields returned (one value per rollout): ``env_reward`` (the env's total, None for a
masked episode: :func:`rollout_reward` hands it to TRL, which then leaves the rollout out of the
group statistics with advantage 0), ``env_masked`` and ``env_tool_calls``. Finished episodes go
to the :class:`~wikigym.trainers.episodes.EpisodeSink` for the diagnostics, as on the
``environment_factory`` path.

Use it when you drive generation yourself (your own sampler, a server, a scripted policy);
``wikigym train grpo --rollout rollout_func`` uses it with the trainer's generation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from wikigym.errors import WikigymError
from wikigym.trainers.adapter import EnvSpec, ToolEnv, dataset_rows, make_environment_factory
from wikigym.trainers.episodes import EpisodeSink, repeat_ngram_share

Turn = tuple[list[int], list[float] | None]
"""What a generate function returns per context: new token ids (ending with a stop token
unless cut) and their sampling log-probs (or None)."""

GenerateFn = Callable[[list[list[int]]], list[Turn]]
"""Generates one assistant turn for each token context of a batch."""

DEFAULT_MAX_TURNS = 64


@dataclass
class _Episode:
    env: ToolEnv
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    logprobs: list[float] | None = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    active: bool = True
    cut: bool = False  # ran out of completion budget before the episode ended

    def context(self) -> list[int]:
        return self.prompt_ids + self.completion_ids

    def add(self, ids: Sequence[int], mask: int, logprobs: Sequence[float] | None) -> None:
        self.completion_ids.extend(int(t) for t in ids)
        self.env_mask.extend([mask] * len(ids))
        if self.logprobs is not None:
            if mask == 0:
                self.logprobs.extend([0.0] * len(ids))
            elif logprobs is None:
                self.logprobs = None
            else:
                self.logprobs.extend(float(x) for x in logprobs)


def trainer_generate(trainer: Any) -> GenerateFn:
    """The trainer's own single-turn generation (TRL 1.16 ``_generate_single_turn``): vLLM when
    the trainer uses it (with its log-probs), else transformers ``generate`` (log-probs None)."""

    def generate(contexts: list[list[int]]) -> list[Turn]:
        ids, logprobs = trainer._generate_single_turn(contexts, None, {}, num_generations=1)
        if logprobs is None:
            return [(list(i), None) for i in ids]
        return [(list(i), list(lp)) for i, lp in zip(ids, logprobs, strict=True)]

    return generate


def training_chat_template(tokenizer: Any) -> str | None:
    """The template multi-turn rollouts render with: None (the tokenizer's own) when it is
    prefix-preserving, else TRL's training-safe version of it (as TRL's tool loop does; Qwen3's
    own template drops the empty think block of earlier turns, so a turn's tokens would change
    once a tool result follows)."""
    from trl.chat_template_utils import (
        get_training_chat_template,
        is_chat_template_prefix_preserving,
    )

    if is_chat_template_prefix_preserving(tokenizer):
        return None
    return get_training_chat_template(tokenizer)


def tool_suffix_ids(
    tokenizer: Any,
    name: str,
    content: str,
    chat_template_kwargs: dict[str, Any] | None = None,
    chat_template: str | None = None,
) -> list[int]:
    """The tokens the chat template puts after an assistant turn's end for one tool result,
    up to and including the next assistant generation prompt (TRL's method: render a dummy
    chat with and without the tool message and take the difference)."""
    kwargs = dict(chat_template_kwargs or {})
    if chat_template is not None:
        kwargs["chat_template"] = chat_template
    call = {"type": "function", "function": {"name": name, "arguments": {}}}
    head = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
    ]
    prefix = tokenizer.apply_chat_template(
        head, add_generation_prompt=False, tokenize=True, return_dict=False, **kwargs
    )
    full = tokenizer.apply_chat_template(
        [*head, {"role": "tool", "name": name, "content": content}],
        add_generation_prompt=True,
        tokenize=True,
        return_dict=False,
        **kwargs,
    )
    ends = [i for i, t in enumerate(prefix) if t == tokenizer.eos_token_id]
    if ends:  # the assistant turn ends at EOS; what the template adds after it is the suffix's
        prefix = prefix[: ends[-1] + 1]
    if list(full[: len(prefix)]) != list(prefix):
        raise WikigymError(
            "the chat template does not render a tool message as a suffix of the assistant "
            "turn; use a template with tool support (e.g. TRL's Qwen3 template)"
        )
    return list(full[len(prefix) :])


def run_rollouts(
    prompts: Sequence[list[dict[str, Any]]],
    envs: Sequence[ToolEnv],
    rows: Sequence[dict[str, Any]],
    *,
    tokenizer: Any,
    generate: GenerateFn,
    max_completion_length: int,
    stop_token_ids: Sequence[int],
    tools: list[dict[str, Any]] | None = None,
    mask_length_truncated: bool = True,
    max_turns: int = DEFAULT_MAX_TURNS,
    chat_template_kwargs: dict[str, Any] | None = None,
) -> dict[str, list[Any]]:
    """Run one episode per prompt (``envs[i]`` reset with ``rows[i]``); returns TRL's
    ``rollout_func`` dict (see the module docstring). Renders with
    :func:`training_chat_template`."""
    kwargs = dict(chat_template_kwargs or {})
    template = training_chat_template(tokenizer)
    if template is not None:
        kwargs["chat_template"] = template
    stops = frozenset(int(t) for t in stop_token_ids)
    episodes: list[_Episode] = []
    for prompt, env, row in zip(prompts, envs, rows, strict=True):
        env.reset(**row)
        ids = tokenizer.apply_chat_template(
            prompt,
            tools=tools or None,
            add_generation_prompt=True,
            tokenize=True,
            return_dict=False,
            **kwargs,
        )
        episodes.append(_Episode(env=env, prompt_ids=[int(t) for t in ids]))

    for _ in range(max_turns):
        active = [e for e in episodes if e.active]
        if not active:
            break
        turns = generate([e.context() for e in active])
        if len(turns) != len(active):
            raise WikigymError(
                f"generate returned {len(turns)} turns for {len(active)} contexts; return one per context"
            )
        for ep, (new_ids, logprobs) in zip(active, turns, strict=True):
            _advance(ep, list(new_ids), logprobs, tokenizer, max_completion_length, stops, kwargs)
    for ep in episodes:
        if ep.active or ep.cut:  # out of budget, or of turns: the policy never stopped
            ep.active = False
            _cut(ep, mask_length_truncated)

    out: dict[str, list[Any]] = {
        "prompt_ids": [],
        "completion_ids": [],
        "logprobs": [],
        "env_mask": [],
        "env_reward": [],
        "env_masked": [],
        "env_tool_calls": [],
    }
    all_logprobs = all(e.logprobs is not None for e in episodes)
    for ep in episodes:
        if not ep.completion_ids:  # TRL reads the last token; one untrained stop token
            ep.add([next(iter(sorted(stops)))], 0, None)
        ep.env._repeat = repeat_ngram_share("\n".join(ep.texts))
        reward = ep.env.get_reward()
        out["prompt_ids"].append(ep.prompt_ids)
        out["completion_ids"].append(ep.completion_ids)
        out["logprobs"].append(ep.logprobs)
        out["env_mask"].append(ep.env_mask)
        out["env_reward"].append(reward)
        out["env_masked"].append(reward is None)
        out["env_tool_calls"].append(ep.env._tool_calls)
    if not all_logprobs:
        out["logprobs"] = None  # type: ignore[assignment]
    return out


def _advance(
    ep: _Episode,
    new_ids: list[int],
    logprobs: list[float] | None,
    tokenizer: Any,
    budget: int,
    stops: frozenset[int],
    kwargs: dict[str, Any],
) -> None:
    room = budget - len(ep.completion_ids)
    if len(new_ids) > room:
        new_ids = new_ids[: max(room, 0)]
        logprobs = None if logprobs is None else logprobs[: len(new_ids)]
    ep.add(new_ids, 1, logprobs)
    text = tokenizer.decode(new_ids, skip_special_tokens=True)
    ep.texts.append(text)
    if not new_ids or (new_ids[-1] not in stops and len(new_ids) >= room):
        ep.active, ep.cut = False, True  # cut by the completion budget mid-turn: masked
        return
    if new_ids[-1] not in stops:
        # The generator ended the turn with room left in the budget: it hit its per-turn cap
        # (``max_new_tokens``). The env judges the turn as written, as in evaluation, and the
        # template's end of turn follows it (outside the loss). Were such a turn masked like a
        # budget cut, a policy that rambles would leave the loss instead of losing reward.
        eos = tokenizer.eos_token_id
        ep.add([int(eos) if eos in stops else min(stops)], 0, None)
    obs, attempted = ep.env._act(text)
    if not attempted or ep.env._done:
        ep.active = False
        return
    name = (ep.env._info.get("tools") or ["tool"])[0]
    suffix = tool_suffix_ids(tokenizer, str(name), obs, kwargs)
    if len(ep.completion_ids) + len(suffix) >= budget:  # the result (and a reply) cannot fit
        ep.active, ep.cut = False, True
        return
    ep.add(suffix, 0, None)


def _cut(ep: _Episode, mask_length_truncated: bool) -> None:
    """A rollout that ran out of completion budget (or turns) before the episode ended."""
    if ep.env._done:
        return
    if mask_length_truncated:
        ep.env._mask_length_truncated()


def rollout_reward(
    completions: list[Any], env_reward: list[float | None] | None = None, **_: Any
) -> list[float | None]:
    """The reward function of the ``rollout_func`` path: the env's total per rollout, None
    for a masked episode (TRL gives it advantage 0 and leaves it out of the group mean/std)."""
    if env_reward is None:
        raise WikigymError(
            "rollout_reward needs the env_reward field of make_rollout_func's rollouts; pass "
            "rollout_func=make_rollout_func(...) to GRPOTrainer"
        )
    return list(env_reward)


def make_rollout_func(
    spec: EnvSpec,
    *,
    sink: EpisodeSink | None = None,
    rows: Sequence[dict[str, Any]] | None = None,
    generate: GenerateFn | None = None,
    max_completion_length: int | None = None,
    mask_length_truncated: bool | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    tools_in_prompt: bool = True,
) -> Callable[[list[Any], Any], dict[str, list[Any]]]:
    """A ``rollout_func`` for ``GRPOTrainer`` that plays wikigym episodes (module docstring).

    Args:
        spec: The env.
        sink: Where finished episodes are recorded for the diagnostics.
        rows: The dataset rows (``prompt``, ``task_id``, ``seed``) the trainer samples from;
            a prompt is matched to its row by its last message. None: all rows of
            :func:`~wikigym.trainers.adapter.dataset_rows` (seed 0).
        generate: Generates one turn per token context; None: the trainer's own generation
            (:func:`trainer_generate`).
        max_completion_length: Token budget of a completion (model and tool tokens); None: the
            trainer's ``max_completion_length``.
        mask_length_truncated: Mask rollouts that ran out of budget; None: the trainer's
            ``mask_truncated_completions``.
        max_turns: Safety bound on assistant turns (the env's step budget ends episodes first).
        tools_in_prompt: Render the env's tool schema into the prompt (as the SFT export does).

    Returns:
        ``rollout_func(prompts, trainer) -> dict``; pair it with :func:`rollout_reward`.
    """
    from wikigym.tools import openai_tools_schema

    factory = make_environment_factory(spec, sink)
    pool: list[ToolEnv] = []
    lookup: dict[str, dict[str, Any]] = {}
    schema: list[dict[str, Any]] | None = None

    def row_for(prompt: Any) -> dict[str, Any]:
        if not lookup:
            for row in rows if rows is not None else dataset_rows(spec):
                lookup.setdefault(_prompt_key(row["prompt"]), row)
        key = _prompt_key(prompt)
        if key not in lookup:
            raise WikigymError(
                f"a prompt of the batch is in no dataset row ({len(lookup)} rows known): pass the "
                "rows the trainer's dataset was built from as make_rollout_func(rows=...)"
            )
        found = lookup[key]
        return {k: v for k, v in found.items() if k != "prompt"}

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        nonlocal schema
        while len(pool) < len(prompts):
            pool.append(factory())
        if schema is None:
            env = pool[0]._env.unwrapped
            names = getattr(env, "tools", None) or ("answer",)
            schema = openai_tools_schema(names) if tools_in_prompt else []
        tokenizer = trainer.processing_class
        stops = {int(t) for t in getattr(trainer, "eos_token_ids", None) or []}
        stops |= {int(t) for t in (tokenizer.eos_token_id, tokenizer.pad_token_id) if t is not None}
        return run_rollouts(
            prompts,
            pool[: len(prompts)],
            [row_for(p) for p in prompts],
            tokenizer=tokenizer,
            generate=generate or trainer_generate(trainer),
            max_completion_length=int(max_completion_length or trainer.max_completion_length),
            stop_token_ids=sorted(stops),
            tools=schema,
            mask_length_truncated=bool(
                trainer.mask_truncated_completions
                if mask_length_truncated is None
                else mask_length_truncated
            ),
            max_turns=max_turns,
            chat_template_kwargs=dict(getattr(trainer, "chat_template_kwargs", None) or {}),
        )

    return rollout_func


def _prompt_key(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    return json.dumps(prompt[-1].get("content"), ensure_ascii=False, sort_keys=True)
