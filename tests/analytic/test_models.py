"""The analytic models: occupancy steps, Little's law, waves, speed-up laws."""

import dataclasses

import pytest

from simtdocs import A100, H100, RTX4090, amdahl, decode_step, gustafson, latency_hiding, occupancy, waves


@pytest.mark.parametrize("threads, regs, smem, blocks, limiters", [
    (256, 32, 0, 8, ["warps", "registers"]),  # 1,024 registers a warp: 16 warps per sub-partition
    (1024, 64, 0, 1, ["registers"]),  # 2,048 a warp → 32 warps → one 32-warp block
    (128, 255, 0, 2, ["registers"]),  # 255 × 32 rounds up to 8,192: 2 warps per sub-partition
    (32, 16, 0, 32, ["blocks"]),  # tiny blocks hit the 32-blocks-per-SM limit
    (256, 32, 100 * 1024, 2, ["shared memory"]),  # (100 KB + 1 KB) fits twice in 228 KB
    (1024, 255, 0, 0, ["registers"]),  # 8,192 × 32 warps > 65,536: cannot launch at all
])
def test_occupancy_steps_on_h100(threads, regs, smem, blocks, limiters):
    occ = occupancy(threads, regs, smem, H100)
    assert occ.blocks_per_sm == blocks
    assert occ.limiters == limiters
    assert occ.warps_per_sm == blocks * -(-threads // 32)
    assert occ.occupancy == occ.warps_per_sm / 64


def test_shared_allocation_rounds_up_after_the_reservation():
    occ = occupancy(128, 32, 32 * 1024 + 1, H100)
    assert occ.shared_per_block_allocated == 32 * 1024 + 1024 + 128


def test_occupancy_rejects_impossible_blocks():
    with pytest.raises(ValueError, match="threads_per_block = 2048"):
        occupancy(2048, 32, 0, H100)
    with pytest.raises(ValueError, match="registers_per_thread = 300"):
        occupancy(128, 300, 0, H100)
    with pytest.raises(ValueError, match="at most"):
        occupancy(128, 32, 200 * 1024, RTX4090)


def test_presets():
    assert (H100.compute_capability, H100.sm_count, H100.max_warps_per_sm) == ((9, 0), 132, 64)
    assert (RTX4090.compute_capability, RTX4090.max_warps_per_sm, RTX4090.registers_per_sm) == ((8, 9), 48, 65536)
    assert (A100.compute_capability, A100.fp32_lanes) == ((8, 0), 6912)
    assert H100.bandwidth_per_sm * 500e-9 == pytest.approx(12_689, rel=1e-3)
    custom = dataclasses.replace(H100, name="H100 PCIe", sm_count=114, memory_bandwidth=2.0e12)
    assert custom.fp32_lanes == 114 * 128


def test_latency_hiding_counts_bytes_in_flight():
    r = latency_hiding(32, 4, 512, device=H100, latency_s=1e-6)
    assert r.in_flight_bytes == 32 * 4 * 512
    assert r.needed_bytes == pytest.approx(3.35e12 / 132 * 1e-6)
    assert latency_hiding(0).fraction == 0


@pytest.mark.parametrize("blocks, per_sm, n_waves, last", [(132, 1, 1, 132), (133, 1, 2, 1), (264, 2, 1, 264), (1000, 4, 2, 472)])
def test_waves(blocks, per_sm, n_waves, last):
    w = waves(blocks, per_sm, H100)
    assert (w.waves, w.last_wave_blocks) == (n_waves, last)
    assert w.utilisation == blocks / (n_waves * 132 * per_sm)


def test_speedup_laws_and_decode_step():
    assert amdahl(0.5, 1e9) == pytest.approx(2, rel=1e-6)
    assert gustafson(0.0, 100) == 100
    with pytest.raises(ValueError):
        amdahl(1.5, 4)
    step = decode_step(layers=16, kernels_per_layer=12, extra_kernels=3, gpu_s=0.75e-3, overhead_s=8e-6)
    assert step.kernels == 195
    assert step.serial_s == pytest.approx(0.75e-3 + 195 * 8e-6)
    assert step.overlapped_s == pytest.approx(195 * 8e-6)
    assert step.overhead_share == pytest.approx(195 * 8e-6 / step.serial_s)


def test_occupancy_takes_the_launch_view_of_static_shared_memory():
    # 100,000 bytes per block is fine as opted-in dynamic memory: 2 blocks of 256 fit on an H100 SM...
    assert occupancy(256, 32, 100_000).blocks_per_sm == 2
    # ...but not as a static array, which nvcc caps at 48 KB.
    with pytest.raises(ValueError, match="static __shared__ memory is at most 49,152"):
        occupancy(256, 32, 100_000, static_shared_bytes=60_000)
