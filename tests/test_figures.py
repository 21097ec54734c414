"""Every figure the source lectures quote, reproduced by the simulator and the models.

The kernels are the lectures' own (``kernels`` takes them from the companion scripts by section),
except the one ``kernels`` marks as test-only.
"""

import math

import numpy as np
import pytest

import kernels as k
from simtdocs import (
    H100, RTX4090, amdahl, cdiv, gustafson, latency_hiding, launch, launch_overhead, occupancy, reference, waves,
)


def test_vector_add_block_size_100_wastes_lanes_and_sectors():
    n = 10_000
    a, b = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    c = np.zeros(n, np.float32)
    s = launch(k.vector_add, grid=cdiv(n, 100), block=100, args=(a, b, c, n))
    np.testing.assert_array_equal(c, a + b)
    assert round(s.simt_efficiency, 2) == 0.78  # 100 threads = 3 full warps + one of 4
    assert round(s.coalescing_efficiency, 2) == 0.86  # odd blocks start mid-sector
    assert s.sectors == 50 * (13 + 16) * 3  # per access: 13 sectors for even blocks, 16 for odd


@pytest.mark.parametrize("block", [128, 256, 512, 1024])
def test_vector_add_multiple_of_32_is_efficient(block):
    n = 10_000
    a, b = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    c = np.zeros(n, np.float32)
    s = launch(k.vector_add, grid=cdiv(n, block), block=block, args=(a, b, c, n))
    np.testing.assert_array_equal(c, a + b)
    assert s.simt_efficiency >= 0.97
    assert s.coalescing_efficiency == 1.0


@pytest.mark.parametrize("kernel, sectors, efficiency", [("bias_add", 2750, 0.95), ("bias_add_swapped", 7455, 0.35)])
def test_bias_add_mapping(kernel, sectors, efficiency):
    M, N = 100, 70
    X = np.arange(M * N, dtype=np.float32)
    bias = np.arange(M, dtype=np.float32)
    grid = (cdiv(M, 16), cdiv(N, 16)) if kernel == "bias_add_swapped" else (cdiv(N, 16), cdiv(M, 16))
    s = launch(getattr(k, kernel), grid=grid, block=(16, 16), args=(X, bias, M, N))
    np.testing.assert_array_equal(X, (np.arange(M * N) + np.repeat(np.arange(M), N)).astype(np.float32))
    assert s.sectors == sectors
    assert round(s.coalescing_efficiency, 2) == efficiency


@pytest.mark.parametrize("grid, block", [(4, 128), (16, 256), (391, 256)])
def test_grid_stride_loop_does_the_same_work_on_any_grid(grid, block):
    n = 100_000
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    y = np.zeros_like(x)
    s = launch(k.scale, grid=grid, block=block, args=(x, y, np.float32(3), n))
    np.testing.assert_array_equal(y, 3 * x)
    loads = [line.counters.requests for line in s.lines if "load" in line.site.source]
    assert loads == [2 * 3125]  # the line loads x and stores y: a request each per 32 elements


LANE = np.arange(32)


def test_stride_3_and_stride_32():
    a = np.zeros(32 * 32, np.float32)
    s3 = launch(k.pattern_kernel, grid=1, block=32, args=(a, 3 * LANE))
    assert (s3.sectors, round(s3.coalescing_efficiency, 2)) == (12, 0.33)
    s32 = launch(k.pattern_kernel, grid=1, block=32, args=(a, 32 * LANE))
    assert (s32.sectors, s32.bytes_moved, s32.requested_bytes) == (32, 1024, 128)


def test_wide_loads_stay_fully_coalesced():
    f64 = launch(k.pattern_kernel, grid=1, block=32, args=(np.zeros(64, np.float64), LANE))
    vec = launch(k.pattern_kernel, grid=1, block=32, args=(np.zeros(128, np.float32), 4 * LANE, 4))
    assert (f64.sectors, f64.coalescing_efficiency) == (8, 1.0)
    assert (vec.sectors, vec.requested_bytes, vec.coalescing_efficiency) == (16, 512, 1.0)


def _transpose(kernel, *extra, N=512):
    A = np.arange(N * N, dtype=np.float32).reshape(N, N)
    B = np.zeros_like(A)
    s = launch(kernel, grid=(N // k.TILE, N // k.TILE), block=(k.TILE, k.ROWS), args=(A, B, N) + extra)
    return s, A, B


def test_transpose_naive_moves_4_5_times_the_sectors_of_a_copy():
    copy, A, B = _transpose(k.copy)
    np.testing.assert_array_equal(B, A)
    naive, A, B = _transpose(k.transpose_naive)
    np.testing.assert_array_equal(B, A.T)
    assert naive.sectors / copy.sectors == 4.5
    assert naive.estimate_time().dram_s / copy.estimate_time().dram_s == pytest.approx(4.5)


def _column_read_ways(stats):
    return max(line.counters.shared_ways for line in stats.lines)


def test_transpose_tile_padding_removes_the_32_way_conflict():
    unpadded, A, B = _transpose(k.transpose_tiled, 0)
    np.testing.assert_array_equal(B, A.T)
    padded, A, B = _transpose(k.transpose_tiled, 1)
    np.testing.assert_array_equal(B, A.T)
    assert _column_read_ways(unpadded) == 32
    assert _column_read_ways(padded) == 1
    assert unpadded.sectors == padded.sectors == _transpose(k.copy)[0].sectors


def test_transpose_without_sync_is_right_here_and_reports_1024_races():
    s, A, B = _transpose(k.transpose_tiled, 1, False)
    np.testing.assert_array_equal(B, A.T)
    assert len(s.races) == 1024  # 256 blocks × 4 column reads
    assert {r.kind for r in s.races} == {"read-after-write"}


def test_transpose_with_a_sync_per_row_is_race_free_but_syncs_4_times():
    s, A, B = _transpose(k.transpose_tiled_sync_every_row, 1)
    np.testing.assert_array_equal(B, A.T)
    assert s.races == []
    assert s.barriers == 4 * 256


@pytest.mark.parametrize("row_words, ways", [(64, 32), (65, 1), (66, 2), (32, 32), (33, 1), (2, 2), (4, 4),
                                             (8, 8), (16, 16), (1, 1), (3, 1), (5, 1), (7, 1)])
def test_bank_conflicts_of_a_column_read(row_words, ways):
    # Lane l reads tile[l][0], word l·row_words, in bank l·row_words mod 32; lanes l and l' meet in a
    # bank when (l − l')·row_words ≡ 0 (mod 32), so gcd(row_words, 32) lanes share each bank used.
    assert ways == math.gcd(row_words, 32)
    for engine in (launch, reference.launch):
        s = engine(k.bank_kernel, grid=1, block=32, args=(row_words,))
        shared = [(line.counters.shared_requests, line.counters.shared_wavefronts)
                  for line in s.lines if line.counters.shared_requests]
        # (requests, wavefronts) of the fill, then of the column read. The fill is 32 stores, one per
        # row r: lanes tx < row_words (all 32 for a longer row) write words r·row_words + tx, at most
        # 32 consecutive words in 32 different banks, so 1 wavefront each. The read: `ways` wavefronts.
        assert shared == [(32, 32), (1, ways)], engine.__module__


def test_reverse_without_sync_reports_the_race():
    d = np.arange(256, dtype=np.float32)
    s = launch(k.reverse, grid=1, block=256, args=(d, False))
    np.testing.assert_array_equal(d, np.arange(256)[::-1])  # lock step hides the bug here
    assert len(s.races) == 1
    race = s.races[0]
    assert race.other_site.source == "blk.store(buf, t, blk.load(d, t))"  # racecheck names both lines
    assert race.message == (f"warp 0 reads shared buf[255], written in this phase by warp 7 at line "
                            f"{race.other_site.lineno}, with no sync between")
    d = np.arange(256, dtype=np.float32)
    assert launch(k.reverse, grid=1, block=256, args=(d, True)).races == []


def test_reductions():
    n, T = 1 << 18, 256
    g = np.random.default_rng(0).random(n, dtype=np.float32)
    results = {}
    for kernel, blocks in [(k.reduce_v1, n // T), (k.reduce_v2, n // T), (k.reduce_v3, n // T),
                           (k.reduce_v4, n // (2 * T)), (k.reduce_v5, n // (2 * T))]:
        out = np.zeros(blocks, np.float32)
        results[kernel.__name__] = s = launch(kernel, grid=blocks, block=T, args=(g, out))
        assert out.sum() == pytest.approx(g.sum(dtype=np.float64), rel=1e-5)
        assert s.races == []
    v2, v3 = results["reduce_v2"], results["reduce_v3"]
    # Warp instructions per block of 256 threads (8 warps), counted by hand: each blk call issues once
    # per warp with an active lane; W = warps with a lane that works in a step.
    #   v1-v3: load x, store sdata, sync = 3 × 8; 8 steps of alu, branch, sync (3 × 8) and two loads,
    #   alu, store under the branch (4 × W); the last load and store by thread 0: 2.
    #   v1 (tid % 2s == 0): W = 8 for s = 1..16, then 4, 2, 1: 24 + 8·24 + 4·47 + 2 = 406.
    #   v2 (2s·tid < 256) and v3 (tid < s): W = 4, 2, 1, 1, 1, 1, 1, 1 = 12: 24 + 192 + 48 + 2 = 266.
    #   v4: two loads, alu, store, sync = 5 × 8, the loop of v3 and the end: 40 + 240 + 2 = 282.
    #   v5: 40; 2 steps (s = 128, 64, W = 4, 2): 2·24 + 4·6 = 72; the warp-0 branch 8, two loads and
    #   an alu by warp 0: 3, 5 × (shuffle, alu): 10, the store by thread 0: 1. 40 + 72 + 22 = 134.
    assert [r.warp_instructions for r in results.values()] == [406 * 1024, 266 * 1024, 266 * 1024,
                                                              282 * 512, 134 * 512]
    # Divergent: a warp in which some active lanes take the branch and some do not.
    #   v1: every warp for s = 1..16 (lane 0 works, lane 1 not), then 4, 2, 1 warps: 47 per block.
    #   v2, v3, v4: only the steps with fewer than 32 workers (16, 8, 4, 2, 1), in warp 0: 5 per block.
    #   v5: 128, 64 and 32 workers fill whole warps: none.
    assert [r.divergent_branches for r in results.values()] == [47 * 1024, 5 * 1024, 5 * 1024, 5 * 512, 0]
    # v2's shared wavefronts per block: the store of sdata 8; per step 3 accesses per working warp at a
    # stride of 2s words, with ways = lanes per bank: s = 1: 4 warps × 2-way, s = 2: 2 × 4, s = 4: 1 × 8,
    # then 16, 8, 4, 2, 1 working lanes at strides 16..256 words: 8, 8, 4, 2, 1 ways; the end 1.
    # 8 + 3·(8 + 8 + 8 + 8 + 8 + 4 + 2 + 1) + 1 = 150 over 8 + 3·12 + 1 = 45 requests of 1 ideal wavefront.
    assert (v2.shared_wavefronts, v2.shared_ideal_wavefronts) == (150 * 1024, 45 * 1024)
    assert round(v2.shared_ways, 2) == 3.33
    assert v3.shared_ways == 1.0


def test_occupancy_h100_register_limited():
    for shared in (32 * 1024, 16 * 1024):
        occ = occupancy(128, 96, shared, H100)
        assert (occ.blocks_per_sm, occ.warps_per_sm, round(occ.occupancy, 2)) == (5, 20, 0.31)
        assert occ.limiters == ["registers"]
    assert occupancy(128, 96, 32 * 1024, H100).limits["shared memory"] == 6


def test_occupancy_rtx4090():
    assert RTX4090.max_warps_per_sm == 48
    occ = occupancy(256, 64, 0, RTX4090)
    assert (occ.warps_per_sm, round(occ.occupancy, 2)) == (32, 0.67)


def test_littles_law_h100():
    assert latency_hiding(64, device=H100).needed_bytes == pytest.approx(12.7e3, rel=0.01)
    assert round(latency_hiding(64, 1, 128).fraction, 2) == 0.65
    assert round(latency_hiding(16, 1, 128).fraction, 2) == 0.16
    assert latency_hiding(16, 2, 512).fraction == 1.0


def test_waves_for_a_small_matmul():
    big = waves(cdiv(1024, 128) ** 2, blocks_per_sm=2, device=H100)
    assert (big.blocks, big.waves, round(big.utilisation, 2)) == (64, 1, 0.24)
    small = waves(cdiv(1024, 64) ** 2, blocks_per_sm=4, device=H100)
    assert (small.blocks, small.waves, round(small.utilisation, 2)) == (256, 1, 0.48)


def test_gustafson_and_amdahl():
    assert H100.fp32_lanes == 16_896
    assert round(gustafson(0.01, H100.fp32_lanes)) == 16_727
    assert amdahl(0.01, H100.fp32_lanes) == pytest.approx(1 / (0.01 + 0.99 / 16_896))
    assert amdahl(0.0, 8) == 8


@pytest.mark.parametrize("overhead_us, serial_ms", [(5, 3.5), (1, 2.3)])
def test_launch_overhead_of_a_decode_step(overhead_us, serial_ms):
    step = launch_overhead(300, 2e-3, overhead_us * 1e-6)
    assert step.serial_s == pytest.approx(serial_ms * 1e-3)
    assert step.overlapped_s == pytest.approx(2e-3)
