"""The C that CUDA Samples and PMPP kernels are written in (our own kernels in their style):
cooperative groups' block and 32-thread tiles, the ``SharedMemory<T>`` idiom, templates
with a block size, ``__constant__``/``__device__`` variables through ``get_global``."""

import numpy as np
import pytest

from simtdocs.cuda import CompileError, RawModule

STYLE_CU = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

template <class T> struct SharedMemory {
    __device__ inline operator T *() {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }
};

template <class T, unsigned int blockSize>
__global__ void block_sum(const T *in, T *out, unsigned int n) {
    cg::thread_block block = cg::this_thread_block();
    T *buf = SharedMemory<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockSize * 2 + tid;
    T sum = (i < n) ? in[i] : 0;
    if (i + blockSize < n) sum += in[i + blockSize];
    buf[tid] = sum;
    cg::sync(block);
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) buf[tid] = sum = sum + buf[tid + s];
        cg::sync(block);
    }
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    if (block.thread_rank() < 32) {
        if (blockSize >= 64) sum += buf[tid + 32];
        for (int offset = warp.size() / 2; offset > 0; offset /= 2)
            sum += warp.shfl_down(sum, offset);
    }
    if (block.thread_rank() == 0) out[blockIdx.x] = sum;
}

#define RADIUS 3
__constant__ float weights[2 * RADIUS + 1];
__device__ unsigned int over;

extern "C" __global__ void stencil(const float *x, float *y, int n, float limit) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < RADIUS || i >= n - RADIUS) return;
    float acc = 0.0f;
    #pragma unroll
    for (int k = -RADIUS; k <= RADIUS; ++k) acc += weights[RADIUS + k] * x[i + k];
    y[i] = acc;
    if (acc > limit) atomicAdd(&over, 1u);
}

extern "C" __global__ void uses_grid_sync(float *x) {
    cg::grid_group grid = cg::this_grid();
    x[0] = 1.0f;
    grid.sync();
}
"""


@pytest.fixture(scope="module")
def style():
    return RawModule(code=STYLE_CU, name_expressions=("block_sum<float,256>", "block_sum<int,128>"))


@pytest.mark.parametrize("name,dtype,threads", [("block_sum<float,256>", np.float32, 256),
                                                ("block_sum<int,128>", np.int32, 128)])
def test_cooperative_groups_and_shared_memory_idiom(style, name, dtype, threads):
    rng = np.random.default_rng(3)
    x = (rng.random(5000) * 100).astype(dtype)
    blocks = -(-len(x) // (2 * threads))
    out = np.zeros(blocks, dtype)
    stats = style.get_function(name)(blocks, threads, (x, out, np.uint32(len(x))), shared_mem=threads * 4)
    expected = np.add.reduceat(x.astype(np.float64), np.arange(0, len(x), 2 * threads))
    assert np.allclose(out, expected, rtol=1e-5)
    assert stats.totals.shuffles > 0 and stats.totals.barriers > 0


def test_constant_and_device_variables_through_get_global(style):
    w = style.get_global("weights")
    w[:] = np.float32([1, 2, 3, 4, 3, 2, 1]) / 16
    style.get_global("over")[:] = 0
    x = np.random.default_rng(4).random(2000, dtype=np.float32)
    y = np.zeros_like(x)
    stats = style.get_function("stencil")(8, 256, (x, y, np.int32(len(x)), np.float32(0.6)))
    ref = np.convolve(x, w[::-1], mode="same")
    assert np.allclose(y[3:-3], ref[3:-3], rtol=1e-5)
    assert style.get_global("over")[0] == (y[3:-3] > np.float32(0.6)).sum() > 0
    assert stats.totals.atomics > 0
    with pytest.raises(CompileError, match="no __constant__ or __device__ variable"):
        style.get_global("nothing")


def test_grid_sync_is_refused_at_its_line(style):
    line = 1 + STYLE_CU.split("\n").index("    cg::grid_group grid = cg::this_grid();")
    with pytest.raises(CompileError, match=rf":{line}:5: uses_grid_sync: the cooperative group grid_group"):
        style.get_function("uses_grid_sync")
