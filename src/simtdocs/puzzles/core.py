"""A puzzle: a task, a kernel skeleton to edit, and a checker that runs the simulator.

``Puzzle.check(kernel)`` launches ``kernel`` on random inputs with every sanitizer check
on, then judges in the order a reader would fix things: the simulator stopped the kernel
(memcheck, synccheck, initcheck), a wrong value, a race, then the same on a second draw of
random inputs, then the puzzle's own :class:`Rule` s (coalescing, bank conflicts,
divergence, a counter budget). Every rule compares with what the puzzle's solution does
on the same inputs, so a budget names the line that spends more than the solution needs,
and a verdict carries a :class:`~simtdocs.puzzles.card.ScoreCard`: the kernel's counters
beside the solution's.
"""

from __future__ import annotations

import difflib
import inspect
import itertools
import textwrap
import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from simtdocs import launch
from simtdocs.counters import LABELS as ENGINE_LABELS
from simtdocs.diagnostics import InitcheckError, MemcheckError, SimulatorError, SynccheckError
from simtdocs.i18n import Listing, Msg, _, _n, current_language
from simtdocs.threads import WARP_SIZE

from . import provenance
from . import verdict as V
from .card import ScoreCard, per_thread
from .verdict import Lines, Verdict

KINDS = {"write": _("write a kernel"), "fix": _("fix a kernel"), "target": _("meet a target")}

#: Counter names a rule may use: the engine's headline labels and a few more.
LABELS = {**ENGINE_LABELS, "atomics": _("atomics"), "shuffles": _("shuffles"), "votes": _("votes"),
          "bytes_moved": _("DRAM bytes")}


def percent(x: float) -> str:
    return f"{x:.0%}"


def ways(x: float) -> str:
    return str(int(round(x))) if abs(x - round(x)) < 1e-9 else f"{x:.1f}"


def idle_lanes(c) -> int:
    """Lane slots a line's warp instructions left empty: 32 · warp instructions − active lanes
    (what a SIMT efficiency below 100% is made of)."""
    return WARP_SIZE * c.warp_instructions - c.active_lanes


class Rule:
    """One requirement on the counters. ``judge(stats, lines, reference)`` gets the kernel's
    counters and the solution's on the same inputs and returns (met, what to say, the source
    line to blame or None); a rule about one warp's access (``pictured``) gets a picture of
    that access in the verdict when it fails. A rule must judge any kernel, also one that
    touches no memory at all."""

    pictured = False

    def judge(self, stats, lines: Lines, reference) -> tuple[bool, Msg, object]:
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

    def judge(self, stats, lines, reference=None):
        used = [ln for ln in stats.lines if ln.counters.requests]
        if not used:
            return True, _("no global access"), None
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

    def judge(self, stats, lines, reference=None):
        used = [ln for ln in stats.lines if ln.counters.shared_requests]
        if not used:
            return True, _("no bank conflict"), None
        worst = max(used, key=lambda ln: ln.counters.shared_ways)
        if worst.counters.shared_bank_conflicts:
            return False, _("{ways}-way bank conflict on {line}", ways=ways(worst.counters.shared_ways),
                            line=lines.of(worst.site)), worst.site
        return True, _("no bank conflict"), None


@dataclass(frozen=True)
class Divergence(Rule):
    """No more divergence than the solution has, judged from what the warps executed: at most
    ``allowed`` divergent branches (``blk.branch``), and no more idle lanes in the warp
    instructions than the solution's. A kernel that masks its work without calling
    ``blk.branch`` still runs its warps with lanes idle, and that is what is counted."""

    allowed: int = 0

    def describe(self):
        return _("no warp diverges (SIMT efficiency {eff})", eff=percent(1.0))

    def judge(self, stats, lines, reference=None):
        n = stats.divergent_branches
        if n > self.allowed:
            worst = max(stats.lines, key=lambda ln: ln.counters.divergent_branches)
            return False, _("{count} where {allowed} are allowed, on {line}",
                            count=_n("{n} divergent branch", "{n} divergent branches", n=n),
                            allowed=self.allowed, line=lines.of(worst.site)), worst.site
        allowed_idle = sum(idle_lanes(ln.counters) for ln in reference.lines) if reference is not None else 0
        idle = sum(idle_lanes(ln.counters) for ln in stats.lines)
        eff = stats.simt_efficiency
        if idle > allowed_idle:
            worst = max(stats.lines, key=lambda ln: idle_lanes(ln.counters))
            c = worst.counters
            target = reference.simt_efficiency if reference is not None else 1.0
            return False, _("warps diverge on {line}: its warp instructions run {active} of their 32 lanes "
                            "on average; SIMT efficiency {eff} where {target} is asked",
                            line=lines.of(worst.site), active=ways(c.active_lanes / c.warp_instructions),
                            eff=percent(eff), target=percent(target)), worst.site
        return True, _("{branches}, SIMT efficiency {eff}", eff=percent(eff),
                       branches=_n("{n} divergent branch", "{n} divergent branches", n=n)), None


def _similarity(a: str, b: str) -> float:
    """How alike two source lines read, comments left out."""
    a, b = a.split("#")[0].strip(), b.split("#")[0].strip()
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


#: Per budget counter, the counters that together say which accesses a line made: lines of
#: the kernel and of the solution that made the same accesses agree on all of them, however
#: the kernel spreads its accesses over lines (a reduction step written on one line, where
#: the solution takes two). For shared wavefronts, the ideal ones: a bank conflict is
#: another matter (``_ABOVE_IDEAL``).
_ACCESSES = {
    "shared_wavefronts": ("shared_ideal_wavefronts", "shared_requests"),
    "shared_requests": ("shared_requests",),
    "sectors": ("sectors", "requests", "requested_bytes"),
    "requests": ("requests", "sectors", "requested_bytes"),
    "requested_bytes": ("requested_bytes", "requests"),
    "bytes_moved": ("sectors", "requests", "requested_bytes"),
    "warp_instructions": ("warp_instructions", "active_lanes"),
}
#: Per budget counter, the part of a line's count above the ideal for its accesses (what no
#: other arrangement of the same accesses needs): wavefronts beyond the ideal, bank conflicts.
_ABOVE_IDEAL = {"shared_wavefronts": "shared_bank_conflicts"}
#: Beyond this many solution lines that spend a counter, lines are matched one to one only.
_MAX_COVER = 12


@dataclass(frozen=True)
class Blame:
    """The line a budget's excess comes from (:func:`attribute`): ``need``, what the solution
    spends on the matching accesses (0: it has none; None: nothing to compare with);
    ``above_ideal``, when the excess is wavefronts above the ideal of the line's accesses
    (bank conflicts), how many of its wavefronts those are."""

    line: object
    need: int | None
    above_ideal: int = 0


def attribute(counter: str, mine, theirs) -> Blame | None:
    """Which of ``mine`` (per-line counters) spends more of ``counter`` than the solution
    (``theirs``, on the same inputs) needs, judged by what is in excess, not by how the
    lines are laid out:

    * when the kernel's excess over the solution is mostly wavefronts above the ideal of
      its accesses (bank conflicts, ``_ABOVE_IDEAL``), the line with the most of those;
    * else by accesses: each kernel line is matched with the solution lines that made the
      very same accesses (equal ``_ACCESSES`` counters, summed over one or more solution
      lines, so a line that does the work of two is matched with both); the lines left
      are paired by how alike their sources read, and a line's excess is its count minus
      its partner's (all of it when it has none). The line with the largest excess is the
      one blamed.

    None when no line spends the counter; a Blame with ``need`` None when no line spends
    more than its partner (the line with the largest count is named)."""
    def count(ln):
        return getattr(ln.counters, counter)

    mine = [ln for ln in mine if count(ln)]
    theirs = [ln for ln in theirs if count(ln)]
    if not mine:
        return None
    above = _ABOVE_IDEAL.get(counter)
    if above is not None:
        def waste(ln):
            return getattr(ln.counters, above)

        extra_waste = sum(map(waste, mine)) - sum(map(waste, theirs))
        extra_ideal = sum(count(ln) - waste(ln) for ln in mine) - sum(count(ln) - waste(ln) for ln in theirs)
        if extra_waste > 0 and extra_waste >= extra_ideal:
            worst = max(mine, key=lambda ln: (waste(ln), count(ln)))
            return Blame(worst, None, waste(worst))
    names = _ACCESSES.get(counter, (counter,))

    def accesses(ln):
        return tuple(getattr(ln.counters, name) for name in names)

    # The same accesses: the largest kernel lines first, each with the fewest solution lines.
    partner: dict[int, list[int]] = {}
    free = list(range(len(theirs)))
    # A line written exactly as a solution line, with the very same accesses, is that line
    # (a load and a store of one row make the same accesses: a Triton kernel that reads its
    # row twice is matched by its store line first, so the extra load is the one left over).
    for i in range(len(mine)):
        for j in free:
            if accesses(mine[i]) == accesses(theirs[j]) and _similarity(mine[i].site.source or "",
                                                                          theirs[j].site.source or "") == 1.0:
                partner[i] = [j]
                free.remove(j)
                break
    for i in sorted((i for i in range(len(mine)) if i not in partner), key=lambda i: -count(mine[i])):
        found = _cover(accesses(mine[i]), [(j, accesses(theirs[j])) for j in free])
        if found is not None:
            partner[i] = found
            free = [j for j in free if j not in found]
    # The rest by how alike the sources read, each solution line used once.
    rest = [i for i in range(len(mine)) if i not in partner]
    pairs = sorted(((round(_similarity(mine[i].site.source, theirs[j].site.source), 1), -i, -j)
                    for i in rest for j in free), reverse=True)
    for _score, i, j in pairs:
        if -i not in partner and -j in free:
            partner[-i] = [-j]
            free.remove(-j)

    def need(i):
        return sum(count(theirs[j]) for j in partner.get(i, ()))

    excess = [count(ln) - need(i) for i, ln in enumerate(mine)]
    k = max(range(len(mine)), key=lambda i: (excess[i], count(mine[i])))
    if excess[k] <= 0:
        return Blame(max(mine, key=count), None)
    return Blame(mine[k], need(k))


def _cover(target: tuple, candidates: list) -> list | None:
    """The fewest of ``candidates`` (``(index, counts)``) whose counts add up to ``target``
    exactly, as a list of their indices; None when none do."""
    if len(candidates) > _MAX_COVER:
        candidates = [c for c in candidates if c[1] == target][:1]
    for size in range(1, len(candidates) + 1):
        for chosen in itertools.combinations(candidates, size):
            if tuple(map(sum, zip(*(c for _j, c in chosen)))) == target:
                return [j for j, _c in chosen]
    return None


@dataclass(frozen=True)
class Budget(Rule):
    """A counter of the launch (``sectors``, ``shared_wavefronts``, ``warp_instructions``…)
    may not exceed ``limit``. Over budget, the verdict names the line that spends more than
    the solution's matching line (see :func:`attribute`)."""

    counter: str
    limit: int

    def describe(self):
        return _("{counter} ≤ {limit}", counter=LABELS[self.counter], limit=format(self.limit, ","))

    def judge(self, stats, lines, reference=None):
        value = getattr(stats, self.counter)
        label = LABELS[self.counter]
        if value > self.limit:
            blame = attribute(self.counter, stats.lines, reference.lines if reference is not None else [])
            worst, need = blame.line, blame.need
            top = format(getattr(worst.counters, self.counter), ",")
            fields = dict(counter=label, value=format(value, ","), limit=format(self.limit, ","),
                          line=lines.of(worst.site), top=top)
            if blame.above_ideal:
                msg = _("{counter}: {value} where at most {limit} are allowed; {top} of them on {line}, "
                        "{above} of them above the ideal of its accesses (bank conflicts)",
                        above=format(blame.above_ideal, ","), **fields)
            elif need is None:
                msg = _("{counter}: {value} where at most {limit} are allowed; {top} of them on {line}", **fields)
            elif need == 0:
                msg = _("{counter}: {value} where at most {limit} are allowed; {top} of them on {line}, "
                        "which the solution does without", **fields)
            else:
                msg = _("{counter}: {value} where at most {limit} are allowed; {top} of them on {line}, "
                        "where the solution needs {need}", need=format(need, ","), **fields)
            return False, msg, worst.site
        return True, _("{counter}: {value} (budget {limit})", counter=label, value=format(value, ","),
                       limit=format(self.limit, ",")), None


@dataclass
class Case:
    """The inputs of one run: the kernel's arguments, the expected output arrays (argument
    position → array), and how each random input was drawn (argument position → a
    description, shown in the statement). An output in ``unordered`` is right when it holds
    the expected values in any order (tickets handed out by atomics)."""

    args: tuple
    expected: dict[int, np.ndarray]
    drawn: dict[int, Msg] = field(default_factory=dict)
    unordered: frozenset = frozenset()


def uniform(rng: np.random.Generator, shape, lo: float = -1.0, hi: float = 1.0, dtype=np.float32):
    """Random values in [lo, hi), and what to say about them."""
    values = rng.uniform(lo, hi, size=shape).astype(dtype)
    return values, _("random values from {lo} to {hi}", lo=format(lo, "g"), hi=format(hi, "g"))


def integers(rng: np.random.Generator, shape, lo: int, hi: int, dtype=np.float32):
    """Random integers from lo to hi (both included), stored as ``dtype``, and what to say."""
    values = rng.integers(lo, hi + 1, size=shape).astype(dtype)
    return values, _("random integers from {lo} to {hi}", lo=lo, hi=hi)


@dataclass(frozen=True)
class Puzzle:
    """One kernel puzzle: what to do, a skeleton to edit, its inputs and a checker.

    ``setup(rng)`` draws one set of inputs from a numpy ``Generator``; ``check`` runs the kernel
    on two draws (``seeds``), fixed per puzzle so that a verdict is the same every time.
    ``wrong`` holds typical wrong answers (the page shows what ``check`` says about them)."""

    name: str
    lecture: str  # "p2" or "exec_model": the lecture whose page and notebook carry it
    kind: str  # "write", "fix" or "target" (see KINDS)
    title: Msg
    statement: Msg
    hint: Msg
    skeleton: Callable
    solution: Callable
    setup: Callable[[np.random.Generator], Case]  # one draw of fresh inputs
    grid: tuple
    block: tuple
    rules: tuple[Rule, ...] = ()
    tolerance: float = 1e-4  # relative and absolute, for floating-point outputs
    wrong: tuple[Callable, ...] = ()
    #: A Triton puzzle (``num_warps`` > 0): its kernels are ``@triton.jit`` functions launched
    #: ``kernel[grid](*args, **meta, num_warps=num_warps)``, ``grid`` being the programs and
    #: ``block`` their ``num_warps * 32`` threads; ``meta`` holds the meta-parameters the puzzle
    #: gives (``(("BLOCK", 128),)``), which are not among the case's arguments.
    meta: tuple = ()
    num_warps: int = 0

    @property
    def seeds(self) -> tuple[int, int]:
        """The two draws ``check`` uses: derived from the puzzle's name, so fixed."""
        s = zlib.crc32(self.name.encode())
        return s, s + 1

    def inputs(self, seed: int | None = None) -> Case:
        return self.setup(np.random.default_rng(self.seeds[0] if seed is None else seed))

    @property
    def triton(self) -> bool:
        """Whether the puzzle is written in Triton (its solution is a ``@triton.jit`` kernel)."""
        return self.num_warps > 0

    def argument_names(self) -> list[str]:
        if self.triton:  # the kernel's arguments but the meta-parameters the puzzle gives
            return [n for n in inspect.signature(_triton_fn(self.solution)).parameters if n not in dict(self.meta)]
        return list(inspect.signature(self.solution).parameters)[1:]

    def _launch(self, kernel, case: Case, trace=None):
        """``kernel`` launched on ``case``: a Triton kernel the Triton way (this puzzle's grid,
        meta-parameters and ``num_warps``), any other with ``launch(grid, block)``."""
        if _is_triton(kernel):
            if not self.triton:
                raise _NotTriton(self.name)
            return kernel[self.grid](*case.args, **dict(self.meta), num_warps=self.num_warps, trace=trace)
        return launch(kernel, grid=self.grid, block=self.block, args=case.args, trace=trace)

    # -- checking ------------------------------------------------------------------------

    def _run(self, kernel, seed: int, lines: Lines, trace=None):
        """Launch on the inputs of ``seed``: a failing Verdict if the sanitizers stopped the
        kernel, else (case, stats)."""
        case = self.inputs(seed)
        try:
            stats = self._launch(kernel, case, trace=trace)
        except _NotTriton:
            return Verdict(False, _("this puzzle is written for the simulator's threads (`blk`, `@cuda.jit` or CUDA C), "
                                    "not for Triton: a @triton.jit kernel needs a Triton puzzle"))
        except MemcheckError as exc:
            if _is_triton(kernel):
                return Verdict(False, V.triton_memcheck(exc, lines), detail=lines.renumber(str(exc)))
            site = getattr(exc, "site", None)
            narrow = provenance.narrow_sources(kernel, case.args, site.lineno) if site is not None else []
            return Verdict(False, V.memcheck(exc, lines, narrow, getattr(kernel, "language", "blk")),
                           detail=lines.renumber(str(exc)))
        except SynccheckError as exc:
            return Verdict(False, V.synccheck(exc, lines), detail=lines.renumber(str(exc)))
        except InitcheckError as exc:
            return Verdict(False, V.initcheck(exc, lines), detail=lines.renumber(str(exc)))
        except SimulatorError as exc:
            return Verdict(False, _("the simulator stopped the kernel"), detail=lines.renumber(str(exc)))
        except (NotImplementedError, TypeError, ValueError) as exc:
            if not _is_triton(kernel):
                raise
            # the Triton front end refuses a construct, or the kernel's signature does not fit
            # the puzzle's launch: said with the reader's line (the front end names it)
            return Verdict(False, _("the Triton front end cannot run this kernel"), detail=lines.renumber(str(exc)))
        return case, stats

    def _values(self, case: Case, stats, lines: Lines, kernel=None) -> Msg | None:
        """What is wrong with the outputs or the shared-memory traffic, or None."""
        names = self.argument_names()
        own = _parameters(kernel)
        for index, want in case.expected.items():
            got = np.asarray(case.args[index])
            ordered = index not in case.unordered
            g, w = (got, want) if ordered else (np.sort(got, axis=None), np.sort(want, axis=None))
            wrong = self._wrong(g, w)
            if wrong.any():
                first = int(np.flatnonzero(wrong)[0])
                if index in case.unordered:
                    writers = {}
                elif _is_triton(kernel):
                    pointers = {own[k] for k, a in enumerate(case.args[:len(own)]) if isinstance(a, np.ndarray)}
                    writers = _triton_writers(stats.trace, own[index] if index < len(own) else None,
                                              want.itemsize, pointers, len(case.expected) == 1)
                else:
                    writers = _writers(stats.trace, own[index] if index < len(own) else None, want.itemsize)
                traced = [k for k in np.flatnonzero(wrong)[:4096].tolist() if k in writers]
                if traced:  # a wrong element the traced warp wrote: its line is the one to look at
                    first = traced[0]
                fields = dict(where=V.where(first, w.shape), array=names[index], expected=V.number(w.reshape(-1)[first]),
                              got=V.number(g.reshape(-1)[first]), bad=format(int(wrong.sum()), ","),
                              n=format(want.size, ","))
                if ordered:
                    site = writers.get(first)
                    if site is not None:
                        return _("wrong value at element {where} of {array}: expected {expected}, got {got}, "
                                 "stored by {line} ({bad} of its {n} elements are wrong)", line=lines.of(site), **fields)
                    return _("wrong value at element {where} of {array}: expected {expected}, got {got} "
                             "({bad} of its {n} elements are wrong)", **fields)
                return _("{array} does not hold the values asked, in any order: sorted, its element {where} "
                         "should be {expected} and is {got} ({bad} of its {n} elements differ)", **fields)
        if stats.races:
            return V.race(stats.races, lines)
        return None

    def reference(self, seed: int | None = None):
        """The solution's counters and per-thread accesses on the inputs of ``seed``."""
        seed = self.seeds[0] if seed is None else seed
        key = (self.name, seed)
        if key not in _REFERENCE:
            case = self.inputs(seed)
            stats = self._launch(self.solution, case, trace=(0, 0))
            _REFERENCE[key] = stats
        return _REFERENCE[key]

    def check(self, kernel: Callable) -> Verdict:
        """Run ``kernel`` on this puzzle's launch and say whether it does the task."""
        lines = Lines(kernel)
        first, second = self.seeds
        run = self._run(kernel, first, lines, trace=(0, 0))
        if isinstance(run, Verdict):
            return run
        case, stats = run
        reference = self.reference(first)
        card = ScoreCard.of(self, stats, reference)
        wrong = self._values(case, stats, lines, kernel)
        if wrong is not None:
            return Verdict(False, wrong, stats=stats, card=card)
        checked = sum(w.size for w in case.expected.values())
        again = self._run(kernel, second, lines)
        if isinstance(again, Verdict):
            again.message = _("on a second draw of random inputs: {what}", what=again.message)
            return again
        wrong = self._values(*again, lines)
        if wrong is not None:
            return Verdict(False, _("on a second draw of random inputs: {what}", what=wrong), stats=stats, card=card)
        said = [_("all {n} values right", n=format(checked, ","))]
        for rule in self.rules:
            ok, msg, site = rule.judge(stats, lines, reference)
            if not ok:
                figure = self._picture(stats, site, rule) if rule.pictured else None
                return Verdict(False, msg, stats=stats, figure=figure, card=card)
            said.append(msg)
        return Verdict(True, _("passed: {what}", what=Listing(said)), stats=stats, card=card)

    def _picture(self, stats, site, rule):
        """The worst execution of ``site`` by warp 0 of block 0 (traced in the run), drawn lane by lane."""
        from simtdocs.display import Figure
        from simtdocs.pictures import access_alt, access_caption, draw_access

        records = [r for r in stats.trace or () if (r.site.filename, r.site.lineno) == (site.filename, site.lineno)]
        if isinstance(rule, Coalescing):
            records = [r for r in records if r.space == "global"]
            worst = min(records, key=lambda r: r.coalescing_efficiency, default=None)
        else:
            records = [r for r in records if r.space == "shared"]
            worst = max(records, key=lambda r: r.ways, default=None)
        if worst is None:
            return None
        # named by its source line: the Python and the C answer of one puzzle draw the same access
        caption = _("The access of `{source}`. {how}", source=site.source, how=access_caption(worst)) \
            if site.source else access_caption(worst)
        return Figure(lambda: draw_access(worst), alt=access_alt(worst), caption=caption)

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
        text = textwrap.dedent(inspect.getsource(_triton_fn(getattr(self, which))))
        own, wanted = getattr(self, which).__name__, self.skeleton.__name__
        return text.replace(f"def {own}(", f"def {wanted}(", 1)

    # -- the same puzzle in CUDA C ------------------------------------------------------

    def c_file(self, which: str = "skeleton") -> str:
        """The ``.cu`` file, relative to the repository, with this puzzle's C skeleton (section
        ``<name>`` of ``snippets/puzzles/<module>.cu``) or its solution (section
        ``<name>_solution`` of ``<module>_solutions.cu``, apart so that a notebook can show
        the skeletons without the answers)."""
        if which not in ("skeleton", "solution"):
            raise ValueError(f"which is 'skeleton' or 'solution', not {which!r}")
        module = self.setup.__module__.rsplit(".", 1)[-1]
        return f"snippets/puzzles/{module}{'_solutions' if which == 'solution' else ''}.cu"

    def c_source(self, which: str = "skeleton") -> str:
        """The CUDA C skeleton or solution (a ``__global__`` kernel with the Python one's
        arguments), the solution under the skeleton's name, as :meth:`source` gives it."""
        from simtdocs.snippets import expand_snippets, repo_root

        path = self.c_file(which)
        if not (repo_root() / path).is_file():
            raise FileNotFoundError(f"{self.name}: its C kernels are in {path} of the simtdocs repository, "
                                    f"which is not here ({repo_root()})")
        section = self.name if which == "skeleton" else self.name + "_solution"
        text = expand_snippets(f'--8<-- "{path}:{section}"', base=repo_root())
        if which == "skeleton":
            return text
        return text.replace(f" {_c_name(text)}(", f" {self.c_name()}(", 1)

    def c_name(self) -> str:
        """The C skeleton's kernel name (``double_vector``: ``double`` is a C keyword); the
        solution's is this name with ``_solution``."""
        return _c_name(self.c_source("skeleton"))

    def c_kernel(self, which: str = "skeleton"):
        """The C skeleton or solution compiled from :meth:`c_file` (a ``RawKernel``, what
        :meth:`check` accepts), its lines those of the file."""
        from simtdocs.cuda import RawModule
        from simtdocs.snippets import repo_root

        path = self.c_file(which)
        name = self.c_name() + ("" if which == "skeleton" else "_solution")
        return RawModule(path=str(repo_root() / path)).get_function(name)

    def launch_text(self) -> Msg:
        """'launch with grid 4 and block 256; arguments `a`: float32[1024], …' with the arguments'
        shapes, then how the random inputs are drawn."""
        case = self.inputs()
        names = self.argument_names()
        parts = []
        for name, arg in zip(names, case.args):
            if isinstance(arg, np.ndarray):
                dims = "×".join(str(d) for d in arg.shape)
                parts.append(f"`{name}`: {arg.dtype}[{dims}]")
            else:
                parts.append(f"`{name}` = {arg}")
        if self.triton:
            meta = Listing([f"`{k}={v}`" for k, v in self.meta] + [f"`num_warps={self.num_warps}`"])
            text = _("launch with grid {grid} (one program each, of {threads} threads), {meta}; arguments {args}",
                     grid=_dims(self.grid), threads=self.num_warps * WARP_SIZE, meta=meta, args=Listing(parts))
        else:
            text = _("launch with grid {grid} and block {block}; arguments {args}", grid=_dims(self.grid),
                     block=_dims(self.block), args=Listing(parts))
        if not case.drawn:
            return text
        drawn = Listing([_("`{name}` holds {what}", name=names[k], what=what) for k, what in sorted(case.drawn.items())])
        return _("{launch}. {drawn}; `check` runs the kernel on two such draws", launch=text, drawn=drawn)

    def render(self, lang: str) -> str:
        head = f"**{self.title.pick(lang)}**"  # in bold: the page or notebook around it numbers the headings
        kind = KINDS[self.kind].pick(lang)
        return f"{head}\n\n*{kind}* · {self.statement.pick(lang)}\n\n{self.launch_text().pick(lang)}"

    def _repr_markdown_(self) -> str:
        return self.render(current_language())

    def __repr__(self) -> str:
        return f"<Puzzle {self.name!r} ({self.kind}, {self.lecture})>"


_REFERENCE: dict = {}


def _parameters(kernel) -> list[str]:
    """The names the kernel gives its arguments (after ``blk`` for a blk kernel; a Triton
    kernel's, its constexpr meta-parameters last as Triton asks, all of them)."""
    if _is_triton(kernel):
        return list(inspect.signature(_triton_fn(kernel)).parameters)
    params = getattr(kernel, "params", None)
    if isinstance(params, list):  # a CUDA C kernel (RawKernel): its C signature
        return [name for name, _type in params]
    func = getattr(kernel, "py_func", None)
    try:
        names = list(inspect.signature(func or kernel).parameters)
    except (TypeError, ValueError):
        return []
    if any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(func or kernel).parameters.values()):
        return []
    return names if func is not None else names[1:]


def _c_name(source: str) -> str:
    """The name of the first ``__global__`` function of a C source."""
    import re

    found = re.search(r"__global__\s+void\s+(\w+)\s*\(", source)
    if found is None:
        raise ValueError("no __global__ kernel in this C source")
    return found.group(1)


def _writers(trace, array: str | None, itemsize: int) -> dict:
    """Element → the site of the last store (or atomic) of the traced warp that wrote it, for
    the global array the kernel calls ``array``."""
    out: dict = {}
    if array is None:
        return out
    for record in trace or ():
        if record.space == "global" and record.kind != "load" and record.array == array:
            for address in record.addresses:
                for k in range(address // itemsize, (address + record.lane_bytes) // itemsize):
                    out[k] = record.site
    return out


class _NotTriton(Exception):
    """A @triton.jit kernel given to a puzzle of the simulator's threads."""


def _is_triton(kernel) -> bool:
    """Whether ``kernel`` is a ``@simtdocs.triton.jit`` kernel (or one wrapped by ``@triton.heuristics``)."""
    from simtdocs import triton

    return isinstance(kernel, (triton.JITFunction, triton.Heuristics, triton.Autotuned))


def _triton_fn(kernel):
    """The reader's Python function behind a Triton kernel (``kernel`` itself for any other)."""
    from simtdocs import triton

    while isinstance(kernel, (triton.Heuristics, triton.Autotuned)):
        kernel = kernel.fn
    return kernel.fn if isinstance(kernel, triton.JITFunction) else kernel


def _stored_through(source: str) -> set[str] | None:
    """The names in the pointer argument of the ``tl.store``/``tl.atomic_*`` on a Triton source
    line (``tl.store(z_ptr + rows * N, v)`` → {'z_ptr', 'rows', 'N'}), None when the line holds none."""
    import ast

    try:
        tree = ast.parse(source.strip())
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
                and (node.func.attr == "store" or node.func.attr.startswith("atomic_"))):
            return {n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name)}
    return None


def _triton_writers(trace, array: str | None, itemsize: int, pointers: set, only_output: bool) -> dict:
    """:func:`_writers` for a Triton kernel: its trace records do not name the array (the
    reader's frame holds pointers, not arrays), so a store is the array's when its line's
    pointer expression names the array's parameter, or, for a puzzle with one output, when it
    names no pointer parameter at all (``tl.store(ptrs, …)``)."""
    out: dict = {}
    if array is None:
        return out
    for record in trace or ():
        if record.space != "global" or record.kind == "load":
            continue
        names = _stored_through(record.site.source or "")
        if names is None:
            continue
        if array not in names and not (only_output and not names & pointers):
            continue
        for address in record.addresses:
            for k in range(address // itemsize, (address + record.lane_bytes) // itemsize):
                out[k] = record.site
    return out


def _dims(d: tuple) -> str:
    """'256' for a 1-D launch, '(32, 8)' for a 2-D one."""
    return str(d[0]) if len(d) == 1 else "(" + ", ".join(str(x) for x in d) + ")"
