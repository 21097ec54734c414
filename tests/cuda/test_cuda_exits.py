"""A kernel's ``return`` is a thread exit: the barriers after it wait for the threads that did
not return (CUDA C++ Programming Guide, independent thread scheduling: ``__syncthreads()``
"will not succeed until reached by all non-exited threads in the block"), in both engines.
A device function's ``return`` only leaves the function. Counts derived by hand in the
comments."""

import numpy as np
import pytest

import simtdocs
from simtdocs import cuda, reference

ENGINES = {"reference": reference.launch, "fast": simtdocs.launch,
           "fast, one block a pass": lambda *a, **k: simtdocs.launch(*a, blocks_per_pass=1, **k)}


@pytest.fixture(params=list(ENGINES))
def launch(request):
    return ENGINES[request.param]


def line(stats, text):
    (c,) = [lc.counters for lc in stats.lines if text in lc.site.source]
    return c


@cuda.jit
def copy_through_shared(a, out, n):
    s = cuda.shared.array(256, np.float32)
    i = cuda.grid(1)
    if i >= n:
        return
    t = cuda.threadIdx.x
    s[t] = a[i]
    cuda.syncthreads()
    last = min(cuda.blockDim.x, n - cuda.blockIdx.x * cuda.blockDim.x) - 1
    out[i] = s[last - t]


def test_the_early_return_kernel_runs_and_copies_1000_values(launch):
    n = 1000
    a = np.random.default_rng(38).random(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    stats = launch(copy_through_shared, grid=4, block=256, args=(a, out, n))
    # Each block reverses its running threads' values: 256, 256, 256 and 1000 - 768 = 232.
    assert np.array_equal(out, np.concatenate([a[k:k + 256][::-1] for k in (0, 256, 512)] + [a[768:][::-1]]))
    assert stats.races == []
    assert stats.barriers == 4
    sync = line(stats, "cuda.syncthreads()")
    # Warps with a running thread: 8 per block, block 3's warp 7 with its lanes 0-7 only.
    assert (sync.warp_instructions, sync.active_lanes, sync.barriers) == (32, 1000, 4)
    guard = line(stats, "if i >= n:")
    assert (guard.branches, guard.divergent_branches) == (32, 1)  # warp 7 of block 3 splits
    assert "blk.exit(mask=_m1)" in copy_through_shared.as_masks()


def test_the_bracket_launch_runs_it_too():
    n = 1000
    a = np.arange(n, dtype=np.float32) * 3 + 1
    out = np.zeros(n, np.float32)
    stats = copy_through_shared[4, 256](a, out, n)
    assert out[999] == a[768] and out[768] == a[999] and stats.barriers == 4


@cuda.jit
def skipped_by_one(out, n):
    i = cuda.grid(1)
    if i >= n:
        return
    if i != n - 1:  # the last running thread skips the barrier
        cuda.syncthreads()
    out[i] = 1


@cuda.jit
def skipped_in_every_block(out, n):
    i = cuda.grid(1)
    if i >= n:
        return
    if cuda.threadIdx.x != 5:
        cuda.syncthreads()
    out[i] = 1


def test_a_running_thread_that_skips_the_barrier_is_still_a_synccheck_error(launch):
    with pytest.raises(simtdocs.SynccheckError) as info:
        launch(skipped_by_one, grid=4, block=256, args=(np.zeros(1000, np.int32), 1000))
    # Block 3: 232 running threads, all but thread 231 (i = 999) reach it; 24 returned.
    assert str(info.value).startswith("Barrier error: __syncthreads() reached by 231 of 232 non-exited threads "
                                      "of block (3,0,0) (divergent code)")
    assert "cuda.syncthreads()" in str(info.value) and "threads 231 of the block never arrive" in str(info.value)
    with pytest.raises(simtdocs.SynccheckError) as info:
        launch(skipped_in_every_block, grid=4, block=256, args=(np.zeros(1000, np.int32), 1000))
    # Block 0 comes first, and nobody exited there: the message of a plain divergent barrier.
    assert str(info.value).startswith("Barrier error: __syncthreads() reached by 255 of 256 threads of block "
                                      "(0,0,0) (divergent code)")


@cuda.jit(device=True)
def positive_part(x):
    if x < 0.0:
        return 0.0  # leaves the function, not the kernel
    return x


@cuda.jit
def device_return_then_barrier(a, out, n):
    s = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    s[t] = positive_part(a[t])
    cuda.syncthreads()
    out[t] = s[63 - t]


def test_a_device_functions_return_is_not_an_exit(launch):
    a = np.linspace(-1, 1, 64).astype(np.float32)
    out = np.zeros(64, np.float32)
    stats = launch(device_return_then_barrier, grid=1, block=64, args=(a, out, 64))
    assert np.array_equal(out, np.maximum(a, 0)[::-1])
    # Every thread comes back from the function and reaches the barrier: 2 warps, 64 lanes.
    assert (stats.barriers, line(stats, "cuda.syncthreads()").active_lanes) == (1, 64)
    text = device_return_then_barrier.as_masks()  # the kernel's mask form, and the device function's
    assert "return 0.0" in text and "blk.exit" not in text


@cuda.jit
def return_inside_loops(a, out, n):
    s = cuda.shared.array(64, np.int32)
    t = cuda.threadIdx.x
    for k in range(4):
        if a[t] == k:  # threads with a value below 4 return in round a[t]
            return
    w = 0
    while w < 4:
        w += 1
        if a[t] == 3 + w:  # 4, 5, 6 and 7 return from the while loop
            return
    s[t] = a[t]
    cuda.syncthreads()
    out[t] = s[(t + 1) % 64] if a[(t + 1) % 64] >= 8 else -1


def test_returns_inside_loops_are_exits_the_barrier_does_not_wait_for(launch):
    a = (np.arange(64, dtype=np.int32) * 7) % 16  # 0..15 each four times; values 0-7 return
    out = np.zeros(64, np.int32)
    stats = launch(return_inside_loops, grid=1, block=64, args=(a, out, 64))
    running = a >= 8
    expected = np.where(running, np.where(np.roll(running, -1), np.roll(a, -1), -1), 0)
    assert out.tolist() == expected.tolist()
    # 32 of the 64 threads (the values 8-15) reach the barrier, in both warps: one barrier.
    sync = line(stats, "cuda.syncthreads()")
    assert (stats.barriers, sync.warp_instructions, sync.active_lanes) == (1, 2, 32)
    assert stats.races == []


@cuda.jit
def count_after_return(out, n):
    i = cuda.grid(1)
    if i >= n:
        return
    out[i] = cuda.syncthreads_count(True)


@cuda.jit
def votes_after_return(out):
    t = cuda.threadIdx.x
    if cuda.laneid >= 20:
        return
    b = cuda.ballot_sync(0xFFFFFFFF, True)
    cuda.syncwarp()
    out[t] = b if cuda.all_sync(0xFFFFFFFF, cuda.laneid < 20) else 0


def test_syncthreads_count_syncwarp_and_votes_leave_the_exited_threads_out(launch):
    out = np.zeros(1000, np.int32)
    stats = launch(count_after_return, grid=4, block=256, args=(out, 1000))
    # The count of a block's running threads: 256 in blocks 0-2, 232 in block 3.
    assert out.tolist() == [256] * 768 + [232] * 232 and stats.barriers == 4
    out = np.zeros(64, np.int64)
    stats = launch(votes_after_return, grid=1, block=64, args=(out,))
    # PTX vote.sync: the exited lanes 20-31 of each warp contribute 0 to the ballot, and .all
    # is over the non-exited ones; __syncwarp does not wait for them.
    assert out.tolist() == ([0xFFFFF] * 20 + [0] * 12) * 2
    assert line(stats, "cuda.syncwarp()").active_lanes == 40
