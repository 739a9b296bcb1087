"""GRPO through ``rollout_func`` on WikiSearch-v1 with real tool execution, on the CPU.

A scripted policy (the tiny model's random weights emit no tool calls) replaces the trainer's
generation: per group of 4 rollouts of a task it plays the oracle twice, writes text without a
tool call once, and loops on a search until the env's step budget masks the episode. The tools
run in the env over the default world; TRL computes the loss on the tiny model's log-probs of
those tokens, so rewards, masking, diagnostics and the update are all real.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

from wikigym.trainers.adapter import EnvSpec, dataset_rows, make_environment_factory
from wikigym.trainers.episodes import EpisodeSink
from wikigym.trainers.grpo import TrainConfig, build_trainer
from wikigym.trainers.rollout import run_rollouts

LOOP_QUERY = "wikigym scripted loop"
MODES = ("oracle", "garbage", "loop", "oracle")
MAX_ENV_STEPS = 4  # the oracle of the chosen tasks takes 3 calls; the loop is cut at 4
ROWS = 40  # dataset rows (the first tasks of the default TaskSet)


class ScriptedPolicy:
    """A :data:`~wikigym.trainers.rollout.GenerateFn` that reads the task from the context."""

    def __init__(self, tokenizer: Any, taskset: Any) -> None:
        self.tok = tokenizer
        self.by_question = {t.question: t for t in taskset}
        self.stop = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self.starts = 0
        self.turns = 0

    def __call__(self, contexts: list[list[int]]) -> list[tuple[list[int], None]]:
        out = []
        for ctx in contexts:
            text = self.tok.decode(ctx, skip_special_tokens=False)
            first_user = text.split("<|im_start|>user\n", 1)[1].split("<|im_end|>", 1)[0]
            task = self.by_question[first_user.rsplit("Question: ", 1)[1].strip()]
            turn = text.count("<tool_response>")
            if turn == 0:
                mode = MODES[self.starts % len(MODES)]
                self.starts += 1
            else:
                first_turn = text.split("<|im_start|>assistant\n", 1)[1].split("<|im_end|>", 1)[0]
                mode = "loop" if LOOP_QUERY in first_turn else "oracle"
            if mode == "garbage":
                reply = "I am not sure what this is."
            elif mode == "loop":
                reply = tool_call("search", {"query": LOOP_QUERY, "k": 1})
            else:
                call = task.oracle[turn]
                reply = tool_call(call.name, call.arguments)
            self.turns += 1
            out.append(([*self.tok.encode(reply, add_special_tokens=False), self.stop], None))
        return out


def tool_call(name: str, arguments: dict[str, Any]) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


@pytest.fixture(scope="module")
def tiny_model() -> str:
    from wikigym.trainers.grpo import resolve_model

    return resolve_model(TrainConfig(output_dir="unused"))


@pytest.fixture(scope="module")
def spec() -> EnvSpec:
    return EnvSpec("WikiSearch-v1", kwargs={"python": "off", "max_steps": MAX_ENV_STEPS})


def three_call_tasks(spec: EnvSpec, n: int) -> list[str]:
    taskset = list(spec.taskset())[:ROWS]
    return [t.task_id for t in taskset if len(t.oracle) == 3][:n]


def test_run_rollouts_masks_tool_tokens_and_scores_each_mode(
    spec: EnvSpec, tiny_model: str
) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model)
    (task_id,) = three_call_tasks(spec, 1)
    row = next(r for r in dataset_rows(spec, num_rows=ROWS) if r["task_id"] == task_id)
    sink = EpisodeSink()
    factory = make_environment_factory(spec, sink)
    policy = ScriptedPolicy(tok, spec.taskset())
    out = run_rollouts(
        [row["prompt"]] * 4,
        [factory() for _ in range(4)],
        [{"task_id": task_id, "seed": row["seed"]}] * 4,
        tokenizer=tok,
        generate=policy,
        max_completion_length=3000,
        stop_token_ids=[tok.eos_token_id, tok.pad_token_id],
    )
    assert out["env_reward"] == [1.0, 0.0, None, 1.0]  # oracle, no tool call, budget, oracle
    assert out["env_masked"] == [False, False, True, False]
    assert out["env_tool_calls"] == [3, 0, MAX_ENV_STEPS, 3]
    assert out["logprobs"] is None  # the scripted policy gives none
    oracle_ids, oracle_mask = out["completion_ids"][0], out["env_mask"][0]
    assert len(oracle_mask) == len(oracle_ids) and 0 < sum(oracle_mask) < len(oracle_ids)
    # The masked-out tokens are exactly the tool results: they decode to the responses.
    tool_text = tok.decode([t for t, m in zip(oracle_ids, oracle_mask, strict=True) if m == 0])
    model_text = tok.decode([t for t, m in zip(oracle_ids, oracle_mask, strict=True) if m == 1])
    assert tool_text.count("<tool_response>") == 2 and "<tool_call>" not in tool_text
    assert model_text.count("<tool_call>") == 3 and "<tool_response>" not in model_text
    assert oracle_ids[-1] == tok.eos_token_id
    assert out["env_mask"][1] == [1] * len(out["completion_ids"][1])  # no tool result
    recs = sink.drain()
    assert [r.finished_by for r in recs] == ["tool", "no_answer", "budget", "tool"]
    assert recs[2].mask_reason == "env_truncated" and recs[1].tool_errors == {"no_tool_call": 1}
    # A budget too small for the first tool result: the rollout stops and is masked.
    small = run_rollouts(
        [row["prompt"]],
        [factory()],
        [{"task_id": task_id, "seed": row["seed"]}],
        tokenizer=tok,
        generate=ScriptedPolicy(tok, spec.taskset()),
        max_completion_length=40,
        stop_token_ids=[tok.eos_token_id],
    )
    assert small["env_reward"] == [None] and set(small["env_mask"][0]) == {1}
    assert sink.drain()[0].mask_reason == "length_truncated"


def test_grpo_rollout_func_runs_tools_masks_and_updates(
    spec: EnvSpec, tiny_model: str, tmp_path: Path
) -> None:
    import torch
    from transformers import AutoTokenizer

    tasks = three_call_tasks(spec, 2)
    cfg = TrainConfig(
        output_dir=str(tmp_path / "run"),
        # The plain tiny model, named: with no --model, cpu-tiny on WikiSearch would first
        # build its cold start (minutes; the slow test covers that path).
        model=tiny_model,
        rollout="rollout_func",
        max_steps=2,
        max_env_steps=MAX_ENV_STEPS,
        num_rows=ROWS,
        seed=0,
        overrides={"max_completion_length": 3000, "shuffle_dataset": False},
    )
    from wikigym.trainers.grpo import resolve_model

    tok = AutoTokenizer.from_pretrained(resolve_model(cfg))
    policy = ScriptedPolicy(tok, spec.taskset())
    # Only the chosen tasks, in order: one group of G=4 per step.
    trainer, diagnostics = build_trainer(cfg, generate=policy)
    keep = set(tasks)
    trainer.train_dataset = trainer.train_dataset.filter(lambda r: r["task_id"] in keep)
    name, before = next(
        (n, p.detach().clone()) for n, p in trainer.model.named_parameters() if "q_proj" in n
    )
    trainer.train()
    after = dict(trainer.model.named_parameters())[name].detach()
    assert not torch.equal(before, after), "GRPO changed no parameter"
    # TRL's advantages of the last group (oracle, no call, masked, oracle): the masked rollout
    # is unscorable (NaN reward), left out of the group mean and std, its advantage forced to 0.
    adv = list(trainer._logs["advantages"])
    assert len(adv) == 4 and adv[2] == 0.0 and adv[0] == adv[3] > 0 > adv[1]

    assert policy.starts == 8  # 2 steps x 1 prompt x G=4 rollouts
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in rows if "loss" in r]
    assert len(steps) == 2
    for r in steps:
        assert r["diag/episodes"] == 4
        assert r["diag/masked_share"] == 0.25 and r["diag/masked_env_share"] == 0.25
        assert r["diag/tool_calls_per_episode"] == (3 + 0 + MAX_ENV_STEPS + 3) / 4
        assert r["diag/tool_call_validity"] == 1.0
        assert r["diag/reward/outcome"] == pytest.approx(2 / 3)  # the masked one is left out
        # TRL's view: the masked rollout is NaN, so the mean is over the 3 scored ones.
        assert r["rewards/rollout_reward/mean"] == pytest.approx(2 / 3)
        assert r["reward"] == pytest.approx(2 / 3)
        # Only model-written tokens count as completion length (tool results are masked).
        # TRL counts only model-written tokens (env_mask 1): the looping rollout wrote 4 short
        # calls (~150 tokens) while its completion, with 4 tool results, is over 350 tokens.
        assert 0 < r["completions/max_length"] < 250
    summary = diagnostics.summary()
    assert summary["episodes"] == 8 and summary["masked_share"] == 0.25
    assert summary["tool_calls"] == 2 * (3 + 0 + MAX_ENV_STEPS + 3)


def test_act_continues_on_malformed_calls_and_stops_on_plain_text(spec: EnvSpec) -> None:
    sink = EpisodeSink()
    env = make_environment_factory(spec, sink)()
    (task_id,) = three_call_tasks(spec, 1)
    env.reset(task_id=task_id, seed=0)
    obs, attempted = env._act('<tool_call>{"name": "search", "arguments": </tool_call>')
    assert attempted and "error" in obs and not env._done  # fed back: the model may retry
    obs, attempted = env._act(tool_call("search", {"query": "born", "k": 1}))
    assert attempted and "[p" in obs
    obs, attempted = env._act("Just some words.")
    assert not attempted and not env._done  # the rollout ends here
    assert env.get_reward() == 0.0
    (rec,) = sink.drain()
    assert rec.tool_calls == 2 and rec.valid_tool_calls == 1 and rec.steps == 3
    assert rec.tool_errors.get("no_tool_call") == 1 and rec.parse_failures >= 1


def test_a_turn_at_the_generators_cap_is_judged_by_the_env_not_masked(
    spec: EnvSpec, tiny_model: str
) -> None:
    """A turn that ends without a stop token while the completion budget has room hit the
    generator's per-turn cap (``max_new_tokens``): the env acts on it as evaluation does, so
    text without a call scores 0 (a rambling policy loses reward instead of leaving the loss),
    and the template's end of turn follows it outside the loss (TRL keeps the rollout)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model)
    (task_id,) = three_call_tasks(spec, 1)
    row = next(r for r in dataset_rows(spec, num_rows=ROWS) if r["task_id"] == task_id)
    scripted = ScriptedPolicy(tok, spec.taskset())

    def capped(contexts: list[list[int]]) -> list[tuple[list[int], None]]:
        return [(ids[:-1], None) for ids, _ in scripted(contexts)]  # no stop token: cut

    sink = EpisodeSink()
    factory = make_environment_factory(spec, sink)
    out = run_rollouts(
        [row["prompt"]] * 4,
        [factory() for _ in range(4)],
        [{"task_id": task_id, "seed": row["seed"]}] * 4,
        tokenizer=tok,
        generate=capped,
        max_completion_length=3000,
        stop_token_ids=[tok.eos_token_id, tok.pad_token_id],
    )
    assert out["env_reward"] == [1.0, 0.0, None, 1.0]  # as with stop tokens: judged, not cut
    assert out["env_masked"] == [False, False, True, False]
    assert [r.finished_by for r in sink.drain()] == ["tool", "no_answer", "budget", "tool"]
    for ids, mask in zip(out["completion_ids"], out["env_mask"], strict=True):
        assert ids[-1] == tok.eos_token_id and mask[-1] == 0  # the template's, not the model's
    oracle_ids, oracle_mask = out["completion_ids"][0], out["env_mask"][0]
    model_text = tok.decode([t for t, m in zip(oracle_ids, oracle_mask, strict=True) if m == 1])
    assert model_text.count("<tool_call>") == 3 and "<|im_end|>" not in model_text
