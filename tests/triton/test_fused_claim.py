"""The fused-softmax claim in counters: fused moves 2MN elements, five one-step kernels
(the tutorial's naive softmax, one kernel per line) move 8MN + 4M."""

import numpy as np

import triton_style_kernels as K
from simtdocs import triton
from simtdocs.triton import language as tl


@triton.jit
def row_max(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    tl.store(out_ptr + r, tl.max(tl.load(x_ptr + r * N + c, mask=c < N, other=-float("inf")), axis=0))


@triton.jit
def row_sum(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    tl.store(out_ptr + r, tl.sum(tl.load(x_ptr + r * N + c, mask=c < N, other=0.0), axis=0))


@triton.jit
def row_sub(x_ptr, v_ptr, out_ptr, N, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + r * N + c, mask=c < N)
    tl.store(out_ptr + r * N + c, x - tl.load(v_ptr + r), mask=c < N)


@triton.jit
def row_div(x_ptr, v_ptr, out_ptr, N, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + r * N + c, mask=c < N)
    tl.store(out_ptr + r * N + c, x / tl.load(v_ptr + r), mask=c < N)


@triton.jit
def elementwise_exp(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + o, tl.exp(tl.load(x_ptr + o, mask=o < n)), mask=o < n)


def test_fused_against_unfused():
    M, N = 6, 100
    B = triton.next_power_of_2(N)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((M, N)).astype(np.float32)
    mx, sm = np.zeros(M, np.float32), np.zeros(M, np.float32)
    z, e, y = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    elements = 0
    for s in (row_max[(M,)](x, mx, N, BLOCK=B),
              row_sub[(M,)](x, mx, z, N, BLOCK=B),
              elementwise_exp[(triton.cdiv(M * N, 256),)](z, e, M * N, BLOCK=256),
              row_sum[(M,)](e, sm, N, BLOCK=B),
              row_div[(M,)](e, sm, y, N, BLOCK=B)):
        elements += s.totals.requested_bytes // 4
    assert elements == 8 * M * N + 4 * M
    fused = np.zeros_like(x)
    s = K.row_softmax[(M,)](fused, x, N, N, M, N, BLOCK=B)
    assert s.totals.requested_bytes // 4 == 2 * M * N
    np.testing.assert_allclose(fused, y, rtol=1e-6)
