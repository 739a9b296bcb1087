"""GPU check: a few GRPO steps of a small model on WikiSearch-v0; prints throughput and memory.

Run on a CUDA machine with `pip install torch==2.13.0` (CUDA build there) and
`pip install -e ".[train]"` (plus `".[vllm]"` to test vLLM colocate):

    python benchmarks/gpu/bench_grpo_gpu.py --model Qwen/Qwen3-0.6B --steps 5 [--use-vllm colocate]

Without --model it uses the tiny local model (no download). Prints rollout tokens/s (completion
tokens generated per second of step time), mean step time and peak GPU memory.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--env", default="WikiSearch-v0")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--use-vllm", choices=("colocate", "server", "off"), default="off")
    args = ap.parse_args()

    import torch
    from transformers import TrainerCallback

    from wikigym.trainers.grpo import TrainConfig, build_trainer, resolve_model

    if not torch.cuda.is_available():
        print("no CUDA device: this benchmark needs a GPU")
        return 2
    out = tempfile.mkdtemp(prefix="wikigym-gpu-bench-")
    model = args.model or resolve_model(TrainConfig(output_dir=out))
    use_vllm = args.use_vllm
    if use_vllm != "off":
        import importlib.util

        if importlib.util.find_spec("vllm") is None:
            print("vllm not installed: falling back to transformers generation")
            use_vllm = "off"
    cfg = TrainConfig(
        output_dir=out,
        model=model,
        env=args.env,
        preset="single-gpu",
        use_vllm=use_vllm,
        max_steps=args.steps,
        num_rows=64,
        overrides={
            "per_device_train_batch_size": 8,
            "gradient_accumulation_steps": 1,
            "num_generations": 8,
            "max_completion_length": 1024,
        },
    )

    class Clock(TrainerCallback):
        def __init__(self) -> None:
            self.t: list[float] = []
            self.tokens: list[float] = []
            self._start = 0.0

        def on_step_begin(self, a, state, control, **kw):
            self._start = time.perf_counter()

        def on_step_end(self, a, state, control, **kw):
            self.t.append(time.perf_counter() - self._start)

        def on_log(self, a, state, control, logs=None, **kw):
            if logs and "completions/mean_length" in logs:
                self.tokens.append(logs["completions/mean_length"] * 8)

    torch.cuda.reset_peak_memory_stats()
    trainer, _ = build_trainer(cfg)
    clock = Clock()
    trainer.add_callback(clock)
    trainer.train()
    step = sum(clock.t) / len(clock.t)
    result = {
        "model": model,
        "generation": "vllm-" + use_vllm if use_vllm != "off" else "transformers",
        "steps": len(clock.t),
        "step_time_s": round(step, 3),
        "rollout_tokens_per_s": round(sum(clock.tokens) / sum(clock.t), 1),
        "peak_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
        "device": torch.cuda.get_device_name(0),
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
