"""The benchmark kernels, three ways each: simtdocs, plain numpy (the floor), numba CUDA.

* ``simtdocs`` kernels are the lectures' own, taken from the companion scripts by section
  (``simtdocs.snippets.definitions``, which runs a section's definitions and none of its
  experiment): what the pages show is what is timed, and the tests load the same kernels.
* ``numpy`` floors compute the same result with no simulation at all.
* ``numba`` kernels are real ``@cuda.jit`` kernels, in ``numba_kernels.py`` (imported by
  ``numba_kernels()`` below, so that this module works without numba).

Shapes follow the lectures: vector add with 256 threads per block; the transposes with a
32×32 tile, 32×8 blocks and 4 elements per thread; the reduction is version 3 of Harris
("sequential addressing") with 256 threads per block.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from simtdocs.snippets import definitions

ROOT = Path(__file__).resolve().parents[1]

REDUCE_THREADS = 256
VADD_THREADS = 256


# -- simtdocs: the lectures' own kernels ---------------------------------------------------


_p2 = definitions(
    "snippets/p2/01_cuda_programming_model.py:setup",
    "snippets/p2/01_cuda_programming_model.py:kernel",
    "snippets/p2/02_memory_coalescing.py:transpose_kernels",
    "snippets/p2/03_shared_memory_sync_reduction.py:reduce_v3",
    base=ROOT,
)
vector_add = _p2["vector_add"]
transpose_naive = _p2["transpose_naive"]  # 32×8 blocks, each moving a 32×32 tile
transpose_tiled = _p2["transpose_tiled"]  # through a 32×33 shared tile
reduce_v3 = _p2["reduce_v3"]  # Harris's version 3, sequential addressing, 256 threads
TILE = _p2["TILE"]  # transpose tile side
BLOCK_ROWS = _p2["ROWS"]  # a transpose block is TILE × BLOCK_ROWS threads, each moving TILE / BLOCK_ROWS elements


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
