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

from simtdocs import MemcheckError, cdiv, launch
from simtdocs.cuda import RawModule
from simtdocs.display import show
from simtdocs.lectures.p2 import programming_model as lecture  # the tables of this script

c_kernels = RawModule(path="snippets/p2/programming_model.cu")  # the CUDA C on the page, compiled
# --8<-- [end:setup]


# %% [markdown]
# ## 模拟器里的 GPU · The GPU inside the simulator
#
# 表格由 simtdocs.lectures.p2.programming_model 生成；以 `_glue`（和 `_numbers`）结尾的小节
# 把正文引用的数交给页面。讲义页把两者都折叠在“这张表是怎么做的”里；实验本身是它们前面的那一节。
# The tables are made by simtdocs.lectures.p2.programming_model; the sections ending in `_glue`
# (and `_numbers`) hand the numbers the prose quotes to the page. The lecture page folds both
# under "How this table is made"; the experiment itself is the section before them.

# %%
# --8<-- [start:device]
from simtdocs import H100

show(lecture.device_table(H100))
# --8<-- [end:device]

# %%
# --8<-- [start:device_glue]
from simtdocs.analytic.latency import MEMORY_LATENCY_S
from simtdocs.display import glue

glue("p2_sms", H100.sm_count)
glue("p2_lanes_per_sm", H100.fp32_lanes_per_sm)
glue("p2_schedulers", H100.schedulers_per_sm)
glue("p2_clock_ghz", H100.clock_hz / 1e9, ".2f")
glue("p2_max_warps", H100.max_warps_per_sm)
glue("p2_max_threads", H100.max_threads_per_sm)
glue("p2_max_blocks", H100.max_blocks_per_sm)
glue("p2_registers", H100.registers_per_sm)
glue("p2_register_kb", H100.registers_per_sm * 4 // 1024)
glue("p2_shared_kb", H100.shared_per_sm // 1024)
glue("p2_latency_ns", MEMORY_LATENCY_S * 1e9, ".0f")
glue("p2_latency_cycles", MEMORY_LATENCY_S * H100.clock_hz, ",.0f")  # the same latency in cycles of this clock
glue("p2_inflight_mb", H100.memory_bandwidth * MEMORY_LATENCY_S / 1e6, ".1f")
# --8<-- [end:device_glue]


# %% [markdown]
# ## 演示 1：向量加法与块大小 · Demo 1: vector add and the block size

# %%
# --8<-- [start:c_launch]
n = 1000
a = np.random.default_rng(0).random(n, dtype=np.float32)
b = np.random.default_rng(1).random(n, dtype=np.float32)
c = np.zeros(n, np.float32)
vector_add_c = c_kernels.get_function("vector_add")
st = vector_add_c((cdiv(n, 256),), (256,), (a, b, c, np.int32(n)))  # grid, block, arguments
assert np.array_equal(c, a + b)
print(f"```text\n{st}\n```")
# --8<-- [end:c_launch]

# %%
# --8<-- [start:c_launch_glue]
from simtdocs.display import glue

tail = n % st.block[0]                     # threads of the last block with an element
glue("p2_va_warp", tail // 32)             # the warp of that block that is only partly inside
glue("p2_va_tail", 32 - tail % 32)         # its threads past the end
assert st.divergent_branches == 1
# --8<-- [end:c_launch_glue]


# %%
# --8<-- [start:kernel]
def vector_add(blk, a, b, c, n):
    gid = blk.bx * blk.bdx + blk.tx        # global index: an array with one entry per thread
    inside = blk.branch(gid < n)           # "if (gid < n)" becomes a mask over the threads
    total = blk.load(a, gid, mask=inside) + blk.load(b, gid, mask=inside)
    blk.store(c, gid, total, mask=inside)  # threads outside the mask touch no memory
# --8<-- [end:kernel]


# %%
# --8<-- [start:block_sizes]
n = 10_000
a = np.random.default_rng(0).random(n, dtype=np.float32)
b = np.random.default_rng(1).random(n, dtype=np.float32)
runs = {}
for threads in (100, 128, 256, 512, 1024):  # the first is not a multiple of 32; the rest are
    c = np.zeros(n, np.float32)
    runs[threads] = c_kernels.get_function("vector_add")((cdiv(n, threads),), (threads,), (a, b, c, np.int32(n)))
    assert np.array_equal(c, a + b)
    masks = launch(vector_add, grid=cdiv(n, threads), block=threads, args=(a, b, c, n))
    assert masks.totals == runs[threads].totals  # the mask form counts what the C does
show(lecture.block_size_table(runs))
# --8<-- [end:block_sizes]

# %%
# --8<-- [start:block_sizes_glue]
from simtdocs.display import glue

sizes = list(runs)
odd, st = sizes[0], runs[sizes[0]]  # the first size is the one that is not a multiple of 32
glue("p2_bs100_simt", st.simt_efficiency, ".0%")
glue("p2_bs100_coalescing", st.coalescing_efficiency, ".0%")
glue("p2_bs100_last_warp", odd % 32)
glue("p2_bs100_warps", cdiv(odd, 32))
glue("p2_bs100_bytes", odd * a.itemsize)  # block k starts at this many bytes times k
glue("p2_bs100_offset", odd * a.itemsize % 32)  # how far an odd block's start is off a sector
glue("p2_bs_min_simt", min(runs[t].simt_efficiency for t in sizes[1:]), ".1%")
glue("p2_bs_n", a.size)
glue("p2_bs_odd", odd)
glue("p2_bs_lo", sizes[1])
glue("p2_bs_hi", sizes[-1])
# --8<-- [end:block_sizes_glue]


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
    print(f"```text\n{err}\n```")  # the report, as a text block on the page
# --8<-- [end:unchecked]


# %%
# --8<-- [start:unchecked_numbers]
from simtdocs.display import glue

glue("p2_oob_n", n)
glue("p2_oob_threads", threads)
glue("p2_oob_blocks", cdiv(n, threads))
glue("p2_oob_first", n - (cdiv(n, threads) - 1) * threads)  # first thread of the last block past the end
glue("p2_oob_last", threads - 1)
glue("p2_oob_reads", f"`a[{n}]`")  # the first element past the end...
glue("p2_oob_reads_end", f"`a[{cdiv(n, threads) * threads - 1}]`")  # ...and the last one the grid touches
# --8<-- [end:unchecked_numbers]


# %% [markdown]
# ## 演示 2b：窄整数与 C 的整型提升 · Demo 2b: narrow integers and C's integer promotion
#
# 下标从一张 `uint8` 表里读出来再乘 4。C 先把 `unsigned char` 提升成 `int` 再算，numpy 却在 8 位里算、悄悄回绕；
# 模拟器在 load 这一步照 C 的规矩办：窄整数读出来就是 `int32`。
# An index read from a `uint8` table, times 4. C promotes the `unsigned char` to `int` first;
# numpy computes in 8 bits and wraps around without a word. The simulator follows C where it
# hands the kernel a value: a narrow integer arrives from a load as `int32`.

# %%
# --8<-- [start:promotion]
def gather4(blk, idx, a, out):
    t = blk.bx * blk.bdx + blk.tx
    j = blk.load(idx, t)
    blk.store(out, t, blk.load(a, j * 4))


rng = np.random.default_rng(8)
idx = rng.permutation(256).astype(np.uint8)
a = rng.random(4 * 256, dtype=np.float32)
out = np.zeros(256, np.float32)
launch(gather4, grid=1, block=256, args=(idx, a, out))
right = np.count_nonzero(out == a[idx.astype(np.int64) * 4])
wrapped = np.count_nonzero(idx * 4 != idx.astype(np.int64) * 4)
# --8<-- [end:promotion]


# %%
# --8<-- [start:promotion_glue]
from simtdocs.display import glue

glue("p2_u8_right", right)
glue("p2_u8_wrapped", wrapped)
glue("p2_u8_lanes", idx.size)
glue("p2_u8_first_wrap", (np.iinfo(np.uint8).max + 1) // 4)
example = 200
glue("p2_u8_expr", f"`{example} * 4`")
glue("p2_u8_example", int((np.array([example], np.uint8) * 4)[0]))
# --8<-- [end:promotion_glue]


# %% [markdown]
# ## 演示 3：二维网格 · Demo 3: 2-D grids

# %%
# --8<-- [start:bias_kernels]
def bias_add(blk, X, bias, M, N):
    r = blk.by * blk.bdy + blk.ty          # row    from y
    c = blk.bx * blk.bdx + blk.tx          # column from x: neighbours in x are neighbours in memory
    m = blk.branch((r < M) & (c < N))      # if (row < M && col < N)
    v = blk.load(X, r * N + c, mask=m) + blk.load(bias, r, mask=m)
    blk.store(X, r * N + c, v, mask=m)


def bias_add_swapped(blk, X, bias, M, N):
    r = blk.bx * blk.bdx + blk.tx          # row    from x: neighbours in x are N elements apart
    c = blk.by * blk.bdy + blk.ty          # column from y
    m = blk.branch((r < M) & (c < N))
    v = blk.load(X, r * N + c, mask=m) + blk.load(bias, r, mask=m)
    blk.store(X, r * N + c, v, mask=m)
# --8<-- [end:bias_kernels]


# %%
# --8<-- [start:bias_launch]
M, N = 100, 70
bx, by = 16, 16  # block shape
X0 = np.random.default_rng(2).random((M, N), dtype=np.float32)
bias = np.random.default_rng(3).random(M, dtype=np.float32)
runs = {}
for kernel, grid in ((bias_add, (cdiv(N, bx), cdiv(M, by))),
                     (bias_add_swapped, (cdiv(M, bx), cdiv(N, by)))):
    X = X0.copy()
    st = c_kernels.get_function(kernel.__name__)(grid, (bx, by), (X.reshape(-1), bias, np.int32(M), np.int32(N)))
    runs[kernel.__name__] = (grid, st, np.array_equal(X, X0 + bias[:, None]))
    X = X0.copy()
    masks = launch(kernel, grid=grid, block=(bx, by), args=(X.reshape(-1), bias, M, N))
    assert masks.totals == st.totals  # the mask form counts what the C does
show(lecture.bias_table(runs))
# --8<-- [end:bias_launch]

# %%
# --8<-- [start:bias_glue]
from simtdocs.display import glue

glue("p2_bias_M", M)
glue("p2_bias_N", N)
glue("p2_bias_block", f"{bx}×{by}")
for name, tag in (("bias_add", "right"), ("bias_add_swapped", "swapped")):
    grid, st, ok = runs[name]
    glue(f"p2_bias_sectors_{tag}", st.sectors)
    glue(f"p2_bias_coalescing_{tag}", st.coalescing_efficiency, ".0%")
# --8<-- [end:bias_glue]


# %% [markdown]
# ## 演示 4：grid-stride 循环 · Demo 4: grid-stride loops

# %%
# --8<-- [start:grid_stride]
def scale(blk, x, y, alpha, n):
    stride = blk.gdx * blk.bdx             # threads in the whole grid
    k = blk.bx * blk.bdx + blk.tx
    m = blk.branch(k < n)                  # each thread tests its own k, as the C loop does
    while m.any():                         # until no thread of the block is left in the loop
        blk.store(y, k, alpha * blk.load(x, k, mask=m), mask=m)
        k = k + stride
        m = blk.branch(k < n, mask=m)      # a thread that has left the loop stays out
# --8<-- [end:grid_stride]


# %%
# --8<-- [start:grid_stride_launch]
n = 100_000
x = np.random.default_rng(4).random(n, dtype=np.float32)
runs = {}
for blocks, threads in ((4, 128), (16, 256), (cdiv(n, 256), 256)):
    y = np.zeros(n, np.float32)
    st = c_kernels.get_function("scale")((blocks,), (threads,), (x, y, np.float32(2), np.int32(n)))
    runs[blocks, threads] = (st, np.array_equal(y, np.float32(2) * x))
    masks = launch(scale, grid=blocks, block=threads, args=(x, y, np.float32(2), n))
    assert masks.totals == st.totals  # the mask form counts what the C does
show(lecture.grid_stride_table(n, runs))
# --8<-- [end:grid_stride_launch]

# %%
# --8<-- [start:grid_stride_glue]
from simtdocs.display import glue

requests = {st.requests for st, ok in runs.values()}
assert len(requests) == 1  # the same loads and stores on every grid
glue("p2_gs_requests", requests.pop())
glue("p2_gs_n", n)
glue("p2_gs_last_grid", list(runs)[-1][0])
# --8<-- [end:grid_stride_glue]


# %% [markdown]
# ## 演示 5：分支发散 · Demo 5: branch divergence

# %%
# --8<-- [start:divergence]
def two_paths(blk, a, b, out, pick):
    t = blk.bx * blk.bdx + blk.tx
    if pick == "odd/even":
        cond = blk.tx % 2 == 0             # neighbours disagree: every warp splits
    else:
        cond = (blk.tx // 32) % 2 == 0     # whole warps agree: no warp splits
    on_a = blk.branch(cond)                # if (cond) path_a(...); else path_b(...);
    blk.store(out, t, blk.load(a, t, mask=on_a) + np.float32(1), mask=on_a)   # path A
    on_b = ~on_a
    blk.store(out, t, blk.load(b, t, mask=on_b) - np.float32(1), mask=on_b)   # path B


n = 256 * 64
a = np.random.default_rng(5).random(n, dtype=np.float32)
b = np.random.default_rng(6).random(n, dtype=np.float32)
runs = {}
for pick, name in (("odd/even", "two_paths"), ("warp", "two_paths_by_warp")):
    out = np.zeros(n, np.float32)
    runs[pick] = c_kernels.get_function(name)((64,), (256,), (a, b, out))
    masks = launch(two_paths, grid=64, block=256, args=(a, b, out, pick))
    assert masks.totals == runs[pick].totals  # the mask form counts what the C does
show(lecture.divergence_table(runs))
# --8<-- [end:divergence]

# %%
# --8<-- [start:divergence_glue]
from simtdocs.display import glue

for pick, tag in (("odd/even", "split"), ("warp", "uniform")):
    glue(f"p2_div_instr_{tag}", runs[pick].warp_instructions)
    glue(f"p2_div_simt_{tag}", runs[pick].simt_efficiency, ".0%")
# --8<-- [end:divergence_glue]
