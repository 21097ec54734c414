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
from simtdocs.docs import show
# --8<-- [end:setup]


# %% [markdown]
# ## 演示 1：Amdahl 与 Gustafson · Demo 1: Amdahl and Gustafson

# %%
# --8<-- [start:amdahl_table]
from simtdocs import amdahl, gustafson
from simtdocs.docs import Table, _, glue


def amdahl_table(sms, lanes, speedups, small, larger):
    """The table of §1.2 from {serial fraction: (Amdahl on sms, Amdahl on lanes, Gustafson on lanes)};
    glues the two fractions the prose discusses (small, larger) and what they give."""
    rows = [(s, a_sms, a_lanes, 1 / s, a_lanes / lanes, g) for s, (a_sms, a_lanes, g) in speedups.items()]
    glue("p2_sms_workers", sms)
    glue("p2_lanes", lanes, ",")
    glue("p2_s_small", small, ".0%")
    glue("p2_s_larger", larger, ".0%")
    glue("p2_amdahl_1pct_sms", speedups[small][0], ".2f")
    glue("p2_amdahl_1pct", speedups[small][1], ",.2f")
    glue("p2_amdahl_10pct", speedups[larger][1], ".2f")
    glue("p2_amdahl_1pct_busy", speedups[small][1] / lanes, ".2%")
    glue("p2_gustafson_1pct", speedups[small][2], ",.0f")
    return Table(rows, columns=[
        _("serial fraction s"), _("Amdahl, n = {n} (one per SM)", n=sms), _("Amdahl, n = {n:,} (every lane)", n=lanes),
        _("ceiling 1/s"), _("average lane busy"), _("Gustafson, n = {n:,}", n=lanes)],
        fmt=[".1%", ",.2f", ",.2f", ",.0f", ".2%", ",.0f"])
# --8<-- [end:amdahl_table]


# %%
# --8<-- [start:amdahl]
sms, lanes = H100.sm_count, H100.fp32_lanes  # 132 SMs; 132 × 128 FP32 lanes
SMALL, LARGER = 0.01, 0.10  # the two serial fractions the prose discusses
speedups = {s: (amdahl(s, sms), amdahl(s, lanes), gustafson(s, lanes)) for s in (0.001, SMALL, 0.05, LARGER, 0.25, 0.50)}
show(amdahl_table(sms, lanes, speedups, SMALL, LARGER))
# --8<-- [end:amdahl]


# %%
# --8<-- [start:speedup_figure]
from simtdocs.docs import Figure, _, figure
from simtdocs.i18n import Listing

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
    ax.set_xlabel(str(_("parallel workers n")))
    ax.set_ylabel(str(_("speed-up")))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    return fig


# What the curves reach at n = lanes, for readers who cannot see them.
fractions = Listing(f"{s:.0%}" for s in CURVES_S)
reached = Listing(f"{amdahl(s, lanes):,.2f}" for s in CURVES_S)
ceilings = Listing(f"{1 / s:,.0f}" for s in CURVES_S)
grown = Listing(f"{gustafson(s, lanes):,.0f}" for s in CURVES_S)
speedup_figure = Figure(
    draw_speedup,
    alt=_("Log-log curves of speed-up against the number of workers (1 to {lanes:,}), one colour per serial "
          "fraction s ({fractions}). At {lanes:,} workers Amdahl (solid) has flattened just under its ceiling 1/s "
          "({reached} against ceilings of {ceilings}), while Gustafson (dashed) is still climbing ({grown}).",
          lanes=lanes, fractions=fractions, reached=reached, ceilings=ceilings, grown=grown),
    caption=_("Solid: Amdahl (fixed problem), capped at 1/s. Dashed: Gustafson (the problem grows with n), "
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
# --8<-- [end:models]


# %%
# --8<-- [start:models_numbers]
from simtdocs.docs import glue

glue("p2b_ctx", CTX, ",")
for key, m in (("1b", LLAMA_1B), ("8b", LLAMA_8B)):
    glue(f"p2b_{key}_params", m.params() / 1e9, ".2f")
    glue(f"p2b_{key}_weights_gb", m.matmul_params() * DTYPE_BYTES / 1e9, ".2f")
    glue(f"p2b_{key}_kv_mb", m.kv_bytes(CTX) / 1e6, ".0f")
    glue(f"p2b_{key}_gpu_ms", gpu_time(m) * 1e3, ".2f")
# --8<-- [end:models_numbers]


# %%
# --8<-- [start:launch_table]
from simtdocs.docs import Table, _, glue


def fusion_label(per_layer):
    """'unfused' or 'fused', for a number of kernels per layer (UNFUSED or FUSED)."""
    return _("unfused") if per_layer == UNFUSED else _("fused")


def launch_table(steps):
    """The table of §8.1 from {(model, µs per launch, kernels per layer): decode_step result};
    glues the kernel counts and the cases the prose quotes (1B at 8 µs, 8B fused at 2 µs)."""
    rows = [(name, us, fusion_label(per_layer), st.kernels, st.gpu_s * 1e3, st.launch_s * 1e3,
             st.serial_s * 1e3, st.overlapped_s * 1e3, st.overhead_share)
            for (name, us, per_layer), st in steps.items()]
    one = {k: steps[LLAMA_1B.name, 8, k] for k in (UNFUSED, FUSED)}
    glue("p2b_unfused", UNFUSED)
    glue("p2b_fused", FUSED)
    glue("p2b_final", FINAL)
    glue("p2b_1b_kernels_unfused", one[UNFUSED].kernels)
    glue("p2b_1b_kernels_fused", one[FUSED].kernels)
    glue("p2b_1b_8us_overlap_fused", one[FUSED].overlapped_s * 1e3, ".2f")
    glue("p2b_1b_8us_overlap_unfused", one[UNFUSED].overlapped_s * 1e3, ".2f")
    glue("p2b_1b_8us_share", one[UNFUSED].overhead_share, ".0%")
    glue("p2b_8b_2us_share_fused", steps[LLAMA_8B.name, 2, FUSED].overhead_share, ".0%")
    return Table(rows, columns=[
        _("model"), _("overhead (µs)"), _("fusion"), _("kernels"), _("GPU time (ms)"), _("launch time (ms)"),
        _("serial (ms)"), _("overlapped (ms)"), _("launch share (serial)")],
        fmt=[None, ",", None, ",", ".2f", ".2f", ".2f", ".2f", ".0%"], align="lrlrrrrrr")
# --8<-- [end:launch_table]


# %%
# --8<-- [start:launch]
UNFUSED, FUSED, FINAL = 12, 8, 3  # kernels per layer, and the last RMSNorm, output layer, sampling
OVERHEADS_US = (2, 4, 8)  # per launch: an assumption, typical of a few microseconds
steps = {}
for m in (LLAMA_1B, LLAMA_8B):
    for us in OVERHEADS_US:
        for per_layer in (UNFUSED, FUSED):
            steps[m.name, us, per_layer] = decode_step(m.layers, per_layer, FINAL, gpu_time(m), us * 1e-6)
show(launch_table(steps))
# --8<-- [end:launch]


# %%
# --8<-- [start:launch_figure]
from simtdocs.docs import Figure, _, figure
from simtdocs.i18n import Listing

launch_models = (LLAMA_1B, LLAMA_3B, LLAMA_8B)
model_size = [m.params() / 1e9 for m in launch_models]
launch_share = {(us, per_layer): [decode_step(m.layers, per_layer, FINAL, gpu_time(m), us * 1e-6).overhead_share
                                  for m in launch_models]
                for us in OVERHEADS_US for per_layer in (UNFUSED, FUSED)}


def draw_launch_share():
    fig, ax = figure(figsize=(6.4, 3.6))
    for color, us in zip(("C0", "C1", "C3"), OVERHEADS_US):
        for per_layer, style in ((UNFUSED, "-"), (FUSED, "--")):
            label = f"{us} µs, {fusion_label(per_layer)}"
            ax.plot(model_size, launch_share[us, per_layer], style, color=color, marker="o", label=label)
    ax.set_xscale("log")
    ax.set_xticks(model_size, [f"{m.name}\n{x:.2f}B" for m, x in zip(launch_models, model_size)], fontsize=8)
    ax.minorticks_off()
    ax.set_xlabel(str(_("parameters (billions)")))
    ax.set_ylabel(str(_("launch share of a step (serial)")))
    ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:.0%}")
    ax.set_ylim(0, 0.8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=3, loc="upper right")
    fig.tight_layout()
    return fig


# The highest and the lowest curve, from the smallest model to the largest.
share_top, share_bottom = launch_share[max(OVERHEADS_US), UNFUSED], launch_share[min(OVERHEADS_US), FUSED]
launch_figure = Figure(
    draw_launch_share,
    alt=_("Launch share of a decode step (serial) against model parameters ({b0:.2f}B to {b1:.2f}B), one colour "
          "per launch cost ({costs} µs), solid unfused and dashed fused. The highest curve ({hi} µs, unfused) goes "
          "from {top0:.0%} for {smallest} to {top1:.0%} for {largest}, the lowest ({lo} µs, fused) from "
          "{bottom0:.0%} to {bottom1:.0%}.",
          b0=model_size[0], b1=model_size[-1], costs=Listing(OVERHEADS_US), hi=max(OVERHEADS_US),
          top0=share_top[0], top1=share_top[-1], smallest=launch_models[0].name, largest=launch_models[-1].name,
          lo=min(OVERHEADS_US), bottom0=share_bottom[0], bottom1=share_bottom[-1]),
    caption=_("Share of a batch-1 decode step (H100, BF16, ctx = {ctx}, GPU time at its roofline lower bound) "
              "spent launching kernels one by one from the CPU. Solid: unfused ({unfused} kernels per layer); "
              "dashed: fused ({fused} per layer).", ctx=CTX, unfused=UNFUSED, fused=FUSED),
)
# --8<-- [end:launch_figure]


# %%
launch_figure  # a notebook draws the figure here; the lecture page shows it with show()


# %% [markdown]
# ## 演示 3：numpy 的调用开销（墙钟测量）· Demo 3: numpy's call overhead (wall clock)

# %%
# --8<-- [start:numpy_tables]
import os
import platform

import numpy as np

from simtdocs.docs import Table, _, glue


def machine_note():
    """Which machine measured: the numbers below change with it."""
    return _("Wall-clock measurement on the machine that built this page ({machine}, {cores} cores, Python "
             "{python}, NumPy {numpy}): measured again at every build, so the numbers change.",
             machine=platform.machine(), cores=os.cpu_count(), python=platform.python_version(),
             numpy=np.__version__)


def per_call_table(per_call):
    """The first table of §8.2 from {elements: seconds per np.add call}; the cheapest call is the fixed cost."""
    fixed = min(per_call.values())
    glue("p2b_np_call_us", fixed * 1e6, ".2f")
    glue("p2b_np_share_big", fixed / per_call[max(per_call)], ".1%")
    return Table([(n, t * 1e6, n / t / 1e9, fixed / t) for n, t in per_call.items()],
                 columns=[_("elements"), _("per call (µs)"), _("throughput (G elements/s)"), _("fixed-cost share")],
                 fmt=[",", ".2f", ".3f", ".1%"])


def split_table(n, pieces, one_call, small_calls):
    """The second table of §8.2: n additions in one call and in `pieces` calls; glues what the prose quotes."""
    glue("p2b_np_pieces", pieces)
    glue("p2b_np_log2n", int(np.log2(n)))
    glue("p2b_np_n", n, ",")
    glue("p2b_np_piece_size", n // pieces, ",")
    glue("p2b_np_split_ratio", small_calls / one_call, ".1f")
    return Table([(_("1 call"), n, one_call * 1e6, 1.0),
                  (_("{n} calls", n=pieces), n // pieces, small_calls * 1e6, small_calls / one_call)],
                 columns=[_("how"), _("elements per call"), _("total (µs)"), _("relative to one call")],
                 fmt=[None, ",", ".1f", ".1f"])
# --8<-- [end:numpy_tables]


# %%
# --8<-- [start:numpy_overhead]
def seconds_per_call(fn, calls: int, repeat: int = 15) -> float:
    """Best of ``repeat`` short timings of ``calls`` calls, per call. The minimum is the
    timing least disturbed by whatever else the machine was doing."""
    return min(timeit.repeat(fn, number=calls, repeat=repeat)) / calls


sizes = [1, 2**4, 2**8, 2**12, 2**16, 2**18]
a, b, c = (np.ones(1, np.float32) for _i in range(3))
seconds_per_call(lambda: np.add(a, b, out=c), calls=2000, repeat=3)  # warm up; not kept
per_call = {}
for n in sizes:
    a, b, c = (np.ones(n, np.float32) for _i in range(3))
    per_call[n] = seconds_per_call(lambda: np.add(a, b, out=c), calls=max(5, 4000 // (1 + n // 64)))
# A call that adds one element is almost nothing but the fixed cost.
show(machine_note())
show(per_call_table(per_call))

# The same 2**18 additions, in one call or in 128 small calls of 2,048 elements.
LOG2_N, pieces = 18, 128
n = 2**LOG2_N
a, b, c = (np.ones(n, np.float32) for _i in range(3))
chunks = [(a[i:i + n // pieces], b[i:i + n // pieces], c[i:i + n // pieces])
          for i in range(0, n, n // pieces)]


def many_small_calls():
    for x, y, z in chunks:
        np.add(x, y, out=z)


one_call = seconds_per_call(lambda: np.add(a, b, out=c), calls=20)
small_calls = seconds_per_call(many_small_calls, calls=20)
show(split_table(n, pieces, one_call, small_calls))
# --8<-- [end:numpy_overhead]
