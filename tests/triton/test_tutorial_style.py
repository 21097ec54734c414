import numpy as np
import pytest

from simtdocs import triton
from simtdocs.triton import language as tl

import triton_style_kernels as K

rng = np.random.default_rng(7)


def test_vector_add_counts_by_hand():
    # n = 4096 float32 (divisible by 16, so Triton proves the mask constant over 16 elements),
    # BLOCK 1024, 4 warps: 4 elements (16 bytes) per thread per vector, 2 vectors per thread;
    # a warp request is 32 x 16 = 512 contiguous bytes = 16 sectors, all bytes used. Per
    # program and array 2 x 4 = 8 requests; 4 programs x 3 arrays: 96 requests, 3n/8 sectors.
    n = 4096
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.zeros_like(a)
    s = K.vec_add[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024, num_warps=4)
    np.testing.assert_array_equal(out, a + b)
    assert s.totals.sectors == 3 * n // 8
    assert s.totals.requests == 96
    assert s.totals.requested_bytes == 12 * n
    assert s.totals.coalescing_efficiency == 1.0


def test_vector_add_n_not_divisible_by_16():
    # n = 1000, BLOCK 256, 4 warps: each thread holds 2 contiguous elements (256 / 128), but
    # n is not divisible by 16, so Triton cannot prove the mask constant over a pair: each
    # thread issues 2 scalar accesses; lane l reads element 2l (+1), 8 bytes apart, so a full
    # warp's request spans 256 bytes = 8 sectors of which half is used.
    # Programs 0-2: 4 warps x 2 requests x 8 sectors = 64 sectors per array. Program 3 holds
    # 232 elements = 116 pairs: warps 0-2 full (6 requests x 8 sectors), warp 3 has 20 lanes
    # (160 bytes from a sector boundary: 5 sectors) x 2 requests: 58. Per array 3 x 64 + 58 =
    # 250 = n/4 sectors, 32 requests: in all 3n/4 sectors (twice the 3n/8 of n = 1024), 96 requests.
    n = 1000
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.zeros_like(a)
    s = K.vec_add[(triton.cdiv(n, 256),)](a, b, out, n, BLOCK=256, num_warps=4)
    np.testing.assert_array_equal(out, a + b)
    assert s.totals.sectors == 3 * n // 4 == 750
    assert s.totals.requests == 96
    assert s.totals.requested_bytes == 12 * n
    assert s.totals.coalescing_efficiency == 0.5


@pytest.mark.parametrize("n", [1, 31, 257, 1000, 4099])
def test_vector_add_ragged(n):
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full_like(a, 7.0)
    K.vec_add[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](a, b, out, n, BLOCK=128)
    np.testing.assert_array_equal(out, a + b)


def test_masked_tail_requests():
    # n = 33, BLOCK 64, 1 warp: 2 elements per lane (64 / 32), scalar accesses (33 is not
    # divisible by 16). Access 0 takes elements 0, 2, .., 32: lanes 0-16, bytes 0..131, 5
    # sectors; access 1 elements 1, 3, .., 31: lanes 0-15, bytes 4..127, 4 sectors; elements
    # 33..63 are masked off and not accessed. Per array 2 requests, 9 sectors.
    n = 33
    a = rng.random(n, dtype=np.float32)
    out = np.zeros_like(a)
    s = K.vec_add[(1,)](a, a, out, n, BLOCK=64, num_warps=1)
    assert s.totals.requests == 3 * 2
    assert s.totals.sectors == 3 * 9
    assert s.totals.requested_bytes == 3 * 4 * n
    # n = 48 (divisible by 16): each lane's pair is one 8-byte access: one request per array,
    # lanes 0-23 read bytes 0..191, 6 sectors, every byte used.
    n = 48
    a = rng.random(n, dtype=np.float32)
    out = np.zeros_like(a)
    s = K.vec_add[(1,)](a, a, out, n, BLOCK=64, num_warps=1)
    np.testing.assert_array_equal(out, a + a)
    assert (s.totals.requests, s.totals.sectors) == (3, 3 * 6)


@pytest.mark.parametrize("shape", [(5, 7), (13, 100), (3, 128)])
def test_row_softmax(shape):
    M, N = shape
    x = rng.standard_normal(shape).astype(np.float32)
    y = np.zeros_like(x)
    block = triton.next_power_of_2(N)
    s = K.row_softmax[(min(M, 4),)](y, x, x.shape[1], y.shape[1], M, N, BLOCK=block)
    ref = np.exp(x - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
    # fused: each element read once and written once
    assert s.totals.requested_bytes == 2 * M * N * 4


@pytest.mark.parametrize("M,N,block", [(4, 100, 32), (3, 257, 128)])
def test_layer_norm(M, N, block):
    x = rng.standard_normal((M, N)).astype(np.float32)
    w, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    y = np.zeros_like(x)
    mean, rstd = np.zeros(M, np.float32), np.zeros(M, np.float32)
    K.layer_norm_fwd[(M,)](x, y, w, b, mean, rstd, N, N, 1e-5, BLOCK=block)
    mu = x.mean(1)
    rs = 1 / np.sqrt(((x - mu[:, None]) ** 2).mean(1) + 1e-5)
    np.testing.assert_allclose(mean, mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd, rs, rtol=1e-4)
    np.testing.assert_allclose(y, (x - mu[:, None]) * rs[:, None] * w + b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("M,N,Kd,act", [(40, 50, 30, ""), (64, 32, 16, "leaky")])
def test_matmul(M, N, Kd, act):
    a = rng.standard_normal((M, Kd)).astype(np.float16)
    b = rng.standard_normal((Kd, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
    K.matmul[grid](a, b, c, M, N, Kd, Kd, 1, N, 1, N, 1, ACT=act)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    if act:
        ref = np.where(ref >= 0, ref, 0.01 * ref)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-2, atol=2e-2)


def test_block_pointers_count_like_plain_pointers():
    # the same 64x64x32 product through block pointers and through masked plain pointers:
    # the same sectors, requests and bytes (Triton lowers block pointers to pointers + masks)
    M = N = 64
    Kd = 32
    a = rng.standard_normal((M, Kd)).astype(np.float16)
    b = rng.standard_normal((Kd, N)).astype(np.float16)
    c1, c2 = np.zeros((M, N), np.float16), np.zeros((M, N), np.float16)
    s1 = K.matmul_block_ptr[(2, 2)](a, b, c1, M, N, Kd, Kd, 1, N, 1, N, 1, BM=32, BN=32, BK=16)
    s2 = K.matmul[(4,)](a, b, c2, M, N, Kd, Kd, 1, N, 1, N, 1)
    np.testing.assert_array_equal(c1, c2)
    for key in ("requests", "sectors", "requested_bytes", "shared_wavefronts"):
        assert getattr(s1.totals, key) == getattr(s2.totals, key), key


@pytest.mark.parametrize("M,N,Kd", [(40, 50, 30), (32, 32, 32)])
def test_block_pointer_matmul_ragged(M, N, Kd):
    # triton 3.9's interpreter no longer runs block pointers (they gave way to tensor
    # descriptors), so numpy is the reference here; boundary_check masks the ragged edges
    a = rng.standard_normal((M, Kd)).astype(np.float16)
    b = rng.standard_normal((Kd, N)).astype(np.float16)
    c = np.full((M, N), 7, np.float16)
    K.matmul_block_ptr[(triton.cdiv(M, 32), triton.cdiv(N, 32))](a, b, c, M, N, Kd, Kd, 1, N, 1, N, 1,
                                                                 BM=32, BN=32, BK=16)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32), rtol=2e-2,
                               atol=2e-2)


def test_do_not_specialize_drops_the_divisibility():
    # n = 4096 is divisible by 16, but do_not_specialize=["n"] hides it from the compiler:
    # the mask is no longer provably constant over a vector, so every access is scalar
    @triton.jit(do_not_specialize=["n"])
    def add_plain(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=offs < n) + tl.load(b_ptr + offs, mask=offs < n),
                 mask=offs < n)

    n = 4096
    a = rng.random(n, dtype=np.float32)
    out = np.zeros_like(a)
    s1 = add_plain[(4,)](a, a, out, n, BLOCK=1024)
    s2 = K.vec_add[(4,)](a, a, out, n, BLOCK=1024)
    np.testing.assert_array_equal(out, a + a)
    assert s2.totals.requests == 96 and s1.totals.requests == 4 * 96  # 4-wide vectors split in 4
    assert s1.totals.requested_bytes == s2.totals.requested_bytes == 12 * n
