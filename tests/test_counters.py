"""Counters: derived ratios, the headline table and the time model."""

import numpy as np
import pytest

import kernels as k
from simtdocs import H100, LABELS, Counters, cdiv, launch
from simtdocs.counters import EXTRA_ISSUE_CYCLES_PER_EXTRA_WAVEFRONT, WARP_INSTRUCTIONS_PER_SCHEDULER_PER_CYCLE


def test_ratios_of_empty_counters_are_defined():
    c = Counters()
    assert (c.simt_efficiency, c.coalescing_efficiency, c.shared_ways, c.branch_efficiency) == (1.0, 1.0, 0.0, 1.0)


def test_counters_table_has_every_label():
    n = 1000
    a = np.zeros(n, np.float32)
    s = launch(k.vector_add, grid=cdiv(n, 256), block=256, args=(a, a, a.copy(), n))
    table = s.counters()
    assert list(table) == list(LABELS)
    assert (table["blocks"], table["warps"], table["races"]) == (4, 32, 0)
    assert all(label.pick("zh") != label.pick("en") for label in LABELS.values())  # every name translated
    assert "coalescing" in repr(s)


def test_time_estimate_follows_its_two_formulas():
    N = 512
    A = np.zeros((N, N), np.float32)
    s = launch(k.transpose_tiled, grid=(16, 16), block=(32, 8), args=(A, A.copy(), N, 0))
    t = s.estimate_time()
    assert t.dram_s == s.sectors * 32 / H100.memory_bandwidth
    cycles = s.warp_instructions + EXTRA_ISSUE_CYCLES_PER_EXTRA_WAVEFRONT * (s.shared_wavefronts - s.shared_requests)
    rate = H100.sm_count * 4 * WARP_INSTRUCTIONS_PER_SCHEDULER_PER_CYCLE * H100.clock_hz
    assert t.issue_s == pytest.approx(cycles / rate)
    assert t.seconds == max(t.dram_s, t.issue_s)
    assert t.bound == "memory"
