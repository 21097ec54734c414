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

from simtdocs import H100, launch
from simtdocs.docs import T, Figure, Table, figure, glue, show
# --8<-- [end:setup]


# %% [markdown]
# ## 存储空间 · Memory spaces
#
# Sizes are H100 specifications (CUDA C++ Programming Guide 12.9, Compute Capabilities;
# NVIDIA H100 datasheet); where the simulator's device preset holds the number, it is read
# from there. Latencies are orders of magnitude from published microbenchmarks of Hopper
# GPUs (Luo et al., arXiv:2402.13499; Jarmusch et al., arXiv:2507.10789): for orientation only.

# %%
# --8<-- [start:memory_spaces]
KB, MB = 1024, 1024 * 1024
# Unloaded latency in cycles (one dependent load at a time, as pointer-chasing
# microbenchmarks measure it): orders of magnitude, (low, high).
UNLOADED_CYCLES = {"registers": (1, 1), "shared": (30, 30), "L1": (30, 40), "L2": (200, 300), "HBM": (500, 800)}


def latency(name):
    """'≈ lo–hi cycles' and the same in ns at this GPU's clock."""
    lo, hi = UNLOADED_CYCLES[name]
    ns = [c / H100.clock_hz * 1e9 for c in (lo, hi)]
    cycles = f"≈ {lo}" if lo == hi else f"≈ {lo}–{hi}"
    return cycles, (f"≈ {ns[0]:.1f}" if lo == hi else f"≈ {ns[0]:.0f}–{ns[1]:.0f}")


spaces = [
    (T("寄存器", "registers"), T("SM 内", "on the SM"), T("一个线程", "one thread"),
     f"{H100.registers_per_sm * 4 // KB} KB / SM", *latency("registers"), T("编译器", "the compiler")),
    (T("共享内存 `__shared__`", "shared memory `__shared__`"), T("SM 内", "on the SM"),
     T("一个线程块", "one block"), f"≤ {H100.shared_per_sm // KB} KB / SM", *latency("shared"),
     T("程序员", "the programmer")),
    (T("L1 cache", "L1 cache"), T("SM 内（与共享内存同一块 SRAM）", "on the SM (same SRAM as shared)"),
     T("一个 SM", "one SM"), T("256 KB / SM（两者合计）", "256 KB / SM (both together)"), *latency("L1"),
     T("硬件", "the hardware")),
    (T("L2 cache", "L2 cache"), T("芯片上", "on the chip"), T("整个 GPU", "the whole GPU"),
     f"{H100.l2_bytes // MB} MB", *latency("L2"), T("硬件", "the hardware")),
    (T("全局内存（HBM）", "global memory (HBM)"), T("封装内的 HBM 堆叠", "HBM stacks in the package"),
     T("所有线程（host 经 cudaMemcpy）", "every thread (the host via cudaMemcpy)"),
     f"80 GB, {H100.memory_bandwidth / 1e12:.2f} TB/s", *latency("HBM"),
     T("程序员（cudaMalloc）", "the programmer (cudaMalloc)")),
]
show(Table(spaces, [T("存储空间", "space"), T("位置", "where"), T("可见范围", "visible to"),
                    T("H100 容量", "size on H100"), T("空载延迟（周期，量级）", "unloaded latency (cycles, magnitude)"),
                    T(f"同上，ns（{H100.clock_hz / 1e9:.2f} GHz）", f"the same in ns (at {H100.clock_hz / 1e9:.2f} GHz)"),
                    T("谁来管理", "managed by")], align="llllrrl"))
glue("p2_hbm_cycles", latency("HBM")[0].removeprefix("≈ "))
glue("p2_hbm_ns", latency("HBM")[1].removeprefix("≈ "))
glue("p2_mem_clock_ghz", H100.clock_hz / 1e9, ".2f")
from simtdocs.analytic.latency import MEMORY_LATENCY_S  # the latency under load of §7
glue("p2_mem_loaded_ns", MEMORY_LATENCY_S * 1e9, ".0f")
glue("p2_mem_loaded_cycles", MEMORY_LATENCY_S * H100.clock_hz, ",.0f")
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
# --8<-- [start:patterns]
lane = np.arange(32)
f32 = np.zeros(4096, np.float32)
ODD_STRIDE = 3  # the stride the prose discusses: odd, so no two lanes share a word
patterns = [  # (name, array, index of each lane, elements per lane)
    (T("连续", "contiguous"), f32, lane, 1),
    (T("错位 1 个元素", "misaligned by 1"), f32, lane + 1, 1),
    *[(T(f"跨度 {s}", f"stride {s}"), f32, s * lane, 1) for s in (2, ODD_STRIDE, 4, 8, 32)],
    (T("广播（都读同一个）", "broadcast (all read one)"), f32, 0 * lane, 1),
    (T("随机", "random"), f32, np.random.default_rng(7).choice(f32.size, 32, replace=False), 1),
    (T("float64 连续", "float64, contiguous"), np.zeros(4096, np.float64), lane, 1),
    (T("16 字节向量读（float4）", "16-byte vector load (float4)"), f32, 4 * lane, 4),
]
access = {}  # English name -> (first byte, last byte of each lane, sectors the simulator counted)
rows = []
for name, arr, index, width in patterns:
    st = launch(pattern_kernel, grid=1, block=32, args=(arr, index, width))
    first = index * arr.itemsize
    access[name.en] = (first, first + width * arr.itemsize - 1, st.sectors)
    rows.append((name, st.sectors, st.bytes_moved, st.requested_bytes, st.coalescing_efficiency))
show(Table(rows, [T("访问模式", "pattern"), T("sector 数", "sectors"), T("搬运字节", "bytes moved"),
                  T("线程所需字节", "bytes requested"), T("效率（所需 / 搬运）", "efficiency (requested / moved)")],
           fmt=[None, ",", ",", ",", ".1%"]))
by_name = {r[0].en: r for r in rows}
glue("p2_stride_odd", ODD_STRIDE)
glue("p2_stride3_sectors", by_name[f"stride {ODD_STRIDE}"][1])
glue("p2_stride3_eff", by_name[f"stride {ODD_STRIDE}"][4], ".0%")
glue("p2_stride32_requested", by_name["stride 32"][3])
glue("p2_stride32_sectors", by_name["stride 32"][1])
glue("p2_stride32_moved", by_name["stride 32"][2])
glue("p2_stride32_eff", by_name["stride 32"][4], ".1%")
glue("p2_misaligned_sectors", by_name["misaligned by 1"][1])
glue("p2_broadcast_eff", by_name["broadcast (all read one)"][4], ".0%")
# --8<-- [end:patterns]


# %%
# --8<-- [start:sector_figure]
SECTOR_MAP = ("contiguous", "misaligned by 1", "stride 2", "stride 8", "broadcast (all read one)")  # English names
pattern_label = {p[0].en: p[0] for p in patterns}
SPAN = 1024  # bytes of address drawn


def draw_sector_map(names=SECTOR_MAP):
    fig, axes = figure(len(names), 1, figsize=(7.5, 1.3 * len(names)), sharex=True)
    for ax, name in zip(axes, names):
        first, last, counted = access[name]
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
        n = pattern_label[name]
        ax.set_title(str(T(f"{n.zh}：{counted} 个 sector", f"{n.en}: {counted} sector{'' if counted == 1 else 's'}")), fontsize=9, loc="left")
    axes[-1].set_xlabel(str(T("字节地址（灰线：32 字节 sector 的边界；橙色：被搬运的 sector）",
                              "byte address (grey lines: 32-byte sector boundaries; orange: sectors moved)")))
    fig.tight_layout()
    return fig


sector_counts = [(pattern_label[name], access[name][2]) for name in SECTOR_MAP]  # (name, sectors the simulator counted)
sector_figure = Figure(
    draw_sector_map,
    alt=T(f"{len(sector_counts)} 种访问模式下，一个 warp 的 {lane.size} 个 lane 各自读的字节（地址 0 到 {SPAN:,}）"
          f"和被搬运的 32 字节 sector。每条 load 搬运的 sector 数——"
          f"{'；'.join(f'{n.zh}：{k} 个' for n, k in sector_counts)}。",
          f"For {len(sector_counts)} access patterns, the bytes each of a warp's {lane.size} lanes reads (addresses 0 to "
          f"{SPAN:,}) and the 32-byte sectors moved. Sectors per load: "
          f"{', '.join(f'{k} for {n.en}' for n, k in sector_counts)}."),
    caption=T("纵轴是 lane，蓝色短线是它读的 4 个字节；橙色是这条 warp load 要搬运的 sector。"
              f"连续访问 {by_name['contiguous'][1]} 个 sector 就够了；跨度 8 时每个 lane 独占一个 sector，"
              f"搬 {by_name['stride 8'][2]:,} 字节只用 {by_name['stride 8'][3]:,} 字节；"
              f"广播时 32 个 lane 共用 {by_name['broadcast (all read one)'][1]} 个 sector。",
              "Lanes go up the side; the short blue bar is the 4 bytes a lane reads; orange marks the sectors "
              f"this warp load moves. Contiguous reads need {by_name['contiguous'][1]} sectors; with stride 8 every "
              f"lane has a sector of its own and {by_name['stride 8'][2]:,} bytes move for {by_name['stride 8'][3]:,} "
              f"used; a broadcast serves all 32 lanes from {by_name['broadcast (all read one)'][1]} sector."),
)
# --8<-- [end:sector_figure]


# %%
sector_figure  # a notebook draws the figure here; the lecture page shows it with show()


# %% [markdown]
# ## 演示 2：512×512 矩阵转置 · Demo 2: transposing a 512×512 matrix
#
# Blocks of 32×8 threads; each block moves one 32×32 tile, each thread 4 elements.

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
# --8<-- [start:transpose_table]
def column_read_ways(stats):
    """Wavefronts per request of the column read: the kernel's last line using shared memory."""
    lines = [ln.counters for ln in stats.lines if ln.counters.shared_requests]
    # wavefronts per request, as the docstring says (for these 4-byte accesses: the conflict ways)
    return lines[-1].shared_wavefronts / lines[-1].shared_requests if lines else None


N = 512
glue("p2_tr_size", f"{N}×{N}")
glue("p2_tr_block", f"{TILE}×{ROWS}")  # threads per block
glue("p2_tr_tile", f"{TILE}×{TILE}")
glue("p2_tr_per_thread", TILE // ROWS)  # elements each thread moves
A = np.random.default_rng(5).random((N, N), dtype=np.float32)
versions = [  # (name, kernel, extra arguments after A, B, N, expected B)
    (T("copy（参照）", "copy (reference)"), copy, (), A),
    (T("朴素转置", "naive transpose"), transpose_naive, (), A.T),
    (T("分块 32×32，无填充", "tiled 32×32, no padding"), transpose_tiled, (0,), A.T),
    (T("分块 32×33（填充 1）", "tiled 32×33 (padded)"), transpose_tiled, (1,), A.T),
    (T("分块 32×33，漏了 sync", "tiled 32×33, sync left out"), transpose_tiled, (1, False), A.T),
]
transpose_rows, runs = [], {}
for name, kernel, extra, expected in versions:
    B = np.zeros_like(A)
    st = launch(kernel, grid=(N // TILE, N // TILE), block=(TILE, ROWS),
                args=(A.reshape(-1), B.reshape(-1), N, *extra))
    runs[name.en] = st
    ways = column_read_ways(st)
    t = st.estimate_time()
    transpose_rows.append((name, st.sectors, t.dram_s / runs["copy (reference)"].estimate_time().dram_s,
                 t.issue_s * 1e9, "–" if ways is None else f"{ways:.0f}", len(st.races),
                 T("是", "yes") if np.array_equal(B, expected) else T("否", "no")))
show(Table(transpose_rows, [T("写法", "version"), T("sector 数", "sectors"),
                  T("估计 HBM 时间（copy = 1）", "estimated HBM time (copy = 1)"),
                  T("估计发射时间 (ns)", "estimated issue time (ns)"),
                  T("按列读 tile：bank 冲突路数", "column read of the tile: conflict ways"),
                  T("数据竞争", "races"), T("结果正确", "correct")],
           fmt=[None, ",", ".2f", ",.0f", None, ",", None]))
copy_t = runs["copy (reference)"].estimate_time()
glue("p2_copy_dram_ns", copy_t.dram_s * 1e9, ",.0f")
glue("p2_tiled_issue_ns", runs["tiled 32×32, no padding"].estimate_time().issue_s * 1e9, ",.0f")
glue("p2_padded_issue_ns", runs["tiled 32×33 (padded)"].estimate_time().issue_s * 1e9, ",.0f")
glue("p2_naive_over_copy", runs["naive transpose"].sectors / runs["copy (reference)"].sectors, ".1f")
glue("p2_tiled_ways", column_read_ways(runs["tiled 32×32, no padding"]), ".0f")
glue("p2_nosync_races", len(runs["tiled 32×33, sync left out"].races))
glue("p2_nosync_blocks", runs["tiled 32×33, sync left out"].blocks)
# --8<-- [end:transpose_table]


# %% [markdown]
# ## 对照：Harris 在真实 GPU 上的实测 · For comparison: Harris's measurements on real GPUs
#
# Cited, not computed: M. Harris, "An Efficient Matrix Transpose in CUDA C/C++", NVIDIA
# Developer Blog, 2013 (1024×1024 float matrix, Tesla M2050 and Tesla K20c). The shares are
# his effective bandwidths relative to the copy kernel, summarised from the table of that post.

# %%
# --8<-- [start:harris]
harris = [
    (T("copy", "copy"), T("参照（100%）", "reference (100%)")),
    (T("朴素转置", "naive transpose"), T("copy 的 18%–41%；用时在 M2050 上是 copy 的 5.6 倍，在 K20c 上是 2.5 倍",
                                    "18%–41% of copy (5.6× the copy's time on the M2050, 2.5× on the K20c)")),
    (T("分块（共享内存，32×32）", "coalesced (shared memory, 32×32)"), T("copy 的 49%–72%", "49%–72% of copy")),
    (T("分块并消除 bank 冲突（32×33）", "coalesced, no bank conflicts (32×33)"),
     T("约为最快 copy 的 95%", "about 95% of the fastest copy")),
]
show(Table(harris, [T("Harris 的写法", "Harris's version"),
                    T("有效带宽（相对 copy）", "effective bandwidth (relative to copy)")], align="ll"))
# --8<-- [end:harris]
