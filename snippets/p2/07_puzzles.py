# %% [markdown]
# # P2 · 内核谜题 · Kernel puzzles
#
# 每道题给出一个内核的骨架：改写它所在的单元格，运行，`check` 会在模拟器里启动你的内核，
# 告诉你哪里不对（错误的值、越界、竞争、合并效率、bank 冲突……），或者“通过”。
# `show(PUZZLES["double"].hint)` 给出提示，`print(PUZZLES["double"].source("solution"))` 给出一种解法。
# 想看中文反馈，先运行 `set_language("zh")`。
# Each puzzle gives a kernel skeleton: edit its cell and run it. `check` launches your kernel in the
# simulator and tells you what is wrong (a value, an out-of-bounds access, a race, coalescing, a bank
# conflict…) or that it passes. `show(PUZZLES["double"].hint)` gives a hint and
# `print(PUZZLES["double"].source("solution"))` one solution. `set_language("zh")` switches the
# feedback to Chinese.
#
# Run it alone: `python snippets/p2/07_puzzles.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs.docs import set_language, show
from simtdocs.puzzles import PUZZLES
# --8<-- [end:setup]

# %% [markdown]
# ## 1. 映射：把向量翻倍 · Map: double a vector

# %%
show(PUZZLES["double"])

# %%
# --8<-- [start:double]
def double(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    # TODO: every thread writes out[i] = 2 * a[i]


show(PUZZLES["double"].check(double))
# --8<-- [end:double]

# %% [markdown]
# ## 2. 边界检查：线程比元素多 · Guard: more threads than elements

# %%
show(PUZZLES["guard"])

# %%
# --8<-- [start:guard]
def add(blk, a, b, out, n):
    i = blk.bx * blk.bdx + blk.tx  # TODO: threads with no element must do nothing
    blk.store(out, i, blk.load(a, i) + blk.load(b, i))


show(PUZZLES["guard"].check(add))
# --8<-- [end:guard]

# %% [markdown]
# ## 3. 二维下标：按列加偏置 · 2-D indexing: a bias per column

# %%
show(PUZZLES["add_bias"])

# %%
# --8<-- [start:add_bias]
def add_bias(blk, a, bias, out, M, N):
    row = blk.ty  # TODO: the row and column of this thread in the whole grid
    col = blk.tx
    m = (row < M) & (col < N)
    blk.store(out, (row, col), blk.load(a, (row, col), mask=m) + blk.load(bias, col, mask=m), mask=m)


show(PUZZLES["add_bias"].check(add_bias))
# --8<-- [end:add_bias]

# %% [markdown]
# ## 4. 网格跨步循环：线程比元素少 · Grid-stride loop: fewer threads than elements

# %%
show(PUZZLES["grid_stride"])

# %%
# --8<-- [start:grid_stride]
def square(blk, a, out, n):
    i = blk.bx * blk.bdx + blk.tx  # TODO: a grid-stride loop over all n elements
    m = i < n
    v = blk.load(a, i, mask=m)
    blk.store(out, i, v * v, mask=m)


show(PUZZLES["grid_stride"].check(square))
# --8<-- [end:grid_stride]

# %% [markdown]
# ## 5. warp 洗牌：一个 warp 的和 · Warp shuffle: the sum of a warp

# %%
show(PUZZLES["warp_sum"])

# %%
# --8<-- [start:warp_sum]
def warp_sum(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    # TODO: add up the 32 values of the warp with blk.shfl_down
    first = blk.lane == 0
    blk.store(out, i // 32, v, mask=first)


show(PUZZLES["warp_sum"].check(warp_sum))
# --8<-- [end:warp_sum]

# %% [markdown]
# ## 6. 共享内存 tile：滑动窗口 · Shared-memory tile: a sliding window

# %%
show(PUZZLES["window_sum"])

# %%
# --8<-- [start:window_sum]
def window_sum(blk, a, out, n):
    tile = blk.shared(blk.bdx + 2, np.float32, name="tile")  # the block's elements and 2 more
    i = blk.bx * blk.bdx + blk.tx
    # TODO: fill the tile (with its halo), sync, then out[i] = tile[t] + tile[t+1] + tile[t+2]


show(PUZZLES["window_sum"].check(window_sum))
# --8<-- [end:window_sum]

# %% [markdown]
# ## 7. 改错：漏掉的 sync · Fix: the missing sync

# %%
show(PUZZLES["reverse_blocks"])

# %%
# --8<-- [start:reverse_blocks]
def reverse_blocks(blk, a, out):
    tile = blk.shared(blk.bdx, np.float32, name="tile")
    t = blk.tx
    i = blk.bx * blk.bdx + t
    blk.store(tile, t, blk.load(a, i))
    blk.store(out, i, blk.load(tile, blk.bdx - 1 - t))


show(PUZZLES["reverse_blocks"].check(reverse_blocks))
# --8<-- [end:reverse_blocks]

# %% [markdown]
# ## 8. 改错：按列映射线程 · Fix: a column-major mapping

# %%
show(PUZZLES["scale"])

# %%
# --8<-- [start:scale]
def scale(blk, A, B, N):
    row = blk.bx * blk.bdx + blk.tx
    col = blk.by * blk.bdy + blk.ty
    blk.store(B, (row, col), 3 * blk.load(A, (row, col)))


show(PUZZLES["scale"].check(scale))
# --8<-- [end:scale]

# %% [markdown]
# ## 9. 改错：32 路冲突的 tile · Fix: the 32-way tile

# %%
show(PUZZLES["transpose"])

# %%
# --8<-- [start:transpose]
def transpose(blk, A, B, N):
    tile = blk.shared((32, 32), np.float32, name="tile")
    x = blk.bx * 32 + blk.tx  # blocks of 32×8 threads move 32×32 tiles
    y = blk.by * 32 + blk.ty
    for j in range(0, 32, 8):
        blk.store(tile, (blk.ty + j, blk.tx), blk.load(A, (y + j) * N + x))
    blk.sync()
    x = blk.by * 32 + blk.tx
    y = blk.bx * 32 + blk.ty
    for j in range(0, 32, 8):
        blk.store(B, (y + j) * N + x, blk.load(tile, (blk.tx, blk.ty + j)))


show(PUZZLES["transpose"].check(transpose))
# --8<-- [end:transpose]

# %% [markdown]
# ## 10. 预算：sector 数 · Budget: sectors

# %%
show(PUZZLES["pair_sum"])

# %%
# --8<-- [start:pair_sum]
def pair_sum(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    left = blk.load(a, 2 * i)
    right = blk.load(a, 2 * i + 1)
    blk.store(out, i, left + right)


show(PUZZLES["pair_sum"].check(pair_sum))
# --8<-- [end:pair_sum]

# %% [markdown]
# ## 11. 预算：共享内存 wavefront 数 · Budget: shared wavefronts

# %%
show(PUZZLES["block_sum"])

# %%
# --8<-- [start:block_sum]
def block_sum(blk, x, out):
    sdata = blk.shared(blk.bdx, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = 1
    while s < blk.bdx:
        index = 2 * s * tid
        w = index < blk.bdx
        v = blk.load(sdata, index, mask=w) + blk.load(sdata, index + s, mask=w)
        blk.store(sdata, index, v, mask=w)
        blk.sync()
        s *= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)


show(PUZZLES["block_sum"].check(block_sum))
# --8<-- [end:block_sum]
