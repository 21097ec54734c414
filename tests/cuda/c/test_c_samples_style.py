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


# -- constructs the held-out CUDA Samples met (each its own small kernel, written for this test) ---

import simtdocs  # noqa: E402
from simtdocs import reference  # noqa: E402

SAMPLES_CU = r"""
#include <cuda_runtime.h>

template <class T> struct SharedMemory {
    __device__ T *getPointer() { extern __shared__ int __smem[]; return (T *)__smem; }
};
template <> struct SharedMemory<double> {
    __device__ double *getPointer() { extern __shared__ double s_double[]; return s_double; }
};

template <class T> __global__ void block_sum(const T *x, T *out, unsigned n) {
    SharedMemory<T> smem;
    T *s = smem.getPointer();
    unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
    s[tid] = (i < n) ? x[i] : T(0);
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

__device__ void bump(unsigned &c, unsigned v) { atomicAdd(&c, v); }

__global__ void count_positive(const int *x, unsigned *out, int n) {
    __shared__ unsigned total;
    __shared__ int base;
    if (threadIdx.x == 0) { total = 0; base = blockIdx.x * blockDim.x; }
    __syncthreads();
    int i = base + threadIdx.x;
    if (i < n && x[i] > 0) bump(total, 1u);
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = total * 2 + 1;
}

__device__ float scale(float v, int k);

template <unsigned dir> __device__ int pick(int a, int b) { return dir ? max(a, b) : min(a, b); }

template <unsigned dir> __global__ void pairs(const int *a, int *o, float *f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    o[i] = pick<dir>(a[2 * i], a[2 * i + 1]);
#if CUDART_VERSION >= 11000 && defined(__linux__)
    f[i] = scale(float(o[i]), int(3.7f));
#else
    f[i] = -1.0f;
#endif
}

__device__ float scale(float v, int k) { return v * k + unsigned(2); }
"""


@pytest.fixture(scope="module")
def samples():
    return RawModule(code=SAMPLES_CU, name_expressions=("block_sum<float>", "block_sum<double>", "pairs<0>",
                                                        "pairs<1>"))


def _both(kernel, grid, block, args, **kw):
    """Both engines on fresh copies: equal outputs and counters; the fast engine's (args, stats)."""
    runs = []
    for run in (reference.launch, simtdocs.launch):
        copies = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        runs.append((copies, run(kernel, grid, block, args=copies, **kw)))
    (ra, rs), (fa, fs) = runs
    assert all(x.tobytes() == y.tobytes() for x, y in zip(ra, fa) if isinstance(x, np.ndarray))
    assert rs.totals == fs.totals and rs.by_site == fs.by_site
    return fa, fs


@pytest.mark.parametrize("name, dtype", [("block_sum<float>", np.float32), ("block_sum<double>", np.float64)])
def test_shared_memory_get_pointer_takes_the_specialization_of_its_type(samples, name, dtype):
    # SharedMemory<double> is its own struct (an extern array of double), the primary template
    # reads the int array as T; either way s is the block's dynamic shared memory of T.
    x = np.random.default_rng(5).random(1000).astype(dtype)
    (_, out, _), stats = _both(samples.get_function(name).kernel, 8, 128, (x, np.zeros(8, dtype), np.uint32(1000)),
                               shared_bytes=128 * x.itemsize)
    padded = np.concatenate([x, np.zeros(24, dtype)]).reshape(8, 128)
    assert np.allclose(out, padded.sum(axis=1), rtol=1e-6)
    assert stats.totals.barriers == 8 * (1 + 7)  # per block: one barrier, then one per halving of 128


def test_a_shared_scalar_is_a_value_and_a_reference_to_it_takes_atomics(samples):
    x = np.random.default_rng(6).integers(-5, 5, 1000).astype(np.int32)
    (_, out, _), stats = _both(samples.get_function("count_positive").kernel, 4, 256,
                               (x, np.zeros(4, np.uint32), np.int32(1000)))
    padded = np.concatenate([x, np.zeros(24, np.int32)]).reshape(4, 256)
    assert out.tolist() == [2 * int((row > 0).sum()) + 1 for row in padded]
    # one atomic instruction per warp with a positive element; its other lanes wait on the one address
    warps = padded.reshape(4, 8, 32) > 0
    assert stats.totals.atomics == int(warps.any(axis=2).sum())
    assert stats.totals.atomics + stats.totals.atomic_conflicts == int(warps.sum())


@pytest.mark.parametrize("direction", [0, 1])
def test_a_forwarded_template_value_a_prototype_functional_casts_and_version_macros(samples, direction):
    # pick<dir> passes the kernel's own template value on; scale is declared before its
    # definition; float(…), int(3.7f) == 3 and unsigned(2) are casts; CUDART_VERSION is CUDA 13's.
    a = np.random.default_rng(7).integers(-100, 100, 200).astype(np.int32)
    (_, o, f, _), _ = _both(samples.get_function(f"pairs<{direction}>").kernel, 1, 128,
                            (a, np.zeros(100, np.int32), np.zeros(100, np.float32), np.int32(100)))
    expected = (np.maximum if direction else np.minimum)(a[0::2], a[1::2])
    assert o.tolist() == expected.tolist()
    assert f.tolist() == (expected * 3 + 2).astype(np.float32).tolist()
