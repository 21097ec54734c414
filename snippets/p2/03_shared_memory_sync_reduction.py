# %% [markdown]
# # P2 · 代码 03：共享内存、同步与归约 · Code 03: shared memory, synchronisation and reduction
#
# bank 冲突与跨度；漏写 `__syncthreads()` 的数组反转；并行归约的五个版本；warp shuffle。
# Bank conflicts by stride; reversing an array without `__syncthreads()`; five versions of a
# parallel reduction; warp shuffles. Every counter below is computed by simtdocs.
#
# Run it alone: `python snippets/p2/03_shared_memory_sync_reduction.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import H100, launch
from simtdocs.cuda import RawModule
from simtdocs.display import show
from simtdocs.lectures.p2 import shared_memory as lecture  # the tables and the figure of this script
# --8<-- [end:setup]


# %% [markdown]
# ## 演示 1：bank 冲突 · Demo 1: bank conflicts
#
# 表格和图由 simtdocs.lectures.p2.shared_memory 生成；`_glue` 小节把正文引用的数交给页面。
# The tables and the figure are made by simtdocs.lectures.p2.shared_memory; the `_glue` sections
# hand the numbers the prose quotes to the page.

# %%
# --8<-- [start:bank_kernel]
def bank_kernel(blk, row_words):
    """One warp reads one column of a shared tile whose rows are `row_words` words long."""
    tile = blk.shared((32, row_words), np.float32, name="tile")
    for r in range(32):                              # fill the tile (row by row) first,
        blk.store(tile, (r, blk.tx % row_words), 1.0, mask=blk.tx < row_words)
    blk.sync()                                       # so that every word has been written
    blk.load(tile, (blk.tx, 0))                      # lane l reads tile[l][0]: word l * row_words
# --8<-- [end:bank_kernel]


# %%
# --8<-- [start:banks]
EXAMPLES = {"pow2": 64, "odd": 65, "even": 66}  # the three row lengths the prose (and exercise 4) discusses
runs = {s: launch(bank_kernel, grid=1, block=32, args=(s,)) for s in (1, 2, 3, 4, 8, 16, 32, 33, *EXAMPLES.values())}
show(lecture.bank_table(runs))
# --8<-- [end:banks]

# %%
# --8<-- [start:banks_glue]
from simtdocs.display import glue

for key, s in EXAMPLES.items():
    glue(f"p2_stride_{key}", s)
    glue(f"p2_ways_{key}", lecture.column_ways(runs[s]), ".0f")
glue("p2_stride_even_mod", EXAMPLES["even"] % 32)
# --8<-- [end:banks_glue]


# %%
# --8<-- [start:bank_figure]
show(lecture.bank_figure(runs))
# --8<-- [end:bank_figure]


# %% [markdown]
# ## 演示 2：忘了 `__syncthreads()` · Demo 2: the missing `__syncthreads()`

# %%
# --8<-- [start:reverse]
def reverse(blk, d, sync):
    buf = blk.shared(256, np.float32, name="buf")
    t = blk.tx
    blk.store(buf, t, blk.load(d, t))
    if sync:
        blk.sync()                                   # the line the buggy version forgets
    mirror = 255 - t                                 # written by another warp, for every t
    blk.store(d, t, blk.load(buf, mirror))


threads = 256  # the size of buf in the kernel
in_c = RawModule(path="snippets/p2/shared_memory.cu")  # the C shown above, and the same without sync
runs = {}
for sync in (True, False):
    d = np.arange(threads, dtype=np.float32)
    st = in_c.get_function("reverse" if sync else "reverse_unsynced")((1,), (threads,), (d,))
    runs[sync] = (st, np.array_equal(d, np.arange(threads)[::-1]))
    masks = launch(reverse, grid=1, block=threads, args=(np.arange(threads, dtype=np.float32), sync))
    assert masks.totals == st.totals and len(masks.races) == len(st.races)  # the mask form counts the same
show(lecture.reverse_table(runs))
print("```text", *st.races, "```", sep="\n")  # the races of the run without sync
# --8<-- [end:reverse]

# %%
# --8<-- [start:reverse_glue]
from simtdocs.display import glue

glue("p2_reverse_race", runs[False][0].races[0].message)
glue("p2_rev_threads", threads)
glue("p2_rev_warps", threads // 32)
glue("p2_rev_last", threads - 1)  # thread 0 reads what this thread wrote
glue("p2_rev_last_warp", (threads - 1) // 32)
# --8<-- [end:reverse_glue]


# %% [markdown]
# ## 演示 3：并行归约的五个版本 · Demo 3: five versions of a parallel reduction
#
# 每个线程块把 `x` 中属于它的部分归约成 `out` 里的一个部分和；部分和由主机相加。
# 除了模拟器能看到的 load、store、分支和屏障，每个版本还用 `blk.alu` 申报自己的算术：
# 每一步，每个线程一条下标运算指令（v1 的取模、v2 的 `2*s*tid`、v3–v5 的 `tid + s`），
# 干活的线程再加一条加法。循环控制和编译器并进 load 的地址运算不计。
# Each block reduces its part of `x` to one partial sum in `out`; the host adds the partial
# sums. Besides the loads, stores, branches and barriers the simulator sees, every version
# declares its arithmetic with `blk.alu`: per step, one instruction of index arithmetic for
# every thread (the modulo of v1, `2*s*tid` of v2, `tid + s` of v3–v5) and one add for the
# threads that work. Loop control and address arithmetic the compiler folds into the load
# are not counted.

# %%
# --8<-- [start:reduce_v1]
def reduce_v1(blk, x, out):
    """Interleaved addressing: thread tid works when tid is a multiple of 2s (divergent)."""
    sdata = blk.shared(256, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = 1
    while s < blk.bdx:
        blk.alu(1)                                   # tid % (2 * s)
        w = blk.branch(tid % (2 * s) == 0)           # if (tid % (2*s) == 0)
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.alu(1, mask=w)                           # the add
        blk.store(sdata, tid, v, mask=w)
        blk.sync()
        s *= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)
# --8<-- [end:reduce_v1]


# %%
# --8<-- [start:reduce_v2]
def reduce_v2(blk, x, out):
    """Strided index: contiguous threads work (no divergence), but with a stride of 2s words."""
    sdata = blk.shared(256, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = 1
    while s < blk.bdx:
        index = 2 * s * tid
        blk.alu(1)                                   # index = 2 * s * tid
        w = blk.branch(index < blk.bdx)              # if (index < blockDim.x)
        v = blk.load(sdata, index, mask=w) + blk.load(sdata, index + s, mask=w)
        blk.alu(1, mask=w)
        blk.store(sdata, index, v, mask=w)
        blk.sync()
        s *= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)
# --8<-- [end:reduce_v2]


# %%
# --8<-- [start:reduce_v3]
def reduce_v3(blk, x, out):
    """Sequential addressing: the first s threads add the upper half onto the lower half."""
    sdata = blk.shared(256, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = blk.bdx // 2
    while s > 0:
        blk.alu(1)                                   # tid + s
        w = blk.branch(tid < s)                      # if (tid < s)
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.alu(1, mask=w)
        blk.store(sdata, tid, v, mask=w)
        blk.sync()
        s //= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)
# --8<-- [end:reduce_v3]


# %%
# --8<-- [start:reduce_v4]
def reduce_v4(blk, x, out):
    """First add during the load: each block sums 2 × 256 elements, half the blocks."""
    sdata = blk.shared(256, np.float32, name="sdata")
    tid = blk.tx
    i = blk.bx * (2 * blk.bdx) + tid
    v = blk.load(x, i) + blk.load(x, i + blk.bdx)
    blk.alu(1)                                       # the first add
    blk.store(sdata, tid, v)
    blk.sync()
    s = blk.bdx // 2
    while s > 0:
        blk.alu(1)
        w = blk.branch(tid < s)
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.alu(1, mask=w)
        blk.store(sdata, tid, v, mask=w)
        blk.sync()
        s //= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)
# --8<-- [end:reduce_v4]


# %%
# --8<-- [start:reduce_v5]
def reduce_v5(blk, x, out):
    """As v4 down to 64 partial sums; then warp 0 finishes in registers with shuffles."""
    sdata = blk.shared(256, np.float32, name="sdata")
    tid = blk.tx
    i = blk.bx * (2 * blk.bdx) + tid
    v = blk.load(x, i) + blk.load(x, i + blk.bdx)
    blk.alu(1)
    blk.store(sdata, tid, v)
    blk.sync()
    s = blk.bdx // 2
    while s > 32:
        blk.alu(1)
        w = blk.branch(tid < s)
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.alu(1, mask=w)
        blk.store(sdata, tid, v, mask=w)
        blk.sync()
        s //= 2
    w = blk.branch(tid < 32)                         # warp 0 only: a warp-uniform branch
    v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + 32, mask=w)
    blk.alu(1, mask=w)
    for delta in (16, 8, 4, 2, 1):                   # __shfl_down_sync(FULL_MASK, v, delta)
        v = v + blk.shfl_down(v, delta, mask=w)
        blk.alu(1, mask=w)
    blk.store(out, blk.bx, v, mask=tid == 0)
# --8<-- [end:reduce_v5]


# %%
# --8<-- [start:reduction_launch]
LOG2_N, threads = 18, 256  # 2^18 inputs; blocks of 256 threads (the size of sdata in the kernels)
n = 1 << LOG2_N
x = np.random.default_rng(6).random(n, dtype=np.float32)
versions = {"v1": (reduce_v1, 1), "v2": (reduce_v2, 1), "v3": (reduce_v3, 1),  # kernel, elements per thread
            "v4": (reduce_v4, 2), "v5": (reduce_v5, 2)}
runs = {}
for name, (kernel, per_thread) in versions.items():
    out = np.zeros(n // (threads * per_thread), np.float32)
    st = launch(kernel, grid=out.size, block=threads, args=(x, out))
    runs[name] = (st, np.isclose(out.astype(np.float64).sum(), x.astype(np.float64).sum(), rtol=1e-5))
show(lecture.reduction_table(x, runs, H100))  # H100: the device whose bandwidth is the floor
# --8<-- [end:reduction_launch]

# %%
# --8<-- [start:reduction_glue]
from simtdocs.display import glue

red = {name: st for name, (st, ok) in runs.items()}
assert red["v2"].warp_instructions == red["v3"].warp_instructions
glue("p2_red_read_ns", x.nbytes / H100.memory_bandwidth * 1e9, ",.0f")  # the floor: read every input byte once
glue("p2_red_mib", x.nbytes / 2**20, ".0f")
glue("p2_red_log2n", LOG2_N)
glue("p2_red_threads", threads)
glue("p2_red_s0", threads // 2)  # the first step of versions 3-5
glue("p2_red_v4_elems", 2 * threads)  # elements per block from version 4 on
glue("p2_red_v5_left", 2 * 32)  # version 5 hands the last 64 partial sums to warp 0
for v, st in red.items():
    glue(f"p2_red_{v}_instr", st.warp_instructions)
    glue(f"p2_red_{v}_issue_ns", st.estimate_time().issue_s * 1e9, ",.0f")
    glue(f"p2_red_{v}_ways", st.shared_ways, ".2f")
    glue(f"p2_red_{v}_div", st.divergent_branches)
glue("p2_red_div_removed", 1 - red["v2"].divergent_branches / red["v1"].divergent_branches, ".0%")
glue("p2_red_v5_share", red["v5"].warp_instructions / red["v1"].warp_instructions, ".0%")
# --8<-- [end:reduction_glue]


# %% [markdown]
# ## 演示 4：warp shuffle · Demo 4: warp shuffles

# %%
# --8<-- [start:shuffle]
def shuffle_steps(blk, x, trace):
    v = blk.load(x, blk.tx)
    blk.store(trace, blk.tx, v)
    for step, delta in enumerate((16, 8, 4, 2, 1), start=1):
        v = v + blk.shfl_down(v, delta)              # lane l adds the value of lane l + delta
        blk.store(trace, step * 32 + blk.tx, v)


x = np.arange(32, dtype=np.float32)
trace = np.zeros(6 * 32, np.float32)
st = launch(shuffle_steps, grid=1, block=32, args=(x, trace))
trace = trace.reshape(6, 32)  # one row per round, the first the start
assert trace[-1, 0] == x.sum()  # lane 0 holds the sum
show(lecture.shuffle_table(trace))
# --8<-- [end:shuffle]

# %%
# --8<-- [start:shuffle_glue]
from simtdocs.display import glue

glue("p2_shfl_sum", int(trace[-1, 0]))
glue("p2_shfl_shuffles", st.shuffles)
# --8<-- [end:shuffle_glue]


# %% [markdown]
# ## 演示 5：没有 `__syncwarp()` 的最后一个 warp · Demo 5: the last warp without `__syncwarp()`
#
# 2007 年的写法让最后 32 个线程不加同步地在共享内存里归约。Volta 以后同一个 warp 的 lane 并不锁步，
# 模拟器的 racecheck 像 compute-sanitizer 一样报告这种竞争；每一步前后加上 `__syncwarp()`，竞争就没有了。
# The 2007 code lets the last 32 threads reduce in shared memory with no synchronisation. Since
# Volta the lanes of a warp are not in lockstep; the simulator's racecheck reports the hazard
# as compute-sanitizer does, and a `__syncwarp()` around each step removes it.

# %%
# --8<-- [start:warp_tail]
def warp_tail(blk, x, out, syncwarp):
    sdata = blk.shared(64, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * 64 + tid) + blk.load(x, blk.bx * 64 + tid + 32))
    blk.store(sdata, tid + 32, 0.0)
    if syncwarp:
        blk.syncwarp()
    for s in (16, 8, 4, 2, 1):
        w = tid < s
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        if syncwarp:
            blk.syncwarp()
        blk.store(sdata, tid, v, mask=w)
        if syncwarp:
            blk.syncwarp()
    blk.store(out, blk.bx, blk.load(sdata, tid, mask=tid == 0), mask=tid == 0)


blocks = 8
x = np.random.default_rng(7).random(64 * blocks, dtype=np.float32)
tails = {}
for syncwarp in (False, True):
    out = np.zeros(blocks, np.float32)
    tails[syncwarp] = launch(warp_tail, grid=blocks, block=32, args=(x, out, syncwarp))
    assert np.allclose(out, x.reshape(blocks, 64).sum(axis=1), rtol=1e-5)
# --8<-- [end:warp_tail]


# %%
# --8<-- [start:warp_tail_glue]
from simtdocs.display import glue

glue("p2_tail_race", tails[False].races[0].message)
glue("p2_tail_races", len(tails[False].races))
glue("p2_tail_races_synced", len(tails[True].races))
glue("p2_tail_blocks", blocks)
# --8<-- [end:warp_tail_glue]
