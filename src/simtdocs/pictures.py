"""Pictures of one warp's memory access: ``draw_access(record)`` and its alt text.

A record comes from ``launch(..., trace=(block, warp))`` (see :mod:`simtdocs.trace`).

* Global memory: the 32 lanes along the top; below them the 32-byte sectors the warp
  instruction moves, side by side (their numbers underneath, so a gap in the numbers is a
  gap in memory); a line from every active lane to the bytes it asked for. In each sector
  the bytes some lane asked for are filled; the bytes moved that no lane asked for are
  hatched: that is the waste coalescing is about.
* Shared memory: the lanes along the top; below them the 32 banks, and under each bank
  one cell per word it delivers, one row per wavefront. A line from every lane to its
  word. Words served in an extra wavefront (another word of the same bank was asked for
  in the same phase: a bank conflict) and the banks that hold them are drawn in the
  conflict colour.

Labels are ``_()`` strings of the ``simtdocs`` catalog, so a ``Figure(draw=...)`` drawn per
language reads in the page's language. ``access_alt(record)`` is the matching alt text,
its numbers taken from the record, and ``access_caption(record)`` a caption saying how to
read the picture: ``Figure(lambda: draw_access(r), alt=access_alt(r), caption=access_caption(r))``.
"""

from __future__ import annotations

from .i18n import _, _n
from .memory import BANKS, SECTOR_BYTES
from .threads import WARP_SIZE
from .trace import WORD_BYTES, AccessRecord

USED, WASTED, LINE, CONFLICT, LANE = "#1f77b4", "#bdbdbd", "#1f77b4", "#d62728", "#444444"


def _kind(record: AccessRecord):
    return {"load": _("load"), "store": _("store"), "atomic": _("atomic")}[record.kind]


def _code(source: str) -> str:
    """A source line without its trailing comment."""
    import io
    import tokenize

    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                return source[:token.start[1]].rstrip()
    except (tokenize.TokenError, SyntaxError):
        pass
    return source


def access_title(record: AccessRecord):
    """The first line of the picture: the memory space, the kind of access and the kernel's source line."""
    source = _code(record.site.source) or record.array
    if record.space == "global":
        return _("global memory {kind}: {source}", kind=_kind(record), source=source)
    return _("shared memory {kind}: {source}", kind=_kind(record), source=source)


def _verdict(record: AccessRecord):
    if record.bank_conflicts == 0:
        return _("no bank conflict")
    if record.ways == int(record.ways):
        return _("{ways}-way bank conflict", ways=int(record.ways))
    return _n("{n} extra wavefront from bank conflicts", "{n} extra wavefronts from bank conflicts",
              n=record.bank_conflicts)


def access_summary(record: AccessRecord):
    """The second line of the picture: the counts."""
    lanes = _n("{n} lane", "{n} lanes", n=len(record.lanes))
    if record.space == "global":
        return _("{lanes} · {sectors} · {moved} bytes moved for {requested} requested · {wasted} moved, not requested",
                 lanes=lanes, sectors=_n("{n} sector", "{n} sectors", n=len(record.sectors)),
                 moved=record.moved_bytes, requested=record.requested_bytes, wasted=record.wasted_bytes)
    return _("{lanes} · {wavefronts} (ideal {ideal}) · {verdict}", lanes=lanes,
             wavefronts=_n("{n} wavefront", "{n} wavefronts", n=len(record.wavefronts)),
             ideal=record.ideal_wavefronts, verdict=_verdict(record))


def _fullest_bank(record: AccessRecord) -> tuple[int, int]:
    """(distinct words, bank) of the bank asked for the most distinct words in one phase."""
    per_phase = WARP_SIZE if record.lane_bytes <= WORD_BYTES else 4 * WARP_SIZE // record.lane_bytes
    words: dict[tuple[int, int], set] = {}
    for i, lane in enumerate(record.lanes):
        for w in record.words(i):
            words.setdefault((lane // per_phase, w % BANKS), set()).add(w)
    (_phase, bank), most = max(words.items(), key=lambda kv: (len(kv[1]), -kv[0][1]))
    return len(most), bank


def access_alt(record: AccessRecord):
    """What the picture of ``record`` shows, in words, for readers who cannot see it."""
    lanes = _n("{n} active lane", "{n} active lanes", n=len(record.lanes))
    if record.space == "global":
        return _("One warp's {kind} of {array} in global memory: {requested} bytes requested by "
                 "{lanes}, at addresses in {sectors} of 32 bytes; {moved} bytes move, {wasted} of them not requested.",
                 kind=_kind(record), array=record.array, requested=record.requested_bytes,
                 lanes=lanes, sectors=_n("{n} sector", "{n} sectors", n=len(record.sectors)),
                 moved=record.moved_bytes, wasted=record.wasted_bytes)
    most, bank = _fullest_bank(record)
    banks = len({w % BANKS for i in range(len(record.lanes)) for w in record.words(i)})
    wavefronts = _n("{n} wavefront", "{n} wavefronts", n=len(record.wavefronts))
    fields = dict(kind=_kind(record), array=record.array, lanes=lanes,
                  banks=_n("{n} bank", "{n} banks", n=banks), wavefronts=wavefronts)
    if record.bank_conflicts == 0:
        return _("One warp's {kind} of {array} in shared memory: {lanes} spread over {banks}, no "
                 "bank asked for two different words, so it takes {wavefronts}, the fewest possible.", **fields)
    return _("One warp's {kind} of {array} in shared memory: {lanes} spread over {banks}; bank "
             "{bank} is asked for {most} different words, so the access takes {wavefronts} where {ideal} would do.",
             bank=bank, most=most, ideal=record.ideal_wavefronts, **fields)


def access_caption(record: AccessRecord):
    """How to read the picture of ``record``: a figure caption."""
    block = "({}, {}, {})".format(*record.block)
    if record.space == "global":
        return _("Top: the 32 lanes of warp {warp} of block {block} (hollow: inactive). Bottom: the 32-byte sectors "
                 "this instruction moves, with their numbers; filled bytes were asked for by a lane, hatched bytes "
                 "moved for nothing.", warp=record.warp, block=block)
    return _("Top: the 32 lanes of warp {warp} of block {block} (hollow: inactive). Middle: the 32 banks. Below each "
             "bank, one cell per word it delivers, one row per wavefront; red marks the words that wait for an "
             "extra wavefront (a bank conflict).", warp=record.warp, block=block)


def draw_access(record: AccessRecord, ax=None):
    """A matplotlib figure of one traced warp access (see the module's notes); drawn into
    ``ax`` when given, else into a new figure. Returns the figure."""
    if not isinstance(record, AccessRecord):
        raise TypeError(f"draw_access takes one record of stats.trace (launch(..., trace=(block, warp))), "
                        f"got {type(record).__name__}")
    if ax is None:
        from .display import figure

        fig, ax = figure(figsize=(7.5, 3.0))
        new = True
    else:
        fig, new = ax.figure, False
    low, high = (_draw_global if record.space == "global" else _draw_shared)(record, ax)
    ax.set_ylim(low, high)
    ax.set_title(f"{access_title(record)}\n{access_summary(record)}", fontsize=10.5, loc="left")
    ax.axis("off")
    if new:  # half an inch per unit of height (a lane square is 0.4 high), plus title and legend
        fig.set_size_inches(7.5, 1.0 + 0.5 * (high - low))
    return fig


def _lanes(ax, record: AccessRecord, y: float) -> None:
    """The 32 lanes of the warp as a row of squares at height ``y``; inactive lanes hollow."""
    from matplotlib.patches import Rectangle

    active = set(record.lanes)
    for lane in range(WARP_SIZE):
        on = lane in active
        ax.add_patch(Rectangle((lane + 0.1, y), 0.8, 0.4, facecolor=LANE if on else "white", edgecolor=LANE,
                               lw=0.6, gid=f"lane-{lane}"))
        ax.text(lane + 0.5, y + 0.2, str(lane), ha="center", va="center", fontsize=6.5,
                color="white" if on else LANE)
    ax.text(-0.4, y + 0.2, str(_("lane")), ha="right", va="center", fontsize=9.5)


def _draw_global(record: AccessRecord, ax) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, Rectangle

    lane_y, top = 2.6, 1.0
    sectors = record.sectors
    slot = min(8.0, WARP_SIZE / len(sectors))
    width = slot * 0.9
    x0 = (WARP_SIZE - slot * len(sectors)) / 2 + (slot - width) / 2
    left = {s: x0 + k * slot for k, s in enumerate(sectors)}
    asked = {a + k for a in record.addresses for k in range(record.lane_bytes)}
    cell = record.itemsize
    for s in sectors:
        for k in range(0, SECTOR_BYTES, cell):
            used = any(SECTOR_BYTES * s + k + j in asked for j in range(cell))
            ax.add_patch(Rectangle((left[s] + width * k / SECTOR_BYTES, 0), width * cell / SECTOR_BYTES, top,
                                   facecolor=USED if used else WASTED, alpha=0.85 if used else 0.5,
                                   hatch=None if used else "////", edgecolor="white", lw=0.3,
                                   gid=f"{'used' if used else 'wasted'}-{s}-{k}"))
        ax.add_patch(Rectangle((left[s], 0), width, top, fill=False, edgecolor="black", lw=1.0, gid=f"sector-{s}"))
        many = len(sectors) > 12
        ax.text(left[s] + width / 2, -0.08, str(s), ha="center", va="top", fontsize=6.5 if many else 8.5,
                rotation=90 if many else 0)
    for lane, a in zip(record.lanes, record.addresses):
        s = a // SECTOR_BYTES
        x = left[s] + width * (a % SECTOR_BYTES + record.lane_bytes / 2) / SECTOR_BYTES
        ax.plot([lane + 0.5, x], [lane_y, top], color=LINE, lw=0.7, alpha=0.8, gid=f"to-{lane}")
    _lanes(ax, record, lane_y)
    ax.text(-0.4, top / 2, str(_("sector")), ha="right", va="center", fontsize=9.5)
    ax.set_xlim(-4.0, WARP_SIZE + 0.2)
    ax.legend(handles=[Patch(facecolor=USED, alpha=0.85, label=str(_("bytes a lane asked for"))),
                       Patch(facecolor=WASTED, alpha=0.5, hatch="////", label=str(_("moved, not asked for"))),
                       Line2D([], [], color=LINE, lw=0.7, label=str(_("lane → its bytes")))],
              loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, fontsize=8.5, frameon=False)
    return (-0.9 if len(sectors) > 12 else -0.6), lane_y + 0.5


def _draw_shared(record: AccessRecord, ax) -> None:
    from matplotlib.patches import Patch, Rectangle

    lane_y, head, area = 2.9, 2.3, 2.0
    per_phase = WARP_SIZE if record.lane_bytes <= WORD_BYTES else 4 * WARP_SIZE // record.lane_bytes
    phase_of = [min(g) // per_phase for g in record.wavefronts]
    first_of_phase = {}
    for j, p in enumerate(phase_of):
        first_of_phase.setdefault(p, j)
    rows = len(record.wavefronts)
    h = min(0.45, area / rows)
    cells: dict[tuple[int, int], int] = {}  # (wavefront, bank) -> word
    for i in range(len(record.lanes)):
        for w, j in zip(record.words(i), record.served[i]):
            cells[(j, w % BANKS)] = w
    extra = {(j, bank) for (j, bank) in cells if j != first_of_phase[phase_of[j]]}
    hot = {bank for _j, bank in extra}
    # A word's number fits its cell when the rows are tall enough and it has at most 3 digits.
    numbered = h >= 0.3 and max(cells.values(), default=0) < 1000
    for (j, bank), w in sorted(cells.items()):
        y = head - 0.1 - (j + 1) * h
        ax.add_patch(Rectangle((bank + 0.1, y), 0.8, h * 0.9, facecolor=CONFLICT if (j, bank) in extra else USED,
                               alpha=0.8, edgecolor="none", gid=f"cell-{j}-{bank}"))
        if numbered:
            ax.text(bank + 0.5, y + h * 0.45, str(w), ha="center", va="center", fontsize=5.5, color="white")
    for bank in range(BANKS):
        ax.add_patch(Rectangle((bank + 0.1, head), 0.8, 0.35, facecolor="#fde0dd" if bank in hot else "white",
                               edgecolor=CONFLICT if bank in hot else "black", lw=1.0 if bank in hot else 0.6,
                               gid=f"bank-{bank}"))
        ax.text(bank + 0.5, head + 0.175, str(bank), ha="center", va="center", fontsize=6.5)
    for i, lane in enumerate(record.lanes):
        for w, j in zip(record.words(i), record.served[i]):
            bank = w % BANKS
            ax.plot([lane + 0.5, bank + 0.5], [lane_y, head + 0.35],
                    color=CONFLICT if (j, bank) in extra else LINE, lw=0.7, alpha=0.8, gid=f"to-{lane}-{w}")
    _lanes(ax, record, lane_y)
    ax.text(-0.4, head + 0.175, str(_("bank")), ha="right", va="center", fontsize=9.5)
    ax.text(-1.4 if rows > 1 else -0.4, head - 0.1 - min(rows, 2) * h / 2, str(_("wavefront")), ha="right",
            va="center", fontsize=9.5)
    if rows > 1:  # the first and the last wavefront's numbers
        for j in (0, rows - 1):
            ax.text(-0.1, head - 0.1 - j * h - h / 2, str(j + 1), ha="right", va="center", fontsize=7)
    ax.set_xlim(-5.2, WARP_SIZE + 0.2)
    first = (_("word (its number) served in the first wavefront of its phase") if numbered else
             _("word served in the first wavefront of its phase"))
    ax.legend(handles=[Patch(facecolor=USED, alpha=0.8, label=str(first)),
                       Patch(facecolor=CONFLICT, alpha=0.8,
                             label=str(_("another word of a busy bank: an extra wavefront")))],
              loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=1, fontsize=8.5, frameon=False)
    return head - 0.2 - rows * h, lane_y + 0.5
