# %% [markdown]
# # P2 · 代码 05：Amdahl 定律与内核启动开销 · Code 05: Amdahl's law and launch overhead
#
# Amdahl 与 Gustafson 在 GPU 尺度上的数字；LLM decode 一步里的启动开销；在你自己的电脑上测
# numpy 每次调用的固定开销。
# Amdahl and Gustafson at GPU scale; the launch overhead inside one LLM decode step; numpy's
# fixed cost per call, measured on your own machine. Everything but the last demo is a model.
#
# Run it alone: `python snippets/p2/05_amdahl_and_launch_overhead.py`

# %%
# --8<-- [start:setup]
import os
import platform
import timeit
from dataclasses import dataclass

import numpy as np

from simtdocs import H100, amdahl, decode_step, gustafson
from simtdocs.docs import T, Figure, Table, figure, glue, show
# --8<-- [end:setup]


# %% [markdown]
# ## 演示 1：Amdahl 与 Gustafson · Demo 1: Amdahl and Gustafson

# %%
# --8<-- [start:amdahl_table]
sms, lanes = H100.sm_count, H100.fp32_lanes  # 132 SMs; 132 × 128 FP32 lanes
SMALL, LARGER = 0.01, 0.10  # the two serial fractions the prose discusses
rows = []
for s in (0.001, SMALL, 0.05, LARGER, 0.25, 0.50):
    rows.append((s, amdahl(s, sms), amdahl(s, lanes), 1 / s, amdahl(s, lanes) / lanes, gustafson(s, lanes)))
show(Table(rows, columns=[
    T("串行比例 s", "serial fraction s"),
    T(f"Amdahl，n = {sms}（每 SM 算一个）", f"Amdahl, n = {sms} (one per SM)"),
    T(f"Amdahl，n = {lanes:,}（全部 lane）", f"Amdahl, n = {lanes:,} (every lane)"),
    T("上限 1/s", "ceiling 1/s"),
    T("lane 平均忙碌比例", "average lane busy"),
    T(f"Gustafson，n = {lanes:,}", f"Gustafson, n = {lanes:,}")],
    fmt=[".1%", ",.2f", ",.2f", ",.0f", ".2%", ",.0f"]))
glue("p2_sms_workers", sms)
glue("p2_lanes", lanes, ",")
glue("p2_s_small", SMALL, ".0%")
glue("p2_s_larger", LARGER, ".0%")
glue("p2_amdahl_1pct_sms", amdahl(SMALL, sms), ".2f")
glue("p2_amdahl_1pct", amdahl(SMALL, lanes), ",.2f")
glue("p2_amdahl_10pct", amdahl(LARGER, lanes), ".2f")
glue("p2_amdahl_1pct_busy", amdahl(SMALL, lanes) / lanes, ".2%")
glue("p2_gustafson_1pct", gustafson(SMALL, lanes), ",.0f")
# --8<-- [end:amdahl_table]


# %%
# --8<-- [start:speedup_figure]
CURVES_S = (0.01, 0.05, 0.10)  # the serial fractions drawn


def draw_speedup():
    n = np.unique(np.logspace(0, np.log10(lanes), 200).round())
    fig, ax = figure(figsize=(6.4, 4))
    for s, colour in zip(CURVES_S, ("tab:blue", "tab:orange", "tab:green")):
        ax.plot(n, [amdahl(s, k) for k in n], color=colour, label=f"Amdahl, s = {s:.0%}")
        ax.plot(n, [gustafson(s, k) for k in n], color=colour, ls="--", label=f"Gustafson, s = {s:.0%}")
        ax.plot([lanes], [amdahl(s, lanes)], "o", color=colour)  # the table's points
        ax.plot([lanes], [gustafson(s, lanes)], "s", color=colour)
    ax.axvline(lanes, color="grey", lw=0.8)
    ax.text(lanes, 1.3, f" {lanes:,}", color="grey", ha="right", va="bottom", rotation=90)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(str(T("并行单元数 n", "parallel workers n")))
    ax.set_ylabel(str(T("加速比", "speed-up")))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    return fig


# What the curves reach at n = lanes, for readers who cannot see them.
fractions = [f"{s:.0%}" for s in CURVES_S]
reached = [f"{amdahl(s, lanes):,.2f}" for s in CURVES_S]
ceilings = [f"{1 / s:,.0f}" for s in CURVES_S]
grown = [f"{gustafson(s, lanes):,.0f}" for s in CURVES_S]
speedup_figure = Figure(
    draw_speedup,
    alt=T(f"对数坐标下加速比随并行单元数（1 到 {lanes:,}）变化的曲线，每种颜色一个串行比例 s"
          f"（{'、'.join(fractions)}）。在 {lanes:,} 个单元处，Amdahl（实线）已贴近上限 1/s"
          f"（分别为 {'、'.join(reached)}，上限 {'、'.join(ceilings)}），"
          f"Gustafson（虚线）仍在上升（{'、'.join(grown)}）。",
          f"Log-log curves of speed-up against the number of workers (1 to {lanes:,}), one colour per serial "
          f"fraction s ({', '.join(fractions)}). At {lanes:,} workers Amdahl (solid) has flattened just under "
          f"its ceiling 1/s ({', '.join(reached)} against ceilings of {', '.join(ceilings)}), "
          f"while Gustafson (dashed) is still climbing ({', '.join(grown)})."),
    caption=T("实线是 Amdahl（问题规模不变），到 1/s 就封顶；虚线是 Gustafson（问题随 n 一起变大），"
              "几乎是一条直线。竖线标出 H100 的 FP32 lane 数，圆点和方块是上表里的值。",
              "Solid: Amdahl (fixed problem), capped at 1/s. Dashed: Gustafson (the problem grows with n), "
              "nearly linear. The vertical line is H100's FP32 lane count; dots and squares are the table's values."),
)
# --8<-- [end:speedup_figure]


# %%
speedup_figure  # a notebook draws the figure here; the lecture page shows it with show()


# %% [markdown]
# ## 演示 2：decode 一步的启动开销 · Demo 2: launch overhead of one decode step

# %%
# --8<-- [start:models]
@dataclass(frozen=True)
class Model:
    """The shape of a Llama-style decoder, as its published config.json gives it."""

    name: str
    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied: bool  # the output layer reuses the embedding matrix

    def matmul_params(self) -> int:
        """Weights a decode step multiplies by: every layer's projections plus the output layer."""
        q = o = self.hidden * self.heads * self.head_dim
        k = v = self.hidden * self.kv_heads * self.head_dim
        mlp = 3 * self.hidden * self.intermediate  # gate, up, down
        return self.layers * (q + k + v + o + mlp) + self.vocab * self.hidden

    def params(self) -> int:
        """Parameters, norms left out (they are tiny)."""
        embedding = 0 if self.tied else self.vocab * self.hidden
        return self.matmul_params() + embedding

    def kv_bytes(self, ctx: int, dtype_bytes: int = 2) -> int:
        """K and V of ``ctx`` earlier tokens, every layer."""
        return 2 * self.layers * self.kv_heads * self.head_dim * ctx * dtype_bytes


# Meta's published configurations (config.json of each model on Hugging Face).
LLAMA_1B = Model("Llama 3.2 1B", 16, 2048, 8192, 32, 8, 64, 128256, tied=True)
LLAMA_3B = Model("Llama 3.2 3B", 28, 3072, 8192, 24, 8, 128, 128256, tied=True)
LLAMA_8B = Model("Llama 3.1 8B", 32, 4096, 14336, 32, 8, 128, 128256, tied=False)

CTX = 1024  # tokens already in the KV cache (an assumption)
DTYPE_BYTES = 2  # BF16 weights and KV cache


def gpu_time(m: Model, device=H100) -> float:
    """Roofline lower bound of one batch-1 decode step: every weight and the whole KV
    cache are read once from HBM, and at about 1 FLOP per byte the step is memory-bound."""
    return (m.matmul_params() * DTYPE_BYTES + m.kv_bytes(CTX, DTYPE_BYTES)) / device.memory_bandwidth


glue("p2b_ctx", CTX, ",")
for key, m in (("1b", LLAMA_1B), ("8b", LLAMA_8B)):
    glue(f"p2b_{key}_params", m.params() / 1e9, ".2f")
    glue(f"p2b_{key}_weights_gb", m.matmul_params() * DTYPE_BYTES / 1e9, ".2f")
    glue(f"p2b_{key}_kv_mb", m.kv_bytes(CTX) / 1e6, ".0f")
    glue(f"p2b_{key}_gpu_ms", gpu_time(m) * 1e3, ".2f")
# --8<-- [end:models]


# %%
# --8<-- [start:launch_table]
UNFUSED, FUSED, FINAL = 12, 8, 3  # kernels per layer, and the last RMSNorm, output layer, sampling
OVERHEADS_US = (2, 4, 8)  # per launch: an assumption, typical of a few microseconds
FUSION = {UNFUSED: T("未融合", "unfused"), FUSED: T("融合", "fused")}

rows = []
for m in (LLAMA_1B, LLAMA_8B):
    for us in OVERHEADS_US:
        for per_layer in (UNFUSED, FUSED):
            step = decode_step(m.layers, per_layer, FINAL, gpu_time(m), us * 1e-6)
            rows.append((m.name, us, FUSION[per_layer], step.kernels, step.gpu_s * 1e3,
                         step.launch_s * 1e3, step.serial_s * 1e3, step.overlapped_s * 1e3,
                         step.overhead_share))
show(Table(rows, columns=[
    T("模型", "model"), T("启动开销 (µs)", "overhead (µs)"), T("融合", "fusion"),
    T("内核数", "kernels"), T("GPU 时间 (ms)", "GPU time (ms)"), T("启动时间 (ms)", "launch time (ms)"),
    T("不重叠 (ms)", "serial (ms)"), T("完全重叠 (ms)", "overlapped (ms)"),
    T("启动占比（不重叠）", "launch share (serial)")],
    fmt=[None, ",", None, ",", ".2f", ".2f", ".2f", ".2f", ".0%"], align="lrlrrrrrr"))

one = {k: decode_step(LLAMA_1B.layers, k, FINAL, gpu_time(LLAMA_1B), 8e-6) for k in (UNFUSED, FUSED)}
glue("p2b_unfused", UNFUSED)
glue("p2b_fused", FUSED)
glue("p2b_final", FINAL)
glue("p2b_1b_kernels_unfused", one[UNFUSED].kernels)
glue("p2b_1b_kernels_fused", one[FUSED].kernels)
glue("p2b_1b_8us_overlap_fused", one[FUSED].overlapped_s * 1e3, ".2f")
glue("p2b_1b_8us_overlap_unfused", one[UNFUSED].overlapped_s * 1e3, ".2f")
glue("p2b_1b_8us_share", one[UNFUSED].overhead_share, ".0%")
glue("p2b_8b_2us_share_fused",
     decode_step(LLAMA_8B.layers, FUSED, FINAL, gpu_time(LLAMA_8B), 2e-6).overhead_share, ".0%")
# --8<-- [end:launch_table]


# %%
# --8<-- [start:launch_figure]
launch_models = (LLAMA_1B, LLAMA_3B, LLAMA_8B)
model_size = [m.params() / 1e9 for m in launch_models]
launch_share = {(us, per_layer): [decode_step(m.layers, per_layer, FINAL, gpu_time(m), us * 1e-6).overhead_share
                                  for m in launch_models]
                for us in OVERHEADS_US for per_layer in (UNFUSED, FUSED)}


def draw_launch_share():
    fig, ax = figure(figsize=(6.4, 3.6))
    for color, us in zip(("C0", "C1", "C3"), OVERHEADS_US):
        for per_layer, style in ((UNFUSED, "-"), (FUSED, "--")):
            label = f"{us} µs, {FUSION[per_layer]}"
            ax.plot(model_size, launch_share[us, per_layer], style, color=color, marker="o", label=label)
    ax.set_xscale("log")
    ax.set_xticks(model_size, [f"{m.name}\n{x:.2f}B" for m, x in zip(launch_models, model_size)], fontsize=8)
    ax.minorticks_off()
    ax.set_xlabel(str(T("参数量（十亿）", "parameters (billions)")))
    ax.set_ylabel(str(T("启动开销占每步时间（不重叠）", "launch share of a step (serial)")))
    ax.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
    ax.set_ylim(0, 0.8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=3, loc="upper right")
    fig.tight_layout()
    return fig


# The highest and the lowest curve, from the smallest model to the largest.
share_top, share_bottom = launch_share[max(OVERHEADS_US), UNFUSED], launch_share[min(OVERHEADS_US), FUSED]
smallest, largest = launch_models[0].name, launch_models[-1].name
costs = [f"{us}" for us in OVERHEADS_US]
launch_figure = Figure(
    draw_launch_share,
    alt=T(f"启动开销占 decode 一步时间的比例（不重叠）随模型参数量（{model_size[0]:.2f}B 到 {model_size[-1]:.2f}B）"
          f"变化，每种颜色一个每次启动的开销（{'、'.join(costs)} µs），实线未融合、虚线融合。"
          f"最高的一条（{max(OVERHEADS_US)} µs、未融合）从 {smallest} 的 {share_top[0]:.0%} 到 {largest} 的 "
          f"{share_top[-1]:.0%}，最低的一条（{min(OVERHEADS_US)} µs、融合）从 {share_bottom[0]:.0%} 到 "
          f"{share_bottom[-1]:.0%}。",
          f"Launch share of a decode step (serial) against model parameters ({model_size[0]:.2f}B to "
          f"{model_size[-1]:.2f}B), one colour per launch cost ({', '.join(costs)} µs), solid unfused and dashed "
          f"fused. The highest curve ({max(OVERHEADS_US)} µs, unfused) goes from {share_top[0]:.0%} for {smallest} "
          f"to {share_top[-1]:.0%} for {largest}, the lowest ({min(OVERHEADS_US)} µs, fused) from "
          f"{share_bottom[0]:.0%} to {share_bottom[-1]:.0%}."),
    caption=T(f"batch = 1 的 decode 一步（H100，BF16，ctx = {CTX}，GPU 时间取 roofline 下界）里，"
              f"CPU 逐个启动内核的时间占多少。实线未融合（每层 {UNFUSED} 个内核），虚线融合（每层 {FUSED} 个）。",
              f"Share of a batch-1 decode step (H100, BF16, ctx = {CTX}, GPU time at its roofline lower bound) "
              f"spent launching kernels one by one from the CPU. Solid: unfused ({UNFUSED} kernels per layer); "
              f"dashed: fused ({FUSED} per layer)."),
)
# --8<-- [end:launch_figure]


# %%
launch_figure  # a notebook draws the figure here; the lecture page shows it with show()


# %% [markdown]
# ## 演示 3：numpy 的调用开销（墙钟测量）· Demo 3: numpy's call overhead (wall clock)

# %%
# --8<-- [start:numpy_overhead]
def seconds_per_call(fn, calls: int, repeat: int = 15) -> float:
    """Best of ``repeat`` short timings of ``calls`` calls, per call. The minimum is the
    timing least disturbed by whatever else the machine was doing."""
    return min(timeit.repeat(fn, number=calls, repeat=repeat)) / calls


sizes = [1, 2**4, 2**8, 2**12, 2**16, 2**18]
a, b, c = (np.ones(1, np.float32) for _ in range(3))
seconds_per_call(lambda: np.add(a, b, out=c), calls=2000, repeat=3)  # warm up; not kept
per_call = {}
for n in sizes:
    a, b, c = (np.ones(n, np.float32) for _ in range(3))
    per_call[n] = seconds_per_call(lambda: np.add(a, b, out=c), calls=max(5, 4000 // (1 + n // 64)))

# A call that adds one element is almost nothing but the fixed cost; the cheapest call
# measured (normally that one) is our estimate of it.
fixed = min(per_call.values())
show(T(f"墙钟测量，在构建本页的机器上（{platform.machine()}，{os.cpu_count()} 核，"
       f"Python {platform.python_version()}，NumPy {np.__version__}）：每次构建重新测，数字会变。",
       f"Wall-clock measurement on the machine that built this page ({platform.machine()}, "
       f"{os.cpu_count()} cores, Python {platform.python_version()}, NumPy {np.__version__}): "
       f"measured again at every build, so the numbers change."))
show(Table([(n, per_call[n] * 1e6, n / per_call[n] / 1e9, fixed / per_call[n]) for n in sizes],
           columns=[T("元素数", "elements"), T("每次调用 (µs)", "per call (µs)"),
                    T("吞吐（十亿元素/秒）", "throughput (G elements/s)"),
                    T("固定开销占比", "fixed-cost share")],
           fmt=[",", ".2f", ".3f", ".1%"]))

# The same 2**18 additions, in one call or in 128 small calls of 2,048 elements.
LOG2_N, pieces = 18, 128
n = 2**LOG2_N
a, b, c = (np.ones(n, np.float32) for _ in range(3))
chunks = [(a[i:i + n // pieces], b[i:i + n // pieces], c[i:i + n // pieces])
          for i in range(0, n, n // pieces)]


def many_small_calls():
    for x, y, z in chunks:
        np.add(x, y, out=z)


one_call = seconds_per_call(lambda: np.add(a, b, out=c), calls=20)
small_calls = seconds_per_call(many_small_calls, calls=20)
show(Table([(T("1 次调用", "1 call"), n, one_call * 1e6, 1.0),
            (T(f"{pieces} 次调用", f"{pieces} calls"), n // pieces, small_calls * 1e6, small_calls / one_call)],
           columns=[T("怎样加", "how"), T("每次的元素数", "elements per call"),
                    T("总时间 (µs)", "total (µs)"), T("相对一次调用", "relative to one call")],
           fmt=[None, ",", ".1f", ".1f"]))
glue("p2b_np_call_us", fixed * 1e6, ".2f")
glue("p2b_np_share_big", fixed / per_call[2**18], ".1%")
glue("p2b_np_pieces", pieces)
glue("p2b_np_log2n", LOG2_N)
glue("p2b_np_n", n, ",")
glue("p2b_np_piece_size", n // pieces, ",")
glue("p2b_np_split_ratio", small_calls / one_call, ".1f")
# --8<-- [end:numpy_overhead]
