"""Views over the graph's columns that need nothing else: one fact as a record, and the
entity -> rows index (offsets into an order of rows)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from wikigym.synth.columns import BlockInts, mv


@dataclass(frozen=True, slots=True)
class FactRow:
    """One fact of the graph (a view over its columns)."""

    row: int
    fact_id: int
    subject: int
    relation: str
    obj: int | str
    surface: str
    passage_id: int
    value_type: str


_NONE: tuple[int, ...] = ()


def packed(values: np.ndarray) -> BlockInts | np.ndarray:
    """``values`` as block offsets when they pack, else as they are."""
    got = BlockInts.pack(values)
    return got if got is not None else values


def span_positions(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The positions ``starts[i]..ends[i] - 1`` of every span, concatenated."""
    lengths = ends - starts
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return shift + np.arange(total)


def as_int(x: object) -> int | None:
    """``x`` as a Python int when it is an integer (numpy ones too), else None."""
    if type(x) is int:
        return x
    if isinstance(x, np.integer):
        return int(x)
    return None


class RowIndex(Mapping[int, tuple[int, ...]]):
    """entity -> its fact rows (in fact order): offsets per entity into an order of rows
    (``order`` None: the rows are already in entity order, so the order is the identity
    and is not stored)."""

    def __init__(self, order: np.ndarray | None, offsets: np.ndarray) -> None:
        self._order = order
        self._offsets = offsets
        self._o = mv(order) if order is not None else None
        self._off = mv(offsets)
        self._n = len(offsets) - 1

    def get(self, key: object, default: Any = _NONE) -> Any:
        e = as_int(key)
        if e is None or not 0 <= e < self._n:
            return default
        a, b = self._off[e], self._off[e + 1]
        if b <= a:
            return default
        return tuple(self._o[a:b]) if self._o is not None else tuple(range(a, b))

    def rows_of(self, entity: int) -> Sequence[int]:
        """The rows of ``entity`` (a valid node id) as a sequence."""
        a, b = self._off[entity], self._off[entity + 1]
        return self._o[a:b] if self._o is not None else range(a, b)

    def rows_array(self, entity: int) -> np.ndarray:
        """The rows of ``entity`` (a valid node id) as an array."""
        a, b = self._off[entity], self._off[entity + 1]
        return self._order[a:b] if self._order is not None else np.arange(a, b)

    def rows_of_all(self, entities: np.ndarray) -> np.ndarray:
        """The rows of every entity in ``entities`` (valid node ids), concatenated."""
        off = self._offsets
        spans = span_positions(off[entities], off[entities + 1])
        return self._order[spans] if self._order is not None else spans

    def rows_and_owners(self, entities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`rows_of_all`, and beside each row the entity it belongs to."""
        off = self._offsets
        starts, ends = off[entities], off[entities + 1]
        spans = span_positions(starts, ends)
        owners = np.repeat(entities, ends - starts)
        return (self._order[spans] if self._order is not None else spans), owners

    def nbytes(self) -> int:
        return self._offsets.nbytes + (self._order.nbytes if self._order is not None else 0)

    def __getitem__(self, key: int) -> tuple[int, ...]:
        got = self.get(key, None)
        if got is None:
            raise KeyError(key)
        return got

    def keys_array(self) -> np.ndarray:
        """The entities with at least one row, ascending."""
        return np.flatnonzero(np.diff(self._offsets)).astype(np.int64)

    def __iter__(self) -> Iterator[int]:
        return iter(self.keys_array().tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(np.diff(self._offsets)))

    def __contains__(self, key: object) -> bool:
        return self.get(key, None) is not None
