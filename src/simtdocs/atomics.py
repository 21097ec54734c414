"""Atomics: read-modify-write operations that never lose an update.

One atomic instruction updates memory for its active lanes one after another, in a fixed
serial order (blocks of the pass, then warps, then lanes), and every lane gets back the
value it replaced. So ``atomic_add(counter, 0, 1)`` run by 64 threads hands out the tickets
0 to 63. CUDA fixes no order between lanes; fixing one makes the simulator repeatable.

``apply`` does this for a flat memory, one element index and one value per lane, without a
Python loop per lane: integer additions by a running sum per element, the other operations
(and float additions, whose rounding depends on the order) in rounds, each round taking the next lane of every element at once.
"""

from __future__ import annotations

import numpy as np

OPS = ("add", "max", "min", "exch", "cas")


def _combine(op: str, old, value, compare):
    if op == "add":
        return old + value
    if op == "max":
        return np.maximum(old, value)
    if op == "min":
        return np.minimum(old, value)
    if op == "exch":
        return value
    if op == "cas":
        return np.where(old == compare, value, old)
    raise ValueError(f"unknown atomic operation {op!r}")


def apply(mem: np.ndarray, keys: np.ndarray, values: np.ndarray, op: str, compare=None) -> np.ndarray:
    """Apply ``op`` for every lane in order; return the old value each lane saw.

    ``mem`` is flat; ``keys`` the element of each lane, ``values`` (and for ``cas`` the
    ``compare`` values) one per lane, all in serial order.
    """
    values = values.astype(mem.dtype, copy=False)
    if keys.size == 0:
        return values[:0].copy()
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    first = np.ones(k.size, dtype=bool)
    first[1:] = k[1:] != k[:-1]
    if op == "add" and mem.dtype.kind in "iu":  # exact in any order: a running sum per element
        v = values[order]
        run = np.cumsum(v, dtype=mem.dtype)
        start = np.maximum.accumulate(np.where(first, np.arange(k.size), 0))
        before = run - v - (run[start] - v[start])  # sum of the earlier lanes on the same element
        old = np.empty_like(v)
        old[order] = mem[k] + before
        np.add.at(mem, keys, values)
        return old
    # Rank of every lane among the lanes on its element: round r serves the r-th of each.
    start = np.maximum.accumulate(np.where(first, np.arange(k.size), 0))
    rank = np.empty(k.size, dtype=np.int64)
    rank[order] = np.arange(k.size) - start
    cmp = None if compare is None else np.asarray(compare, dtype=mem.dtype)
    old = np.empty(keys.size, dtype=mem.dtype)
    for r in range(int(rank.max()) + 1):
        lanes = np.flatnonzero(rank == r)
        where = keys[lanes]
        seen = mem[where]
        old[lanes] = seen
        mem[where] = _combine(op, seen, values[lanes], None if cmp is None else cmp[lanes])
    return old
