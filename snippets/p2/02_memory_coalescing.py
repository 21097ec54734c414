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
from simtdocs.cuda import RawModule
from simtdocs.display import show
from simtdocs.lectures.p2 import memory as lecture  # the tables and the figure of this script
# --8<-- [end:setup]


# %% [markdown]
# ## 存储空间 · Memory spaces
#
# 容量是 H100 的规格（CUDA C++ Programming Guide 12.9 的 Compute Capabilities 一节；
# NVIDIA H100 数据手册）；模拟器的设备预设里有的数，直接从那里读。延迟只给数量级，
# 取自已发表的 Hopper GPU 微基准测试（Luo 等，arXiv:2402.13499；Jarmusch 等，
# arXiv:2507.10789），仅供参考。表格和图由 simtdocs.lectures.p2.memory 生成；
# `_glue` 小节把正文引用的数交给页面。
# Sizes are H100 specifications (CUDA C++ Programming Guide 12.9, Compute Capabilities;
# NVIDIA H100 datasheet); where the simulator's device preset holds the number, it is read
# from there. Latencies are orders of magnitude from published microbenchmarks of Hopper
# GPUs (Luo et al., arXiv:2402.13499; Jarmusch et al., arXiv:2507.10789): for orientation only.
# The tables and the figure are made by simtdocs.lectures.p2.memory; the `_glue` sections hand the
# numbers the prose quotes to the page.

# %%
# --8<-- [start:memory_spaces]
from simtdocs import H100

show(lecture.memory_spaces_table(H100))
# --8<-- [end:memory_spaces]

# %%
# --8<-- [start:memory_spaces_glue]
from simtdocs.analytic.latency import MEMORY_LATENCY_S
from simtdocs.display import glue

hbm_cycles, hbm_ns = lecture.unloaded_latency(H100, "HBM")
glue("p2_hbm_cycles", hbm_cycles.removeprefix("≈ "))
glue("p2_hbm_ns", hbm_ns.removeprefix("≈ "))
glue("p2_mem_clock_ghz", H100.clock_hz / 1e9, ".2f")
glue("p2_mem_loaded_ns", MEMORY_LATENCY_S * 1e9, ".0f")  # the latency under load of §7
glue("p2_mem_loaded_cycles", MEMORY_LATENCY_S * H100.clock_hz, ",.0f")
# --8<-- [end:memory_spaces_glue]


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
show(lecture.pattern_table(runs))
# --8<-- [end:patterns]

# %%
# --8<-- [start:patterns_glue]
from simtdocs.display import glue

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
# --8<-- [end:patterns_glue]


# %%
# --8<-- [start:sector_figure]
show(lecture.sector_figure(patterns, runs))
# --8<-- [end:sector_figure]


# %% [markdown]
# ## 演示 2：512×512 矩阵转置 · Demo 2: transposing a 512×512 matrix
#
# 线程块是 32×8 个线程；每块搬一个 32×32 的 tile，每个线程搬 4 个元素。
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
in_c = {"tiled 32×32, no padding": "transpose_tiled",  # the C above, and its two variants
        "tiled 32×33 (padded)": "transpose_padded", "tiled 32×33, sync left out": "transpose_unsynced"}
c_kernels = RawModule(path="snippets/p2/memory.cu")
runs = {}
for name, (kernel, extra, expected) in versions.items():
    B = np.zeros_like(A)
    st = launch(kernel, grid=(N // TILE, N // TILE), block=(TILE, ROWS),
                args=(A.reshape(-1), B.reshape(-1), N, *extra))
    if name in in_c:  # the tiled versions run as CUDA C, and their mask forms count the same
        B = np.zeros_like(A)
        masks, st = st, c_kernels.get_function(in_c[name])((N // TILE, N // TILE), (TILE, ROWS),
                                                            (A.reshape(-1), B.reshape(-1), np.int32(N)))
        assert st.totals == masks.totals and len(st.races) == len(masks.races)
    runs[name] = (st, np.array_equal(B, expected))
show(lecture.transpose_table(runs))
# --8<-- [end:transpose_launch]

# %%
# --8<-- [start:transpose_glue]
from simtdocs.display import glue

stats = {name: st for name, (st, ok) in runs.items()}
glue("p2_tr_size", f"{N}×{N}")
glue("p2_tr_block", f"{TILE}×{ROWS}")  # threads per block
glue("p2_tr_tile", f"{TILE}×{TILE}")
glue("p2_tr_per_thread", TILE // ROWS)  # elements each thread moves
glue("p2_copy_dram_ns", stats["copy (reference)"].estimate_time().dram_s * 1e9, ",.0f")
glue("p2_tiled_issue_ns", stats["tiled 32×32, no padding"].estimate_time().issue_s * 1e9, ",.0f")
glue("p2_padded_issue_ns", stats["tiled 32×33 (padded)"].estimate_time().issue_s * 1e9, ",.0f")
glue("p2_naive_over_copy", stats["naive transpose"].sectors / stats["copy (reference)"].sectors, ".1f")
glue("p2_tiled_ways", lecture.column_read_ways(stats["tiled 32×32, no padding"]), ".0f")
glue("p2_nosync_races", len(stats["tiled 32×33, sync left out"].races))
glue("p2_nosync_blocks", stats["tiled 32×33, sync left out"].blocks)
# --8<-- [end:transpose_glue]


# %% [markdown]
# ## 对照：Harris 在真实 GPU 上的实测 · For comparison: Harris's measurements on real GPUs
#
# 引用而非计算：M. Harris，“An Efficient Matrix Transpose in CUDA C/C++”，NVIDIA
# Developer Blog，2013（1024×1024 的 float 矩阵，Tesla M2050 与 Tesla K20c）。
# 表中的比例是他测得的有效带宽相对 copy 内核的值，摘自那篇文章的表格。
# Cited, not computed: M. Harris, "An Efficient Matrix Transpose in CUDA C/C++", NVIDIA
# Developer Blog, 2013 (1024×1024 float matrix, Tesla M2050 and Tesla K20c). The shares are
# his effective bandwidths relative to the copy kernel, summarised from the table of that post.

# %%
# --8<-- [start:harris]
show(lecture.harris_table())
# --8<-- [end:harris]
