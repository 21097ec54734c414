# %% [markdown]
# # 没有 GPU 时的带宽实验 · The bandwidth lab without a GPU
#
# GPU 实验在真卡上测 `y = 2 * x` 的有效带宽随张量大小的变化。这里用 RTX 4090 的
# 模型预测同一条曲线：线程块一波一波铺满 SM（waves），每个 SM 靠驻留的 warp 隐藏
# 访存延迟（利特尔定律），每次调用另有固定的启动开销。所有假设都写在下面。
# The GPU lab measures the effective bandwidth of `y = 2 * x` against tensor size on a
# real card. Here a model of the RTX 4090 predicts the same curve: blocks fill the SMs
# wave after wave, each SM hides memory latency with its resident warps (Little's law),
# and each call pays a fixed launch overhead. Every assumption is stated below.
#
# Run it alone: `python snippets/exec_model/02_bandwidth_model.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import RTX4090, cdiv, latency_hiding, launch, launch_overhead, occupancy, waves
from simtdocs.display import show
from simtdocs.lectures import exec_model as lecture  # the tables and figures of this lecture
# --8<-- [end:setup]

# %%
# --8<-- [start:assumptions]
GPU = RTX4090
THREADS = 256  # threads per block, one float32 per thread (an assumed kernel, not PyTorch's)
REGISTERS = 16  # registers per thread: small enough that warps, not registers, limit occupancy
LAUNCH_S = 5e-6  # host cost of one PyTorch call: dispatch plus launch (assumed, not measured)
CALLS = 50  # the GPU lab times 50 calls in a row, as here
LAB_SIZES = [2**12, 2**16, 2**20, 2**24, 2**26]  # the sizes of the GPU lab
# --8<-- [end:assumptions]


# %%
# --8<-- [start:bytes]
def scale(blk, x, y, n):
    i = blk.bx * blk.bdx + blk.tx
    m = i < n
    blk.store(y, i, 2 * blk.load(x, i, mask=m), mask=m)  # y = 2 * x


n = 2**16
x = np.ones(n, np.float32)
y = np.zeros(n, np.float32)
sim = launch(scale, grid=cdiv(n, THREADS), block=THREADS, args=(x, y, n), device=GPU)
BYTES_PER_ELEMENT = sim.bytes_moved / n  # what the DRAM moves per element, read and write
assert BYTES_PER_ELEMENT == 8 and np.all(y == 2)
# --8<-- [end:bytes]


# %%
# --8<-- [start:model]
occ = occupancy(THREADS, REGISTERS, device=GPU)  # blocks that fit on one SM at once


def predict(n):
    """Predicted time of one call of y = 2 * x on n float32 elements."""
    blocks = cdiv(n, THREADS)
    w = waves(blocks, occ.blocks_per_sm, device=GPU)
    kernel_s, first = 0.0, None
    for k in range(w.waves):
        in_wave = w.capacity if k < w.waves - 1 else w.last_wave_blocks
        per_sm = cdiv(in_wave, GPU.sm_count)  # blocks on the busiest SM of this wave
        warps = per_sm * occ.warps_per_block
        hide = latency_hiding(warps, requests_per_warp=1, bytes_per_request=128, device=GPU)
        sm_bytes = per_sm * THREADS * BYTES_PER_ELEMENT
        kernel_s += sm_bytes / (hide.fraction * GPU.bandwidth_per_sm)  # the busiest SM sets the pace
        first = first or (warps, hide.fraction)
    calls = launch_overhead(CALLS, CALLS * kernel_s, LAUNCH_S)  # launches overlap the GPU's work
    call_s = calls.overlapped_s / CALLS
    return dict(n=n, blocks=blocks, waves=w.waves, warps=first[0], hidden=first[1],
                kernel_s=kernel_s, call_s=call_s, gbps=n * BYTES_PER_ELEMENT / call_s / 1e9,
                kernel_gbps=n * BYTES_PER_ELEMENT / kernel_s / 1e9)
# --8<-- [end:model]


# %%
# --8<-- [start:table]
peak = GPU.memory_bandwidth / 1e9  # GB/s
rows = [predict(n) for n in LAB_SIZES]
show(lecture.bandwidth_table(rows, peak))
# --8<-- [end:table]

# %%
# --8<-- [start:table_glue]
from simtdocs.display import glue

small, large = rows[0], rows[-1]
glue("em_l2_mb", GPU.l2_bytes / 2**20, ".0f")  # L2 size, left out of the model
glue("em_bw_threads", THREADS)
glue("em_bw_registers", REGISTERS)
glue("em_bw_launch_us", LAUNCH_S * 1e6, ".0f")
glue("em_bw_calls", CALLS)
glue("em_bw_bytes_per_element", BYTES_PER_ELEMENT, ".0f")
glue("em_bw_blocks_per_sm", occ.blocks_per_sm)
glue("em_bw_wave_blocks", occ.blocks_per_sm * GPU.sm_count)
glue("em_bw_peak", peak, ",.0f")
glue("em_bw_small_n", small["n"])
glue("em_bw_small_blocks", small["blocks"])
glue("em_bw_small_warps", small["warps"])
glue("em_bw_small_hidden", small["hidden"], ".0%")
glue("em_bw_small_kernel_us", small["kernel_s"] * 1e6, ".1f")
glue("em_bw_small", small["gbps"], ",.1f")
glue("em_bw_large_n", large["n"])
glue("em_bw_large_waves", large["waves"])
glue("em_bw_large", large["gbps"], ",.0f")
glue("em_bw_large_pct", large["gbps"] / peak, ".0%")
# --8<-- [end:table_glue]


# %%
# --8<-- [start:figure]
sweep = [predict(2**k) for k in range(10, 27)]
one_wave, tail = predict(2**17), predict(2**18)  # a full single wave, then 1⅓ waves
tail_waves = waves(tail["blocks"], occ.blocks_per_sm, device=GPU)
fill = tail_waves.last_wave_blocks / tail_waves.capacity  # how full the last wave is
show(lecture.bandwidth_figure(sweep, rows, peak, LAUNCH_S, tail, fill, GPU))
# --8<-- [end:figure]

# %%
# --8<-- [start:figure_glue]
half = next(r for r in sweep if r["gbps"] >= peak / 2)  # first size at half the peak
glue("em_bw_half_n", half["n"])
glue("em_bw_half_mb", half["n"] * 4 / 2**20, ".0f")
glue("em_bw_one_wave_n", one_wave["n"])
glue("em_bw_one_wave_kernel", one_wave["kernel_gbps"], ",.0f")
glue("em_bw_tail_n", tail["n"])
glue("em_bw_tail_blocks", tail["blocks"])
glue("em_bw_tail_waves", tail["waves"])
glue("em_bw_tail_fill", fill, ".0%")
glue("em_bw_tail_kernel", tail["kernel_gbps"], ",.0f")
# --8<-- [end:figure_glue]
