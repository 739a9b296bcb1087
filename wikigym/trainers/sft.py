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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikigym.errors import WikigymError
from wikigym.jsonl import json_lines
from wikigym.outputs import atomic_output
from wikigym.tools import openai_tools_schema, tool_names
from wikigym.trainers.adapter import EnvSpec

if TYPE_CHECKING:
    from wikigym.trainers.progress import Progress

SFT_FILE = "sft.jsonl"


@dataclass
class ExportConfig:
    """What ``wikigym export sft`` writes: each field is an option of the command."""

    out: Path = field(metadata={"help": "Output directory (sft.jsonl)."})
    tasks: str | None = field(
        default=None, metadata={"help": "TaskSet file (unset: the default TaskSet)."}
    )
    corpus: str | None = field(
        default=None, metadata={"help": "Snapshot directory (unset: the default world)."}
    )
    limit: int | None = field(default=None, metadata={"help": "At most this many chats.", "min": 1})
    max_env_steps: int = field(
        default=12, metadata={"help": "Env step budget per oracle episode.", "min": 1}
    )
    overwrite: bool = field(
        default=False, metadata={"help": "Replace an existing output directory."}
    )


@dataclass
class SFTRunConfig:
    """What ``wikigym train sft`` runs: each field is an option of the command."""

    data: Path = field(metadata={"help": "Export directory or sft.jsonl (wikigym export sft)."})
    output_dir: Path = field(metadata={"help": "Run directory (the model goes to final/)."})
    model: str | None = field(
        default=None, metadata={"help": "Model path or hub id (unset: the tiny local model)."}
    )
    max_steps: int = field(default=50, metadata={"help": "Optimizer steps.", "min": 1})
    learning_rate: float = field(
        default=1e-5, metadata={"help": "Constant learning rate.", "min": 0.0}
    )
    batch_size: int = field(default=4, metadata={"help": "Chats per device batch.", "min": 1})
    max_length: int = field(
        default=4096, metadata={"help": "Tokens per chat (longer ones are cut).", "min": 1}
    )
    seed: int = field(default=0, metadata={"help": "Seed of data order and init.", "min": 0})
    cpu: bool = field(default=False, metadata={"help": "Train on the CPU."})
    overwrite: bool = field(
        default=False, metadata={"help": "Replace an existing output directory."}
    )
    quiet: bool = field(
        default=False,
        metadata={"help": "No progress output (stage lines and bars); errors still print."},
    )


def oracle_chats(spec: EnvSpec) -> Iterator[dict[str, Any]]:
    """One chat per task whose oracle trajectory solves it (replayed in the env)."""
    taskset = spec.taskset()
    if taskset is None:
        raise WikigymError(
            f"{spec.env_id} has no TaskSet with oracle trajectories; use WikiSearch-v1"
        )
    env = spec.make()
    tools = getattr(env.unwrapped, "tools", tool_names())
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
            action, message = call_turn(call.name, arguments)
            obs, step_reward, terminated, truncated, info = env.step(action)
            reward = float(step_reward)
            messages.append(message)
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


def call_turn(name: str, arguments: str) -> tuple[str, dict[str, Any]]:
    """One tool call of a chat: the env action and the assistant message that make it.

    Args:
        name: The tool.
        arguments: The arguments as the chat shows them (a JSON object, keys in the order the
            chat teaches).

    Returns:
        ``(action, message)``: the ``<tool_call>`` text for ``env.step`` and the assistant
        turn with its ``tool_calls`` (OpenAI/TRL chat format), the arguments byte for byte.
    """
    action = f'<tool_call>{{"name": {json.dumps(name)}, "arguments": {arguments}}}</tool_call>'
    call = {"type": "function", "function": {"name": name, "arguments": arguments}}
    return action, {"role": "assistant", "content": "", "tool_calls": [call]}


def export_sft(
    spec: EnvSpec, out_dir: str | Path, *, limit: int | None = None, overwrite: bool = False
) -> Path:
    """Write ``OUT/sft.jsonl`` and return its path; ``OUT`` appears only when complete.

    Raises:
        OutputExistsError: ``OUT`` exists (and is not empty) and ``overwrite`` is false.
        WikigymError: No oracle trajectory solved its task (nothing to export).
    """
    out = Path(out_dir)
    n = 0
    with atomic_output(out, overwrite=overwrite) as tmp:
        with (tmp / SFT_FILE).open("w", encoding="utf-8") as f:
            for chat in oracle_chats(spec):
                f.write(json.dumps(chat, ensure_ascii=False, sort_keys=True) + "\n")
                n += 1
                if limit is not None and n >= limit:
                    break
        if n == 0:
            raise WikigymError(
                "no oracle trajectory solved its task: nothing to export; check that the "
                "TaskSet has oracle calls and matches the corpus"
            )
    return out / SFT_FILE


def load_sft_dataset(path: str | Path):  # -> datasets.Dataset
    """The exported chats as a ``datasets.Dataset`` (a directory holding ``sft.jsonl`` or the
    file itself)."""
    from datasets import Dataset

    path = Path(path)
    if path.is_dir():
        path = path / SFT_FILE
    if not path.is_file():
        raise WikigymError(f"no SFT export at {path}; run `wikigym export sft --out DIR` first")
    rows = []
    for i, line in json_lines(path, WikigymError, what="an SFT export of `wikigym export sft`"):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise WikigymError(
                f"{path}:{i}: not JSON ({exc.msg}); expected one chat per line as written by "
                "`wikigym export sft`"
            ) from None
        if not isinstance(row, dict) or not isinstance(row.get("messages"), list):
            raise WikigymError(
                f"{path}:{i}: expected an object with a 'messages' list, as written by "
                "`wikigym export sft`"
            )
        rows.append(row)
    if not rows:
        raise WikigymError(f"{path} holds no chats; export some with `wikigym export sft`")
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
    bf16: bool | None = None,
    assistant_only_loss: bool = False,
    warmup_steps: int = 0,
    lr_scheduler_type: str = "constant",
    group_by_length: bool = False,
    progress: Progress | None = None,
    stage: str = "SFT",
) -> Path:
    """Fine-tune ``model`` on chat data with TRL's ``SFTTrainer``; saves to
    ``OUTPUT_DIR/final`` (model and tokenizer) and returns that path. The trainer's log
    history (loss per logging step) goes to ``OUTPUT_DIR/log_history.json``. ``bf16``: None
    keeps TRL's default (bf16 autocast); False trains in float32, which a later trainer in the
    same process (accelerate's state is process-wide) and a CPU need. ``assistant_only_loss``:
    the loss counts the assistant turns only (TRL swaps in its training chat template with
    ``{% generation %}`` markers), so a small model spends no capacity predicting
    observations. ``warmup_steps`` and ``lr_scheduler_type``: TRL's (default: constant).
    ``group_by_length``: batches of chats of similar length (less padding: on a CPU the
    padded tokens are most of the cost when chat lengths vary). ``progress``: show the steps
    as a bar named ``stage`` in place of the trainer's own (None: the trainer's)."""
    from trl import SFTConfig, SFTTrainer

    from wikigym.trainers.tokenizer import load_tokenizer

    tokenizer = load_tokenizer(model)
    dtype: dict[str, Any] = {} if bf16 is None else {"bf16": bf16}
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
        **dtype,
        lr_scheduler_type=lr_scheduler_type,
        warmup_steps=warmup_steps,
        assistant_only_loss=assistant_only_loss,
        dataloader_num_workers=0,
        train_sampling_strategy="group_by_length" if group_by_length else "random",
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer)
    if progress is not None:
        from wikigym.trainers.progress import use_step_progress

        use_step_progress(trainer, progress.steps(stage))
    try:
        trainer.train()
    finally:
        if progress is not None:
            progress.close()
    (Path(output_dir) / "log_history.json").write_text(
        json.dumps(trainer.state.log_history, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    final = Path(output_dir) / "final"
    trainer.save_model(str(final))
    tokenizer.save_pretrained(final)
    return final
