"""Loading a model's tokenizer, with a user's mistake turned into one line (GRPO and SFT)."""

from __future__ import annotations

from typing import Any

from wikigym.errors import ConfigError


def load_tokenizer(model: str) -> Any:
    """The tokenizer of ``model``.

    Raises:
        ConfigError: It cannot be loaded (not downloadable, not a tokenizer).
    """
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(model)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load the tokenizer of model {model!r}: {exc}") from exc
