"""Every figure the source lectures quote, reproduced by the simulator and the models."""

import numpy as np
import pytest

import kernels as k
from simtdocs import (
    H100, RTX4090, amdahl, cdiv, gustafson, latency_hiding, launch, launch_overhead, occupancy, waves,
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


@pytest.mark.parametrize("swapped, sectors, efficiency", [(False, 2750, 0.95), (True, 7455, 0.35)])
def test_bias_add_mapping(swapped, sectors, efficiency):
    M, N = 100, 70
    X = np.arange(M * N, dtype=np.float32)
    bias = np.arange(M, dtype=np.float32)
    grid = (cdiv(M, 16), cdiv(N, 16)) if swapped else (cdiv(N, 16), cdiv(M, 16))
    s = launch(k.bias_add, grid=grid, block=(16, 16), args=(X, bias, M, N, swapped))
    np.testing.assert_array_equal(X, (np.arange(M * N) + np.repeat(np.arange(M), N)).astype(np.float32))
    assert s.sectors == sectors
    assert round(s.coalescing_efficiency, 2) == efficiency


@pytest.mark.parametrize("grid, block", [(4, 128), (16, 256), (391, 256)])
def test_grid_stride_loop_does_the_same_work_on_any_grid(grid, block):
    n = 100_000
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    y = np.zeros_like(x)
    s = launch(k.scale_grid_stride, grid=grid, block=block, args=(x, y, np.float32(3), n))
    np.testing.assert_array_equal(y, 3 * x)
    loads = [line.counters.requests for line in s.lines if "load" in line.site.source]
    assert loads == [3125]


def test_stride_3_and_stride_32():
    a = np.zeros(32 * 32, np.float32)
    s3 = launch(k.strided_read, grid=1, block=32, args=(a, 3))
    assert (s3.sectors, round(s3.coalescing_efficiency, 2)) == (12, 0.33)
    s32 = launch(k.strided_read, grid=1, block=32, args=(a, 32))
    assert (s32.sectors, s32.bytes_moved, s32.requested_bytes) == (32, 1024, 128)


def test_wide_loads_stay_fully_coalesced():
    f64 = launch(k.strided_read, grid=1, block=32, args=(np.zeros(64, np.float64), 1))
    vec = launch(k.strided_read, grid=1, block=32, args=(np.zeros(128, np.float32), 1, 0, 4))
    assert (f64.sectors, f64.coalescing_efficiency) == (8, 1.0)
    assert (vec.sectors, vec.requested_bytes, vec.coalescing_efficiency) == (16, 512, 1.0)


def _transpose(kernel, *extra, N=512):
    A = np.arange(N * N, dtype=np.float32).reshape(N, N)
    B = np.zeros_like(A)
    s = launch(kernel, grid=(N // k.TILE, N // k.TILE), block=(k.TILE, k.ROWS), args=(A, B, N) + extra)
    return s, A, B


def test_transpose_naive_moves_4_5_times_the_sectors_of_a_copy():
    copy, A, B = _transpose(k.transpose_copy)
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
    assert unpadded.sectors == padded.sectors == _transpose(k.transpose_copy)[0].sectors


def test_transpose_without_sync_is_right_here_and_reports_1024_races():
    s, A, B = _transpose(k.transpose_tiled, 1, False)
    np.testing.assert_array_equal(B, A.T)
    assert len(s.races) == 1024  # 256 blocks × 4 column reads
    assert {r.kind for r in s.races} == {"read-after-write"}


def test_transpose_with_a_sync_per_row_is_race_free_but_syncs_4_times():
    s, A, B = _transpose(k.transpose_tiled, 1, True, True)
    np.testing.assert_array_equal(B, A.T)
    assert s.races == []
    assert s.barriers == 4 * 256


@pytest.mark.parametrize("row_words, ways", [(64, 32), (65, 1), (66, 2), (32, 32), (33, 1), (2, 2), (4, 4),
                                             (8, 8), (16, 16), (1, 1), (3, 1), (5, 1), (7, 1)])
def test_bank_conflicts_of_a_column_read(row_words, ways):
    s = launch(k.column_read, grid=1, block=32, args=(row_words,))
    assert [line.counters.shared_wavefronts for line in s.lines] == [ways, ways]


def test_reverse_without_sync_reports_the_race():
    d = np.arange(256, dtype=np.float32)
    s = launch(k.reverse, grid=1, block=256, args=(d, False))
    np.testing.assert_array_equal(d, np.arange(256)[::-1])  # lock step hides the bug here
    assert len(s.races) == 1
    race = s.races[0]
    assert race.other_site.source == "blk.store(s, t, blk.load(d, t))"  # racecheck names both lines
    assert race.message == (f"warp 0 reads shared s[255], written in this phase by warp 7 at line "
                            f"{race.other_site.lineno}, with no sync between")
    d = np.arange(256, dtype=np.float32)
    assert launch(k.reverse, grid=1, block=256, args=(d, True)).races == []


def test_reductions():
    n, T = 1 << 18, 256
    g = np.random.default_rng(0).random(n, dtype=np.float32)
    results = {}
    for kernel, blocks in [(k.reduce_interleaved, n // T), (k.reduce_strided_index, n // T),
                           (k.reduce_sequential, n // T), (k.reduce_warp_shuffle, n // (2 * T))]:
        out = np.zeros(blocks, np.float32)
        results[kernel.__name__] = s = launch(kernel, grid=blocks, block=T, args=(g, out))
        assert out.sum() == pytest.approx(g.sum(dtype=np.float64), rel=1e-5)
        assert s.races == []
    v1, v2, v3, v5 = results.values()
    assert v2.warp_instructions == v3.warp_instructions
    assert round(v2.shared_ways, 2) == 3.33
    assert round(v3.shared_ways, 2) == 1.00
    assert v1.divergent_branches > 5 * v2.divergent_branches
    assert v5.warp_instructions < v3.warp_instructions


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
