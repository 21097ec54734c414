"""Reductions and tl.dot reach the engine as shuffles, shared accesses and barriers on the
lanes the layout assigns; the counts here are derived by hand from the stated lowering
(simtdocs.triton.language's docstring)."""

import numpy as np
import pytest

import triton_style_kernels as K
from simtdocs import triton
from simtdocs.devices import A100, H100, V100
from simtdocs.triton import language as tl

rng = np.random.default_rng(23)


def line(stats, text):
    (c,) = [ln.counters for ln in stats.lines if text in ln.site.source]
    return c


def test_sum_of_128_over_4_warps():
    # 128 elements, 4 warps: one element per thread (nothing to add in registers). Each warp
    # folds its 32 lanes by 5 butterfly shuffles (xor 1, 2, 4, 8, 16): 4 x 5 = 20. The axis
    # spans the 4 warps: lane 0 of each stores its partial (4 requests, 1 wavefront each),
    # a barrier, every thread loads partial lane % 4 (4 requests, each 4 distinct words: 1
    # wavefront) and every warp folds them by 2 butterfly steps (8 shuffles). As Triton 3.9
    # compiles it (test_vs_compiler: 7 shfl.sync.bfly, 1 st.shared, 1 ld.shared, 1 bar.sync).
    x = rng.standard_normal(128).astype(np.float32)
    out = np.zeros(1, np.float32)
    s = K.block_sum[(1,)](x, out, 128, BLOCK=128, num_warps=4, trace=(0, 0))
    np.testing.assert_allclose(out[0], x.sum(), rtol=1e-5)
    c = line(s, "tl.sum(x, axis=0)")
    assert (c.shuffles, c.shared_requests, c.shared_wavefronts, c.barriers) == (28, 8, 8, 1)
    assert c.shared_bank_conflicts == 0
    # warp 0's shared accesses, in order, as trace= shows them
    shared = [(r.kind, r.lanes, r.addresses) for r in s.trace if r.space == "shared"]
    assert [k for k, _, _ in shared] == ["store", "load"]
    assert shared[0][1] == (0,) and shared[0][2] == (0,)
    assert shared[1][1] == tuple(range(32)) and shared[1][2] == tuple(4 * (lane % 4) for lane in range(32))


def test_one_warp_sum_has_no_shared_exchange():
    # 64 elements on 1 warp: 2 elements per thread added in registers, 5 shuffles, no
    # shared memory, no barrier.
    x = rng.standard_normal(64).astype(np.float32)
    out = np.zeros(1, np.float32)
    s = K.block_sum[(1,)](x, out, 64, BLOCK=64, num_warps=1)
    np.testing.assert_allclose(out[0], x.sum(), rtol=1e-5)
    c = line(s, "tl.sum(x, axis=0)")
    assert (c.shuffles, c.shared_requests, c.barriers) == (5, 0, 0)


def test_row_reductions_of_a_4x64_tile():
    # (4, 64) float32 over 4 warps = 256 elements: the load gives each thread 2 contiguous
    # elements (256 / 128, 8 bytes), so lane l of warp w holds row w, columns 2l and 2l + 1
    # (Triton: sizePerThread [1, 2], threadsPerWarp [1, 32], warpsPerCTA [4, 1]). Along axis 1
    # a thread adds its pair in registers, then 5 butterfly steps fold the warp's row: 5
    # shuffles per warp, 20 per program, no shared memory; argmax shuffles (value, index)
    # pairs: 40. The store then converts each (4,) result from the slice layout (every lane
    # of warp r holds row r's) to the blocked one (element i on thread i): lane 0 of each
    # warp stores its row's value (4 requests), a barrier, threads 0-3 load them (1 request);
    # the second and third conversions first wait for the previous one's loads (a barrier):
    # 1, 2 and 2 barriers, 5 in all, as Triton's PTX has (test_vs_compiler).
    x = rng.standard_normal((2, 4, 64)).astype(np.float32)
    sm, mx, am = np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(8, np.int32)
    s = K.tile_reduce[(2,)](x, sm, mx, am, R=4, C=64, num_warps=4)
    ref = x.reshape(8, 64)
    np.testing.assert_allclose(sm, ref.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(mx, ref.max(1))
    np.testing.assert_array_equal(am, ref.argmax(1))
    for text, shuffles, bars in (("tl.sum(x, axis=1)", 20, 1), ("tl.max(x, axis=1)", 20, 2),
                                 ("tl.argmax(x, axis=1)", 40, 2)):
        c = line(s, text)
        assert (c.shuffles, c.shared_requests, c.barriers) == (2 * shuffles, 2 * 5, 2 * bars), text


def test_column_reductions_of_a_4x64_tile_span_the_warps():
    # the same tile along axis 0: a column's 4 rows sit in the 4 warps (one element of it
    # per warp, in lane c // 2's register c % 2): no shuffle inside a warp; lane-axis 0 is
    # every lane, so every thread stores its 2 partials (2 requests per warp, 8), a barrier,
    # every thread loads the 4 partials of its 2 columns (lane l loads partial l % 4: 2
    # requests per warp, 8) and folds them by 2 butterfly steps per register (2 x 2 x 4 = 16).
    # The store converts the (64,) result to the blocked layout: warp 0's lanes hold columns
    # 2l, 2l + 1 (2 requests), a barrier before (the partials' loads) and one after, threads
    # 0-63 load one each (2 requests): 20 shared requests, 3 barriers on the line.
    x = rng.standard_normal((4, 64)).astype(np.float32)

    @triton.jit
    def col_sum(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
        r = tl.arange(0, R)
        c = tl.arange(0, C)
        v = tl.load(x_ptr + r[:, None] * C + c[None, :])
        tl.store(out_ptr + c, tl.sum(v, axis=0))

    out = np.zeros(64, np.float32)
    s = col_sum[(1,)](x, out, R=4, C=64, num_warps=4)
    np.testing.assert_allclose(out, x.sum(0), rtol=1e-5, atol=1e-6)
    c = line(s, "tl.sum(v, axis=0)")
    assert (c.shuffles, c.shared_requests, c.barriers) == (16, 20, 3)


def test_argmax_ties_go_to_the_first():
    x = np.zeros((2, 4, 64), np.float32)
    x[:, :, [5, 40, 63]] = 3.0
    sm, mx, am = np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(8, np.int32)
    K.tile_reduce[(2,)](x, sm, mx, am, R=4, C=64, num_warps=4)
    np.testing.assert_array_equal(am, 5)


@pytest.mark.parametrize("device,mma", [(A100, 2 * 4 * 1), (H100, 2 * 4 * 1), (V100, 4 * 4 * 4)])
def test_one_dot_tile(device, mma):
    # 32x16 @ 16x32 float16 on 4 warps. FLOPs 2*32*32*16. MMA: m16n8k16 (A100; H100 counted
    # per warp the same) -> (32/16)(32/8)(16/16) = 8; V100's m8n8k4 -> 4*4*4 = 64.
    # Operands through shared memory: each tile is 512 halves = 64 chunks of 16 bytes, one
    # 16-byte store per thread of warps 0-1: 2 requests x 4 wavefronts per tile. Warps tile
    # the output 2 x 2 (Triton's warpsPerTile for 32x32): each warp reads its 16 rows of A
    # (16 rows x 2 chunks = 32 16-byte rows: 1 request, 4 wavefronts) and its 16 columns
    # of B (16 k-rows x 2 chunks: 1 request, 4 wavefronts): 4 + 4 requests, 32 wavefronts.
    # The swizzled tiles are conflict-free: 12 requests, 48 wavefronts, 1 barrier (between
    # the stores and the reads; the next write of the tiles would wait for another).
    a = rng.standard_normal((32, 16)).astype(np.float16)
    b = rng.standard_normal((16, 32)).astype(np.float16)
    c = np.zeros((32, 32), np.float32)
    s = K.one_dot[(1,)](a, b, c, M=32, N=32, K=16, num_warps=4, device=device)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-5)
    (d,) = s.dots.values()
    assert (d.flops, d.mma, d.calls) == (2 * 32 * 32 * 16, mma, 1)
    assert d.instruction.startswith(tl.MMA_SHAPES[device.compute_capability][0][:8])
    cd = line(s, "tl.dot(a, b)")
    assert (cd.shared_requests, cd.shared_wavefronts, cd.shared_bank_conflicts, cd.barriers) == (12, 48, 0, 1)
    # warp instructions: 12 shared + 1 barrier x 4 warps + the MMAs
    assert cd.warp_instructions == 12 + 4 + mma


def test_matmul_dot_counts_scale_with_tiles():
    # the tutorial-style matmul, 64x64x64 in 32x32x16 tiles: 4 programs x 4 k-steps, each a
    # 32x32x16 dot: FLOPs 2*64^3 in all, 8 MMAs per dot.
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float16)
    s = K.matmul[(4,)](a, b, c, 64, 64, 64, 64, 1, 64, 1, 64, 1, device=A100)
    (d,) = s.dots.values()
    assert (d.flops, d.mma, d.calls) == (2 * 64 ** 3, 16 * 8, 16)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32), rtol=2e-2,
                               atol=2e-2)
