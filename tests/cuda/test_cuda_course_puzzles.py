"""The course's own puzzles (``simtdocs.puzzles``) graded on kernels written per thread.

``Puzzle.check(kernel)`` launches its kernel with ``simtdocs.launch``, which runs a compiled
``simtdocs.cuda`` kernel as it runs a ``blk`` one: the same check grades both dialects, and
a per-thread kernel's divergence is counted without a ``blk.branch`` to forget. These are
the per-thread answers to ten of the puzzles, and one wrong answer the checker must refuse.
"""

import math

import numpy as np
import pytest

from simtdocs import cuda
from simtdocs.puzzles import PUZZLES


@cuda.jit
def double(a, out):
    i = cuda.grid(1)
    out[i] = 2 * a[i]


@cuda.jit
def add(a, b, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] + b[i]


@cuda.jit
def square(a, out, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = a[i] * a[i]


@cuda.jit
def warp_sum(x, out):
    i = cuda.grid(1)
    v = x[i]
    for delta in (16, 8, 4, 2, 1):
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, delta)
    if cuda.laneid == 0:
        out[i // 32] = v


@cuda.jit
def histogram(x, hist):
    local = cuda.shared.array(hist.size, np.int32)
    t = cuda.threadIdx.x
    if t < hist.size:
        local[t] = 0
    cuda.syncthreads()
    cuda.atomic.add(local, x[cuda.grid(1)], 1)
    cuda.syncthreads()
    if t < hist.size:
        cuda.atomic.add(hist, t, local[t])


@cuda.jit
def even_odd(a, out):
    g = cuda.blockIdx.x * (cuda.blockDim.x // 32) + cuda.threadIdx.x // 32
    parity = g % 2
    i = 2 * (32 * (g // 2) + cuda.laneid) + parity
    v = a[i]
    if parity == 0:
        out[i] = 2 * v
    else:
        out[i] = v + 100


@cuda.jit
def signed(x, order, y):
    i = cuda.grid(1)
    j = order[i]
    v = x[j]
    if v > 0:
        y[j] = math.sqrt(abs(v))
    else:
        y[j] = -v * v


@cuda.jit
def warp_scan(x, out):
    i = cuda.grid(1)
    v = x[i]
    for delta in (1, 2, 4, 8, 16):
        up = cuda.shfl_up_sync(0xFFFFFFFF, v, delta)
        if cuda.laneid >= delta:
            v += up
    out[i] = v


@cuda.jit
def compact(x, out, count):
    i = cuda.grid(1)
    w = i // 32
    v = x[i]
    votes = cuda.ballot_sync(0xFFFFFFFF, v > 0)
    before = cuda.popc(votes & ((1 << cuda.laneid) - 1))
    if v > 0:
        out[32 * w + before] = v
    if cuda.laneid == 0:
        count[w] = cuda.popc(votes)


@cuda.jit
def tail_sum(x, out):
    sdata = cuda.shared.array(256, np.float32)
    tid = cuda.threadIdx.x
    sdata[tid] = x[cuda.blockIdx.x * cuda.blockDim.x + tid]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 16:
        if tid < s:
            sdata[tid] += sdata[tid + s]
        cuda.syncthreads()
        s //= 2
    while s > 0:
        if tid < s:
            sdata[tid] += sdata[tid + s]
        if tid < 32:
            cuda.syncwarp()
        s //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = sdata[0]


@cuda.jit
def even_odd_divergent(a, out):  # the puzzle's starting point: even and odd lanes split every warp
    i = cuda.grid(1)
    v = a[i]
    if i % 2 == 0:
        out[i] = 2 * v
    else:
        out[i] = v + 100


ANSWERS = {"double": double, "guard": add, "grid_stride": square, "warp_sum": warp_sum, "histogram": histogram,
           "even_odd": even_odd, "signed": signed, "warp_scan": warp_scan, "compact": compact, "tail_sum": tail_sum}


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_per_thread_answers_pass(name):
    verdict = PUZZLES[name].check(ANSWERS[name])
    assert verdict.passed, verdict.message


def test_divergence_is_counted_without_an_annotation():
    verdict = PUZZLES["even_odd"].check(even_odd_divergent)
    assert not verdict.passed
    assert "diverg" in str(verdict.message)
