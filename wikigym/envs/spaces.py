"""Text spaces for observations and actions that admit any Unicode string."""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from gymnasium.spaces import Text

SAMPLE_CHARSET = string.ascii_letters + string.digits + " .,:;!?-'\"()<>{}[]/éüßñжлこんに中文😀"


class UnicodeText(Text):
    """A :class:`gymnasium.spaces.Text` whose members are all ``str`` up to ``max_length``.

    Gymnasium's ``Text`` checks every character against a finite charset, which cannot
    hold all of Unicode. Model text is any Unicode, so ``contains`` only checks the type
    and length; ``sample`` draws from a small mixed charset (ASCII, accents, Cyrillic,
    CJK, emoji), which is enough for seeded smoke tests and ``check_env``.
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: Any = None) -> None:
        super().__init__(max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        length = int(self.np_random.integers(self.min_length, min(self.max_length, 64) + 1))
        chars = self.np_random.choice(np.array(list(SAMPLE_CHARSET)), size=length)
        return "".join(chars.tolist())

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnicodeText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )

    __hash__ = None  # type: ignore[assignment]
