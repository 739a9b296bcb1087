"""vLLM generation settings for GRPO (colocate or server), built without importing vLLM.

``colocate``: vLLM runs inside each training process and shares its GPU
(``vllm_gpu_memory_utilization`` of it); weights are synced in memory after every step. Best on
one GPU. ``server``: a separate ``trl vllm-serve --model MODEL`` process on its own GPU(s);
training processes send prompts over HTTP and push weights over NCCL
(``vllm_server_base_url`` or host/port). Best on several GPUs.

With either mode the presets keep ``vllm_importance_sampling_correction`` on: vLLM's sampling
log-probs differ from the trainer's (kernels, precision, MoE routing), and the truncated
importance-sampling ratio corrects the gradient for it; the diagnostics warn when the mismatch
grows. vLLM is an optional extra (from a wikigym checkout: ``pip install -e '.[vllm]'``): :func:`require_vllm` checks
for it only when a run asks for it.
"""

from __future__ import annotations

import importlib.util
from typing import Any
from urllib.parse import urlparse

from wikigym.errors import WikigymError
from wikigym.trainers.presets import GRPOPreset

MODES: tuple[str, ...] = ("colocate", "server")


def vllm_overrides(
    mode: str | None, preset: GRPOPreset, *, server_url: str | None = None
) -> dict[str, Any]:
    """``GRPOConfig`` fields for a vLLM mode.

    Args:
        mode: ``colocate``, ``server``, ``off``, or None to keep the preset's choice.
        preset: The preset (its ``use_vllm`` / ``vllm_mode`` when ``mode`` is None).
        server_url: ``http://host:port`` of the vLLM server (server mode only).

    Returns:
        The fields to pass to ``GRPOConfig`` (``use_vllm``, ``vllm_mode`` and, for server,
        ``vllm_server_base_url``; for colocate, ``vllm_gpu_memory_utilization``).

    Raises:
        WikigymError: On an unknown mode, a URL without colocate/server sense, or a malformed
            URL.
    """
    if mode is None:
        use, chosen = preset.use_vllm, preset.vllm_mode
    elif mode == "off":
        use, chosen = False, preset.vllm_mode
    elif mode in MODES:
        use, chosen = True, mode
    else:
        raise WikigymError(f"--use-vllm must be one of {MODES} (or off), got {mode!r}")
    out: dict[str, Any] = {"use_vllm": use, "vllm_mode": chosen}
    if not use:
        if server_url is not None:
            raise WikigymError("--vllm-server-url needs --use-vllm server")
        return out
    if chosen == "colocate":
        if server_url is not None:
            raise WikigymError("--vllm-server-url is for --use-vllm server, not colocate")
        out["vllm_gpu_memory_utilization"] = preset.vllm_gpu_memory_utilization
    else:
        if server_url is not None:
            parsed = urlparse(server_url)
            if parsed.scheme not in ("http", "https") or not parsed.netloc:
                raise WikigymError(
                    f"--vllm-server-url must look like http://host:8000, got {server_url!r}"
                )
            out["vllm_server_base_url"] = server_url.rstrip("/")
    return out


def require_vllm() -> None:
    """Raise a clear error when vLLM is asked for but not installed."""
    if importlib.util.find_spec("vllm") is None:
        raise WikigymError(
            "vLLM generation was asked for, but vllm is not installed; "
            "from the wikigym checkout on a CUDA machine: pip install -e '.[vllm]'; or drop --use-vllm"
        )


def server_command(model: str, *, tensor_parallel_size: int = 1, port: int = 8000) -> list[str]:
    """The command that starts the vLLM server of server mode (run it on its own GPUs)."""
    return [
        "trl",
        "vllm-serve",
        "--model",
        model,
        "--tensor-parallel-size",
        str(tensor_parallel_size),
        "--port",
        str(port),
    ]
