"""Tables of the page "The simulator and a real GPU" (docs/silicon.md, snippets/silicon/).

A published figure is a :class:`Published`: where it was read (a :class:`Source`, pinned to a
commit or a date), the kernel, the GPU, the Nsight Compute metric and the value the source
reports. The companion script runs the same kernel in simtdocs and hands each figure its
simulated value; :func:`comparison_table` sets the two side by side.
"""

from __future__ import annotations

# --8<-- [start:records]
from dataclasses import dataclass

from simtdocs.display import Table
from simtdocs.i18n import _


@dataclass(frozen=True)
class Source:
    """A public source of measured figures, pinned so that it cannot change under us."""

    key: str  # a letter the tables and the prose use
    name: str  # repository, or forum thread
    url: str  # the page or the commit's files that were read
    pin: str  # commit or date
    gpu: str  # the GPU the figures were measured on, as the source names it
    read: str  # the files or posts the figures come from


@dataclass(frozen=True)
class Published:
    """One figure of a source, and what simtdocs computes for the same kernel."""

    source: Source
    kernel: object  # a label, _("…")
    metric: str  # the Nsight Compute metric (or the source's own formula)
    published: float  # the value the source reports
    simulated: float  # the value simtdocs computed
    gpu: object = None  # when the source measured on several GPUs: the one of this figure

    @property
    def on(self):
        return self.gpu or self.source.gpu

    @property
    def exact(self) -> bool:
        return self.simulated == self.published
# --8<-- [end:records]


def _value(x) -> str:
    """Whole numbers with thousands separators, others with two decimals."""
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,.2f}"


# --8<-- [start:comparison_table]
def comparison_table(figures):
    """One row per published figure: where it comes from, what simtdocs computes, the difference."""
    rows = []
    for i, f in enumerate(figures, 1):
        if f.exact:
            diff = _("equal")
        else:
            d = f.simulated - f.published
            sign = "+" if d > 0 else "−"
            r = abs(d / f.published)
            diff = f"{sign}{_value(abs(d))} ({sign}{r:.1%})" if r >= 0.001 else f"{sign}{_value(abs(d))} ({sign}{r:.3%})"
        source = f"[{f.source.key}]({f.source.url})"
        metric = (f"<code>{f.metric.replace('_', '_<wbr>').replace('.', '.<wbr>')}</code>"
                  if isinstance(f.metric, str) else f.metric)  # a label: the source's own formula
        what = _("{kernel} · {gpu}<br>{metric}", kernel=f.kernel, gpu=f.on, metric=metric)
        rows.append((i, what, _value(f.published), _value(f.simulated), diff, source))
    columns = ["#", _("kernel · GPU, metric"), _("published"), _("simtdocs"), _("difference"), _("source")]
    return Table(rows, columns, align="rlrrrc")
# --8<-- [end:comparison_table]


# --8<-- [start:dialect_table]
def dialect_table(pairs):
    """A kernel written with ``blk`` and the same kernel in the CUDA dialect: their counts side by side."""
    keys = ("requests", "sectors", "shared_wavefronts", "shared_bank_conflicts")
    rows = []
    for label, by_blk, by_cuda in pairs:
        rows.append((label, "blk", *(getattr(by_blk, k) for k in keys)))
        rows.append((label, "simtdocs.cuda", *(getattr(by_cuda, k) for k in keys)))
    columns = [_("kernel"), _("written with"), _("global requests"), _("sectors"), _("shared wavefronts"),
               _("bank conflicts")]
    return Table(rows, columns, align="llrrrr")
# --8<-- [end:dialect_table]


# --8<-- [start:sources_table]
def sources_table(sources):
    """The sources read, each with its pin and the GPU it names."""
    rows = [(s.key, f"[{s.name}]({s.url})", s.pin, s.gpu, s.read) for s in sources]
    return Table(rows, [_("source"), _("repository or thread"), _("pinned to"), "GPU", _("what was read")], align="lllll")
# --8<-- [end:sources_table]
