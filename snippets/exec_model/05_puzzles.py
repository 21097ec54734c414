# %% [markdown]
# # 代码 05：执行模型的内核谜题 · Code 05: the execution model's kernel puzzles
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

from simtdocs.cuda import RawModule
from simtdocs.display import set_language, show
from simtdocs.puzzles import PUZZLES
# --8<-- [end:setup]

# %% [markdown]
# ## 1. 我在哪个 warp？ · Which warp am I in?

# %%
show(PUZZLES["warp_of"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
from simtdocs.display import expand_snippets

exec(expand_snippets('--8<-- "src/simtdocs/puzzles/exec_model.py:warp_of"'))

# %%
show(PUZZLES["warp_of"].check(warp_of))

# %%
# These puzzles' skeletons in CUDA C (the notebook has the .cu file written out in this cell):
# edit a kernel and run this cell again, then the C check under the puzzle's Python one.
# --8<-- [start:c_exec_model]
exec_model_cu = RawModule(path="snippets/puzzles/exec_model.cu")
# --8<-- [end:c_exec_model]

# %%
# --8<-- [start:c_warp_of]
c_warp_of = exec_model_cu.get_function("warp_of")
show(PUZZLES["warp_of"].check(c_warp_of))
# --8<-- [end:c_warp_of]

# %% [markdown]
# ## 2. 改错：按 warp 对齐消除发散 · Fix: divergence that warp alignment removes

# %%
show(PUZZLES["even_odd"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/exec_model.py:even_odd"'))

# %%
show(PUZZLES["even_odd"].check(even_odd))

# %%
# --8<-- [start:c_even_odd]
c_even_odd = exec_model_cu.get_function("even_odd")
show(PUZZLES["even_odd"].check(c_even_odd))
# --8<-- [end:c_even_odd]

# %% [markdown]
# ## 3. 改错：靠排序消除发散 · Fix: divergence that sorting removes

# %%
show(PUZZLES["signed"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/exec_model.py:signed"'))

# %%
show(PUZZLES["signed"].check(signed))

# %%
# --8<-- [start:c_signed]
c_by_sign = exec_model_cu.get_function("by_sign")
show(PUZZLES["signed"].check(c_by_sign))
# --8<-- [end:c_signed]

# %% [markdown]
# ## 4. 预算：warp 指令数 · Budget: warp instructions

# %%
show(PUZZLES["copy4"])

# %%
# Edit this kernel (the notebook has its code written out here), then run the next cell to check it.
exec(expand_snippets('--8<-- "src/simtdocs/puzzles/exec_model.py:copy4"'))

# %%
show(PUZZLES["copy4"].check(copy4))

# %%
# --8<-- [start:c_copy4]
c_copy4 = exec_model_cu.get_function("copy4")
show(PUZZLES["copy4"].check(c_copy4))
# --8<-- [end:c_copy4]

# %% [markdown]
# ## CUDA C 的解法（先自己试） · The solutions in CUDA C (try first)

# %%
# --8<-- [start:c_exec_model_solutions]
exec_model_solutions_cu = RawModule(path="snippets/puzzles/exec_model_solutions.cu")
# --8<-- [end:c_exec_model_solutions]

# %%
# --8<-- [start:c_warp_of_solution]
c_warp_of_solution = exec_model_solutions_cu.get_function("warp_of_solution")
show(PUZZLES["warp_of"].check(c_warp_of_solution))
# --8<-- [end:c_warp_of_solution]

# %%
# --8<-- [start:c_even_odd_solution]
c_even_odd_solution = exec_model_solutions_cu.get_function("even_odd_solution")
show(PUZZLES["even_odd"].check(c_even_odd_solution))
# --8<-- [end:c_even_odd_solution]

# %%
# --8<-- [start:c_signed_solution]
c_by_sign_solution = exec_model_solutions_cu.get_function("by_sign_solution")
show(PUZZLES["signed"].check(c_by_sign_solution))
# --8<-- [end:c_signed_solution]

# %%
# --8<-- [start:c_copy4_solution]
c_copy4_solution = exec_model_solutions_cu.get_function("copy4_solution")
show(PUZZLES["copy4"].check(c_copy4_solution))
# --8<-- [end:c_copy4_solution]
