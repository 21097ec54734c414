"""Tables and figure of P2 code 02, global memory and coalescing (docs/p2/memory.md).

Each helper takes what the page's experiment computed and returns the :class:`Table` or
:class:`Figure` the page shows; the numbers the prose quotes are glued by the companion
script (snippets/p2/02_memory_coalescing.py), next to the launch.
"""

from __future__ import annotations

import numpy as np

from simtdocs.display import Figure, Table, figure
from simtdocs.i18n import Listing, _, _n

KB, MB = 1024, 1024 * 1024


# --8<-- [start:memory_spaces_table]
# Unloaded latency in cycles (one dependent load at a time, as pointer-chasing
# microbenchmarks measure it): orders of magnitude, (low, high). Luo et al., arXiv:2402.13499;
# Jarmusch et al., arXiv:2507.10789.
UNLOADED_CYCLES = {"registers": (1, 1), "shared": (30, 30), "L1": (30, 40), "L2": (200, 300), "HBM": (500, 800)}


def unloaded_latency(d, name):
    """'≈ lo–hi' cycles of a memory space, and the same in ns at the clock of device d."""
    lo, hi = UNLOADED_CYCLES[name]
    ns = [c / d.clock_hz * 1e9 for c in (lo, hi)]
    cycles = f"≈ {lo}" if lo == hi else f"≈ {lo}–{hi}"
    return cycles, (f"≈ {ns[0]:.1f}" if lo == hi else f"≈ {ns[0]:.0f}–{ns[1]:.0f}")


def memory_spaces_table(d):
    """The memory spaces of device d: sizes from its preset, latencies cited (see above)."""
    spaces = [
        (_("registers"), _("on the SM"), _("one thread"),
         f"{d.registers_per_sm * 4 // KB} KB / SM", *unloaded_latency(d, "registers"), _("the compiler")),
        (_("shared memory `__shared__`"), _("on the SM"), _("one block"),
         f"≤ {d.shared_per_sm // KB} KB / SM", *unloaded_latency(d, "shared"), _("the programmer")),
        ("L1 cache", _("on the SM (same SRAM as shared)"), _("one SM"),
         _("256 KB / SM (both together)"), *unloaded_latency(d, "L1"), _("the hardware")),
        ("L2 cache", _("on the chip"), _("the whole GPU"),
         f"{d.l2_bytes // MB} MB", *unloaded_latency(d, "L2"), _("the hardware")),
        (_("global memory (HBM)"), _("HBM stacks in the package"), _("every thread (the host via cudaMemcpy)"),
         f"80 GB, {d.memory_bandwidth / 1e12:.2f} TB/s", *unloaded_latency(d, "HBM"),
         _("the programmer (cudaMalloc)")),
    ]
    return Table(spaces, [_("space"), _("where"), _("visible to"), _("size on H100"),
                          _("unloaded latency (cycles, magnitude)"),
                          _("the same in ns (at {ghz:.2f} GHz)", ghz=d.clock_hz / 1e9), _("managed by")],
                 align="llllrrl")
# --8<-- [end:memory_spaces_table]


# --8<-- [start:pattern_table]
def pattern_label(name):
    """The label of an access pattern, from its English name ('stride 3' is translated with its number)."""
    if name.startswith("stride "):
        return _("stride {s}", s=int(name.removeprefix("stride ")))
    return {
        "contiguous": _("contiguous"), "misaligned by 1": _("misaligned by 1"),
        "broadcast (all read one)": _("broadcast (all read one)"), "random": _("random"),
        "float64, contiguous": _("float64, contiguous"),
        "16-byte vector load (float4)": _("16-byte vector load (float4)"),
    }[name]


def pattern_table(runs):
    """One row per access pattern, from {pattern name: stats}."""
    rows = [(pattern_label(name), st.sectors, st.bytes_moved, st.requested_bytes, st.coalescing_efficiency)
            for name, st in runs.items()]
    return Table(rows, [_("pattern"), _("sectors"), _("bytes moved"), _("bytes requested"),
                        _("efficiency (requested / moved)")], fmt=[None, ",", ",", ",", ".1%"])
# --8<-- [end:pattern_table]


# --8<-- [start:sector_figure]
SECTOR_MAP = ("contiguous", "misaligned by 1", "stride 2", "stride 8", "broadcast (all read one)")  # drawn


def sector_figure(patterns, runs, names=SECTOR_MAP, span=1024):
    """The bytes each lane reads and the sectors moved, for the patterns ``names``:
    ``patterns[name]`` is (array, index each lane reads, elements per lane), ``runs[name]`` its stats;
    ``span`` bytes of address are drawn."""
    lane = np.arange(32)

    def byte_ranges(name):
        """First and last byte each lane of a pattern reads."""
        arr, index, width = patterns[name]
        first = index * arr.itemsize
        return first, first + width * arr.itemsize - 1

    def draw():
        fig, axes = figure(len(names), 1, figsize=(7.5, 1.3 * len(names)), sharex=True)
        for ax, name in zip(axes, names):
            (first, last), counted = byte_ranges(name), runs[name].sectors
            touched = np.unique(np.concatenate([np.arange(a // 32, b // 32 + 1) for a, b in zip(first, last)]))
            assert touched.size == counted  # the picture shows what the simulator counted
            for s in touched:
                ax.axvspan(32 * s, 32 * s + 32, color="tab:orange", alpha=0.35, lw=0)
            for b in range(0, span + 1, 32):
                ax.axvline(b, color="grey", lw=0.3)
            ax.hlines(lane, first, last + 1, color="tab:blue", lw=3)
            ax.set_xlim(0, span)
            ax.set_ylim(-2, 33)
            ax.set_yticks([0, 16, 31])
            ax.set_ylabel("lane", fontsize=8)
            title = _n("{name}: {n} sector", "{name}: {n} sectors", name=pattern_label(name), n=counted)
            ax.set_title(str(title), fontsize=9, loc="left")
        axes[-1].set_xlabel(str(_("byte address (grey lines: 32-byte sector boundaries; orange: sectors moved)")))
        fig.tight_layout()
        return fig

    contiguous, stride8, broadcast = runs["contiguous"], runs["stride 8"], runs["broadcast (all read one)"]
    loads = Listing(_("{k} for {name}", k=runs[name].sectors, name=pattern_label(name)) for name in names)
    return Figure(
        draw,
        alt=_("For {patterns} access patterns, the bytes each of a warp's {lanes} lanes reads (addresses 0 to "
              "{span:,}) and the 32-byte sectors moved. Sectors per load: {loads}.",
              patterns=len(names), lanes=lane.size, span=span, loads=loads),
        caption=_n("Lanes go up the side; the short blue bar is the 4 bytes a lane reads; orange marks the sectors "
                   "this warp load moves. Contiguous reads need {contiguous} sectors; with stride 8 every lane has a "
                   "sector of its own and {moved:,} bytes move for {used:,} used; a broadcast serves all 32 lanes "
                   "from {n} sector.",
                   "Lanes go up the side; the short blue bar is the 4 bytes a lane reads; orange marks the sectors "
                   "this warp load moves. Contiguous reads need {contiguous} sectors; with stride 8 every lane has a "
                   "sector of its own and {moved:,} bytes move for {used:,} used; a broadcast serves all 32 lanes "
                   "from {n} sectors.",
                   contiguous=contiguous.sectors, moved=stride8.bytes_moved, used=stride8.requested_bytes,
                   n=broadcast.sectors),
    )
# --8<-- [end:sector_figure]


# --8<-- [start:transpose_table]
def column_read_ways(stats):
    """Wavefronts per request of the column read: the kernel's last line using shared memory
    (for these 4-byte accesses, the conflict ways); None for a kernel without shared memory."""
    lines = [ln.counters for ln in stats.lines if ln.counters.shared_requests]
    return lines[-1].shared_wavefronts / lines[-1].shared_requests if lines else None


def transpose_table(runs):
    """One row per version, from {version name: (stats, result correct)}; times relative to the first (the copy)."""
    version = {
        "copy (reference)": _("copy (reference)"), "naive transpose": _("naive transpose"),
        "tiled 32×32, no padding": _("tiled 32×32, no padding"), "tiled 32×33 (padded)": _("tiled 32×33 (padded)"),
        "tiled 32×33, sync left out": _("tiled 32×33, sync left out"),
    }
    copy_t = next(iter(runs.values()))[0].estimate_time()
    rows = []
    for name, (st, ok) in runs.items():
        ways, t = column_read_ways(st), st.estimate_time()
        rows.append((version[name], st.sectors, t.dram_s / copy_t.dram_s, t.issue_s * 1e9,
                     "–" if ways is None else f"{ways:.0f}", len(st.races), _("yes") if ok else _("no")))
    return Table(rows, [_("version"), _("sectors"), _("estimated HBM time (copy = 1)"),
                        _("estimated issue time (ns)"), _("column read of the tile: conflict ways"),
                        _("races"), _("correct")], fmt=[None, ",", ".2f", ",.0f", None, ",", None])
# --8<-- [end:transpose_table]


# --8<-- [start:harris_table]
def harris_table():
    """Harris's measurements, as he published them (cited, not computed): M. Harris, "An Efficient Matrix
    Transpose in CUDA C/C++", NVIDIA Developer Blog, 2013 (1024×1024 floats, Tesla M2050 and K20c)."""
    harris = [
        ("copy", _("reference (100%)")),
        (_("naive transpose"), _("18%–41% of copy (5.6× the copy's time on the M2050, 2.5× on the K20c)")),
        (_("coalesced (shared memory, 32×32)"), _("49%–72% of copy")),
        (_("coalesced, no bank conflicts (32×33)"), _("about 95% of the fastest copy")),
    ]
    return Table(harris, [_("Harris's version"), _("effective bandwidth (relative to copy)")], align="ll")
# --8<-- [end:harris_table]
