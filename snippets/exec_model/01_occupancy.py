# %% [markdown]
# # 线程、warp 与占用率 · Threads, warps and occupancy
#
# 线程怎样被切成 warp；一个 SM 怎样靠驻留多个 warp 隐藏访存延迟；
# 以及 RTX 4090（compute capability 8.9）上占用率（occupancy）被什么资源限制。
# How threads are cut into warps; how an SM hides memory latency by keeping many
# warps resident; and which resource limits occupancy on an RTX 4090
# (compute capability 8.9).
#
# Run it alone: `python snippets/exec_model/01_occupancy.py`

# %%
# --8<-- [start:setup]
import numpy as np

from simtdocs import RTX4090, cdiv, latency_hiding, launch, occupancy
from simtdocs.display import show
from simtdocs.lectures import exec_model as lecture  # the tables and figures of this lecture
# --8<-- [end:setup]


# %% [markdown]
# ## 基线 · The baseline
#
# 软件基线是引用来的（vLLM 的发行版、模型卡）；GPU 的参数读自 simtdocs 的设备预设，
# 出处写在 simtdocs/devices.py 里。
# The software baseline is cited (vLLM release, model card); the GPU is read
# from simtdocs' device presets, whose sources are named in simtdocs/devices.py.

# %%
# --8<-- [start:baseline]
VLLM_VERSION = "0.26.0"  # the vLLM release this lecture reads (tag v0.26.0)
MODEL = "Qwen2.5-7B-Instruct"  # whose config.json gives d of the silu_and_mul example
GPU_MEMORY_GB = 24  # RTX 4090: 24 GB GDDR6X (Ada whitepaper)
show(lecture.baseline_table(VLLM_VERSION, MODEL, RTX4090, GPU_MEMORY_GB))
# --8<-- [end:baseline]

# %%
# --8<-- [start:baseline_glue]
from simtdocs.display import glue

glue("em_vllm_version", VLLM_VERSION)
glue("em_model", MODEL)
glue("em_gpu_memory_gb", GPU_MEMORY_GB)
glue("em_cc", "{}.{}".format(*RTX4090.compute_capability))
# --8<-- [end:baseline_glue]


# %%
# --8<-- [start:devices]
from simtdocs import H100

show(lecture.devices_table(H100, RTX4090))
# --8<-- [end:devices]

# %%
# --8<-- [start:devices_glue]
glue("em_h100_warps", H100.max_warps_per_sm)
glue("em_h100_sms", H100.sm_count)
glue("em_bw_ratio", H100.memory_bandwidth / RTX4090.memory_bandwidth, ".1f")
# --8<-- [end:devices_glue]


# %%
# --8<-- [start:indexing]
def where_am_i(blk, index_of, warp_of):
    i = blk.bx * blk.bdx + blk.tx  # the global index of this thread
    blk.store(index_of, i, i)
    blk.store(warp_of, i, blk.warp)  # warp inside the block: threadIdx.x // 32


threads, blocks = 40, 2  # a block size that is not a multiple of 32, on purpose
n = threads * blocks
index_of = np.full(n, -1, np.int32)
warp_of = np.full(n, -1, np.int32)
stats = launch(where_am_i, grid=blocks, block=threads, args=(index_of, warp_of), device=RTX4090)
show(lecture.indexing_table(index_of, warp_of, threads))
# --8<-- [end:indexing]

# %%
# --8<-- [start:indexing_glue]
glue("em_idx_threads", threads)
glue("em_idx_warps_per_block", cdiv(threads, 32))
glue("em_idx_idle_lanes", cdiv(threads, 32) * 32 - threads)
glue("em_idx_last_lanes", threads - (cdiv(threads, 32) - 1) * 32)  # active lanes in the block's last warp
glue("em_idx_simt", stats.simt_efficiency, ".1%")
# --8<-- [end:indexing_glue]


# %%
# --8<-- [start:timeline]
def schedule(warps, compute=100, stall=400, horizon=1500):
    """One warp scheduler, one instruction stream at a time.

    Each warp computes for ``compute`` cycles, then waits ``stall`` cycles for a load.
    The scheduler runs whichever warp has been ready longest. Returns, per warp, the
    (start, length) of its compute stretches, and the share of cycles the scheduler issued.
    """
    ready = [0] * warps  # when each warp can run again
    runs = [[] for _w in range(warps)]
    t = busy = 0
    while t < horizon:
        w = min(range(warps), key=lambda k: ready[k])
        t = max(t, ready[w])  # nobody ready: the scheduler idles until the first one is
        if t >= horizon:
            break
        length = min(compute, horizon - t)
        runs[w].append((t, length))
        busy += length
        t += length
        ready[w] = t + stall
    return runs, busy / horizon


COMPUTE, STALL = 100, 400  # cycles; an illustration, not a measurement
few, many = 2, 1 + STALL // COMPUTE  # 1 + L/C warps keep the scheduler busy
show(lecture.timeline_figure(schedule, COMPUTE, STALL, few, many))
# --8<-- [end:timeline]

# %%
# --8<-- [start:timeline_glue]
from simtdocs.display import glue

busy = {k: schedule(k, COMPUTE, STALL)[1] for k in (few, many)}
glue("em_tl_compute", COMPUTE)
glue("em_tl_stall", STALL)
glue("em_tl_few", few)
glue("em_tl_many", many)
glue("em_tl_busy_few", busy[few], ".0%")
glue("em_tl_busy_many", busy[many], ".0%")
# --8<-- [end:timeline_glue]


# %%
# --8<-- [start:limits]
show(lecture.limits_table(RTX4090))
# --8<-- [end:limits]

# %%
# --8<-- [start:limits_glue]
glue("em_max_threads_sm", RTX4090.max_threads_per_sm)
glue("em_max_warps_sm", RTX4090.max_warps_per_sm)
glue("em_max_blocks_sm", RTX4090.max_blocks_per_sm)
glue("em_regs_sm", RTX4090.registers_per_sm)
glue("em_sms", RTX4090.sm_count)
# --8<-- [end:limits_glue]


# %%
# --8<-- [start:register_example]
EX_THREADS, EX_REGS = 256, 64  # the example kernel: threads per block, registers per thread
occ = occupancy(threads_per_block=EX_THREADS, registers_per_thread=EX_REGS, device=RTX4090)
show(lecture.resources_table(occ))
# --8<-- [end:register_example]

# %%
# --8<-- [start:register_example_glue]
glue("em_ex_threads", EX_THREADS)
glue("em_ex_regs", EX_REGS)
glue("em_reg_threads_fit", RTX4090.registers_per_sm // EX_REGS)
glue("em_reg_warps_fit", RTX4090.registers_per_sm // EX_REGS // 32)
glue("em_reg_blocks", occ.blocks_per_sm)
glue("em_reg_warps", occ.warps_per_sm)
glue("em_reg_occ", occ.occupancy, ".0%")
glue("em_reg_limiter", lecture.resource_name(occ.limiters[0]))
# --8<-- [end:register_example_glue]


# %%
# --8<-- [start:occupancy_grid]
sizes = (128, 256, 512, 1024)  # threads per block
registers = (32, 40, 48, 64, 96, 128)  # registers per thread
show(lecture.occupancy_grid(sizes, registers, RTX4090))
# --8<-- [end:occupancy_grid]

# %%
# --8<-- [start:occupancy_grid_glue]
best_1024 = max(occupancy(1024, r, device=RTX4090).occupancy for r in range(0, 256))
glue("em_occ_1024_best", best_1024, ".0%")
glue("em_occ_1024_left", RTX4090.max_threads_per_sm - 1024)  # thread slots left beside one block
glue("em_occ_1024_fail_regs", min(r for r in registers if occupancy(1024, r, device=RTX4090).blocks_per_sm == 0))
o512 = occupancy(512, 32, device=RTX4090)
glue("em_occ_512_threads", 512)
glue("em_occ_512_blocks", o512.blocks_per_sm)
glue("em_occ_512_warps", o512.warps_per_sm)
glue("em_occ_512", o512.occupancy, ".0%")
CMP_REGS, SMALL, LARGE = 48, 256, 512  # the register count and two block sizes the prose compares
glue("em_cmp_regs", CMP_REGS)
glue("em_cmp_small", SMALL)
glue("em_cmp_large", LARGE)
glue("em_occ_48_256", occupancy(SMALL, CMP_REGS, device=RTX4090).occupancy, ".0%")
glue("em_occ_48_512", occupancy(LARGE, CMP_REGS, device=RTX4090).occupancy, ".0%")
# --8<-- [end:occupancy_grid_glue]


# %%
# --8<-- [start:little]
lh = latency_hiding(warps=1, device=RTX4090)  # assumptions: see simtdocs.analytic.latency
need = lh.needed_bytes  # bytes one SM must have in flight
ilps = (1, 2, 4)  # independent loads per warp
warps_needed = {k: int(np.ceil(need / (k * lh.bytes_per_request))) for k in ilps}
# --8<-- [end:little]

# %%
# --8<-- [start:little_glue]
glue("em_lh_latency_ns", lh.latency_s * 1e9, ".0f")
glue("em_lh_latency_cycles", lh.latency_s * RTX4090.clock_hz, ",.0f")  # at the RTX 4090's boost clock
glue("em_clock_ghz", RTX4090.clock_hz / 1e9, ".2f")
glue("em_lh_bw_sm", RTX4090.bandwidth_per_sm / 1e9, ".2f")
glue("em_lh_needed_bytes", need, ",.0f")
glue("em_lh_request_bytes", lh.bytes_per_request)  # one float per lane: 32 × 4 bytes
for k in ilps:
    glue(f"em_lh_warps_ilp{k}", warps_needed[k])
glue("em_lh_occ_ilp1", warps_needed[1] / RTX4090.max_warps_per_sm, ".0%")
# --8<-- [end:little_glue]


# %%
# --8<-- [start:enough]
enough = latency_hiding(occ.warps_per_sm, device=RTX4090)  # the 64-register kernel's warps
show(lecture.little_figure(RTX4090, ilps, warps_needed, occ.warps_per_sm, EX_REGS))
# --8<-- [end:enough]

# %%
# --8<-- [start:enough_glue]
glue("em_lh_frac_reg64", enough.fraction, ".0%")
# --8<-- [end:enough_glue]
