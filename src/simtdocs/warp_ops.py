"""Warp-level operations: shuffles and votes, which move values between the lanes of a warp.

A shuffle lets lane ``l`` read a register of another lane of its warp. Where the source
lane lies past the warp's width (``l + delta ≥ 32`` for ``shfl_down``, ``l - delta < 0`` for
``shfl_up``) the lane keeps its own value, as CUDA defines. A source inside the width that
does not take part (outside ``mask``, exited, or a missing lane of a partial last warp) has
an undefined value on hardware (PTX ISA, ``shfl``: "results are undefined … if an active
thread sources a register from an inactive thread"). Here, where the values a shuffle
returns become the reader's own numpy array, that read is an error, whose message says so
and how to avoid it; the compiled dialects (``simtdocs.cuda``) give an undefined value and
stop only where it reaches memory, an address or a branch (``cuda/runtime.py``).

Lanes named in a mask that have exited (``blk.exit``, the dialect's ``return``) are chosen
to behave as PTX's ``.sync`` instructions treat "non-exited threads in membermask"
(``match.sync``, ``redux.sync``; ``barrier`` "wait[s] for all non-exited threads"): they
do not take part. ``syncwarp`` does not wait for them; a vote does not count them (their
ballot bit is 0, ``any``/``all`` are over the lanes still running); a shuffle that reads
one reads a lane that does not take part (above); ``syncthreads_count``/``and``/``or``
combine the predicates of the threads that have not exited (``barrier.red``: "the number
of threads with a True predicate"). The mask itself may not name an exited lane: it is
the lanes that execute the instruction, and an exited thread executes nothing.

Votes combine a predicate over the active lanes of a warp.
"""

from __future__ import annotations

import numpy as np

from .diagnostics import SimulatorError, inactive_source
from .indexing import as_slice, few_threads, one_row, per_thread
from .threads import WARP_SIZE, warp_any, warp_bits


def shuffle(blk, site, c, lanes, value, source_lane, name: str):
    """``value`` of lane ``source_lane`` of the same warp, for every active thread.

    ``source_lane`` is an int array per thread (shape (T,), (1, T) or (B, T)); outside
    [0, 32) the thread keeps its own value. When every block has the same source lanes (the
    four shuffles with a constant delta), the sources are worked out for one block and the
    values move in one gather along the thread axis.
    """
    v = np.asarray(value)
    v = per_thread(v, blk.nblocks, blk.nthreads, site, "value", v.shape[2:] if v.ndim > 2 else ())
    T = blk.nthreads
    src_lane = one_row(np.asarray(source_lane, dtype=np.int64))
    alike = src_lane.ndim < 2 or src_lane.shape[0] == 1
    src_lane = np.broadcast_to(src_lane, (1 if alike else blk.nblocks, T))
    own = np.arange(T)
    inside = (src_lane >= 0) & (src_lane < WARP_SIZE)
    src = np.where(inside, own - own % WARP_SIZE + src_lane, own)
    exists = src < T
    src = np.where(exists, src, own)
    if lanes.all:
        bad = ~exists & inside
    elif alike and lanes.uniform:  # the same lanes and sources in every block: check one
        m = lanes.mask[:1]
        bad = ~(exists & m[:, src[0]]) & inside & m
    else:
        m = lanes.mask
        bad = ~(exists & np.take_along_axis(m, np.broadcast_to(src, m.shape), axis=1)) & inside & m
    if bad.any():
        b = int(np.nonzero(bad.any(axis=1))[0][0])
        threads = np.nonzero(bad[b])[0]
        s, e, sl = src[min(b, src.shape[0] - 1)], exists[min(b, src.shape[0] - 1)], src_lane[min(b, src.shape[0] - 1)]
        sources = np.where(e[threads], s[threads], threads - threads % WARP_SIZE + sl[threads])
        raise undefined_source(name, site, lanes.block_of(b), threads, sources)
    c.shuffles += blk._issue(c, lanes)
    few = few_threads(lanes, 4) if alike else None
    if few is not None:
        # The same few lanes in every block (warp 0 scanning the warps' sums): the others
        # keep their own value, so only the few move.
        out = np.array(v, order="C")
        picked = as_slice(src[0][few])
        out[:, few] = v[:, picked] if isinstance(picked, slice) else np.take(v, picked, axis=1)
        return out
    if alike:
        out = _gather_lanes(v, src[0])
    else:
        idx = src.reshape(src.shape + (1,) * (v.ndim - 2))
        out = np.take_along_axis(v, np.broadcast_to(idx, src.shape + v.shape[2:]), axis=1)
    if not lanes.all:
        out = _blend(lanes, out, v)
    return out


#: What the mask API's error adds to ``diagnostics.inactive_source``: why it stops, and how to avoid it.
AVOID = ("\n    here the shuffle's result becomes your own numpy array, so reading such a lane stops the launch "
         "(compiled with simtdocs.cuda, the value is only undefined: an error once it is stored, used as an "
         "index or branched on). To avoid it, shuffle under a mask= whose lanes read only lanes of that same "
         "mask that exist (for shfl_down by d in a block of T threads, lanes t with t + d < T, or whole warps), "
         "and keep the other lanes' values with np.where; or launch whole warps and shuffle before any thread exits")


def undefined_source(name, site, block, threads, sources) -> SimulatorError:
    """The mask API's error for a shuffle that reads a lane that does not take part: the
    message of ``diagnostics.inactive_source`` (which ends "on a GPU that value is
    undefined") and ``AVOID``."""
    err = inactive_source(name, site, block, threads, sources)
    err.args = (str(err) + AVOID,)
    return err.at(site=site, block=tuple(int(k) for k in block))


def _gather_lanes(v: np.ndarray, src: np.ndarray) -> np.ndarray:
    """``v[:, src]`` for every block: thread t takes the value of thread ``src[t]``. When each
    warp reads its own lanes the same way in a few runs of consecutive lanes (a shift by a
    constant delta: two runs), the warps' rows move as those runs, by slices."""
    T = v.shape[1]
    if T % WARP_SIZE == 0:
        W = T // WARP_SIZE
        pattern = src.reshape(W, WARP_SIZE) - WARP_SIZE * np.arange(W)[:, None]
        p = pattern[0]
        cuts = np.flatnonzero(np.diff(p) != 1) + 1
        if cuts.size < 4 and p.min() >= 0 and p.max() < WARP_SIZE and (pattern == p).all():
            out = np.empty(v.shape, v.dtype)  # C order, whatever v's strides: ``into`` must be a view
            rows, into = (a.reshape((a.shape[0], W, WARP_SIZE) + a.shape[2:]) for a in (v, out))
            for a, b in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [WARP_SIZE]])):
                into[:, :, a:b] = rows[:, :, p[a]:p[a] + b - a]
            return out
    return np.take(v, src, axis=1)


def _blend(lanes, out: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``out`` on the active lanes, ``v`` on the others; numbers bit by bit with the lanes'
    ``keep`` mask (``threads.idle_ones``: no branch per lane)."""
    size = v.dtype.itemsize
    if v.dtype.kind in "biuf" and size in (1, 2, 4, 8) and v.dtype == out.dtype and v.ndim == 2:
        keep = lanes.keep(size)
        bits, old = out.view(f"u{size}"), np.ascontiguousarray(v).view(f"u{size}")
        np.bitwise_and(bits, keep, out=bits)
        bits |= old & ~keep
        return out
    return np.where(lanes.mask.reshape(lanes.mask.shape + (1,) * (v.ndim - 2)), out, v)


def vote(blk, site, c, lanes, pred, how: str):
    """``__ballot_sync`` (``how="ballot"``), ``__any_sync`` or ``__all_sync`` for every thread.

    A warp's 32 predicates become the ballot's 32 bits (``threads.warp_bits``); ``any`` and
    ``all`` read the 32 bytes as four 64-bit words."""
    p = per_thread(np.asarray(pred, dtype=bool), blk.nblocks, blk.nthreads, site, "predicate")
    c.votes += blk._issue(c, lanes)
    geo = lanes.geo
    active = None if lanes.all else lanes.mask
    if how == "all":  # every active lane's predicate: no active lane says no
        yes = geo.rows(~p if active is None else active & ~p, False)
    else:
        yes = geo.rows(p if active is None else p & active, False)
    if how == "ballot":
        bits = warp_bits(yes)
        out = np.repeat(bits.reshape(blk.nblocks, geo.warps), WARP_SIZE, axis=1)[:, :blk.nthreads]
        return out if active is None else np.where(active, out, np.uint32(0))
    some = warp_any(yes)
    per_warp = some if how == "any" else ~some
    out = np.repeat(per_warp.reshape(blk.nblocks, geo.warps), WARP_SIZE, axis=1)[:, :blk.nthreads]
    return out if active is None else out & active
