"""Text spaces for observations and actions that admit any Unicode string.

Gymnasium flattens a ``Text`` member to the indices of its characters in the space's
charset, and its async vector env writes observations into shared memory that way, so a
character outside the charset (a newline, an accent) raises ``KeyError``. A
:class:`UnicodeText` member flattens to its Unicode code points instead, padded with
:data:`PAD` (one past the last code point), which holds every string; the handlers below
are registered on gymnasium's dispatchers when this module is imported.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from ctypes import c_int32
from multiprocessing.sharedctypes import SynchronizedArray
from typing import Any, overload

import numpy as np
from gymnasium.spaces import Box, Text
from gymnasium.spaces.utils import flatdim, flatten, flatten_space, unflatten
from gymnasium.vector.utils.shared_memory import read_from_shared_memory, write_to_shared_memory
from numpy.typing import NDArray

SAMPLE_CHARSET = string.ascii_letters + string.digits + " .,:;!?-'\"()<>{}[]/éüßñжлこんに中文😀"
PAD = 0x110000
"""The flat value of "no character": one past the last Unicode code point."""


class UnicodeText(Text):
    """A :class:`gymnasium.spaces.Text` whose members are all ``str`` up to ``max_length``.

    Gymnasium's ``Text`` checks every character against a finite charset, which cannot
    hold all of Unicode. Model text is any Unicode, so ``contains`` only checks the type
    and length; ``sample`` draws from a small mixed charset (ASCII, accents, Cyrillic,
    CJK, emoji), which is enough for seeded smoke tests and ``check_env``. Flattening (and
    so shared memory) uses code points: see the module docstring.
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


def encode_text(space: UnicodeText, x: str) -> NDArray[np.int32]:
    """``x`` as ``space.max_length`` code points, padded with :data:`PAD`.

    Raises:
        ValueError: ``x`` is longer than the space allows.
    """
    if len(x) > space.max_length:
        raise ValueError(f"text of {len(x)} characters exceeds {space!r}")
    arr = np.full(space.max_length, PAD, dtype=np.int32)
    if x:
        arr[: len(x)] = np.frombuffer(x.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    return arr


def decode_text(values: NDArray[Any]) -> str:
    """The string of an :func:`encode_text` array (every value below :data:`PAD`)."""
    codes = np.asarray(values, dtype=np.int64)
    codes = codes[(codes >= 0) & (codes < PAD)].astype("<u4")
    return codes.tobytes().decode("utf-32-le", "surrogatepass")


# gymnasium types these dispatchers over Space[T]; mypy cannot match a subclass of Text to it.
@flatten.register(UnicodeText)
def _flatten_unicode(space: UnicodeText, x: str) -> NDArray[np.int32]:  # type: ignore[misc]
    return encode_text(space, x)


@unflatten.register(UnicodeText)
def _unflatten_unicode(space: UnicodeText, x: NDArray[Any]) -> str:  # type: ignore[misc]
    return decode_text(x)


@flatten_space.register(UnicodeText)
def _flatten_space_unicode(space: UnicodeText) -> Box:
    return Box(low=0, high=PAD, shape=(space.max_length,), dtype=np.int32)


@flatdim.register(UnicodeText)
def _flatdim_unicode(space: UnicodeText) -> int:
    return space.max_length


@write_to_shared_memory.register(UnicodeText)
def _write_unicode(
    space: UnicodeText, index: int, value: str, shared_memory: SynchronizedArray[c_int32]
) -> None:
    size = space.max_length
    destination = np.frombuffer(memoryview(shared_memory.get_obj()), dtype=np.int32)
    np.copyto(destination[index * size : (index + 1) * size], encode_text(space, value))


class SharedTextBatch(Sequence[str]):
    """The strings of a batch of :class:`UnicodeText` values in shared memory, decoded on
    access (a live view, as gymnasium's shared arrays are); ``copy.deepcopy`` of it, which
    the async vector env returns by default, is a plain ``tuple`` of ``str``."""

    def __init__(self, data: NDArray[np.int32]) -> None:
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...
    def __getitem__(self, i: int | slice) -> str | tuple[str, ...]:
        if isinstance(i, slice):
            return tuple(decode_text(row) for row in self._data[i])
        return decode_text(self._data[i])

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SharedTextBatch({tuple(self)!r})"


@read_from_shared_memory.register(UnicodeText)
def _read_unicode(
    space: UnicodeText, shared_memory: SynchronizedArray[c_int32], n: int = 1
) -> SharedTextBatch:
    # Gymnasium reads this once, when the vector env is made, and reads the result after
    # every step: it must be a view of the buffer, not the strings of that moment.
    data = np.frombuffer(memoryview(shared_memory.get_obj()), dtype=np.int32).reshape(
        (n, space.max_length)
    )
    return SharedTextBatch(data)
