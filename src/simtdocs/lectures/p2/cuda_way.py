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


def twin_table(per_thread, by_hand, in_c):
    """The counters of three launches of one kernel, side by side: the per-thread kernel's
    (``@cuda.jit``), its twin's written with masks (``blk``) and the CUDA C's (``RawModule``)."""
    import simtdocs

    labels = {**simtdocs.LABELS, "branches": _("branches")}
    runs = (per_thread, by_hand, in_c)
    rows = [(labels[key], *(getattr(st.totals, key) for st in runs)) for key in ROWS]
    rows += [(labels[key], *(f"{getattr(st, key):.1%}" for st in runs))
             for key in ("simt_efficiency", "coalescing_efficiency")]
    return Table(rows, [_("counter"), _("per thread (`@cuda.jit`)"), _("with masks (`blk`)"),
                        _("CUDA C (`RawModule`)")], align="lrrr")
# --8<-- [end:twin_table]
