"""A score card: what a checked kernel spent, beside what the puzzle's solution spends.

Like the per-thread table of GPU Puzzles: global and shared reads and writes per thread,
then the launch's sectors, shared wavefronts, divergent branches, SIMT efficiency, barriers
and warp instructions, and the counter of each of the puzzle's budgets, in the page's
language. The per-thread counts are those of the
busiest thread of warp 0 in block 0 (read from that warp's trace, lane by lane); the other
rows count the whole launch.
"""

from __future__ import annotations

from dataclasses import dataclass

from simtdocs.i18n import Msg, _

#: (space, kind) of a traced access → the row it counts in.
PER_THREAD = {
    ("global", "load"): _("global reads per thread"),
    ("global", "store"): _("global writes per thread"),
    ("global", "atomic"): _("global atomics per thread"),
    ("shared", "load"): _("shared reads per thread"),
    ("shared", "store"): _("shared writes per thread"),
    ("shared", "atomic"): _("shared atomics per thread"),
}
#: Rows shown even when both kernels count 0 there.
ALWAYS = {("global", "load"), ("global", "store"), ("shared", "load"), ("shared", "store")}


def per_thread(trace) -> dict[tuple[str, str], int]:
    """The most accesses of each (space, kind) one lane of the traced warp made."""
    counts: dict[tuple[str, str], dict[int, int]] = {}
    for record in trace or ():
        lanes = counts.setdefault((record.space, record.kind), {})
        for lane in record.lanes:
            lanes[lane] = lanes.get(lane, 0) + 1
    return {key: max(lanes.values()) for key, lanes in counts.items() if lanes}


def _dots(stats) -> tuple[int, int]:
    """(FLOPs, MMA instructions) of a Triton launch's ``tl.dot`` lines (``stats.dots``); 0 elsewhere."""
    dots = getattr(stats, "__dict__", {}).get("dots") or {}
    return sum(d.flops for d in dots.values()), sum(d.mma for d in dots.values())


def _int(x) -> str:
    return format(int(x), ",")


def _pct(x: float) -> str:
    return f"{x:.0%}"


@dataclass
class ScoreCard:
    """Rows of (label, the kernel's value, the solution's value), as text."""

    rows: list[tuple[Msg, str, str]]

    @classmethod
    def of(cls, puzzle, stats, reference) -> "ScoreCard":
        mine, theirs = per_thread(stats.trace), per_thread(reference.trace)
        rows = []
        for key, label in PER_THREAD.items():
            a, b = mine.get(key, 0), theirs.get(key, 0)
            if key in ALWAYS or a or b:
                rows.append((label, _int(a), _int(b)))
        s, r = stats.totals, reference.totals
        rows.append((_("sectors"), _int(s.sectors), _int(r.sectors)))
        from .core import LABELS, Budget, Coalescing

        if any(isinstance(rule, Coalescing) for rule in puzzle.rules):
            rows.append((_("coalescing efficiency"), _pct(s.coalescing_efficiency), _pct(r.coalescing_efficiency)))
        if s.shared_requests or r.shared_requests:
            rows.append((_("shared wavefronts"), _int(s.shared_wavefronts), _int(r.shared_wavefronts)))
            rows.append((_("bank conflicts"), _int(s.shared_bank_conflicts), _int(r.shared_bank_conflicts)))
        if s.atomic_conflicts or r.atomic_conflicts:
            rows.append((_("atomic conflicts"), _int(s.atomic_conflicts), _int(r.atomic_conflicts)))
        if s.shuffles or r.shuffles or s.votes or r.votes:
            rows.append((_("shuffles and votes"), _int(s.shuffles + s.votes), _int(r.shuffles + r.votes)))
        rows.append((_("divergent branches"), _int(s.divergent_branches), _int(r.divergent_branches)))
        rows.append((_("SIMT efficiency"), _pct(s.simt_efficiency), _pct(r.simt_efficiency)))
        rows.append((_("barriers"), _int(s.barriers), _int(r.barriers)))
        rows.append((_("warp instructions"), _int(s.warp_instructions), _int(r.warp_instructions)))
        mine_dots, their_dots = _dots(stats), _dots(reference)
        if mine_dots[0] or their_dots[0]:  # a Triton kernel's tl.dot: stats.dots, which no engine counter holds
            rows.append((_("dot FLOPs"), _int(mine_dots[0]), _int(their_dots[0])))
            rows.append((_("MMA instructions"), _int(mine_dots[1]), _int(their_dots[1])))
        shown = {label.msgid for label, _a, _b in rows}
        for rule in puzzle.rules:  # a budget's own counter, if not shown yet
            if isinstance(rule, Budget) and LABELS[rule.counter].msgid not in shown:
                rows.append((LABELS[rule.counter], _int(getattr(s, rule.counter)), _int(getattr(r, rule.counter))))
                shown.add(LABELS[rule.counter].msgid)
        return cls(rows)

    def render(self, lang: str) -> str:
        """A Markdown table in ``lang``, with a note on what 'per thread' counts."""
        head = f"| {_('score card').pick(lang)} | {_('your kernel').pick(lang)} | {_('the solution').pick(lang)} |"
        out = [head, "|:--|--:|--:|"]
        out += [f"| {label.pick(lang)} | {a} | {b} |" for label, a, b in self.rows]
        note = _("Per thread: the busiest thread of warp 0 in block 0; the other rows count the whole launch.")
        return "\n".join(out) + "\n\n" + note.pick(lang)

    def text(self, lang: str) -> str:
        """The same as plain text, for a terminal."""
        rows = [(_("score card").pick(lang), _("your kernel").pick(lang), _("the solution").pick(lang))]
        rows += [(label.pick(lang), a, b) for label, a, b in self.rows]
        w = [max(_width(r[k]) for r in rows) for k in range(3)]
        return "\n".join(r[0] + " " * (w[0] - _width(r[0])) + "  " + " " * (w[1] - _width(r[1])) + r[1]
                         + "  " + " " * (w[2] - _width(r[2])) + r[2] for r in rows)


def _width(s: str) -> int:
    """Columns a string takes in a terminal: CJK characters take two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)
