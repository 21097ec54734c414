import numpy as np
import pytest

from simtdocs import triton

import triton_style_kernels as K

rng = np.random.default_rng(7)


def test_vector_add_counts_by_hand():
    # n = 1000 float32, BLOCK 256, 4 warps: 4 programs; each array is 4000 contiguous bytes
    # from an aligned start, so 125 sectors per array, 375 = 3n/8 in all; programs 0-2 issue
    # 8 warp requests per access (256 elements / 32 lanes), program 3 (232 elements) 8 too
    # (7 full warps + 8 lanes): 32 per array, 96 in all. Bytes: 12n.
    n = 1000
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.zeros_like(a)
    s = K.vec_add[(triton.cdiv(n, 256),)](a, b, out, n, BLOCK=256, num_warps=4)
    np.testing.assert_array_equal(out, a + b)
    assert s.totals.sectors == 3 * n // 8 == 375
    assert s.totals.requests == 96
    assert s.totals.requested_bytes == 12 * n


@pytest.mark.parametrize("n", [1, 31, 257, 1000, 4099])
def test_vector_add_ragged(n):
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full_like(a, 7.0)
    K.vec_add[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](a, b, out, n, BLOCK=128)
    np.testing.assert_array_equal(out, a + b)


def test_masked_tail_requests():
    # n = 33, BLOCK 64, 1 warp: the first 32 elements one request (4 sectors), the 33rd
    # another request of one sector; elements 33..63 are masked off and not accessed.
    n = 33
    a = rng.random(n, dtype=np.float32)
    out = np.zeros_like(a)
    s = K.vec_add[(1,)](a, a, out, n, BLOCK=64, num_warps=1)
    assert s.totals.requests == 3 * 2
    assert s.totals.sectors == 3 * 5
    assert s.totals.requested_bytes == 3 * 4 * n


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
