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
from simtdocs.docs import Figure, T, Table, figure, glue, show
# --8<-- [end:setup]

# %%
# --8<-- [start:assumptions]
GPU = RTX4090
THREADS = 256  # threads per block, one float32 per thread (an assumed kernel, not PyTorch's)
REGISTERS = 16  # registers per thread: small enough that warps, not registers, limit occupancy
LAUNCH_S = 5e-6  # host cost of one PyTorch call: dispatch plus launch (assumed, not measured)
CALLS = 50  # the GPU lab times 50 calls in a row, as here
LAB_SIZES = [2**12, 2**16, 2**20, 2**24, 2**26]  # the sizes of the GPU lab
glue("em_l2_mb", GPU.l2_bytes / 2**20, ".0f")  # L2 size, left out of the model
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
peak = GPU.memory_bandwidth / 1e9
rows = [predict(n) for n in LAB_SIZES]
show(
    Table(
        rows=[(r["n"], r["waves"], r["warps"], r["hidden"], r["kernel_s"] * 1e6,
               r["call_s"] * 1e6, r["gbps"], r["gbps"] / peak) for r in rows],
        columns=[
            T("元素数", "elements"),
            T("波数", "waves"),
            T("最忙 SM 的 warp", "warps on busiest SM"),
            T("延迟隐藏份额", "latency hidden"),
            T("内核 µs", "kernel µs"),
            T("每次调用 µs", "per call µs"),
            T("有效带宽 GB/s", "effective GB/s"),
            T("占峰值", "of peak"),
        ],
        fmt=[",", ",", ",", ".0%", ".1f", ".1f", ",.1f", ".0%"],
    )
)
small, large = rows[0], rows[-1]
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
# --8<-- [end:table]


# %%
# --8<-- [start:figure]
sweep = [predict(2**k) for k in range(10, 27)]
half = next(r for r in sweep if r["gbps"] >= peak / 2)  # first size at half the peak
glue("em_bw_half_n", half["n"])
glue("em_bw_half_mb", half["n"] * 4 / 2**20, ".0f")
one_wave, tail = predict(2**17), predict(2**18)  # a full single wave, then 1⅓ waves
glue("em_bw_one_wave_n", one_wave["n"])
glue("em_bw_one_wave_kernel", one_wave["kernel_gbps"], ",.0f")
glue("em_bw_tail_n", tail["n"])
glue("em_bw_tail_blocks", tail["blocks"])
glue("em_bw_tail_waves", tail["waves"])
tail_waves = waves(tail["blocks"], occ.blocks_per_sm, device=GPU)
glue("em_bw_tail_fill", tail_waves.last_wave_blocks / tail_waves.capacity, ".0%")  # how full the last wave is
glue("em_bw_tail_kernel", tail["kernel_gbps"], ",.0f")
# --8<-- [end:figure]


# %%
# --8<-- [start:figure_draw]
def draw():
    fig, ax = figure(figsize=(7, 3.6))
    ns = [r["n"] for r in sweep]
    ax.plot(ns, [r["gbps"] for r in sweep], marker=".", label=str(T(
        f"每次调用（含 {LAUNCH_S * 1e6:.0f} µs 启动开销）", f"per call (with {LAUNCH_S * 1e6:.0f} µs launch overhead)")))
    ax.plot(ns, [r["kernel_gbps"] for r in sweep], ls="--", label=str(T("只算内核", "kernel alone")))
    ax.plot([r["n"] for r in rows], [r["gbps"] for r in rows], "o", color="C0")
    ax.axhline(peak, color="0.5", lw=0.8)
    ax.text(ns[0], peak * 1.02, str(T(f"DRAM 峰值 {peak:,.0f} GB/s", f"DRAM peak {peak:,.0f} GB/s")), fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(str(T("float32 元素数", "float32 elements")))
    ax.set_ylabel(str(T("有效带宽（GB/s）", "effective bandwidth (GB/s)")))
    ax.set_ylim(0, peak * 1.12)
    ax.legend(loc="center right", fontsize=8)
    fig.tight_layout()
    return fig
# --8<-- [end:figure_draw]


# %%
# --8<-- [start:figure_show]
NEAR = 0.9  # the alt text says where a call first gets this close to the peak
near = next(r for r in sweep if r["gbps"] >= NEAR * peak)
fill = tail_waves.last_wave_blocks / tail_waves.capacity  # how full the last wave of the dip is
show(
    Figure(
        draw,
        alt=T(f"有效带宽随 float32 元素数（{sweep[0]['n']:,} 到 {sweep[-1]['n']:,}，对数轴）变化：每次调用从 "
              f"{sweep[0]['gbps']:,.1f} GB/s 升到 {near['n']:,} 个元素时的 {near['gbps']:,.0f} GB/s，"
              f"第一次达到 DRAM 峰值 {peak:,.0f} GB/s 的 {NEAR:.0%}；只算内核的虚线在 {tail['n']:,} 个元素处"
              f"（最后一波只填满 {fill:.0%}）跌到 {tail['kernel_gbps']:,.0f} GB/s。",
              f"Effective bandwidth against float32 elements ({sweep[0]['n']:,} to {sweep[-1]['n']:,}, log axis): per "
              f"call it climbs from {sweep[0]['gbps']:,.1f} GB/s to {near['gbps']:,.0f} GB/s at {near['n']:,} elements, "
              f"the first size to reach {NEAR:.0%} of the {peak:,.0f} GB/s DRAM peak. The dashed kernel-alone curve dips to "
              f"{tail['kernel_gbps']:,.0f} GB/s at {tail['n']:,} elements, where the last wave is only "
              f"{fill:.0%} full."),
        caption=T("RTX 4090 模型对 y = 2·x 的预测（圆点：GPU 实验的五个大小）",
                  "The RTX 4090 model's prediction for y = 2·x (dots: the five sizes of the GPU lab)"),
    )
)
# --8<-- [end:figure_show]
