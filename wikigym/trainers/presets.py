"""Training presets: the GRPO settings practice found stable, in one place, with the reasons.

Every value below is also in the table of ``docs/training.md``; change both together.

============================  ==========================  ==================================
setting                        value                       why
============================  ==========================  ==================================
reward                         binary outcome              Composite rewards (format +1,
                                                           tool call +1, ...) get gamed and
                                                           lengthen outputs until they
                                                           collapse; a 0/1 "task solved"
                                                           signal has no shortcut.
                                                           ``--gamma`` (step decay) and
                                                           ``--citations`` (gated rubric
                                                           support) are opt-in flags.
beta (KL)                      0.001                       Without KL, policies degrade after
                                                           a few hundred steps; a large KL
                                                           stops learning. A tiny KL is the
                                                           minimum anchor.
sync_ref_model                 True, every 100 steps,      The reference is refreshed to the
                               mixup alpha 1.0             current policy, so the KL anchor
                                                           follows training instead of
                                                           pinning it to the start.
mask_truncated_completions     True                        A completion cut by the length
                                                           limit is not evidence of a bad
                                                           policy; punishing it teaches the
                                                           model to stop using tools.
env-masked episodes            get_reward() -> None        Same reason for the env's step
                                                           budget: TRL drops them from the
                                                           group statistics, advantage 0.
loss_type                      dapo (token level)          Token-level normalisation over the
                                                           batch: no length bias, every
                                                           action token weighs the same.
scale_rewards                  group                       GRPO's group-relative advantage.
vllm_importance_sampling_      True (token_truncate,       vLLM's sampling log-probs differ
correction                     C_max 2.0) when vLLM        from the trainer's (kernels,
                               generates                   precision, MoE routing); the
                                                           truncated IS ratio keeps the
                                                           update unbiased-enough and bounded.
temperature                    1.0                         On-policy sampling (what the IS
                                                           correction and the KL assume).
max_turn_tokens                None (settable)             A per-turn cap: a turn cut there is
                                                           judged by the env, so rambling
                                                           loses reward; masked, it would
                                                           leave the loss and grow (a tiny
                                                           policy's completions ran to the
                                                           budget within 40 GRPO steps).
============================  ==========================  ==================================

Presets (:data:`PRESETS`): ``cpu-tiny`` (tests and smoke runs on any machine: tiny batches,
short completions, transformers ``generate``; with no model on WikiSearch it starts from the
cached SFT cold start of :mod:`wikigym.trainers.coldstart`), ``single-gpu`` (one GPU, vLLM colocate, bf16,
gradient checkpointing) and ``multi-gpu`` (accelerate with DeepSpeed ZeRO-3 or FSDP: the config
files ship in ``wikigym/trainers/configs/``; vLLM server or colocate).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from wikigym.errors import WikigymError


@dataclass(frozen=True)
class GRPOPreset:
    """The GRPO settings of one preset (names are TRL 1.16 ``GRPOConfig`` fields)."""

    name: str = field(metadata={"help": "Preset name."})
    beta: float = field(default=0.001, metadata={"help": "KL coefficient (small anchor)."})
    sync_ref_model: bool = field(
        default=True, metadata={"help": "Refresh the reference model to the current policy."}
    )
    ref_model_sync_steps: int = field(
        default=100, metadata={"help": "Steps between reference refreshes."}
    )
    ref_model_mixup_alpha: float = field(
        default=1.0, metadata={"help": "1.0: the reference becomes a copy of the policy."}
    )
    mask_truncated_completions: bool = field(
        default=True, metadata={"help": "Leave length-cut completions out of the loss."}
    )
    loss_type: str = field(default="dapo", metadata={"help": "Token-level loss (DAPO)."})
    scale_rewards: str = field(default="group", metadata={"help": "Advantage scaling."})
    vllm_importance_sampling_correction: bool = field(
        default=True, metadata={"help": "IS correction for the vLLM/trainer mismatch."}
    )
    vllm_importance_sampling_mode: str = field(
        default="token_truncate", metadata={"help": "Per-token ratios, clipped at C_max."}
    )
    vllm_importance_sampling_clip_max: float = field(
        default=2.0, metadata={"help": "C_max of the IS ratio."}
    )
    temperature: float = field(default=1.0, metadata={"help": "Sampling temperature."})
    learning_rate: float = field(default=1e-6, metadata={"help": "AdamW learning rate."})
    num_generations: int = field(default=8, metadata={"help": "Group size G."})
    per_device_train_batch_size: int = field(
        default=8, metadata={"help": "Completions per device per micro-batch."}
    )
    gradient_accumulation_steps: int = field(
        default=4, metadata={"help": "Micro-batches per optimizer step."}
    )
    max_completion_length: int = field(
        default=4096, metadata={"help": "Tokens of all assistant turns plus tool results."}
    )
    max_turn_tokens: int | None = field(
        default=None,
        metadata={
            "help": "Tokens one assistant turn may take (None: the whole completion budget). "
            "With rollout_func, a turn cut there goes to the env as written and is scored, as "
            "in evaluation; only a cut by max_completion_length is masked."
        },
    )
    max_steps: int = field(default=500, metadata={"help": "Optimizer steps."})
    logging_steps: int = field(default=1, metadata={"help": "Log (and diagnose) every step."})
    save_steps: int = field(default=100, metadata={"help": "Checkpoint interval."})
    bf16: bool = field(default=False, metadata={"help": "bfloat16 mixed precision."})
    gradient_checkpointing: bool = field(
        default=False, metadata={"help": "Trade compute for memory."}
    )
    use_vllm: bool = field(default=False, metadata={"help": "Generate with vLLM."})
    vllm_mode: str = field(default="colocate", metadata={"help": "colocate or server."})
    vllm_gpu_memory_utilization: float = field(
        default=0.3, metadata={"help": "GPU share of colocated vLLM."}
    )
    accelerate_config: str | None = field(
        default=None, metadata={"help": "Shipped accelerate config to launch with (multi-GPU)."}
    )

    def with_overrides(self, **changes: Any) -> GRPOPreset:
        """A copy with some fields changed (unknown names are an error)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise WikigymError(f"unknown preset fields {unknown}; known: {sorted(known)}")
        return replace(self, **changes)

    def grpo_kwargs(self) -> dict[str, Any]:
        """The fields that are ``GRPOConfig`` arguments."""
        out = asdict(self)
        for key in ("name", "accelerate_config"):
            out.pop(key)
        return out


PRESETS: dict[str, GRPOPreset] = {
    "cpu-tiny": GRPOPreset(
        name="cpu-tiny",
        learning_rate=1e-3,  # random tiny weights: large steps are harmless and show learning
        num_generations=4,
        per_device_train_batch_size=4,
        gradient_accumulation_steps=1,
        # The cold start's episodes (search, find, answer) take ~400 tokens with tool results.
        max_completion_length=768,
        max_steps=4,
        save_steps=10_000,
        ref_model_sync_steps=2,  # exercise the refresh path within a short run
    ),
    "single-gpu": GRPOPreset(
        name="single-gpu",
        learning_rate=1e-6,
        num_generations=8,
        per_device_train_batch_size=8,
        gradient_accumulation_steps=4,
        max_completion_length=4096,
        bf16=True,
        gradient_checkpointing=True,
        use_vllm=True,
        vllm_mode="colocate",
        vllm_gpu_memory_utilization=0.3,
    ),
    "multi-gpu": GRPOPreset(
        name="multi-gpu",
        learning_rate=1e-6,
        num_generations=16,
        per_device_train_batch_size=8,
        gradient_accumulation_steps=2,
        max_completion_length=8192,
        bf16=True,
        gradient_checkpointing=True,
        use_vllm=True,
        vllm_mode="server",
        accelerate_config="deepspeed_zero3.yaml",
    ),
}


def get_preset(name: str) -> GRPOPreset:
    """The preset called ``name``.

    Raises:
        WikigymError: No such preset (the message lists them).
    """
    if name not in PRESETS:
        raise WikigymError(f"unknown preset {name!r}; expected one of {sorted(PRESETS)}")
    return PRESETS[name]
