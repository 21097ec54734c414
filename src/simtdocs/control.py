"""Control flow: branches, barriers and plain arithmetic, counted per warp.

A branch whose condition differs between the active lanes of a warp is *divergent*: the
warp runs both sides, one after the other, with part of its lanes masked off. A barrier
(``__syncthreads``) must be reached by every thread of a block that has not exited, or by
none: since Volta it "will not succeed until reached by all non-exited threads in the
block" (CUDA C++ Programming Guide, independent thread scheduling; PTX ``exit``: "if the
exiting threads are holding up the barrier, the barrier is released"), so
``if (i >= n) return;`` before ``__syncthreads()`` is legal (``blk.exit``).
"""

from __future__ import annotations

import numpy as np

from .diagnostics import divergent_barrier
from .indexing import one_row, per_thread
from .threads import WARP_SIZE, Lanes, branch_mask, warp_all, warp_any, warp_bits


def branch(blk, site, c, lanes, cond):
    """Count a branch; return the mask of threads that take the ``if`` side.

    A condition that is the same in every block (built from ``tx``, ``tid``… only) is
    counted for one block; later instructions under its mask find that out again
    (``Block._lanes``) and are counted once for all blocks too.
    """
    cond = np.asarray(cond, dtype=bool)
    T = blk.nthreads
    fits = cond.shape in ((T,), (1, T), (blk.nblocks, T))  # (else per_thread below says where)
    if fits and lanes.all and cond.all():
        # Every thread runs and takes it (a loop that goes on, a guard the pass lies inside):
        # nothing diverges, and the lanes under it are all of them.
        c.branches += blk._issue(c, lanes)
        return branch_mask(np.ones((blk.nblocks, T), bool), lanes)
    if fits and not cond.any():
        # No thread takes it (a loop's last test): nothing diverges, and no lane runs under it.
        c.branches += blk._issue(c, lanes)
        none = np.zeros((blk.nblocks, T), bool)
        return branch_mask(none.copy(), Lanes(lanes.geo, blk.first, blk.nblocks, none))
    cond = one_row(cond)
    uniform = lanes.uniform and (cond.ndim < 2 or cond.shape[0] == 1)
    if uniform:
        reach = lanes.single().mask
        cond = per_thread(cond, 1, blk.nthreads, site, "condition")
    else:
        reach = lanes.mask
        cond = per_thread(cond, blk.nblocks, blk.nthreads, site, "condition")
    # ``taken`` is never the kernel's own array: it may write into it after the branch.
    taken = cond.copy() if reach is None else cond & reach
    c.branches += blk._issue(c, lanes)
    # Divergent: some active lane goes each way.
    geo = lanes.geo
    rows = geo.rows(taken, False)
    some = warp_any(rows)
    known = {"row_mask": rows, "row_any": some}  # what the lanes under it would work out again
    if reach is None and not geo.ragged:  # every lane reaches it: some take it, not all
        every = known["row_full"] = warp_all(rows)
        divergent = some & ~every
        everyone = bool(every.all())
    else:
        divergent = some & warp_any(geo.rows(~cond if reach is None else ~cond & reach, False))
        everyone = bool(taken.all())
    diverged = int(np.count_nonzero(divergent))
    c.divergent_branches += diverged * (blk.nblocks if uniform else 1)
    # Many warps diverging: a mask no branch predictor guesses, selected by bits (Lanes.scattered).
    known["scattered"] = diverged * 8 > rows.shape[0]
    # One row per block even when every block agrees: the kernel owns the mask and may narrow
    # it in place with values that differ between blocks (m &= v > 0). The instructions
    # under it take the lanes it remembers, until such a write.
    if taken.shape != (blk.nblocks, blk.nthreads):  # a uniform one stays a broadcast row
        taken = np.broadcast_to(taken, (blk.nblocks, blk.nthreads))
        known = {}  # its rows are one block's
    return branch_mask(taken.copy(), blk._all if everyone else _lanes_taking(blk, taken, known))


def _lanes_taking(blk, taken: np.ndarray, known: dict) -> Lanes:
    """``Lanes`` for the (B, T) mask ``taken``: those of the pass's previous branch when it took
    the very same lanes (a guard the kernel tests again before each statement, as the
    per-thread dialect does for every ``if``), with all they have worked out since; new ones
    start from what the branch ``known`` (its warps' rows) already worked out."""
    memo = blk._branch_memo
    if memo is not None:
        before, lanes = memo
        rows = 1 if taken.strides[0] == 0 and before.strides[0] == 0 else None  # both one row: compare one
        if np.array_equal(before[:rows], taken[:rows]):
            return lanes
    lanes = Lanes(blk._geo, blk.first, blk.nblocks, taken)
    lanes.__dict__.update(known)  # the cached properties of these names: the same values
    blk._branch_memo = (taken, lanes)
    return lanes


def sync(blk, site, c, lanes) -> None:
    """``__syncthreads()`` for the blocks any of whose threads reach it (``lanes``); it waits
    for the threads of each block that have not exited (``blk._exited``), which ``lanes``
    never names (``Block._lanes``)."""
    T = blk.nthreads
    if lanes.all:
        blocks = None
        c.barriers += blk.nblocks
    else:
        reached = lanes.mask.sum(axis=1)
        exited = blk._exited
        alive = T if exited is None else T - np.count_nonzero(exited, axis=1)
        partial = np.nonzero((reached > 0) & (reached < alive))[0]
        if partial.size and "synccheck" in blk._L.tools:
            b = int(partial[0])
            skipped = ~lanes.mask[b] if exited is None else ~lanes.mask[b] & ~exited[b]
            missing = np.nonzero(skipped)[0]
            gone = 0 if exited is None else T - int(alive[b])
            raise divergent_barrier(int(reached[b]), T - gone, lanes.block_of(b), site, missing, gone)
        blocks = reached > 0
        c.barriers += int(np.count_nonzero(blocks))
    blk._issue(c, lanes)
    for arr in blk._shared:
        arr.new_phase(blocks)


def syncwarp(blk, lanes) -> None:
    """``__syncwarp()`` by ``lanes``: for racecheck, what they did to shared memory so far is
    ordered before what their warps do next (``Shared.syncwarp``)."""
    one = lanes.single() if lanes.uniform else lanes
    rows = one.row_mask
    if rows is None:
        rows = np.ones((one.blocks * lanes.geo.warps, WARP_SIZE), bool)
    bits = warp_bits(rows)
    for arr in blk._shared:
        arr.syncwarp(bits.reshape(one.blocks, lanes.geo.warps))
