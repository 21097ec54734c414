"""Gaps the held-out CUDA Samples run found (issue 39), each with a kernel of our own in the
samples' style: an ``-I`` header's lines (a refusal, the counters and a sanitizer error name
the header and its own line), ``atomicExch`` on a ``__shared__`` element no thread wrote (an
undefined old value, not an initcheck error), initialised ``__constant__``/``__device__``
variables, a file-scope declaration outside the subset refused only for the kernels that use
it, and a file whose comments are not UTF-8.

Every kernel runs on both engines (``both``), with results derived by hand.
"""

import numpy as np
import pytest

import simtdocs
from simtdocs import MemcheckError, reference
from simtdocs.cuda import CompileError, RawModule
from simtdocs.cuda.runtime import UndefinedValueError

from test_c_features import both

int32, float32, uint32 = np.int32, np.float32, np.uint32

#: a sample's *_common.cuh (valid CUDA: test_nvcc compiles it); the tests add a function
#: outside the subset at its lines 9-11 and include it from MAIN with an -I option
HELPERS = """\
#pragma once
// scaling helpers, as a sample's *_common.cuh keeps them
#define SCALE 3
__device__ inline int scaled(int v) { return v * SCALE; }
__device__ inline int shifted(const int *d, int i) { return d[i + 64]; }
__global__ void scaleAll(int *d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        d[i] = scaled(d[i]);
}
"""

BROKEN = """\
__device__ inline int broken(int v) {
    return v + mystery(v);
}
"""


def main_file() -> str:
    """The including file (a function's string: test_nvcc compiles module-level sources alone)."""
    return """\
#include "scale_common.cuh"

__global__ void useHelpers(int *d, int n) {
    int i = threadIdx.x;
    if (i < n) d[i] = scaled(d[i]) + 1;
}
__global__ void useBroken(int *d) { d[threadIdx.x] = broken(1); }
__global__ void readPast(const int *d, int *out) { out[threadIdx.x] = shifted(d, threadIdx.x); }
"""


@pytest.fixture
def helpers(tmp_path):
    (tmp_path / "scale_common.cuh").write_text(HELPERS + BROKEN)
    return tmp_path


def test_a_refusal_in_an_included_header_names_the_header_and_its_own_line(helpers):
    m = RawModule(code=main_file(), options=(f"-I{helpers}",))
    header = str(helpers / "scale_common.cuh")
    # `mystery` is on line 12, column 16, of the header (not line 1 of the including file)
    with pytest.raises(CompileError) as e:
        m.get_function("useBroken")
    assert str(e.value).startswith(f"{header}:12:16: broken: `mystery` is not a __device__ function")
    assert "(line 12: return v + mystery(v);)" in str(e.value)
    m.get_function("useHelpers")  # the other kernels of the file still load


def test_a_kernel_of_a_header_counts_on_the_headers_lines(helpers):
    m = RawModule(code=main_file(), options=(f"-I{helpers}",))
    header = str(helpers / "scale_common.cuh")
    d = np.arange(40, dtype=int32) - 7
    (out, _), stats = both(m.get_function("scaleAll"), (1,), (64,), (d, int32(40)))
    assert list(out) == [3 * (k - 7) for k in range(40)]
    # two warps; the branch at line 8 diverges in warp 1 (lanes 8..31 idle), the store at 9
    sites = {(s.filename, s.lineno): s.source for s in stats.by_site}
    assert sites == {(header, 8): "if (i < n)", (header, 9): "d[i] = scaled(d[i]);"}
    by_line = {s.lineno: c for s, c in stats.by_site.items()}
    assert (by_line[8].branches, by_line[8].divergent_branches) == (2, 1)
    assert by_line[9].requests == 4  # a load and a store per warp
    (out, _), stats = both(m.get_function("useHelpers"), (1,), (64,), (d, int32(40)))
    assert list(out) == [3 * (k - 7) + 1 for k in range(40)]
    assert {s.lineno for s in stats.by_site} == {5}  # the including file's own line 5
    assert all(s.filename.startswith("<cuda ") for s in stats.by_site)


def test_a_memcheck_error_in_a_header_function_names_the_header_line(helpers):
    m = RawModule(code=main_file(), options=(f"-I{helpers}",))
    k = m.get_function("readPast")
    for launch in (reference.launch, lambda *a, **kw: k(*a[1:], **kw)):
        with pytest.raises(MemcheckError, match=r"return d\[i \+ 64\];"):
            launch(k, (1,), (32,), (np.zeros(64, int32), np.zeros(32, int32)))


EXCHANGE = """\
__global__ void claimSlots(int *out) {
    __shared__ int slot[64];
    int t = threadIdx.x;
    atomicExch(&slot[t], 3 * t + blockIdx.x);   // the old value is not used
    __syncthreads();
    out[blockIdx.x * 64 + t] = slot[63 - t];
}
__global__ void keepOld(int *out) {
    __shared__ int slot[64];
    int t = threadIdx.x;
    if (t < 16) slot[t] = 100 + t;
    __syncthreads();
    int old = atomicExch(&slot[t], t);
    if (t < 16) out[t] = old;                  // only the written part of the old values
    int tmp = old * 2;                         // arithmetic on an undefined value: still fine
    if (t == 63) out[63] = slot[t];
}
__global__ void storeOld(int *out) {
    __shared__ int slot[64];
    int t = threadIdx.x;
    if (t < 16) slot[t] = 100 + t;
    __syncthreads();
    int old = atomicExch(&slot[t], t);
    out[t] = old;                              // thread 16's old value was never written
}
__global__ void branchOnOld(int *out) {
    __shared__ int lock;
    int old = atomicExch(&lock, 1);
    if (old == 0) out[threadIdx.x] = 1;
}
__global__ void addToUnwritten(int *out) {
    __shared__ int count[4];
    atomicAdd(&count[threadIdx.x % 4], 1);     // an add reads the old value into the new one
    __syncthreads();
    out[threadIdx.x] = count[threadIdx.x % 4];
}
"""


def test_atomic_exch_on_an_unwritten_shared_element_is_an_undefined_old_value():
    m = RawModule(code=EXCHANGE)
    out, stats = both(m.get_function("claimSlots"), (2,), (64,), (np.zeros(128, int32),))
    assert list(out[0][:64]) == [3 * (63 - t) for t in range(64)]
    assert list(out[0][64:]) == [3 * (63 - t) + 1 for t in range(64)]
    line4 = [c for s, c in stats.by_site.items() if s.lineno == 4][0]
    assert (line4.atomics, line4.atomic_conflicts) == (4, 0)  # 2 warps x 2 blocks, distinct slots
    (out,), _ = both(m.get_function("keepOld"), (1,), (64,), (np.zeros(64, int32),))
    assert list(out[:16]) == [100 + t for t in range(16)] and out[63] == 63 and not out[16:63].any()


@pytest.mark.parametrize("engine", ["reference", "fast"])
def test_an_undefined_old_value_is_an_error_where_it_is_stored_or_branched_on(engine):
    m = RawModule(code=EXCHANGE)
    launch = reference.launch if engine == "reference" else lambda k, *a, **kw: k(*a, **kw)
    with pytest.raises(UndefinedValueError) as e:
        launch(m.get_function("storeOld"), (1,), (64,), (np.zeros(64, int32),))
    text = str(e.value)
    assert "stored to memory at storeOld (line 24: out[t] = old;" in text
    assert "by thread (16,0,0) in block (0,0,0) (48 threads of the block)" in text
    assert "made at line 23 (int old = atomicExch(&slot[t], t);): atomicExch returned the old value" in text
    with pytest.raises(UndefinedValueError, match=r"branched on at branchOnOld \(line 29: if \(old == 0\)"):
        launch(m.get_function("branchOnOld"), (1,), (32,), (np.zeros(32, int32),))
    from simtdocs import InitcheckError
    with pytest.raises(InitcheckError, match=r"count\[0\]"):  # an add still is initcheck's error
        launch(m.get_function("addToUnwritten"), (1,), (32,), (np.zeros(32, int32),))
    # without initcheck nothing is tracked: the exchange returns what memory holds (zeros here)
    out = np.full(64, -1, int32)
    launch(m.get_function("storeOld"), (1,), (64,), (out,), tools=("memcheck", "racecheck", "synccheck"))
    assert list(out[:16]) == [100 + t for t in range(16)] and not out[16:].any()



@pytest.mark.parametrize("run", [reference.launch, simtdocs.launch], ids=["reference", "fast"])
def test_in_the_blk_api_an_exchange_on_an_unwritten_element_stays_initchecks_error(run):
    # there the old value lands in the reader's own numpy array, which nothing follows
    def claim(blk, out):
        slot = blk.shared(64, np.int32)
        old = blk.atomic_exch(slot, blk.tx, blk.tx)
        blk.store(out, blk.tx, old)

    from simtdocs import InitcheckError
    with pytest.raises(InitcheckError, match=r"by an atomic .*\n.*\n    by thread \(0,0,0\) in block \(0,0,0\)"
                                             r"\n    shared shared\[0\] was never written"):
        run(claim, 1, 64, args=(np.zeros(64, int32),))


TABLES = """\
__constant__ float c_weights[] = {0.5f, -1.0f, 2.0f, 0.25f};
__constant__ short c_steps[2][3] = {{1, 2, 3}, {-4, 5, 6}};
__device__ unsigned int d_count = 7, d_other = 0;
__global__ void weigh(float *out, const float *in) {
    int t = threadIdx.x;
    out[t] = in[t] * c_weights[t % 4] + c_steps[t % 2][t % 3];
}
__global__ void bump(unsigned int *out) {
    out[threadIdx.x] = atomicAdd(&d_count, 1u);
}
"""



def test_initialised_constant_and_device_variables():
    m = RawModule(code=TABLES)
    assert list(m.get_global("c_weights")) == [0.5, -1.0, 2.0, 0.25]  # the size comes from the initialiser
    assert m.get_global("c_steps").tolist() == [[1, 2, 3], [-4, 5, 6]]
    x = np.arange(8, dtype=float32) + 1
    (out, _), _ = both(m.get_function("weigh"), (1,), (8,), (np.zeros(8, float32), x))
    w, steps = [0.5, -1.0, 2.0, 0.25], [[1, 2, 3], [-4, 5, 6]]
    assert list(out) == [(t + 1) * w[t % 4] + steps[t % 2][t % 3] for t in range(8)]
    m2 = RawModule(code=TABLES)
    out = np.zeros(4, uint32)
    m2.get_function("bump")((1,), (4,), (out,))  # d_count starts at 7; lanes in order
    assert list(out) == [7, 8, 9, 10] and m2.get_global("d_count")[0] == 11


def test_a_file_scope_declaration_outside_the_subset_refuses_only_its_kernels():
    # a function pointer's type (not valid CUDA by itself: a local string, which test_nvcc leaves alone)
    callback = "__device__ helper_fn_t d_callback;\n__global__ void callBack(float *out) { out[0] = d_callback(1.0f); }\n"
    m = RawModule(code=TABLES + callback)
    with pytest.raises(CompileError, match=r":11:12: \(file scope\): the type `helper_fn_t` is not supported"):
        m.get_function("callBack")
    m.get_function("weigh")


def test_a_header_in_latin_1_and_a_tiles_meta_group_size(tmp_path):
    (tmp_path / "old.cuh").write_bytes("// Auteur: Fran\xe7ois, ENS Lyon\n#define TILE 8\n".encode("latin-1"))
    code = """\
#include <cooperative_groups.h>
#include "old.cuh"
namespace cg = cooperative_groups;
__global__ void tiles(unsigned int *out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<TILE> tile = cg::tiled_partition<TILE>(block);
    out[block.thread_rank()] = tile.meta_group_size() * 100 + tile.meta_group_rank();
}
"""
    m = RawModule(code=code, options=(f"-I{tmp_path}",))
    (out,), _ = both(m.get_function("tiles"), (1,), (20,), (np.zeros(20, uint32),))
    assert list(out) == [300 + t // 8 for t in range(20)]  # 20 threads in tiles of 8: 3 tiles (the last partial)


# -- template arguments that are typedefs and structs (alignedTypes' testKernel<T>) ------------------

TYPED_COPIES = """\
typedef unsigned short int u16;
typedef struct {
    unsigned int l, a;
} LumAlpha;
struct Rgb {
    unsigned int r, g, b;
};

template <class TData> __global__ void copyAll(TData *d_out, const TData *d_in, int n, int *size) {
    const int tid = blockDim.x * blockIdx.x + threadIdx.x;
    for (int pos = tid; pos < n; pos += blockDim.x * gridDim.x)
        d_out[pos] = d_in[pos];
    if (tid == 0) size[0] = sizeof(TData);
}
"""


def test_a_typedef_of_a_scalar_names_a_template_instance():
    m = RawModule(code=TYPED_COPIES)
    k = m.get_function("copyAll<u16>")  # the typedef's type: unsigned short
    src = (np.arange(40, dtype=np.uint16) * 7 + 3).astype(np.uint16)
    (out, _, _, size), stats = both(k.kernel, (1,), (32,), (np.zeros(40, np.uint16), src, int32(40), np.zeros(1, int32)))
    assert out.tolist() == [7 * i + 3 for i in range(40)] and size[0] == 2


def test_a_struct_names_a_template_instance_and_moves_in_accesses_of_its_size():
    m = RawModule(code=TYPED_COPIES)
    # LumAlpha: 8 bytes, one access per lane: 32 lanes x 8 bytes = 256 contiguous bytes = 8 sectors
    k = m.get_function("copyAll<LumAlpha>")
    src = np.arange(64, dtype=uint32) * 3 + 1
    (out, _, _, size), stats = both(k.kernel, (1,), (32,), (np.zeros(64, uint32), src, int32(32), np.zeros(1, int32)))
    assert out.tolist() == src.tolist() and size[0] == 8
    t = stats.totals
    assert (t.requests, t.requested_bytes, t.sectors) == (2 + 1, 2 * 256 + 4, 2 * 8 + 1)  # + the sizeof store
    # Rgb: 12 bytes, moved member by member (three 4-byte accesses, as nvcc does): each of the
    # six requests has lanes 12 bytes apart, 32 lanes over 384 bytes = 12 sectors
    k = m.get_function("copyAll<Rgb>")
    src = np.arange(96, dtype=uint32) * 5 + 2
    (out, _, _, size), stats = both(k.kernel, (1,), (32,), (np.zeros(96, uint32), src, int32(32), np.zeros(1, int32)))
    assert out.tolist() == src.tolist() and size[0] == 12
    t = stats.totals
    assert (t.requests, t.requested_bytes, t.sectors) == (6 + 1, 6 * 128 + 4, 6 * 12 + 1)


def test_a_template_argument_of_no_known_type_is_refused_by_name():
    with pytest.raises(CompileError, match="the template argument type `curandState_t` is not supported"):
        RawModule(code=TYPED_COPIES).get_function("copyAll<curandState_t>")


ALIGNED = """\
typedef struct __align__(16) {
    unsigned int r, g, b;
} RGB32;
typedef struct {
    unsigned int r, g, b;
} RGB12;
struct __align__(8) Pair { unsigned short lo, hi; };
__global__ void copyRGB(const RGB32 *in, RGB32 *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
__global__ void sizes(int *out) {
    out[0] = sizeof(RGB32); out[1] = sizeof(RGB12); out[2] = sizeof(struct Pair);
}
"""


def test_align_sets_a_structs_size_and_stride():
    # alignedTypes' point: __align__(16) pads a 12-byte struct to 16, so an array of them has a
    # 16-byte stride (the struct's numpy dtype too); unpadded, the same members are 12 bytes
    m = RawModule(code=ALIGNED)
    (out,), _ = both(m.get_function("sizes"), (1,), (1,), (np.zeros(3, int32),))
    assert list(out) == [16, 12, 8]
    rgb = np.dtype({"names": ["r", "g", "b"], "formats": [uint32] * 3, "offsets": [0, 4, 8], "itemsize": 16})
    src = np.zeros(100, rgb)
    for k, c in enumerate("rgb"):
        src[c] = np.arange(100, dtype=uint32) * 3 + k
    copy = m.get_function("copyRGB")
    dst = np.zeros(100, rgb)
    stats = copy((1,), (128,), (src, dst, int32(100)))  # records of the padded layout, as CuPy takes them
    assert all((dst[c] == src[c]).all() for c in "rgb")
    # a copy of the whole aligned struct is one 16-byte access per lane, as nvcc's LDG.128/STG.128:
    # 4 warps (the last with 4 lanes) load and store 100 x 16 bytes in 50 sectors each way
    assert (stats.totals.requests, stats.totals.requested_bytes, stats.totals.sectors) == (8, 3200, 100)
    _, s2 = both(copy, (1,), (128,), (src.view(uint32), np.zeros(400, uint32), int32(100)))
    assert s2.totals == stats.totals


TWO_EXTERNS = """\
__device__ float blockSum(float v) {
    extern __shared__ float sdata[];   // the same memory as the kernel's smem
    unsigned t = threadIdx.x;
    sdata[t] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) sdata[t] += sdata[t + s];
        __syncthreads();
    }
    return sdata[0];
}
__global__ void sumAndKeep(const float *x, float *out) {
    extern __shared__ float smem[];
    float total = blockSum(x[blockIdx.x * blockDim.x + threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) { out[blockIdx.x] = total; out[gridDim.x + blockIdx.x] = smem[0]; }
}
__global__ void twoTypes(int *out) {
    extern __shared__ float f[];
    extern __shared__ int k[];
    f[threadIdx.x] = 1.0f;
    out[threadIdx.x] = k[threadIdx.x];
}
"""


def test_every_extern_shared_array_is_the_one_dynamic_allocation():
    # threadFenceReduction's two `extern __shared__ float` arrays (a device function's and the
    # kernel's) start at the same byte on a GPU: 64 floats of shared_mem are enough for both,
    # and smem[0] reads the sum blockSum left in sdata[0]
    m = RawModule(code=TWO_EXTERNS)
    x = np.arange(4 * 64, dtype=float32)
    (_, out), stats = both(m.get_function("sumAndKeep"), (4,), (64,), (x, np.zeros(8, float32)), shared_bytes=64 * 4)
    sums = x.reshape(4, 64).sum(axis=1)
    assert list(out) == list(sums) * 2
    assert stats.totals.barriers == 4 * (1 + 6 + 1)  # per block: the store's, one per halving of 64, the kernel's
    with pytest.raises(NotImplementedError, match=r"the dynamic shared arrays f \(float32\) and k \(int32\) are the "
                                                  r"same memory on a GPU"):
        m.get_function("twoTypes")((1,), (32,), (np.zeros(32, int32),), shared_mem=128)


def test_a_dialect_kernels_dynamic_shared_arrays_alias_as_numbas_do():
    from simtdocs import cuda

    @cuda.jit
    def mirror(out):
        a = cuda.shared.array(0, np.float32)
        b = cuda.shared.array(0, np.float32)
        t = cuda.threadIdx.x
        a[t] = t
        cuda.syncthreads()
        out[t] = b[31 - t]

    for run in (reference.launch, simtdocs.launch):
        out = np.zeros(32, float32)
        run(mirror, 1, 32, args=(out,), shared_bytes=128)
        assert list(out) == [31.0 - t for t in range(32)]
