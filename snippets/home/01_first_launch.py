# %% [markdown]
# # 第一次启动 · A first launch
#
# 在纸上的 GPU 上启动一个向量加法内核，并读出它的计数器。
# Launch a vector-add kernel on the GPU on paper and read its counters.
#
# Run it alone: `python snippets/home/01_first_launch.py`

# %%
import numpy as np

from simtdocs import H100, cdiv, launch
from simtdocs.display import Table, show


# %%
# --8<-- [start:kernel]
def vector_add(blk, a, b, c, n):
    i = blk.bx * blk.bdx + blk.tx  # one global index per thread
    m = i < n  # threads past the end do nothing
    x = blk.load(a, i, mask=m)
    y = blk.load(b, i, mask=m)
    blk.store(c, i, x + y, mask=m)
# --8<-- [end:kernel]


# %%
# --8<-- [start:launch]
n = 1000  # elements
threads = 256  # threads per block
a = np.arange(n, dtype=np.float32)
b = np.ones(n, dtype=np.float32)
c = np.zeros(n, dtype=np.float32)
stats = launch(vector_add, grid=(cdiv(n, threads),), block=(threads,), args=(a, b, c, n), device=H100)
assert np.array_equal(c, a + b)
# --8<-- [end:launch]

# %%
# --8<-- [start:report]
show(Table.counters(stats))
# --8<-- [end:report]

# %%
# --8<-- [start:glue]
from simtdocs.display import glue

glue("coalescing", stats.coalescing_efficiency, ".0%")
glue("blocks", cdiv(n, threads))
glue("n", n)
glue("threads", threads)
# --8<-- [end:glue]
