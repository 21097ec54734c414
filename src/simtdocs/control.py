"""Control flow: branches, barriers and plain arithmetic, counted per warp.

A branch whose condition differs between the active lanes of a warp is *divergent*: the
warp runs both sides, one after the other, with part of its lanes masked off. A barrier
(``__syncthreads``) must be reached by every thread of a block or by none.
"""

from __future__ import annotations

import numpy as np

from .diagnostics import SynccheckError, fmt3, span
from .indexing import per_thread


def branch(blk, site, c, lanes, cond):
    """Count a branch; return the mask of threads that take the ``if`` side."""
    cond = per_thread(np.asarray(cond, dtype=bool), blk.nblocks, blk.nthreads, site, "condition")
    c.branches += blk._issue(c, lanes)
    taken = cond if lanes.all else cond & lanes.mask
    rows = lanes.geo.rows(taken, False)
    some = rows.any(axis=1)
    # Divergent: some active lane goes each way.
    stays = lanes.geo.rows(~cond if lanes.all else ~cond & lanes.mask, False).any(axis=1)
    c.divergent_branches += int(np.count_nonzero(some & stays))
    return taken.copy()


def sync(blk, site, c, lanes) -> None:
    """``__syncthreads()`` for the blocks any of whose threads reach it (``lanes``)."""
    T = blk.nthreads
    if lanes.all:
        blocks = None
        c.barriers += blk.nblocks
    else:
        reached = lanes.mask.sum(axis=1)
        partial = np.nonzero((reached > 0) & (reached < T))[0]
        if partial.size and "synccheck" in blk._L.tools:
            b = int(partial[0])
            missing = np.nonzero(~lanes.mask[b])[0]
            raise SynccheckError(
                f"Barrier error: __syncthreads() reached by {int(reached[b])} of {T} threads "
                f"of block {fmt3(lanes.block_of(b))} (divergent code)\n    at {site}\n"
                f"    threads {span(missing)} of the block never arrive"
            )
        blocks = reached > 0
        c.barriers += int(np.count_nonzero(blocks))
    blk._issue(c, lanes)
    for arr in blk._shared:
        arr.new_phase(blocks)
