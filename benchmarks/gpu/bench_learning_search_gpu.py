"""The learning experiment of ``bench_learning_search.py`` at a larger size on one GPU (issue 14).

The same pipeline, worlds, tasks and held-out split as the CPU result (untrained -> SFT cold
start -> GRPO in WikiSearch-v1, 2,000 held-out easy tasks of another world seed), with the
``GPU`` sizes: a model of hidden 512 and 8 layers (a tokenizer of 4,096 trained on the chats),
SFT in bf16, GRPO on the ``single-gpu`` preset at 64 tasks x 8 a step, generating with vLLM
(colocate) when it is installed, else with transformers. Besides the per-stage table it prints
GRPO's rollout tokens/s (completion tokens, the model's and the tools', per second of step
time), mean step time and peak GPU memory, and writes them into
``benchmarks/results/learning_search_gpu.json`` beside the curves.

On a CUDA machine (``pip install torch==2.13.0`` takes the CUDA build there):

    pip install -e ".[train,bench]"      # and ".[vllm]" to generate with vLLM
    python benchmarks/gpu/bench_learning_search_gpu.py

The worlds, tasks and chats are built on the CPU first (a few minutes). Without a GPU it says
so and exits 2. Extra arguments go to ``bench_learning_search.py`` (``--seed``, ``--reuse-sft``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_learning_search import main

if __name__ == "__main__":
    raise SystemExit(main(["--gpu", *sys.argv[1:]]))
