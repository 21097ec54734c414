"""From what a kernel writes (``a[i]``, ``A[row, col]``) to a flat element index per thread.

Indices are widened to int64 before any arithmetic, so an ``int16`` pixel index or a
``uint8`` id never overflows; each axis of a tuple index is bounds-checked on its own, so
the error can say "column 20 of A[10][20]". Only active lanes are checked: a masked-off
thread may hold any index, as in CUDA where the guarded load never happens.
"""

from __future__ import annotations

import numpy as np

from . import diagnostics
from .diagnostics import Site
from .threads import Lanes

_AXIS_NAMES = {2: ("row", "column")}


def per_thread(values, blocks: int, threads: int, site: Site, what: str = "value", extra=()) -> np.ndarray:
    """``values`` broadcast to (blocks, threads, *extra), or an error that says where."""
    values = np.asarray(values)
    try:
        return np.broadcast_to(values, (blocks, threads) + tuple(extra))
    except ValueError:
        more = "".join(f", {e}" for e in extra)
        raise ValueError(
            f"{site}: the {what} has shape {values.shape}, which does not fit the threads of this pass: "
            f"(blocks {blocks}, threads {threads}{more}). Build it from blk.tx/blk.bx… so it has one "
            f"entry per thread."
        ) from None


def _as_int64(i, lanes: Lanes, site: Site, what: str) -> np.ndarray:
    v = np.asarray(i)
    if v.dtype.kind not in "iu":
        raise TypeError(f"{site}: {what} must be an integer array, got dtype {v.dtype}")
    # Widen before broadcasting: an index shared by every block (blk.tx) stays one row.
    return per_thread(v.astype(np.int64, copy=False), lanes.blocks, lanes.geo.threads, site, what)


def out_of_bounds(v: np.ndarray, n: int, lanes: Lanes) -> np.ndarray | None:
    """The active lanes of ``v`` outside [0, n), as a (B, T) mask; None when there are none."""
    if v.size == 0 or (v.min() >= 0 and v.max() < n):  # the usual case, masked or not
        return None
    if lanes.all:
        return (v < 0) | (v >= n)
    bad = ((v < 0) | (v >= n)) & lanes.mask
    return bad if bad.any() else None


def flat_index(name: str, shape, index, lanes: Lanes, width: int, site: Site):
    """The flat element index (B, T) int64 of every thread, and the out-of-bounds lanes.

    Returns ``(flat, bad, report)``: ``bad`` is None or the mask of active lanes out of
    bounds, and ``report(space, verb, itemsize)`` raises the memcheck error for them.
    """
    size = int(np.prod(shape))
    if isinstance(index, tuple):
        if len(index) != len(shape):
            raise IndexError(f"{site}: {len(index)} indices for an array of {len(shape)} dimensions")
        flat, bad, report = None, None, None
        for axis, (i, n) in enumerate(zip(index, shape)):
            v = _as_int64(i, lanes, site, "index")
            axis_bad = out_of_bounds(v, n, lanes)
            if axis_bad is not None:
                if bad is None:
                    report = _reporter(name, shape, axis, v, axis_bad, lanes, site, width)
                    bad = axis_bad
                else:
                    bad = bad | axis_bad
            flat = v if flat is None else flat * n + v
        if width > 1 and bad is None:
            bad = out_of_bounds(flat, size - (width - 1), lanes)
            if bad is not None:
                report = _reporter(name, (size,), None, flat, bad, lanes, site, width)
        return flat, bad, report
    flat = _as_int64(index, lanes, site, "index")
    bad = out_of_bounds(flat, size - (width - 1), lanes)
    report = None if bad is None else _reporter(name, shape, None, flat, bad, lanes, site, width)
    return flat, bad, report


def _reporter(name, shape, axis, v, bad, lanes: Lanes, site, width):
    def report(space: str, verb: str, itemsize: int):
        b, t = (int(x[0]) for x in np.nonzero(bad))
        block, thread = lanes.block_of(b), lanes.geo.thread(t)
        threads = np.nonzero(bad[b])[0]
        values = v[b, threads]
        first, last = int(values.min()), int(values.max())
        touched = f"{name}[{first}]" if first == last else f"{name}[{first}]…{name}[{last}]"
        if axis is None:
            what = f"{name} has {int(np.prod(shape)):,} elements"
        else:
            words = _AXIS_NAMES.get(len(shape))
            axis_name = words[axis] if words else f"axis {axis}"
            dims = "".join(f"[{n}]" for n in shape)
            what = f"{axis_name} {int(v[b, t])} of {name}{dims}: {name} has {shape[axis]:,} {axis_name}s " \
                   f"(dimension {axis} of {name} has {shape[axis]})"
        raise diagnostics.out_of_bounds(space, verb, itemsize * width, site, thread, block, int(v[b, t]), what,
                                        threads, touched)
    return report
