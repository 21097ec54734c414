"""Every program runs, batched as the engine batches blocks, and no counter depends on the
batching: the same kernels with one program per pass, three, and the engine's default
(all of them here), on ragged shapes, give the same arrays and the same counters per line."""

import numpy as np
import pytest

import triton_style_kernels as K
from simtdocs import triton

rng = np.random.default_rng(31)


def per_line(stats):
    out = {(ln.site.lineno, ln.site.source): ln.counters for ln in stats.lines}
    dots = {(site.lineno, site.source): (d.flops, d.mma, d.calls) for site, d in stats.dots.items()}
    return out, dots


def run_all(launch, arrays):
    """``launch(arrays, blocks_per_pass)`` for 1, 3 and the default; the arrays and counters
    of each, checked equal; returns the default's arrays and stats."""
    results = []
    for bpp in (1, 3, None):
        mine = [a.copy() for a in arrays]
        stats = launch(mine, bpp)
        results.append((mine, stats))
    (a0, s0) = results[-1]
    for mine, stats in results[:-1]:
        for x, y in zip(mine, a0):
            np.testing.assert_array_equal(x, y)
        assert stats.totals == s0.totals
        assert per_line(stats) == per_line(s0)
    return a0, s0


def test_vector_add_ragged():
    n = 1000  # BLOCK 128: 8 programs, the last one 104 elements
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    (_, _, out), s = run_all(lambda arr, bpp: K.vec_add[(triton.cdiv(n, 128),)](*arr, n, BLOCK=128,
                                                                               blocks_per_pass=bpp),
                             [a, b, np.zeros_like(a)])
    np.testing.assert_array_equal(out, a + b)
    assert s.totals.requested_bytes == 12 * n


def test_persistent_softmax_with_ragged_row_loops():
    M, N = 23, 100  # 5 programs walk rows pid, pid + 5, …: 5, 5, 5, 4 and 4 rows
    x = rng.standard_normal((M, N)).astype(np.float32)
    (y, _), s = run_all(lambda arr, bpp: K.row_softmax[(5,)](*arr, N, N, M, N, BLOCK=128, blocks_per_pass=bpp),
                        [np.zeros_like(x), x])
    ref = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, ref / ref.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert s.totals.requested_bytes == 2 * M * N * 4


def test_layer_norm_and_matmul():
    M, N = 7, 300
    x = rng.standard_normal((M, N)).astype(np.float32)
    w, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    run_all(lambda arr, bpp: K.layer_norm_fwd[(M,)](*arr, N, N, 1e-5, BLOCK=128, blocks_per_pass=bpp),
            [x, np.zeros_like(x), w, b, np.zeros(M, np.float32), np.zeros(M, np.float32)])
    Mm, Nn, Kk = 70, 50, 40
    a = rng.standard_normal((Mm, Kk)).astype(np.float16)
    bb = rng.standard_normal((Kk, Nn)).astype(np.float16)
    grid = (triton.cdiv(Mm, 32) * triton.cdiv(Nn, 32),)
    (_, _, c), s = run_all(lambda arr, bpp: K.matmul[grid](*arr, Mm, Nn, Kk, Kk, 1, Nn, 1, Nn, 1, blocks_per_pass=bpp),
                           [a, bb, np.zeros((Mm, Nn), np.float16)])
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ bb.astype(np.float32), rtol=2e-2,
                               atol=2e-2)


@pytest.mark.parametrize("seq", [50, 64])
def test_causal_attention_loop_bound_from_program_id(seq):
    D, BM = 16, 16
    q, k, v = (rng.standard_normal((seq, D)).astype(np.float16) for _ in range(3))
    grid = (triton.cdiv(seq, BM),)
    (_, _, _, o), s = run_all(lambda arr, bpp: K.causal_attention[grid](*arr, seq, 0.25, D=D, BM=BM, BN=BM,
                                                                       blocks_per_pass=bpp),
                              [q, k, v, np.zeros_like(q)])
    S = (q.astype(np.float32) @ k.astype(np.float32).T) * 0.25
    S = np.where(np.tril(np.ones((seq, seq), bool)), S, -np.inf)
    P = np.exp(S - S.max(1, keepdims=True))
    np.testing.assert_allclose(o.astype(np.float32), (P / P.sum(1, keepdims=True)) @ v.astype(np.float32),
                               rtol=1e-2, atol=1e-2)
    # program m runs m + 1 key blocks: the dots count 1 + 2 + … + grid per dot line
    calls = sorted(d.calls for d in s.dots.values())
    nb = grid[0]
    assert calls == [nb * (nb + 1) // 2] * 2


def test_return_branch_and_while_per_program():
    R, C = 5, 32
    x = rng.standard_normal((R, C)).astype(np.float32)
    lens = np.array([3, 20, 31, 0, 17], np.int32)  # some rows take the if, some the else
    (_, out, _), s = run_all(lambda arr, bpp: K.ragged_rows[(8,)](*arr, R, C=C, blocks_per_pass=bpp),
                             [x, np.zeros(R + R * C, np.float32), lens])
    steps = -(-lens // 4) * 4  # the while loop runs ceil(n / 4) times, i ends at 4 ceil(n / 4)
    total = np.where(lens > C // 2, (x * (np.arange(C) < lens[:, None])).sum(1), -1.0)
    np.testing.assert_allclose(out[:R], total + steps, rtol=1e-5)
    body = out[R:].reshape(R, C)
    for r in range(R):
        expect = np.zeros(C, np.float32)
        expect[0:steps[r]:4] = np.arange(0, steps[r], 4)
        np.testing.assert_array_equal(body[r], expect)
    # programs 5-7 returned at once: only rows 0-4 loaded their length
    (c,) = [ln.counters for ln in s.lines if "n = tl.load(lens_ptr + row)" in ln.site.source]
    assert c.requests == R


def test_break_is_refused_at_compile_time():
    from simtdocs.triton import language as tl

    @triton.jit
    def with_break(x_ptr, n):
        for i in range(0, n):
            if i > 2:
                break
            tl.store(x_ptr + i, 1.0)

    with pytest.raises(tl.TritonError, match=r"test_batching.py:\d+:\d+: break is not supported"):
        with_break[(1,)](np.zeros(8, np.float32), 8)
