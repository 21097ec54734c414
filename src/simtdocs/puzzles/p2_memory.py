"""P2 puzzles on memory: a shared tile with a halo, a missing sync, a column-major mapping,
a 32-way tile, and two budgets (sectors, wavefronts)."""

from __future__ import annotations

import numpy as np

from simtdocs import cdiv
from simtdocs.i18n import _
from simtdocs.memory import SECTOR_BYTES

from .core import Budget, Case, Coalescing, NoBankConflict, Puzzle, integers, uniform

# -- 6. shared-memory tile with a halo -------------------------------------------------

WIN_N, WIN_BLOCK, WIN_WIDTH = 2048, 256, 3
WIN_HALO = WIN_WIDTH - 1
# Read a once and write out once, plus one sector per block for its halo.
WIN_SECTORS = 2 * WIN_N * 4 // SECTOR_BYTES + WIN_N // WIN_BLOCK


# --8<-- [start:window_sum]
def window_sum(blk, a, out, n):
    tile = blk.shared(blk.bdx + 2, np.float32, name="tile")  # the block's elements and 2 more
    i = blk.bx * blk.bdx + blk.tx
    # TODO: fill the tile (with its halo), sync, then out[i] = tile[t] + tile[t+1] + tile[t+2]
# --8<-- [end:window_sum]


# --8<-- [start:window_sum_solution]
def window_sum_solution(blk, a, out, n):
    tile = blk.shared(blk.bdx + 2, np.float32, name="tile")  # the block's elements and 2 more
    i = blk.bx * blk.bdx + blk.tx
    t = blk.tx
    blk.store(tile, t, blk.load(a, i))
    halo = t < 2  # threads 0 and 1 also fetch the 2 elements after the block
    inside = halo & (i + blk.bdx < n)
    blk.store(tile, t + blk.bdx, blk.load(a, i + blk.bdx, mask=inside), mask=halo)
    blk.sync()
    total = blk.load(tile, t) + blk.load(tile, t + 1) + blk.load(tile, t + 2)
    blk.store(out, i, total)
# --8<-- [end:window_sum_solution]


def _window_case(rng):
    a, drawn = integers(rng, WIN_N, 1, 9)
    padded = np.concatenate([a, np.zeros(WIN_HALO, np.float32)])
    expected = sum(padded[k:k + WIN_N] for k in range(WIN_WIDTH))
    return Case((a, np.zeros_like(a), WIN_N), {1: expected}, {0: drawn})


WINDOW = Puzzle(
    "window_sum", "p2", "write", _("Shared-memory tile: a sliding window"),
    _("`out[i] = a[i] + a[i+1] + a[i+2]` for {n} elements (`a` counts as 0 past its end), with "
      "blocks of {threads} threads. Three global loads per thread would fetch most sectors three "
      "times: load each block's elements once into a shared tile of {tile} floats and read the "
      "window from there. Budget: {budget} sectors.",
      n=format(WIN_N, ","), threads=WIN_BLOCK, tile=WIN_BLOCK + WIN_HALO, budget=WIN_SECTORS),
    _("Thread t stores a[i] in tile[t]; the first {halo} threads also store the elements after the "
      "block (its halo) in tile[{first}] to tile[{last}], guarded at the end of `a`. Then `blk.sync()`, "
      "and only then read the tile.", halo=WIN_HALO, first=WIN_BLOCK, last=WIN_BLOCK + WIN_HALO - 1),
    window_sum, window_sum_solution, _window_case, grid=(WIN_N // WIN_BLOCK,), block=(WIN_BLOCK,),
    rules=(Budget("sectors", WIN_SECTORS),))

# -- 7. a missing sync ---------------------------------------------------------------

REV_N, REV_BLOCK = 1024, 256


# --8<-- [start:reverse_blocks]
def reverse_blocks(blk, a, out):
    tile = blk.shared(blk.bdx, np.float32, name="tile")
    t = blk.tx
    i = blk.bx * blk.bdx + t
    blk.store(tile, t, blk.load(a, i))
    blk.store(out, i, blk.load(tile, blk.bdx - 1 - t))
# --8<-- [end:reverse_blocks]


# --8<-- [start:reverse_blocks_solution]
def reverse_blocks_solution(blk, a, out):
    tile = blk.shared(blk.bdx, np.float32, name="tile")
    t = blk.tx
    i = blk.bx * blk.bdx + t
    blk.store(tile, t, blk.load(a, i))
    blk.sync()  # every warp's part of the tile is in before anyone reads it
    blk.store(out, i, blk.load(tile, blk.bdx - 1 - t))
# --8<-- [end:reverse_blocks_solution]


def _reverse_case(rng):
    a, drawn = uniform(rng, REV_N)
    return Case((a, np.zeros_like(a)), {1: a.reshape(-1, REV_BLOCK)[:, ::-1].reshape(-1)}, {0: drawn})


REVERSE = Puzzle(
    "reverse_blocks", "p2", "fix", _("Fix: the missing sync"),
    _("This kernel reverses each block's {threads} elements through a shared tile. The simulator "
      "runs warps one after another, so the result comes out right, but a real GPU may let warp 0 "
      "read the tile before warp {last} has written its part. Fix the race.", threads=REV_BLOCK,
      last=REV_BLOCK // 32 - 1),
    _("Thread t reads what thread {last} − t wrote, and that thread is in another warp. One "
      "`blk.sync()` between the write and the read, reached by every thread of the block.", last=REV_BLOCK - 1),
    reverse_blocks, reverse_blocks_solution, _reverse_case, grid=(REV_N // REV_BLOCK,), block=(REV_BLOCK,))

# -- 8. a column-major mapping ---------------------------------------------------------

SCALE_N, SCALE_BX, SCALE_BY = 64, 32, 8


# --8<-- [start:scale]
def scale(blk, A, B, N):
    row = blk.bx * blk.bdx + blk.tx
    col = blk.by * blk.bdy + blk.ty
    blk.store(B, (row, col), 3 * blk.load(A, (row, col)))
# --8<-- [end:scale]


# --8<-- [start:scale_solution]
def scale_solution(blk, A, B, N):
    row = blk.by * blk.bdy + blk.ty
    col = blk.bx * blk.bdx + blk.tx  # neighbouring lanes, neighbouring columns
    blk.store(B, (row, col), 3 * blk.load(A, (row, col)))
# --8<-- [end:scale_solution]


def _scale_case(rng):
    A, drawn = uniform(rng, (SCALE_N, SCALE_N))
    return Case((A, np.zeros_like(A), SCALE_N), {1: 3 * A}, {0: drawn})


SCALE = Puzzle(
    "scale", "p2", "fix", _("Fix: a column-major mapping"),
    _("`B = 3 A` for a row-major {n}×{n} matrix, blocks of {bx}×{by} threads. The result is right, "
      "but the 32 lanes of a warp walk down a column. Make every global access coalesced (≥ 90%).",
      n=SCALE_N, bx=SCALE_BX, by=SCALE_BY),
    _("A warp is 32 consecutive x-threads. In a row-major matrix, consecutive addresses are "
      "consecutive columns: `threadIdx.x` should pick the column."),
    scale, scale_solution, _scale_case, grid=(SCALE_N // SCALE_BX, SCALE_N // SCALE_BY),
    block=(SCALE_BX, SCALE_BY), rules=(Coalescing(0.9),))

# -- 9. a 32-way tile ------------------------------------------------------------------

TR_N, TILE, TR_ROWS = 64, 32, 8


# --8<-- [start:transpose]
def transpose(blk, A, B, N):
    tile = blk.shared((32, 32), np.float32, name="tile")
    x = blk.bx * 32 + blk.tx  # blocks of 32×8 threads move 32×32 tiles
    y = blk.by * 32 + blk.ty
    for j in range(0, 32, 8):
        blk.store(tile, (blk.ty + j, blk.tx), blk.load(A, (y + j) * N + x))
    blk.sync()
    x = blk.by * 32 + blk.tx
    y = blk.bx * 32 + blk.ty
    for j in range(0, 32, 8):
        blk.store(B, (y + j) * N + x, blk.load(tile, (blk.tx, blk.ty + j)))
# --8<-- [end:transpose]


# --8<-- [start:transpose_solution]
def transpose_solution(blk, A, B, N):
    tile = blk.shared((32, 33), np.float32, name="tile")  # one padding column
    x = blk.bx * 32 + blk.tx  # blocks of 32×8 threads move 32×32 tiles
    y = blk.by * 32 + blk.ty
    for j in range(0, 32, 8):
        blk.store(tile, (blk.ty + j, blk.tx), blk.load(A, (y + j) * N + x))
    blk.sync()
    x = blk.by * 32 + blk.tx
    y = blk.bx * 32 + blk.ty
    for j in range(0, 32, 8):
        blk.store(B, (y + j) * N + x, blk.load(tile, (blk.tx, blk.ty + j)))
# --8<-- [end:transpose_solution]


def _transpose_case(rng):
    A, drawn = uniform(rng, (TR_N, TR_N))
    return Case((A, np.zeros_like(A), TR_N), {1: np.ascontiguousarray(A.T)}, {0: drawn})


TRANSPOSE = Puzzle(
    "transpose", "p2", "fix", _("Fix: the 32-way tile"),
    _("The tiled transpose of the lecture, {n}×{n}, with a {t}×{t} tile: both global accesses are "
      "coalesced, but reading the tile down a column hits one bank 32 times. Remove the bank "
      "conflict and keep the coalescing.", n=TR_N, t=TILE),
    _("With 32 floats to a row, every row of the tile starts in bank 0. Make the rows one float "
      "longer: row r then starts in bank r."),
    transpose, transpose_solution, _transpose_case, grid=(TR_N // TILE, TR_N // TILE), block=(TILE, TR_ROWS),
    rules=(Coalescing(0.9), NoBankConflict()))

# -- 10. a sector budget ---------------------------------------------------------------

PAIR_N, PAIR_BLOCK = 2048, 256
PAIR_SECTORS = (2 * PAIR_N + PAIR_N) * 4 // SECTOR_BYTES  # read a once, write out once


# --8<-- [start:pair_sum]
def pair_sum(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    left = blk.load(a, 2 * i)
    right = blk.load(a, 2 * i + 1)
    blk.store(out, i, left + right)
# --8<-- [end:pair_sum]


# --8<-- [start:pair_sum_solution]
def pair_sum_solution(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    pair = blk.load(a, 2 * i, width=2)  # a float2: 8 bytes per lane, 256 bytes per warp
    blk.store(out, i, pair[..., 0] + pair[..., 1])
# --8<-- [end:pair_sum_solution]


def _pair_case(rng):
    a, drawn = uniform(rng, 2 * PAIR_N)
    return Case((a, np.zeros(PAIR_N, np.float32)), {1: a[0::2] + a[1::2]}, {0: drawn})


PAIRS = Puzzle(
    "pair_sum", "p2", "target", _("Budget: sectors"),
    _("`out[i] = a[2i] + a[2i+1]` for {n} outputs. The two loads each touch every sector of `a` "
      "and use half of it. Bring the kernel to {budget} sectors: each sector of `a` and of `out` "
      "moved once.", n=format(PAIR_N, ","), budget=format(PAIR_SECTORS, ",")),
    _("One vector load can give a lane both elements: `blk.load(a, 2 * i, width=2)` returns an "
      "array with a last axis of 2."),
    pair_sum, pair_sum_solution, _pair_case, grid=(PAIR_N // PAIR_BLOCK,), block=(PAIR_BLOCK,),
    rules=(Budget("sectors", PAIR_SECTORS),))

# -- 11. a wavefront budget ------------------------------------------------------------

SUM_N, SUM_BLOCK = 4096, 256


def conflict_free_wavefronts(threads: int) -> int:
    """Wavefronts of one block of the sequential-addressing reduction: every warp access one
    wavefront (the tile store, 2 loads and a store per step, the final read)."""
    steps = 0
    s = threads // 2
    while s > 0:
        steps += 3 * cdiv(s, 32)
        s //= 2
    return threads // 32 + steps + 1


SUM_WAVEFRONTS = SUM_N // SUM_BLOCK * conflict_free_wavefronts(SUM_BLOCK)


# --8<-- [start:block_sum]
def block_sum(blk, x, out):
    sdata = blk.shared(blk.bdx, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = 1
    while s < blk.bdx:
        index = 2 * s * tid
        w = index < blk.bdx
        v = blk.load(sdata, index, mask=w) + blk.load(sdata, index + s, mask=w)
        blk.store(sdata, index, v, mask=w)
        blk.sync()
        s *= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)
# --8<-- [end:block_sum]


# --8<-- [start:block_sum_solution]
def block_sum_solution(blk, x, out):
    sdata = blk.shared(blk.bdx, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = blk.bdx // 2
    while s > 0:
        w = tid < s  # the first s threads add the upper half onto the lower half
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.store(sdata, tid, v, mask=w)
        blk.sync()
        s //= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)
# --8<-- [end:block_sum_solution]


def _sum_case(rng):
    x, drawn = integers(rng, SUM_N, 0, 9)
    return Case((x, np.zeros(SUM_N // SUM_BLOCK, np.float32)), {1: x.reshape(-1, SUM_BLOCK).sum(axis=1)}, {0: drawn})


BLOCK_SUM = Puzzle(
    "block_sum", "p2", "target", _("Budget: shared wavefronts"),
    _("The block reduction with a strided index (version 2 of the lecture) is right, but its "
      "accesses `sdata[2·s·tid]` pile up in a few banks. Bring the {blocks} blocks to {budget} "
      "shared wavefronts: what the reduction takes when every warp access costs one wavefront and "
      "only the warps that have work touch `sdata`.", blocks=SUM_N // SUM_BLOCK, budget=format(SUM_WAVEFRONTS, ",")),
    _("Sequential addressing: in each step the first s threads add `sdata[tid + s]` onto "
      "`sdata[tid]`, with s going from half the block down to 1. Neighbouring lanes then touch "
      "neighbouring words."),
    block_sum, block_sum_solution, _sum_case, grid=(SUM_N // SUM_BLOCK,), block=(SUM_BLOCK,),
    rules=(Budget("shared_wavefronts", SUM_WAVEFRONTS),))

PUZZLES = (WINDOW, REVERSE, SCALE, TRANSPOSE, PAIRS, BLOCK_SUM)
