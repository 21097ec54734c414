"""Threads that exit (``blk.exit``, a kernel's ``return``) and the barriers after them, in both
engines, on cases whose counts are derived by hand in the comments.

Since Volta ``__syncthreads()`` "will not succeed until reached by all non-exited threads in
the block" (CUDA C++ Programming Guide, independent thread scheduling): ``if (i >= n)
return;`` before a barrier is legal, the barrier waits for the threads still running, and a
thread that is still running and skips it is the synccheck error it always was.
"""

import re

import numpy as np
import pytest

import simtdocs
from simtdocs import SimulatorError, SynccheckError, reference

#: The reference engine (the definition), the fast engine batched, and one block per pass.
ENGINES = {
    "reference": reference.launch,
    "fast": simtdocs.launch,
    "fast, one block a pass": lambda *a, **k: simtdocs.launch(*a, blocks_per_pass=1, **k),
}


@pytest.fixture(params=list(ENGINES))
def launch(request):
    return ENGINES[request.param]


def line(stats, text):
    """The counters of the one kernel line whose source contains ``text``."""
    (c,) = [lc.counters for lc in stats.lines if text in lc.site.source]
    return c


def copy_through_shared(blk, a, out, n):
    i = blk.bx * blk.bdx + blk.tx
    gone = blk.branch(i >= n)  # if (i >= n)
    blk.exit(gone)  # return;
    ok = ~gone
    s = blk.shared(256, np.float32, name="s")
    blk.store(s, blk.tx, blk.load(a, i, mask=ok), mask=ok)
    blk.sync(mask=ok)
    last = np.minimum(blk.bdx, n - blk.bx * blk.bdx) - 1  # the block's last thread still running
    blk.store(out, i, blk.load(s, last - blk.tx, mask=ok), mask=ok)


def test_the_early_return_kernel_copies_1000_values_through_shared_memory(launch):
    n = 1000
    a = np.random.default_rng(38).random(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    stats = launch(copy_through_shared, grid=4, block=256, args=(a, out, n))
    # Each block reverses its own threads' values; the last block has 1000 - 768 = 232 of them.
    expected = np.concatenate([a[0:256][::-1], a[256:512][::-1], a[512:768][::-1], a[768:1000][::-1]])
    assert np.array_equal(out, expected)
    assert stats.races == []  # the barrier orders the write of s and the reversed read
    # 4 blocks, each passes its barrier once: the 24 exited threads of block 3 are not waited for.
    assert stats.barriers == 4
    sync = line(stats, "blk.sync")
    # Warps with a running thread: 8 in each of blocks 0-2; in block 3, warps 0-6 and warp 7's
    # lanes 0-7 (threads 224-231): 8. 32 warp instructions, 1,000 active lanes.
    assert (sync.warp_instructions, sync.active_lanes, sync.barriers) == (32, 1000, 4)
    guard = line(stats, "blk.branch(i >= n)")
    # 32 warps test the guard; only warp 7 of block 3 (i = 992..1023 around n = 1000) splits.
    assert (guard.branches, guard.divergent_branches) == (32, 1)
    assert not [lc for lc in stats.lines if "blk.exit" in lc.site.source]  # exit costs nothing


@pytest.mark.parametrize("n, barriers, warps", [
    (1000, 4, 32),  # block 3: 232 running threads, in 8 warps
    (900, 4, 29),  # block 3: 900 - 768 = 132 running threads: warps 0-4 (warp 4: lanes 0-3); 24 + 5
    (700, 3, 22),  # block 3 exited whole: no barrier there; block 2: 188 threads, 6 warps; 8 + 8 + 6
    (1024, 4, 32),  # nobody exits
    (0, 0, 0),  # everybody exits: no block has a barrier
])
def test_a_partial_last_block_passes_its_barrier_without_its_exited_threads(launch, n, barriers, warps):
    def kernel(blk, n):
        i = blk.bx * blk.bdx + blk.tx
        blk.exit(i >= n)
        blk.sync(mask=i < n)

    stats = launch(kernel, grid=4, block=256, args=(n,))
    assert (stats.barriers, stats.warp_instructions, stats.active_lanes) == (barriers, warps, n)


def test_a_running_thread_that_skips_the_barrier_is_still_a_synccheck_error(launch):
    def kernel(blk, n):
        i = blk.bx * blk.bdx + blk.tx
        blk.exit(i >= n)
        blk.sync(mask=(i < n) & ~((blk.bx == 3) & (blk.tx == 0)))  # thread 0 of block 3 skips it

    with pytest.raises(SynccheckError) as info:
        launch(kernel, grid=4, block=256, args=(1000,))
    text = str(info.value)
    # Block 3 has 1000 - 768 = 232 running threads; 231 of them reach the barrier.
    assert text.startswith("Barrier error: __syncthreads() reached by 231 of 232 non-exited threads of block "
                           "(3,0,0) (divergent code)")
    assert "threads 0 of the block never arrive (24 threads of the block exited before it)" in text
    assert (info.value.block, info.value.reached, info.value.threads) == ((3, 0, 0), 231, 232)
    # With synccheck off it is still the barrier of the threads that reach it: 4 blocks.
    stats = launch(kernel, grid=4, block=256, args=(1000,), tools=("memcheck", "racecheck", "initcheck"))
    assert (stats.barriers, stats.active_lanes) == (4, 999)


def test_with_no_thread_exited_the_message_is_the_one_it_always_was(launch):
    def kernel(blk):
        blk.exit(blk.tx > 1000)  # nobody
        blk.sync(mask=blk.tx < 40)

    with pytest.raises(SynccheckError, match=r"^Barrier error: __syncthreads\(\) reached by 40 of 64 threads of "
                                             r"block \(0,0,0\) \(divergent code\)"):
        launch(kernel, grid=1, block=64)


def test_a_mask_that_names_an_exited_thread_is_an_error(launch):
    def load_after_return(blk, a):
        blk.exit(blk.tx >= 200)
        blk.load(a, blk.tx)  # every thread: 200-255 have returned

    def return_twice(blk):
        blk.exit(blk.tx >= 200)
        blk.exit(blk.tx >= 100)

    def barrier_of_everyone(blk):
        blk.exit(blk.bx == 1)
        blk.sync()

    cases = [(load_after_return, (np.zeros(256, np.float32),), "thread (200,0,0) of block (0,0,0)"),
             (return_twice, (), "thread (200,0,0) of block (0,0,0)"),
             (barrier_of_everyone, (), "thread (0,0,0) of block (1,0,0)")]
    for kernel, args, who in cases:
        with pytest.raises(SimulatorError, match=rf"^{re.escape(who)} exited \(blk.exit\) and cannot execute "
                                                 r"this instruction\n    at "):
            launch(kernel, grid=2, block=256, args=args)


def test_a_block_all_of_whose_threads_exited_has_no_barrier(launch):
    def kernel(blk, out):
        gone = blk.bx == 0
        blk.exit(np.broadcast_to(gone, (blk.nblocks, blk.nthreads)))
        ok = np.broadcast_to(~gone, (blk.nblocks, blk.nthreads))
        blk.sync(mask=ok)
        blk.store(out, blk.bx * blk.bdx + blk.tx, 1, mask=ok)

    out = np.zeros(128, np.int32)
    stats = launch(kernel, grid=2, block=64, args=(out,))
    assert stats.barriers == 1  # block 1 only
    assert out.tolist() == [0] * 64 + [1] * 64


def test_warp_operations_leave_exited_lanes_out(launch):
    """PTX's ``vote.sync``: ".all: True if source predicate is True for all non-exited threads
    in membermask"; a ballot has 0 for them; ``bar.warp.sync`` (``__syncwarp``) does not wait
    for them; a shuffle that reads one reads a lane that does not take part."""
    seen = {}

    def kernel(blk, shuffle):
        gone = blk.lane >= 20
        blk.exit(np.broadcast_to(gone, (blk.nblocks, blk.nthreads)))
        ok = np.broadcast_to(~gone, (blk.nblocks, blk.nthreads))
        seen["ballot"] = blk.ballot(True, mask=ok)
        seen["all"] = blk.all(blk.lane < 20, mask=ok)  # false only on the exited lanes
        blk.syncwarp(mask=ok)
        if shuffle:
            blk.shfl_down(blk.lane, 16, mask=ok)  # lanes 4-19 read lanes 20-35: exited or past the warp

    stats = launch(kernel, grid=1, block=64, args=(False,))
    assert seen["ballot"].tolist() == [[0xFFFFF] * 20 + [0] * 12 + [0xFFFFF] * 20 + [0] * 12]
    assert seen["all"].tolist() == [[True] * 20 + [False] * 12 + [True] * 20 + [False] * 12]
    # Two warps each issue the ballot, the vote and the syncwarp, with their 20 running lanes.
    assert (stats.votes, stats.warp_instructions, stats.active_lanes) == (4, 6, 120)
    with pytest.raises(SimulatorError, match=r"__shfl_down_sync reads a lane that does not take part"):
        launch(kernel, grid=1, block=64, args=(True,))
