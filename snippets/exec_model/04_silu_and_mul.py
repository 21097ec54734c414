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

from simtdocs import LABELS, RTX4090, cdiv, launch, occupancy, waves
from simtdocs.docs import T, Table, glue, show
# --8<-- [end:setup]


# %%
# --8<-- [start:kernel]
def silu_and_mul(blk, out, inp, d):
    token = blk.bx  # one block per token
    idx = blk.tx  # first element of this thread
    for _ in range(cdiv(d, blk.bdx)):  # for (idx = threadIdx.x; idx < d; idx += blockDim.x)
        m = blk.branch(idx < d)  # the loop test: threads past the end leave
        x = blk.load(inp, token * 2 * d + idx, mask=m)  # first half of the token's row
        y = blk.load(inp, token * 2 * d + d + idx, mask=m)  # second half
        xf = x.astype(np.float32)
        blk.store(out, token * d + idx, xf / (1 + np.exp(-xf)) * y, mask=m)  # silu(x) * y
        idx = idx + blk.bdx
# --8<-- [end:kernel]


# %%
# --8<-- [start:run]
d = 18944  # intermediate size of Qwen2.5-7B-Instruct (its config.json)
tokens = 4
threads = min(d, 1024)  # dim3 block(std::min(d, 1024))
rng = np.random.default_rng(0)
inp = rng.standard_normal(tokens * 2 * d).astype(np.float16)  # 2-byte values, like bf16
out = np.zeros(tokens * d, np.float16)
stats = launch(silu_and_mul, grid=tokens, block=threads, args=(out, inp, d), device=RTX4090)

rows2 = inp.reshape(tokens, 2, d).astype(np.float32)
expected = rows2[:, 0] / (1 + np.exp(-rows2[:, 0])) * rows2[:, 1]
assert np.allclose(out.reshape(tokens, d), expected, rtol=2e-3, atol=2e-3)

keys = ["warps", "warp_instructions", "simt_efficiency", "divergent_branches", "sectors", "coalescing_efficiency"]
value = {k: f"{getattr(stats, k):.1%}" if k.endswith("efficiency") else f"{getattr(stats, k):,}" for k in keys}
show(Table([(LABELS[k], value[k]) for k in keys], [T("计数器", "counter"), T("值", "value")]))
glue("em_vl_d", d)
glue("em_vl_tokens", tokens)
glue("em_vl_threads", threads)
glue("em_vl_warps_per_block", cdiv(threads, 32))
glue("em_vl_iterations", cdiv(d, threads))
glue("em_vl_last_threads", d - (cdiv(d, threads) - 1) * threads)
glue("em_vl_coalescing", stats.coalescing_efficiency, ".0%")
glue("em_vl_divergent", stats.divergent_branches)
# --8<-- [end:run]


# %%
# --8<-- [start:waves]
occ = occupancy(threads, 32, device=RTX4090)  # 32 registers: the warp limit decides anyway
glue("em_vl_blocks_per_sm", occ.blocks_per_sm)
glue("em_vl_occ", occ.occupancy, ".0%")
rows = []
S = RTX4090.sm_count
for n in (1, 8, S, S + 1, 2 * S, 2048):  # tokens in the batch = blocks in the grid
    w = waves(n, occ.blocks_per_sm, device=RTX4090)
    busy_first = min(n, w.capacity) // occ.blocks_per_sm  # SMs with a block in the first wave
    rows.append((n, w.waves, w.last_wave_blocks, busy_first, w.utilisation))
show(
    Table(
        rows,
        columns=[
            T("token 数 = 线程块数", "tokens = blocks"),
            T("波数", "waves"),
            T("最后一波的块数", "blocks in the last wave"),
            T(f"第一波忙碌的 SM（共 {RTX4090.sm_count}）", f"SMs busy in the first wave (of {RTX4090.sm_count})"),
            T("块槽利用率", "block-slot utilisation"),
        ],
        fmt=[",", ",", ",", ",", ".1%"],
    )
)
one = waves(1, occ.blocks_per_sm, device=RTX4090)
glue("em_vl_decode_util", one.utilisation, ".1%")
w129 = waves(RTX4090.sm_count + 1, occ.blocks_per_sm, device=RTX4090)  # one token more than there are SMs
glue("em_vl_129_tokens", RTX4090.sm_count + 1)
glue("em_vl_129_waves", w129.waves)
glue("em_vl_129_util", w129.utilisation, ".1%")
# --8<-- [end:waves]
