"""Tables of P2 code 01, the CUDA programming model (docs/p2/programming-model.md, docs/p2/index.md).

Each helper takes what the page's experiment computed and returns the :class:`Table` the page
shows; the numbers the prose quotes are glued by the companion script
(snippets/p2/01_cuda_programming_model.py), next to the launch.
"""

from __future__ import annotations

from simtdocs import cdiv, counters
from simtdocs.analytic.latency import MEMORY_LATENCY_S
from simtdocs.display import Table
from simtdocs.i18n import _, _n


# --8<-- [start:device_table]
def device_table(d):
    """A device preset as a table: its specifications and the simulator's assumptions."""
    spec, assumed = _("specification"), _("assumption")
    major, minor = d.compute_capability
    rows = [
        (_("GPU (compute capability)"), f"{d.name} ({major}.{minor})", spec),
        (_("SMs"), d.sm_count, spec),
        (_("FP32 lanes per SM"), d.fp32_lanes_per_sm, spec),
        (_("warp schedulers per SM"), d.schedulers_per_sm, spec),
        (_("resident per SM, at most"),
         _("{warps} warps, {threads:,} threads, {blocks} blocks",
           warps=d.max_warps_per_sm, threads=d.max_threads_per_sm, blocks=d.max_blocks_per_sm), spec),
        (_("registers per SM"), f"{d.registers_per_sm:,} × 32 bit", spec),
        (_("shared memory per SM (max)"), f"{d.shared_per_sm // 1024} KB", spec),
        (_("clock"), f"{d.clock_hz / 1e9:.2f} GHz", spec),
        (_("HBM bandwidth"), f"{d.memory_bandwidth / 1e12:.2f} TB/s", spec),
        ("L2 cache", f"{d.l2_bytes // 2**20} MB", spec),  # the same words in every language
        (_("issued per scheduler per cycle"),
         _n("{n} warp instruction", "{n} warp instructions", n=counters.WARP_INSTRUCTIONS_PER_SCHEDULER_PER_CYCLE),
         assumed),
        (_("per extra bank-conflict wavefront"),
         _n("+{n} issue cycle", "+{n} issue cycles", n=counters.EXTRA_ISSUE_CYCLES_PER_EXTRA_WAVEFRONT), assumed),
        (_("HBM load latency under load (used in §7)"),
         _("{ns:.0f} ns ≈ {cycles:,.0f} cycles", ns=MEMORY_LATENCY_S * 1e9, cycles=MEMORY_LATENCY_S * d.clock_hz),
         assumed),
    ]
    return Table(rows, [_("parameter"), _("value"), _("kind")], align="lll")
# --8<-- [end:device_table]


# --8<-- [start:block_size_table]
def block_size_table(runs):
    """One row per block size, from {threads per block: stats} of the same launch."""
    rows = [(t, st.blocks, st.warps, st.simt_efficiency, st.sectors, st.coalescing_efficiency)
            for t, st in runs.items()]
    return Table(rows, [_("block size"), _("blocks"), _("warps"), _("SIMT efficiency"), _("sectors"),
                        _("coalescing")], fmt=[None, ",", ",", ".1%", ",", ".1%"])
# --8<-- [end:block_size_table]


# --8<-- [start:bias_table]
def bias_table(runs):
    """One row per kernel, from {kernel name: (grid, stats, result correct)}."""
    mapping = {"bias_add": _("x → columns (correct)"), "bias_add_swapped": _("x → rows (swapped)")}
    rows = [(mapping[name], f"{grid[0]}×{grid[1]}", st.sectors, st.coalescing_efficiency,
             _("yes") if ok else _("no")) for name, (grid, st, ok) in runs.items()]
    return Table(rows, [_("mapping"), _("grid"), _("sectors"), _("coalescing"), _("correct")],
                 fmt=[None, None, ",", ".1%", None])
# --8<-- [end:bias_table]


# --8<-- [start:grid_stride_table]
def grid_stride_table(n, runs):
    """One row per grid, from {(blocks, threads): (stats, result correct)} of a loop over n elements."""
    rows = [(f"{blocks} × {threads}", blocks * threads, cdiv(n, blocks * threads),
             _("yes") if ok else _("no"), st.requests) for (blocks, threads), (st, ok) in runs.items()]
    return Table(rows, [_("blocks × threads"), _("threads"), _("strides per thread"), _("correct"),
                        _("warp-level memory requests")])
# --8<-- [end:grid_stride_table]


# --8<-- [start:divergence_table]
def divergence_table(runs):
    """One row per branch condition, from {pick: stats}."""
    condition = {"odd/even": "`threadIdx.x % 2 == 0`", "warp": "`(threadIdx.x / 32) % 2 == 0`"}
    rows = [(condition[pick], st.divergent_branches, st.warp_instructions, st.simt_efficiency)
            for pick, st in runs.items()]
    return Table(rows, [_("condition"), _("divergent branches"), _("warp instructions"), _("SIMT efficiency")],
                 fmt=[None, ",", ",", ".1%"])
# --8<-- [end:divergence_table]
