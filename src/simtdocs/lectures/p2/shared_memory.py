"""Tables and figure of P2 code 03, shared memory, synchronisation and reduction (docs/p2/shared-memory.md).

Each helper takes what the page's experiment computed and returns the :class:`Table` or
:class:`Figure` the page shows; the numbers the prose quotes are glued by the companion
script (snippets/p2/03_shared_memory_sync_reduction.py), next to the launch.
"""

from __future__ import annotations

import numpy as np

from simtdocs.display import Figure, Table, figure
from simtdocs.i18n import Listing, _


# --8<-- [start:bank_table]
def column_ways(stats):
    """Wavefronts per request of the column read: the kernel's last line using shared memory."""
    c = [ln.counters for ln in stats.lines if ln.counters.shared_requests][-1]
    return c.shared_wavefronts / c.shared_requests  # 4-byte accesses: wavefronts per request = ways


def bank_table(runs):
    """One row per row length of the tile (= the stride of the column read), from {row length: stats}."""
    lane = np.arange(32)
    rows = [(s, s % 32, len(np.unique(lane * s % 32)), column_ways(st)) for s, st in runs.items()]
    return Table(rows, [_("row length = stride (words)"), _("stride mod 32"), _("banks used"),
                        _("ways (wavefronts per request)")], fmt=[None, None, None, ".0f"])
# --8<-- [end:bank_table]


# --8<-- [start:bank_figure]
BANK_MAP = (1, 2, 32, 33)  # the strides drawn


def bank_figure(runs, shown=BANK_MAP):
    """The bank each lane of a warp lands in, one panel per stride of ``shown`` (``runs[s]`` its stats)."""
    lane = np.arange(32)
    ways = {s: column_ways(runs[s]) for s in shown}
    banks_used = {s: len(np.unique(lane * s % 32)) for s in shown}

    def draw():
        from matplotlib.colors import LogNorm

        fig, axes = figure(1, len(shown), figsize=(2.3 * len(shown), 3.2), sharey=True)
        for ax, s in zip(axes, shown):
            bank = lane * s % 32
            hits = np.bincount(bank, minlength=32)
            assert hits.max() == ways[s]  # the picture shows the simulator's count
            ax.scatter(bank, lane, s=14, c=hits[bank], cmap="Blues", norm=LogNorm(0.25, 32), edgecolors="k",
                       linewidths=0.3)
            ax.set_xlim(-1, 32)
            ax.set_ylim(-1, 32)
            ax.set_xticks([0, 8, 16, 24, 31])
            ax.set_title(str(_("stride {s}: {ways:.0f}-way", s=s, ways=ways[s])), fontsize=9)
            ax.set_xlabel("bank")
        axes[0].set_ylabel("lane")
        fig.tight_layout()
        return fig

    used = Listing(_("{banks} ({ways:.0f}-way) for stride {s}", banks=banks_used[s], ways=ways[s], s=s)
                   for s in shown)
    return Figure(
        draw,
        alt=_("Which bank each of a warp's {lanes} lanes lands in, for strides of {strides} words. Banks used: "
              "{used}.", lanes=lane.size, strides=Listing(shown), used=used),
        caption=_("Each dot is the bank (across) one lane (up) reads; the darker, the more lanes crowd into that "
                  "bank. Stride 2 uses half the banks ({w2:.0f}-way); stride 32 puts every lane in bank 0 "
                  "({w32:.0f}-way); one word of padding (stride 33) spreads the 32 lanes over {b33} banks again.",
                  w2=column_ways(runs[2]), w32=column_ways(runs[32]), b33=len(np.unique(lane * 33 % 32))),
    )
# --8<-- [end:bank_figure]


# --8<-- [start:reverse_table]
def reverse_table(runs):
    """One row per version, from {sync: (stats, result correct)}."""
    rows = [(_("present") if sync else _("missing"), _("yes") if ok else _("no"), len(st.races))
            for sync, (st, ok) in runs.items()]
    return Table(rows, ["__syncthreads()", _("correct"), _("races")])
# --8<-- [end:reverse_table]


# --8<-- [start:reduction_table]
def reduction_table(x, runs, device):
    """One row per version, from {version: (stats, sum correct)} of a reduction of x on ``device``."""
    version = {"v1": _("v1 interleaved (divergent)"), "v2": _("v2 strided index (bank conflicts)"),
               "v3": _("v3 sequential addressing"), "v4": _("v4 first add during load"),
               "v5": _("v5 last warp with shuffles")}
    read_input_s = x.nbytes / device.memory_bandwidth  # the floor: read every input byte once
    rows = []
    for name, (st, ok) in runs.items():
        t = st.estimate_time()
        rows.append((version[name], st.blocks, st.warp_instructions, st.divergent_branches, st.shared_ways,
                     t.issue_s * 1e9, t.issue_s / read_input_s,
                     _("instruction issue") if t.issue_s > read_input_s else _("bandwidth"),
                     _("yes") if ok else _("no")))
    return Table(rows, [_("version"), _("blocks"), _("warp instructions"), _("divergent branches"),
                        _("shared wavefronts per request"), _("estimated issue time (ns)"),
                        _("issue time / time to read the input"), _("bound by"), _("correct")],
                 fmt=[None, ",", ",", ",", ".2f", ",.0f", ".2f", None, None])
# --8<-- [end:reduction_table]


# --8<-- [start:shuffle_table]
def shuffle_table(trace, deltas=(16, 8, 4, 2, 1)):
    """Lanes 0-3 and 31 after each shfl_down round: ``trace`` has one row per round, the first the start."""
    rows = [(_("start") if k == 0 else f"shfl_down {d}", *trace[k, :4].astype(int), int(trace[k, 31]))
            for k, d in enumerate((0, *deltas))]
    return Table(rows, [_("step"), "lane 0", "lane 1", "lane 2", "lane 3", "lane 31"])
# --8<-- [end:shuffle_table]
