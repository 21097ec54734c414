"""The course's kernels twice: in CUDA C (for ``RawModule``) and in the numba dialect.

The dialect versions are the oracle: the same kernel, line for line, must give the same
results and the same counters (sectors, requests, shared wavefronts and bank conflicts,
branches and divergence) per line.
"""

import numpy as np

from simtdocs import cuda

float32 = np.float32
TILE, ROWS = 32, 8

COURSE_CU = r"""
#include <cuda_runtime.h>
#include <stdio.h>
#define TILE 32
#define ROWS 8

extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

extern "C" __global__ void scale(const float *x, float *y, float alpha, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = alpha * x[i];
    }
}

extern "C" __global__ void reduce_shared(const float *x, float *out) {
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    sdata[tid] = x[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

extern "C" __global__ void matmul_tiled(const float *A, const float *B, float *C, int N) {
    __shared__ float As[16][16];
    __shared__ float Bs[16][16];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * 16 + ty;
    int col = blockIdx.x * 16 + tx;
    float acc = 0.0f;
    for (int t = 0; t < N / 16; ++t) {
        As[ty][tx] = A[row * N + t * 16 + tx];
        Bs[ty][tx] = B[(t * 16 + ty) * N + col];
        __syncthreads();
        for (int k = 0; k < 16; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    C[row * N + col] = acc;
}

extern "C" __global__ void transpose_padded(const float *A, float *B, int N) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = A[(y + j) * N + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        B[(y + j) * N + x] = tile[threadIdx.x][threadIdx.y + j];
}

extern "C" __global__ void histogram(const int *data, int *bins, int n) {
    __shared__ int local[64];
    int t = threadIdx.x;
    if (t < 64) local[t] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + t; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&local[data[i] % 64], 1);
    }
    __syncthreads();
    if (t < 64) atomicAdd(&bins[t], local[t]);
}

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

extern "C" __global__ void reduce_warp(const float *x, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    if (i < n) v = x[i];
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}
"""


@cuda.jit
def vector_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        c[i] = a[i] + b[i]


@cuda.jit
def scale(x, y, alpha, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    while i < n:
        y[i] = alpha * x[i]
        i += cuda.blockDim.x * cuda.gridDim.x


@cuda.jit
def reduce_shared(x, out):
    sdata = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    sdata[tid] = x[cuda.blockIdx.x * cuda.blockDim.x + tid]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:
            sdata[tid] += sdata[tid + s]
        cuda.syncthreads()
        s >>= 1
    if tid == 0: out[cuda.blockIdx.x] = sdata[0]  # noqa: E701  one line, as in the C


@cuda.jit
def matmul_tiled(A, B, C, N):
    As = cuda.shared.array((16, 16), float32)
    Bs = cuda.shared.array((16, 16), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * 16 + ty
    col = cuda.blockIdx.x * 16 + tx
    acc = float32(0.0)
    for t in range(N // 16):
        As[ty, tx] = A[row * N + t * 16 + tx]
        Bs[ty, tx] = B[(t * 16 + ty) * N + col]
        cuda.syncthreads()
        for k in range(16):
            acc += As[ty, k] * Bs[k, tx]
        cuda.syncthreads()
    C[row * N + col] = acc


@cuda.jit
def transpose_padded(A, B, N):
    tile = cuda.shared.array((TILE, TILE + 1), float32)
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        tile[cuda.threadIdx.y + j, cuda.threadIdx.x] = A[(y + j) * N + x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.x * TILE + cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        B[(y + j) * N + x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + j]


@cuda.jit
def histogram(data, bins, n):
    local = cuda.shared.array(64, np.int32)
    t = cuda.threadIdx.x
    if t < 64: local[t] = 0  # noqa: E701
    cuda.syncthreads()
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    while i < n:
        cuda.atomic.add(local, data[i] % 64, 1)
        i += cuda.blockDim.x * cuda.gridDim.x
    cuda.syncthreads()
    if t < 64: cuda.atomic.add(bins, t, local[t])  # noqa: E701


@cuda.jit(device=True)
def warp_sum(v):
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xffffffff, v, offset)
        offset //= 2
    return v


@cuda.jit
def reduce_warp(x, out, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    v = float32(0.0)
    if i < n: v = x[i]  # noqa: E701
    v = warp_sum(v)
    if (cuda.threadIdx.x & 31) == 0: cuda.atomic.add(out, 0, v)  # noqa: E701
