# %% [markdown]
# # P2 · 代码 10：纸上的 Triton · Code 10: Triton on paper
#
# 同一份工作的两种写法：Triton 的块级内核（`@triton.jit`），和按线程写的掩码形式（`blk`）。
# 两者从 DRAM 搬的字节相同，请求数却不同；再用计数器回答“这个内核受带宽限制吗”：
# 融合的 softmax 对比逐步的 softmax，以及一个矩阵乘法的分块。
# The same work written twice: Triton's block-level kernel (`@triton.jit`) and the per-thread
# mask form (`blk`). Both move the same bytes from DRAM, in different numbers of requests; then
# the counters answer "is this kernel memory-bound?" for a fused softmax against a step-by-step
# one, and for a matmul tile.
#
# Run it alone: `python snippets/p2/10_triton.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import A100, H100, RTX4090, cdiv, launch, triton
from simtdocs.display import Table, show
from simtdocs.i18n import _
from simtdocs.triton import language as tl

SECTOR = 32  # bytes of one DRAM sector
# --8<-- [end:setup]


# %% [markdown]
# ## 向量加法的两种写法 · A vector add, two ways

# %%
# --8<-- [start:vector_add]
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)                   # one program instance per BLOCK elements
    offsets = pid * BLOCK + tl.arange(0, BLOCK)   # the program's whole block of indices
    inside = offsets < n                          # the masked tail of the last program
    x = tl.load(x_ptr + offsets, mask=inside)
    y = tl.load(y_ptr + offsets, mask=inside)
    tl.store(out_ptr + offsets, x + y, mask=inside)


def add_masks(blk, x, y, out, n):                 # the same work, one element per thread
    i = blk.bx * blk.bdx + blk.tx
    inside = blk.branch(i < n)
    blk.store(out, i, blk.load(x, i, mask=inside) + blk.load(y, i, mask=inside), mask=inside)
# --8<-- [end:vector_add]


# %%
# --8<-- [start:vector_add_run]
BLOCK, WARPS = 1024, 4
rows = []
for n in (1 << 20, (1 << 20) + 5):                # a multiple of 16, and a ragged tail
    rng = np.random.default_rng(n)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out_t, out_m = np.zeros(n, np.float32), np.zeros(n, np.float32)
    in_triton = add_kernel[(cdiv(n, BLOCK),)](x, y, out_t, n, BLOCK=BLOCK, num_warps=WARPS)
    in_masks = launch(add_masks, grid=cdiv(n, 256), block=256, args=(x, y, out_m, n))
    assert np.array_equal(out_t, x + y) and np.array_equal(out_m, x + y)
    assert in_triton.requested_bytes == in_masks.requested_bytes == 12 * n  # the same bytes asked for
    for view, st in (("Triton", in_triton), ("blk", in_masks)):
        rows.append((f"{n:,}", view, st.requested_bytes, st.requests, st.sectors, st.coalescing_efficiency))
show(Table(rows, [_("elements"), _("written as"), _("bytes asked for"), _("global requests"), _("sectors"),
                  _("coalescing")], fmt=[None, None, ",", ",", ",", ".0%"], align="llrrrr"))
# --8<-- [end:vector_add_run]

# %%
# --8<-- [start:vector_add_glue]
from simtdocs.display import glue

n_even, n_ragged = 1 << 20, (1 << 20) + 5
glue("tr_n", n_even)
glue("tr_n_ragged", n_ragged)
glue("tr_block", BLOCK)
glue("tr_warps", WARPS)
glue("tr_per_thread", BLOCK // (WARPS * 32))         # elements each thread of a program holds
glue("tr_bytes", 12 * n_even)                          # read x and y, write out: 4 bytes each
glue("tr_sectors", 12 * n_even // SECTOR)              # 12n bytes in 32-byte sectors
named = ("elements", "view", "asked", "requests", "sectors", "coalescing")  # the table's columns
by = {(r[0], r[1]): dict(zip(named, r)) for r in rows}
even, ragged, masks = by[f"{n_even:,}", "Triton"], by[f"{n_ragged:,}", "Triton"], by[f"{n_even:,}", "blk"]
assert even["sectors"] == masks["sectors"] == 12 * n_even // SECTOR and even["coalescing"] == 1.0  # 3n/8, all used
glue("tr_req_triton", even["requests"])
glue("tr_req_blk", masks["requests"])
glue("tr_vector_bytes", even["asked"] // (even["requests"] * 32))    # bytes one lane moves per request
glue("tr_req_ragged", ragged["requests"])
glue("tr_sectors_ragged", ragged["sectors"])
glue("tr_coalescing_ragged", ragged["coalescing"], ".0%")
# --8<-- [end:vector_add_glue]


# %% [markdown]
# ## 融合的 softmax · A fused softmax

# %%
# --8<-- [start:softmax]
@triton.jit
def softmax_fused(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)                        # one program per row
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))             # the row stays in registers from here
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


@triton.jit
def row_max(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):   # step 1 of 5: m = max(x)
    row, cols = tl.program_id(0), tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    tl.store(out_ptr + row, tl.max(x, axis=0))


@triton.jit
def subtract(out_ptr, in_ptr, m_ptr, n_cols, BLOCK: tl.constexpr):  # step 2: z = x - m
    row, cols = tl.program_id(0), tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * n_cols + cols, mask=cols < n_cols)
    tl.store(out_ptr + row * n_cols + cols, x - tl.load(m_ptr + row), mask=cols < n_cols)


@triton.jit
def exponent(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):   # step 3: e = exp(z)
    row, cols = tl.program_id(0), tl.arange(0, BLOCK)
    z = tl.load(in_ptr + row * n_cols + cols, mask=cols < n_cols)
    tl.store(out_ptr + row * n_cols + cols, tl.exp(z), mask=cols < n_cols)


@triton.jit
def row_sum(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):   # step 4: s = sum(e)
    row, cols = tl.program_id(0), tl.arange(0, BLOCK)
    e = tl.load(in_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(e, axis=0))


@triton.jit
def divide(out_ptr, in_ptr, s_ptr, n_cols, BLOCK: tl.constexpr):   # step 5: y = e / s
    row, cols = tl.program_id(0), tl.arange(0, BLOCK)
    e = tl.load(in_ptr + row * n_cols + cols, mask=cols < n_cols)
    tl.store(out_ptr + row * n_cols + cols, e / tl.load(s_ptr + row), mask=cols < n_cols)
# --8<-- [end:softmax]


# %%
# --8<-- [start:softmax_run]
M, N = 1823, 781                                  # the shape of Triton's softmax tutorial
COLS = triton.next_power_of_2(N)                  # one block holds a whole row
x = np.random.default_rng(9).standard_normal((M, N), dtype=np.float32)
want = np.exp(x - x.max(1, keepdims=True))
want /= want.sum(1, keepdims=True)

y = np.zeros_like(x)
fused = [softmax_fused[(M,)](y, x, N, BLOCK=COLS)]
assert np.allclose(y, want, rtol=1e-5, atol=1e-7)

m, s = np.zeros(M, np.float32), np.zeros(M, np.float32)
z, e, y2 = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
steps = [row_max[(M,)](m, x, N, BLOCK=COLS), subtract[(M,)](z, x, m, N, BLOCK=COLS),
         exponent[(M,)](e, z, N, BLOCK=COLS), row_sum[(M,)](s, e, N, BLOCK=COLS),
         divide[(M,)](y2, e, s, N, BLOCK=COLS)]  # the tutorial's naive softmax, one kernel a step
assert np.allclose(y2, want, rtol=1e-5, atol=1e-7)


def moved(launches):
    """Elements read and written (4 bytes each) and DRAM bytes, summed over the launches."""
    return sum(st.requested_bytes for st in launches) // 4, sum(st.sectors for st in launches) * SECTOR


rows = []
for label, launches in ((_("fused: one kernel"), fused), (_("step by step: five kernels"), steps)):
    elements, dram = moved(launches)
    rows.append((label, len(launches), elements, dram,
                 *(dram / d.memory_bandwidth * 1e6 for d in (H100, A100, RTX4090))))
show(Table(rows, [_("softmax"), _("kernels"), _("elements moved"), _("DRAM bytes"),
                  _("DRAM time on H100 (µs)"), _("on A100 (µs)"), _("on RTX 4090 (µs)")],
           fmt=[None, None, ",", ",", ".1f", ".1f", ".1f"], align="lrrrrrr"))
# --8<-- [end:softmax_run]

# %%
# --8<-- [start:softmax_glue]
from simtdocs.display import glue

(fused_elements, fused_bytes), (step_elements, step_bytes) = moved(fused), moved(steps)
assert fused_elements == 2 * M * N and step_elements == 8 * M * N + 4 * M  # the tutorial's claim
glue("tr_M", M)
glue("tr_N", N)
glue("tr_fused_elements", fused_elements)
glue("tr_step_elements", step_elements)
glue("tr_softmax_ratio", step_bytes / fused_bytes, ".1f")
# --8<-- [end:softmax_glue]


# %% [markdown]
# ## 矩阵乘法的一个分块 · A matmul tile

# %%
# --8<-- [start:matmul]
@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)  # one BM×BN tile of C per program
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):                      # walk K one BK-wide slab at a time
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)                    # BM×BK times BK×BN on the tensor cores
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)
# --8<-- [end:matmul]


# %%
# --8<-- [start:matmul_run]
S, BM, BN, BK = 512, 64, 64, 32
rng = np.random.default_rng(11)
A = rng.standard_normal((S, S)).astype(np.float16)
B = rng.standard_normal((S, S)).astype(np.float16)
C = np.zeros((S, S), np.float32)
st = matmul[(S // BM, S // BN)](A, B, C, S, S, S, BM=BM, BN=BN, BK=BK)
assert np.allclose(C, A.astype(np.float32) @ B.astype(np.float32), rtol=1e-2, atol=1e-2)

flops = sum(d.flops for d in st.dots.values())
dram = st.sectors * SECTOR
operands = (S // BM) * (S // BN) * S * (BM + BN) * A.itemsize  # each program reads its A and B panels
intensity = flops / dram


def fp32_peak(d):
    """FLOP/s of the CUDA cores: one fused multiply-add (2 FLOPs) per lane per cycle."""
    return d.sm_count * d.fp32_lanes_per_sm * 2 * d.clock_hz


rows = [(d.name, fp32_peak(d) / 1e12, d.memory_bandwidth / 1e12, fp32_peak(d) / d.memory_bandwidth,
         _("compute") if intensity > fp32_peak(d) / d.memory_bandwidth else _("memory"))
        for d in (H100, A100, RTX4090)]
show(Table(rows, [_("GPU"), _("FP32 peak (TFLOP/s)"), _("DRAM (TB/s)"), _("ridge point (FLOP/byte)"),
                  _("this tile is bound by")], fmt=[None, ".1f", ".2f", ".1f", None], align="lrrrl"))
# --8<-- [end:matmul_run]

# %%
# --8<-- [start:matmul_glue]
from simtdocs.display import glue

assert flops == 2 * S * S * S and dram == operands + C.nbytes  # no L2 in the model: every panel from DRAM
glue("tr_S", S)
glue("tr_tile", f"{BM}×{BN}×{BK}")
glue("tr_flops", flops)
glue("tr_dram", dram)
glue("tr_intensity", intensity, ".1f")
glue("tr_mma", sum(d.mma for d in st.dots.values()))
# --8<-- [end:matmul_glue]
