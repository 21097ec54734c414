# %% [markdown]
# # P2 · 代码 07：内核谜题 · Code 07: kernel puzzles
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

from simtdocs.display import set_language, show
from simtdocs.puzzles import PUZZLES
# --8<-- [end:setup]

# %% [markdown]
# ## 1. 映射：把向量翻倍 · Map: double a vector

# %%
show(PUZZLES["double"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
from simtdocs.display import expand_snippets

exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_threads.py:double"'))

# %%
show(PUZZLES["double"].check(double))

# %% [markdown]
# ## 2. 边界检查：线程比元素多 · Guard: more threads than elements

# %%
show(PUZZLES["guard"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_threads.py:guard"'))

# %%
show(PUZZLES["guard"].check(add))

# %% [markdown]
# ## 3. 二维下标：按列加偏置 · 2-D indexing: a bias per column

# %%
show(PUZZLES["add_bias"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_threads.py:add_bias"'))

# %%
show(PUZZLES["add_bias"].check(add_bias))

# %% [markdown]
# ## 4. 网格跨步循环：线程比元素少 · Grid-stride loop: fewer threads than elements

# %%
show(PUZZLES["grid_stride"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_threads.py:grid_stride"'))

# %%
show(PUZZLES["grid_stride"].check(square))

# %% [markdown]
# ## 5. warp 洗牌：一个 warp 的和 · Warp shuffle: the sum of a warp

# %%
show(PUZZLES["warp_sum"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_threads.py:warp_sum"'))

# %%
show(PUZZLES["warp_sum"].check(warp_sum))

# %% [markdown]
# ## 6. 共享内存 tile：滑动窗口 · Shared-memory tile: a sliding window

# %%
show(PUZZLES["window_sum"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_memory.py:window_sum"'))

# %%
show(PUZZLES["window_sum"].check(window_sum))

# %% [markdown]
# ## 7. 改错：漏掉的 sync · Fix: the missing sync

# %%
show(PUZZLES["reverse_blocks"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_memory.py:reverse_blocks"'))

# %%
show(PUZZLES["reverse_blocks"].check(reverse_blocks))

# %% [markdown]
# ## 8. 改错：按列映射线程 · Fix: a column-major mapping

# %%
show(PUZZLES["scale"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_memory.py:scale"'))

# %%
show(PUZZLES["scale"].check(scale))

# %% [markdown]
# ## 9. 改错：32 路冲突的 tile · Fix: the 32-way tile

# %%
show(PUZZLES["transpose"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_memory.py:transpose"'))

# %%
show(PUZZLES["transpose"].check(transpose))

# %% [markdown]
# ## 10. 预算：sector 数 · Budget: sectors

# %%
show(PUZZLES["pair_sum"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_memory.py:pair_sum"'))

# %%
show(PUZZLES["pair_sum"].check(pair_sum))

# %% [markdown]
# ## 11. 预算：共享内存 wavefront 数 · Budget: shared wavefronts

# %%
show(PUZZLES["block_sum"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_memory.py:block_sum"'))

# %%
show(PUZZLES["block_sum"].check(block_sum))

# %% [markdown]
# ## 12. warp 扫描：用 shfl_up 求前缀和 · Warp scan: prefix sums with shfl_up

# %%
show(PUZZLES["warp_scan"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/warp_level.py:warp_scan"'))

# %%
show(PUZZLES["warp_scan"].check(warp_scan))

# %% [markdown]
# ## 13. 改错：每个 lane 都要拿到最大值 · Fix: every lane needs the maximum

# %%
show(PUZZLES["warp_max"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/warp_level.py:warp_max"'))

# %%
show(PUZZLES["warp_max"].check(warp_max))

# %% [markdown]
# ## 14. 投票：warp 内的流压缩 · Ballot: stream compaction in a warp

# %%
show(PUZZLES["compact"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/warp_level.py:compact"'))

# %%
show(PUZZLES["compact"].check(compact))

# %% [markdown]
# ## 15. 原子操作：共享内存直方图 · Atomics: a shared-memory histogram

# %%
show(PUZZLES["histogram"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/warp_level.py:histogram"'))

# %%
show(PUZZLES["histogram"].check(histogram))

# %% [markdown]
# ## 16. 改错：最后一个 warp 需要 __syncwarp · Fix: the last warp needs __syncwarp

# %%
show(PUZZLES["tail_sum"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/warp_level.py:tail_sum"'))

# %%
show(PUZZLES["tail_sum"].check(tail_sum))

# %% [markdown]
# ## 17. atomicCAS：会回绕的取号计数器 · atomicCAS: a ticket counter that wraps

# %%
show(PUZZLES["tickets"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/warp_level.py:tickets"'))

# %%
show(PUZZLES["tickets"].check(tickets))
