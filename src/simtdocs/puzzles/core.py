"""A puzzle: a task, a kernel skeleton to edit, and a checker that runs the simulator.

``Puzzle.check(kernel)`` launches ``kernel`` on fresh inputs with every sanitizer check
on, then judges in the order a reader would fix things: the simulator stopped the kernel
(memcheck, synccheck, initcheck), a wrong value, a race, then the puzzle's own
:class:`Rule` s (coalescing, bank conflicts, divergence, a counter budget).
"""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass
from typing import Callable

import numpy as np

from simtdocs import launch
from simtdocs.counters import LABELS
from simtdocs.diagnostics import InitcheckError, MemcheckError, SimulatorError, SynccheckError
from simtdocs.i18n import Listing, Msg, _, _n, current_language

from . import verdict as V
from .verdict import Lines, Verdict

KINDS = {"write": _("write a kernel"), "fix": _("fix a kernel"), "target": _("meet a target")}


def percent(x: float) -> str:
    return f"{x:.0%}"


def ways(x: float) -> str:
    return str(int(round(x))) if abs(x - round(x)) < 1e-9 else f"{x:.1f}"


class Rule:
    """One requirement on the counters. ``judge`` returns (met, what to say, the worst
    source line or None); a rule about one warp's access (``pictured``) gets a picture
    of that access in the verdict when it fails."""

    pictured = False

    def judge(self, stats, lines: Lines) -> tuple[bool, Msg, object]:
        raise NotImplementedError

    def describe(self) -> Msg:
        raise NotImplementedError


@dataclass(frozen=True)
class Coalescing(Rule):
    """Every global load and store line moves at least ``at_least`` useful bytes per byte."""

    at_least: float = 0.9
    pictured = True

    def describe(self):
        return _("coalescing ≥ {target} on every line", target=percent(self.at_least))

    def judge(self, stats, lines):
        used = [ln for ln in stats.lines if ln.counters.requests]
        worst = min(used, key=lambda ln: ln.counters.coalescing_efficiency)
        eff = worst.counters.coalescing_efficiency
        if eff < self.at_least:
            return False, _("coalescing {eff} where ≥ {target} is asked, on {line}", eff=percent(eff),
                            target=percent(self.at_least), line=lines.of(worst.site)), worst.site
        return True, _("coalescing {eff}", eff=percent(stats.coalescing_efficiency)), None


@dataclass(frozen=True)
class NoBankConflict(Rule):
    """Every shared-memory line takes the fewest wavefronts its accesses could."""

    pictured = True

    def describe(self):
        return _("no bank conflict")

    def judge(self, stats, lines):
        used = [ln for ln in stats.lines if ln.counters.shared_requests]
        worst = max(used, key=lambda ln: ln.counters.shared_ways)
        if worst.counters.shared_bank_conflicts:
            return False, _("{ways}-way bank conflict on {line}", ways=ways(worst.counters.shared_ways),
                            line=lines.of(worst.site)), worst.site
        return True, _("no bank conflict"), None


@dataclass(frozen=True)
class Divergence(Rule):
    """At most ``allowed`` divergent branches in the whole launch."""

    allowed: int = 0

    def describe(self):
        return _("at most {k} divergent branches", k=self.allowed)

    def judge(self, stats, lines):
        n = stats.divergent_branches
        if n > self.allowed:
            worst = max(stats.lines, key=lambda ln: ln.counters.divergent_branches)
            return False, _("{count} where {allowed} are allowed, on {line}",
                            count=_n("{n} divergent branch", "{n} divergent branches", n=n),
                            allowed=self.allowed, line=lines.of(worst.site)), worst.site
        return True, _n("{n} divergent branch", "{n} divergent branches", n=n), None


@dataclass(frozen=True)
class Budget(Rule):
    """A counter of the launch (``sectors``, ``shared_wavefronts``, ``warp_instructions``)
    may not exceed ``limit``."""

    counter: str
    limit: int

    def describe(self):
        return _("{counter} ≤ {limit}", counter=LABELS[self.counter], limit=format(self.limit, ","))

    def judge(self, stats, lines):
        value = getattr(stats, self.counter)
        label = LABELS[self.counter]
        if value > self.limit:
            worst = max(stats.lines, key=lambda ln: getattr(ln.counters, self.counter))
            return False, _("{counter}: {value} where at most {limit} are allowed; {top} of them on {line}",
                            counter=label, value=format(value, ","), limit=format(self.limit, ","), line=lines.of(worst.site),
                            top=format(getattr(worst.counters, self.counter), ",")), worst.site
        return True, _("{counter}: {value} (budget {limit})", counter=label, value=format(value, ","),
                       limit=format(self.limit, ",")), None


@dataclass
class Case:
    """The inputs of one run: the kernel's arguments and the expected output arrays
    (argument position → array)."""

    args: tuple
    expected: dict[int, np.ndarray]


@dataclass(frozen=True)
class Puzzle:
    """One kernel puzzle: what to do, a skeleton to edit, its inputs and a checker."""

    name: str
    lecture: str  # "p2" or "exec_model": the lecture whose page and notebook carry it
    kind: str  # "write", "fix" or "target" (see KINDS)
    title: Msg
    statement: Msg
    hint: Msg
    skeleton: Callable
    solution: Callable
    setup: Callable[[], Case]  # fresh inputs for every run
    grid: tuple
    block: tuple
    rules: tuple[Rule, ...] = ()
    tolerance: float = 1e-4  # relative and absolute, for floating-point outputs

    def inputs(self) -> Case:
        return self.setup()

    def argument_names(self) -> list[str]:
        return list(inspect.signature(self.solution).parameters)[1:]

    def check(self, kernel: Callable) -> Verdict:
        """Run ``kernel`` on this puzzle's launch and say whether it does the task."""
        case = self.setup()
        lines = Lines(kernel)
        try:
            stats = launch(kernel, grid=self.grid, block=self.block, args=case.args)
        except MemcheckError as exc:
            return Verdict(False, V.memcheck(exc, lines), detail=lines.renumber(str(exc)))
        except SynccheckError as exc:
            return Verdict(False, V.synccheck(exc, lines), detail=lines.renumber(str(exc)))
        except InitcheckError as exc:
            return Verdict(False, V.initcheck(exc, lines), detail=lines.renumber(str(exc)))
        except SimulatorError as exc:
            return Verdict(False, _("the simulator stopped the kernel"), detail=lines.renumber(str(exc)))
        names = self.argument_names()
        checked = 0
        for index, want in case.expected.items():
            got = np.asarray(case.args[index])
            wrong = self._wrong(got, want)
            if wrong.any():
                first = int(np.flatnonzero(wrong)[0])
                return Verdict(False, _(
                    "wrong value at element {where} of {array}: expected {expected}, got {got} "
                    "({bad} of its {n} elements are wrong)", where=V.where(first, want.shape), array=names[index],
                    expected=V.number(want.reshape(-1)[first]), got=V.number(got.reshape(-1)[first]),
                    bad=format(int(wrong.sum()), ","), n=format(want.size, ",")), stats=stats)
            checked += want.size
        if stats.races:
            return Verdict(False, V.race(stats.races[0], len(stats.races), lines), stats=stats)
        said = [_("all {n} values right", n=format(checked, ","))]
        for rule in self.rules:
            ok, msg, site = rule.judge(stats, lines)
            if not ok:
                figure = self._picture(kernel, site, rule) if rule.pictured else None
                return Verdict(False, msg, stats=stats, figure=figure)
            said.append(msg)
        return Verdict(True, _("passed: {what}", what=Listing(said)), stats=stats)

    def _picture(self, kernel, site, rule):
        """The worst execution of ``site`` by warp 0 of block 0, drawn lane by lane."""
        from simtdocs.docs.display import Figure
        from simtdocs.pictures import access_alt, access_caption, draw_access

        stats = launch(kernel, grid=self.grid, block=self.block, args=self.setup().args, trace=(0, 0))
        records = [r for r in stats.trace if (r.site.filename, r.site.lineno) == (site.filename, site.lineno)]
        if isinstance(rule, Coalescing):
            records = [r for r in records if r.space == "global"]
            worst = min(records, key=lambda r: r.coalescing_efficiency, default=None)
        else:
            records = [r for r in records if r.space == "shared"]
            worst = max(records, key=lambda r: r.ways, default=None)
        if worst is None:
            return None
        return Figure(lambda: draw_access(worst), alt=access_alt(worst), caption=access_caption(worst))

    def _wrong(self, got: np.ndarray, want: np.ndarray) -> np.ndarray:
        if got.shape != want.shape:
            raise ValueError(f"{self.name}: output of shape {got.shape}, expected {want.shape}")
        if want.dtype.kind == "f":
            return ~np.isclose(got, want, rtol=self.tolerance, atol=self.tolerance, equal_nan=True)
        return got != want

    # -- what the page and the notebook show -------------------------------------------

    def source(self, which: str = "skeleton") -> str:
        """The source of the skeleton or the solution, as the reader would type it: the
        solution under the skeleton's name, so that it replaces it in the same cell."""
        text = textwrap.dedent(inspect.getsource(getattr(self, which)))
        own, wanted = getattr(self, which).__name__, self.skeleton.__name__
        return text.replace(f"def {own}(", f"def {wanted}(", 1)

    def launch_text(self) -> Msg:
        """'grid (4,), block (256,); kernel(blk, a, out, n)' with the arguments' shapes."""
        case = self.setup()
        parts = []
        for name, arg in zip(self.argument_names(), case.args):
            if isinstance(arg, np.ndarray):
                dims = "×".join(str(d) for d in arg.shape)
                parts.append(f"`{name}`: {arg.dtype}[{dims}]")
            else:
                parts.append(f"`{name}` = {arg}")
        return _("launch with grid {grid} and block {block}; arguments {args}", grid=_dims(self.grid),
                 block=_dims(self.block), args=Listing(parts))

    def render(self, lang: str) -> str:
        head = f"### {self.title.pick(lang)}"
        kind = KINDS[self.kind].pick(lang)
        return f"{head}\n\n*{kind}* · {self.statement.pick(lang)}\n\n{self.launch_text().pick(lang)}"

    def _repr_markdown_(self) -> str:
        return self.render(current_language())

    def __repr__(self) -> str:
        return f"<Puzzle {self.name!r} ({self.kind}, {self.lecture})>"


def _dims(d: tuple) -> str:
    """'256' for a 1-D launch, '(32, 8)' for a 2-D one."""
    return str(d[0]) if len(d) == 1 else "(" + ", ".join(str(x) for x in d) + ")"

