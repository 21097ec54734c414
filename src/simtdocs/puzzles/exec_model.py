"""Puzzles of the execution-model lecture: which warp a thread is in, divergence that
warp alignment or sorting removes, and an instruction budget."""

from __future__ import annotations

import numpy as np

from simtdocs.i18n import _

from .core import Budget, Case, Coalescing, Divergence, Puzzle, uniform

# -- 1. which warp am I in -------------------------------------------------------------

WID_GRID, WID_BX, WID_BY = 2, 16, 8
WID_THREADS = WID_BX * WID_BY


# --8<-- [start:warp_of]
def warp_of(blk, warp, lane):
    t = blk.ty * blk.bdx + blk.tx  # the thread's number in its block: x fastest
    g = blk.bx * (blk.bdx * blk.bdy) + t  # one output per thread of the grid
    w = blk.tx // 32  # TODO: the warp of this thread within its block
    blk.store(warp, g, w)
    blk.store(lane, g, blk.tx % 32)  # TODO: its lane
# --8<-- [end:warp_of]


# --8<-- [start:warp_of_solution]
def warp_of_solution(blk, warp, lane):
    t = blk.ty * blk.bdx + blk.tx
    g = blk.bx * (blk.bdx * blk.bdy) + t
    blk.store(warp, g, t // 32)  # warps are cut from the linear thread number
    blk.store(lane, g, t % 32)
# --8<-- [end:warp_of_solution]


def _warp_of_case(rng):
    t = np.arange(WID_GRID * WID_THREADS) % WID_THREADS
    z = np.zeros(t.size, np.int32)
    return Case((z, z.copy()), {0: (t // 32).astype(np.int32), 1: (t % 32).astype(np.int32)})


WARP_OF = Puzzle(
    "warp_of", "exec_model", "write", _("Which warp am I in?"),
    _("Blocks of {bx}×{by} threads: every thread writes the warp it belongs to (within its block) "
      "to `warp[g]` and its lane to `lane[g]`, where `g` is its number in the grid.", bx=WID_BX, by=WID_BY),
    _("Warps are cut from the linear thread number, x fastest: t = threadIdx.y · blockDim.x + "
      "threadIdx.x, warp t // 32, lane t % 32. A row of the block holds only half a warp here."),
    warp_of, warp_of_solution, _warp_of_case, grid=(WID_GRID,), block=(WID_BX, WID_BY))

# -- 2. divergence that warp alignment removes ----------------------------------------

ALIGN_N, ALIGN_BLOCK, WORK = 4096, 256, 4


# --8<-- [start:even_odd]
def even_odd(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(a, i)
    even = blk.branch(i % 2 == 0)  # if (i % 2 == 0)
    blk.alu(4, mask=even)
    blk.alu(4, mask=~even)
    blk.store(out, i, np.where(even, 2 * v, v + 100))
# --8<-- [end:even_odd]


# --8<-- [start:even_odd_solution]
def even_odd_solution(blk, a, out):
    g = blk.bx * (blk.bdx // 32) + blk.warp  # the warp's number in the grid
    parity = g % 2  # even warps take even elements, odd warps odd ones
    i = 2 * (32 * (g // 2) + blk.lane) + parity
    v = blk.load(a, i)
    even = blk.branch(parity == 0)  # the same for all 32 lanes of a warp
    blk.alu(4, mask=even)
    blk.alu(4, mask=~even)
    blk.store(out, i, np.where(even, 2 * v, v + 100))
# --8<-- [end:even_odd_solution]


def _even_odd_case(rng):
    a, drawn = uniform(rng, ALIGN_N)
    even = np.arange(ALIGN_N) % 2 == 0
    return Case((a, np.zeros_like(a)), {1: np.where(even, 2 * a, a + 100)}, {0: drawn})


EVEN_ODD = Puzzle(
    "even_odd", "exec_model", "fix", _("Fix: divergence that warp alignment removes"),
    _("Even elements are doubled, odd ones get 100 added, {work} instructions of work on each side. "
      "With thread i on element i, every warp runs both sides. Change which element each thread "
      "takes so that no warp diverges.", work=WORK),
    _("Let even warps take only even elements and odd warps only odd ones: warp g, lane l takes "
      "element 2·(32·(g // 2) + l) + g % 2, and the branch asks about g, not about i."),
    even_odd, even_odd_solution, _even_odd_case, grid=(ALIGN_N // ALIGN_BLOCK,), block=(ALIGN_BLOCK,),
    rules=(Divergence(0),))

# -- 3. divergence that sorting removes ------------------------------------------------

SORT_N, SORT_BLOCK = 4096, 256


# --8<-- [start:signed]
def signed(blk, x, order, y):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    pos = blk.branch(v > 0)  # if (x[i] > 0)
    blk.alu(4, mask=pos)
    blk.alu(4, mask=~pos)
    blk.store(y, i, np.where(pos, np.sqrt(np.abs(v)), -v * v))
# --8<-- [end:signed]


# --8<-- [start:signed_solution]
def signed_solution(blk, x, order, y):
    i = blk.bx * blk.bdx + blk.tx
    j = blk.load(order, i)  # the i-th element in sorted order: positives first
    v = blk.load(x, j)
    pos = blk.branch(v > 0)
    blk.alu(4, mask=pos)
    blk.alu(4, mask=~pos)
    blk.store(y, j, np.where(pos, np.sqrt(np.abs(v)), -v * v))
# --8<-- [end:signed_solution]


def _signed_case(rng):
    mags = rng.random(SORT_N).astype(np.float32) + np.float32(0.5)
    sign = np.repeat(np.array([1, -1], np.float32), SORT_N // 2)  # exactly half positive
    x = mags * rng.permutation(sign)
    order = np.argsort(x <= 0, kind="stable").astype(np.int32)
    drawn = _("values of magnitude {lo} to {hi}, half of them negative, in random order", lo=0.5, hi=1.5)
    return Case((x, order, np.zeros_like(x)), {2: np.where(x > 0, np.sqrt(np.abs(x)), -x * x)}, {0: drawn})


SIGNED = Puzzle(
    "signed", "exec_model", "fix", _("Fix: divergence that sorting removes"),
    _("The divergence experiment of the lecture: positive and negative values in random order, "
      "{n} of them, half positive. The host has sorted their indices by sign into `order`. Use it "
      "so that no warp diverges, and write every result to its own element.", n=format(SORT_N, ",")),
    _("Thread i handles element `j = order[i]`: read `x[j]`, branch on it, and store to `y[j]`. "
      "The positives then fill whole warps, and so do the negatives."),
    signed, signed_solution, _signed_case, grid=(SORT_N // SORT_BLOCK,), block=(SORT_BLOCK,),
    rules=(Divergence(0),))

# -- 4. an instruction budget ---------------------------------------------------------

COPY_N, COPY_GRID, COPY_BLOCK, PER_THREAD = 8192, 8, 256, 4
COPY_INSTRUCTIONS = 2 * COPY_GRID * COPY_BLOCK // 32  # one load and one store per warp


# --8<-- [start:copy4]
def copy4(blk, a, out):
    base = blk.bx * blk.bdx * 4 + blk.tx  # 4 elements per thread
    for k in range(4):
        i = base + k * blk.bdx
        blk.store(out, i, blk.load(a, i))
# --8<-- [end:copy4]


# --8<-- [start:copy4_solution]
def copy4_solution(blk, a, out):
    i = (blk.bx * blk.bdx + blk.tx) * 4
    v = blk.load(a, i, width=4)  # a float4: 16 bytes per lane in one instruction
    blk.store(out, i, v, width=4)
# --8<-- [end:copy4_solution]


def _copy_case(rng):
    a, drawn = uniform(rng, COPY_N)
    return Case((a, np.zeros_like(a)), {1: a.copy()}, {0: drawn})


COPY4 = Puzzle(
    "copy4", "exec_model", "target", _("Budget: warp instructions"),
    _("Copy {n} floats with {blocks} blocks of {threads} threads, {k} elements per thread. The "
      "kernel is coalesced but issues {k} loads and {k} stores per warp. Bring it to {budget} warp "
      "instructions and keep it coalesced.", n=format(COPY_N, ","), blocks=COPY_GRID, threads=COPY_BLOCK,
      k=PER_THREAD, budget=COPY_INSTRUCTIONS),
    _("A vector load moves up to 16 bytes per lane: `blk.load(a, i, width=4)` with `i` a multiple "
      "of 4, and the same `width` for the store."),
    copy4, copy4_solution, _copy_case, grid=(COPY_GRID,), block=(COPY_BLOCK,),
    rules=(Budget("warp_instructions", COPY_INSTRUCTIONS), Coalescing(0.9)))

PUZZLES = (WARP_OF, EVEN_ODD, SIGNED, COPY4)
