# %% [markdown]
# # P2 · 代码 04：占用率、延迟隐藏与波 · Code 04: occupancy, latency hiding and waves
#
# 占用率计算器；利特尔定律：占用率与指令级并行；波量化与分块大小。
# The occupancy calculator; Little's law: occupancy versus instruction-level parallelism;
# wave quantisation and the tile size. Everything here is an analytic model of an H100.
#
# Run it alone: `python snippets/p2/04_occupancy_latency_waves.py`

# %%
# --8<-- [start:setup]
from simtdocs import H100, cdiv, latency_hiding, occupancy, waves
from simtdocs.display import show
from simtdocs.lectures.p2 import occupancy as lecture  # the tables and figures of this script

KB = 1024
# --8<-- [end:setup]


# %% [markdown]
# ## 演示 1：占用率计算器 · Demo 1: the occupancy calculator
#
# 表格和图由 simtdocs.lectures.p2.occupancy 生成；`_glue` 小节把正文引用的数交给页面。
# The tables and figures are made by simtdocs.lectures.p2.occupancy; the `_glue` sections hand
# the numbers the prose quotes to the page.

# %%
# --8<-- [start:occupancy]
kernels = {  # name: (threads per block, registers per thread, shared memory per block in bytes)
    "elem": (256, 16, 0),         # an elementwise kernel (vector add)
    "small": (32, 16, 0),         # tiny blocks
    "ex": (128, 96, 32 * KB),
    "ex16": (128, 96, 16 * KB),   # the same with less shared memory
    "big": (256, 255, 64 * KB),   # a big-tile matmul
    "smem": (256, 64, 100 * KB),  # shared-memory heavy
}
results = {key: occupancy(threads, regs, smem, device=H100) for key, (threads, regs, smem) in kernels.items()}
show(lecture.occupancy_table(kernels, results))
# --8<-- [end:occupancy]

# %%
# --8<-- [start:occupancy_glue]
from simtdocs.display import glue

for key, (threads, regs, smem) in kernels.items():
    glue(f"p2b_{key}_blocks", results[key].blocks_per_sm)
    glue(f"p2b_{key}_warps", results[key].warps_per_sm)
    glue(f"p2b_{key}_occ", results[key].occupancy, ".1%")
    glue(f"p2b_{key}_threads", threads)  # the kernel's inputs, for the prose
    glue(f"p2b_{key}_regs", regs)
    glue(f"p2b_{key}_smem_kb", smem // KB)
for key, value in (("max_warps", H100.max_warps_per_sm), ("max_blocks", H100.max_blocks_per_sm),
                   ("regs_per_sm", H100.registers_per_sm), ("reg_unit", H100.register_allocation_unit),
                   ("smem_per_sm_kb", H100.shared_per_sm // KB),
                   ("smem_reserved_kb", H100.reserved_shared_per_block // KB)):
    glue(f"p2b_{key}", value, ",")
# --8<-- [end:occupancy_glue]


# %%
# --8<-- [start:occupancy_figure]
show(lecture.occupancy_figure(H100))
# --8<-- [end:occupancy_figure]

# %%
# --8<-- [start:occupancy_figure_glue]
from simtdocs.display import glue

STAIR_THREADS, STAIR_REGS = 256, 64  # one step of the staircase: STAIR_REGS -> STAIR_REGS + 1
glue("p2b_stair_threads", STAIR_THREADS)
glue("p2b_stair_regs", STAIR_REGS)
glue("p2b_stair_regs1", STAIR_REGS + 1)
glue("p2b_r64_occ", occupancy(STAIR_THREADS, STAIR_REGS, 0, device=H100).occupancy, ".1%")
glue("p2b_r65_occ", occupancy(STAIR_THREADS, STAIR_REGS + 1, 0, device=H100).occupancy, ".1%")
# --8<-- [end:occupancy_figure_glue]


# %% [markdown]
# ## 演示 2：利特尔定律 · Demo 2: Little's law

# %%
# --8<-- [start:latency]
# (warps resident on the SM, independent requests per warp, bytes per request)
# A warp-wide float load moves 32 × 4 = 128 bytes; a float4 load 32 × 16 = 512 bytes.
cases = [(64, 1, 128), (32, 1, 128), (16, 1, 128), (16, 2, 128), (16, 1, 512), (16, 2, 512), (8, 4, 512)]
results = {case: latency_hiding(*case, device=H100) for case in cases}
show(lecture.latency_table(results, H100))
# --8<-- [end:latency]

# %%
# --8<-- [start:latency_glue]
from simtdocs.display import glue

need = latency_hiding(1, device=H100)
glue("p2b_bw_per_sm", H100.bandwidth_per_sm / 1e9, ".1f")  # GB/s
glue("p2b_latency_ns", need.latency_s * 1e9, ".0f")
glue("p2b_latency_cycles", need.latency_s * H100.clock_hz, ",.0f")  # the same latency in H100 cycles
glue("p2b_need_kb", need.needed_bytes / 1e3, ".1f")  # KB = 1,000 bytes
glue("p2b_need_bytes", round(need.needed_bytes), ",")
glue("p2b_lh_full", results[64, 1, 128].fraction, ".0%")
glue("p2b_lh_16", results[16, 1, 128].fraction, ".0%")
glue("p2b_lh_16_bytes", results[16, 1, 128].in_flight_bytes, ",")
glue("p2b_lh_vec", results[16, 2, 512].fraction, ".0%")
glue("p2b_lh_vec_bytes", results[16, 2, 512].in_flight_bytes, ",")
glue("p2b_lh_vec_occ", 16 / H100.max_warps_per_sm, ".0%")
glue("p2b_req_float", 32 * 4)  # bytes of one warp-wide float load
glue("p2b_req_float4", 32 * 16)  # ... and of a float4 load
# Fewest warps that reach full bandwidth with float4 loads, 2 requests per warp.
glue("p2b_lh_enough", min(k for k in range(1, 65) if latency_hiding(k, 2, 512, device=H100).fraction >= 1))
# --8<-- [end:latency_glue]


# %%
# --8<-- [start:latency_figure]
show(lecture.latency_figure(H100))
# --8<-- [end:latency_figure]


# %% [markdown]
# ## 演示 3：波 · Demo 3: waves

# %%
# --8<-- [start:waves]
S = H100.sm_count  # one block per SM: a wave is S blocks
results = {blocks: waves(blocks, blocks_per_sm=1, device=H100)
           for blocks in (S, S + 1, 2 * S, 2 * S + 1, 10 * S, 10 * S + 1)}
show(lecture.waves_table(results))
# --8<-- [end:waves]

# %%
# --8<-- [start:waves_glue]
from simtdocs.display import glue

glue("p2b_sms", S)
glue("p2b_w133_blocks", S + 1)
glue("p2b_w265_blocks", 2 * S + 1)
glue("p2b_w133_util", results[S + 1].utilisation, ".0%")
glue("p2b_w133_waves", results[S + 1].waves)
glue("p2b_w133_last", results[S + 1].last_wave_blocks)
glue("p2b_w265_util", results[2 * S + 1].utilisation, ".0%")
# --8<-- [end:waves_glue]


# %%
# --8<-- [start:tiles]
# A tiled matmul C = A @ B: one block computes a t × t tile of C with 256 threads.
# Assumed resources per block (a plausible kernel, not a measured one): each thread
# keeps t * t / 256 accumulators (64, 16, 4) plus addresses and operands, which we
# round to 128, 64 and 32 registers; shared memory holds double-buffered BF16 tiles
# of A and B, 32 deep: 2 buffers × 2 matrices × t × 32 × 2 bytes.
registers = {128: 128, 64: 64, 32: 32}  # tile side t -> registers per thread
THREADS, SIZES = 256, (1024, 4096)  # threads per block; the two sizes of C
results = {}
for size in SIZES:
    for t in registers:
        occ = occupancy(THREADS, registers[t], 2 * 2 * t * 32 * 2, device=H100)
        results[size, t] = (occ, waves(cdiv(size, t) ** 2, occ.blocks_per_sm, device=H100))
show(lecture.tiles_table(results))
# --8<-- [end:tiles]

# %%
# --8<-- [start:tiles_glue]
from simtdocs.display import glue

small, big = min(SIZES), max(SIZES)  # the smaller C in detail
glue("p2b_tile_threads", THREADS)
glue("p2b_tile_small_c", f"{small}×{small}")
glue("p2b_tile_big_c", f"{big}×{big}")
for t in registers:
    occ, wv = results[small, t]
    glue(f"p2b_tile{t}_shape", f"{t}×{t}")
    glue(f"p2b_tile{t}_blocks", wv.blocks, ",")
    glue(f"p2b_tile{t}_per_sm", occ.blocks_per_sm)
    glue(f"p2b_tile{t}_capacity", wv.capacity, ",")
    glue(f"p2b_tile{t}_waves", wv.waves)
    glue(f"p2b_tile{t}_util", wv.utilisation, ".0%")
    glue(f"p2b_tile{t}_ai", lecture.tile_intensity(t), ".0f")
    glue(f"p2b_big_tile{t}_util", results[big, t][1].utilisation, ".0%")
# --8<-- [end:tiles_glue]


# %%
# --8<-- [start:waves_figure]
show(lecture.waves_figure(H100))
# --8<-- [end:waves_figure]
