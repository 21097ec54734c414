"""The lectures' kernels written per thread, as a numba.cuda user would write them.

Each is the CUDA C of its lecture, line for line, with ``from simtdocs import cuda`` as the
only change from numba. ``tests/cuda/test_cuda_lectures.py`` checks that they give the
counters of the lectures' own ``blk`` versions (snippets/p2, snippets/exec_model).
"""

import numpy as np

from simtdocs import cuda

float32 = np.float32
TILE, ROWS = 32, 8


@cuda.jit
def vector_add(a, b, c, n):
    i = cuda.grid(1)
    if i < n:
        c[i] = a[i] + b[i]


@cuda.jit
def scale(x, y, alpha, n):  # the grid-stride loop
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        y[i] = alpha * x[i]


@cuda.jit
def transpose_naive(A, B, N):
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        B[x * N + (y + j)] = A[(y + j) * N + x]


@cuda.jit
def transpose_tiled(A, B, N, pad, sync):
    tile = cuda.shared.array((TILE, TILE + pad), float32)  # numba wants a constant; any uniform value works here
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        tile[cuda.threadIdx.y + j, cuda.threadIdx.x] = A[(y + j) * N + x]
    if sync:
        cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.x * TILE + cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        B[(y + j) * N + x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + j]


@cuda.jit
def reverse(d, sync):
    buf = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    buf[t] = d[t]
    if sync:
        cuda.syncthreads()
    d[t] = buf[255 - t]


@cuda.jit
def reduce_v1(x, out):
    sdata = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    sdata[tid] = x[cuda.blockIdx.x * cuda.blockDim.x + tid]
    cuda.syncthreads()
    s = 1
    while s < cuda.blockDim.x:
        if tid % (2 * s) == 0:
            sdata[tid] += sdata[tid + s]
        cuda.syncthreads()
        s *= 2
    if tid == 0:
        out[cuda.blockIdx.x] = sdata[0]


@cuda.jit
def reduce_v2(x, out):
    sdata = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    sdata[tid] = x[cuda.blockIdx.x * cuda.blockDim.x + tid]
    cuda.syncthreads()
    s = 1
    while s < cuda.blockDim.x:
        index = 2 * s * tid
        if index < cuda.blockDim.x:
            sdata[index] += sdata[index + s]
        cuda.syncthreads()
        s *= 2
    if tid == 0:
        out[cuda.blockIdx.x] = sdata[0]


@cuda.jit
def reduce_v3(x, out):
    sdata = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    sdata[tid] = x[cuda.blockIdx.x * cuda.blockDim.x + tid]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:
            sdata[tid] += sdata[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = sdata[0]


@cuda.jit
def reduce_v4(x, out):
    sdata = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * (2 * cuda.blockDim.x) + tid
    sdata[tid] = x[i] + x[i + cuda.blockDim.x]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:
            sdata[tid] += sdata[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = sdata[0]


@cuda.jit
def reduce_v5(x, out):
    sdata = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * (2 * cuda.blockDim.x) + tid
    sdata[tid] = x[i] + x[i + cuda.blockDim.x]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 32:
        if tid < s:
            sdata[tid] += sdata[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid < 32:
        v = sdata[tid] + sdata[tid + 32]
        for delta in (16, 8, 4, 2, 1):
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, delta)
        if tid == 0:
            out[cuda.blockIdx.x] = v


@cuda.jit
def reduce_warp_sync(x, out):
    """Sequential addressing down to 64 partial sums, then the classic warp-synchronous tail
    in shared memory, each step ordered by __syncwarp()."""
    sdata = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    sdata[tid] = x[cuda.blockIdx.x * cuda.blockDim.x + tid]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 32:
        if tid < s:
            sdata[tid] += sdata[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid < 32:
        for step in (32, 16, 8, 4, 2, 1):
            v = sdata[tid] + sdata[tid + step]
            cuda.syncwarp()
            sdata[tid] = v
            cuda.syncwarp()
        if tid == 0:
            out[cuda.blockIdx.x] = sdata[0]


@cuda.jit
def shuffle_steps(x, trace):
    v = x[cuda.threadIdx.x]
    trace[cuda.threadIdx.x] = v
    step = 1
    for delta in (16, 8, 4, 2, 1):
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, delta)
        trace[step * 32 + cuda.threadIdx.x] = v
        step += 1


@cuda.jit
def if_else(take_if, out):  # the divergence demo of the execution-model lecture
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if take_if[i]:
        out[i] = 1
    else:
        out[i] = 2


@cuda.jit
def two_paths(a, b, out, odd_even):  # P2's divergence demo: even and odd lanes, or whole warps
    t = cuda.grid(1)
    if odd_even:
        cond = cuda.threadIdx.x % 2 == 0
    else:
        cond = (cuda.threadIdx.x // 32) % 2 == 0
    if cond:
        out[t] = a[t] + 1.0
    else:
        out[t] = b[t] - 1.0
