# %% [markdown]
# # P2 · 代码 02：全局内存与合并访存 · Code 02: global memory and coalescing
#
# GPU 的存储空间；一个 warp 的访问模式碰到几个 sector；512×512 矩阵转置的五种写法。
# The memory spaces of a GPU; how many sectors one warp's access pattern touches; five ways
# to transpose a 512×512 matrix. Every counter below is computed by simtdocs.
#
# Run it alone: `python snippets/p2/02_memory_coalescing.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import launch
from simtdocs.docs import show
# --8<-- [end:setup]


# %% [markdown]
# ## 存储空间 · Memory spaces
#
# Sizes are H100 specifications (CUDA C++ Programming Guide 12.9, Compute Capabilities;
# NVIDIA H100 datasheet); where the simulator's device preset holds the number, it is read
# from there. Latencies are orders of magnitude from published microbenchmarks of Hopper
# GPUs (Luo et al., arXiv:2402.13499; Jarmusch et al., arXiv:2507.10789): for orientation only.

# %%
# --8<-- [start:memory_spaces_table]
from simtdocs.analytic.latency import MEMORY_LATENCY_S
from simtdocs.docs import Table, _, glue

KB, MB = 1024, 1024 * 1024
# Unloaded latency in cycles (one dependent load at a time, as pointer-chasing
# microbenchmarks measure it): orders of magnitude, (low, high).
UNLOADED_CYCLES = {"registers": (1, 1), "shared": (30, 30), "L1": (30, 40), "L2": (200, 300), "HBM": (500, 800)}


def memory_spaces_table(d):
    """The memory spaces of device d: sizes from its preset, latencies cited (see above).
    Also glues the HBM latency and the latency under load of §7."""

    def latency(name):
        """'≈ lo–hi' cycles and the same in ns at this GPU's clock."""
        lo, hi = UNLOADED_CYCLES[name]
        ns = [c / d.clock_hz * 1e9 for c in (lo, hi)]
        cycles = f"≈ {lo}" if lo == hi else f"≈ {lo}–{hi}"
        return cycles, (f"≈ {ns[0]:.1f}" if lo == hi else f"≈ {ns[0]:.0f}–{ns[1]:.0f}")

    spaces = [
        (_("registers"), _("on the SM"), _("one thread"),
         f"{d.registers_per_sm * 4 // KB} KB / SM", *latency("registers"), _("the compiler")),
        (_("shared memory `__shared__`"), _("on the SM"), _("one block"),
         f"≤ {d.shared_per_sm // KB} KB / SM", *latency("shared"), _("the programmer")),
        ("L1 cache", _("on the SM (same SRAM as shared)"), _("one SM"),
         _("256 KB / SM (both together)"), *latency("L1"), _("the hardware")),
        ("L2 cache", _("on the chip"), _("the whole GPU"),
         f"{d.l2_bytes // MB} MB", *latency("L2"), _("the hardware")),
        (_("global memory (HBM)"), _("HBM stacks in the package"), _("every thread (the host via cudaMemcpy)"),
         f"80 GB, {d.memory_bandwidth / 1e12:.2f} TB/s", *latency("HBM"), _("the programmer (cudaMalloc)")),
    ]
    glue("p2_hbm_cycles", latency("HBM")[0].removeprefix("≈ "))
    glue("p2_hbm_ns", latency("HBM")[1].removeprefix("≈ "))
    glue("p2_mem_clock_ghz", d.clock_hz / 1e9, ".2f")
    glue("p2_mem_loaded_ns", MEMORY_LATENCY_S * 1e9, ".0f")  # the latency under load of §7
    glue("p2_mem_loaded_cycles", MEMORY_LATENCY_S * d.clock_hz, ",.0f")
    return Table(spaces, [_("space"), _("where"), _("visible to"), _("size on H100"),
                          _("unloaded latency (cycles, magnitude)"),
                          _("the same in ns (at {ghz:.2f} GHz)", ghz=d.clock_hz / 1e9), _("managed by")],
                 align="llllrrl")
# --8<-- [end:memory_spaces_table]


# %%
# --8<-- [start:memory_spaces]
from simtdocs import H100
from simtdocs.docs import show

show(memory_spaces_table(H100))
# --8<-- [end:memory_spaces]


# %% [markdown]
# ## 演示 1：一个 warp 的访问模式 · Demo 1: one warp's access patterns

# %%
# --8<-- [start:pattern_kernel]
def pattern_kernel(blk, a, index, width=1):
    """One warp: lane l reads a[index[l]] (width consecutive elements for a vector load)."""
    blk.load(a, index[blk.tx], width=width)
# --8<-- [end:pattern_kernel]


# %%
# --8<-- [start:patterns_table]
from simtdocs.docs import Table, _, glue

PATTERN = {  # the English name of each pattern, as a label
    "contiguous": _("contiguous"), "misaligned by 1": _("misaligned by 1"),
    "broadcast (all read one)": _("broadcast (all read one)"), "random": _("random"),
    "float64, contiguous": _("float64, contiguous"), "16-byte vector load (float4)": _("16-byte vector load (float4)"),
}


def pattern_label(name):
    """The label of a pattern: 'stride 3' reads "跨度 3" on the Chinese page."""
    if name.startswith("stride "):
        return _("stride {s}", s=int(name.removeprefix("stride ")))
    return PATTERN[name]


def pattern_table(runs):
    """The table of §5.2 from {pattern name: stats}; glues the numbers the prose quotes
    (the odd stride is the one odd 'stride s' among the patterns)."""
    rows = [(pattern_label(name), st.sectors, st.bytes_moved, st.requested_bytes, st.coalescing_efficiency)
            for name, st in runs.items()]
    odd = next(int(name.split()[1]) for name in runs if name.startswith("stride ") and int(name.split()[1]) % 2)
    glue("p2_stride_odd", odd)
    glue("p2_stride3_sectors", runs[f"stride {odd}"].sectors)
    glue("p2_stride3_eff", runs[f"stride {odd}"].coalescing_efficiency, ".0%")
    glue("p2_stride32_requested", runs["stride 32"].requested_bytes)
    glue("p2_stride32_sectors", runs["stride 32"].sectors)
    glue("p2_stride32_moved", runs["stride 32"].bytes_moved)
    glue("p2_stride32_eff", runs["stride 32"].coalescing_efficiency, ".1%")
    glue("p2_misaligned_sectors", runs["misaligned by 1"].sectors)
    glue("p2_broadcast_eff", runs["broadcast (all read one)"].coalescing_efficiency, ".0%")
    return Table(rows, [_("pattern"), _("sectors"), _("bytes moved"), _("bytes requested"),
                        _("efficiency (requested / moved)")], fmt=[None, ",", ",", ",", ".1%"])
# --8<-- [end:patterns_table]


# %%
# --8<-- [start:patterns]
lane = np.arange(32)
f32 = np.zeros(4096, np.float32)
patterns = {  # name: (array, index each lane reads, elements per lane)
    "contiguous": (f32, lane, 1),
    "misaligned by 1": (f32, lane + 1, 1),
    **{f"stride {s}": (f32, s * lane, 1) for s in (2, 3, 4, 8, 32)},
    "broadcast (all read one)": (f32, 0 * lane, 1),
    "random": (f32, np.random.default_rng(7).choice(f32.size, 32, replace=False), 1),
    "float64, contiguous": (np.zeros(4096, np.float64), lane, 1),
    "16-byte vector load (float4)": (f32, 4 * lane, 4),
}
runs = {name: launch(pattern_kernel, grid=1, block=32, args=(arr, index, width))
        for name, (arr, index, width) in patterns.items()}
show(pattern_table(runs))
# --8<-- [end:patterns]


# %%
# --8<-- [start:sector_figure]
from simtdocs.docs import Figure, _, figure
from simtdocs.i18n import Listing, _n

SECTOR_MAP = ("contiguous", "misaligned by 1", "stride 2", "stride 8", "broadcast (all read one)")  # drawn
SPAN = 1024  # bytes of address drawn


def byte_ranges(name):
    """First and last byte each lane of a pattern reads."""
    arr, index, width = patterns[name]
    first = index * arr.itemsize
    return first, first + width * arr.itemsize - 1


def draw_sector_map(names=SECTOR_MAP):
    fig, axes = figure(len(names), 1, figsize=(7.5, 1.3 * len(names)), sharex=True)
    for ax, name in zip(axes, names):
        (first, last), counted = byte_ranges(name), runs[name].sectors
        touched = np.unique(np.concatenate([np.arange(a // 32, b // 32 + 1) for a, b in zip(first, last)]))
        assert touched.size == counted  # the picture shows what the simulator counted
        for s in touched:
            ax.axvspan(32 * s, 32 * s + 32, color="tab:orange", alpha=0.35, lw=0)
        for b in range(0, SPAN + 1, 32):
            ax.axvline(b, color="grey", lw=0.3)
        ax.hlines(lane, first, last + 1, color="tab:blue", lw=3)
        ax.set_xlim(0, SPAN)
        ax.set_ylim(-2, 33)
        ax.set_yticks([0, 16, 31])
        ax.set_ylabel("lane", fontsize=8)
        title = _n("{name}: {n} sector", "{name}: {n} sectors", name=pattern_label(name), n=counted)
        ax.set_title(str(title), fontsize=9, loc="left")
    axes[-1].set_xlabel(str(_("byte address (grey lines: 32-byte sector boundaries; orange: sectors moved)")))
    fig.tight_layout()
    return fig


contiguous, stride8, broadcast = runs["contiguous"], runs["stride 8"], runs["broadcast (all read one)"]
loads = Listing(_("{k} for {name}", k=runs[name].sectors, name=pattern_label(name)) for name in SECTOR_MAP)
sector_figure = Figure(
    draw_sector_map,
    alt=_("For {patterns} access patterns, the bytes each of a warp's {lanes} lanes reads (addresses 0 to "
          "{span:,}) and the 32-byte sectors moved. Sectors per load: {loads}.",
          patterns=len(SECTOR_MAP), lanes=lane.size, span=SPAN,
          loads=loads),
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


# %%
sector_figure  # a notebook draws the figure here; the lecture page shows it with show()


# %% [markdown]
# ## 演示 2：512×512 矩阵转置 · Demo 2: transposing a 512×512 matrix
#
# Blocks of 32×8 threads; each block moves one 32×32 tile, each thread 4 elements.

# %%
# --8<-- [start:transpose_table]
from simtdocs.docs import Table, _, glue

VERSION = {  # the English name of each version, as a label
    "copy (reference)": _("copy (reference)"), "naive transpose": _("naive transpose"),
    "tiled 32×32, no padding": _("tiled 32×32, no padding"), "tiled 32×33 (padded)": _("tiled 32×33 (padded)"),
    "tiled 32×33, sync left out": _("tiled 32×33, sync left out"),
}


def column_read_ways(stats):
    """Wavefronts per request of the column read: the kernel's last line using shared memory."""
    lines = [ln.counters for ln in stats.lines if ln.counters.shared_requests]
    # wavefronts per request, as the docstring says (for these 4-byte accesses: the conflict ways)
    return lines[-1].shared_wavefronts / lines[-1].shared_requests if lines else None


def transpose_table(N, runs):
    """The table of §5.3 from {version name: (stats, result correct)} of an N×N transpose with the
    kernels' TILE and ROWS; glues its inputs and the numbers the prose quotes."""
    glue("p2_tr_size", f"{N}×{N}")
    glue("p2_tr_block", f"{TILE}×{ROWS}")  # threads per block
    glue("p2_tr_tile", f"{TILE}×{TILE}")
    glue("p2_tr_per_thread", TILE // ROWS)  # elements each thread moves
    copy_t = runs["copy (reference)"][0].estimate_time()
    rows = []
    for name, (st, ok) in runs.items():
        ways, t = column_read_ways(st), st.estimate_time()
        rows.append((VERSION[name], st.sectors, t.dram_s / copy_t.dram_s, t.issue_s * 1e9,
                     "–" if ways is None else f"{ways:.0f}", len(st.races), _("yes") if ok else _("no")))
    stats = {name: st for name, (st, ok) in runs.items()}
    glue("p2_copy_dram_ns", copy_t.dram_s * 1e9, ",.0f")
    glue("p2_tiled_issue_ns", stats["tiled 32×32, no padding"].estimate_time().issue_s * 1e9, ",.0f")
    glue("p2_padded_issue_ns", stats["tiled 32×33 (padded)"].estimate_time().issue_s * 1e9, ",.0f")
    glue("p2_naive_over_copy", stats["naive transpose"].sectors / stats["copy (reference)"].sectors, ".1f")
    glue("p2_tiled_ways", column_read_ways(stats["tiled 32×32, no padding"]), ".0f")
    glue("p2_nosync_races", len(stats["tiled 32×33, sync left out"].races))
    glue("p2_nosync_blocks", stats["tiled 32×33, sync left out"].blocks)
    return Table(rows, [_("version"), _("sectors"), _("estimated HBM time (copy = 1)"),
                        _("estimated issue time (ns)"), _("column read of the tile: conflict ways"),
                        _("races"), _("correct")], fmt=[None, ",", ".2f", ",.0f", None, ",", None])
# --8<-- [end:transpose_table]


# %%
# --8<-- [start:transpose_kernels]
TILE, ROWS = 32, 8


def copy(blk, A, B, N):
    x = blk.bx * TILE + blk.tx
    y = blk.by * TILE + blk.ty
    for j in range(0, TILE, ROWS):
        v = blk.load(A, (y + j) * N + x)
        blk.store(B, (y + j) * N + x, v)


def transpose_naive(blk, A, B, N):
    x = blk.bx * TILE + blk.tx
    y = blk.by * TILE + blk.ty
    for j in range(0, TILE, ROWS):
        v = blk.load(A, (y + j) * N + x)       # neighbours read neighbours: coalesced
        blk.store(B, x * N + (y + j), v)       # neighbours write a row apart: not coalesced


def transpose_tiled(blk, A, B, N, pad=1, sync=True):
    tile = blk.shared((TILE, TILE + pad), np.float32, name="tile")
    x = blk.bx * TILE + blk.tx
    y = blk.by * TILE + blk.ty
    for j in range(0, TILE, ROWS):             # 1. read a tile of A by rows (coalesced)
        v = blk.load(A, (y + j) * N + x)
        blk.store(tile, (blk.ty + j, blk.tx), v)
    if sync:
        blk.sync()                             # 2. wait until the whole tile is in
    x = blk.by * TILE + blk.tx                 # 3. the transposed tile's place in B
    y = blk.bx * TILE + blk.ty
    for j in range(0, TILE, ROWS):
        v = blk.load(tile, (blk.tx, blk.ty + j))   # read the tile down a column
        blk.store(B, (y + j) * N + x, v)           # write B by rows (coalesced)
# --8<-- [end:transpose_kernels]


# %%
# --8<-- [start:transpose_launch]
N = 512
A = np.random.default_rng(5).random((N, N), dtype=np.float32)
versions = {  # name: (kernel, arguments after A, B, N, the B it should give)
    "copy (reference)": (copy, (), A),
    "naive transpose": (transpose_naive, (), A.T),
    "tiled 32×32, no padding": (transpose_tiled, (0,), A.T),
    "tiled 32×33 (padded)": (transpose_tiled, (1,), A.T),
    "tiled 32×33, sync left out": (transpose_tiled, (1, False), A.T),
}
runs = {}
for name, (kernel, extra, expected) in versions.items():
    B = np.zeros_like(A)
    st = launch(kernel, grid=(N // TILE, N // TILE), block=(TILE, ROWS),
                args=(A.reshape(-1), B.reshape(-1), N, *extra))
    runs[name] = (st, np.array_equal(B, expected))
show(transpose_table(N, runs))
# --8<-- [end:transpose_launch]


# %% [markdown]
# ## 对照：Harris 在真实 GPU 上的实测 · For comparison: Harris's measurements on real GPUs
#
# Cited, not computed: M. Harris, "An Efficient Matrix Transpose in CUDA C/C++", NVIDIA
# Developer Blog, 2013 (1024×1024 float matrix, Tesla M2050 and Tesla K20c). The shares are
# his effective bandwidths relative to the copy kernel, summarised from the table of that post.

# %%
# --8<-- [start:harris_table]
from simtdocs.docs import Table, _


def harris_table():
    """Harris's measurements, as he published them (cited, not computed)."""
    harris = [
        ("copy", _("reference (100%)")),
        (_("naive transpose"), _("18%–41% of copy (5.6× the copy's time on the M2050, 2.5× on the K20c)")),
        (_("coalesced (shared memory, 32×32)"), _("49%–72% of copy")),
        (_("coalesced, no bank conflicts (32×33)"), _("about 95% of the fastest copy")),
    ]
    return Table(harris, [_("Harris's version"), _("effective bandwidth (relative to copy)")], align="ll")
# --8<-- [end:harris_table]


# %%
# --8<-- [start:harris]
show(harris_table())
# --8<-- [end:harris]
