# %% [markdown]
# # 读一个真实的启动配置 · Reading a real launch configuration
#
# vLLM 的 `silu_and_mul`：每个 token 一个线程块，`min(d, 1024)` 个线程，线程在块内
# 跨步循环。这里用 Python 重写它的结构，在模拟器上跑，再看它在 RTX 4090 上怎样铺开。
# vLLM's `silu_and_mul`: one block per token, `min(d, 1024)` threads, each thread
# looping with a stride of the block size. Its structure rewritten in Python, run on
# the simulator, and laid out on an RTX 4090.
#
# Run it alone: `python snippets/exec_model/04_silu_and_mul.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import RTX4090, cdiv, launch, occupancy, waves
from simtdocs.cuda import RawModule
from simtdocs.display import show
from simtdocs.lectures import exec_model as lecture  # the tables and figures of this lecture
# --8<-- [end:setup]


# %%
# --8<-- [start:kernel]
def silu_and_mul(blk, out, inp, d):
    token = blk.bx  # one block per token
    i = blk.tx  # first element of this thread
    m = blk.branch(i < d)  # for (i = threadIdx.x; i < d; i += blockDim.x): each thread tests its i
    while m.any():  # until no thread of the block is left in the loop
        x = blk.load(inp, token * 2 * d + i, mask=m).astype(np.float32)  # first half of the row
        y = blk.load(inp, token * 2 * d + d + i, mask=m).astype(np.float32)  # second half
        blk.store(out, token * d + i, x / (1 + np.exp(-x)) * y, mask=m)  # silu(x) * y
        i = i + blk.bdx
        m = blk.branch(i < d, mask=m)  # a thread past the end leaves the loop
# --8<-- [end:kernel]


# %%
# --8<-- [start:run]
d = 18944  # intermediate size of Qwen2.5-7B-Instruct (its config.json)
tokens = 4
threads = min(d, 1024)  # dim3 block(std::min(d, 1024))
rng = np.random.default_rng(0)
inp = rng.standard_normal(tokens * 2 * d).astype(np.float16)  # 2-byte values, like bf16
out = np.zeros(tokens * d, np.float16)
sketch = RawModule(path="snippets/exec_model/silu_and_mul.cu").get_function("silu_and_mul_sketch")
stats = launch(sketch, grid=tokens, block=threads, args=(out, inp, np.int32(d)), device=RTX4090)  # the C above

rows2 = inp.reshape(tokens, 2, d).astype(np.float32)
expected = rows2[:, 0] / (1 + np.exp(-rows2[:, 0])) * rows2[:, 1]
assert np.allclose(out.reshape(tokens, d), expected, rtol=2e-3, atol=2e-3)

masks = launch(silu_and_mul, grid=tokens, block=threads, args=(np.zeros_like(out), inp, d), device=RTX4090)
assert masks.totals == stats.totals  # the Python above counts what the C does
show(lecture.silu_table(stats))
# --8<-- [end:run]

# %%
# --8<-- [start:run_glue]
from simtdocs.display import glue

glue("em_vl_d", d)
glue("em_vl_tokens", tokens)
glue("em_vl_threads", threads)
glue("em_vl_warps_per_block", cdiv(threads, 32))
glue("em_vl_iterations", cdiv(d, threads))
glue("em_vl_last_threads", d - (cdiv(d, threads) - 1) * threads)
glue("em_vl_coalescing", stats.coalescing_efficiency, ".0%")
glue("em_vl_divergent", stats.divergent_branches)
# --8<-- [end:run_glue]


# %%
# --8<-- [start:waves]
occ = occupancy(threads, 32, device=RTX4090)  # 32 registers: the warp limit decides anyway
S = RTX4090.sm_count
batches = (1, 8, S, S + 1, 2 * S, 2048)  # tokens in the batch = blocks in the grid
grids = {n: waves(n, occ.blocks_per_sm, device=RTX4090) for n in batches}
show(lecture.waves_table(grids, occ.blocks_per_sm, RTX4090))
# --8<-- [end:waves]

# %%
# --8<-- [start:waves_glue]
glue("em_vl_blocks_per_sm", occ.blocks_per_sm)
glue("em_vl_occ", occ.occupancy, ".0%")
glue("em_vl_decode_util", grids[1].utilisation, ".1%")  # batch size 1: one block
glue("em_vl_129_tokens", S + 1)  # one token more than there are SMs
glue("em_vl_129_waves", grids[S + 1].waves)
glue("em_vl_129_util", grids[S + 1].utilisation, ".1%")
# --8<-- [end:waves_glue]
