"""P2 puzzles on threads and indices: map, guard, 2-D indexing, grid-stride, warp shuffle.

Each puzzle has a skeleton (what the reader starts from) and a solution, both plain
kernels ``kernel(blk, ...)`` as the lecture writes them.
"""

from __future__ import annotations

import numpy as np

from simtdocs import cdiv
from simtdocs.i18n import _

from .core import Budget, Case, Coalescing, Puzzle, integers, uniform

# -- 1. map ----------------------------------------------------------------------------

DOUBLE_N, DOUBLE_BLOCK = 1024, 256


# --8<-- [start:double]
def double(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    # TODO: every thread writes out[i] = 2 * a[i]
# --8<-- [end:double]


# --8<-- [start:double_solution]
def double_solution(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    blk.store(out, i, 2 * blk.load(a, i))
# --8<-- [end:double_solution]


def _double_case(rng):
    a, drawn = uniform(rng, DOUBLE_N)
    return Case((a, np.zeros_like(a)), {1: 2 * a}, {0: drawn})


DOUBLE = Puzzle(
    "double", "p2", "write", _("Map: double a vector"),
    _("Write a kernel in which every thread doubles one element: `out[i] = 2 * a[i]`. "
      "There are {n} elements and exactly as many threads: {blocks} blocks of {threads}.",
      n=DOUBLE_N, blocks=DOUBLE_N // DOUBLE_BLOCK, threads=DOUBLE_BLOCK),
    _("`i` is already the thread's global index. Read with `blk.load(a, i)` and write with "
      "`blk.store(out, i, value)`: one statement runs for every thread at once."),
    double, double_solution, _double_case, grid=(DOUBLE_N // DOUBLE_BLOCK,), block=(DOUBLE_BLOCK,))

# -- 2. guard --------------------------------------------------------------------------

GUARD_N, GUARD_BLOCK = 1000, 256


# --8<-- [start:guard]
def add(blk, a, b, out, n):
    i = blk.bx * blk.bdx + blk.tx  # TODO: threads with no element must do nothing
    blk.store(out, i, blk.load(a, i) + blk.load(b, i))
# --8<-- [end:guard]


# --8<-- [start:add_solution]
def add_solution(blk, a, b, out, n):
    i = blk.bx * blk.bdx + blk.tx
    m = i < n  # if (i < n)
    blk.store(out, i, blk.load(a, i, mask=m) + blk.load(b, i, mask=m), mask=m)
# --8<-- [end:add_solution]


def _add_case(rng):
    a, drawn = uniform(rng, GUARD_N)
    b, _drawn = uniform(rng, GUARD_N)
    return Case((a, b, np.zeros_like(a), GUARD_N), {2: a + b}, {0: drawn, 1: drawn})


GUARD = Puzzle(
    "guard", "p2", "write", _("Guard: more threads than elements"),
    _("Add two vectors of {n} elements, `out[i] = a[i] + b[i]`, with {blocks} blocks of {threads} threads: "
      "{extra} threads have no element. Make them do nothing.",
      n=GUARD_N, blocks=cdiv(GUARD_N, GUARD_BLOCK), threads=GUARD_BLOCK,
      extra=cdiv(GUARD_N, GUARD_BLOCK) * GUARD_BLOCK - GUARD_N),
    _("An `if (i < n)` in CUDA is a mask here: `m = i < n`, then pass `mask=m` to every load "
      "and store the `if` would enclose."),
    add, add_solution, _add_case, grid=(cdiv(GUARD_N, GUARD_BLOCK),), block=(GUARD_BLOCK,))

# -- 3. 2-D indexing -------------------------------------------------------------------

ROWS, COLS, TILE2 = 50, 70, 16


# --8<-- [start:add_bias]
def add_bias(blk, a, bias, out, M, N):
    row = blk.ty  # TODO: the row and column of this thread in the whole grid
    col = blk.tx
    m = (row < M) & (col < N)
    blk.store(out, (row, col), blk.load(a, (row, col), mask=m) + blk.load(bias, col, mask=m), mask=m)
# --8<-- [end:add_bias]


# --8<-- [start:add_bias_solution]
def add_bias_solution(blk, a, bias, out, M, N):
    row = blk.by * blk.bdy + blk.ty
    col = blk.bx * blk.bdx + blk.tx
    m = (row < M) & (col < N)
    blk.store(out, (row, col), blk.load(a, (row, col), mask=m) + blk.load(bias, col, mask=m), mask=m)
# --8<-- [end:add_bias_solution]


def _bias_case(rng):
    a, drawn = uniform(rng, (ROWS, COLS))
    bias, _drawn = uniform(rng, COLS)
    return Case((a, bias, np.zeros_like(a), ROWS, COLS), {2: a + bias}, {0: drawn, 1: drawn})


MATRIX = Puzzle(
    "add_bias", "p2", "write", _("2-D indexing: a bias per column"),
    _("`a` is an {m}×{n} matrix. Add `bias[col]` to every element of column `col`. The grid is "
      "2-D: {gx}×{gy} blocks of {t}×{t} threads, x along the columns, y along the rows.",
      m=ROWS, n=COLS, gx=cdiv(COLS, TILE2), gy=cdiv(ROWS, TILE2), t=TILE2),
    _("The column is `blockIdx.x * blockDim.x + threadIdx.x`, the row the same in y. "
      "The edge blocks stick out of the matrix, so keep the guard."),
    add_bias, add_bias_solution, _bias_case, grid=(cdiv(COLS, TILE2), cdiv(ROWS, TILE2)), block=(TILE2, TILE2))

# -- 4. grid-stride loop ---------------------------------------------------------------

STRIDE_N, STRIDE_GRID, STRIDE_BLOCK = 10_000, 8, 128


# --8<-- [start:grid_stride]
def square(blk, a, out, n):
    i = blk.bx * blk.bdx + blk.tx  # TODO: a grid-stride loop over all n elements
    m = i < n
    v = blk.load(a, i, mask=m)
    blk.store(out, i, v * v, mask=m)
# --8<-- [end:grid_stride]


# --8<-- [start:square_solution]
def square_solution(blk, a, out, n):
    stride = blk.gdx * blk.bdx  # all threads of the grid
    for start in range(0, n, stride):
        i = start + blk.bx * blk.bdx + blk.tx
        m = i < n
        v = blk.load(a, i, mask=m)
        blk.store(out, i, v * v, mask=m)
# --8<-- [end:square_solution]


def _square_case(rng):
    a, drawn = uniform(rng, STRIDE_N)
    return Case((a, np.zeros_like(a), STRIDE_N), {1: a * a}, {0: drawn})


GRID_STRIDE = Puzzle(
    "grid_stride", "p2", "write", _("Grid-stride loop: fewer threads than elements"),
    _("Square {n} elements, `out[i] = a[i] * a[i]`, with only {blocks} blocks of {threads} threads. "
      "Every global access must stay coalesced (≥ 90%).",
      n=format(STRIDE_N, ","), blocks=STRIDE_GRID, threads=STRIDE_BLOCK),
    _("Loop with a step of the whole grid (`blk.gdx * blk.bdx`), so that in every pass the 32 "
      "lanes of a warp still touch 32 neighbouring elements. Giving each thread its own chunk "
      "of consecutive elements breaks the coalescing."),
    square, square_solution, _square_case, grid=(STRIDE_GRID,), block=(STRIDE_BLOCK,),
    rules=(Coalescing(0.9),))

# -- 5. warp-shuffle reduction ---------------------------------------------------------

WSUM_N, WSUM_BLOCK = 4096, 256


# --8<-- [start:warp_sum]
def warp_sum(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    # TODO: add up the 32 values of the warp with blk.shfl_down
    first = blk.lane == 0
    blk.store(out, i // 32, v, mask=first)
# --8<-- [end:warp_sum]


# --8<-- [start:warp_sum_solution]
def warp_sum_solution(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for delta in (16, 8, 4, 2, 1):  # lane l adds the value of lane l + delta
        v = v + blk.shfl_down(v, delta)
    first = blk.lane == 0
    blk.store(out, i // 32, v, mask=first)
# --8<-- [end:warp_sum_solution]


def _warp_sum_case(rng):
    x, drawn = integers(rng, WSUM_N, 0, 9)
    return Case((x, np.zeros(WSUM_N // 32, np.float32)), {1: x.reshape(-1, 32).sum(axis=1)}, {0: drawn})


WARP_SUM = Puzzle(
    "warp_sum", "p2", "write", _("Warp shuffle: the sum of a warp"),
    _("Each warp adds up its 32 values and lane 0 writes the sum to `out[i // 32]`. Use warp "
      "shuffles only: no shared memory, no sync."),
    _("`blk.shfl_down(v, d)` gives lane l the `v` of lane l + d. Halve d from 16 to 1 and add: "
      "after five steps lane 0 holds the sum."),
    warp_sum, warp_sum_solution, _warp_sum_case, grid=(WSUM_N // WSUM_BLOCK,), block=(WSUM_BLOCK,),
    rules=(Budget("shared_requests", 0),))

PUZZLES = (DOUBLE, GUARD, MATRIX, GRID_STRIDE, WARP_SUM)
