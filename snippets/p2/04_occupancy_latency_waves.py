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
from simtdocs.docs import show

KB = 1024
# --8<-- [end:setup]


# %%
# --8<-- [start:limiter]
from simtdocs.docs import _
from simtdocs.i18n import Listing

# How the four resources of the occupancy calculator are called in the tables.
RESOURCE = {"warps": _("warps"), "blocks": _("blocks"), "registers": _("registers"),
            "shared memory": _("shared memory")}


def limiter_text(occ):
    """The limiting resource(s) of an occupancy result, as a label."""
    return Listing(RESOURCE[k] for k in occ.limiters)
# --8<-- [end:limiter]


# %% [markdown]
# ## 演示 1：占用率计算器 · Demo 1: the occupancy calculator

# %%
# --8<-- [start:occupancy_table]
from simtdocs import H100
from simtdocs.docs import Table, _, glue

KB = 1024


def kernel_name(key, threads, regs, smem):
    """The name of a kernel of the table, quoting its own numbers."""
    return {"elem": _("elementwise (vector add)"),
            "small": _("{threads}-thread blocks", threads=threads),
            "ex": _("{regs} registers + {kb} KB shared", regs=regs, kb=smem // KB),
            "ex16": _("same, shared cut to {kb} KB", kb=smem // KB),
            "big": _("big-tile matmul ({regs} registers)", regs=regs),
            "smem": _("shared-memory heavy ({kb} KB)", kb=smem // KB)}[key]


def occupancy_table(kernels, results):
    """The table of §7.1 from {key: (threads, registers, shared bytes)} and {key: occupancy};
    glues each kernel's inputs and results, and the device limits the prose quotes."""
    rows = []
    for key, (threads, regs, smem) in kernels.items():
        occ = results[key]
        caps = " / ".join(str(occ.limits[k]) for k in ("warps", "blocks", "registers", "shared memory"))
        rows.append((kernel_name(key, threads, regs, smem), threads, regs, smem / KB, caps,
                     occ.blocks_per_sm, occ.warps_per_sm, occ.occupancy, limiter_text(occ)))
        glue(f"p2b_{key}_blocks", occ.blocks_per_sm)
        glue(f"p2b_{key}_warps", occ.warps_per_sm)
        glue(f"p2b_{key}_occ", occ.occupancy, ".1%")
        glue(f"p2b_{key}_threads", threads)  # the kernel's inputs, for the prose
        glue(f"p2b_{key}_regs", regs)
        glue(f"p2b_{key}_smem_kb", smem // KB)
    for key, value in (("max_warps", H100.max_warps_per_sm), ("max_blocks", H100.max_blocks_per_sm),
                       ("regs_per_sm", H100.registers_per_sm), ("reg_unit", H100.register_allocation_unit),
                       ("smem_per_sm_kb", H100.shared_per_sm // KB),
                       ("smem_reserved_kb", H100.reserved_shared_per_block // KB)):
        glue(f"p2b_{key}", value, ",")
    return Table(rows, columns=[
        _("kernel"), _("threads/block"), _("registers/thread"), _("shared/block (KB)"),
        _("block limits: warps / blocks / registers / shared"), _("blocks/SM"), _("warps/SM"), _("occupancy"),
        _("limiter")], fmt=[None, ",", ",", ".0f", None, ",", ",", ".1%", None], align="lrrrrrrrl")
# --8<-- [end:occupancy_table]


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
show(occupancy_table(kernels, results))
# --8<-- [end:occupancy]


# %%
# --8<-- [start:occupancy_figure]
from simtdocs.docs import Figure, _, figure, glue
from simtdocs.i18n import Listing

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
        left.step(reg_range, occ, where="post", label=str(_("{threads} threads/block", threads=threads)))
    left.set_xlabel(str(_("registers per thread")))
    left.set_ylabel(str(_("occupancy")))
    left.set_title(str(_("registers (no shared memory)")), fontsize=10)
    for threads, occ in by_smem.items():
        right.step(smem_range, occ, where="post", label=str(_("{threads} threads/block", threads=threads)))
    right.set_xlabel(str(_("shared memory per block (KB)")))
    right.set_title(str(_("shared memory ({regs} registers/thread)", regs=SMEM_REGS)), fontsize=10)
    for ax in (left, right):
        ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:.0%}")
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
left_steps = Listing(_("{o} from {x}", o=o, x=x) for x, o in steps(reg_range, by_regs[big_r]))
right_steps = Listing(_("{o} from {x} KB", o=o, x=x) for x, o in steps(smem_range, by_smem[big_s]))
n_left, n_right = len(steps(reg_range, by_regs[small_t])) - 1, len(steps(smem_range, by_smem[small_t])) - 1
occupancy_figure = Figure(
    draw_occupancy,
    alt=_("Staircases of theoretical occupancy on an H100. Left, against registers per thread ({r0} to {r1}), "
          "{big_r}-thread blocks have {left}; right, against shared memory per block ({s0} to {s1} KB), "
          "{big_s}-thread blocks have {right}; {small_t}-thread blocks come down in finer steps ({n_left} on the "
          "left, {n_right} on the right).",
          r0=reg_range[0], r1=reg_range[-1], big_r=big_r, left=left_steps, s0=smem_range[0], s1=smem_range[-1],
          big_s=big_s, right=right_steps, small_t=small_t, n_left=n_left, n_right=n_right),
    caption=_("Theoretical occupancy on an H100, against registers per thread (left) and shared memory "
              "per block (right). Blocks come in whole numbers, hence the stairs; a 512-thread block "
              "does not fit at all above {cliff} registers per thread.", cliff=cliff),
)
# --8<-- [end:occupancy_figure]


# %%
occupancy_figure  # a notebook draws the figure here; the lecture page shows it with show()


# %% [markdown]
# ## 演示 2：利特尔定律 · Demo 2: Little's law

# %%
# --8<-- [start:latency_table]
from simtdocs import H100, latency_hiding
from simtdocs.docs import Table, _, glue


def how(req, size):
    """The row's name, from its own numbers: 'float4, 2 requests (unrolled)'."""
    kind = {128: "float", 512: "float4"}[size]
    if req == 1:
        return _("{kind}, {n} request", kind=kind, n=req)
    return _("{kind}, {n} requests (unrolled)", kind=kind, n=req)


def latency_table(results):
    """The table of §7.2 from {(warps, requests per warp, bytes per request): latency_hiding result};
    glues the numbers the prose quotes."""
    rows = [(how(req, size), w, w / H100.max_warps_per_sm, req, size, lh.in_flight_bytes, lh.fraction)
            for (w, req, size), lh in results.items()]
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
    return Table(rows, columns=[
        _("how each warp reads"), _("warps/SM"), _("occupancy"), _("requests/warp"), _("bytes/request"),
        _("bytes in flight/SM"), _("fraction of bandwidth")], fmt=[None, ",", ".1%", ",", ",", ",", ".0%"])
# --8<-- [end:latency_table]


# %%
# --8<-- [start:latency]
# (warps resident on the SM, independent requests per warp, bytes per request)
# A warp-wide float load moves 32 × 4 = 128 bytes; a float4 load 32 × 16 = 512 bytes.
cases = [(64, 1, 128), (32, 1, 128), (16, 1, 128), (16, 2, 128), (16, 1, 512), (16, 2, 512), (8, 4, 512)]
results = {case: latency_hiding(*case, device=H100) for case in cases}
show(latency_table(results))
# --8<-- [end:latency]


# %%
# --8<-- [start:latency_figure]
from simtdocs.docs import Figure, _, figure, glue
from simtdocs.i18n import Listing

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
    ax.set_xlabel(str(_("warps per SM (occupancy = warps / {max})", max=H100.max_warps_per_sm)))
    ax.set_ylabel(str(_("fraction of HBM bandwidth reached")))
    ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:.0%}")
    ax.set_xlim(0, H100.max_warps_per_sm)
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(title=str(_("requests per warp")), fontsize=8, title_fontsize=8)
    fig.tight_layout()
    return fig


# For the alt text: the fewest warps at which each curve reaches 100 %, or where it ends short of it.
full_at = {label: next((int(k) for k, f in zip(warp_range, frac) if f >= 1), None) for label, frac in bw_fraction.items()}
last = warp_range[-1]
reach = Listing(_("{w} for {label}", w=w, label=label) for label, w in full_at.items() if w is not None)
short = Listing(_("{label} reaches only {f:.0%} at {last}", label=label, f=bw_fraction[label][-1], last=last)
                for label, w in full_at.items() if w is None)
if short.items:
    alt = _("Fraction of HBM bandwidth an H100 reaches against warps per SM ({w0} to {last}), rising in a "
            "straight line until it caps at 100%, one line per way of reading (load type × requests per warp). "
            "Warps needed for 100%: {reach}; {short}.", w0=warp_range[0], last=last, reach=reach, short=short)
else:
    alt = _("Fraction of HBM bandwidth an H100 reaches against warps per SM ({w0} to {last}), rising in a "
            "straight line until it caps at 100%, one line per way of reading (load type × requests per warp). "
            "Warps needed for 100%: {reach}.", w0=warp_range[0], last=last, reach=reach)
latency_figure = Figure(
    draw_latency,
    alt=alt,
    caption=_("Little's law (H100, {latency:.0f} ns memory latency assumed): bytes in flight = warps × requests "
              "per warp × bytes per request. With one float per thread even {max} warps fall short; with float4 "
              "loads and 2 requests per warp, {enough} warps are enough.",
              latency=latency_ns, max=H100.max_warps_per_sm, enough=enough),
)
# --8<-- [end:latency_figure]


# %%
latency_figure  # a notebook draws the figure here; the lecture page shows it with show()


# %% [markdown]
# ## 演示 3：波 · Demo 3: waves

# %%
# --8<-- [start:waves_table]
from simtdocs import H100
from simtdocs.docs import Table, _, glue


def waves_table(results):
    """The table of §7.3 from {blocks: waves result} at one block per SM; glues what the prose quotes."""
    rows = [(blocks, wv.capacity, wv.waves, wv.last_wave_blocks, wv.utilisation) for blocks, wv in results.items()]
    S = H100.sm_count  # one block per SM: a wave is S blocks
    glue("p2b_sms", S)
    glue("p2b_w133_blocks", S + 1)
    glue("p2b_w265_blocks", 2 * S + 1)
    glue("p2b_w133_util", results[S + 1].utilisation, ".0%")
    glue("p2b_w133_waves", results[S + 1].waves)
    glue("p2b_w133_last", results[S + 1].last_wave_blocks)
    glue("p2b_w265_util", results[2 * S + 1].utilisation, ".0%")
    return Table(rows, columns=[_("blocks"), _("blocks per wave"), _("waves"), _("blocks in the last wave"),
                                _("SM utilisation")], fmt=[",", ",", ",", ",", ".1%"])
# --8<-- [end:waves_table]


# %%
# --8<-- [start:waves]
S = H100.sm_count  # one block per SM: a wave is S blocks
results = {blocks: waves(blocks, blocks_per_sm=1, device=H100)
           for blocks in (S, S + 1, 2 * S, 2 * S + 1, 10 * S, 10 * S + 1)}
show(waves_table(results))
# --8<-- [end:waves]


# %%
# --8<-- [start:tiles_table]
from simtdocs.docs import Table, _, glue


def tiles_table(threads, results):
    """The table of §7.3 from {(side of C, side of the tile): (occupancy, waves)} of blocks of `threads`;
    glues the numbers the prose quotes (the smaller C in detail)."""
    small = min(size for size, t in results)
    glue("p2b_tile_threads", threads)
    glue("p2b_tile_small_c", f"{small}×{small}")
    big = max(size for size, t in results)
    glue("p2b_tile_big_c", f"{big}×{big}")
    rows = []
    for (size, t), (occ, wv) in results.items():
        intensity = t * t / (t + t)  # FLOP per byte of BF16 operands: 2 t_m t_n / (2 (t_m + t_n))
        rows.append((f"{size}×{size}", f"{t}×{t}", intensity, occ.blocks_per_sm, wv.blocks,
                     wv.capacity, wv.waves, wv.utilisation))
        if size == small:
            glue(f"p2b_tile{t}_shape", f"{t}×{t}")
            glue(f"p2b_tile{t}_blocks", wv.blocks, ",")
            glue(f"p2b_tile{t}_per_sm", occ.blocks_per_sm)
            glue(f"p2b_tile{t}_capacity", wv.capacity, ",")
            glue(f"p2b_tile{t}_waves", wv.waves)
            glue(f"p2b_tile{t}_util", wv.utilisation, ".0%")
            glue(f"p2b_tile{t}_ai", intensity, ".0f")
        else:
            glue(f"p2b_big_tile{t}_util", wv.utilisation, ".0%")
    return Table(rows, columns=[
        "C", _("tile"), _("intensity (FLOP/B)"), _("blocks/SM"), _("blocks"), _("blocks per wave"),
        _("waves"), _("SM utilisation")], fmt=[None, None, ".0f", ",", ",", ",", ",", ".0%"])
# --8<-- [end:tiles_table]


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
show(tiles_table(THREADS, results))
# --8<-- [end:tiles]


# %%
# --8<-- [start:waves_figure]
from simtdocs.docs import Figure, _, figure
from simtdocs.i18n import Listing

grid_blocks = np.arange(1, 801)
utilisation = {per_sm: [waves(int(b), per_sm, device=H100).utilisation for b in grid_blocks] for per_sm in (1, 2)}


def draw_waves():
    fig, ax = figure(figsize=(6.4, 3.4))
    for per_sm, util in utilisation.items():
        ax.plot(grid_blocks, util, label=str(_("{n} block(s) per SM", n=per_sm)))
    ax.set_xlabel(str(_("blocks in the grid")))
    ax.set_ylabel(str(_("SM utilisation")))
    ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:.0%}")
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
wave_sizes = Listing(_("{w} blocks at {p} per SM", w=w, p=p) for p, w in wave.items())
drop_to = Listing(_("{u:.1%} ({b} blocks)", u=u, b=b) for b, u in drops)
waves_figure = Figure(
    draw_waves,
    alt=_("SM utilisation of an H100 ({sms} SMs) against blocks in the grid ({b0} to {b1}), a sawtooth with a "
          "wave of {waves}. It is 100% at every full wave; at {low} per SM one block more drops it to {drops}.",
          sms=H100.sm_count, b0=grid_blocks[0], b1=grid_blocks[-1],
          waves=wave_sizes, low=low, drops=drop_to),
    caption=_("SM utilisation of a grid on an H100 ({sms} SMs). It is 100% when the block count is a whole "
              "number of waves; one block more costs a whole extra wave. The teeth get shallower as the "
              "grid grows.", sms=H100.sm_count),
)
# --8<-- [end:waves_figure]


# %%
waves_figure  # a notebook draws the figure here; the lecture page shows it with show()
