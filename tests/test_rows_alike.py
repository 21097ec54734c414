"""Per-block arrays whose rows are all alike: ``lane = i % 32`` with ``i = blockIdx.x *
blockDim.x + threadIdx.x`` has a row per block, every row the same.

The fast engine sees such a branch condition, shared index or shuffle source as one row and
counts and moves it once for all blocks (``simtdocs.indexing.one_row``). That must change
nothing: the same data, counters and races as the reference engine, at every batching, and
also when one block's row differs (first, middle or last block of a pass: the shortcut
compares the last row first, then all of them).
"""

import numpy as np
import pytest

from simtdocs import launch, reference

BLOCKS, THREADS = 6, 64


def kernel(blk, x, out, odd):
    """Warp-rotating a block's values through shared memory, a shuffle and a branch, all
    indexed by ``lane``; block ``odd`` (if any) rotates by one lane more than the others."""
    s = blk.shared(THREADS, np.int32, name="s")
    i = blk.bx * blk.bdx + blk.tx
    lane = (i + (blk.bx == odd)) % 32
    v = blk.load(x, i)
    blk.store(s, blk.tx, v)
    blk.sync()
    j = (blk.tx // 32) * 32 + (lane + 5) % 32  # a permutation of each warp's lanes
    high = blk.branch(lane >= 12)
    blk.store(s, j, v * 2, mask=high)
    blk.sync()
    w = blk.load(s, j)
    w = w + blk.shfl(w, lane)
    low = blk.branch(lane < 7)
    blk.store(out, i, w, mask=low)
    blk.store(out, i, w + blk.shfl_down(w, 3), mask=~low)


def numpy_answer(x, odd):
    """The kernel, one block at a time in plain numpy."""
    out = np.zeros_like(x)
    for b in range(BLOCKS):
        tx = np.arange(THREADS)
        lane = (b * THREADS + tx + (b == odd)) % 32
        s = x[b * THREADS:(b + 1) * THREADS].copy()
        j = (tx // 32) * 32 + (lane + 5) % 32
        s[j[lane >= 12]] = 2 * x[b * THREADS + tx[lane >= 12]]
        w = s[j]
        w = w + w[(tx // 32) * 32 + lane]
        down = np.where(tx % 32 + 3 < 32, tx + 3, tx)
        out[b * THREADS + tx] = np.where(lane < 7, w, w + w[down])
    return out


@pytest.mark.parametrize("odd", [-1, 0, 2, BLOCKS - 1], ids=["alike", "first", "middle", "last"])
def test_rows_alike_count_and_move_as_the_reference_does(odd):
    x = np.random.default_rng(7).integers(-99, 99, BLOCKS * THREADS).astype(np.int32)
    ref_args = (x, np.zeros_like(x), odd)
    ref = reference.launch(kernel, BLOCKS, THREADS, args=ref_args)
    np.testing.assert_array_equal(ref_args[1], numpy_answer(x, odd))
    for per_pass in (None, 1, 4):
        args = (x, np.zeros_like(x), odd)
        stats = launch(kernel, BLOCKS, THREADS, args=args, **({} if per_pass is None else {"blocks_per_pass": per_pass}))
        np.testing.assert_array_equal(args[1], ref_args[1])
        assert stats.totals == ref.totals, per_pass
        assert stats.by_site == ref.by_site, per_pass
        assert stats.races == ref.races == []
    t = ref.totals
    # Every shared access is a permutation of 32 banks within a warp: one wavefront per request.
    assert t.shared_bank_conflicts == 0 and t.shared_wavefronts == t.shared_requests
    # lane >= 12 and lane < 7 split every warp (2 per block), whichever block rotates.
    assert t.divergent_branches == 2 * 2 * BLOCKS
