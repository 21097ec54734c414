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
from simtdocs.docs import Figure, T, Table, figure, glue, show
# --8<-- [end:setup]


# %% [markdown]
# ## 基线 · The baseline
#
# The software baseline is cited (vLLM release, model card); the GPU columns are read
# from simtdocs' device presets, whose sources are named in simtdocs/devices.py.

# %%
# --8<-- [start:baseline]
from simtdocs import H100

VLLM_VERSION = "0.26.0"  # the vLLM release this lecture reads (tag v0.26.0)
MODEL = "Qwen2.5-7B-Instruct"  # whose config.json gives d of the silu_and_mul example
GPU_MEMORY_GB = 24  # RTX 4090: 24 GB GDDR6X (Ada whitepaper)
major, minor = RTX4090.compute_capability
show(Table([
    (T("推理引擎", "inference engine"), f"vLLM {VLLM_VERSION}"),
    (T("模型", "model"), MODEL),
    (T("GPU", "GPU"), f"{RTX4090.name}, {GPU_MEMORY_GB} GB"),
    (T("架构与计算能力", "architecture, compute capability"), f"Ada Lovelace, {major}.{minor}"),
], [T("基线", "baseline"), T("取值", "value")], align="ll"))
glue("em_vllm_version", VLLM_VERSION)
glue("em_model", MODEL)
glue("em_gpu_memory_gb", GPU_MEMORY_GB)
glue("em_cc", f"{major}.{minor}")
# --8<-- [end:baseline]


# %%
# --8<-- [start:devices]
def spec_rows(devices):
    """One row per specification, one column per device (read from simtdocs.devices)."""
    rows = [
        (T("计算能力", "compute capability"), lambda d: "{}.{}".format(*d.compute_capability)),
        (T("SM 数", "SMs"), lambda d: f"{d.sm_count}"),
        (T("每 SM 最多 warp", "warps per SM, at most"), lambda d: f"{d.max_warps_per_sm}"),
        (T("每 SM 最多线程块", "blocks per SM, at most"), lambda d: f"{d.max_blocks_per_sm}"),
        (T("每 SM 寄存器（32 位）", "registers per SM (32-bit)"), lambda d: f"{d.registers_per_sm:,}"),
        (T("每 SM 共享内存（最多）", "shared memory per SM (max)"), lambda d: f"{d.shared_per_sm // 1024} KB"),
        (T("显存带宽", "DRAM bandwidth"), lambda d: f"{d.memory_bandwidth / 1e9:,.0f} GB/s"),
        (T("每 SM 带宽", "bandwidth per SM"), lambda d: f"{d.bandwidth_per_sm / 1e9:.2f} GB/s"),
        (T("L2 cache", "L2 cache"), lambda d: f"{d.l2_bytes // 2**20} MB"),
        (T("加速时钟", "boost clock"), lambda d: f"{d.clock_hz / 1e9:.2f} GHz"),
    ]
    return [(name, *(get(d) for d in devices)) for name, get in rows]


show(Table(spec_rows([H100, RTX4090]), [T("规格", "specification"), "H100 SXM (P2)", T("RTX 4090（本讲）", "RTX 4090 (this lecture)")],
           align="lrr"))
glue("em_h100_warps", H100.max_warps_per_sm)
glue("em_h100_sms", H100.sm_count)
glue("em_bw_ratio", H100.memory_bandwidth / RTX4090.memory_bandwidth, ".1f")
# --8<-- [end:devices]


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

rows = []
for b in range(blocks):
    for w in range(cdiv(threads, 32)):
        mine = (index_of // threads == b) & (warp_of == w)  # threads of block b in warp w
        t = index_of[mine] - b * threads
        i = index_of[mine]
        rows.append((b, w, f"{t.min()}–{t.max()}", f"{i.min()}–{i.max()}", int(mine.sum())))
show(
    Table(
        rows,
        columns=[
            "blockIdx.x",
            "warp",
            "threadIdx.x",
            T("全局下标 i", "global index i"),
            T("活跃 lane（共 32）", "active lanes (of 32)"),
        ],
        align="rrrrr",
    )
)
glue("em_idx_threads", threads)
glue("em_idx_warps_per_block", cdiv(threads, 32))
glue("em_idx_idle_lanes", cdiv(threads, 32) * 32 - threads)
glue("em_idx_last_lanes", rows[1][4])  # active lanes in the block's last warp
glue("em_idx_simt", stats.simt_efficiency, ".1%")
# --8<-- [end:indexing]


# %%
# --8<-- [start:timeline]
def schedule(warps, compute=100, stall=400, horizon=1500):
    """One warp scheduler, one instruction stream at a time.

    Each warp computes for ``compute`` cycles, then waits ``stall`` cycles for a load.
    The scheduler runs whichever warp has been ready longest. Returns, per warp, the
    (start, length) of its compute stretches, and the share of cycles the scheduler issued.
    """
    ready = [0] * warps  # when each warp can run again
    runs = [[] for _ in range(warps)]
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
busy = {k: schedule(k, COMPUTE, STALL)[1] for k in (few, many)}
glue("em_tl_compute", COMPUTE)
glue("em_tl_stall", STALL)
glue("em_tl_few", few)
glue("em_tl_many", many)
glue("em_tl_busy_few", busy[few], ".0%")
glue("em_tl_busy_many", busy[many], ".0%")
# --8<-- [end:timeline]


# %%
# --8<-- [start:timeline_draw]
def draw_timeline():
    fig, axes = figure(2, 1, figsize=(8, 3.6), sharex=True)
    for ax, k in zip(axes, (few, many)):
        runs, share = schedule(k, COMPUTE, STALL)
        for w, stretches in enumerate(runs):
            y = k - 1 - w
            for start, length in stretches:
                ax.broken_barh([(start, length)], (y - 0.35, 0.7), color=f"C{w}")
                ax.broken_barh([(start + length, STALL)], (y - 0.1, 0.2), color="0.8")
        ax.set_yticks(range(k))
        ax.set_yticklabels([f"warp {chr(65 + w)}" for w in reversed(range(k))])
        ax.set_xlim(0, 1500)
        ax.set_title(str(T(f"{k} 个 warp：调度器 {share:.0%} 的周期在发射指令",
                           f"{k} warps: the scheduler issues in {share:.0%} of the cycles")), fontsize=10)
    axes[-1].set_xlabel(str(T("周期（彩色：计算；灰色：等待访存）", "cycle (colour: computing; grey: waiting for memory)")))
    fig.tight_layout()
    return fig
# --8<-- [end:timeline_draw]


# %%
# --8<-- [start:timeline_show]
show(
    Figure(
        draw_timeline,
        alt=T(f"两条时间线，每个 warp 计算 {COMPUTE} 个周期（彩色）后等待 {STALL} 个周期（灰色）："
              f"{few} 个 warp 时调度器只在 {busy[few]:.0%} 的周期里发射指令，{many} 个 warp 时是 {busy[many]:.0%}。",
              f"Two timelines in which each warp computes for {COMPUTE} cycles (colour), then waits {STALL} (grey): "
              f"with {few} warps the scheduler issues in only {busy[few]:.0%} of the cycles, with {many} in {busy[many]:.0%}."),
        caption=T(f"延迟隐藏：每个 warp 计算 {COMPUTE} 个周期后等待 {STALL} 个周期的访存（示意数字）",
                  f"Latency hiding: each warp computes for {COMPUTE} cycles, then waits {STALL} cycles for memory (illustrative numbers)"),
    )
)
# --8<-- [end:timeline_show]


# %%
# --8<-- [start:limits]
d = RTX4090
em_cc = "{}.{}".format(*d.compute_capability)
show(
    Table(
        rows=[
            (T("每 SM 最多驻留线程", "resident threads per SM, max"), d.max_threads_per_sm),
            (T("每 SM 最多驻留 warp", "resident warps per SM, max"), d.max_warps_per_sm),
            (T("每 SM 最多驻留线程块", "resident blocks per SM, max"), d.max_blocks_per_sm),
            (T("每 SM 32 位寄存器", "32-bit registers per SM"), d.registers_per_sm),
            (T("每线程最多寄存器", "registers per thread, max"), d.max_registers_per_thread),
            (T("每 SM 共享内存（KB）", "shared memory per SM (KB)"), d.shared_per_sm // 1024),
            (T("每线程块最多线程", "threads per block, max"), d.max_threads_per_block),
            (T("SM 数量", "SMs"), d.sm_count),
        ],
        columns=[T(f"{d.name}（compute capability {em_cc}）", f"{d.name} (compute capability {em_cc})"), T("上限", "limit")],
        fmt=[None, ","],
    )
)
glue("em_max_threads_sm", d.max_threads_per_sm)
glue("em_max_warps_sm", d.max_warps_per_sm)
glue("em_max_blocks_sm", d.max_blocks_per_sm)
glue("em_regs_sm", d.registers_per_sm)
glue("em_sms", d.sm_count)
# --8<-- [end:limits]


# %%
# --8<-- [start:register_example]
EX_THREADS, EX_REGS = 256, 64  # the example kernel: threads per block, registers per thread
glue("em_ex_threads", EX_THREADS)
glue("em_ex_regs", EX_REGS)
occ = occupancy(threads_per_block=EX_THREADS, registers_per_thread=EX_REGS, device=RTX4090)
show(
    Table(
        rows=[(T({"warps": "warp 上限", "blocks": "线程块上限", "registers": "寄存器",
                  "shared memory": "共享内存"}[k], k), v) for k, v in occ.limits.items()],
        columns=[T("资源", "resource"), T("每 SM 可驻留的线程块", "blocks per SM it allows")],
        fmt=[None, ","],
    )
)
glue("em_reg_threads_fit", d.registers_per_sm // EX_REGS)
glue("em_reg_warps_fit", d.registers_per_sm // EX_REGS // 32)
glue("em_reg_blocks", occ.blocks_per_sm)
glue("em_reg_warps", occ.warps_per_sm)
glue("em_reg_occ", occ.occupancy, ".0%")
glue("em_reg_limiter", T({"registers": "寄存器"}.get(occ.limiters[0], occ.limiters[0]), occ.limiters[0]))
# --8<-- [end:register_example]


# %%
# --8<-- [start:occupancy_grid]
sizes = (128, 256, 512, 1024)
registers = (32, 40, 48, 64, 96, 128)


def cell(threads, regs):
    o = occupancy(threads, regs, device=RTX4090)
    if o.blocks_per_sm == 0:
        return T("无法启动", "cannot launch")
    return f"{o.occupancy:.0%}"


show(
    Table(
        rows=[(r, *(cell(t, r) for t in sizes)) for r in registers],
        columns=[T("寄存器/线程", "registers/thread"), *(T(f"{t} 线程/块", f"{t} threads/block") for t in sizes)],
    )
)
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
# --8<-- [end:occupancy_grid]


# %%
# --8<-- [start:little]
lh = latency_hiding(warps=1, device=RTX4090)  # assumptions: see simtdocs.analytic.latency
need = lh.needed_bytes  # bytes one SM must have in flight
glue("em_lh_latency_ns", lh.latency_s * 1e9, ".0f")
glue("em_lh_latency_cycles", lh.latency_s * RTX4090.clock_hz, ",.0f")  # at the RTX 4090's boost clock
glue("em_clock_ghz", RTX4090.clock_hz / 1e9, ".2f")
glue("em_lh_bw_sm", RTX4090.bandwidth_per_sm / 1e9, ".2f")
glue("em_lh_needed_bytes", need, ",.0f")
glue("em_lh_request_bytes", lh.bytes_per_request)  # one float per lane: 32 × 4 bytes
ilps = (1, 2, 4)
warps_needed = {k: int(np.ceil(need / (k * lh.bytes_per_request))) for k in ilps}
for k in ilps:
    glue(f"em_lh_warps_ilp{k}", warps_needed[k])
glue("em_lh_occ_ilp1", warps_needed[1] / RTX4090.max_warps_per_sm, ".0%")
# --8<-- [end:little]


# %%
# --8<-- [start:enough]
enough = latency_hiding(occ.warps_per_sm, device=RTX4090)  # the 64-register kernel's warps
glue("em_lh_frac_reg64", enough.fraction, ".0%")
# --8<-- [end:enough]


# %%
# --8<-- [start:little_draw]
def draw_little():
    fig, ax = figure(figsize=(7, 3.4))
    w = np.arange(0, RTX4090.max_warps_per_sm + 1)
    for k in ilps:
        frac = [latency_hiding(int(x), requests_per_warp=k, device=RTX4090).fraction for x in w]
        ax.plot(w, frac, label=str(T(f"每 warp {k} 个独立 load", f"{k} independent load(s) per warp")))
    ax.axvline(occ.warps_per_sm, color="0.5", ls="--")
    ax.text(occ.warps_per_sm + 0.5, 0.55, str(T(f"{EX_REGS} 寄存器/线程\n时的上限", f"limit at {EX_REGS}\nregisters/thread")),
            fontsize=8)
    ax.set_xlabel(str(T("每 SM 驻留 warp 数", "resident warps per SM")))
    ax.set_ylabel(str(T("可达到的 DRAM 带宽份额", "share of DRAM bandwidth reached")))
    ax.set_ylim(0, 1.05)
    ax.set_xlim(0, RTX4090.max_warps_per_sm)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig
# --8<-- [end:little_draw]


# %%
# --8<-- [start:little_show]
show(
    Figure(
        draw_little,
        alt=T(f"{RTX4090.name} 一个 SM 可达到的 DRAM 带宽份额随驻留 warp 数（0 到 {RTX4090.max_warps_per_sm}）直线上升，"
              f"每 warp {'、'.join(str(k) for k in ilps)} 个独立 load 时分别在 "
              f"{'、'.join(str(warps_needed[k]) for k in ilps)} 个 warp 处达到 100%；"
              f"虚线标出每线程 {EX_REGS} 个寄存器时最多驻留的 {occ.warps_per_sm} 个 warp。",
              f"Share of DRAM bandwidth one {RTX4090.name} SM reaches against resident warps (0 to {RTX4090.max_warps_per_sm}), "
              f"rising in a straight line: with {', '.join(str(k) for k in ilps)} independent loads per warp it reaches "
              f"100% at {', '.join(str(warps_needed[k]) for k in ilps)} warps. A dashed line marks the "
              f"{occ.warps_per_sm} warps that fit at {EX_REGS} registers per thread."),
        caption=T("利特尔定律：RTX 4090 的一个 SM 要喂满自己那份带宽，需要多少个 warp 在等数据",
                  "Little's law: how many warps must be waiting for data to keep one RTX 4090 SM's share of bandwidth busy"),
    )
)
# --8<-- [end:little_show]
