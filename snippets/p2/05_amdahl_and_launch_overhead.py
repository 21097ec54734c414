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
import timeit
from dataclasses import dataclass

import numpy as np

from simtdocs import H100, amdahl, decode_step, gustafson
from simtdocs.display import show
from simtdocs.lectures.p2 import overhead as lecture  # the tables and figures of this script
# --8<-- [end:setup]


# %% [markdown]
# ## 演示 1：Amdahl 与 Gustafson · Demo 1: Amdahl and Gustafson
#
# 表格和图由 simtdocs.lectures.p2.overhead 生成；`_glue` 小节把正文引用的数交给页面。
# The tables and figures are made by simtdocs.lectures.p2.overhead; the `_glue` sections hand the
# numbers the prose quotes to the page.

# %%
# --8<-- [start:amdahl]
sms, lanes = H100.sm_count, H100.fp32_lanes  # 132 SMs; 132 × 128 FP32 lanes
SMALL, LARGER = 0.01, 0.10  # the two serial fractions the prose discusses
speedups = {s: (amdahl(s, sms), amdahl(s, lanes), gustafson(s, lanes)) for s in (0.001, SMALL, 0.05, LARGER, 0.25, 0.50)}
show(lecture.amdahl_table(sms, lanes, speedups))
# --8<-- [end:amdahl]

# %%
# --8<-- [start:amdahl_glue]
from simtdocs.display import glue

glue("p2_sms_workers", sms)
glue("p2_lanes", lanes, ",")
glue("p2_s_small", SMALL, ".0%")
glue("p2_s_larger", LARGER, ".0%")
glue("p2_amdahl_1pct_sms", speedups[SMALL][0], ".2f")
glue("p2_amdahl_1pct", speedups[SMALL][1], ",.2f")
glue("p2_amdahl_10pct", speedups[LARGER][1], ".2f")
glue("p2_amdahl_1pct_busy", speedups[SMALL][1] / lanes, ".2%")
glue("p2_gustafson_1pct", speedups[SMALL][2], ",.0f")
# --8<-- [end:amdahl_glue]


# %%
# --8<-- [start:speedup_figure]
show(lecture.speedup_figure(lanes))
# --8<-- [end:speedup_figure]


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
from simtdocs.display import glue

glue("p2b_ctx", CTX, ",")
for key, m in (("1b", LLAMA_1B), ("8b", LLAMA_8B)):
    glue(f"p2b_{key}_params", m.params() / 1e9, ".2f")
    glue(f"p2b_{key}_weights_gb", m.matmul_params() * DTYPE_BYTES / 1e9, ".2f")
    glue(f"p2b_{key}_kv_mb", m.kv_bytes(CTX) / 1e6, ".0f")
    glue(f"p2b_{key}_gpu_ms", gpu_time(m) * 1e3, ".2f")
# --8<-- [end:models_numbers]


# %%
# --8<-- [start:launch]
UNFUSED, FUSED, FINAL = 12, 8, 3  # kernels per layer, and the last RMSNorm, output layer, sampling
OVERHEADS_US = (2, 4, 8)  # per launch: an assumption, typical of a few microseconds
steps = {}
for m in (LLAMA_1B, LLAMA_8B):
    for us in OVERHEADS_US:
        for per_layer in (UNFUSED, FUSED):
            steps[m.name, us, per_layer] = decode_step(m.layers, per_layer, FINAL, gpu_time(m), us * 1e-6)
show(lecture.launch_table(steps, UNFUSED))
# --8<-- [end:launch]

# %%
# --8<-- [start:launch_glue]
from simtdocs.display import glue

one = {k: steps[LLAMA_1B.name, 8, k] for k in (UNFUSED, FUSED)}  # the 1B model at 8 µs per launch
glue("p2b_unfused", UNFUSED)
glue("p2b_fused", FUSED)
glue("p2b_final", FINAL)
glue("p2b_1b_kernels_unfused", one[UNFUSED].kernels)
glue("p2b_1b_kernels_fused", one[FUSED].kernels)
glue("p2b_1b_8us_overlap_fused", one[FUSED].overlapped_s * 1e3, ".2f")
glue("p2b_1b_8us_overlap_unfused", one[UNFUSED].overlapped_s * 1e3, ".2f")
glue("p2b_1b_8us_share", one[UNFUSED].overhead_share, ".0%")
glue("p2b_8b_2us_share_fused", steps[LLAMA_8B.name, 2, FUSED].overhead_share, ".0%")
# --8<-- [end:launch_glue]


# %%
# --8<-- [start:launch_figure]
show(lecture.launch_figure((LLAMA_1B, LLAMA_3B, LLAMA_8B), gpu_time, OVERHEADS_US, UNFUSED, FUSED, FINAL, CTX))
# --8<-- [end:launch_figure]


# %% [markdown]
# ## 演示 3：numpy 的调用开销（墙钟测量）· Demo 3: numpy's call overhead (wall clock)

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
show(lecture.machine_note())
show(lecture.per_call_table(per_call))

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
show(lecture.split_table(n, pieces, one_call, small_calls))
# --8<-- [end:numpy_overhead]

# %%
# --8<-- [start:numpy_glue]
from simtdocs.display import glue

fixed = min(per_call.values())  # the cheapest call: almost nothing but the fixed cost
glue("p2b_np_call_us", fixed * 1e6, ".2f")
glue("p2b_np_share_big", fixed / per_call[max(per_call)], ".1%")
glue("p2b_np_pieces", pieces)
glue("p2b_np_log2n", LOG2_N)
glue("p2b_np_n", n, ",")
glue("p2b_np_piece_size", n // pieces, ",")
glue("p2b_np_split_ratio", small_calls / one_call, ".1f")
# --8<-- [end:numpy_glue]
