"""Tables and figures of P2 code 05, Amdahl's law and launch overhead (docs/p2/index.md §1.2,
docs/p2/occupancy.md §8).

Each helper takes what the page's model or measurement computed and returns the
:class:`Table` or :class:`Figure` the page shows; the numbers the prose quotes are glued by
the companion script (snippets/p2/05_amdahl_and_launch_overhead.py).
"""

from __future__ import annotations

import os
import platform

import numpy as np

from simtdocs import amdahl, decode_step, gustafson
from simtdocs.display import Figure, Table, figure
from simtdocs.i18n import Listing, _


# --8<-- [start:amdahl_table]
def amdahl_table(sms, lanes, speedups):
    """One row per serial fraction, from {s: (Amdahl on sms workers, Amdahl on lanes, Gustafson on lanes)}."""
    rows = [(s, a_sms, a_lanes, 1 / s, a_lanes / lanes, g) for s, (a_sms, a_lanes, g) in speedups.items()]
    return Table(rows, columns=[
        _("serial fraction s"), _("Amdahl, n = {n} (one per SM)", n=sms), _("Amdahl, n = {n:,} (every lane)", n=lanes),
        _("ceiling 1/s"), _("average lane busy"), _("Gustafson, n = {n:,}", n=lanes)],
        fmt=[".1%", ",.2f", ",.2f", ",.0f", ".2%", ",.0f"])
# --8<-- [end:amdahl_table]


# --8<-- [start:speedup_figure]
def speedup_figure(lanes, fractions=(0.01, 0.05, 0.10)):
    """Amdahl and Gustafson speed-ups from 1 to ``lanes`` workers, one colour per serial fraction."""
    def draw():
        n = np.unique(np.logspace(0, np.log10(lanes), 200).round())
        fig, ax = figure(figsize=(6.4, 4))
        for s, colour in zip(fractions, ("tab:blue", "tab:orange", "tab:green")):
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
    return Figure(
        draw,
        alt=_("Log-log curves of speed-up against the number of workers (1 to {lanes:,}), one colour per serial "
              "fraction s ({fractions}). At {lanes:,} workers Amdahl (solid) has flattened just under its ceiling "
              "1/s ({reached} against ceilings of {ceilings}), while Gustafson (dashed) is still climbing ({grown}).",
              lanes=lanes, fractions=Listing(f"{s:.0%}" for s in fractions),
              reached=Listing(f"{amdahl(s, lanes):,.2f}" for s in fractions),
              ceilings=Listing(f"{1 / s:,.0f}" for s in fractions),
              grown=Listing(f"{gustafson(s, lanes):,.0f}" for s in fractions)),
        caption=_("Solid: Amdahl (fixed problem), capped at 1/s. Dashed: Gustafson (the problem grows with n), "
                  "nearly linear. The vertical line is H100's FP32 lane count; dots and squares are the table's "
                  "values."),
    )
# --8<-- [end:speedup_figure]


# --8<-- [start:launch_table]
def fusion_label(per_layer, unfused):
    """'unfused' or 'fused', for a number of kernels per layer (``unfused`` of them without fusion)."""
    return _("unfused") if per_layer == unfused else _("fused")


def launch_table(steps, unfused):
    """One row per case, from {(model, µs per launch, kernels per layer): decode_step result}."""
    rows = [(name, us, fusion_label(per_layer, unfused), st.kernels, st.gpu_s * 1e3, st.launch_s * 1e3,
             st.serial_s * 1e3, st.overlapped_s * 1e3, st.overhead_share)
            for (name, us, per_layer), st in steps.items()]
    return Table(rows, columns=[
        _("model"), _("overhead (µs)"), _("fusion"), _("kernels"), _("GPU time (ms)"), _("launch time (ms)"),
        _("serial (ms)"), _("overlapped (ms)"), _("launch share (serial)")],
        fmt=[None, ",", None, ",", ".2f", ".2f", ".2f", ".2f", ".0%"], align="lrlrrrrrr")
# --8<-- [end:launch_table]


# --8<-- [start:launch_figure]
def launch_figure(models, gpu_time, overheads_us, unfused, fused, final, ctx):
    """The launch share of a decode step against model size: ``models`` have .name, .layers and .params();
    ``gpu_time(m)`` is the step's GPU time; one colour per launch cost, solid unfused, dashed fused."""
    model_size = [m.params() / 1e9 for m in models]
    share = {(us, per_layer): [decode_step(m.layers, per_layer, final, gpu_time(m), us * 1e-6).overhead_share
                               for m in models]
             for us in overheads_us for per_layer in (unfused, fused)}

    def draw():
        fig, ax = figure(figsize=(6.4, 3.6))
        for color, us in zip(("C0", "C1", "C3"), overheads_us):
            for per_layer, style in ((unfused, "-"), (fused, "--")):
                label = f"{us} µs, {fusion_label(per_layer, unfused)}"
                ax.plot(model_size, share[us, per_layer], style, color=color, marker="o", label=label)
        ax.set_xscale("log")
        ax.set_xticks(model_size, [f"{m.name}\n{x:.2f}B" for m, x in zip(models, model_size)], fontsize=8)
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
    top, bottom = share[max(overheads_us), unfused], share[min(overheads_us), fused]
    return Figure(
        draw,
        alt=_("Launch share of a decode step (serial) against model parameters ({b0:.2f}B to {b1:.2f}B), one "
              "colour per launch cost ({costs} µs), solid unfused and dashed fused. The highest curve ({hi} µs, "
              "unfused) goes from {top0:.0%} for {smallest} to {top1:.0%} for {largest}, the lowest ({lo} µs, "
              "fused) from {bottom0:.0%} to {bottom1:.0%}.",
              b0=model_size[0], b1=model_size[-1], costs=Listing(overheads_us), hi=max(overheads_us),
              top0=top[0], top1=top[-1], smallest=models[0].name, largest=models[-1].name,
              lo=min(overheads_us), bottom0=bottom[0], bottom1=bottom[-1]),
        caption=_("Share of a batch-1 decode step (H100, BF16, ctx = {ctx}, GPU time at its roofline lower bound) "
                  "spent launching kernels one by one from the CPU. Solid: unfused ({unfused} kernels per layer); "
                  "dashed: fused ({fused} per layer).", ctx=ctx, unfused=unfused, fused=fused),
    )
# --8<-- [end:launch_figure]


# --8<-- [start:numpy_tables]
def machine_note():
    """Which machine measured: the numbers below change with it."""
    return _("Wall-clock measurement on the machine that built this page ({machine}, {cores} cores, Python "
             "{python}, NumPy {numpy}): measured again at every build, so the numbers change.",
             machine=platform.machine(), cores=os.cpu_count(), python=platform.python_version(),
             numpy=np.__version__)


def per_call_table(per_call):
    """One row per array length, from {elements: seconds per np.add call}; the cheapest call is the fixed cost."""
    fixed = min(per_call.values())
    return Table([(n, t * 1e6, n / t / 1e9, fixed / t) for n, t in per_call.items()],
                 columns=[_("elements"), _("per call (µs)"), _("throughput (G elements/s)"), _("fixed-cost share")],
                 fmt=[",", ".2f", ".3f", ".1%"])


def split_table(n, pieces, one_call, small_calls):
    """n additions in one call (``one_call`` seconds) and in ``pieces`` calls (``small_calls`` seconds)."""
    return Table([(_("1 call"), n, one_call * 1e6, 1.0),
                  (_("{n} calls", n=pieces), n // pieces, small_calls * 1e6, small_calls / one_call)],
                 columns=[_("how"), _("elements per call"), _("total (µs)"), _("relative to one call")],
                 fmt=[None, ",", ".1f", ".1f"])
# --8<-- [end:numpy_tables]
