"""Triton puzzles: the kernels of Triton-Puzzles' kind, written with ``@triton.jit`` and graded
by the same checker as the others on what the counters see.

An outer-product add, a masked row softmax, a tiled matmul whose sizes are not multiples of
its tiles, and a row sum with a ragged tail. Each puzzle is launched the Triton way
(``kernel[grid](*args, BLOCK=…, num_warps=4)``: a program is a block of ``num_warps * 32``
threads, laid out as ``simtdocs.triton.language`` states), with the meta-parameters the
puzzle gives. Every budget is derived below from the launch (sizes, tiles, grid) by the
layout's rules, each step said beside it; ``tests/puzzles/test_triton_puzzles.py`` holds the
solutions' counters to them exactly.
"""

from __future__ import annotations

import numpy as np

from simtdocs import cdiv, triton
from simtdocs.i18n import _
from simtdocs.memory import SECTOR_BYTES
from simtdocs.triton import language as tl

from .core import Budget, Case, Coalescing, Puzzle, uniform

F32 = 4  # bytes of a float32
WARPS = 4  # num_warps of every puzzle: a program of 128 threads
LANES = 32


def _sectors(nbytes: int) -> int:
    """Sectors of ``nbytes`` that start on a sector boundary (every span below does: its start
    is checked to be a multiple of 32 bytes where it is derived)."""
    return cdiv(nbytes, SECTOR_BYTES)


def _aligned(*nbytes: int) -> None:
    for n in nbytes:
        assert n % SECTOR_BYTES == 0, f"{n} bytes do not keep spans on sector boundaries"


# -- 1. an outer-product add --------------------------------------------------------------

OUT_M, OUT_N, OUT_BM, OUT_BN = 200, 96, 32, 64
OUT_GRID = (cdiv(OUT_M, OUT_BM), cdiv(OUT_N, OUT_BN))
# A program's x (BLOCK_M floats) and y (BLOCK_N floats) start on sector boundaries, and so does
# every row of z (N floats), so a span of b bytes is ⌈b / 32⌉ sectors and the masked tails
# fetch only the sectors of their elements. Each column of programs reads all of x, each row
# of programs all of y, and z is written once:
_aligned(OUT_BM * F32, OUT_BN * F32, OUT_N * F32)
OUT_SECTORS = (OUT_GRID[1] * _sectors(OUT_M * F32) + OUT_GRID[0] * _sectors(OUT_N * F32)
               + OUT_M * _sectors(OUT_N * F32))
OUT_BYTES = OUT_SECTORS * SECTOR_BYTES


# --8<-- [start:outer_add]
@triton.jit
def outer_add(x_ptr, y_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    # TODO: load x[rows] and y[cols], store z[rows, cols] = x[rows] + y[cols]; mask the edges
# --8<-- [end:outer_add]


# --8<-- [start:outer_add_solution]
@triton.jit
def outer_add_solution(x_ptr, y_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M)  # one load of the program's x, not one per column
    y = tl.load(y_ptr + cols, mask=cols < N)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(z_ptr + rows[:, None] * N + cols[None, :], x[:, None] + y[None, :], mask=inside)
# --8<-- [end:outer_add_solution]


# --8<-- [start:outer_add_wrong]
@triton.jit
def outer_add_tile_of_x(x_ptr, y_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] + 0 * cols[None, :], mask=inside)  # x[i] once per column
    y = tl.load(y_ptr + cols, mask=cols < N)
    tl.store(z_ptr + rows[:, None] * N + cols[None, :], x + y[None, :], mask=inside)
# --8<-- [end:outer_add_wrong]


def _outer_case(rng):
    x, drawn = uniform(rng, OUT_M)
    y, _drawn = uniform(rng, OUT_N)
    z = np.zeros((OUT_M, OUT_N), np.float32)
    return Case((x, y, z, OUT_M, OUT_N), {2: x[:, None] + y[None, :]}, {0: drawn, 1: drawn})


OUTER = Puzzle(
    "outer_add", "p2", "write", _("Triton: an outer-product add"),
    _("`z[i, j] = x[i] + y[j]` for x of {m} and y of {n} floats, z {m}×{n} (row-major). Each program "
      "computes a {bm}×{bn} tile of z; the tiles at the bottom and right edges stick out of it. "
      "Budget: {bytes} DRAM bytes, that is z written once and, per program, its {bm} elements of x "
      "and {bn} of y read once; coalescing ≥ 90% on every line.",
      m=OUT_M, n=OUT_N, bm=OUT_BM, bn=OUT_BN, bytes=format(OUT_BYTES, ",")),
    _("Load `x` for the program's rows and `y` for its columns as 1-D blocks, then broadcast: "
      "`x[:, None] + y[None, :]` is the {bm}×{bn} tile. The store needs a 2-D mask, "
      "`(rows[:, None] < M) & (cols[None, :] < N)`, and z's row stride is N.", bm=OUT_BM, bn=OUT_BN),
    outer_add, outer_add_solution, _outer_case, grid=OUT_GRID, block=(WARPS * LANES,),
    rules=(Budget("bytes_moved", OUT_BYTES), Coalescing(0.9)), wrong=(outer_add_tile_of_x,),
    meta=(("BLOCK_M", OUT_BM), ("BLOCK_N", OUT_BN)), num_warps=WARPS)

# -- 2. a masked row softmax ----------------------------------------------------------------

SM_ROWS, SM_COLS = 48, 72
SM_BLOCK = triton.next_power_of_2(SM_COLS)  # 128: tl.arange needs a power of two
# Each row is N floats from a multiple of 32 bytes: read once, written once, the fused claim.
_aligned(SM_COLS * F32)
SM_SECTORS = 2 * SM_ROWS * _sectors(SM_COLS * F32)
SM_BYTES = SM_SECTORS * SECTOR_BYTES
# N (72) is not a multiple of 16, so neither the row start nor `cols < n_cols` is proved
# aligned: one float per thread, 32 threads to a warp along the row, and a warp with no
# element inside the row issues nothing: ⌈N / 32⌉ requests per row for the load, as many for
# the store.
assert SM_COLS % 16
SM_REQUESTS = 2 * SM_ROWS * cdiv(SM_COLS, LANES)


# --8<-- [start:softmax]
@triton.jit
def softmax(out_ptr, x_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # one program per row of n_cols floats
    cols = tl.arange(0, BLOCK)  # BLOCK ≥ n_cols: the row fits in one block
    # TODO: out[row, :] = exp(x - max(x)) / sum(exp(x - max(x))) over the row's n_cols elements
# --8<-- [end:softmax]


# --8<-- [start:softmax_solution]
@triton.jit
def softmax_solution(out_ptr, x_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # one program per row of n_cols floats
    cols = tl.arange(0, BLOCK)  # BLOCK ≥ n_cols: the row fits in one block
    inside = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=inside, other=-float("inf"))  # exp(-inf) = 0
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=inside)
# --8<-- [end:softmax_solution]


# --8<-- [start:softmax_wrong]
@triton.jit
def softmax_other_zero(out_ptr, x_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # one program per row of n_cols floats
    cols = tl.arange(0, BLOCK)  # BLOCK ≥ n_cols: the row fits in one block
    inside = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=inside, other=0.0)  # the padding counts as 0
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=inside)
# --8<-- [end:softmax_wrong]


def _softmax_case(rng):
    x, drawn = uniform(rng, (SM_ROWS, SM_COLS), -4.0, 4.0)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    out = np.zeros_like(x)
    return Case((out, x, SM_COLS), {0: (e / e.sum(axis=1, keepdims=True)).astype(np.float32)}, {1: drawn})


SOFTMAX = Puzzle(
    "softmax", "p2", "write", _("Triton: a masked row softmax"),
    _("The softmax of each row of a {rows}×{cols} matrix, one program per row, with `BLOCK` = {block}: "
      "the next power of two, so {pad} of each block's elements lie past the row's end. Fused: each "
      "element read once and written once. Budget: {bytes} DRAM bytes and {requests} global requests.",
      rows=SM_ROWS, cols=SM_COLS, block=SM_BLOCK, pad=SM_BLOCK - SM_COLS, bytes=format(SM_BYTES, ","),
      requests=format(SM_REQUESTS, ",")),
    _("Mask the load with `cols < n_cols` and give the padding `other=-float(\"inf\")`: it then "
      "changes neither the maximum nor the sum, since exp(−∞) = 0. Subtract `tl.max(x, axis=0)` "
      "before `tl.exp`, divide by `tl.sum(e, axis=0)`, and store with the same mask."),
    softmax, softmax_solution, _softmax_case, grid=(SM_ROWS,), block=(WARPS * LANES,),
    rules=(Budget("bytes_moved", SM_BYTES), Budget("requests", SM_REQUESTS)), wrong=(softmax_other_zero,),
    meta=(("BLOCK", SM_BLOCK),), num_warps=WARPS)

# -- 3. a tiled matmul ------------------------------------------------------------------------

MM_M, MM_N, MM_K = 72, 80, 40
MM_BM, MM_BN, MM_BK = 32, 32, 16
MM_GRID = (cdiv(MM_M, MM_BM), cdiv(MM_N, MM_BN))
MM_STEPS = cdiv(MM_K, MM_BK)  # K steps of each program, the last one ragged
# Rows of A (K floats), of B and C (N floats) and every tile's columns start on sector
# boundaries. Each column of programs reads all of A, each row of programs all of B (masked
# tails fetch only their own sectors), and C is written once:
_aligned(MM_K * F32, MM_N * F32, MM_BK * F32, MM_BN * F32)
MM_SECTORS = (MM_GRID[1] * MM_M * _sectors(MM_K * F32) + MM_GRID[0] * MM_K * _sectors(MM_N * F32)
              + MM_M * _sectors(MM_N * F32))
# The dot's operand traffic through shared memory, per tl.dot (Triton's MMA layout, as
# simtdocs.triton.language states it): both tiles stored as 16-byte vectors into a swizzled
# (conflict-free) tile, one wavefront per 128 bytes; then read as ldmatrix rows by the warps.
# The 4 warps tile the 32×32 output 2×2, so each reads its half of A's rows and its half of
# B's columns, and every operand byte is read by 2 warps.
MM_WARPS_M, MM_WARPS_N = 2, 2
_A, _B = MM_BM * MM_BK * F32, MM_BK * MM_BN * F32  # bytes of one A tile and one B tile
MM_DOT_WAVEFRONTS = (_A + _B + _A * MM_WARPS_N + _B * MM_WARPS_M) // 128
MM_WAVEFRONTS = MM_GRID[0] * MM_GRID[1] * MM_STEPS * MM_DOT_WAVEFRONTS


# --8<-- [start:matmul]
@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # TODO: step through K by BLOCK_K: load a tile of A (rows × ks) and of B (ks × cols),
    # masked, and acc = tl.dot(a, b, acc); then store acc into C[rows, cols]
# --8<-- [end:matmul]


# --8<-- [start:matmul_solution]
@triton.jit
def matmul_solution(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):  # the last step is ragged: the masks give it zeros
        ks = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))
# --8<-- [end:matmul_solution]


# --8<-- [start:matmul_wrong]
@triton.jit
def matmul_no_tail(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K // BLOCK_K * BLOCK_K, BLOCK_K):  # whole tiles only
        ks = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < M, other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))
# --8<-- [end:matmul_wrong]


def _matmul_case(rng):
    a, drawn = uniform(rng, (MM_M, MM_K))
    b, _drawn = uniform(rng, (MM_K, MM_N))
    c = np.zeros((MM_M, MM_N), np.float32)
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    return Case((a, b, c, MM_M, MM_N, MM_K), {2: want}, {0: drawn, 1: drawn})


MATMUL = Puzzle(
    "matmul", "p2", "write", _("Triton: a tiled matmul"),
    _("`C = A @ B` for A {m}×{k} and B {k}×{n} (row-major float32), each program a {bm}×{bn} tile of C, "
      "stepping through K by {bk} with `tl.dot`. None of {m}, {n} and {k} is a multiple of its tile, "
      "so the bottom and right tiles stick out of C and the last of the {steps} K steps is ragged. "
      "Budget: {sectors} sectors (each program reads its rows of A and its columns of B once) and "
      "{wavefronts} shared wavefronts: the operands of one `tl.dot` take {per_dot} on their way "
      "through shared memory, and there are {steps} dots a program.",
      m=MM_M, n=MM_N, k=MM_K, bm=MM_BM, bn=MM_BN, bk=MM_BK, steps=MM_STEPS, sectors=format(MM_SECTORS, ","),
      wavefronts=format(MM_WAVEFRONTS, ","), per_dot=MM_DOT_WAVEFRONTS),
    _("`for k0 in range(0, K, BLOCK_K)` runs {steps} steps, the last one over {tail} columns of A. "
      "Mask A's tile with `(rows[:, None] < M) & (ks[None, :] < K)` and B's with "
      "`(ks[:, None] < K) & (cols[None, :] < N)`, both with `other=0.0`: the zeros add nothing to "
      "the dot. Store acc with the mask of C's tile.", steps=MM_STEPS, tail=MM_K - (MM_STEPS - 1) * MM_BK),
    matmul, matmul_solution, _matmul_case, grid=MM_GRID, block=(WARPS * LANES,),
    rules=(Budget("sectors", MM_SECTORS), Budget("shared_wavefronts", MM_WAVEFRONTS)), wrong=(matmul_no_tail,),
    meta=(("BLOCK_M", MM_BM), ("BLOCK_N", MM_BN), ("BLOCK_K", MM_BK)), num_warps=WARPS)

# -- 4. a row sum with a ragged tail ----------------------------------------------------------

RS_M, RS_N, RS_BM, RS_BN = 64, 200, 8, 64
RS_GRID = (cdiv(RS_M, RS_BM),)
# Rows of N floats and every chunk of BLOCK_N columns start on sector boundaries: x is read
# once, its tail chunk (N − 3·64 = 8 floats) fetching one sector a row; out is written once.
_aligned(RS_N * F32, RS_BN * F32, RS_BM * F32)
RS_SECTORS = RS_M * _sectors(RS_N * F32) + _sectors(RS_M * F32)


# --8<-- [start:row_sum]
@triton.jit
def row_sum(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)  # BLOCK_M rows a program
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    # TODO: add up x[rows, :] in chunks of BLOCK_N columns (the last one ragged), store out[rows]
# --8<-- [end:row_sum]


# --8<-- [start:row_sum_solution]
@triton.jit
def row_sum_solution(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)  # BLOCK_M rows a program
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        inside = (rows[:, None] < M) & (cols[None, :] < N)  # the last chunk sticks out of the row
        acc += tl.sum(tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=inside, other=0.0), axis=1)
    tl.store(out_ptr + rows, acc, mask=rows < M)
# --8<-- [end:row_sum_solution]


# --8<-- [start:row_sum_wrong]
@triton.jit
def row_sum_by_column(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)  # BLOCK_M rows a program
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for col in range(0, N):  # one column at a time: lane r reads row r
        acc += tl.load(x_ptr + rows * N + col, mask=rows < M, other=0.0)
    tl.store(out_ptr + rows, acc, mask=rows < M)
# --8<-- [end:row_sum_wrong]


def _row_sum_case(rng):
    x, drawn = uniform(rng, (RS_M, RS_N))
    out = np.zeros(RS_M, np.float32)
    return Case((x, out, RS_M, RS_N), {1: x.astype(np.float64).sum(axis=1).astype(np.float32)}, {0: drawn})


ROW_SUM = Puzzle(
    "row_sum", "p2", "write", _("Triton: a row sum with a ragged tail"),
    _("`out[m] = x[m, 0] + … + x[m, {last}]` for a {m}×{n} matrix x, {bm} rows a program, in chunks "
      "of {bn} columns: {n} is not a multiple of {bn}, so the last chunk holds {tail} columns. "
      "Coalescing ≥ 90% on every line, and a budget of {sectors} sectors: x read once, out written once.",
      last=RS_N - 1, m=RS_M, n=RS_N, bm=RS_BM, bn=RS_BN, tail=RS_N % RS_BN, sectors=format(RS_SECTORS, ",")),
    _("Load a {bm}×{bn} tile, `x_ptr + rows[:, None] * N + cols[None, :]`, so that neighbouring "
      "lanes read neighbouring columns of a row; mask it with `cols[None, :] < N` (and the rows), "
      "`other=0.0`, and add `tl.sum(tile, axis=1)` into acc.", bm=RS_BM, bn=RS_BN),
    row_sum, row_sum_solution, _row_sum_case, grid=RS_GRID, block=(WARPS * LANES,),
    rules=(Coalescing(0.9), Budget("sectors", RS_SECTORS)), wrong=(row_sum_by_column,),
    meta=(("BLOCK_M", RS_BM), ("BLOCK_N", RS_BN)), num_warps=WARPS)

PUZZLES = (OUTER, SOFTMAX, MATMUL, ROW_SUM)
