"""The same kernels under simtdocs.triton and under Triton's interpreter (skipped without triton)."""

import os

import numpy as np
import pytest

import triton_oracle as O
import triton_style_kernels as K
from simtdocs import triton as paper

HERE = os.path.dirname(os.path.abspath(__file__))
T = O.twin_module(os.path.join(HERE, "triton_style_kernels.py"), "triton_style_kernels_real")
pytestmark = pytest.mark.skipif(T is None, reason="triton is not installed (pip install simtdocs[triton])")
rng = np.random.default_rng(11)


def both(name, grid, arrays, scalars, **kw):
    mine = [a.copy() for a in arrays]
    theirs = [a.copy() for a in arrays]
    getattr(K, name)[grid](*mine, *scalars, **kw)
    O.run(getattr(T, name), grid, *theirs, *scalars, **kw)
    return mine, theirs


@pytest.mark.parametrize("n", [1, 100, 1000, 3001])
def test_vec_add(n):
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    mine, theirs = both("vec_add", (paper.cdiv(n, 256),), [a, b, np.zeros_like(a)], [n], BLOCK=256)
    np.testing.assert_array_equal(mine[2], theirs[2])


@pytest.mark.parametrize("M,N", [(3, 5), (7, 100), (6, 129)])
def test_row_softmax(M, N):
    x = rng.standard_normal((M, N)).astype(np.float32)
    (y1, _), (y2, _) = both("row_softmax", (min(M, 4),), [np.zeros_like(x), x], [N, N, M, N],
                            BLOCK=paper.next_power_of_2(N))
    np.testing.assert_allclose(y1, y2, rtol=1e-6, atol=1e-7)  # reduction order may differ


@pytest.mark.parametrize("M,N,block", [(3, 100, 32), (2, 300, 128)])
def test_layer_norm(M, N, block):
    x = rng.standard_normal((M, N)).astype(np.float32)
    w, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    arrays = [x, np.zeros_like(x), w, b, np.zeros(M, np.float32), np.zeros(M, np.float32)]
    mine, theirs = both("layer_norm_fwd", (M,), arrays, [N, N, 1e-5], BLOCK=block)
    for i in (1, 4, 5):
        np.testing.assert_allclose(mine[i], theirs[i], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("M,N,Kd", [(40, 50, 30), (33, 64, 16)])
def test_matmul(M, N, Kd):
    a = rng.standard_normal((M, Kd)).astype(np.float16)
    b = rng.standard_normal((Kd, N)).astype(np.float16)
    grid = (paper.cdiv(M, 32) * paper.cdiv(N, 32),)
    mine, theirs = both("matmul", grid, [a, b, np.zeros((M, N), np.float16)], [M, N, Kd, Kd, 1, N, 1, N, 1])
    np.testing.assert_allclose(mine[2].astype(np.float32), theirs[2].astype(np.float32), rtol=1e-2, atol=1e-2)


def test_integer_rules_and_reductions():
    R, C = 8, 16
    n = R * C - 5
    a = rng.integers(-60, 60, R * C).astype(np.int32)
    b = (rng.integers(1, 9, R * C) * rng.choice([-1, 1], R * C)).astype(np.int32)
    arrays = [a, b, np.zeros_like(a), np.zeros_like(a), np.zeros((R, 3), np.float32), np.zeros(R, np.int32),
              np.zeros((R, C), np.int32)]
    mine, theirs = both("int_and_reduce", (1,), arrays, [n], R=R, C=C)
    for i in (2, 3, 5, 6):
        np.testing.assert_array_equal(mine[i], theirs[i])
    np.testing.assert_allclose(mine[4], theirs[4], rtol=1e-5)


@pytest.mark.parametrize("seq", [33, 64])
def test_causal_attention(seq):
    D, BM = 16, 16
    q, k, v = (rng.standard_normal((seq, D)).astype(np.float16) for _ in range(3))
    mine, theirs = both("causal_attention", (paper.cdiv(seq, BM),), [q, k, v, np.zeros_like(q)], [seq, 0.25],
                        D=D, BM=BM, BN=BM)
    np.testing.assert_allclose(mine[3].astype(np.float32), theirs[3].astype(np.float32), rtol=1e-2, atol=2e-3)


def test_return_branch_while():
    R, C = 5, 32
    x = rng.standard_normal((R, C)).astype(np.float32)
    lens = np.array([3, 20, 31, 0, 17], np.int32)
    mine, theirs = both("ragged_rows", (8,), [x, np.zeros(R + R * C, np.float32), lens], [R], C=C)
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-5, atol=1e-6)


def test_reductions_and_dot_tiles():
    x = rng.standard_normal((2, 4, 64)).astype(np.float32)
    arrays = [x, np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(8, np.int32)]
    mine, theirs = both("tile_reduce", (2,), arrays, [], R=4, C=64)
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-5, atol=1e-6)
    for i in (2, 3):
        np.testing.assert_array_equal(mine[i], theirs[i])
    a = rng.standard_normal((32, 16)).astype(np.float16)
    b = rng.standard_normal((16, 32)).astype(np.float16)
    mine, theirs = both("one_dot", (1,), [a, b, np.zeros((32, 32), np.float32)], [], M=32, N=32, K=16)
    np.testing.assert_allclose(mine[2], theirs[2], rtol=1e-5, atol=1e-5)

