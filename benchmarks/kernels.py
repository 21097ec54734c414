"""The benchmark kernels, three ways each: simtdocs, plain numpy (the floor), numba CUDA.

* ``simtdocs`` kernels are written the way the lectures write them: one Python function,
  ``blk`` gives per-thread index arrays, memory goes through ``blk.load``/``blk.store``.
* ``numpy`` floors compute the same result with no simulation at all.
* ``numba`` kernels are real ``@cuda.jit`` kernels, in ``numba_kernels.py`` (imported by
  ``numba_kernels()`` below, so that this module works without numba).

Shapes follow the lectures: vector add with 256 threads per block; the transposes with a
32×32 tile, 32×8 blocks and 4 elements per thread; the reduction is version 3 of Harris
("sequential addressing") with 256 threads per block.
"""

from __future__ import annotations

import os

import numpy as np

TILE = 32  # transpose tile side
BLOCK_ROWS = 8  # transpose block is TILE × BLOCK_ROWS threads: each thread moves TILE / BLOCK_ROWS elements
REDUCE_THREADS = 256
VADD_THREADS = 256


# -- simtdocs ------------------------------------------------------------------------------


def vector_add(blk, a, b, c, n):
    i = blk.bx * blk.bdx + blk.tx
    m = i < n
    x = blk.load(a, i, mask=m)
    y = blk.load(b, i, mask=m)
    blk.store(c, i, x + y, mask=m)


def transpose_naive(blk, A, B, n):
    """B = Aᵀ for an n×n matrix: reads along rows (coalesced), writes down columns (strided)."""
    x = blk.bx * TILE + blk.tx
    y = blk.by * TILE + blk.ty
    for j in range(0, TILE, BLOCK_ROWS):
        v = blk.load(A, (y + j) * n + x)
        blk.store(B, x * n + (y + j), v)


def transpose_tiled(blk, A, B, n):
    """B = Aᵀ through a 32×33 shared tile: both global accesses coalesced, no bank conflict."""
    tile = blk.shared((TILE, TILE + 1), np.float32, name="tile")
    x = blk.bx * TILE + blk.tx
    y = blk.by * TILE + blk.ty
    for j in range(0, TILE, BLOCK_ROWS):
        blk.store(tile, (blk.ty + j, blk.tx), blk.load(A, (y + j) * n + x))
    blk.sync()
    x = blk.by * TILE + blk.tx
    y = blk.bx * TILE + blk.ty
    for j in range(0, TILE, BLOCK_ROWS):
        blk.store(B, (y + j) * n + x, blk.load(tile, (blk.tx, blk.ty + j)))


def reduce_v3(blk, g_in, g_out):
    """Harris's reduction, version 3 (sequential addressing): one partial sum per block."""
    sdata = blk.shared(REDUCE_THREADS, np.float32, name="sdata")
    tid = blk.tid
    i = blk.bx * blk.bdx + blk.tx
    blk.store(sdata, tid, blk.load(g_in, i))
    blk.sync()
    s = blk.bdx // 2
    while s > 0:
        m = blk.branch(tid < s)
        v = blk.load(sdata, tid, mask=m) + blk.load(sdata, tid + s, mask=m)
        blk.store(sdata, tid, v, mask=m)
        blk.sync()
        s //= 2
    first = blk.branch(tid == 0)
    blk.store(g_out, blk.bx + 0 * tid, blk.load(sdata, 0 * tid, mask=first), mask=first)


# -- numpy floors --------------------------------------------------------------------------


def np_vector_add(a, b, c):
    np.add(a, b, out=c)


def np_transpose(A, B):
    B[:] = A.T


def np_reduce(x, out):
    out[:] = x.reshape(-1, REDUCE_THREADS).sum(1)


# -- numba's CUDA simulator ----------------------------------------------------------------


def numba_kernels() -> dict:
    """Import numba with its CUDA simulator on and return its kernels by case name.

    Raises ImportError when numba is missing, or was imported earlier in this process
    without ``NUMBA_ENABLE_CUDASIM=1`` (the variable is read once, at numba's import).
    """
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    import numba

    if not numba.config.ENABLE_CUDASIM:
        raise ImportError("numba was imported before NUMBA_ENABLE_CUDASIM=1 was set; its CUDA simulator is off")
    import numba_kernels as nk  # benchmarks/ is on sys.path, as for this module

    return {
        "vector_add": nk.nb_vector_add,
        "transpose_naive": nk.nb_transpose_naive,
        "transpose_tiled": nk.nb_transpose_tiled,
        "reduce_v3": nk.nb_reduce_v3,
    }
