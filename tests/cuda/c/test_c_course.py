"""The course's kernels in CUDA C, run through ``RawModule``: results equal numpy's, and
every counter, line by line, equals the same kernel's in the numba dialect (c_twins.py)."""

import numpy as np
import pytest

import c_twins as tw
from simtdocs import cdiv
from simtdocs.cuda import RawKernel, RawModule


@pytest.fixture(scope="module")
def module():
    return RawModule(code=tw.COURSE_CU)


def per_line(stats):
    """The counters of each line, in line order (the C file's lines, the twin's lines)."""
    return [c for _, c in sorted(stats.by_site.items(), key=lambda kv: (kv[0].filename, kv[0].lineno))]


def run_both(module, name, grid, block, c_args, py_args):
    s_c = module.get_function(name)(grid, block, c_args)
    s_py = getattr(tw, name)[grid, block](*py_args)
    assert s_c.totals == s_py.totals
    assert per_line(s_c) == per_line(s_py)
    return s_c


rng = np.random.default_rng(7)


def test_vector_add(module):
    n = 1000
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c1, c2 = np.zeros(n, np.float32), np.zeros(n, np.float32)
    s = run_both(module, "vector_add", cdiv(n, 256), 256, (a, b, c1, np.int32(n)), (a, b, c2, n))
    assert np.array_equal(c1, a + b) and np.array_equal(c1, c2)
    lines = {site.source for site in s.by_site}
    assert "if (i < n) {" in lines and "c[i] = a[i] + b[i];" in lines  # the reader's C lines
    assert s.totals.divergent_branches == 1


@pytest.mark.parametrize("blocks,threads", [(4, 128), (16, 256)])
def test_grid_stride_loop(module, blocks, threads):
    n = 50_000
    x = rng.random(n, dtype=np.float32)
    y1, y2 = np.zeros(n, np.float32), np.zeros(n, np.float32)
    run_both(module, "scale", blocks, threads, (x, y1, np.float32(2), np.int32(n)), (x, y2, np.float32(2), n))
    assert np.array_equal(y1, 2 * x) and np.array_equal(y1, y2)


def test_shared_reduction(module):
    x = rng.random(256 * 8, dtype=np.float32)
    o1, o2 = np.zeros(8, np.float32), np.zeros(8, np.float32)
    s = run_both(module, "reduce_shared", 8, 256, (x, o1), (x, o2))
    assert np.array_equal(o1, o2) and np.allclose(o1, x.reshape(8, 256).sum(1), rtol=1e-5)
    assert s.totals.barriers > 0


def test_tiled_matmul(module):
    N = 64
    A, B = rng.random((N, N), dtype=np.float32), rng.random((N, N), dtype=np.float32)
    C1, C2 = np.zeros((N, N), np.float32), np.zeros((N, N), np.float32)
    run_both(module, "matmul_tiled", (4, 4), (16, 16), (A, B, C1, np.int32(N)), (A, B, C2, N))
    assert np.array_equal(C1, C2) and np.allclose(C1, A @ B, rtol=1e-4)


def test_transpose_padding_has_no_conflicts(module):
    N = 128
    A = rng.random((N, N), dtype=np.float32)
    B1, B2 = np.zeros_like(A), np.zeros_like(A)
    s = run_both(module, "transpose_padded", (4, 4), (32, 8), (A.ravel(), B1.ravel(), np.int32(N)),
                 (A.ravel(), B2.ravel(), N))
    assert np.array_equal(B1, A.T)
    assert s.totals.shared_bank_conflicts == 0


def test_histogram_shared_atomics(module):
    n = 5000
    d = rng.integers(0, 1000, n).astype(np.int32)
    h1, h2 = np.zeros(64, np.int32), np.zeros(64, np.int32)
    run_both(module, "histogram", 8, 128, (d, h1, np.int32(n)), (d, h2, n))
    assert np.array_equal(h1, np.bincount(d % 64, minlength=64)) and np.array_equal(h1, h2)


def test_warp_shuffle_reduction(module):
    n = 1000
    x = rng.random(n, dtype=np.float32)
    o1, o2 = np.zeros(1, np.float32), np.zeros(1, np.float32)
    run_both(module, "reduce_warp", cdiv(n, 256), 256, (x, o1, np.int32(n)), (x, o2, n))
    assert o1[0] == o2[0] and np.isclose(o1[0], x.sum(), rtol=1e-5)


def test_raw_kernel_and_as_masks():
    k = RawKernel(tw.COURSE_CU, "vector_add")
    text = k.as_masks()
    assert "blk.branch" in text and "# 9: if (i < n) {" in text
