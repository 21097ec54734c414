"""check() grades kernels written in the per-thread dialect (``simtdocs.cuda``, numba.cuda's
``@cuda.jit``) like blk kernels: the same launch, counters, sanitizers, rules and score card,
and the lines of its messages counted from the kernel's def."""

import numpy as np

from simtdocs import cuda
from simtdocs.puzzles import PUZZLES


@cuda.jit
def double(a, out):
    i = cuda.grid(1)
    out[i] = 2 * a[i]


@cuda.jit
def double_off_by_one(a, out):
    i = cuda.grid(1)
    out[i] = 2 * a[i + 1]


@cuda.jit
def even_odd_by_element(a, out):
    i = cuda.grid(1)
    v = a[i]
    if i % 2 == 0:
        out[i] = 2 * v
    else:
        out[i] = v + 100


@cuda.jit
def even_odd_by_warp(a, out):
    g = cuda.blockIdx.x * (cuda.blockDim.x // 32) + cuda.threadIdx.x // 32
    i = 2 * (32 * (g // 2) + cuda.laneid) + g % 2
    v = a[i]
    if g % 2 == 0:
        out[i] = 2 * v
    else:
        out[i] = v + 100


@cuda.jit
def reverse_without_sync(a, out):
    tile = cuda.shared.array(256, dtype=np.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    tile[t] = a[i]
    out[i] = tile[cuda.blockDim.x - 1 - t]


@cuda.jit
def warp_max_butterfly(x, out):
    i = cuda.grid(1)
    v = x[i]
    for m in (16, 8, 4, 2, 1):
        v = max(v, cuda.shfl_xor_sync(0xFFFFFFFF, v, m))
    out[i] = v


def test_a_right_cuda_kernel_passes_with_a_score_card():
    for name, kernel in (("double", double), ("even_odd", even_odd_by_warp), ("warp_max", warp_max_butterfly)):
        verdict = PUZZLES[name].check(kernel)
        assert verdict.passed, (name, verdict.message.en)
        assert verdict.card is not None


def test_a_wrong_cuda_kernel_gets_the_message_with_lines_from_its_def():
    assert PUZZLES["double"].check(double_off_by_one).message.en == (
        "thread (255, 0, 0) of block (3, 0, 0) reads out of bounds on line 3")
    assert PUZZLES["even_odd"].check(even_odd_by_element).message.en == (
        "128 divergent branches where 0 are allowed, on line 4 (`if i % 2 == 0:`)")
    assert PUZZLES["reverse_blocks"].check(reverse_without_sync).message.en == (
        "a race between warps 0 and 7 on line 6: warp 0 reads shared tile[255], which warp 7 writes on line 5, "
        "with no __syncthreads() between (1,024 hazards in all)")


@cuda.jit
def histogram_without_second_barrier(x, hist):
    local = cuda.shared.array(32, np.int32)
    t = cuda.threadIdx.x
    if t < 32:
        local[t] = 0
    cuda.syncthreads()
    cuda.atomic.add(local, x[cuda.grid(1)], 1)
    if t < 32:
        cuda.atomic.add(hist, t, local[t])


def test_a_cuda_histogram_without_its_second_barrier_fails_naming_the_read_out_line():
    # Line 9 (from the def) reads the bins the atomics of line 7 update, with no barrier: per
    # block, every read-out thread t whose bin another thread updated races (counted here from
    # the input alone), and thread 0's bin 0 is updated by warp 1 (the lowest other warp).
    x = PUZZLES["histogram"].inputs().args[0].reshape(-1, 256)
    threads = np.arange(256)
    count = sum(bool(((row == t) & (threads != t)).any()) for row in x for t in range(32))
    other = int(threads[(x[0] == 0) & (threads >= 32)].min()) // 32
    assert PUZZLES["histogram"].check(histogram_without_second_barrier).message.en == (
        f"a race between warps 0 and {other} on line 9: warp 0 reads shared local[0], which warp {other} updates "
        f"with an atomic on line 7, with no __syncthreads() between ({count:,} hazards in all)")
