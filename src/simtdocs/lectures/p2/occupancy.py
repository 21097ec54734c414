"""Tables and figures of P2 code 04, occupancy, latency hiding and waves (docs/p2/occupancy.md).

Each helper takes what the page's model computed and returns the :class:`Table` or
:class:`Figure` the page shows; the numbers the prose quotes are glued by the companion
script (snippets/p2/04_occupancy_latency_waves.py).
"""

from __future__ import annotations

import numpy as np

from simtdocs import latency_hiding, occupancy, waves
from simtdocs.display import Figure, Table, figure
from simtdocs.i18n import Listing, _

KB = 1024


# --8<-- [start:limiter]
def limiter_text(occ):
    """The limiting resource(s) of an occupancy result, as a label."""
    resource = {"warps": _("warps"), "blocks": _("blocks"), "registers": _("registers"),
                "shared memory": _("shared memory")}
    return Listing(resource[k] for k in occ.limiters)
# --8<-- [end:limiter]


# --8<-- [start:occupancy_table]
def kernel_name(key, threads, regs, smem):
    """The name of a kernel of the table, quoting its own numbers."""
    return {"elem": _("elementwise (vector add)"),
            "small": _("{threads}-thread blocks", threads=threads),
            "ex": _("{regs} registers + {kb} KB shared", regs=regs, kb=smem // KB),
            "ex16": _("same, shared cut to {kb} KB", kb=smem // KB),
            "big": _("big-tile matmul ({regs} registers)", regs=regs),
            "smem": _("shared-memory heavy ({kb} KB)", kb=smem // KB)}[key]


def occupancy_table(kernels, results):
    """One row per kernel, from {key: (threads, registers, shared bytes)} and {key: occupancy result}."""
    rows = []
    for key, (threads, regs, smem) in kernels.items():
        occ = results[key]
        caps = " / ".join(str(occ.limits[k]) for k in ("warps", "blocks", "registers", "shared memory"))
        rows.append((kernel_name(key, threads, regs, smem), threads, regs, smem / KB, caps,
                     occ.blocks_per_sm, occ.warps_per_sm, occ.occupancy, limiter_text(occ)))
    return Table(rows, columns=[
        _("kernel"), _("threads/block"), _("registers/thread"), _("shared/block (KB)"),
        _("block limits: warps / blocks / registers / shared"), _("blocks/SM"), _("warps/SM"), _("occupancy"),
        _("limiter")], fmt=[None, ",", ",", ".0f", None, ",", ",", ".1%", None], align="lrrrrrrrl")
# --8<-- [end:occupancy_table]


# --8<-- [start:occupancy_figure]
def occupancy_figure(device, smem_regs=32):
    """Occupancy on ``device`` against registers per thread (no shared memory) and against shared memory
    per block (at ``smem_regs`` registers per thread), one staircase per block size."""
    reg_range = np.arange(16, 256)
    by_regs = {t: [occupancy(t, int(r), 0, device=device).occupancy for r in reg_range] for t in (128, 256, 512)}
    smem_range = np.arange(0, device.shared_per_sm // KB)
    by_smem = {t: [occupancy(t, smem_regs, int(k) * KB, device=device).occupancy for k in smem_range]
               for t in (128, 256)}
    # The last register count at which one 512-thread block still fits.
    cliff = max(r for r in range(1, 256) if occupancy(512, r, 0, device=device).blocks_per_sm > 0)

    def draw():
        fig, (left, right) = figure(1, 2, figsize=(9, 3.4), sharey=True)
        for threads, occ in by_regs.items():
            left.step(reg_range, occ, where="post", label=str(_("{threads} threads/block", threads=threads)))
        left.set_xlabel(str(_("registers per thread")))
        left.set_ylabel(str(_("occupancy")))
        left.set_title(str(_("registers (no shared memory)")), fontsize=10)
        for threads, occ in by_smem.items():
            right.step(smem_range, occ, where="post", label=str(_("{threads} threads/block", threads=threads)))
        right.set_xlabel(str(_("shared memory per block (KB)")))
        right.set_title(str(_("shared memory ({regs} registers/thread)", regs=smem_regs)), fontsize=10)
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
    return Figure(
        draw,
        alt=_("Staircases of theoretical occupancy on an H100. Left, against registers per thread ({r0} to {r1}), "
              "{big_r}-thread blocks have {left}; right, against shared memory per block ({s0} to {s1} KB), "
              "{big_s}-thread blocks have {right}; {small_t}-thread blocks come down in finer steps ({n_left} on "
              "the left, {n_right} on the right).",
              r0=reg_range[0], r1=reg_range[-1], big_r=big_r, left=left_steps, s0=smem_range[0],
              s1=smem_range[-1], big_s=big_s, right=right_steps, small_t=small_t, n_left=n_left, n_right=n_right),
        caption=_("Theoretical occupancy on an H100, against registers per thread (left) and shared memory "
                  "per block (right). Blocks come in whole numbers, hence the stairs; a 512-thread block "
                  "does not fit at all above {cliff} registers per thread.", cliff=cliff),
    )
# --8<-- [end:occupancy_figure]


# --8<-- [start:latency_table]
def how(req, size):
    """The row's name, from its own numbers: 'float4, 2 requests (unrolled)'."""
    kind = {128: "float", 512: "float4"}[size]
    if req == 1:
        return _("{kind}, {n} request", kind=kind, n=req)
    return _("{kind}, {n} requests (unrolled)", kind=kind, n=req)


def latency_table(results, device):
    """One row per case, from {(warps, requests per warp, bytes per request): latency_hiding result}."""
    rows = [(how(req, size), w, w / device.max_warps_per_sm, req, size, lh.in_flight_bytes, lh.fraction)
            for (w, req, size), lh in results.items()]
    return Table(rows, columns=[
        _("how each warp reads"), _("warps/SM"), _("occupancy"), _("requests/warp"), _("bytes/request"),
        _("bytes in flight/SM"), _("fraction of bandwidth")], fmt=[None, ",", ".1%", ",", ",", ",", ".0%"])
# --8<-- [end:latency_table]


# --8<-- [start:latency_figure]
LATENCY_CURVES = [(1, 128, "float × 1"), (2, 128, "float × 2"), (1, 512, "float4 × 1"),
                  (2, 512, "float4 × 2"), (4, 512, "float4 × 4")]  # (requests per warp, bytes per request, label)


def latency_figure(device, settings=LATENCY_CURVES):
    """The fraction of HBM bandwidth reached against warps per SM on ``device``, one line per setting;
    the caption names the fewest warps that reach it with float4 loads, 2 requests per warp."""
    enough = min(k for k in range(1, device.max_warps_per_sm + 1)
                 if latency_hiding(k, 2, 512, device=device).fraction >= 1)
    latency_ns = latency_hiding(1, device=device).latency_s * 1e9  # the assumed memory latency
    warp_range = np.arange(1, device.max_warps_per_sm + 1)
    bw_fraction = {label: [latency_hiding(int(k), req, size, device=device).fraction for k in warp_range]
                   for req, size, label in settings}

    def draw():
        fig, ax = figure(figsize=(6.4, 3.6))
        for label, frac in bw_fraction.items():
            ax.plot(warp_range, frac, label=label)
        ax.set_xlabel(str(_("warps per SM (occupancy = warps / {max})", max=device.max_warps_per_sm)))
        ax.set_ylabel(str(_("fraction of HBM bandwidth reached")))
        ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:.0%}")
        ax.set_xlim(0, device.max_warps_per_sm)
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
        ax.legend(title=str(_("requests per warp")), fontsize=8, title_fontsize=8)
        fig.tight_layout()
        return fig

    # For the alt text: the fewest warps at which each curve reaches 100 %, or where it ends short of it.
    full_at = {label: next((int(k) for k, f in zip(warp_range, frac) if f >= 1), None)
               for label, frac in bw_fraction.items()}
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
    return Figure(
        draw,
        alt=alt,
        caption=_("Little's law (H100, {latency:.0f} ns memory latency assumed): bytes in flight = warps × requests "
                  "per warp × bytes per request. With one float per thread even {max} warps fall short; with float4 "
                  "loads and 2 requests per warp, {enough} warps are enough.",
                  latency=latency_ns, max=device.max_warps_per_sm, enough=enough),
    )
# --8<-- [end:latency_figure]


# --8<-- [start:waves_table]
def waves_table(results):
    """One row per grid, from {blocks: waves result}."""
    rows = [(blocks, wv.capacity, wv.waves, wv.last_wave_blocks, wv.utilisation) for blocks, wv in results.items()]
    return Table(rows, columns=[_("blocks"), _("blocks per wave"), _("waves"), _("blocks in the last wave"),
                                _("SM utilisation")], fmt=[",", ",", ",", ",", ".1%"])
# --8<-- [end:waves_table]


# --8<-- [start:tiles_table]
def tile_intensity(t):
    """FLOP per byte of BF16 operands of a t × t tile: 2 t_m t_n / (2 (t_m + t_n))."""
    return t * t / (t + t)


def tiles_table(results):
    """One row per (side of C, side of the tile), from {(size, t): (occupancy result, waves result)}."""
    rows = [(f"{size}×{size}", f"{t}×{t}", tile_intensity(t), occ.blocks_per_sm, wv.blocks, wv.capacity, wv.waves,
             wv.utilisation) for (size, t), (occ, wv) in results.items()]
    return Table(rows, columns=[
        "C", _("tile"), _("intensity (FLOP/B)"), _("blocks/SM"), _("blocks"), _("blocks per wave"),
        _("waves"), _("SM utilisation")], fmt=[None, None, ".0f", ",", ",", ",", ",", ".0%"])
# --8<-- [end:tiles_table]


# --8<-- [start:waves_figure]
def waves_figure(device, most_blocks=800, per_sm=(1, 2)):
    """SM utilisation of ``device`` against the blocks in a grid (1 to ``most_blocks``), one sawtooth per
    number of blocks per SM."""
    grid_blocks = np.arange(1, most_blocks + 1)
    utilisation = {p: [waves(int(b), p, device=device).utilisation for b in grid_blocks] for p in per_sm}

    def draw():
        fig, ax = figure(figsize=(6.4, 3.4))
        for p, util in utilisation.items():
            ax.plot(grid_blocks, util, label=str(_("{n} block(s) per SM", n=p)))
        ax.set_xlabel(str(_("blocks in the grid")))
        ax.set_ylabel(str(_("SM utilisation")))
        ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:.0%}")
        ax.set_ylim(0, 1.05)
        ax.set_xlim(0, grid_blocks[-1])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        return fig

    # For the alt text: blocks per wave, and the utilisation one block after each full wave (at the fewest per SM).
    wave = {p: waves(1, p, device=device).capacity for p in utilisation}
    low = min(utilisation)
    drops = [(b, utilisation[low][b - 1]) for b in grid_blocks[wave[low]::wave[low]]]  # b = k * wave + 1
    wave_sizes = Listing(_("{w} blocks at {p} per SM", w=w, p=p) for p, w in wave.items())
    drop_to = Listing(_("{u:.1%} ({b} blocks)", u=u, b=b) for b, u in drops)
    return Figure(
        draw,
        alt=_("SM utilisation of an H100 ({sms} SMs) against blocks in the grid ({b0} to {b1}), a sawtooth with a "
              "wave of {waves}. It is 100% at every full wave; at {low} per SM one block more drops it to {drops}.",
              sms=device.sm_count, b0=grid_blocks[0], b1=grid_blocks[-1], waves=wave_sizes, low=low, drops=drop_to),
        caption=_("SM utilisation of a grid on an H100 ({sms} SMs). It is 100% when the block count is a whole "
                  "number of waves; one block more costs a whole extra wave. The teeth get shallower as the "
                  "grid grows.", sms=device.sm_count),
    )
# --8<-- [end:waves_figure]
