"""The layouts and vector widths of this front end against Triton's own compiler: the
tutorial-style kernels compiled for sm_90 (no GPU needed; triton_compile_layouts.py, in a
process of its own, since Triton's interpreter patches triton.language in this one), the
first load's ``#blocked`` ``sizePerThread`` along the contiguous axis and the bytes each
thread moves per instruction (``ld.global.vN`` or ``cp.async``), against what the engine
saw (``trace=``). Arguments divisible by 16 are marked so, as Triton's JIT specialises them."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import triton_oracle as O
import triton_style_kernels as K

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def compiled():
    if O.load_triton()[0] is None:
        pytest.skip("triton is not installed")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    out = subprocess.run([sys.executable, os.path.join(HERE, "triton_compile_layouts.py")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return {k: tuple(v) for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def ours(stats, line_text):
    """(elements per thread, bytes per instruction) of one load, from warp 0's trace: its
    instructions' width, and lane 0's first run of contiguous elements."""
    recs = [r for r in stats.trace if r.space == "global" and line_text in r.site.source]
    w, size = recs[0].width, recs[0].itemsize
    addr = [r.addresses[0] for r in recs]
    run = w
    for a, b in zip(addr, addr[1:]):
        if b != a + w * size:
            break
        run += w
    return run, w * size


@pytest.mark.parametrize("block,n,key", [(256, 4096, "vec_add_256_div"), (256, 4100, "vec_add_256_plain"),
                                         (1024, 8192, "vec_add_1024_div"), (1024, 8200, "vec_add_1024_plain")])
def test_vector_add(compiled, block, n, key):
    a = np.ones(n, np.float32)
    s = K.vec_add[(n // block,)](a, a, a.copy(), n, BLOCK=block, num_warps=4, trace=(0, 0))
    assert ours(s, "a = tl.load") == compiled[key]


@pytest.mark.parametrize("cols,key", [(781, "softmax_781"), (1024, "softmax_1024")])
def test_softmax_rows(compiled, cols, key):
    # 781 columns: row starts are not 16-byte aligned (Triton cannot prove it): scalar loads
    x = np.ones((16, cols), np.float32)
    s = K.row_softmax[(4,)](np.zeros_like(x), x, cols, cols, 16, cols, BLOCK=1024, num_warps=8, trace=(0, 0))
    assert ours(s, "x = tl.load(row_ptr") == compiled[key]


def test_layer_norm_fp16_rows(compiled):
    N = 2048
    x = np.ones((2, N), np.float16)
    w = np.ones(N, np.float16)
    s = K.layer_norm_fwd[(2,)](x, np.zeros_like(x), w, w, np.zeros(2, np.float32), np.zeros(2, np.float32), N, N,
                               1e-5, BLOCK=2048, num_warps=8, trace=(0, 0))
    assert ours(s, "acc += tl.load(X + cols") == compiled["layer_norm_2048"]


def test_matmul_a_tile(compiled):
    a = np.ones((64, 64), np.float16)
    s = K.matmul[(4,)](a, a, np.zeros_like(a), 64, 64, 64, 64, 1, 64, 1, 64, 1, trace=(0, 0))
    assert ours(s, "a = tl.load(a_ptrs") == compiled["matmul_32"]


def test_reduction_shuffles_per_warp(compiled):
    # Triton's PTX has no loop here, so every warp runs each of its shfl.sync.bfly once:
    # our shuffles per warp must be the PTX's count
    x = np.ones(128, np.float32)
    s = K.block_sum[(1,)](x, np.zeros(1, np.float32), 128, BLOCK=128, num_warps=4)
    shfl, bars = compiled["block_sum_128"]
    assert s.totals.shuffles == 4 * shfl
    assert s.totals.barriers == bars
    x = np.ones((2, 4, 64), np.float32)
    s = K.tile_reduce[(2,)](x, np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(8, np.int32), R=4, C=64,
                           num_warps=4)
    shfl, bars = compiled["tile_reduce_4x64"]
    assert s.totals.shuffles == 2 * 4 * shfl  # 2 programs x 4 warps
    assert s.totals.barriers == 2 * bars  # the three results' layout conversions


def test_mma_instructions_per_warp(compiled):
    # the 32x32x16 tile on sm_80: Triton's k-loop body has 2 mma.sync.m16n8k16 per warp;
    # ours: (32/16)(32/8)(16/16) = 8 per dot over 4 warps
    from simtdocs.devices import A100
    a = np.ones((32, 16), np.float16)
    b = np.ones((16, 32), np.float16)
    s = K.one_dot[(1,)](a, b, np.zeros((32, 32), np.float32), M=32, N=32, K=16, num_warps=4, device=A100)
    (d,) = s.dots.values()
    per_warp, _ = compiled["matmul_32_sm80_mma"]
    assert d.mma == 4 * per_warp


def test_matmul_a_tile_rows_not_aligned(compiled):
    # K = 40: A's row stride is not divisible by 16, so Triton proves nothing about where a
    # row starts (the new axis of offs_am[:, None] has divisibility 1: AxisInfo's ExpandDims
    # rule) and each thread holds one element: what the engine saw must say the same
    a = np.ones((64, 40), np.float16)
    b = np.ones((40, 64), np.float16)
    s = K.matmul[(4,)](a, b, np.zeros((64, 64), np.float16), 64, 64, 40, 40, 1, 64, 1, 64, 1, trace=(0, 0))
    assert ours(s, "a = tl.load(a_ptrs") == compiled["matmul_32_k_plain"]


@pytest.mark.parametrize("M,key", [(32, "scaled_tile_T_div"), (30, "scaled_tile_T_plain")])
def test_transposed_view_tile(compiled, M, key):
    # x = base.T: unit stride down the columns. Triton's coalescing pass orders the load's
    # layout by contiguity (order = [0, 1]): each thread's vector and the lanes run down a
    # column, 16 bytes when the column stride (M) is divisible by 16, else one element
    base = np.ones((32, M), np.float32)
    x = base.T
    y = np.zeros((M, 32), np.float32)
    s = K.scaled_tile[(1, 1)](x, y, M, 32, 1, M, 32, 1, 2.0, BM=32, BN=32, trace=(0, 0))
    assert ours(s, "x = tl.load(x_ptr") == compiled[key]
