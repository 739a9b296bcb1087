"""Compact read-only columns for the synth graph: interned strings and typed views.

The graph keeps its facts in numpy arrays (a few bytes per fact) instead of Python objects
(about a hundred bytes each). These classes give those arrays the shapes synth reads: a
sequence of strings stored as one UTF-8 blob and offsets, and per-row views that answer
``column[row]`` with a Python ``int``, ``str`` or ``float`` (never a numpy scalar, so that
``isinstance(x, int)`` and set membership behave as with plain lists).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from typing import TypeVar, overload

import numpy as np
import pyarrow as pa

T = TypeVar("T")


def mv(array: np.ndarray) -> memoryview:
    """A memoryview of ``array`` (made contiguous): indexing it gives Python numbers."""
    return np.ascontiguousarray(array).data


def index_dtype(top: int) -> type[np.signedinteger]:
    """The narrowest of int32 and int64 that holds every value in ``[-top - 1, top]``."""
    return np.int32 if top < 2**31 - 1 else np.int64


class Strings(Sequence[str]):
    """Strings as one UTF-8 blob and offsets (int32 below 2 GiB of text, else int64): about
    len + 4 bytes each.

    Args:
        data: The concatenated UTF-8 bytes.
        offsets: ``len + 1`` offsets into ``data`` (string ``i`` is ``data[o[i]:o[i + 1]]``).
    """

    __slots__ = ("_data", "_mv", "_offsets")

    def __init__(self, data: bytes, offsets: np.ndarray) -> None:
        self._data = data
        self._offsets = np.ascontiguousarray(offsets, dtype=index_dtype(len(data)))
        self._mv = mv(self._offsets)

    @classmethod
    def from_arrow(cls, array: pa.Array | pa.ChunkedArray) -> Strings:
        """The strings of an Arrow string column (nulls read as empty strings)."""
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks() if array.num_chunks else pa.array([], pa.string())
        arr = array.cast(pa.large_string()).fill_null("")
        bufs = arr.buffers()
        n = len(arr)
        offsets = np.frombuffer(bufs[1], dtype=np.int64, count=n + 1, offset=arr.offset * 8)
        data = bufs[2].to_pybytes() if bufs[2] is not None else b""
        return cls(data, offsets.copy())

    @classmethod
    def from_list(cls, values: Sequence[str]) -> Strings:
        return cls.from_arrow(pa.array(values, pa.large_string()))

    def __len__(self) -> int:
        return len(self._mv) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        mv = self._mv
        if i < 0:
            i += len(mv) - 1
            if i < 0:
                raise IndexError("string index out of range")
        return self._data[mv[i] : mv[i + 1]].decode()

    def __iter__(self) -> Iterator[str]:
        data, mv = self._data, self._mv
        for i in range(len(mv) - 1):
            yield data[mv[i] : mv[i + 1]].decode()

    def find(self, value: str) -> int:
        """The index of ``value`` in these strings, which must be sorted; -1 if absent."""
        i = bisect.bisect_left(self, value)
        return i if i < len(self) and self[i] == value else -1

    def nbytes(self) -> int:
        return len(self._data) + self._offsets.nbytes


class BlockInts(Sequence[int]):
    """Integers stored as a base per block of ``BLOCK`` rows plus a uint16 offset per row:
    2 bytes a row instead of 4 for columns whose values stay close within a block (fact
    ids in fact order, their passages). Build with :meth:`pack`, which declines (None)
    when some block spans 2^16 or more."""

    BLOCK = 256
    __slots__ = ("_base", "_bmv", "_dtype", "_off", "_omv")

    def __init__(self, base: np.ndarray, off: np.ndarray, dtype: np.dtype) -> None:
        self._base, self._off, self._dtype = base, off, dtype
        self._bmv, self._omv = mv(base), mv(off)

    @classmethod
    def pack(cls, values: np.ndarray) -> BlockInts | None:
        """``values`` packed, or None when a block's values span 2^16 or more."""
        n = len(values)
        starts = np.arange(0, n, cls.BLOCK)
        if not n:
            return cls(np.zeros(0, dtype=values.dtype), np.zeros(0, dtype=np.uint16), values.dtype)
        base = np.minimum.reduceat(values, starts)
        span = np.maximum.reduceat(values, starts).astype(np.int64) - base
        if int(span.max()) >= 2**16:
            return None
        off = (values - np.repeat(base, cls.BLOCK)[:n]).astype(np.uint16)
        return cls(base, off, values.dtype)

    def __len__(self) -> int:
        return len(self._omv)

    def __getitem__(self, i: int) -> int:  # type: ignore[override]
        if i < 0:
            i += len(self._omv)
        return self._bmv[i >> 8] + self._omv[i]

    def __iter__(self) -> Iterator[int]:
        return iter(self.to_numpy().tolist())

    def to_numpy(self) -> np.ndarray:
        """The values as one array (of the packed column's dtype)."""
        n = len(self._off)
        return (np.repeat(self._base, self.BLOCK)[:n] + self._off).astype(self._dtype)

    def nbytes(self) -> int:
        return self._base.nbytes + self._off.nbytes


class Codes(Sequence[str | None]):
    """``codes[i]`` read through a table of names; a negative code reads as None."""

    __slots__ = ("_mv", "names")

    def __init__(self, codes: np.ndarray, names: Sequence[str]) -> None:
        self._mv = mv(codes)
        self.names = list(names)

    def __len__(self) -> int:
        return len(self._mv)

    def __getitem__(self, i: int) -> str | None:  # type: ignore[override]
        c = self._mv[i]
        return self.names[c] if c >= 0 else None

    def __iter__(self) -> Iterator[str | None]:
        names = self.names
        for c in self._mv:
            yield names[c] if c >= 0 else None


class Names(Sequence[str]):
    """``names[codes[i]]``: a per-row string column from small integer codes."""

    __slots__ = ("_mv", "_names")

    def __init__(self, codes: np.ndarray, names: Sequence[str]) -> None:
        self._mv = mv(codes)
        self._names = list(names)

    def __len__(self) -> int:
        return len(self._mv)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        return self._names[self._mv[i]]

    def __iter__(self) -> Iterator[str]:
        names = self._names
        for c in self._mv:
            yield names[c]


class Nodes(Sequence[int | str]):
    """Encoded nodes: ``code >= 0`` is that entity, ``code < 0`` the literal key ``-1 - code``."""

    __slots__ = ("_keys", "_mv")

    def __init__(self, codes: np.ndarray, keys: Strings) -> None:
        self._mv = mv(codes)
        self._keys = keys

    def __len__(self) -> int:
        return len(self._mv)

    def __getitem__(self, i: int) -> int | str:  # type: ignore[override]
        c = self._mv[i]
        return c if c >= 0 else self._keys[-1 - c]

    def __iter__(self) -> Iterator[int | str]:
        keys = self._keys
        for c in self._mv:
            yield c if c >= 0 else keys[-1 - c]


class Through(Sequence[T]):
    """``values[index[i]]``: a per-row column read through a per-value one."""

    __slots__ = ("_mv", "_values")

    def __init__(self, index: np.ndarray, values: Sequence[T]) -> None:
        self._mv = mv(index)
        self._values = values

    def __len__(self) -> int:
        return len(self._mv)

    def __getitem__(self, i: int) -> T:  # type: ignore[override]
        return self._values[self._mv[i]]


class Measures(Sequence[float | None]):
    """Float values where NaN reads as None (a value without a measure)."""

    __slots__ = ("_index", "_mv")

    def __init__(self, values: np.ndarray, index: np.ndarray | None = None) -> None:
        self._mv = mv(np.asarray(values, dtype=np.float64))
        self._index = None if index is None else mv(index)

    def __len__(self) -> int:
        return len(self._index if self._index is not None else self._mv)

    def __getitem__(self, i: int) -> float | None:  # type: ignore[override]
        m = self._mv[self._index[i] if self._index is not None else i]
        return None if m != m else m  # NaN: no measure


class Lists(Sequence[tuple[str, ...]]):
    """Tuples of strings stored flat: item ``i`` is ``strings[o[i]:o[i + 1]]``."""

    __slots__ = ("_mv", "_offsets", "_strings")

    def __init__(self, strings: Strings, offsets: np.ndarray) -> None:
        self._strings = strings
        top = int(offsets[-1]) if len(offsets) else 0
        self._offsets = np.ascontiguousarray(offsets, dtype=index_dtype(top))
        self._mv = mv(self._offsets)

    @classmethod
    def from_arrow(cls, array: pa.Array | pa.ChunkedArray) -> Lists:
        """The lists of an Arrow ``list<string>`` column (nulls read as empty tuples)."""
        if isinstance(array, pa.ChunkedArray):
            array = (
                array.combine_chunks() if array.num_chunks else pa.array([], pa.list_(pa.string()))
            )
        arr = array.cast(pa.large_list(pa.large_string()))
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        lengths = np.where(valid, pc_list_lengths(arr), 0).astype(np.int64)
        offsets = np.zeros(len(arr) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return cls(Strings.from_arrow(arr.flatten()), offsets)

    def __len__(self) -> int:
        return len(self._mv) - 1

    def offsets(self) -> np.ndarray:
        return self._offsets

    def nbytes(self) -> int:
        return self._strings.nbytes() + self._offsets.nbytes

    def __getitem__(self, i: int) -> tuple[str, ...]:  # type: ignore[override]
        mv, s = self._mv, self._strings
        return tuple(s[j] for j in range(mv[i], mv[i + 1]))


def pc_list_lengths(arr: pa.Array) -> np.ndarray:
    """Lengths of an Arrow list array (0 for nulls)."""
    import pyarrow.compute as pc

    return pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False)


def first_per_group(groups: np.ndarray, size: int) -> np.ndarray:
    """For each group ``0..size-1``, the first position where ``groups`` holds it (-1 if none)."""
    out = np.full(size, -1, dtype=np.int64)
    if len(groups):
        uniq, first = np.unique(groups, return_index=True)
        out[uniq] = first
    return out
