# %% [markdown]
# # P2 · 代码 09：按 CUDA 的写法写内核 · Code 09: writing it the CUDA way
#
# 同一个内核的三种写法：按线程写的 Python（`@cuda.jit`，numba.cuda 的写法），warp 实际执行的掩码形式，
# 以及用 `blk` 亲手写的同一组掩码；两者的计数器完全相同。最后用谜题的 `check` 评判一个按线程写的答案。
# One kernel three ways: per-thread Python (`@cuda.jit`, as numba.cuda writes it), the mask form the
# warp executes, and the same masks written by hand with `blk`; their counters are identical. Last,
# a puzzle's `check` grades an answer written per thread.
#
# Run it alone: `python snippets/p2/09_cuda_way.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import cdiv, cuda, launch
from simtdocs.display import show
from simtdocs.lectures.p2 import cuda_way as lecture
# --8<-- [end:setup]


# %% [markdown]
# ## 按线程写 · Per thread

# %%
# --8<-- [start:kernel]
@cuda.jit
def add_or_sub(a, b, c, n):
    i = cuda.grid(1)
    if i < n:
        x = a[i]
        y = b[i]
        if i % 2 == 0:
            c[i] = x + y
        else:
            c[i] = x - y
# --8<-- [end:kernel]


# %%
# --8<-- [start:launch]
n, threads = 1000, 256
a = np.random.default_rng(0).random(n, dtype=np.float32)
b = np.random.default_rng(1).random(n, dtype=np.float32)
c = np.zeros(n, np.float32)
stats = add_or_sub[cdiv(n, threads), threads](a, b, c, n)
assert np.array_equal(c, np.where(np.arange(n) % 2 == 0, a + b, a - b))
# --8<-- [end:launch]


# %% [markdown]
# ## warp 执行的掩码形式 · The mask form the warp executes

# %%
# --8<-- [start:masks]
print("```text", add_or_sub.as_masks().rstrip(), "```", sep="\n")
# --8<-- [end:masks]


# %% [markdown]
# ## 用 blk 亲手写 · By hand with blk

# %%
# --8<-- [start:twin]
def add_or_sub_blk(blk, a, b, c, n):
    i = blk.bx * blk.bdx + blk.tx
    inside = blk.branch(i < n)
    x = blk.load(a, i, mask=inside)
    y = blk.load(b, i, mask=inside)
    even = blk.branch(i % 2 == 0, mask=inside)
    blk.store(c, i, x + y, mask=even)
    odd = inside & ~even
    blk.store(c, i, x - y, mask=odd)


c_blk = np.zeros(n, np.float32)
twin = launch(add_or_sub_blk, grid=cdiv(n, threads), block=threads,
              args=(a, b, c_blk, n))
assert np.array_equal(c_blk, c)
show(lecture.twin_table(stats, twin))
# --8<-- [end:twin]

# %%
# --8<-- [start:twin_glue]
from simtdocs.display import glue

glue("cw_n", n)
glue("cw_threads", threads)
glue("cw_blocks", stats.blocks)
glue("cw_warps", stats.warps)
glue("cw_divergent", stats.divergent_branches)
glue("cw_sectors", stats.sectors)
glue("cw_sectors_array", cdiv(n * a.itemsize, 32))  # one array read or written once, sector by sector
stores = [line.counters for line in stats.lines if line.site.source.startswith("c[i] =")]
glue("cw_store_sectors", sum(st.sectors for st in stores))
glue("cw_coalescing", stats.coalescing_efficiency, ".0%")
glue("cw_simt", stats.simt_efficiency, ".0%")
fields = list(vars(stats.totals))
glue("cw_compared", len(fields))
glue("cw_differ", sum(getattr(stats.totals, f) != getattr(twin.totals, f) for f in fields))
# --8<-- [end:twin_glue]


# %% [markdown]
# ## 谜题的 check 接受两种写法 · A puzzle's check takes either dialect

# %%
# --8<-- [start:check]
from simtdocs.puzzles import PUZZLES


@cuda.jit
def add(a, b, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] + b[i]


verdict = PUZZLES["guard"].check(add)
show(verdict)
# --8<-- [end:check]

# %%
# --8<-- [start:check_glue]
from simtdocs.display import glue

glue("cw_check_divergent", verdict.stats.divergent_branches)
# --8<-- [end:check_glue]
