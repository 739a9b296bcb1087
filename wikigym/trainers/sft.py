"""Cold start: oracle trajectories as chat-format SFT data, and a short SFT run on them.

:func:`export_sft` replays each task's oracle calls in the env (so tool results are the real
ones) and writes one chat per task to ``OUT/sft.jsonl``:

``{"messages": [...], "tools": "<OpenAI tools JSON>", "task_id": ..., "reward": ...}``

with messages ``user`` (the env's first observation), then per call an ``assistant`` message
with ``tool_calls`` (``{"type": "function", "function": {"name", "arguments"}}``; arguments
as a JSON string, so every row has the same Arrow schema and chat templates print them as
written) and a ``tool`` message with the env's observation, and a last short ``assistant``
message with the answer. Only trajectories the env scores as solved (reward > 0, not masked)
are kept. :func:`load_sft_dataset` returns a ``datasets.Dataset`` that TRL's ``SFTTrainer``
takes as is (``messages`` + ``tools`` columns).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wikigym.envs.tool_specs import ToolName, openai_tools_schema
from wikigym.errors import WikigymError
from wikigym.trainers.adapter import EnvSpec

SFT_FILE = "sft.jsonl"


def oracle_chats(spec: EnvSpec) -> Iterator[dict[str, Any]]:
    """One chat per task whose oracle trajectory solves it (replayed in the env)."""
    taskset = spec.taskset()
    if taskset is None:
        raise WikigymError(
            f"{spec.env_id} has no TaskSet with oracle trajectories; use WikiSearch-v0"
        )
    env = spec.make()
    tools = getattr(env.unwrapped, "tools", tuple(ToolName))
    schema = json.dumps(openai_tools_schema(tools), ensure_ascii=False, sort_keys=True)
    for i, task in enumerate(taskset):
        if not task.oracle:
            continue
        obs, _ = env.reset(seed=i, options={"task_id": task.task_id})
        messages: list[dict[str, Any]] = [{"role": "user", "content": obs}]
        reward: float = 0.0
        info: dict[str, Any] = {}
        done = False
        for call in task.oracle:
            arguments = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
            action = f'<tool_call>{{"name": {json.dumps(call.name)}, "arguments": {arguments}}}</tool_call>'
            obs, step_reward, terminated, truncated, info = env.step(action)
            reward = float(step_reward)
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "type": "function",
                            "function": {"name": call.name, "arguments": arguments},
                        }
                    ],
                }
            )
            messages.append({"role": "tool", "name": call.name, "content": obs})
            done = terminated or truncated
            if done:
                break
        if not done or info.get("mask") or reward <= 0 or info.get("answer") is None:
            continue
        messages.append({"role": "assistant", "content": str(info["answer"])})
        yield {
            "messages": messages,
            "tools": schema,
            "task_id": task.task_id,
            "reward": float(reward),
        }
    env.close()


def export_sft(spec: EnvSpec, out_dir: str | Path, *, limit: int | None = None) -> Path:
    """Write ``OUT/sft.jsonl`` (atomically) and return its path.

    Raises:
        WikigymError: No oracle trajectory solved its task (nothing to export).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / SFT_FILE
    tmp = out / f".{SFT_FILE}.tmp"
    n = 0
    with tmp.open("w", encoding="utf-8") as f:
        for chat in oracle_chats(spec):
            f.write(json.dumps(chat, ensure_ascii=False, sort_keys=True) + "\n")
            n += 1
            if limit is not None and n >= limit:
                break
    if n == 0:
        tmp.unlink()
        raise WikigymError(
            "no oracle trajectory solved its task: nothing to export; check that the TaskSet "
            "has oracle calls and matches the corpus"
        )
    tmp.replace(path)
    return path


def load_sft_dataset(path: str | Path):  # -> datasets.Dataset
    """The exported chats as a ``datasets.Dataset`` (a directory holding ``sft.jsonl`` or the
    file itself)."""
    from datasets import Dataset

    path = Path(path)
    if path.is_dir():
        path = path / SFT_FILE
    if not path.is_file():
        raise WikigymError(f"no SFT export at {path}; run `wikigym export sft --out DIR` first")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return Dataset.from_list(rows)


def run_sft(
    model: str,
    dataset: Any,
    output_dir: str | Path,
    *,
    max_steps: int = 50,
    learning_rate: float = 1e-3,
    batch_size: int = 4,
    max_length: int = 4096,
    seed: int = 0,
    use_cpu: bool = False,
) -> Path:
    """Fine-tune ``model`` on chat data with TRL's ``SFTTrainer``; saves to
    ``OUTPUT_DIR/final`` (model and tokenizer) and returns that path."""
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    tokenizer = AutoTokenizer.from_pretrained(model)
    args = SFTConfig(
        output_dir=str(output_dir),
        max_steps=max_steps,
        learning_rate=learning_rate,
        per_device_train_batch_size=batch_size,
        max_length=max_length,
        logging_steps=max(1, max_steps // 10),
        save_strategy="no",
        report_to=[],
        seed=seed,
        use_cpu=use_cpu,
        lr_scheduler_type="constant",
        dataloader_num_workers=0,
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer)
    trainer.train()
    final = Path(output_dir) / "final"
    trainer.save_model(str(final))
    tokenizer.save_pretrained(final)
    return final
