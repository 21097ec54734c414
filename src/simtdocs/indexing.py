"""From what a kernel writes (``a[i]``, ``A[row, col]``) to a flat element index per thread.

Indices are widened to int64 before any arithmetic, so an ``int16`` pixel index or a
``uint8`` id never overflows; each axis of a tuple index is bounds-checked on its own, so
the error can say "column 20 of A[10][20]". Only active lanes are checked: a masked-off
thread may hold any index, as in CUDA where the guarded load never happens.
"""

from __future__ import annotations

import math

import numpy as np

from . import diagnostics
from .diagnostics import Site
from .threads import Lanes

def per_thread(values, blocks: int, threads: int, site: Site, what: str = "value", extra=()) -> np.ndarray:
    """``values`` broadcast to (blocks, threads, *extra), or an error that says where (the
    array itself when it has that shape already: callers only read it)."""
    values = np.asarray(values)
    if values.shape == (blocks, threads) + tuple(extra):
        return values
    try:
        return np.broadcast_to(values, (blocks, threads) + tuple(extra))
    except ValueError:
        more = "".join(f", {e}" for e in extra)
        raise ValueError(
            f"{site}: the {what} has shape {values.shape}, which does not fit the threads of this pass: "
            f"(blocks {blocks}, threads {threads}{more}). Build it from blk.tx/blk.bx… so it has one "
            f"entry per thread."
        ) from None


def one_row(values):
    """``values`` cut to its first row when every block's row is the same, else as it is.

    ``lane = i % 32`` with ``i = blockIdx.x * blockDim.x + threadIdx.x`` has a row per block,
    but every row alike (``blockDim.x`` is a multiple of 32). Seen as one row, a branch on it
    or a shared access through it is counted and moved once for all blocks instead of block
    by block; the rows are compared whole, masked-off lanes included, so nothing is assumed."""
    if isinstance(values, np.ndarray) and values.ndim == 2 and values.shape[0] > 1:
        if not (values[-1] != values[0]).any() and (values[1:] == values[:1]).all():  # the last row first: cheap
            return np.asarray(values)[:1]
    return values


def as_slice(index: np.ndarray):
    """``index`` (1-D) as a slice when it is an ascending run with one step (consecutive
    elements, or every 2nd, 4th, … as a tree reduction's active lanes), else as it is: numpy
    moves data by slices far faster than by an index array."""
    if index.size < 2:
        return slice(int(index[0]), int(index[0]) + 1, 1) if index.size else index
    step = int(index[1]) - int(index[0])
    if step > 0 and index[-1] - index[0] == step * (index.size - 1) and (np.diff(index) == step).all():
        return slice(int(index[0]), int(index[-1]) + 1, step)
    return index


def few_threads(lanes: Lanes, parts: int):
    """The active threads of every block, when every block has the same ones and they are at
    most ``1/parts`` of the block (a halo's first threads, warp 0 of each block): a slice when
    they are one run with one step, else an index array; None otherwise. Kept with the lanes."""
    def find():
        if lanes.one is None:
            return None
        t = np.flatnonzero(lanes.one[0])
        return as_slice(t) if 0 < t.size and t.size * parts <= lanes.geo.threads else None
    return lanes.remember(("few threads", parts), find)


def _index_part(i, lanes: Lanes, site: Site, what: str) -> np.ndarray:
    """One part of an index as the kernel made it (an integer array that fits the pass), not
    yet broadcast: an index shared by every block (``blk.tx``) stays one row."""
    v = np.asarray(i)
    if v.dtype.kind not in "iu":
        raise TypeError(f"{site}: {what} must be an integer array, got dtype {v.dtype}")
    per_thread(v, lanes.blocks, lanes.geo.threads, site, what)  # the shape's check
    return v


def out_of_bounds(v: np.ndarray, n: int, lanes: Lanes) -> np.ndarray | None:
    """The active lanes of ``v`` (any shape that broadcasts to the pass) outside [0, n), as a
    (B, T) mask; None when there are none."""
    if v.size == 0 or (v.min() >= 0 and v.max() < n):  # the usual case, masked or not
        return None
    outside = np.broadcast_to((v < 0) | (v >= n), (lanes.blocks, lanes.geo.threads))
    if lanes.all:
        return outside
    bad = outside & lanes.mask
    return bad if bad.any() else None


def flat_index(name: str, shape, index, lanes: Lanes, width: int, site: Site):
    """The flat element index (B, T) int64 of every thread, and the out-of-bounds lanes.

    Returns ``(flat, bad, report)``: ``bad`` is None or the mask of active lanes out of
    bounds, and ``report(space, verb, itemsize)`` raises the memcheck error for them: the
    first such thread, on the first axis where it is outside, in the reader's terms. Each
    part is checked in its own type and shape, and widened to int64 as it is combined, so
    a row shared by every block is worked on once and an ``int16`` part never overflows.
    """
    size = math.prod(shape)
    if isinstance(index, tuple) and len(index) != len(shape):
        raise IndexError(f"{site}: {len(index)} indices for an array of {len(shape)} dimensions")
    parts = [_index_part(i, lanes, site, "index") for i in (index if isinstance(index, tuple) else (index,))]
    if isinstance(index, tuple):
        checks = [(axis, v, n) for axis, (v, n) in enumerate(zip(parts, shape))]
    else:
        checks = [(None, parts[0], size - (width - 1))]
    flat = parts[0].astype(np.int64, copy=False)
    for v, n in zip(parts[1:], shape[1:]):
        flat = np.add(np.multiply(flat, n, dtype=np.int64), v, dtype=np.int64)
    flat = np.broadcast_to(flat, (lanes.blocks, lanes.geo.threads))
    bads = [(axis, out_of_bounds(v, n, lanes)) for axis, v, n in checks]
    bads = [(axis, b) for axis, b in bads if b is not None]
    if not bads and isinstance(index, tuple) and width > 1:
        bads = [(None, b) for b in [out_of_bounds(flat, size - (width - 1), lanes)] if b is not None]
    if not bads:
        return flat, None, None
    bad = bads[0][1]
    for _, b in bads[1:]:
        bad = bad | b
    dtypes = [v.dtype for v in parts]
    values = [np.broadcast_to(v.astype(np.int64), flat.shape) for v in parts]
    return flat, bad, _reporter(name, shape, parts, dtypes, values, flat, bads, bad, lanes, width, site)


def _reporter(name, shape, parts, dtypes, values, flat, bads, bad, lanes: Lanes, width, site):
    def report(space: str, verb: str, itemsize: int):
        b, t = (int(x[0]) for x in np.nonzero(bad))
        axis, axis_bad = next((axis, m) for axis, m in bads if m[b, t])
        block, thread = lanes.block_of(b), lanes.geo.thread(t)
        threads = np.nonzero(axis_bad[b])[0]
        if axis is None and len(parts) == 1:  # a flat index: the lowest and highest element reached
            v = flat[b, threads]
            first, last = diagnostics.element(name, [v.min()]), diagnostics.element(name, [v.max()])
            value, what = int(flat[b, t]), diagnostics.outside(name, shape, None, int(flat[b, t]), dtypes[0])
        else:
            first, last = (diagnostics.element(name, [x[b, u] for x in values]) for u in (threads[0], threads[-1]))
            if axis is None:
                value, what = int(flat[b, t]), diagnostics.outside(name, shape, None, int(flat[b, t]))
            else:
                value = int(values[axis][b, t])
                what = diagnostics.outside(name, shape, axis, value, dtypes[axis])
        touched = first if first == last else f"{first}…{last}"
        raise diagnostics.out_of_bounds(space, verb, itemsize * width, site, thread, block, value, what,
                                        threads, touched)
    return report
