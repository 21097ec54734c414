"""The order of blocks: one legal GPU order per batching, and the rule that says when it shows.

The blocks of a pass run every instruction together, in blockIdx order; passes run one
after another. A kernel whose control flow depends on other blocks' atomics (a lock taken
with atomicCAS, a ticket counter) sees a different, equally legal, interleaving at each
``blocks_per_pass``: its result stays right, its counters may move. ``blocks_per_pass=1``
runs the blocks one after another, as the reference engine does, and counts as it does.
"""

import numpy as np
import pytest

from simtdocs import launch, reference


def take_a_ticket(blk, lock, order, counter):
    """Thread 0 of each block spins on a lock (atomicCAS 0 → 1), takes the next ticket and
    writes it at its block's slot, then releases the lock (atomicExch → 0)."""
    waiting = (blk.tx == 0) & (blk.bx >= 0)  # one row per block: the blocks spin on their own
    while waiting.any():
        got = waiting & (blk.atomic_cas(lock, 0 * blk.tx, 0, 1, mask=waiting) == 0)
        ticket = blk.atomic_add(counter, 0 * blk.tx, 1, mask=got)
        blk.store(order, blk.bx + 0 * blk.tx, ticket, mask=got)
        blk.atomic_exch(lock, 0 * blk.tx, 0, mask=got)
        waiting &= ~got


def run(engine, **kw):
    blocks = 6
    lock, order, counter = np.zeros(1, np.int32), np.full(blocks, -1, np.int32), np.zeros(1, np.int32)
    stats = engine(take_a_ticket, grid=blocks, block=32, args=(lock, order, counter), **kw)
    return stats, order


@pytest.mark.parametrize("per_pass", [1, 2, 3, None])
def test_every_batching_gives_each_block_one_ticket(per_pass):
    _, order = run(launch, blocks_per_pass=per_pass)
    np.testing.assert_array_equal(order, np.arange(6))  # blocks win the lock in blockIdx order


def test_the_spin_count_depends_on_the_batching_and_one_block_per_pass_counts_as_the_reference():
    cas = {}
    for per_pass in (1, 2, 3, None):
        stats, _ = run(launch, blocks_per_pass=per_pass)
        cas[per_pass] = next(c.atomics for s, c in stats.by_site.items() if "atomic_cas" in s.source)
    # One block at a time, every block wins at once: 6 CAS. Batched, the blocks of a pass
    # contend: with k blocks per pass, the j-th wins at its (j + 1)-th try.
    assert cas == {1: 6, 2: 3 * (1 + 2), 3: 2 * (1 + 2 + 3), None: 1 + 2 + 3 + 4 + 5 + 6}
    ref, _ = run(reference.launch)
    assert ref.totals == run(launch, blocks_per_pass=1)[0].totals
