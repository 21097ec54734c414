"""Gaps the official tutorials' kernels found (the held-out check of issue 41), each on a
kernel of our own in the tutorials' style (triton_style_kernels.py), against numpy, Triton's
interpreter where it is installed, and counts derived by hand."""

import os

import numpy as np
import pytest

import triton_oracle as O
import triton_style_kernels as K
from simtdocs import triton

HERE = os.path.dirname(os.path.abspath(__file__))
T = O.twin_module(os.path.join(HERE, "triton_style_kernels.py"), "triton_style_kernels_gaps")
needs_triton = pytest.mark.skipif(T is None, reason="triton is not installed")
rng = np.random.default_rng(41)


def grouped_reference(M, N, BM, BN, GROUP):
    n_m, n_n = -(-M // BM), -(-N // BN)
    who = []
    for pid in range(n_m * n_n):
        first = pid // (GROUP * n_n) * GROUP
        rows = min(n_m - first, GROUP)
        pm = first + pid % (GROUP * n_n) % rows
        pn = pid % (GROUP * n_n) // rows
        who.append(max(pm, pn, 0) * 1000 + min(rows, GROUP, 99))
    return np.array(who, np.int32)


@pytest.mark.parametrize("M,N", [(70, 40), (64, 48), (9, 5)])
def test_builtin_min_max_per_program(M, N):
    # 9 tile-rows of 8 in groups of 4: the last group has 1 row, so min(n_m - first, GROUP)
    # differs between the programs of one batch (it was refused as "a Python value that
    # differs between programs"); Triton's code generator makes Python's min/max of tensors
    # tl.minimum/tl.maximum, and keeps Python's own on constexprs (tl.arange(0, min(BM, 64)))
    BM, BN, GROUP = 8, 16, 4
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    x = rng.standard_normal((M, N)).astype(np.float32)
    y, who = np.zeros_like(x), np.zeros(grid[0], np.int32)
    s = K.grouped_tiles[grid](x, y, who, M, N, BM=BM, BN=BN, GROUP=GROUP)
    np.testing.assert_array_equal(y, x + 1)
    np.testing.assert_array_equal(who, grouped_reference(M, N, BM, BN, GROUP))
    s1 = K.grouped_tiles[grid](x, np.zeros_like(x), np.zeros_like(who), M, N, BM=BM, BN=BN, GROUP=GROUP,
                               blocks_per_pass=1)
    assert {ln.site.lineno: ln.counters for ln in s.lines} == {ln.site.lineno: ln.counters for ln in s1.lines}
    if T is not None:
        y2, who2 = np.zeros_like(x), np.zeros_like(who)
        O.run(T.grouped_tiles, grid, x, y2, who2, M, N, BM=BM, BN=BN, GROUP=GROUP)
        np.testing.assert_array_equal(y, y2)
        np.testing.assert_array_equal(who, who2)


def load_counters(stats):
    (c,) = [ln.counters for ln in stats.lines if "x = tl.load(x_ptr" in ln.site.source]
    return c.requests, c.sectors, c.requested_bytes, c.coalescing_efficiency


def test_transposed_view_is_read_down_its_columns():
    # x = base.T (32 x 32 float32, strides (1, 32)), one 32 x 32 tile, 4 warps. Triton orders
    # the load's layout by the pointer's contiguity: lanes and 16-byte vectors down the
    # columns (order [0, 1], sizePerThread [4, 1]). 256 chunks of 4 rows on 128 threads: 2
    # instructions a thread; a warp's instruction takes 4 whole columns of x, each a row of
    # base (128 contiguous bytes, 4 sectors): 16 sectors, 512 bytes, all used. 2 x 4 warps = 8
    # requests, 128 sectors, 4096 bytes: exactly the contiguous copy's counts.
    base = rng.standard_normal((32, 32)).astype(np.float32)
    x = base.T
    y = np.zeros((32, 32), np.float32)
    s = K.scaled_tile[(1, 1)](x, y, 32, 32, 1, 32, 32, 1, 2.0, BM=32, BN=32)
    np.testing.assert_array_equal(y, 2 * x)
    assert load_counters(s) == (8, 128, 4096, 1.0)
    xc = np.ascontiguousarray(x)
    s = K.scaled_tile[(1, 1)](xc, y, 32, 32, 32, 1, 32, 1, 2.0, BM=32, BN=32)
    assert load_counters(s) == (8, 128, 4096, 1.0)


def test_transposed_view_column_stride_not_divisible_by_16():
    # M = 24 rows (a column stride of 24 elements, not divisible by 16: Triton proves no
    # alignment, one element a thread, order [0, 1]). The 32 x 32 tile's rows 24..31 are
    # masked off. Element e of the column-major order is on thread e % 128: a warp's
    # instruction reads 32 consecutive rows of one column, of which 24 exist: 96 bytes from
    # column j's start at 96·j bytes; a column starting at 96·j lies in 3 sectors when
    # 96·j % 32 == 0 (always: 96 = 3·32). 8 instructions a thread x 4 warps = 32 requests, 3
    # sectors each: 96 sectors for 24·32·4 = 3072 bytes, all of every sector used.
    M = 24
    base = rng.standard_normal((32, M)).astype(np.float32)
    x = base.T  # (24, 32), strides (1, 24)
    y = np.zeros((M, 32), np.float32)
    s = K.scaled_tile[(1, 1)](x, y, M, 32, 1, M, 32, 1, 2.0, BM=32, BN=32)
    np.testing.assert_array_equal(y, 2 * x)
    assert load_counters(s) == (32, 96, 3072, 1.0)


@pytest.mark.parametrize("case", ["transposed", "column slice", "strided output"])
def test_strided_views_as_the_host_passes_them(case):
    # A Triton kernel receives data_ptr() and the strides the host passes (x.stride(0), …):
    # views run in place, no copy; the kernel's stores land in the caller's view
    M, N = 37, 50
    if case == "transposed":
        x = rng.standard_normal((N, M)).astype(np.float32).T
    else:
        x = rng.standard_normal((M + 3, N + 9)).astype(np.float32)[2:2 + M, 5:5 + N]
    big = np.full((M, 2 * N), np.nan, np.float32)
    y = big[:, ::2] if case == "strided output" else np.zeros((M, N), np.float32)
    st = lambda a: tuple(s // a.itemsize for s in a.strides)  # noqa: E731
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 32))
    K.scaled_tile[grid](x, y, M, N, *st(x), *st(y), 3.0, BM=16, BN=32)
    np.testing.assert_array_equal(y, 3 * x)
    if case == "strided output":
        assert np.isnan(big[:, 1::2]).all()
    if T is not None:
        y2 = np.zeros((M, N), np.float32)
        O.run(T.scaled_tile, grid, x, y2, M, N, *st(x), *st(y2), 3.0, BM=16, BN=32)
        np.testing.assert_array_equal(y, y2)


def test_negative_strides_are_refused():
    x = np.arange(32, dtype=np.float32)[::-1]
    with pytest.raises(NotImplementedError, match="negative"):
        K.vec_add[(1,)](x, x, np.zeros(32, np.float32), 32, BLOCK=32)
