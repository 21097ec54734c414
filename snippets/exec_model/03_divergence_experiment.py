# %% [markdown]
# # 数据决定发散 · Divergence comes from the data
#
# 同一个带数据相关分支的内核，跑在三种排列的同一批数上：随机、排序、按 warp 对齐。
# 模拟器数出发散分支和 SIMT 效率。
# One kernel with a data-dependent branch, run on three arrangements of the same kind of
# data: random, sorted and warp-aligned. The simulator counts divergent branches and
# SIMT efficiency.
#
# Run it alone: `python snippets/exec_model/03_divergence_experiment.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import RTX4090, cdiv, launch
from simtdocs.display import show
from simtdocs.lectures import exec_model as lecture  # the tables and figures of this lecture
# --8<-- [end:setup]

# %%
# --8<-- [start:kernel]
BODY = 4  # arithmetic instructions in each side of the branch


def signed_work(blk, x, y, n):
    i = blk.bx * blk.bdx + blk.tx
    m = i < n
    v = blk.load(x, i, mask=m)
    pos = blk.branch(v > 0, mask=m)  # if (x[i] > 0)
    blk.alu(BODY, mask=pos)  # if side: BODY instructions of work
    neg = m & ~pos
    blk.alu(BODY, mask=neg)  # else side: BODY other instructions
    blk.store(y, i, np.where(pos, np.sqrt(np.abs(v)), -v * v), mask=m)
# --8<-- [end:kernel]


# %%
# --8<-- [start:data]
n = 32 * 1024  # 32,768 elements: 1,024 warps
rng = np.random.default_rng(0)
values = rng.standard_normal(n).astype(np.float32)  # about half positive, scattered
warp = np.arange(n) // 32
aligned = np.abs(values) * np.where(warp % 2 == 0, 1, -1).astype(np.float32)
datasets = {
    "random": values,
    "sorted": np.sort(values),  # the negatives first, then the positives
    "aligned": aligned,  # the same magnitudes; the sign flips only between warps
}
# --8<-- [end:data]


# %%
# --8<-- [start:run]
results = {}
for key, x in datasets.items():
    y = np.zeros(n, np.float32)
    results[key] = launch(signed_work, grid=cdiv(n, 256), block=256, args=(x, y, n), device=RTX4090)
    assert np.allclose(y, np.where(x > 0, np.sqrt(np.abs(x)), -x * x))
show(lecture.divergence_table(datasets, results))
# --8<-- [end:run]

# %%
# --8<-- [start:run_glue]
from simtdocs.display import glue

for key, stats in results.items():
    glue(f"em_dx_{key}_positive", float((datasets[key] > 0).mean()), ".1%")
    glue(f"em_dx_{key}_divergent", stats.divergent_branches)
    glue(f"em_dx_{key}_instructions", stats.warp_instructions)
    glue(f"em_dx_{key}_simt", stats.simt_efficiency, ".1%")
glue("em_dx_n", n)
glue("em_dx_warps", stats.warps)
glue("em_dx_body", BODY)
ratio = results["random"].warp_instructions / results["aligned"].warp_instructions
glue("em_dx_ratio", ratio, ".2f")  # random over warp-aligned instructions
# --8<-- [end:run_glue]
