"""Tables of P2 code 09, writing it the CUDA way (docs/p2/cuda-way.md).

The helper takes what the page's experiment computed and returns the :class:`Table` the page
shows; the numbers the prose quotes are glued by the companion script
(snippets/p2/09_cuda_way.py), next to the launch.
"""

from __future__ import annotations

from simtdocs.display import Table
from simtdocs.i18n import _

# --8<-- [start:twin_table]
ROWS = ("warp_instructions", "branches", "divergent_branches", "requests", "sectors")


def twin_table(per_thread, by_hand):
    """The counters of two launches of one kernel, side by side: the per-thread kernel's
    (``@cuda.jit``) and its twin's written with masks (``blk``)."""
    import simtdocs

    labels = {**simtdocs.LABELS, "branches": _("branches")}
    rows = [(labels[key], getattr(per_thread.totals, key), getattr(by_hand.totals, key)) for key in ROWS]
    rows += [(labels[key], getattr(per_thread, key), getattr(by_hand, key))
             for key in ("simt_efficiency", "coalescing_efficiency")]
    rows = [(name, f"{a:.1%}", f"{b:.1%}") if isinstance(a, float) else (name, a, b) for name, a, b in rows]
    return Table(rows, [_("counter"), _("per thread (`@cuda.jit`)"), _("with masks (`blk`)")], align="lrr")
# --8<-- [end:twin_table]
