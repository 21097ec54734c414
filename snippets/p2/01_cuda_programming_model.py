# %% [markdown]
# # P2 · 代码 01：CUDA 编程模型 · Code 01: the CUDA programming model
#
# 模拟器里的 GPU；向量加法与块大小；漏写边界检查；二维网格；grid-stride 循环；分支发散。
# The GPU inside the simulator; vector add and the block size; a missing bounds check;
# 2-D grids; grid-stride loops; branch divergence. Every table below is computed by simtdocs.
#
# Run it alone: `python snippets/p2/01_cuda_programming_model.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import H100, MemcheckError, cdiv, launch
from simtdocs.docs import T, Table, glue, show
# --8<-- [end:setup]


# %% [markdown]
# ## 模拟器里的 GPU · The GPU inside the simulator

# %%
# --8<-- [start:device]
from simtdocs import counters
from simtdocs.analytic.latency import MEMORY_LATENCY_S

spec, assumed = T("规格", "specification"), T("假设", "assumption")
d = H100
rows = [
    (T("GPU（计算能力）", "GPU (compute capability)"),
     f"{d.name} ({d.compute_capability[0]}.{d.compute_capability[1]})", spec),
    (T("SM 数", "SMs"), f"{d.sm_count}", spec),
    (T("每 SM 的 FP32 lane", "FP32 lanes per SM"), f"{d.fp32_lanes_per_sm}", spec),
    (T("每 SM 的 warp 调度器", "warp schedulers per SM"), f"{d.schedulers_per_sm}", spec),
    (T("每 SM 最多驻留", "resident per SM, at most"),
     T(f"{d.max_warps_per_sm} 个 warp、{d.max_threads_per_sm:,} 个线程、{d.max_blocks_per_sm} 个块",
       f"{d.max_warps_per_sm} warps, {d.max_threads_per_sm:,} threads, {d.max_blocks_per_sm} blocks"), spec),
    (T("每 SM 寄存器", "registers per SM"), f"{d.registers_per_sm:,} × 32 bit", spec),
    (T("每 SM 共享内存（最多）", "shared memory per SM (max)"), f"{d.shared_per_sm // 1024} KB", spec),
    (T("时钟", "clock"), f"{d.clock_hz / 1e9:.2f} GHz", spec),
    (T("HBM 带宽", "HBM bandwidth"), f"{d.memory_bandwidth / 1e12:.2f} TB/s", spec),
    (T("L2 cache", "L2 cache"), f"{d.l2_bytes // 2**20} MB", spec),
    (T("每个调度器每周期发射", "issued per scheduler per cycle"),
     T(f"{counters.WARP_INSTRUCTIONS_PER_SCHEDULER_PER_CYCLE} 条 warp 指令",
       f"{counters.WARP_INSTRUCTIONS_PER_SCHEDULER_PER_CYCLE} warp instruction"), assumed),
    (T("每多一个 bank 冲突 wavefront", "per extra bank-conflict wavefront"),
     T(f"多 {counters.EXTRA_ISSUE_CYCLES_PER_EXTRA_WAVEFRONT} 个发射周期",
       f"+{counters.EXTRA_ISSUE_CYCLES_PER_EXTRA_WAVEFRONT} issue cycle"), assumed),
    (T("HBM 访存延迟，有负载时（§7 用）", "HBM load latency under load (used in §7)"),
     T(f"{MEMORY_LATENCY_S * 1e9:.0f} ns ≈ {MEMORY_LATENCY_S * d.clock_hz:,.0f} 个周期",
       f"{MEMORY_LATENCY_S * 1e9:.0f} ns ≈ {MEMORY_LATENCY_S * d.clock_hz:,.0f} cycles"), assumed),
]
show(Table(rows, [T("参数", "parameter"), T("值", "value"), T("类别", "kind")], align="lll"))
glue("p2_sms", d.sm_count)
glue("p2_lanes_per_sm", d.fp32_lanes_per_sm)
glue("p2_schedulers", d.schedulers_per_sm)
glue("p2_clock_ghz", d.clock_hz / 1e9, ".2f")
glue("p2_max_warps", d.max_warps_per_sm)
glue("p2_max_threads", d.max_threads_per_sm)
glue("p2_max_blocks", d.max_blocks_per_sm)
glue("p2_registers", d.registers_per_sm)
glue("p2_register_kb", d.registers_per_sm * 4 // 1024)
glue("p2_shared_kb", d.shared_per_sm // 1024)
glue("p2_latency_ns", MEMORY_LATENCY_S * 1e9, ".0f")
glue("p2_latency_cycles", MEMORY_LATENCY_S * d.clock_hz, ",.0f")  # the same latency in cycles of this clock
glue("p2_inflight_mb", d.memory_bandwidth * MEMORY_LATENCY_S / 1e6, ".1f")
# --8<-- [end:device]


# %% [markdown]
# ## 演示 1：向量加法与块大小 · Demo 1: vector add and the block size

# %%
# --8<-- [start:kernel]
def vector_add(blk, a, b, c, n):
    gid = blk.bx * blk.bdx + blk.tx        # global index: an array with one entry per thread
    inside = gid < n                       # "if (i < n)" becomes a mask over the threads
    total = blk.load(a, gid, mask=inside) + blk.load(b, gid, mask=inside)
    blk.store(c, gid, total, mask=inside)  # threads outside the mask touch no memory
# --8<-- [end:kernel]


# %%
# --8<-- [start:block_sizes]
n = 10_000
sizes = (100, 128, 256, 512, 1024)  # the first is not a multiple of 32; the rest are
a = np.random.default_rng(0).random(n, dtype=np.float32)
b = np.random.default_rng(1).random(n, dtype=np.float32)
rows = []
for threads in sizes:
    c = np.zeros(n, np.float32)
    st = launch(vector_add, grid=(cdiv(n, threads),), block=(threads,), args=(a, b, c, n))
    assert np.array_equal(c, a + b)
    rows.append((threads, st.blocks, st.warps, st.simt_efficiency, st.sectors, st.coalescing_efficiency))
    if threads == sizes[0]:
        glue("p2_bs100_simt", st.simt_efficiency, ".0%")
        glue("p2_bs100_coalescing", st.coalescing_efficiency, ".0%")
        glue("p2_bs100_last_warp", threads % 32)
        glue("p2_bs100_warps", cdiv(threads, 32))
        glue("p2_bs100_bytes", threads * a.itemsize)  # block k starts at this many bytes times k
        glue("p2_bs100_offset", threads * a.itemsize % 32)  # how far an odd block's start is off a sector
    if threads == 256:
        glue("p2_bs256_sectors", st.sectors)
show(Table(rows, [T("块大小", "block size"), T("线程块数", "blocks"), T("warp 数", "warps"),
                  T("SIMT 效率", "SIMT efficiency"), T("sector 数", "sectors"),
                  T("合并效率", "coalescing")],
           fmt=[None, ",", ",", ".1%", ",", ".1%"]))
glue("p2_bs_min_simt", min(r[3] for r in rows[1:]), ".1%")
glue("p2_bs_n", n)
glue("p2_bs_odd", sizes[0])
glue("p2_bs_lo", sizes[1])
glue("p2_bs_hi", sizes[-1])
# --8<-- [end:block_sizes]


# %% [markdown]
# ## 演示 2：漏写边界检查 · Demo 2: the missing bounds check

# %%
# --8<-- [start:unchecked]
def vector_add_unchecked(blk, a, b, c, n):
    gid = blk.bx * blk.bdx + blk.tx
    # no mask: every thread reads and writes, those past the end too
    total = blk.load(a, gid) + blk.load(b, gid)
    blk.store(c, gid, total)


n, threads = 1000, 256
a, b, c = np.ones(n, np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)
try:
    launch(vector_add_unchecked, grid=cdiv(n, threads), block=threads, args=(a, b, c, n))
except MemcheckError as err:
    print("\n```text\n" + str(err) + "\n```")
glue("p2_oob_n", n)
glue("p2_oob_threads", threads)
glue("p2_oob_blocks", cdiv(n, threads))
glue("p2_oob_first", n - (cdiv(n, threads) - 1) * threads)  # first thread of the last block past the end
glue("p2_oob_last", threads - 1)
glue("p2_oob_reads", f"`a[{n}]`")  # the first element past the end...
glue("p2_oob_reads_end", f"`a[{cdiv(n, threads) * threads - 1}]`")  # ...and the last one the grid touches
# --8<-- [end:unchecked]


# %% [markdown]
# ## 演示 3：二维网格 · Demo 3: 2-D grids

# %%
# --8<-- [start:bias_kernels]
def bias_add(blk, X, bias, M, N):
    r = blk.by * blk.bdy + blk.ty          # row    from y
    c = blk.bx * blk.bdx + blk.tx          # column from x: neighbours in x are neighbours in memory
    m = (r < M) & (c < N)
    v = blk.load(X, r * N + c, mask=m) + blk.load(bias, r, mask=m)
    blk.store(X, r * N + c, v, mask=m)


def bias_add_swapped(blk, X, bias, M, N):
    r = blk.bx * blk.bdx + blk.tx          # row    from x: neighbours in x are N elements apart
    c = blk.by * blk.bdy + blk.ty          # column from y
    m = (r < M) & (c < N)
    v = blk.load(X, r * N + c, mask=m) + blk.load(bias, r, mask=m)
    blk.store(X, r * N + c, v, mask=m)
# --8<-- [end:bias_kernels]


# %%
# --8<-- [start:bias_table]
M, N = 100, 70
bx, by = 16, 16  # block shape
glue("p2_bias_M", M)
glue("p2_bias_N", N)
glue("p2_bias_block", f"{bx}×{by}")
X0 = np.random.default_rng(2).random((M, N), dtype=np.float32)
bias = np.random.default_rng(3).random(M, dtype=np.float32)
rows = []
for kernel, grid, label in (
    (bias_add, (cdiv(N, bx), cdiv(M, by)), T("x → 列（正确）", "x → columns (correct)")),
    (bias_add_swapped, (cdiv(M, bx), cdiv(N, by)), T("x → 行（错配）", "x → rows (swapped)")),
):
    X = X0.copy()
    st = launch(kernel, grid=grid, block=(bx, by), args=(X.reshape(-1), bias, M, N))
    ok = np.array_equal(X, X0 + bias[:, None])
    rows.append((label, f"{grid[0]}×{grid[1]}", st.sectors, st.coalescing_efficiency,
                 T("是", "yes") if ok else T("否", "no")))
    tag = "right" if kernel is bias_add else "swapped"
    glue(f"p2_bias_sectors_{tag}", st.sectors)
    glue(f"p2_bias_coalescing_{tag}", st.coalescing_efficiency, ".0%")
show(Table(rows, [T("映射", "mapping"), T("网格", "grid"), T("sector 数", "sectors"),
                  T("合并效率", "coalescing"), T("结果正确", "correct")],
           fmt=[None, None, ",", ".1%", None]))
# --8<-- [end:bias_table]


# %% [markdown]
# ## 演示 4：grid-stride 循环 · Demo 4: grid-stride loops

# %%
# --8<-- [start:grid_stride]
def scale(blk, x, y, alpha, n):
    stride = blk.gdx * blk.bdx             # threads in the whole grid
    first = blk.bx * blk.bdx + blk.tx
    for start in range(0, n, stride):      # every thread walks the same number of strides...
        i = first + start
        m = i < n                          # ...and drops out once it runs past the end
        v = blk.load(x, i, mask=m)
        blk.store(y, i, alpha * v, mask=m)
# --8<-- [end:grid_stride]


# %%
# --8<-- [start:grid_stride_table]
def load_requests(stats):
    """Warp-level loads: the requests of the kernel's first memory line (v = blk.load(x, ...))."""
    return [line.counters.requests for line in stats.lines if line.counters.requests][0]


n = 100_000
x = np.random.default_rng(4).random(n, dtype=np.float32)
rows = []
for blocks, threads in ((4, 128), (16, 256), (cdiv(n, 256), 256)):
    y = np.zeros(n, np.float32)
    st = launch(scale, grid=(blocks,), block=(threads,), args=(x, y, np.float32(2), n))
    ok = np.array_equal(y, np.float32(2) * x)
    rows.append((f"{blocks} × {threads}", blocks * threads, cdiv(n, blocks * threads),
                 T("是", "yes") if ok else T("否", "no"), load_requests(st)))
show(Table(rows, [T("网格 × 块", "blocks × threads"), T("线程总数", "threads"),
                  T("每线程最多循环", "strides per thread"), T("结果正确", "correct"),
                  T("warp 级 load 指令", "warp-level loads")]))
assert len({r[-1] for r in rows}) == 1
glue("p2_gs_loads", rows[0][-1])
glue("p2_gs_n", n)
glue("p2_gs_last_grid", cdiv(n, 256))
# --8<-- [end:grid_stride_table]


# %% [markdown]
# ## 演示 5：分支发散 · Demo 5: branch divergence

# %%
# --8<-- [start:divergence]
def two_paths(blk, out, pick):
    t = blk.bx * blk.bdx + blk.tx
    if pick == "odd/even":
        cond = blk.tx % 2 == 0             # neighbours disagree: every warp splits
    else:
        cond = (blk.tx // 32) % 2 == 0     # whole warps agree: no warp splits
    a = blk.branch(cond)                   # if (cond) { path A } else { path B }
    blk.alu(4, mask=a)                     # path A: four arithmetic instructions
    blk.alu(4, mask=~a)                    # path B: four others
    blk.store(out, t, np.where(a, 1.0, 2.0).astype(np.float32))


rows = []
for pick, label in (("odd/even", "threadIdx.x % 2 == 0"), ("warp", "(threadIdx.x / 32) % 2 == 0")):
    out = np.zeros(256 * 64, np.float32)
    st = launch(two_paths, grid=(64,), block=(256,), args=(out, pick))
    rows.append((f"`{label}`", st.divergent_branches, st.warp_instructions, st.simt_efficiency))
    glue("p2_div_instr_" + ("split" if pick == "odd/even" else "uniform"), st.warp_instructions)
    glue("p2_div_simt_" + ("split" if pick == "odd/even" else "uniform"), st.simt_efficiency, ".0%")
show(Table(rows, [T("分支条件", "condition"), T("发散分支数", "divergent branches"),
                  T("warp 指令数", "warp instructions"), T("SIMT 效率", "SIMT efficiency")],
           fmt=[None, ",", ",", ".1%"]))
# --8<-- [end:divergence]
