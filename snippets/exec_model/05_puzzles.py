# %% [markdown]
# # CUDA 执行模型 · 内核谜题 · Kernel puzzles
#
# 四道关于 warp 的题：线程属于哪个 warp，怎样按 warp 对齐或排序消除发散，怎样少发指令。
# 改写内核所在的单元格并运行，`check` 在模拟器里启动它并给出反馈。
# `show(PUZZLES["warp_of"].hint)` 给出提示，`print(PUZZLES["warp_of"].source("solution"))` 给出一种解法；
# 想看中文反馈，先运行 `set_language("zh")`。
# Four puzzles about warps: which warp a thread is in, how warp alignment or sorting removes
# divergence, how to issue fewer instructions. Edit a kernel's cell and run it: `check` launches it in
# the simulator and says what it finds. `show(PUZZLES["warp_of"].hint)` gives a hint and
# `print(PUZZLES["warp_of"].source("solution"))` one solution; `set_language("zh")` switches the
# feedback to Chinese.
#
# Run it alone: `python snippets/exec_model/05_puzzles.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs.docs import set_language, show
from simtdocs.puzzles import PUZZLES
# --8<-- [end:setup]

# %% [markdown]
# ## 1. 我在哪个 warp？ · Which warp am I in?

# %%
show(PUZZLES["warp_of"])

# %%
# --8<-- [start:warp_of]
def warp_of(blk, warp, lane):
    t = blk.ty * blk.bdx + blk.tx  # the thread's number in its block: x fastest
    g = blk.bx * (blk.bdx * blk.bdy) + t  # one output per thread of the grid
    w = blk.tx // 32  # TODO: the warp of this thread within its block
    blk.store(warp, g, w)
    blk.store(lane, g, blk.tx % 32)  # TODO: its lane


show(PUZZLES["warp_of"].check(warp_of))
# --8<-- [end:warp_of]

# %% [markdown]
# ## 2. 改错：按 warp 对齐消除发散 · Fix: divergence that warp alignment removes

# %%
show(PUZZLES["even_odd"])

# %%
# --8<-- [start:even_odd]
def even_odd(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(a, i)
    even = blk.branch(i % 2 == 0)  # if (i % 2 == 0)
    blk.alu(4, mask=even)
    blk.alu(4, mask=~even)
    blk.store(out, i, np.where(even, 2 * v, v + 100))


show(PUZZLES["even_odd"].check(even_odd))
# --8<-- [end:even_odd]

# %% [markdown]
# ## 3. 改错：靠排序消除发散 · Fix: divergence that sorting removes

# %%
show(PUZZLES["signed"])

# %%
# --8<-- [start:signed]
def signed(blk, x, order, y):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    pos = blk.branch(v > 0)  # if (x[i] > 0)
    blk.alu(4, mask=pos)
    blk.alu(4, mask=~pos)
    blk.store(y, i, np.where(pos, np.sqrt(np.abs(v)), -v * v))


show(PUZZLES["signed"].check(signed))
# --8<-- [end:signed]

# %% [markdown]
# ## 4. 预算：warp 指令数 · Budget: warp instructions

# %%
show(PUZZLES["copy4"])

# %%
# --8<-- [start:copy4]
def copy4(blk, a, out):
    base = blk.bx * blk.bdx * 4 + blk.tx  # 4 elements per thread
    for k in range(4):
        i = base + k * blk.bdx
        blk.store(out, i, blk.load(a, i))


show(PUZZLES["copy4"].check(copy4))
# --8<-- [end:copy4]
