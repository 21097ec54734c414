"""Warp-level operations: shuffles and votes, which move values between the lanes of a warp.

A shuffle lets lane ``l`` read a register of another lane of its warp. Where the source
lane lies past the warp's width (``l + delta ≥ 32`` for ``shfl_down``, ``l - delta < 0`` for
``shfl_up``) the lane keeps its own value, as CUDA defines. A source inside the width that
does not take part (outside ``mask``, or a missing lane of a partial last warp) has an
undefined value on hardware: here it is an error. Votes combine a predicate over the
active lanes of a warp.
"""

from __future__ import annotations

import numpy as np

from .diagnostics import inactive_source
from .indexing import per_thread
from .threads import WARP_SIZE


def shuffle(blk, site, c, lanes, value, source_lane, name: str):
    """``value`` of lane ``source_lane`` of the same warp, for every active thread.

    ``source_lane`` is an int array per thread (shape (T,) or (B, T)); outside [0, 32) the
    thread keeps its own value.
    """
    v = np.asarray(value)
    v = per_thread(v, blk.nblocks, blk.nthreads, site, "value", v.shape[2:] if v.ndim > 2 else ())
    T = blk.nthreads
    src_lane = np.broadcast_to(np.asarray(source_lane, dtype=np.int64), (blk.nblocks, T))
    own = np.broadcast_to(np.arange(T), (blk.nblocks, T))
    inside = (src_lane >= 0) & (src_lane < WARP_SIZE)
    src = np.where(inside, own - own % WARP_SIZE + src_lane, own)
    exists = src < T
    src = np.where(exists, src, own)
    source_runs = exists if lanes.all else exists & np.take_along_axis(lanes.mask, src, axis=1)
    bad = ~source_runs & inside if lanes.all else ~source_runs & inside & lanes.mask
    if bad.any():
        b = int(np.nonzero(bad.any(axis=1))[0][0])
        threads = np.nonzero(bad[b])[0]
        sources = np.where(exists[b, threads], src[b, threads], own[b, threads] - own[b, threads] % WARP_SIZE
                           + src_lane[b, threads])
        raise inactive_source(name, site, lanes.block_of(b), threads, sources)
    c.shuffles += blk._issue(c, lanes)
    idx = src.reshape(src.shape + (1,) * (v.ndim - 2))
    out = np.take_along_axis(v, np.broadcast_to(idx, src.shape + v.shape[2:]), axis=1)
    if not lanes.all:
        out = np.where(lanes.mask.reshape(lanes.mask.shape + (1,) * (v.ndim - 2)), out, v)
    return out


def vote(blk, site, c, lanes, pred, how: str):
    """``__ballot_sync`` (``how="ballot"``), ``__any_sync`` or ``__all_sync`` for every thread."""
    p = per_thread(np.asarray(pred, dtype=bool), blk.nblocks, blk.nthreads, site, "predicate")
    c.votes += blk._issue(c, lanes)
    geo = lanes.geo
    active = np.ones(p.shape, bool) if lanes.all else lanes.mask
    yes = geo.rows(p & active, False)
    if how == "ballot":
        bits = (yes.astype(np.uint64) << np.arange(WARP_SIZE, dtype=np.uint64)).sum(axis=1).astype(np.uint32)
        out = np.repeat(bits.reshape(blk.nblocks, geo.warps), WARP_SIZE, axis=1)[:, :blk.nthreads]
        return np.where(active, out, np.uint32(0))
    if how == "any":
        per_warp = yes.any(axis=1)
    else:
        per_warp = ~(geo.rows(active & ~p, False).any(axis=1))
    out = np.repeat(per_warp.reshape(blk.nblocks, geo.warps), WARP_SIZE, axis=1)[:, :blk.nthreads]
    return out & active
