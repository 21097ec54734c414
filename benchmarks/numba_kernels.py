"""The benchmark kernels as real numba ``@cuda.jit`` kernels, for numba's CUDA simulator.

Import this only with ``NUMBA_ENABLE_CUDASIM=1`` set before numba's first import (use
``kernels.numba_kernels()``). The simulator runs one Python thread per CUDA thread, and
finds ``cuda.threadIdx`` & co. by swapping the module-level name ``cuda`` of the kernel's
globals: that is why these kernels live at module level in a file of their own.
"""

from numba import cuda, float32

from kernels import BLOCK_ROWS, REDUCE_THREADS, TILE


@cuda.jit
def nb_vector_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        c[i] = a[i] + b[i]


@cuda.jit
def nb_transpose_naive(A, B, n):
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for j in range(0, TILE, BLOCK_ROWS):
        B[x * n + (y + j)] = A[(y + j) * n + x]


@cuda.jit
def nb_transpose_tiled(A, B, n):
    tile = cuda.shared.array((TILE, TILE + 1), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + tx
    y = cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        tile[ty + j, tx] = A[(y + j) * n + x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + tx
    y = cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, BLOCK_ROWS):
        B[(y + j) * n + x] = tile[tx, ty + j]


@cuda.jit
def nb_reduce_v3(g_in, g_out):
    sdata = cuda.shared.array(REDUCE_THREADS, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    sdata[tid] = g_in[i]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:
            sdata[tid] += sdata[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        g_out[cuda.blockIdx.x] = sdata[0]
