"""TRL's own tool-call loop (``GRPOTrainer(environment_factory=...)``) on WikiSearch-v1, driven by
a scripted ``generate``: the tiny local model's random weights never call a tool, so its
``generate`` is replaced by a policy that writes real Qwen-format ``<tool_call>`` turns from the
task's oracle and then a plain-text ``<answer>...</answer>``. Everything else is real: TRL parses
the calls (``parse_response``), runs them on the adapter (the env over the default world),
appends the tool responses to the context, and scores through ``trl_kwargs``'s hook and the
env's ``get_reward``; one GRPO step then updates the model."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("trl")

import wikigym.trainers

pytestmark = pytest.mark.slow

RIGHT, WRONG = "Plan: right.", "Plan: wrong."
WRONG_ANSWER = "certainly not this"
G = 4  # rollouts per prompt: right, wrong, right, wrong


def tool_call(name: str, arguments: dict[str, Any]) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


class ScriptedGenerate:
    """``model.generate`` for TRL's transformers path: reads each row's context and appends one
    assistant turn (the oracle's next tool call, or the final text answer) and ``<|im_end|>``."""

    def __init__(self, tokenizer: Any, taskset: Any) -> None:
        self.tok = tokenizer
        self.by_question = {t.question: t for t in taskset}
        self.stop = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self.pad = tokenizer.pad_token_id
        self.calls = 0
        self.first_turns = 0

    def __call__(self, input_ids: Any = None, attention_mask: Any = None, **_: Any) -> Any:
        import torch

        self.calls += 1
        replies = []
        for ids, mask in zip(input_ids.tolist(), attention_mask.tolist(), strict=True):
            text = self.tok.decode([i for i, m in zip(ids, mask, strict=True) if m])
            first_user = text.split("<|im_start|>user\n", 1)[1].split("<|im_end|>", 1)[0]
            task = self.by_question[first_user.rsplit("Question: ", 1)[1].strip()]
            turn = text.count("<tool_response>")
            if turn == 0:
                plan = RIGHT if self.first_turns % 2 == 0 else WRONG
                self.first_turns += 1
            else:
                plan = RIGHT if RIGHT in text.split("<|im_start|>assistant\n", 1)[1] else WRONG
            if turn < len(task.oracle) - 1:
                call = task.oracle[turn]
                reply = tool_call(call.name, call.arguments)
                reply = f"{plan}\n{reply}" if turn == 0 else reply
            else:  # the last oracle step is the answer: written as text, not as a tool call
                reply = f"<answer>{task.answer if plan == RIGHT else WRONG_ANSWER}</answer>"
            replies.append([*self.tok.encode(reply, add_special_tokens=False), self.stop])
        width = max(len(r) for r in replies)
        out = [r + [self.pad] * (width - len(r)) for r in replies]
        return torch.cat([input_ids, torch.tensor(out, dtype=input_ids.dtype)], dim=1)


def test_trl_tool_loop_runs_env_tools_and_scores_text_answers(tmp_path: Any) -> None:
    import torch
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from wikigym.trainers.grpo import TrainConfig, resolve_model

    torch.set_num_threads(1)
    model = resolve_model(TrainConfig(output_dir=str(tmp_path / "unused")))  # the tiny model
    kw = wikigym.trainers.trl_kwargs("WikiSearch-v1", python="off", max_steps=6)
    taskset = kw["environment_factory"].spec.taskset()
    task = next(t for t in taskset if [c.name for c in t.oracle] == ["search", "find", "answer"])
    kw["train_dataset"] = kw["train_dataset"].filter(lambda r: r["task_id"] == task.task_id)

    seen: list[dict[str, Any]] = []

    def record(completions: list[Any], environments: list[Any], **_: Any) -> list[None]:
        """Runs after trl_kwargs's hook: what the model saw and what the env will score."""
        for completion, env in zip(completions, environments, strict=True):
            seen.append({"completion": completion, "reward": env.get_reward()})
        return [None] * len(completions)

    logged: list[dict[str, float]] = []

    class Logs(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **_: Any) -> None:
            logged.append(dict(logs or {}))

    args = GRPOConfig(
        output_dir=str(tmp_path / "run"),
        per_device_train_batch_size=G,
        num_generations=G,
        max_steps=1,
        max_completion_length=3000,
        max_tool_calling_iterations=6,
        mask_truncated_completions=True,
        beta=0.0,
        learning_rate=1e-3,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        shuffle_dataset=False,
        seed=0,
    )
    kw["reward_funcs"] = [*kw["reward_funcs"], record]
    kw["callbacks"] = [*kw["callbacks"], Logs()]
    trainer = GRPOTrainer(
        model=model, args=args, processing_class=AutoTokenizer.from_pretrained(model), **kw
    )
    tok = trainer.processing_class
    scripted = ScriptedGenerate(tok, taskset)
    trainer.model.generate = scripted  # TRL's transformers generation path calls it
    name, before = next(
        (n, p.detach().clone()) for n, p in trainer.model.named_parameters() if "q_proj" in n
    )
    trainer.train()

    # trl_kwargs's callback told the hook the trainer's stop ids and masking choice.
    (finish,) = [f for f in trainer.reward_funcs if getattr(f, "__name__", "") == "finish_episodes"]
    assert scripted.stop in finish.stop_token_ids and finish.mask_length_truncated

    assert scripted.calls == len(task.oracle)  # one generation round per turn
    assert len(seen) == G
    for i, rollout in enumerate(seen):
        messages = rollout["completion"]
        roles = [m["role"] for m in messages]
        assert roles == ["assistant", "tool", "assistant", "tool", "assistant"], roles
        calls = [m["tool_calls"][0]["function"] for m in messages if m.get("tool_calls")]
        assert [c["name"] for c in calls] == ["search", "find"]
        assert calls[0]["arguments"] == task.oracle[0].arguments
        tools = [m["content"] for m in messages if m["role"] == "tool"]
        assert tools[0].startswith("search(") and "results" in tools[0]  # the env's search ran
        assert tools[1].startswith("find(") and task.oracle[1].arguments["text"] in tools[1]
        assert "<answer>" in messages[-1]["content"] and not messages[-1].get("tool_calls")
        assert rollout["reward"] == (1.0 if i % 2 == 0 else 0.0), (i, messages[-1])

    step = next(r for r in logged if "loss" in r)
    env_column = f"rewards/{kw['environment_factory'].env_class.__name__}/mean"
    assert step[env_column] == pytest.approx(0.5) and step["reward"] == pytest.approx(0.5)
    assert step["tools/call_frequency"] > 0 and step["tools/failure_frequency"] == 0
    after = dict(trainer.model.named_parameters())[name].detach()
    assert not torch.equal(before, after), "GRPO changed no parameter"
