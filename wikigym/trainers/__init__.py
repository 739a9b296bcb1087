"""wikigym.trainers: TRL GRPO/SFT on wikigym envs.

``from wikigym.trainers import trl_kwargs`` (or ``wikigym.trainers.trl_kwargs``) is the one call
TRL users need (:mod:`wikigym.trainers.trl_inputs`); it is imported on first use, so importing
this package loads neither TRL nor transformers.
"""

from __future__ import annotations

from typing import Any

__all__ = ["trl_kwargs", "trl_multi_kwargs"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from wikigym.trainers import trl_inputs

        return getattr(trl_inputs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
