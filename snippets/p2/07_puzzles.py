# %% [markdown]
# # P2 · 代码 07：内核谜题 · Code 07: kernel puzzles
#
# 每道题给出一个内核的骨架：改写它所在的单元格，运行，`check` 会在模拟器里启动你的内核，
# 告诉你哪里不对（错误的值、越界、竞争、合并效率、bank 冲突……），或者“通过”。
# `show(PUZZLES["double"].hint)` 给出提示，`print(PUZZLES["double"].source("solution"))` 给出一种解法。
# 想看中文反馈，先运行 `set_language("zh")`。排在最后的 Triton 谜题在 `TRITON_PUZZLES` 里，用法相同。
# Each puzzle gives a kernel skeleton: edit its cell and run it. `check` launches your kernel in the
# simulator and tells you what is wrong (a value, an out-of-bounds access, a race, coalescing, a bank
# conflict…) or that it passes. `show(PUZZLES["double"].hint)` gives a hint and
# `print(PUZZLES["double"].source("solution"))` one solution. `set_language("zh")` switches the
# feedback to Chinese. The Triton puzzles, last, are in `TRITON_PUZZLES`, used the same way.
#
# Run it alone: `python snippets/p2/07_puzzles.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs.cuda import RawModule
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

# %%
# These puzzles' skeletons in CUDA C (the notebook has the .cu file written out in this cell):
# edit a kernel and run this cell again, then the C check under the puzzle's Python one.
# --8<-- [start:c_p2_threads]
p2_threads_cu = RawModule(path="snippets/puzzles/p2_threads.cu")
# --8<-- [end:c_p2_threads]

# %%
# --8<-- [start:c_double]
c_double_vector = p2_threads_cu.get_function("double_vector")
show(PUZZLES["double"].check(c_double_vector))
# --8<-- [end:c_double]

# %% [markdown]
# ## 2. 边界检查：线程比元素多 · Guard: more threads than elements

# %%
show(PUZZLES["guard"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_threads.py:guard"'))

# %%
show(PUZZLES["guard"].check(add))

# %%
# --8<-- [start:c_guard]
c_add = p2_threads_cu.get_function("add")
show(PUZZLES["guard"].check(c_add))
# --8<-- [end:c_guard]

# %% [markdown]
# ## 3. 二维下标：按列加偏置 · 2-D indexing: a bias per column

# %%
show(PUZZLES["add_bias"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_threads.py:add_bias"'))

# %%
show(PUZZLES["add_bias"].check(add_bias))

# %%
# --8<-- [start:c_add_bias]
c_add_bias = p2_threads_cu.get_function("add_bias")
show(PUZZLES["add_bias"].check(c_add_bias))
# --8<-- [end:c_add_bias]

# %% [markdown]
# ## 4. 网格跨步循环：线程比元素少 · Grid-stride loop: fewer threads than elements

# %%
show(PUZZLES["grid_stride"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_threads.py:grid_stride"'))

# %%
show(PUZZLES["grid_stride"].check(square))

# %%
# --8<-- [start:c_grid_stride]
c_square = p2_threads_cu.get_function("square")
show(PUZZLES["grid_stride"].check(c_square))
# --8<-- [end:c_grid_stride]

# %% [markdown]
# ## 5. warp 洗牌：一个 warp 的和 · Warp shuffle: the sum of a warp

# %%
show(PUZZLES["warp_sum"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_threads.py:warp_sum"'))

# %%
show(PUZZLES["warp_sum"].check(warp_sum))

# %%
# --8<-- [start:c_warp_sum]
c_warp_sum = p2_threads_cu.get_function("warp_sum")
show(PUZZLES["warp_sum"].check(c_warp_sum))
# --8<-- [end:c_warp_sum]

# %% [markdown]
# ## 6. 共享内存 tile：滑动窗口 · Shared-memory tile: a sliding window

# %%
show(PUZZLES["window_sum"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_memory.py:window_sum"'))

# %%
show(PUZZLES["window_sum"].check(window_sum))

# %%
# These puzzles' skeletons in CUDA C (the notebook has the .cu file written out in this cell):
# edit a kernel and run this cell again, then the C check under the puzzle's Python one.
# --8<-- [start:c_p2_memory]
p2_memory_cu = RawModule(path="snippets/puzzles/p2_memory.cu")
# --8<-- [end:c_p2_memory]

# %%
# --8<-- [start:c_window_sum]
c_window_sum = p2_memory_cu.get_function("window_sum")
show(PUZZLES["window_sum"].check(c_window_sum))
# --8<-- [end:c_window_sum]

# %% [markdown]
# ## 7. 改错：漏掉的 sync · Fix: the missing sync

# %%
show(PUZZLES["reverse_blocks"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_memory.py:reverse_blocks"'))

# %%
show(PUZZLES["reverse_blocks"].check(reverse_blocks))

# %%
# --8<-- [start:c_reverse_blocks]
c_reverse_blocks = p2_memory_cu.get_function("reverse_blocks")
show(PUZZLES["reverse_blocks"].check(c_reverse_blocks))
# --8<-- [end:c_reverse_blocks]

# %% [markdown]
# ## 8. 改错：按列映射线程 · Fix: a column-major mapping

# %%
show(PUZZLES["scale"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_memory.py:scale"'))

# %%
show(PUZZLES["scale"].check(scale))

# %%
# --8<-- [start:c_scale]
c_scale = p2_memory_cu.get_function("scale")
show(PUZZLES["scale"].check(c_scale))
# --8<-- [end:c_scale]

# %% [markdown]
# ## 9. 改错：32 路冲突的 tile · Fix: the 32-way tile

# %%
show(PUZZLES["transpose"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_memory.py:transpose"'))

# %%
show(PUZZLES["transpose"].check(transpose))

# %%
# --8<-- [start:c_transpose]
c_transpose = p2_memory_cu.get_function("transpose")
show(PUZZLES["transpose"].check(c_transpose))
# --8<-- [end:c_transpose]

# %% [markdown]
# ## 10. 预算：sector 数 · Budget: sectors

# %%
show(PUZZLES["pair_sum"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_memory.py:pair_sum"'))

# %%
show(PUZZLES["pair_sum"].check(pair_sum))

# %%
# --8<-- [start:c_pair_sum]
c_pair_sum = p2_memory_cu.get_function("pair_sum")
show(PUZZLES["pair_sum"].check(c_pair_sum))
# --8<-- [end:c_pair_sum]

# %% [markdown]
# ## 11. 预算：共享内存 wavefront 数 · Budget: shared wavefronts

# %%
show(PUZZLES["block_sum"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/p2_memory.py:block_sum"'))

# %%
show(PUZZLES["block_sum"].check(block_sum))

# %%
# --8<-- [start:c_block_sum]
c_block_sum = p2_memory_cu.get_function("block_sum")
show(PUZZLES["block_sum"].check(c_block_sum))
# --8<-- [end:c_block_sum]

# %% [markdown]
# ## 12. warp 扫描：用 shfl_up 求前缀和 · Warp scan: prefix sums with shfl_up

# %%
show(PUZZLES["warp_scan"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/warp_level.py:warp_scan"'))

# %%
show(PUZZLES["warp_scan"].check(warp_scan))

# %%
# These puzzles' skeletons in CUDA C (the notebook has the .cu file written out in this cell):
# edit a kernel and run this cell again, then the C check under the puzzle's Python one.
# --8<-- [start:c_warp_level]
warp_level_cu = RawModule(path="snippets/puzzles/warp_level.cu")
# --8<-- [end:c_warp_level]

# %%
# --8<-- [start:c_warp_scan]
c_warp_scan = warp_level_cu.get_function("warp_scan")
show(PUZZLES["warp_scan"].check(c_warp_scan))
# --8<-- [end:c_warp_scan]

# %% [markdown]
# ## 13. 改错：每个 lane 都要拿到最大值 · Fix: every lane needs the maximum

# %%
show(PUZZLES["warp_max"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/warp_level.py:warp_max"'))

# %%
show(PUZZLES["warp_max"].check(warp_max))

# %%
# --8<-- [start:c_warp_max]
c_warp_max = warp_level_cu.get_function("warp_max")
show(PUZZLES["warp_max"].check(c_warp_max))
# --8<-- [end:c_warp_max]

# %% [markdown]
# ## 14. 投票：warp 内的流压缩 · Ballot: stream compaction in a warp

# %%
show(PUZZLES["compact"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/warp_level.py:compact"'))

# %%
show(PUZZLES["compact"].check(compact))

# %%
# --8<-- [start:c_compact]
c_compact = warp_level_cu.get_function("compact")
show(PUZZLES["compact"].check(c_compact))
# --8<-- [end:c_compact]

# %% [markdown]
# ## 15. 原子操作：共享内存直方图 · Atomics: a shared-memory histogram

# %%
show(PUZZLES["histogram"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/warp_level.py:histogram"'))

# %%
show(PUZZLES["histogram"].check(histogram))

# %%
# --8<-- [start:c_histogram]
c_histogram = warp_level_cu.get_function("histogram")
show(PUZZLES["histogram"].check(c_histogram))
# --8<-- [end:c_histogram]

# %% [markdown]
# ## 16. 改错：最后一个 warp 需要 __syncwarp · Fix: the last warp needs __syncwarp

# %%
show(PUZZLES["tail_sum"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/warp_level.py:tail_sum"'))

# %%
show(PUZZLES["tail_sum"].check(tail_sum))

# %%
# --8<-- [start:c_tail_sum]
c_tail_sum = warp_level_cu.get_function("tail_sum")
show(PUZZLES["tail_sum"].check(c_tail_sum))
# --8<-- [end:c_tail_sum]

# %% [markdown]
# ## 17. atomicCAS：会回绕的取号计数器 · atomicCAS: a ticket counter that wraps

# %%
show(PUZZLES["tickets"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/warp_level.py:tickets"'))

# %%
show(PUZZLES["tickets"].check(tickets))

# %%
# --8<-- [start:c_tickets]
c_tickets = warp_level_cu.get_function("tickets")
show(PUZZLES["tickets"].check(c_tickets))
# --8<-- [end:c_tickets]

# %% [markdown]
# ## 18. Triton 谜题 · Triton puzzles
#
# 这几道题用 `simtdocs.triton` 的 `@triton.jit` 来写：`check` 按 Triton 的方式启动内核
# （`kernel[grid](…, BLOCK_M=…, num_warps=…)`，元参数由题目给出），判定里的行号指向你的 Triton 代码。
# These puzzles are written with `@triton.jit` from `simtdocs.triton`: `check` launches the kernel the
# Triton way (`kernel[grid](…, BLOCK_M=…, num_warps=…)`, with the meta-parameters the puzzle gives), and
# its verdicts name the lines of your Triton kernel.

# %%
# --8<-- [start:triton_setup]
from simtdocs import triton
from simtdocs.puzzles import TRITON_PUZZLES
from simtdocs.triton import language as tl
# --8<-- [end:triton_setup]

# %%
show(TRITON_PUZZLES["outer_add"])


# %%
# Edit this kernel, then run the next cell to check it.
# --8<-- [start:outer_add]
@triton.jit
def outer_add(x_ptr, y_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    # TODO: load x[rows] and y[cols], store z[rows, cols] = x[rows] + y[cols]; mask the edges
# --8<-- [end:outer_add]


# %%
# --8<-- [start:outer_add_check]
show(TRITON_PUZZLES["outer_add"].check(outer_add))
# --8<-- [end:outer_add_check]

# %%
show(TRITON_PUZZLES["softmax"])


# %%
# Edit this kernel, then run the next cell to check it.
# --8<-- [start:softmax]
@triton.jit
def softmax(out_ptr, x_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # one program per row of n_cols floats
    cols = tl.arange(0, BLOCK)  # BLOCK ≥ n_cols: the row fits in one block
    # TODO: out[row, :] = exp(x - max(x)) / sum(exp(x - max(x))) over the row's n_cols elements
# --8<-- [end:softmax]


# %%
# --8<-- [start:softmax_check]
show(TRITON_PUZZLES["softmax"].check(softmax))
# --8<-- [end:softmax_check]

# %%
show(TRITON_PUZZLES["matmul"])


# %%
# Edit this kernel, then run the next cell to check it.
# --8<-- [start:matmul]
@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # TODO: step through K by BLOCK_K: load a tile of A (rows × ks) and of B (ks × cols),
    # masked, and acc = tl.dot(a, b, acc); then store acc into C[rows, cols]
# --8<-- [end:matmul]


# %%
# --8<-- [start:matmul_check]
show(TRITON_PUZZLES["matmul"].check(matmul))
# --8<-- [end:matmul_check]

# %%
show(TRITON_PUZZLES["row_sum"])


# %%
# Edit this kernel, then run the next cell to check it.
# --8<-- [start:row_sum]
@triton.jit
def row_sum(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)  # BLOCK_M rows a program
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    # TODO: add up x[rows, :] in chunks of BLOCK_N columns (the last one ragged), store out[rows]
# --8<-- [end:row_sum]


# %%
# --8<-- [start:row_sum_check]
show(TRITON_PUZZLES["row_sum"].check(row_sum))
# --8<-- [end:row_sum_check]

# %% [markdown]
# ## CUDA C 的解法（先自己试） · The solutions in CUDA C (try first)

# %%
# --8<-- [start:c_p2_threads_solutions]
p2_threads_solutions_cu = RawModule(path="snippets/puzzles/p2_threads_solutions.cu")
# --8<-- [end:c_p2_threads_solutions]

# %%
# --8<-- [start:c_double_solution]
c_double_vector_solution = p2_threads_solutions_cu.get_function("double_vector_solution")
show(PUZZLES["double"].check(c_double_vector_solution))
# --8<-- [end:c_double_solution]

# %%
# --8<-- [start:c_guard_solution]
c_add_solution = p2_threads_solutions_cu.get_function("add_solution")
show(PUZZLES["guard"].check(c_add_solution))
# --8<-- [end:c_guard_solution]

# %%
# --8<-- [start:c_add_bias_solution]
c_add_bias_solution = p2_threads_solutions_cu.get_function("add_bias_solution")
show(PUZZLES["add_bias"].check(c_add_bias_solution))
# --8<-- [end:c_add_bias_solution]

# %%
# --8<-- [start:c_grid_stride_solution]
c_square_solution = p2_threads_solutions_cu.get_function("square_solution")
show(PUZZLES["grid_stride"].check(c_square_solution))
# --8<-- [end:c_grid_stride_solution]

# %%
# --8<-- [start:c_warp_sum_solution]
c_warp_sum_solution = p2_threads_solutions_cu.get_function("warp_sum_solution")
show(PUZZLES["warp_sum"].check(c_warp_sum_solution))
# --8<-- [end:c_warp_sum_solution]

# %%
# --8<-- [start:c_p2_memory_solutions]
p2_memory_solutions_cu = RawModule(path="snippets/puzzles/p2_memory_solutions.cu")
# --8<-- [end:c_p2_memory_solutions]

# %%
# --8<-- [start:c_window_sum_solution]
c_window_sum_solution = p2_memory_solutions_cu.get_function("window_sum_solution")
show(PUZZLES["window_sum"].check(c_window_sum_solution))
# --8<-- [end:c_window_sum_solution]

# %%
# --8<-- [start:c_reverse_blocks_solution]
c_reverse_blocks_solution = p2_memory_solutions_cu.get_function("reverse_blocks_solution")
show(PUZZLES["reverse_blocks"].check(c_reverse_blocks_solution))
# --8<-- [end:c_reverse_blocks_solution]

# %%
# --8<-- [start:c_scale_solution]
c_scale_solution = p2_memory_solutions_cu.get_function("scale_solution")
show(PUZZLES["scale"].check(c_scale_solution))
# --8<-- [end:c_scale_solution]

# %%
# --8<-- [start:c_transpose_solution]
c_transpose_solution = p2_memory_solutions_cu.get_function("transpose_solution")
show(PUZZLES["transpose"].check(c_transpose_solution))
# --8<-- [end:c_transpose_solution]

# %%
# --8<-- [start:c_pair_sum_solution]
c_pair_sum_solution = p2_memory_solutions_cu.get_function("pair_sum_solution")
show(PUZZLES["pair_sum"].check(c_pair_sum_solution))
# --8<-- [end:c_pair_sum_solution]

# %%
# --8<-- [start:c_block_sum_solution]
c_block_sum_solution = p2_memory_solutions_cu.get_function("block_sum_solution")
show(PUZZLES["block_sum"].check(c_block_sum_solution))
# --8<-- [end:c_block_sum_solution]

# %%
# --8<-- [start:c_warp_level_solutions]
warp_level_solutions_cu = RawModule(path="snippets/puzzles/warp_level_solutions.cu")
# --8<-- [end:c_warp_level_solutions]

# %%
# --8<-- [start:c_warp_scan_solution]
c_warp_scan_solution = warp_level_solutions_cu.get_function("warp_scan_solution")
show(PUZZLES["warp_scan"].check(c_warp_scan_solution))
# --8<-- [end:c_warp_scan_solution]

# %%
# --8<-- [start:c_warp_max_solution]
c_warp_max_solution = warp_level_solutions_cu.get_function("warp_max_solution")
show(PUZZLES["warp_max"].check(c_warp_max_solution))
# --8<-- [end:c_warp_max_solution]

# %%
# --8<-- [start:c_compact_solution]
c_compact_solution = warp_level_solutions_cu.get_function("compact_solution")
show(PUZZLES["compact"].check(c_compact_solution))
# --8<-- [end:c_compact_solution]

# %%
# --8<-- [start:c_histogram_solution]
c_histogram_solution = warp_level_solutions_cu.get_function("histogram_solution")
show(PUZZLES["histogram"].check(c_histogram_solution))
# --8<-- [end:c_histogram_solution]

# %%
# --8<-- [start:c_tail_sum_solution]
c_tail_sum_solution = warp_level_solutions_cu.get_function("tail_sum_solution")
show(PUZZLES["tail_sum"].check(c_tail_sum_solution))
# --8<-- [end:c_tail_sum_solution]

# %%
# --8<-- [start:c_tickets_solution]
c_tickets_solution = warp_level_solutions_cu.get_function("tickets_solution")
show(PUZZLES["tickets"].check(c_tickets_solution))
# --8<-- [end:c_tickets_solution]
