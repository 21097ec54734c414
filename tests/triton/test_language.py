import numpy as np
import pytest

from simtdocs import triton
from simtdocs.triton import language as tl

rng = np.random.default_rng(3)


@triton.jit
def int_rules(a_ptr, b_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=1)
    b = tl.load(b_ptr + offs, mask=m, other=1)
    tl.store(q_ptr + offs, a // b, mask=m)
    tl.store(r_ptr + offs, a % b, mask=m)


def test_truncating_division():
    a = rng.integers(-50, 50, 100).astype(np.int32)
    b = rng.integers(1, 9, 100).astype(np.int32) * rng.choice([-1, 1], 100).astype(np.int32)
    q, r = np.zeros_like(a), np.zeros_like(a)
    int_rules[(1,)](a, b, q, r, 100, BLOCK=128)
    np.testing.assert_array_equal(q, np.trunc(a / b).astype(np.int32))
    np.testing.assert_array_equal(r, np.fmod(a, b))


@triton.jit
def reductions(x_ptr, out_ptr, am_ptr, cs_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    tl.store(out_ptr + r * 4 + 0, tl.sum(x, axis=1))
    tl.store(out_ptr + r * 4 + 1, tl.max(x, axis=1))
    tl.store(out_ptr + r * 4 + 2, tl.min(x, axis=1))
    tl.store(out_ptr + r * 4 + 3, tl.sum(tl.sigmoid(tl.abs(x)) + tl.exp2(tl.minimum(x, 0.0))
                                        + tl.rsqrt(tl.maximum(x * x, 1.0)) + tl.log(tl.abs(x) + 1), axis=1))
    tl.store(am_ptr + r, tl.argmax(x, axis=1))
    tl.store(cs_ptr + r[:, None] * C + c[None, :], tl.cumsum(x, axis=1))
    xt = tl.trans(x)
    tl.static_assert(R == 4)
    tl.device_assert(tl.sum(tl.broadcast_to(tl.reshape(xt, (C * R,)), (2, C * R)), axis=1) < 1e9)


def test_reductions_and_math():
    R, C = 4, 16
    x = rng.standard_normal((R, C)).astype(np.float32)
    out, am, cs = np.zeros((R, 4), np.float32), np.zeros(R, np.int32), np.zeros_like(x)
    reductions[(1,)](x, out, am, cs, R=R, C=C)
    np.testing.assert_allclose(out[:, 0], x.sum(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[:, 1], x.max(1))
    np.testing.assert_array_equal(out[:, 2], x.min(1))
    f = 1 / (1 + np.exp(-np.abs(x))) + np.exp2(np.minimum(x, 0)) + 1 / np.sqrt(np.maximum(x * x, 1)) + np.log(np.abs(x) + 1)
    np.testing.assert_allclose(out[:, 3], f.sum(1), rtol=1e-5)
    np.testing.assert_array_equal(am, x.argmax(1))
    np.testing.assert_allclose(cs, np.cumsum(x, 1), rtol=1e-5, atol=1e-5)


@triton.jit
def histogram(x_ptr, h_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    tl.atomic_add(h_ptr + v, 1, mask=m)
    tl.atomic_max(h_ptr + 8, v, mask=m)


def test_atomics():
    x = rng.integers(0, 8, 300).astype(np.int32)
    h = np.zeros(9, np.int32)
    s = histogram[(triton.cdiv(300, 64),)](x, h, 300, BLOCK=64)
    np.testing.assert_array_equal(h[:8], np.bincount(x, minlength=8))
    assert h[8] == x.max()
    assert s.totals.atomics > 0


@triton.jit
def cas_xchg(lock, out):
    old = tl.atomic_cas(lock, 0, 1)
    tl.atomic_xchg(out + tl.program_id(0), old + 10)


def test_cas_xchg():
    lock, out = np.zeros(1, np.int32), np.zeros(3, np.int32)
    cas_xchg[(3,)](lock, out)
    assert lock[0] == 1
    assert sorted(out.tolist()) == [10, 11, 11]


@triton.jit
def bad_index(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x[3])


@triton.jit
def bad_arange(x_ptr):
    offs = tl.arange(0, 100)
    tl.store(x_ptr + offs, 1.0)


@triton.jit
def atomic_and_kernel(x_ptr):
    tl.atomic_and(x_ptr + tl.arange(0, 4), 1)


@pytest.mark.parametrize("kernel,line,what", [
    (bad_index, "tl.store(x_ptr + offs, x[3])", "indexing a tensor"),
    (bad_arange, "offs = tl.arange(0, 100)", "power of 2"),
    (atomic_and_kernel, "tl.atomic_and(x_ptr", "tl.atomic_and"),
])
def test_errors_name_the_line(kernel, line, what):
    x = np.zeros(128, np.float32)
    kw = {"BLOCK": 8} if kernel is bad_index else {}
    with pytest.raises(NotImplementedError) as e:
        kernel[(1,)](x, **kw)
    assert line in str(e.value) and what in str(e.value) and "test_language.py:" in str(e.value)


def test_counters_name_reader_lines():
    import triton_style_kernels as K
    a = np.ones(64, np.float32)
    s = K.vec_add[(1,)](a, a, a.copy(), 64, BLOCK=64)
    lines = sorted(site.source for site in s.by_site)
    assert any(ln.startswith("tl.store(out_ptr + offs, a + b") for ln in lines)
    assert any(ln.startswith("a = tl.load(a_ptr + offs") for ln in lines)


def test_matmul_operand_bytes():
    # M=N=K=32 fp16, one 32x32 tile, BK=16: two k-steps each load a 32x16 A tile and a
    # 16x32 B tile (1 KB each) and the C tile is stored once (2 KB): 4 KB + 2 KB.
    import triton_style_kernels as K
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    c = np.zeros((32, 32), np.float16)
    s = K.matmul[(1,)](a, b, c, 32, 32, 32, 32, 1, 32, 1, 32, 1)
    assert s.totals.requested_bytes == 2 * (32 * 16 * 2 * 2) + 32 * 32 * 2


@triton.jit
def row_bias(out_ptr, bias_ptr, R: tl.constexpr, C: tl.constexpr, num_stages: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    bias = tl.load(bias_ptr + c)  # shape (C,), stored to an (R, C) block of pointers
    for i in tl.static_range(num_stages):
        tl.store(out_ptr + r[:, None] * C + c[None, :], bias[None, :] + i)


class ArrayLike:
    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        return self.a


def test_broadcast_store_array_like_and_constexpr_num_stages():
    out = np.zeros((4, 8), np.float32)
    bias = rng.random(8, dtype=np.float32)
    row_bias[(1,)](ArrayLike(out), bias, R=4, C=8, num_stages=2)
    np.testing.assert_array_equal(out, np.broadcast_to(bias + 1, (4, 8)))


def test_trace_records_the_lanes():
    import triton_style_kernels as K
    a = np.ones(100, np.float32)
    s = K.vec_add[(1,)](a, a, a.copy(), 100, BLOCK=128, trace=(0, 3))
    # warp 3 holds elements 96..127: lanes 0..3 active in each of its three accesses
    assert len(s.trace) == 3


def test_layout_map():
    # 4 warps, a 16x64 float32 block: 1024 elements, 8 per thread, 4 per 16-byte vector:
    # chunk c = e // 4 on thread c % 128; row 0 is lanes 0-15 of warp 0, row 1 lanes 16-31
    import triton_style_kernels as K
    thread, reg = K.vec_add.layout((16, 64), num_warps=4)
    assert thread[0, :8].tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert thread[1, 0] == 16 and thread[2, 0] == 32 and thread[8, 0] == 0
    assert reg[0, :4].tolist() == [0, 1, 2, 3] and reg[8, 0] == 4
    counts = np.bincount(thread.ravel(), minlength=128)
    assert (counts == 8).all()
    t16, _ = K.vec_add.layout((16, 64), num_warps=4, dtype=tl.float16)  # 8 halves a vector
    assert t16[0, :16].tolist() == [0] * 8 + [1] * 8


def test_layout_is_what_the_loads_do():
    # warp 1's first load in trace= reads, lane by lane, the first element the layout gives it
    import triton_style_kernels as K
    n = 4096
    a = rng.random(n, dtype=np.float32)
    s = K.vec_add[(4,)](a, a, np.zeros_like(a), n, BLOCK=1024, num_warps=4, trace=(0, 1))
    thread, reg = K.vec_add.layout((1024,), num_warps=4)
    first = s.trace[0]
    assert first.width == 4 and first.lanes == tuple(range(32))
    mine = [int(np.flatnonzero((thread == 32 + lane) & (reg == 0))[0]) for lane in range(32)]
    base = first.addresses[0] - 4 * mine[0]
    assert [base + 4 * e for e in mine] == list(first.addresses)
