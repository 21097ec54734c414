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
import numpy as np

from simtdocs import H100, cdiv, latency_hiding, occupancy, waves
from simtdocs.docs import T, Figure, Table, figure, glue, show

KB = 1024
# How the four resources of the occupancy calculator are called in the tables.
RESOURCE = {
    "warps": T("warp 数", "warps"),
    "blocks": T("块数", "blocks"),
    "registers": T("寄存器", "registers"),
    "shared memory": T("共享内存", "shared memory"),
}


def limiter_text(occ) -> T:
    """The limiting resource(s) of an occupancy result, in both languages."""
    names = [RESOURCE[k] for k in occ.limiters]
    return T("、".join(n.zh for n in names), ", ".join(n.en for n in names))
# --8<-- [end:setup]


# %% [markdown]
# ## 演示 1：占用率计算器 · Demo 1: the occupancy calculator

# %%
# --8<-- [start:occupancy_table]
# (key, name, threads per block, registers per thread, shared memory per block in bytes)
kernels = [
    ("elem", T("逐元素内核（向量加法）", "elementwise (vector add)"), 256, 16, 0),
    ("small", T("每块只有 {threads} 个线程", "{threads}-thread blocks"), 32, 16, 0),
    ("ex", T("{regs} 寄存器 + {kb} KB 共享内存", "{regs} registers + {kb} KB shared"), 128, 96, 32 * KB),
    ("ex16", T("同上，共享内存减到 {kb} KB", "same, shared cut to {kb} KB"), 128, 96, 16 * KB),
    ("big", T("大块矩阵乘法（{regs} 寄存器）", "big-tile matmul ({regs} registers)"), 256, 255, 64 * KB),
    ("smem", T("大量共享内存（{kb} KB）", "shared-memory heavy ({kb} KB)"), 256, 64, 100 * KB),
]
# The names quote the kernel's own numbers, so changing a number changes its name too.
kernels = [(key, T(*(s.format(threads=t, regs=r, kb=m // KB) for s in (name.zh, name.en))), t, r, m)
           for key, name, t, r, m in kernels]
rows = []
for key, name, threads, regs, smem in kernels:
    occ = occupancy(threads, regs, smem, device=H100)
    lim = occ.limits
    caps = " / ".join(str(lim[k]) for k in ("warps", "blocks", "registers", "shared memory"))
    rows.append((name, threads, regs, smem / KB, caps,
                 occ.blocks_per_sm, occ.warps_per_sm, occ.occupancy, limiter_text(occ)))
    glue(f"p2b_{key}_blocks", occ.blocks_per_sm)
    glue(f"p2b_{key}_warps", occ.warps_per_sm)
    glue(f"p2b_{key}_occ", occ.occupancy, ".1%")
    glue(f"p2b_{key}_threads", threads)  # the kernel's inputs, for the prose
    glue(f"p2b_{key}_regs", regs)
    glue(f"p2b_{key}_smem_kb", smem // KB)
show(Table(rows, columns=[
    T("内核", "kernel"), T("线程/块", "threads/block"), T("寄存器/线程", "registers/thread"),
    T("共享内存/块 (KB)", "shared/block (KB)"),
    T("块上限：warp / 块 / 寄存器 / 共享内存", "block limits: warps / blocks / registers / shared"),
    T("块/SM", "blocks/SM"), T("warp/SM", "warps/SM"), T("占用率", "occupancy"),
    T("瓶颈", "limiter")],
    fmt=[None, ",", ",", ".0f", None, ",", ",", ".1%", None], align="lrrrrrrrl"))

# The device limits the prose quotes.
for key, value in (("max_warps", H100.max_warps_per_sm), ("max_blocks", H100.max_blocks_per_sm),
                   ("regs_per_sm", H100.registers_per_sm), ("reg_unit", H100.register_allocation_unit),
                   ("smem_per_sm_kb", H100.shared_per_sm // KB),
                   ("smem_reserved_kb", H100.reserved_shared_per_block // KB)):
    glue(f"p2b_{key}", value, ",")
# --8<-- [end:occupancy_table]


# %%
# --8<-- [start:occupancy_figure]
# The last register count at which one 512-thread block still fits, and one step down the stairs.
cliff = max(r for r in range(1, 256) if occupancy(512, r, 0, device=H100).blocks_per_sm > 0)
STAIR_THREADS, STAIR_REGS = 256, 64  # one step of the staircase: STAIR_REGS -> STAIR_REGS + 1
glue("p2b_stair_threads", STAIR_THREADS)
glue("p2b_stair_regs", STAIR_REGS)
glue("p2b_stair_regs1", STAIR_REGS + 1)
glue("p2b_r64_occ", occupancy(STAIR_THREADS, STAIR_REGS, 0, device=H100).occupancy, ".1%")
glue("p2b_r65_occ", occupancy(STAIR_THREADS, STAIR_REGS + 1, 0, device=H100).occupancy, ".1%")


# The curves: occupancy against registers per thread (no shared memory), and against shared
# memory per block (at SMEM_REGS registers per thread).
reg_range = np.arange(16, 256)
by_regs = {t: [occupancy(t, int(r), 0, device=H100).occupancy for r in reg_range] for t in (128, 256, 512)}
smem_range = np.arange(0, 228)
SMEM_REGS = 32
by_smem = {t: [occupancy(t, SMEM_REGS, int(k) * KB, device=H100).occupancy for k in smem_range] for t in (128, 256)}


def draw_occupancy():
    fig, (left, right) = figure(1, 2, figsize=(9, 3.4), sharey=True)
    for threads, occ in by_regs.items():
        left.step(reg_range, occ, where="post", label=str(T(f"{threads} 线程/块", f"{threads} threads/block")))
    left.set_xlabel(str(T("每线程寄存器数", "registers per thread")))
    left.set_ylabel(str(T("占用率", "occupancy")))
    left.set_title(str(T("寄存器（无共享内存）", "registers (no shared memory)")), fontsize=10)
    for threads, occ in by_smem.items():
        right.step(smem_range, occ, where="post", label=str(T(f"{threads} 线程/块", f"{threads} threads/block")))
    right.set_xlabel(str(T("每块共享内存 (KB)", "shared memory per block (KB)")))
    right.set_title(str(T(f"共享内存（{SMEM_REGS} 寄存器/线程）", f"shared memory ({SMEM_REGS} registers/thread)")),
                    fontsize=10)
    for ax in (left, right):
        ax.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def steps(xs, occ):
    """(x, occupancy from x on) wherever the staircase occ changes, starting with its first value."""
    return [(x, f"{o * 100:g}%") for i, (x, o) in enumerate(zip(xs, occ)) if i == 0 or o != occ[i - 1]]


# For the alt text: the coarsest staircase of each panel in full, and how many steps the finest has.
big_r, big_s, small_t = max(by_regs), max(by_smem), min(by_regs)
left_steps, right_steps = steps(reg_range, by_regs[big_r]), steps(smem_range, by_smem[big_s])
n_left, n_right = len(steps(reg_range, by_regs[small_t])) - 1, len(steps(smem_range, by_smem[small_t])) - 1
occupancy_figure = Figure(
    draw_occupancy,
    alt=T(f"H100 理论占用率的阶梯图。左图横轴是每线程寄存器数（{reg_range[0]} 到 {reg_range[-1]}），{big_r} 线程的块"
          f"{'、'.join(f'从 {x} 起 {o}' for x, o in left_steps)}；右图横轴是每块共享内存（{smem_range[0]} 到 "
          f"{smem_range[-1]} KB），{big_s} 线程的块{'、'.join(f'从 {x} KB 起 {o}' for x, o in right_steps)}；"
          f"{small_t} 线程的块台阶更细（左图 {n_left} 级，右图 {n_right} 级）。",
          f"Staircases of theoretical occupancy on an H100. Left, against registers per thread ({reg_range[0]} to "
          f"{reg_range[-1]}), {big_r}-thread blocks have {', '.join(f'{o} from {x}' for x, o in left_steps)}; right, against "
          f"shared memory per block ({smem_range[0]} to {smem_range[-1]} KB), {big_s}-thread blocks have "
          f"{', '.join(f'{o} from {x} KB' for x, o in right_steps)}; {small_t}-thread blocks come down in finer steps "
          f"({n_left} on the left, {n_right} on the right)."),
    caption=T("H100 的理论占用率：左边随每线程寄存器数变化，右边随每块共享内存变化。"
              f"块数只能取整数，所以曲线是阶梯；512 线程的块在寄存器超过 {cliff} 个后一个也放不下。",
              "Theoretical occupancy on an H100, against registers per thread (left) and shared memory "
              "per block (right). Blocks come in whole numbers, hence the stairs; a 512-thread block "
              f"does not fit at all above {cliff} registers per thread."),
)
# --8<-- [end:occupancy_figure]


# %%
occupancy_figure  # a notebook draws the figure here; the lecture page shows it with show()


# %% [markdown]
# ## 演示 2：利特尔定律 · Demo 2: Little's law

# %%
# --8<-- [start:latency_table]
# (warps resident on the SM, independent requests per warp, bytes per request)
# A warp-wide float load moves 32 × 4 = 128 bytes; a float4 load 32 × 16 = 512 bytes.
cases = [(64, 1, 128), (32, 1, 128), (16, 1, 128), (16, 2, 128), (16, 1, 512), (16, 2, 512), (8, 4, 512)]


def how(req, size):
    """The row's name, from its own numbers: 'float4, 2 requests (unrolled)'."""
    kind = {128: "float", 512: "float4"}[size]
    more = req > 1
    return T(f"{kind}，{req} 个请求" + ("（展开）" if more else ""),
             f"{kind}, {req} request{'s' if more else ''}" + (" (unrolled)" if more else ""))


cases = [(how(req, size), w, req, size) for w, req, size in cases]
rows = []
for name, w, req, size in cases:
    lh = latency_hiding(w, req, size, device=H100)
    rows.append((name, w, w / H100.max_warps_per_sm, req, size, lh.in_flight_bytes, lh.fraction))
show(Table(rows, columns=[
    T("每个 warp 怎样读", "how each warp reads"), T("warp/SM", "warps/SM"), T("占用率", "occupancy"),
    T("请求/warp", "requests/warp"), T("字节/请求", "bytes/request"),
    T("在途字节/SM", "bytes in flight/SM"), T("带宽占比", "fraction of bandwidth")],
    fmt=[None, ",", ".1%", ",", ",", ",", ".0%"]))

need = latency_hiding(1, device=H100)
glue("p2b_bw_per_sm", H100.bandwidth_per_sm / 1e9, ".1f")  # GB/s
glue("p2b_latency_ns", need.latency_s * 1e9, ".0f")
glue("p2b_latency_cycles", need.latency_s * H100.clock_hz, ",.0f")  # the same latency in H100 cycles
glue("p2b_need_kb", need.needed_bytes / 1e3, ".1f")  # KB = 1,000 bytes
glue("p2b_need_bytes", round(need.needed_bytes), ",")
glue("p2b_lh_full", latency_hiding(64, 1, 128, device=H100).fraction, ".0%")
glue("p2b_lh_16", latency_hiding(16, 1, 128, device=H100).fraction, ".0%")
glue("p2b_lh_16_bytes", latency_hiding(16, 1, 128, device=H100).in_flight_bytes, ",")
glue("p2b_lh_vec", latency_hiding(16, 2, 512, device=H100).fraction, ".0%")
glue("p2b_lh_vec_bytes", latency_hiding(16, 2, 512, device=H100).in_flight_bytes, ",")
glue("p2b_lh_vec_occ", 16 / H100.max_warps_per_sm, ".0%")
glue("p2b_req_float", 32 * 4)  # bytes of one warp-wide float load
glue("p2b_req_float4", 32 * 16)  # ... and of a float4 load
# --8<-- [end:latency_table]


# %%
# --8<-- [start:latency_figure]
# Fewest warps that reach full bandwidth with float4 loads, 2 requests per warp.
enough = min(k for k in range(1, 65) if latency_hiding(k, 2, 512, device=H100).fraction >= 1)
latency_ns = latency_hiding(1, device=H100).latency_s * 1e9  # the assumed memory latency
glue("p2b_lh_enough", enough)


# The curves: (requests per warp, bytes per request, label) -> fraction reached with 1, 2, ... warps.
warp_range = np.arange(1, H100.max_warps_per_sm + 1)
settings = [(1, 128, "float × 1"), (2, 128, "float × 2"), (1, 512, "float4 × 1"),
            (2, 512, "float4 × 2"), (4, 512, "float4 × 4")]
bw_fraction = {label: [latency_hiding(int(k), req, size, device=H100).fraction for k in warp_range]
               for req, size, label in settings}


def draw_latency():
    fig, ax = figure(figsize=(6.4, 3.6))
    for label, frac in bw_fraction.items():
        ax.plot(warp_range, frac, label=label)
    ax.set_xlabel(str(T(f"每个 SM 上的 warp 数（占用率 = warp 数 / {H100.max_warps_per_sm}）",
                        f"warps per SM (occupancy = warps / {H100.max_warps_per_sm})")))
    ax.set_ylabel(str(T("能拿到的 HBM 带宽占比", "fraction of HBM bandwidth reached")))
    ax.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
    ax.set_xlim(0, H100.max_warps_per_sm)
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(title=str(T("每个 warp 的请求", "requests per warp")), fontsize=8, title_fontsize=8)
    fig.tight_layout()
    return fig


# For the alt text: the fewest warps at which each curve reaches 100 %, or where it ends short of it.
full_at = {label: next((int(k) for k, f in zip(warp_range, frac) if f >= 1), None) for label, frac in bw_fraction.items()}
reach = [(label, w) for label, w in full_at.items() if w is not None]
short = [(label, bw_fraction[label][-1]) for label, w in full_at.items() if w is None]
last = warp_range[-1]
latency_figure = Figure(
    draw_latency,
    alt=T(f"H100 上能拿到的 HBM 带宽占比随每个 SM 的 warp 数（{warp_range[0]} 到 {last}）直线上升，封顶于 100%，"
          f"每条线是一种读法（load 类型 × 每 warp 请求数）。达到 100% 所需的 warp 数："
          + "，".join(f"{label} 要 {w} 个" for label, w in reach)
          + "".join(f"；{label} 到 {last} 个也只有 {f:.0%}" for label, f in short) + "。",
          f"Fraction of HBM bandwidth an H100 reaches against warps per SM ({warp_range[0]} to {last}), rising in a "
          f"straight line until it caps at 100%, one line per way of reading (load type × requests per warp). "
          f"Warps needed for 100%: "
          + ", ".join(f"{w} for {label}" for label, w in reach)
          + "".join(f"; {label} reaches only {f:.0%} at {last}" for label, f in short) + "."),
    caption=T(f"利特尔定律（H100，假设访存延迟 {latency_ns:.0f} ns）：在途字节 = warp 数 × 每 warp 请求数 × 每请求字节数。"
              f"每个线程只读一个 float 时，{H100.max_warps_per_sm} 个 warp 也喂不饱带宽；"
              f"用 float4、每个 warp 2 个请求，{enough} 个 warp 就够了。",
              f"Little's law (H100, {latency_ns:.0f} ns memory latency assumed): bytes in flight = warps × requests "
              f"per warp × bytes per request. With one float per thread even {H100.max_warps_per_sm} warps fall "
              f"short; with float4 loads and 2 requests per warp, {enough} warps are enough."),
)
# --8<-- [end:latency_figure]


# %%
latency_figure  # a notebook draws the figure here; the lecture page shows it with show()


# %% [markdown]
# ## 演示 3：波 · Demo 3: waves

# %%
# --8<-- [start:waves_table]
rows = []
S = H100.sm_count  # one block per SM: a wave is S blocks
for blocks in (S, S + 1, 2 * S, 2 * S + 1, 10 * S, 10 * S + 1):
    wv = waves(blocks, blocks_per_sm=1, device=H100)
    rows.append((blocks, wv.capacity, wv.waves, wv.last_wave_blocks, wv.utilisation))
show(Table(rows, columns=[
    T("块数", "blocks"), T("每波容量", "blocks per wave"), T("波数", "waves"),
    T("最后一波的块数", "blocks in the last wave"), T("SM 利用率", "SM utilisation")],
    fmt=[",", ",", ",", ",", ".1%"]))
glue("p2b_sms", H100.sm_count)
one_over = waves(S + 1, 1, device=H100)
glue("p2b_w133_blocks", S + 1)
glue("p2b_w265_blocks", 2 * S + 1)
glue("p2b_w133_util", one_over.utilisation, ".0%")
glue("p2b_w133_waves", one_over.waves)
glue("p2b_w133_last", one_over.last_wave_blocks)
glue("p2b_w265_util", waves(2 * S + 1, 1, device=H100).utilisation, ".0%")
# --8<-- [end:waves_table]


# %%
# --8<-- [start:tiles_table]
# A tiled matmul C = A @ B: one block computes a t × t tile of C with 256 threads.
# Assumed resources per block (a plausible kernel, not a measured one): each thread
# keeps t * t / 256 accumulators (64, 16, 4) plus addresses and operands, which we
# round to 128, 64 and 32 registers; shared memory holds double-buffered BF16 tiles
# of A and B, 32 deep: 2 buffers × 2 matrices × t × 32 × 2 bytes.
registers = {128: 128, 64: 64, 32: 32}  # tile side t -> registers per thread
THREADS, SIZES = 256, (1024, 4096)  # threads per block; the two sizes of C
glue("p2b_tile_threads", THREADS)
glue("p2b_tile_small_c", f"{SIZES[0]}×{SIZES[0]}")
glue("p2b_tile_big_c", f"{SIZES[1]}×{SIZES[1]}")
rows = []
for size in SIZES:
    for t in registers:
        occ = occupancy(THREADS, registers[t], 2 * 2 * t * 32 * 2, device=H100)
        blocks = cdiv(size, t) ** 2
        wv = waves(blocks, occ.blocks_per_sm, device=H100)
        intensity = t * t / (t + t)  # FLOP per byte of BF16 operands: 2 t_m t_n / (2 (t_m + t_n))
        rows.append((f"{size}×{size}", f"{t}×{t}", intensity, occ.blocks_per_sm, blocks,
                     wv.capacity, wv.waves, wv.utilisation))
        if size == SIZES[0]:
            glue(f"p2b_tile{t}_shape", f"{t}×{t}")
            glue(f"p2b_tile{t}_blocks", blocks, ",")
            glue(f"p2b_tile{t}_per_sm", occ.blocks_per_sm)
            glue(f"p2b_tile{t}_capacity", wv.capacity, ",")
            glue(f"p2b_tile{t}_waves", wv.waves)
            glue(f"p2b_tile{t}_util", wv.utilisation, ".0%")
            glue(f"p2b_tile{t}_ai", intensity, ".0f")
        else:
            glue(f"p2b_big_tile{t}_util", wv.utilisation, ".0%")
show(Table(rows, columns=[
    "C", T("块（tile）", "tile"), T("算术强度 (FLOP/B)", "intensity (FLOP/B)"),
    T("块/SM", "blocks/SM"), T("块数", "blocks"), T("每波容量", "blocks per wave"),
    T("波数", "waves"), T("SM 利用率", "SM utilisation")],
    fmt=[None, None, ".0f", ",", ",", ",", ",", ".0%"]))
# --8<-- [end:tiles_table]


# %%
# --8<-- [start:waves_figure]
grid_blocks = np.arange(1, 801)
utilisation = {per_sm: [waves(int(b), per_sm, device=H100).utilisation for b in grid_blocks] for per_sm in (1, 2)}


def draw_waves():
    fig, ax = figure(figsize=(6.4, 3.4))
    for per_sm, util in utilisation.items():
        ax.plot(grid_blocks, util, label=str(T(f"每 SM {per_sm} 个块", f"{per_sm} block(s) per SM")))
    ax.set_xlabel(str(T("网格的块数", "blocks in the grid")))
    ax.set_ylabel(str(T("SM 利用率", "SM utilisation")))
    ax.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
    ax.set_ylim(0, 1.05)
    ax.set_xlim(0, grid_blocks[-1])
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# For the alt text: blocks per wave, and the utilisation one block after each full wave (at the fewest blocks per SM).
wave = {per_sm: waves(1, per_sm, device=H100).capacity for per_sm in utilisation}
low = min(utilisation)
drops = [(b, utilisation[low][b - 1]) for b in grid_blocks[wave[low]::wave[low]]]  # b = k * wave + 1
waves_figure = Figure(
    draw_waves,
    alt=T(f"H100（{H100.sm_count} 个 SM）上 SM 利用率随网格块数（{grid_blocks[0]} 到 {grid_blocks[-1]}）呈锯齿，"
          f"一波是 {'、'.join(f'{w} 个块（每 SM {p} 个块时）' for p, w in wave.items())}。每满一波是 100%；"
          f"每 SM {low} 个块时多一个块就跌到 {'、'.join(f'{u:.1%}（{b} 块）' for b, u in drops)}。",
          f"SM utilisation of an H100 ({H100.sm_count} SMs) against blocks in the grid ({grid_blocks[0]} to "
          f"{grid_blocks[-1]}), a sawtooth with a wave of {', '.join(f'{w} blocks at {p} per SM' for p, w in wave.items())}. "
          f"It is 100% at every full wave; at {low} per SM one block more drops it to "
          f"{', '.join(f'{u:.1%} ({b} blocks)' for b, u in drops)}."),
    caption=T(f"H100 上网格的 SM 利用率（{H100.sm_count} 个 SM）。块数刚好是一波容量的整数倍时是 100%；"
              "多一个块就要多跑一整波。块数越多，锯齿越浅。",
              f"SM utilisation of a grid on an H100 ({H100.sm_count} SMs). It is 100% when the block count is a whole "
              "number of waves; one block more costs a whole extra wave. The teeth get shallower as the "
              "grid grows."),
)
# --8<-- [end:waves_figure]


# %%
waves_figure  # a notebook draws the figure here; the lecture page shows it with show()
