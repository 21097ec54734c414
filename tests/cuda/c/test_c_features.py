"""The C constructs the front end lowers beyond the first cut: ``switch`` (with fall-through),
plain structs and references to elements, vector types (``float4`` loads as one 16-byte
access per lane), ``atomicInc/Dec/And/Or/Xor``, ``__half`` arithmetic, ``printf``, shuffles
with a ``width``, ``cg::reduce``.

Every kernel runs on both engines (``simtdocs.reference``, one lane at a time, and
``simtdocs.launch``), which must agree on results and on every counter; the results are
checked against numpy, and the counters against the same kernel written in the numba
dialect or with the ``blk`` API, or against counts derived by hand in the comments.
"""

import numpy as np
import pytest

import simtdocs
from simtdocs import cuda, reference
from simtdocs.cuda import CompileError, RawKernel, RawModule

rng = np.random.default_rng(39)
float32, uint32, int32 = np.float32, np.uint32, np.int32


def _fresh(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def both(kernel, grid, block, args, **kw):
    """Run ``kernel`` on the reference and the fast engine (fresh copies of ``args``); they must
    agree on every output, every counter of every line and the races. Returns (args after, stats)."""
    ref_args, fast_args = _fresh(args), _fresh(args)
    s_ref = reference.launch(kernel, grid, block, args=ref_args, **kw)
    s_fast = simtdocs.launch(kernel, grid, block, args=fast_args, **kw)
    for x, y in zip(ref_args, fast_args):
        if isinstance(x, np.ndarray):
            assert x.tobytes() == y.tobytes()
    assert s_ref.totals == s_fast.totals
    assert s_ref.by_site == s_fast.by_site
    assert s_ref.races == s_fast.races
    return fast_args, s_fast


def per_line(stats):
    """The counters of each line in line order (the C file's lines against the twin's)."""
    return [c for _, c in sorted(stats.by_site.items(), key=lambda kv: kv[0].lineno)]


def line_of(code, fragment):
    """The 1-based line of ``code`` that contains ``fragment`` (exactly one)."""
    found = [k + 1 for k, ln in enumerate(code.split("\n")) if fragment in ln]
    assert len(found) == 1, found
    return found[0]


# -- switch ---------------------------------------------------------------------------------------

SWITCH = r"""
__global__ void classify(const int *k, int *o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int r = 0;
    switch (k[i]) {
    case 0: r = 10; break;
    case 1:
    case 2: r = 20; break;
    case 3: r += 1;
    case 4: { r += 2; break; }
    default: r = -1;
    case 7: r -= 5;
    }
    o[i] = r;
}

__global__ void plain(const int *k, int *o) {
    int i = threadIdx.x;
    int r;
    switch (k[i] & 3) {
    case 0: r = 5; break;
    case 1: r = 6; break;
    default: r = 7; break;
    }
    o[i] = r;
}

__global__ void unreachable_break(int *o) {
    switch (threadIdx.x) {
    case 0:
        if (o[0] > 0) break;
        o[1] = 2;
        break;
    }
}
"""


def _classify(v):
    """The C switch above, case by case, in Python."""
    if v == 0:
        return 10
    if v in (1, 2):
        return 20
    r = 0
    if v in (3, 4):
        return r + (1 if v == 3 else 0) + 2
    if v != 7:
        r = -1  # default, then falls into case 7
    return r - 5


@cuda.jit
def plain_twin(k, o):
    i = cuda.threadIdx.x
    r = np.int32(0)
    sw = k[i] & 3
    if sw == 0:
        r = np.int32(5)
    elif sw == 1:
        r = np.int32(6)
    else:
        r = np.int32(7)
    o[i] = r


def test_switch_with_fall_through_and_default_in_the_middle():
    n = 200
    k = rng.integers(-2, 10, n).astype(np.int32)
    (_, o, _), s = both(RawKernel(SWITCH, "classify"), 2, 128, (k, np.zeros(n, np.int32), np.int32(n)))
    assert list(o) == [_classify(v) for v in k]
    # every case's statements run once per warp that has a lane for them: the line `r -= 5`
    # (case 7 and the default's fall-through) is one store-free line with no counters, and the
    # switch's arms are counted branches like an if/else chain
    assert s.totals.branches > 0


def test_switch_without_fall_through_counts_as_its_if_else_chain():
    k = rng.integers(0, 100, 64).astype(np.int32)
    (_, o), s = both(RawKernel(SWITCH, "plain"), 1, 64, (k, np.zeros(64, np.int32)))
    assert list(o) == [(5, 6, 7, 7)[v & 3] for v in k]
    o2 = np.zeros(64, np.int32)
    s2 = plain_twin[1, 64](k, o2)
    assert np.array_equal(o, o2)
    assert s.totals == s2.totals


def test_a_break_inside_an_if_of_a_case_is_refused_at_its_line():
    line = line_of(SWITCH, "if (o[0] > 0) break;")
    with pytest.raises(CompileError, match=rf":{line}:23: unreachable_break: a break inside an if of a case"):
        RawKernel(SWITCH, "unreachable_break")


# -- structs and references ------------------------------------------------------------------------

STRUCTS = r"""
struct Particle { float x, v; int hits[2]; };
struct Params { float dt; int steps; };
typedef struct { float lo, hi; } Range;

__device__ float clampf(float x, Range r) { return fminf(fmaxf(x, r.lo), r.hi); }

__global__ void move(const float *x, const float *v, float *out, int *hits, Params p, Range box, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Particle q;
    q.x = x[i];
    q.v = v[i];
    q.hits[0] = 0;
    q.hits[1] = 0;
    for (int s = 0; s < p.steps; ++s) {
        q.x += q.v * p.dt;
        if (q.x > box.hi) q.hits[1]++;
        if (q.x < box.lo) q.hits[0] += 1;
        q.x = clampf(q.x, box);
    }
    Particle copy = q;
    out[i] = copy.x;
    hits[2 * i] = copy.hits[0];
    hits[2 * i + 1] = q.hits[1];
}
"""


def test_struct_locals_members_arrays_and_a_struct_argument():
    n = 100
    x = rng.uniform(-1, 1, n).astype(np.float32)
    v = rng.uniform(-1, 1, n).astype(np.float32)
    params = np.array((0.25, 6), dtype=[("dt", np.float32), ("steps", np.int32)])[()]
    box = np.array((-1.0, 1.0), dtype=[("lo", np.float32), ("hi", np.float32)])[()]
    k = RawKernel(STRUCTS, "move")
    (_, _, out, hits, *_), _ = both(k, 1, 128, (x, v, np.zeros(n, np.float32), np.zeros(2 * n, np.int32),
                                                params, box, np.int32(n)))
    ex, eh = x.copy(), np.zeros((n, 2), np.int32)
    for _ in range(6):
        ex = ex + v * np.float32(0.25)
        eh[:, 1] += ex > 1
        eh[:, 0] += ex < -1
        ex = np.minimum(np.maximum(ex, np.float32(-1)), np.float32(1))
    assert np.array_equal(out, ex) and np.array_equal(hits.reshape(n, 2), eh)


def test_a_struct_argument_is_checked():
    k = RawKernel(STRUCTS, "move")
    x = np.zeros(4, np.float32)
    box = np.array((-1.0, 1.0), dtype=[("lo", np.float32), ("hi", np.float32)])[()]
    with pytest.raises(TypeError, match=r"parameter p is a struct Params: pass a numpy structured scalar.*'dt', np\.float32"):
        k(1, 32, (x, x, x, np.zeros(8, np.int32), (0.5, 2), box, np.int32(4)))
    wrong = np.array((0.5, 2), dtype=[("dt", np.float64), ("steps", np.int32)])[()]
    with pytest.raises(TypeError, match=r"parameter p is a struct Params .* given a record of dtype"):
        k(1, 32, (x, x, x, np.zeros(8, np.int32), wrong, box, np.int32(4)))


# CUDA Samples' bitonic sort, in its style: a comparator taking references to shared elements
BITONIC = r"""
#define SHARED_SIZE_LIMIT 128
typedef unsigned int uint;

__device__ inline void Comparator(uint &keyA, uint &valA, uint &keyB, uint &valB, uint dir) {
    uint t;
    if ((keyA > keyB) == dir) {
        t = keyA; keyA = keyB; keyB = t;
        t = valA; valA = valB; valB = t;
    }
}

__global__ void bitonicSortShared(uint *d_DstKey, uint *d_DstVal, uint *d_SrcKey, uint *d_SrcVal,
                                  uint arrayLength, uint dir) {
    __shared__ uint s_key[SHARED_SIZE_LIMIT];
    __shared__ uint s_val[SHARED_SIZE_LIMIT];
    d_SrcKey += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    d_SrcVal += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    d_DstKey += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    d_DstVal += blockIdx.x * SHARED_SIZE_LIMIT + threadIdx.x;
    s_key[threadIdx.x + 0] = d_SrcKey[0];
    s_val[threadIdx.x + 0] = d_SrcVal[0];
    s_key[threadIdx.x + (SHARED_SIZE_LIMIT / 2)] = d_SrcKey[(SHARED_SIZE_LIMIT / 2)];
    s_val[threadIdx.x + (SHARED_SIZE_LIMIT / 2)] = d_SrcVal[(SHARED_SIZE_LIMIT / 2)];
    for (uint size = 2; size < arrayLength; size <<= 1) {
        uint ddd = dir ^ ((threadIdx.x & (size / 2)) != 0);
        for (uint stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            uint pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
            Comparator(s_key[pos + 0], s_val[pos + 0], s_key[pos + stride], s_val[pos + stride], ddd);
        }
    }
    for (uint stride = arrayLength / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        uint pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
        Comparator(s_key[pos + 0], s_val[pos + 0], s_key[pos + stride], s_val[pos + stride], dir);
    }
    __syncthreads();
    d_DstKey[0] = s_key[threadIdx.x + 0];
    d_DstVal[0] = s_val[threadIdx.x + 0];
    d_DstKey[(SHARED_SIZE_LIMIT / 2)] = s_key[threadIdx.x + (SHARED_SIZE_LIMIT / 2)];
    d_DstVal[(SHARED_SIZE_LIMIT / 2)] = s_val[threadIdx.x + (SHARED_SIZE_LIMIT / 2)];
}

__device__ void swap(float &a, float &b) { float t = a; a = b; b = t; }

__global__ void swap_locals(float *o) {
    float x = o[threadIdx.x], y = 2.0f * x;
    float &r = o[32 + threadIdx.x];
    swap(x, y);
    r += x;
    float &alias = y;
    alias = alias + 1.0f;
    o[64 + threadIdx.x] = y;
}
"""

L = 128


@cuda.jit(device=True)
def comparator_twin(s_key, a, s_val, b, dr):
    # keyA, keyB … are the shared elements themselves: each use is a shared access, as in the C
    if (s_key[a] > s_key[b]) == dr:
        t = s_key[a]
        s_key[a] = s_key[b]
        s_key[b] = t
        t = s_val[a]
        s_val[a] = s_val[b]
        s_val[b] = t


@cuda.jit
def bitonic_twin(dst_key, dst_val, src_key, src_val, array_length, dr):
    s_key = cuda.shared.array(L, np.uint32)
    s_val = cuda.shared.array(L, np.uint32)
    tx = cuda.threadIdx.x
    base = cuda.blockIdx.x * L + tx
    s_key[tx] = src_key[base]
    s_val[tx] = src_val[base]
    s_key[tx + L // 2] = src_key[base + L // 2]
    s_val[tx + L // 2] = src_val[base + L // 2]
    size = np.uint32(2)
    while size < array_length:
        ddd = dr ^ np.uint32((tx & (size // 2)) != 0)
        stride = size // 2
        while stride > 0:
            cuda.syncthreads()
            pos = 2 * tx - (tx & (stride - 1))
            comparator_twin(s_key, pos, s_val, pos + stride, ddd)
            stride >>= 1
        size <<= 1
    stride = array_length // 2
    while stride > 0:
        cuda.syncthreads()
        pos = 2 * tx - (tx & (stride - 1))
        comparator_twin(s_key, pos, s_val, pos + stride, dr)
        stride >>= 1
    cuda.syncthreads()
    dst_key[base] = s_key[tx]
    dst_val[base] = s_val[tx]
    dst_key[base + L // 2] = s_key[tx + L // 2]
    dst_val[base + L // 2] = s_val[tx + L // 2]


@pytest.mark.parametrize("direction", [0, 1])
def test_bitonic_sort_comparator_writes_through_references_to_shared_elements(direction):
    blocks = 3
    keys = rng.integers(0, 1000, blocks * L).astype(np.uint32)
    vals = rng.permutation(blocks * L).astype(np.uint32)
    args = (np.zeros_like(keys), np.zeros_like(vals), keys, vals, np.uint32(L), np.uint32(direction))
    (dk, dv, *_), s = both(RawKernel(BITONIC, "bitonicSortShared"), blocks, L // 2, args)
    for b in range(blocks):
        seg = slice(b * L, (b + 1) * L)
        want = np.sort(keys[seg], kind="stable")
        assert np.array_equal(dk[seg], want if direction else want[::-1])
        key_of = np.empty_like(keys)
        key_of[vals] = keys
        assert np.array_equal(key_of[dv[seg]], dk[seg])  # each value travelled with its key
    tk, tv = np.zeros_like(keys), np.zeros_like(vals)
    s2 = bitonic_twin[blocks, L // 2](tk, tv, keys, vals, np.uint32(L), np.uint32(direction))
    assert np.array_equal(tk, dk) and np.array_equal(tv, dv)
    assert s.totals == s2.totals  # every use of a reference is the shared access it names


def test_references_to_locals_and_to_an_element():
    o = rng.random(96).astype(np.float32)
    (out,), _ = both(RawKernel(BITONIC, "swap_locals"), 1, 32, (o,))
    x = o[:32]
    assert np.array_equal(out[32:64], o[32:64] + 2 * x)  # r is o[32 + t]; x holds y = 2x after the swap
    assert np.array_equal(out[64:], x + 1)  # y holds x after the swap, then alias (y) += 1


# -- vector types --------------------------------------------------------------------------------

VECTORS = r"""
__global__ void copy4(const float *in, float *out, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = reinterpret_cast<const float4 *>(in)[i];
        reinterpret_cast<float4 *>(out)[i] = make_float4(v.w, v.z, v.y, v.x);
    }
}

__global__ void members(const float4 *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i].x + in[i].w;
}

__global__ void pairs(const int2 *in, int2 *out) {
    int i = threadIdx.x;
    int2 p = in[i];
    int2 q;
    q.x = p.y;
    q.y = p.x * 2;
    out[i] = q;
}

__global__ void shared_vec(const float *in, float *out) {
    __shared__ float4 tile[32];
    const float4 *src = reinterpret_cast<const float4 *>(in) + blockIdx.x * 32;
    tile[threadIdx.x] = src[threadIdx.x];
    __syncthreads();
    float4 v = tile[31 - threadIdx.x];
    out[blockIdx.x * 32 + threadIdx.x] = v.x + v.y + v.z + v.w;
}

__global__ void uint4_copy(const unsigned *in, unsigned *out) {
    const uint4 *p = reinterpret_cast<const uint4 *>(in);
    uint4 *q = (uint4 *)out;
    p += blockIdx.x * blockDim.x;
    uint4 v = __ldg(&p[threadIdx.x]);
    v.x ^= 0xffu;
    q[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
"""


def copy4_twin(blk, a, b, n4):
    """copy4 with the ``blk`` API: one 16-byte load and one 16-byte store per lane."""
    i = blk.bx * blk.bdx + blk.tx
    m = blk.branch(i < n4)
    v = blk.load(a, 4 * i, mask=m, width=4)
    blk.store(b, 4 * i, v[..., ::-1], mask=m, width=4)


def test_a_float4_load_is_one_16_byte_access_per_lane():
    n4 = 64
    a = rng.random(4 * n4).astype(np.float32)
    (_, b, _), s = both(RawKernel(VECTORS, "copy4"), 1, 64, (a, np.zeros_like(a), np.int32(n4)))
    assert np.array_equal(b.reshape(n4, 4), a.reshape(n4, 4)[:, ::-1])
    # by hand: 2 warps; each warp's 32 lanes read 32 consecutive float4s = 512 bytes = 16
    # sectors in ONE request, and write the same: 2 × (1 + 1) requests, 2 × (16 + 16) sectors
    assert (s.totals.requests, s.totals.sectors) == (4, 64)
    assert s.totals.requested_bytes == 2 * 64 * 16
    b2 = np.zeros_like(a)
    s2 = simtdocs.launch(copy4_twin, 1, 64, args=(a, b2, n4))
    assert np.array_equal(b, b2)
    assert s.totals == s2.totals


def test_vector_members_pointer_params_and_int2():
    n = 40
    a = rng.random((n, 4)).astype(np.float32)
    (_, out, _), s = both(RawKernel(VECTORS, "members"), 1, 64, (a.ravel(), np.zeros(n, np.float32), np.int32(n)))
    assert np.array_equal(out, a[:, 0] + a[:, 3])
    # in[i].x and in[i].w are two 4-byte loads (strided by 16 bytes): 2 requests per warp of the
    # 2 warps, the second warp with its 8 lanes only
    assert s.totals.requests == 2 * 2 + 2  # two loads and a store, per warp
    rec = np.zeros(n, dtype=[("x", np.float32), ("y", np.float32), ("z", np.float32), ("w", np.float32)])
    rec.view(np.float32).reshape(n, 4)[:] = a
    out2 = np.zeros(n, np.float32)
    RawKernel(VECTORS, "members")(1, 64, (rec, out2, np.int32(n)))  # an array of float4 records works too
    assert np.array_equal(out2, out)
    p = rng.integers(-50, 50, (32, 2)).astype(np.int32)
    (_, q), s = both(RawKernel(VECTORS, "pairs"), 1, 32, (p.ravel(), np.zeros(64, np.int32)))
    assert np.array_equal(q.reshape(32, 2), np.stack([p[:, 1], p[:, 0] * 2], 1))
    assert (s.totals.requests, s.totals.sectors) == (2, 16)  # one 8-byte load, one store: 256 B = 8 sectors each
    with pytest.raises(TypeError, match=r"parameter in is a float4 \*: pass a numpy array of float32, 4 elements"):
        RawKernel(VECTORS, "members")(1, 64, (a.astype(np.float64).ravel(), out2, np.int32(n)))


def shared_vec_twin(blk, a, b):
    tile = blk.shared((32, 4), np.float32, name="tile")
    v = blk.load(a, 4 * (blk.bx * 32 + blk.tx), width=4)
    blk.store(tile, (blk.tx, 0), v, width=4)
    blk.sync()
    w = blk.load(tile, (31 - blk.tx, 0), width=4)
    blk.store(b, blk.bx * 32 + blk.tx, w[..., 0] + w[..., 1] + w[..., 2] + w[..., 3])


def test_shared_float4_array_quarter_warp_phases():
    a = rng.random(4 * 64).astype(np.float32)
    (_, out), s = both(RawKernel(VECTORS, "shared_vec"), 2, 32, (a, np.zeros(64, np.float32)))
    v = a.reshape(2, 32, 4)[:, ::-1, :]
    assert np.allclose(out.reshape(2, 32), ((v[..., 0] + v[..., 1]) + v[..., 2]) + v[..., 3], rtol=0, atol=0)
    # a warp's 16-byte shared store and load each run in 4 quarter-warp phases of 8 lanes ×
    # 16 bytes = 128 bytes, one wavefront each: 4 wavefronts, no conflict
    assert s.totals.shared_wavefronts == 2 * (4 + 4) and s.totals.shared_bank_conflicts == 0
    out2 = np.zeros(64, np.float32)
    s2 = simtdocs.launch(shared_vec_twin, 2, 32, args=(a, out2))
    assert np.array_equal(out, out2) and s.totals == s2.totals


def test_uint4_through_moved_pointer_cast_pointer_and_ldg():
    a = rng.integers(0, 2**32, 4 * 128, dtype=np.uint32)
    (_, out), s = both(RawKernel(VECTORS, "uint4_copy"), 2, 64, (a, np.zeros_like(a)))
    want = a.reshape(128, 4).copy()
    want[:, 0] ^= 0xFF
    assert np.array_equal(out.reshape(128, 4), want)
    assert (s.totals.requests, s.totals.sectors) == (8, 8 * 16)  # 4 warps × (a load + a store) of 512 B


def test_reading_int_bits_as_float4_and_where_it_is_refused():
    code = ("__device__ float first(const int *a) {\n    return reinterpret_cast<const float4 *>(a)[0].x;\n}\n"
            "__global__ void f(const int *a, float *b) {\n"
            "    float4 v = reinterpret_cast<const float4 *>(a)[threadIdx.x];\n    b[threadIdx.x] = v.y;\n}\n"
            "__global__ void g(const int *a, float *b) {\n    b[0] = first(a);\n}\n")
    bits = rng.random(4 * 32).astype(np.float32).view(np.int32)
    (_, b), s = both(RawKernel(code, "f"), 1, 32, (bits, np.zeros(32, np.float32)))
    assert np.array_equal(b, bits.view(np.float32).reshape(32, 4)[:, 1])  # the same bits, read as floats
    assert s.totals.sectors == 16 + 4
    with pytest.raises(CompileError, match=r":2:12: first: reinterpreting a pointer that is not a kernel argument"):
        RawKernel(code, "g")


# -- atomics ---------------------------------------------------------------------------------------

ATOMICS = r"""
__global__ void counters(unsigned *c, const unsigned *v, unsigned *tickets, int *flags) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned k = v[i];
    tickets[i] = atomicInc(&c[0], 5u);
    atomicDec(&c[1], 3u);
    atomicAnd(&c[2], k);
    atomicOr(&c[3], k);
    atomicXor(&c[4], k);
    __shared__ int bits;
    if (threadIdx.x == 0) bits = 0;
    __syncthreads();
    atomicOr(&bits, 1 << (threadIdx.x % 31));
    __syncthreads();
    if (threadIdx.x == 0) flags[blockIdx.x] = bits;
}
"""


@cuda.jit
def counters_twin(c, v, tickets, flags):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    k = v[i]
    tickets[i] = cuda.atomic.inc(c, 0, np.uint32(5))
    cuda.atomic.dec(c, 1, np.uint32(3))
    cuda.atomic.and_(c, 2, k)
    cuda.atomic.or_(c, 3, k)
    cuda.atomic.xor(c, 4, k)
    bits = cuda.shared.array(1, np.int32)
    if cuda.threadIdx.x == 0:
        bits[0] = 0
    cuda.syncthreads()
    cuda.atomic.or_(bits, 0, np.int32(1) << (cuda.threadIdx.x % 31))
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        flags[cuda.blockIdx.x] = bits[0]


def test_atomic_inc_dec_and_or_xor():
    v = rng.integers(0, 2**32, 96, dtype=np.uint32)
    c = np.array([0, 0, 2**32 - 1, 0, 0], np.uint32)
    args = (c, v, np.zeros(96, np.uint32), np.zeros(3, np.int32))
    (c1, _, t1, f1), s = both(RawKernel(ATOMICS, "counters"), 3, 32, args)
    # atomicInc(…, 5) counts 0, 1, …, 5, 0, …: lanes in serial order get old values i % 6, and
    # after 96 increments the counter is 96 % 6 = 0; atomicDec(…, 3) from 0 goes 3, 2, 1, 0, 3 …:
    # after 96 steps, 96 % 4 = 0 → 0
    assert list(t1) == [i % 6 for i in range(96)] and c1[0] == 0 and c1[1] == 0
    assert c1[2] == np.bitwise_and.reduce(v) and c1[3] == np.bitwise_or.reduce(v)
    assert c1[4] == np.bitwise_xor.reduce(v)
    assert list(f1) == [(1 << 31) - 1] * 3  # lanes 0..30 set bits 0..30, lane 31 sets bit 0 again
    c2, t2, f2 = c.copy(), np.zeros(96, np.uint32), np.zeros(3, np.int32)
    s2 = counters_twin[3, 32](c2, v, t2, f2)
    assert np.array_equal(c1, c2) and np.array_equal(t1, t2) and np.array_equal(f1, f2)
    assert s.totals == s2.totals


def test_atomic_inc_on_a_hot_counter_in_many_blocks():
    # 64 blocks × 128 threads on one counter wrapping at 1000: every old value once per lap
    # (the fast engine's closed form for a counter with one bound; the reference steps lane by lane)
    c = np.array([0, 5], np.uint32)
    code = "__global__ void k(unsigned *c, unsigned *o, unsigned *d) {\n" \
           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" \
           "    o[i] = atomicInc(c, 999u);\n    d[i] = atomicDec(c + 1, 700u);\n}\n"
    n = 64 * 128
    (c1, o, d), s = both(RawKernel(code, "k"), 64, 128, (c, np.zeros(n, np.uint32), np.zeros(n, np.uint32)))
    assert np.array_equal(o, np.arange(n) % 1000) and c1[0] == n % 1000
    # atomicDec from 5 with bound 700: 5, 4, …, 0, 700, 699, …: lane j sees (5 - j) mod 701
    assert np.array_equal(d, (5 - np.arange(n)) % 701) and c1[1] == (5 - n) % 701
    assert s.totals.atomic_conflicts == 2 * 64 * 4 * 31  # 2 atomics × 256 warps × 31 lanes beyond the first


# -- __half ----------------------------------------------------------------------------------------

HALF = r"""
#include <cuda_fp16.h>
__global__ void halves(const __half *a, const __half *b, __half *c, float *f) {
    int i = threadIdx.x;
    __half x = a[i], y = b[i];
    c[i] = x * y + x;
    c[32 + i] = __hadd(x, __hmul(x, y));
    f[i] = __half2float(__hfma(x, y, x)) + __half2float(x) * 2.0f;  // (x * 2.0f is ambiguous for nvcc)
    half2 value(0.f, 0.f);
    half2 p = __floats2half2_rn(__half2float(x), 1.5f);
    value = __hfma2(p, p, value) + p;
    f[32 + i] = __low2float(value) + (float)value.y;
}
"""


def test_half_arithmetic_stays_in_half():
    a = rng.random(32).astype(np.float16)
    b = rng.random(32).astype(np.float16)
    (_, _, c, f), _ = both(RawKernel(HALF, "halves"), 1, 32, (a, b, np.zeros(64, np.float16), np.zeros(64, np.float32)))
    # half * half is rounded to half before the + (numpy's float16 arithmetic: one rounding each)
    assert np.array_equal(c[:32], a * b + a) and np.array_equal(c[32:], a + a * b)
    fma = (a.astype(np.float64) * b + a).astype(np.float16)  # __hfma: one rounding of the exact a*b+a
    assert np.array_equal(f[:32], fma.astype(np.float32) + a.astype(np.float32) * np.float32(2))
    lo = (a.astype(np.float64) * a).astype(np.float16) + a  # __hfma2 member x, then + p (in half)
    hi = np.float16(np.float64(1.5) * 1.5) + np.float16(1.5)
    assert np.array_equal(f[32:], lo.astype(np.float32) + np.float32(hi))
    assert (a * b + a).dtype == np.float16 and not np.array_equal(
        (a * b + a), (a.astype(np.float32) * b + a).astype(np.float16))  # the inputs tell the two roundings apart


# -- printf ----------------------------------------------------------------------------------------

PRINTF = r"""
#include <stdio.h>
__global__ void say(const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && i % 3 == 0) printf("block %d thread %3u: x=%.2f %x %lld%%\n", blockIdx.x, threadIdx.x, x[i], -1,
                                    (long long)i * 1000000000);
    if (i < n) printf("then %c\n", 'a' + i);
}
"""


@pytest.mark.parametrize("engine", ["fast", "reference", "cupy"])
def test_printf_lines_in_block_and_thread_order(engine, capsys):
    x = np.arange(8, dtype=np.float32) / 3
    k = RawKernel(PRINTF, "say")
    args = (x, np.int32(7))
    if engine == "cupy":
        k(2, 4, args)
    else:
        (simtdocs.launch if engine == "fast" else reference.launch)(k, 2, 4, args=args)
    out = capsys.readouterr().out.split("\n")
    want = []
    for i in range(7):  # thread i: its first line (if any), then its second
        if i % 3 == 0:
            want.append(f"block {i // 4} thread {i % 4:3d}: x={x[i]:.2f} ffffffff {i * 10**9}%")
        want.append(f"then {chr(97 + i)}")
    assert out == want + [""]


def test_printf_refusals():
    code = '__global__ void f(int *a) {\n    printf("%s\\n", a);\n}\n'
    with pytest.raises(CompileError, match=r":2:12: f: printf's %s \(strings and pointers\)"):
        RawKernel(code, "f")


# -- shuffles with a width, tiles, cg::reduce ------------------------------------------------------

SHUFFLE = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void seg_sum(const int *x, int *out, int width) {
    int v = x[threadIdx.x];
    for (int d = 8; d > 0; d /= 2) v += __shfl_down_sync(0xffffffff, v, d, 16);
    out[threadIdx.x] = v;
    int w = x[threadIdx.x];
    for (int d = 1; d < width; d *= 2) {
        int n = __shfl_up_sync(0xffffffff, w, d, width);
        if ((threadIdx.x & (width - 1)) >= d) w += n;
    }
    out[32 + threadIdx.x] = w;
    out[64 + threadIdx.x] = __shfl_sync(0xffffffff, x[threadIdx.x], 3, 8);
    out[96 + threadIdx.x] = __shfl_xor_sync(0xffffffff, x[threadIdx.x], 5, 4);
}

__global__ void tiles(const float *x, float *out, int *best) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    cg::thread_block_tile<8> eight = cg::tiled_partition<8>(block);
    float v = x[block.thread_rank()];
    float s = cg::reduce(warp, v, cg::plus<float>());
    int k = (int)(v * 100.0f);
    int m = cg::reduce(eight, k, cg::greater<int>());
    out[block.thread_rank()] = s;
    best[block.thread_rank()] = m + eight.shfl_down(k, 1) * 0 + eight.thread_rank() * 1000;
}
"""


@cuda.jit
def seg_sum_twin(x, out, width):
    lane = cuda.threadIdx.x & 31
    v = x[cuda.threadIdx.x]
    d = 8
    while d > 0:
        v += cuda.shfl_sync(0xFFFFFFFF, v, lane + d if (lane & 15) + d < 16 else lane)
        d //= 2
    out[cuda.threadIdx.x] = v
    w = x[cuda.threadIdx.x]
    d = 1
    while d < width:
        n = cuda.shfl_sync(0xFFFFFFFF, w, lane - d if (lane & (width - 1)) >= d else lane)
        if (cuda.threadIdx.x & (width - 1)) >= d:
            w += n
        d *= 2
    out[32 + cuda.threadIdx.x] = w
    out[64 + cuda.threadIdx.x] = cuda.shfl_sync(0xFFFFFFFF, x[cuda.threadIdx.x], (lane & ~7) + 3)
    out[96 + cuda.threadIdx.x] = cuda.shfl_sync(0xFFFFFFFF, x[cuda.threadIdx.x],
                                                lane ^ 5 if (lane ^ 5) < (lane & ~3) + 4 else lane)


def test_shuffles_with_a_width_work_in_segments():
    x = rng.integers(-100, 100, 32).astype(np.int32)
    (_, out, _), s = both(RawKernel(SHUFFLE, "seg_sum"), 1, 32, (x, np.zeros(128, np.int32), np.int32(8)))
    seg16 = x.reshape(2, 16)
    # shfl_down within 16 lanes: lane l ends with the sum of its segment's lanes l.. (a tree
    # that reads lanes past the segment's end keeps its own value): lane 0 of each segment has the total
    assert out[0] == seg16[0].sum() and out[16] == seg16[1].sum()
    assert np.array_equal(out[32:64], np.cumsum(x.reshape(4, 8), axis=1).ravel())  # inclusive scan per 8 lanes
    assert np.array_equal(out[64:96], np.repeat(x.reshape(4, 8)[:, 3], 8))  # lane 3 of each 8-lane segment
    lanes = np.arange(32)
    src = np.where((lanes ^ 5) < (lanes & ~3) + 4, lanes ^ 5, lanes)  # xor 5 leaves a 4-lane segment upward: own value
    assert np.array_equal(out[96:], x[src])
    out2 = np.zeros(128, np.int32)
    s2 = seg_sum_twin[1, 32](x, out2, 8)
    assert np.array_equal(out, out2)
    assert s.totals == s2.totals  # one shuffle instruction each, as the twin's shfl_sync
    assert s.totals.shuffles == 4 + 3 + 1 + 1


def test_tiles_and_cg_reduce():
    x = rng.random(64).astype(np.float32)
    (_, out, best), s = both(RawKernel(SHUFFLE, "tiles"), 1, 64, (x, np.zeros(64, np.float32), np.zeros(64, np.int32)))
    k = (x * np.float32(100)).astype(np.int32)
    assert np.array_equal(best, np.repeat(k.reshape(8, 8).max(1), 8) + (np.arange(64) % 8) * 1000)
    sums = out.reshape(2, 32)
    assert np.allclose(sums, x.reshape(2, 32).sum(1, keepdims=True), rtol=1e-6)
    assert (sums == sums[:, :1]).all()  # the butterfly gives every lane the same sum
    # 2 warps × (5 xor steps for the 32-lane sum + 3 for the 8-lane max + 1 shfl_down)
    assert s.totals.shuffles == 2 * (5 + 3 + 1)


# -- the forms published kernels are written in (the zoo's requests) ------------------------------

FORMS = r"""
typedef unsigned int uint;
typedef uint4 data_t;
const int BLOCK = 64;
const float HALF_WEIGHT = 0.5f;

__global__ void mmul(const float *A, const float *B, float *C, int ds) {
    int idx = threadIdx.x + blockDim.x * blockIdx.x;
    int idy = threadIdx.y + blockDim.y * blockIdx.y;
    if ((idx < ds) && (idy < ds)) {
        float temp = 0;
        for (int i = 0; i < ds; i++)
            temp += A[idy * ds + i] * B[i * ds + idx];
        C[idy * ds + idx] = temp;
    }
}

template <unsigned int blockSize>
__global__ void forms(const char *data, unsigned length, uint *histo, float *o, uint *partial) {
    __shared__ float s[BLOCK];
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float w[4] = {1.0f, 2.0f};
    int m[2][2] = {{1}, {3, 4}};
    if (i < length) {
        int p = data[i] - 'a';
        if (p >= 0 && p < 26) atomicAdd(&(histo[p / 4]), 1u);
    }
    s[threadIdx.x] = w[1] + w[3] + m[0][1] * 10 + m[1][0] * 100 + HALF_WEIGHT;
    if ((blockSize >= 512) && (threadIdx.x < 256)) s[threadIdx.x] = 0;
    __syncthreads();
    o[i] = s[threadIdx.x];
    if (partial != NULL && threadIdx.x == 0) partial[blockIdx.x] = blockIdx.x;
}

inline __device__ uint4 rotate(uint4 v, uint k) {
    if (k & 1) return make_uint4(v.y, v.z, v.w, v.x);
    return v;
}

__global__ void vec_return(const data_t *in, data_t *out) {
    data_t v = in[threadIdx.x];
    data_t r = rotate(v, threadIdx.x);
    out[threadIdx.x] = r;
}
"""


@cuda.jit
def mmul_twin(A, B, C, ds):
    idx = cuda.threadIdx.x + cuda.blockDim.x * cuda.blockIdx.x
    idy = cuda.threadIdx.y + cuda.blockDim.y * cuda.blockIdx.y
    if (idx < ds) and (idy < ds):
        temp = np.float32(0)
        for i in range(ds):
            temp += A[idy * ds + i] * B[i * ds + idx]
        C[idy * ds + idx] = temp


def test_a_uniform_for_loop_inside_divergent_code_is_a_counted_loop():
    ds = 36
    A = rng.random((ds, ds)).astype(np.float32)
    B = rng.random((ds, ds)).astype(np.float32)
    (_, _, C, _), s = both(RawKernel(FORMS, "mmul"), (2, 2), (32, 32), (A, B, np.zeros_like(A), np.int32(ds)))
    assert np.allclose(C, A @ B, rtol=1e-5)
    # the only branch is the if: 4 blocks × 32 warps; the loop's test, the same for every thread,
    # is no branch (as the dialect's range loop)
    assert s.totals.branches == 4 * 32
    C2 = np.zeros_like(A)
    s2 = mmul_twin[(2, 2), (32, 32)](A, B, C2, ds)
    assert np.array_equal(C, C2) and s.totals == s2.totals


def test_file_constants_initializers_folded_conditions_typedefs_and_null_checks():
    text = b"hello world, the quick brown fox jumps over a lazy dog!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    data = np.frombuffer((text * 2)[:128], dtype=np.int8).copy()
    k = RawModule(code=FORMS, name_expressions=("forms<256>",)).get_function("forms<256>")
    args = (data, np.uint32(100), np.zeros(7, np.uint32), np.zeros(128, np.float32), np.zeros(2, np.uint32))
    (_, _, histo, o, partial), s = both(k, 2, 64, args)
    letters = data[:100].astype(int) - ord("a")
    letters = letters[(letters >= 0) & (letters < 26)]
    assert np.array_equal(histo, np.bincount(letters // 4, minlength=7))
    assert np.all(o == 2.0 + 0.0 + 0 * 10 + 3 * 100 + 0.5)  # w = {1, 2, 0, 0}; m = {{1, 0}, {3, 4}}
    assert list(partial) == [0, 1]
    # branches by hand: `i < length` (4 warps), `p` in range (4 warps: the last warp's lanes
    # 100..127 skip it, but every warp has a lane inside), `threadIdx.x == 0` (4 warps); the
    # template's `blockSize >= 512 &&` folds away, `partial != NULL` is true
    assert s.totals.branches == 4 + 4 + 4


def test_a_device_function_returning_a_vector():
    v = rng.integers(0, 1000, (32, 4)).astype(np.uint32)
    (_, out), s = both(RawKernel(FORMS, "vec_return"), 1, 32, (v.ravel(), np.zeros(128, np.uint32)))
    want = v.copy()
    want[1::2] = np.roll(v[1::2], -1, axis=1)
    assert np.array_equal(out.reshape(32, 4), want)
    assert (s.totals.requests, s.totals.sectors) == (2, 32)  # one 16-byte load and store per lane


SELECT = r"""
__global__ void pick(const float *s, float *o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? s[i] : 0.0f;
    o[i] = v + ((i & 1) ? 1.0f : 2.0f);
}
"""


def pick_twin(blk, s, o, n):
    """The zoo's convention, as nvcc compiles it: a masked load and a select, no branch."""
    i = blk.bx * blk.bdx + blk.tx
    m = i < n
    v = np.where(m, blk.load(s, i, mask=m), np.float32(0))
    blk.store(o, i, v + np.where(i & 1, np.float32(1), np.float32(2)))


def test_a_conditional_expression_is_a_predicated_select():
    n = 40
    s = rng.random(n).astype(np.float32)
    (_, o, _), st = both(RawKernel(SELECT, "pick"), 2, 32, (s, np.zeros(64, np.float32), np.int32(n)))
    lanes = np.arange(64)
    want = np.where(lanes < n, np.pad(s, (0, 24)), np.float32(0)) + np.where(lanes & 1, np.float32(1), np.float32(2))
    assert want.dtype == np.float32 and np.array_equal(o, want)
    # no branch; the load runs for the lanes that choose it: warp 0 (32 lanes), warp 1 (8)
    assert st.totals.branches == 0 and st.totals.requested_bytes == 4 * (n + 64)
    o2 = np.zeros(64, np.float32)
    st2 = simtdocs.launch(pick_twin, 2, 32, args=(s, o2, n))
    assert np.array_equal(o, o2) and st.totals == st2.totals


REINTERPRET = r"""
typedef unsigned char uchar;

__global__ void bytes_as_words(const uchar *d, unsigned *o, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    uint4 v = reinterpret_cast<const uint4 *>(d)[i];
    const unsigned *w = (const unsigned *)(d + 16 * i);
    o[i] = (v.x & 0xff) + (v.w >> 24) + (w[1] & 0xff00);
}

__global__ void shared_bytes(const unsigned *in, unsigned *o, unsigned *o2) {
    __shared__ uchar s_Hist[256];
    ((unsigned *)s_Hist)[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    o[threadIdx.x] = s_Hist[threadIdx.x] + s_Hist[threadIdx.x + 128];
    uint4 v = reinterpret_cast<uint4 *>(s_Hist)[threadIdx.x % 16];
    o2[threadIdx.x] = v.y;
}

__global__ void shared_atomic(unsigned *o) {
    __shared__ uchar s[256];
    atomicAdd((unsigned *)s + threadIdx.x, 1u);
}
"""


def words_twin(blk, d32, o, n4):
    """bytes_as_words with the blk API on the uint32 view of the same bytes."""
    i = blk.bx * blk.bdx + blk.tx
    m = blk.branch(i >= n4)
    blk.exit(m)
    v = blk.load(d32, 4 * i, width=4)
    w1 = blk.load(d32, 4 * i + 1)
    blk.store(o, i, (v[..., 0] & 0xFF) + (v[..., 3] >> 24) + (w1 & 0xFF00))


def test_a_byte_argument_read_as_words_and_uint4():
    d = rng.integers(0, 256, 16 * 64, dtype=np.uint8)
    (_, o, _), s = both(RawKernel(REINTERPRET, "bytes_as_words"), 2, 32, (d, np.zeros(64, np.uint32), np.int32(64)))
    u = d.view(np.uint32).reshape(64, 4)
    assert np.array_equal(o, (u[:, 0] & 0xFF) + (u[:, 3] >> 24) + (u[:, 1] & 0xFF00))
    # per warp: the uint4 load 512 B = 16 sectors, w[1] 4 bytes every 16 = 16 sectors, the store 4
    assert (s.totals.requests, s.totals.sectors) == (6, 2 * (16 + 16 + 4))
    o2 = np.zeros(64, np.uint32)
    s2 = simtdocs.launch(words_twin, 2, 32, args=(d.view(np.uint32), o2, 64))
    assert np.array_equal(o, o2) and s.totals == s2.totals
    with pytest.raises(TypeError, match=r"reads parameter d as unsigned int: pass a C-contiguous array"):
        RawKernel(REINTERPRET, "bytes_as_words")(2, 32, (d[:-1], o, np.int32(64)))


def shared_bytes_twin(blk, a, o, o2):
    """shared_bytes with the blk API: a 4-byte store of 4 uchars, byte loads, a 16-byte load."""
    s = blk.shared(256, np.uint8, name="s_Hist")
    word = blk.load(a, blk.tx)
    blk.store(s, 4 * blk.tx, np.asarray(word, np.uint32)[..., None].view(np.uint8), width=4)
    blk.sync()
    blk.store(o, blk.tx, blk.load(s, blk.tx) + blk.load(s, blk.tx + 128))
    v = blk.load(s, 16 * (blk.tx % 16), width=16)
    blk.store(o2, blk.tx, np.ascontiguousarray(np.asarray(v, np.uint8)).view(np.uint32)[..., 1])


def test_a_shared_byte_array_written_and_read_as_words():
    a = rng.integers(0, 2**32, 64, dtype=np.uint32)
    (_, o, o2), s = both(RawKernel(REINTERPRET, "shared_bytes"), 1, 64, (a, np.zeros(64, np.uint32), np.zeros(64, np.uint32)))
    b = a.view(np.uint8)
    assert np.array_equal(o, b[:64].astype(np.uint32) + b[128:192])
    assert np.array_equal(o2, a.reshape(16, 4)[np.arange(64) % 16, 1])
    t1, t2 = np.zeros(64, np.uint32), np.zeros(64, np.uint32)
    s2 = simtdocs.launch(shared_bytes_twin, 1, 64, args=(a, t1, t2))
    assert np.array_equal(o, t1) and np.array_equal(o2, t2) and s.totals == s2.totals
    # the word store: 4 bytes per lane = one 128-byte wavefront per warp; the byte loads 1 each;
    # the uint4 load: 16 bytes per lane in quarter-warp phases, 16 lanes of a warp on the same 16
    # vectors: 2 warps × (1 + 1 + 1 + 4) wavefronts
    assert s.totals.shared_wavefronts == 2 * (1 + 1 + 1 + 4)
    with pytest.raises(CompileError, match=r"shared_atomic: an atomic on a __shared__ array read as another type"):
        RawKernel(REINTERPRET, "shared_atomic")


@cuda.jit
def pick_dialect_twin(s, o, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    v = cuda.select(i < n, s[i], np.float32(0))  # the dialect's spelling of C's predicated ?:
    o[i] = v + cuda.select((i & 1) != 0, np.float32(1), np.float32(2))


def test_the_dialect_twin_of_a_conditional_expression_is_cuda_select():
    n = 40
    s = rng.random(n).astype(np.float32)
    o1, o2 = np.zeros(64, np.float32), np.zeros(64, np.float32)
    st1 = RawKernel(SELECT, "pick")(2, 32, (s, o1, np.int32(n)))
    st2 = pick_dialect_twin[2, 32](s, o2, n)
    assert np.array_equal(o1, o2) and st1.totals == st2.totals
    assert per_line(st1) == per_line(st2)  # line for line: the C file's lines 3-5, the twin's 3 lines


AND_LOAD = r"""
__global__ void k(const int *A, int *out, int n) {
    int i = threadIdx.x;
    if (i > 0 && i < n && A[i - 1] > 5) { out[i] = 1; }
}
"""


@cuda.jit
def and_load_twin(A, out, n):
    i = cuda.threadIdx.x
    if (i > 0 and i < n) and A[i - 1] > 5:  # C's && groups to the left: (a && b) && c
        out[i] = 1


def test_a_short_circuit_that_loads_is_the_dialects_and():
    A = rng.integers(0, 10, 40).astype(np.int32)
    (_, out, _), s = both(RawKernel(AND_LOAD, "k"), 1, 64, (A, np.zeros(64, np.int32), np.int32(40)))
    assert list(out) == [int(0 < i < 40 and A[i - 1] > 5) for i in range(64)]
    out2 = np.zeros(64, np.int32)
    s2 = and_load_twin[1, 64](A, out2, 40)
    # the right side's load sits behind a real branch, in C (lower.PREDICATED_SHORT_CIRCUIT False) as
    # in the dialect: 2 warps × (the short circuit + the if)
    assert np.array_equal(out, out2) and s.totals == s2.totals and s.totals.branches == 4
