"""Tables and figures of the execution-model lecture (docs/exec-model.md, snippets/exec_model/).

Each helper takes what the page's experiment computed and returns the :class:`Table` or
:class:`Figure` the page shows (``show(lecture.indexing_table(index_of, warp_of, threads))``).
The ``--8<--`` section markers let the page show each helper's source in a folded block.
"""

from __future__ import annotations

import numpy as np

from simtdocs import LABELS, cdiv, latency_hiding, occupancy, waves
from simtdocs.display import Figure, Table, figure
from simtdocs.i18n import Listing, _, _n


# --8<-- [start:baseline_table]
def baseline_table(vllm_version, model, device, memory_gb):
    """The software the lecture reads (cited) and the GPU it runs on (read from simtdocs)."""
    major, minor = device.compute_capability
    return Table([
        (_("inference engine"), f"vLLM {vllm_version}"),
        (_("model"), model),
        ("GPU", f"{device.name}, {memory_gb} GB"),  # the same word in every language
        (_("architecture, compute capability"), f"Ada Lovelace, {major}.{minor}"),
    ], [_("baseline"), _("value")], align="ll")
# --8<-- [end:baseline_table]


# --8<-- [start:devices_table]
def devices_table(p2_device, device):
    """One row per specification, one column per device (read from simtdocs.devices)."""
    rows = [
        (_("compute capability"), lambda d: "{}.{}".format(*d.compute_capability)),
        (_("SMs"), lambda d: f"{d.sm_count}"),
        (_("warps per SM, at most"), lambda d: f"{d.max_warps_per_sm}"),
        (_("blocks per SM, at most"), lambda d: f"{d.max_blocks_per_sm}"),
        (_("registers per SM (32-bit)"), lambda d: f"{d.registers_per_sm:,}"),
        (_("shared memory per SM (max)"), lambda d: f"{d.shared_per_sm // 1024} KB"),
        (_("DRAM bandwidth"), lambda d: f"{d.memory_bandwidth / 1e9:,.0f} GB/s"),
        (_("bandwidth per SM"), lambda d: f"{d.bandwidth_per_sm / 1e9:.2f} GB/s"),
        ("L2 cache", lambda d: f"{d.l2_bytes // 2**20} MB"),  # the same words in every language
        (_("boost clock"), lambda d: f"{d.clock_hz / 1e9:.2f} GHz"),
    ]
    columns = [_("specification"), _("{name} (P2)", name=p2_device.name),
               _("{name} (this lecture)", name=device.name)]
    return Table([(name, get(p2_device), get(device)) for name, get in rows], columns, align="lrr")
# --8<-- [end:devices_table]


# --8<-- [start:indexing_table]
def indexing_table(index_of, warp_of, threads):
    """One row per warp of each block: its threads, their global indices, its active lanes."""
    rows = []
    for b in range(len(index_of) // threads):
        for w in range(cdiv(threads, 32)):
            mine = (index_of // threads == b) & (warp_of == w)  # threads of block b in warp w
            t = index_of[mine] - b * threads
            i = index_of[mine]
            rows.append((b, w, f"{t.min()}–{t.max()}", f"{i.min()}–{i.max()}", int(mine.sum())))
    return Table(rows, ["blockIdx.x", "warp", "threadIdx.x", _("global index i"), _("active lanes (of 32)")],
                 align="rrrrr")
# --8<-- [end:indexing_table]


# --8<-- [start:timeline_figure]
def timeline_figure(schedule, compute, stall, few, many, horizon=1500):
    """The warps of ``schedule(k, compute, stall)`` for ``few`` and ``many`` warps, one timeline each."""
    busy = {k: schedule(k, compute, stall, horizon)[1] for k in (few, many)}

    def draw():
        fig, axes = figure(2, 1, figsize=(8, 3.6), sharex=True)
        for ax, k in zip(axes, (few, many)):
            runs, share = schedule(k, compute, stall, horizon)
            for w, stretches in enumerate(runs):
                y = k - 1 - w
                for start, length in stretches:
                    ax.broken_barh([(start, length)], (y - 0.35, 0.7), color=f"C{w}")
                    ax.broken_barh([(start + length, stall)], (y - 0.1, 0.2), color="0.8")
            ax.set_yticks(range(k))
            ax.set_yticklabels([f"warp {chr(65 + w)}" for w in reversed(range(k))])
            ax.set_xlim(0, horizon)
            ax.set_title(str(_n("{n} warp: the scheduler issues in {share:.0%} of the cycles",
                                "{n} warps: the scheduler issues in {share:.0%} of the cycles", n=k, share=share)),
                         fontsize=10)
        axes[-1].set_xlabel(str(_("cycle (colour: computing; grey: waiting for memory)")))
        fig.tight_layout()
        return fig

    return Figure(
        draw,
        alt=_("Two timelines in which each warp computes for {compute} cycles (colour), then waits {stall} (grey): "
              "with {few} warps the scheduler issues in only {busy_few:.0%} of the cycles, with {many} in "
              "{busy_many:.0%}.", compute=compute, stall=stall, few=few, many=many,
              busy_few=busy[few], busy_many=busy[many]),
        caption=_("Latency hiding: each warp computes for {compute} cycles, then waits {stall} cycles for memory "
                  "(illustrative numbers)", compute=compute, stall=stall),
    )
# --8<-- [end:timeline_figure]


# --8<-- [start:limits_table]
def limits_table(device):
    """The per-SM limits of ``device`` that decide occupancy."""
    d = device
    return Table(
        rows=[
            (_("resident threads per SM, max"), d.max_threads_per_sm),
            (_("resident warps per SM, max"), d.max_warps_per_sm),
            (_("resident blocks per SM, max"), d.max_blocks_per_sm),
            (_("32-bit registers per SM"), d.registers_per_sm),
            (_("registers per thread, max"), d.max_registers_per_thread),
            (_("shared memory per SM (KB)"), d.shared_per_sm // 1024),
            (_("threads per block, max"), d.max_threads_per_block),
            (_("SMs"), d.sm_count),
        ],
        columns=[_("{name} (compute capability {cc})", name=d.name, cc="{}.{}".format(*d.compute_capability)),
                 _("limit")],
        fmt=[None, ","],
    )
# --8<-- [end:limits_table]


# --8<-- [start:resources_table]
def resource_name(key):
    """The name of one of simtdocs.occupancy's limits."""
    return {"warps": _("warp limit"), "blocks": _("block limit"), "registers": _("registers"),
            "shared memory": _("shared memory")}[key]


def resources_table(occ):
    """How many blocks per SM each resource allows (the smallest decides)."""
    return Table(
        rows=[(resource_name(k), v) for k, v in occ.limits.items()],
        columns=[_("resource"), _("blocks per SM it allows")],
        fmt=[None, ","],
    )
# --8<-- [end:resources_table]


# --8<-- [start:occupancy_grid]
def occupancy_grid(block_sizes, registers, device):
    """Theoretical occupancy for every registers-per-thread (rows) and block size (columns)."""
    def cell(threads, regs):
        o = occupancy(threads, regs, device=device)
        return _("cannot launch") if o.blocks_per_sm == 0 else f"{o.occupancy:.0%}"

    return Table(
        rows=[(r, *(cell(t, r) for t in block_sizes)) for r in registers],
        columns=[_("registers/thread"), *(_("{t} threads/block", t=t) for t in block_sizes)],
    )
# --8<-- [end:occupancy_grid]


# --8<-- [start:little_figure]
def little_figure(device, ilps, warps_needed, resident_warps, registers):
    """Little's law: the share of its DRAM bandwidth one SM reaches against its resident warps,
    one curve per number of independent loads per warp; a dashed line at ``resident_warps``."""
    def draw():
        fig, ax = figure(figsize=(7, 3.4))
        w = np.arange(0, device.max_warps_per_sm + 1)
        for k in ilps:
            frac = [latency_hiding(int(x), requests_per_warp=k, device=device).fraction for x in w]
            ax.plot(w, frac, label=str(_n("{n} independent load per warp", "{n} independent loads per warp", n=k)))
        ax.axvline(resident_warps, color="0.5", ls="--")
        ax.text(resident_warps + 0.5, 0.55, str(_("limit at {regs}\nregisters/thread", regs=registers)), fontsize=8)
        ax.set_xlabel(str(_("resident warps per SM")))
        ax.set_ylabel(str(_("share of DRAM bandwidth reached")))
        ax.set_ylim(0, 1.05)
        ax.set_xlim(0, device.max_warps_per_sm)
        ax.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
        return fig

    return Figure(
        draw,
        alt=_("Share of DRAM bandwidth one {name} SM reaches against resident warps (0 to {most}), rising in a "
              "straight line: with {ilps} independent loads per warp it reaches 100% at {warps} warps. A dashed "
              "line marks the {resident} warps that fit at {regs} registers per thread.",
              name=device.name, most=device.max_warps_per_sm, ilps=Listing(ilps),
              warps=Listing(warps_needed[k] for k in ilps), resident=resident_warps, regs=registers),
        caption=_("Little's law: how many warps must be waiting for data to keep one {name} SM's share of "
                  "bandwidth busy", name=device.name),
    )
# --8<-- [end:little_figure]


# --8<-- [start:branch_layout_table]
def branch_layout_table(layouts, results):
    """One row per branch layout: ``layouts[name]`` says which threads take the if,
    ``results[name]`` is (stats, branch bodies executed)."""
    names = {"interleaved": _("interleaved"), "warp_aligned": _("warp-aligned")}
    rows = []
    for name, (stats, bodies) in results.items():
        rows.append((names[name], int(layouts[name].mean() * 100), stats.divergent_branches, bodies,
                     bodies / stats.warps))
    return Table(
        rows,
        columns=[_("branch layout"), _("threads taking the if, %"), LABELS["divergent_branches"],
                 _("branch bodies executed"), _("divergence tax")],
        fmt=[None, None, ",", ",", ".2f"],
    )
# --8<-- [end:branch_layout_table]


# --8<-- [start:silu_table]
def silu_table(stats):
    """The counters of the silu_and_mul launch that the lecture discusses."""
    keys = ["warps", "warp_instructions", "simt_efficiency", "divergent_branches", "sectors", "coalescing_efficiency"]
    value = {k: f"{getattr(stats, k):.1%}" if k.endswith("efficiency") else f"{getattr(stats, k):,}" for k in keys}
    return Table([(LABELS[k], value[k]) for k in keys], [_("counter"), _("value")])
# --8<-- [end:silu_table]


# --8<-- [start:waves_table]
def waves_table(grids, blocks_per_sm, device):
    """One row per grid size: ``grids[n]`` is simtdocs.waves for ``n`` blocks."""
    rows = []
    for n, w in grids.items():
        busy_first = min(n, w.capacity) // blocks_per_sm  # SMs with a block in the first wave
        rows.append((n, w.waves, w.last_wave_blocks, busy_first, w.utilisation))
    return Table(
        rows,
        columns=[_("tokens = blocks"), _("waves"), _("blocks in the last wave"),
                 _("SMs busy in the first wave (of {sms})", sms=device.sm_count), _("block-slot utilisation")],
        fmt=[",", ",", ",", ",", ".1%"],
    )
# --8<-- [end:waves_table]


# --8<-- [start:bandwidth_table]
def bandwidth_table(rows, peak_gbps):
    """The model's prediction for each size: ``rows`` are the dicts of ``predict(n)``."""
    return Table(
        rows=[(r["n"], r["waves"], r["warps"], r["hidden"], r["kernel_s"] * 1e6,
               r["call_s"] * 1e6, r["gbps"], r["gbps"] / peak_gbps) for r in rows],
        columns=[_("elements"), _("waves"), _("warps on busiest SM"), _("latency hidden"), _("kernel µs"),
                 _("per call µs"), _("effective GB/s"), _("of peak")],
        fmt=[",", ",", ",", ".0%", ".1f", ".1f", ",.1f", ".0%"],
    )
# --8<-- [end:bandwidth_table]


# --8<-- [start:bandwidth_figure]
def bandwidth_figure(sweep, lab, peak_gbps, launch_s, dip, dip_fill, device, near=0.9):
    """Effective bandwidth per call and of the kernel alone over ``sweep`` (dicts of ``predict``),
    the GPU lab's sizes ``lab`` as dots; the alt text names the first size within ``near`` of
    the peak and the kernel's dip at ``dip``, whose last wave is ``dip_fill`` full."""
    close = next(r for r in sweep if r["gbps"] >= near * peak_gbps)

    def draw():
        fig, ax = figure(figsize=(7, 3.6))
        ns = [r["n"] for r in sweep]
        ax.plot(ns, [r["gbps"] for r in sweep], marker=".",
                label=str(_("per call (with {us:.0f} µs launch overhead)", us=launch_s * 1e6)))
        ax.plot(ns, [r["kernel_gbps"] for r in sweep], ls="--", label=str(_("kernel alone")))
        ax.plot([r["n"] for r in lab], [r["gbps"] for r in lab], "o", color="C0")
        ax.axhline(peak_gbps, color="0.5", lw=0.8)
        ax.text(ns[0], peak_gbps * 1.02, str(_("DRAM peak {peak:,.0f} GB/s", peak=peak_gbps)), fontsize=8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(str(_("float32 elements")))
        ax.set_ylabel(str(_("effective bandwidth (GB/s)")))
        ax.set_ylim(0, peak_gbps * 1.12)
        ax.legend(loc="center right", fontsize=8)
        fig.tight_layout()
        return fig

    return Figure(
        draw,
        alt=_("Effective bandwidth against float32 elements ({first:,} to {last:,}, log axis): per call it climbs "
              "from {first_gbps:,.1f} GB/s to {near_gbps:,.0f} GB/s at {near_n:,} elements, the first size to "
              "reach {near:.0%} of the {peak:,.0f} GB/s DRAM peak. The dashed kernel-alone curve dips to "
              "{dip_gbps:,.0f} GB/s at {dip_n:,} elements, where the last wave is only {fill:.0%} full.",
              first=sweep[0]["n"], last=sweep[-1]["n"], first_gbps=sweep[0]["gbps"], near_gbps=close["gbps"],
              near_n=close["n"], near=near, peak=peak_gbps, dip_gbps=dip["kernel_gbps"], dip_n=dip["n"],
              fill=dip_fill),
        caption=_("The {name} model's prediction for y = 2·x (dots: the {k} sizes of the GPU lab)",
                  name=device.name, k=len(lab)),
    )
# --8<-- [end:bandwidth_figure]


# --8<-- [start:divergence_table]
def divergence_table(datasets, results):
    """One row per arrangement of the data: ``results[key]`` is the launch's stats on ``datasets[key]``."""
    names = {"random": _("random"), "sorted": _("sorted"), "aligned": _("warp-aligned")}
    rows = []
    for key, stats in results.items():
        rows.append((names[key], float((datasets[key] > 0).mean()), stats.divergent_branches,
                     stats.branch_efficiency, stats.warp_instructions, stats.simt_efficiency))
    return Table(
        rows,
        columns=[_("data"), _("positive share"), LABELS["divergent_branches"], _("branch efficiency"),
                 LABELS["warp_instructions"], LABELS["simt_efficiency"]],
        fmt=[None, ".1%", ",", ".1%", ",", ".1%"],
    )
# --8<-- [end:divergence_table]
