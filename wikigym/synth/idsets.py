"""Sets of entity ids as sorted numpy arrays (ascending, no repeats).

The sampler and the evaluator keep their entity sets this way: an intersection looks the
smaller set up in the larger one by bisection (``O(small * log(large))``, no hashing), and
the order of every result is the ids' own, so nothing depends on hash or insertion order.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

ID_DTYPE = np.int64
EMPTY = np.zeros(0, dtype=ID_DTYPE)
EMPTY.flags.writeable = False


def ids_of(items: Iterable[int]) -> np.ndarray:
    """The sorted unique array of the ints ``items``."""
    got = sorted(set(items))
    return np.array(got, dtype=ID_DTYPE) if got else EMPTY


def as_ids(arr: np.ndarray) -> np.ndarray:
    """``arr`` (sorted unique ids of any integer dtype) as :data:`ID_DTYPE`."""
    return arr if arr.dtype == ID_DTYPE else arr.astype(ID_DTYPE)


def unique_ids(arr: np.ndarray) -> np.ndarray:
    """The sorted unique ids of ``arr`` (any order, repeats allowed)."""
    if len(arr) <= 1:
        return as_ids(arr)
    s = np.sort(arr)
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return as_ids(s[keep])


def has(ids: np.ndarray, x: int) -> bool:
    """Whether ``x`` is in ``ids``."""
    i = int(ids.searchsorted(x))
    return i < len(ids) and int(ids[i]) == x


def intersect(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a & b``: the smaller set's members found in the larger one by bisection."""
    if len(a) > len(b):
        a, b = b, a
    if not len(a) or not len(b):
        return EMPTY
    j = b.searchsorted(a)
    np.minimum(j, len(b) - 1, out=j)
    return a[b[j] == a]


def intersect_all(sets: list[np.ndarray]) -> np.ndarray:
    """The intersection of ``sets`` (at least one), the smallest first."""
    ordered = sorted(sets, key=len)
    acc = ordered[0]
    for s in ordered[1:]:
        if not len(acc):
            break
        acc = intersect(acc, s)
    return acc


def union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a | b``."""
    if not len(a):
        return b
    if not len(b):
        return a
    return unique_ids(np.concatenate((a, b)))


def union_all(sets: list[np.ndarray]) -> np.ndarray:
    """The union of ``sets`` (empty for none)."""
    live = [s for s in sets if len(s)]
    if not live:
        return EMPTY
    if len(live) == 1:
        return live[0]
    return unique_ids(np.concatenate(live))


def minus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a - b``."""
    if not len(a) or not len(b):
        return a
    j = b.searchsorted(a)
    np.minimum(j, len(b) - 1, out=j)
    return a[b[j] != a]


def equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two id sets hold the same ids."""
    return len(a) == len(b) and bool(np.array_equal(a, b))


__all__ = [
    "EMPTY",
    "ID_DTYPE",
    "as_ids",
    "equal",
    "has",
    "ids_of",
    "intersect",
    "intersect_all",
    "minus",
    "union",
    "union_all",
    "unique_ids",
]
