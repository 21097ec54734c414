"""Kernels the tests launch.

The lectures' kernels are the companion scripts' own, taken by section with
``simtdocs.snippets.definitions`` (which runs only the definitions of a section, never
its experiment): what the pages show is what the tests check, and there is no second copy
to drift from them. Below them, the few kernels no lecture has, each saying why a test needs it.
"""

import numpy as np

from simtdocs.snippets import definitions


def _sections(script: str, *names: str) -> dict:
    """What the sections ``names`` of ``snippets/p2/<script>`` define, after its setup section."""
    return definitions(*(f"snippets/p2/{script}:{name}" for name in ("setup", *names)))


_01 = _sections("01_cuda_programming_model.py", "kernel", "unchecked", "bias_kernels", "grid_stride")
_02 = _sections("02_memory_coalescing.py", "pattern_kernel", "transpose_kernels")
_03 = _sections("03_shared_memory_sync_reduction.py", "bank_kernel", "reverse",
                "reduce_v1", "reduce_v2", "reduce_v3", "reduce_v4", "reduce_v5", "shuffle")


# P2 code 01: the programming model
vector_add = _01["vector_add"]  # vector_add(blk, a, b, c, n), masked by gid < n
vector_add_unchecked = _01["vector_add_unchecked"]  # the same without the mask
bias_add = _01["bias_add"]  # bias_add(blk, X, bias, M, N): column from x
bias_add_swapped = _01["bias_add_swapped"]  # the same with the row from x
scale = _01["scale"]  # scale(blk, x, y, alpha, n): a grid-stride loop

# P2 code 02: global memory and coalescing
pattern_kernel = _02["pattern_kernel"]  # pattern_kernel(blk, a, index, width=1): lane l reads a[index[l]]
copy = _02["copy"]  # copy(blk, A, B, N): the transposes' reference
transpose_naive = _02["transpose_naive"]
transpose_tiled = _02["transpose_tiled"]  # transpose_tiled(blk, A, B, N, pad=1, sync=True)
TILE, ROWS = _02["TILE"], _02["ROWS"]  # a TILE × TILE tile per block of TILE × ROWS threads

# P2 code 03: shared memory, synchronization and reduction
bank_kernel = _03["bank_kernel"]  # bank_kernel(blk, row_words): fill a 32 × row_words tile, read column 0
reverse = _03["reverse"]  # reverse(blk, d, sync): 256 elements through shared memory
reduce_v1, reduce_v2, reduce_v3, reduce_v4, reduce_v5 = (_03[f"reduce_v{v}"] for v in range(1, 6))  # 256 threads
shuffle_steps = _03["shuffle_steps"]  # shuffle_steps(blk, x, trace): a warp sum by shfl_down, every round stored


# -- kernels no lecture has -------------------------------------------------------------------


def transpose_tiled_sync_every_row(blk, A, B, N, pad=1):
    """Test-only: the lecture's tiled transpose with a sync after each row of the tile instead of
    one after the whole tile. The pages only say a sync is needed; the test shows that syncing
    more often is also race-free and costs 4 barriers per block instead of 1."""
    tile = blk.shared((TILE, TILE + pad), np.float32, name="tile")
    x, y = blk.bx * TILE + blk.tx, blk.by * TILE + blk.ty
    for j in range(0, TILE, ROWS):
        blk.store(tile, (blk.ty + j, blk.tx), blk.load(A, (y + j) * N + x))
        blk.sync()
    x, y = blk.by * TILE + blk.tx, blk.bx * TILE + blk.ty
    for j in range(0, TILE, ROWS):
        blk.store(B, (y + j) * N + x, blk.load(tile, (blk.tx, blk.ty + j)))
