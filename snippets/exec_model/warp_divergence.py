# %% [markdown]
# # 分支怎样按 warp 收费 · How SIMT charges for a branch
#
# 同一个 if/else 内核，两种分支布局：逐线程交替，或按 32 个线程对齐。
# 模拟器数出每个 warp 执行了几个分支体：发散（divergent）的 warp 两侧都要跑。
# The same if/else kernel with two branch layouts: alternating per thread, or
# aligned to 32 threads. The simulator counts the branch bodies each warp runs:
# a divergent warp runs both sides.
#
# Run it alone: `python snippets/exec_model/warp_divergence.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import RTX4090, launch
from simtdocs.display import show
from simtdocs.lectures import exec_model as lecture  # the tables and figures of this lecture
# --8<-- [end:setup]


# %%
# --8<-- [start:kernel]
def if_else(blk, take_if, out):
    i = blk.bx * blk.bdx + blk.tx
    c = blk.load(take_if, i)  # this thread's decision
    left = blk.branch(c)  # if (take_if[i])
    blk.store(out, i, 1, mask=left)  # if body: only the lanes that took it
    blk.store(out, i, 2, mask=~left)  # else body: the other lanes


def branch_bodies(stats):
    """Warp instructions issued by the two body lines: one per warp and side it ran."""
    load, branch, if_body, else_body = stats.lines  # the kernel's lines, in source order
    return if_body.counters.warp_instructions + else_body.counters.warp_instructions
# --8<-- [end:kernel]


# %%
# --8<-- [start:run]
n = 32 * 8  # 256 threads in one block: 8 warps
tid = np.arange(n)
layouts = {
    "interleaved": tid % 2 == 0,  # even threads take the if: every warp is split
    "warp_aligned": (tid // 32) % 2 == 0,  # the same 50/50 split, one decision per warp
}
results = {}
for name, take_if in layouts.items():
    out = np.zeros(n, np.int32)
    stats = launch(if_else, grid=1, block=n, args=(take_if, out), device=RTX4090)
    assert np.array_equal(out, np.where(take_if, 1, 2))  # both layouts compute the right answer
    bodies = branch_bodies(stats)
    assert bodies == stats.warps + stats.divergent_branches  # a split warp pays one body more
    results[name] = (stats, bodies)
show(lecture.branch_layout_table(layouts, results))  # divergence tax = bodies per warp; 1.00× is none
# --8<-- [end:run]

# %%
# --8<-- [start:glue]
from simtdocs.display import glue

for name, (stats, bodies) in results.items():
    glue(f"em_div_{name}_bodies", bodies)
    glue(f"em_div_{name}_tax", bodies / stats.warps, ".2f")
    glue(f"em_div_{name}_divergent", stats.divergent_branches)
glue("em_div_warps", stats.warps)
# --8<-- [end:glue]

# %%
if __name__ == "__main__":
    # A short report for the terminal, from the simulator's counters.
    print(f"warps                         : {stats.warps}")
    for name, (stats, bodies) in results.items():
        print(f"{name:<13} branch bodies : {bodies}  (divergence tax {bodies / stats.warps:.2f}x)")
