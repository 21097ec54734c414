"""What a checked kernel gets back: a :class:`Verdict`, worded in the lecture's terms.

Every message is one :class:`~simtdocs.i18n.Msg` (English in the code, Chinese in the
``simtdocs`` catalog), so a page shows it in its language and a notebook in the
reader's. What the simulator's sanitizer printed stays as it printed it (like
``compute-sanitizer``, in English) in ``detail``, under the message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simtdocs.diagnostics import C_NAMES, Race
from simtdocs.i18n import Msg, _, _n, current_language


@dataclass
class Verdict:
    """``passed``, the ``message`` saying why (a :class:`Msg`), and what backs it up.

    ``detail`` is the sanitizer's own report when the simulator stopped the kernel;
    ``stats`` the launch's counters when it ran to the end; ``figure`` an optional
    picture (a :class:`simtdocs.display.Figure`) of the access the message is about; ``card``
    the :class:`~simtdocs.puzzles.card.ScoreCard` (the kernel's counters beside the
    solution's) when the kernel ran to the end.
    """

    passed: bool
    message: Msg
    detail: str | None = None
    stats: Any = None
    figure: Any = field(default=None, repr=False)
    card: Any = field(default=None, repr=False)

    def text(self, lang: str | None = None) -> str:
        """The message in ``lang`` (the current language by default), with its mark."""
        lang = lang or current_language()
        mark = "✓" if self.passed else "✗"  # in the fonts every system has (an emoji may be a box)
        return f"{mark} {self.message.pick(lang)}"

    def render(self, lang: str, picture: bool = True) -> str:
        out = f"**{self.text(lang)}**"
        if self.detail:
            out += "\n\n```text\n" + self.detail.rstrip() + "\n```"
        if self.figure is not None and picture:
            out += "\n\n" + self.figure.render(lang)
        if self.card is not None:
            summary = _("Score card: your kernel and the solution").pick(lang)
            out += (f'\n\n<details class="simt-score" markdown="1">\n<summary>{summary}</summary>\n\n'
                    + self.card.render(lang) + "\n\n</details>")
        return out

    def _repr_markdown_(self) -> str:
        return self.render(current_language(), picture=_rich_display())

    def __str__(self) -> str:
        body = self.text()
        return body + ("\n" + self.detail if self.detail else "")

    __repr__ = __str__


def _rich_display() -> bool:
    """True where a picture can be shown: a page being built, a notebook (executed by the
    site or in Jupyter). A terminal gets the message without a page of SVG."""
    from simtdocs.display import recorder as display

    return (display._recorder.get() is not None or display._display_sink.get() is not None
            or display._in_notebook())


# -- the pieces of a message -------------------------------------------------------------


def number(x) -> str:
    """A value as the reader would print it: 74.0, 2.5, -0.125, 1e-08 (7 for an integer)."""
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if np.isnan(x):
        return "nan"
    s = f"{x:.6g}"
    return s + ".0" if re.fullmatch(r"-?\d+", s) else s


def triple(values) -> str:
    """'(3, 0, 0)': a thread or block index the way CUDA's dim3 reads."""
    return "(" + ", ".join(str(int(v)) for v in values) + ")"


def where(flat: int, shape) -> str:
    """'37' in a 1-D array, '[3][16]' in a 2-D one."""
    if len(shape) == 1:
        return str(int(flat))
    return "".join(f"[{int(i)}]" for i in np.unravel_index(int(flat), shape))


class Lines:
    """Source lines named relative to the kernel: line 1 is its ``def``, or for a CUDA C kernel
    (a ``RawKernel``) the line of its ``__global__``, so that a page showing the kernel from
    that line counts as the message does."""

    def __init__(self, kernel):
        c = _c_source(kernel)
        if c is not None:
            self.filename, self.first = c.filename, _global_line(c.filename, c.tree.lineno)
            return
        # A @simtdocs.cuda.jit kernel keeps the reader's function as py_func, a @triton.jit one
        # as fn (inside @triton.heuristics, fn.fn), and their sites name the reader's file and lines.
        func = getattr(kernel, "py_func", kernel)
        while not hasattr(func, "__code__") and hasattr(func, "fn"):
            func = func.fn
        code = getattr(func, "__code__", None)
        self.filename = code.co_filename if code else None
        self.first = _def_line(func, code.co_firstlineno) if code else 1

    def number(self, filename: str, lineno: int) -> int:
        if filename == self.filename and lineno >= self.first:
            return lineno - self.first + 1
        return lineno

    def renumber(self, report: str) -> str:
        """The sanitizer's report with its '(line N' counted from the kernel's ``def``, as the
        message counts them (the kernel's own file is the only one it names)."""
        return _LINE.sub(lambda m: f"(line {self.number(self.filename, int(m.group(1)))}", report)

    def of(self, site) -> Msg:
        """'line 7 (`v = blk.load(...)`)'."""
        n = self.number(site.filename, site.lineno)
        if site.source:
            return _("line {line} (`{source}`)", line=n, source=site.source)
        return _("line {line}", line=n)


def _c_source(kernel):
    """The lowered C function behind a ``RawKernel`` (or the kernel it wraps), else None: its
    ``filename`` is the ``.cu`` file the sites name, its tree starts on the function's line."""
    source = getattr(getattr(kernel, "kernel", kernel), "_source", None)
    if source is None or getattr(source, "func", True) is not None or not hasattr(source, "tree"):
        return None  # a Python kernel (its function is kept), or not a compiled kernel at all
    return source


def _global_line(filename: str, first: int) -> int:
    """The line holding ``__global__``, from the definition's first line (a template's
    ``template <…>`` line comes before it)."""
    import linecache

    for lineno in range(first, first + 20):
        if "__global__" in linecache.getline(filename, lineno):
            return lineno
    return first


def _def_line(func, first: int) -> int:
    """The line of the ``def`` itself: a decorated function's code starts at its decorator."""
    import inspect

    try:
        source, start = inspect.getsourcelines(func)
    except (OSError, TypeError):
        return first
    for k, line in enumerate(source):
        if line.lstrip().startswith(("def ", "async def ")):
            return start + k
    return first


# -- sanitizer errors, reworded -----------------------------------------------------------

_LINE = re.compile(r"\(line (\d+)")

VERBS = {"read": _("reads"), "write": _("writes"), "atomic": _("updates")}


def _site_line(exc: Exception, lines: Lines) -> int | str:
    site = getattr(exc, "site", None)
    return "?" if site is None else lines.number(site.filename, site.lineno)


def memcheck(exc: Exception, lines: Lines, narrow=(), language: str = "blk") -> Msg:
    """The memcheck stop in the lecture's words; ``narrow`` (``provenance.narrow_sources``):
    the narrow integers the out-of-bounds index came from, named in a note after it, with
    the fix in the kernel's own ``language`` ("blk", "numba": the per-thread ``@cuda.jit``
    dialect, or "c")."""
    said = _memcheck(exc, lines)
    if not narrow or exc.thread is None or exc.verb is None:
        return said
    src = narrow[0]
    lo, hi = src.bounds
    if language == "c":
        fields = dict(what=said, c_type=C_NAMES[src.dtype], lo=lo, hi=hi)
        if src.array is not None:
            return _("{what}; its index comes from `{array}`, a {c_type} array, whose elements can only be "
                     "{lo}..{hi} (a value outside that range wraps around when it is stored there; an index "
                     "needs an int array)", array=src.array, **fields)
        return _("{what}; its index comes from a conversion to {c_type} on line {line}: a {c_type} holds only "
                 "{lo}..{hi}, and a value outside that range wraps around (keep the value in an int instead)",
                 line=lines.number(lines.filename, src.line), **fields)
    fields = dict(what=said, dtype=str(src.dtype), lo=lo, hi=hi)
    if src.array is not None:
        return _("{what}; its index comes from `{array}`, an {dtype} array, whose elements can only be {lo}..{hi} "
                 "(a value outside that range wraps around when it is stored there; an index needs an int32 array)",
                 array=src.array, **fields)
    fields.update(conversion=src.text, line=lines.number(lines.filename, src.line))
    if language == "numba":
        return _("{what}; its index comes from `{conversion}` on line {line}: {dtype} holds only {lo}..{hi}, and a "
                 "value outside that range wraps around (convert with np.int32(…) instead)", **fields)
    return _("{what}; its index comes from `{conversion}` on line {line}: {dtype} holds only {lo}..{hi}, and a "
             "value outside that range wraps around (widen it with .astype(np.int32) instead)", **fields)


def _memcheck(exc: Exception, lines: Lines) -> Msg:
    line = _site_line(exc, lines)
    if exc.thread is None:
        return _("the simulator's memcheck stopped the kernel on line {line}", line=line)
    thread, block = triple(exc.thread), triple(exc.block)
    if exc.verb is None:  # a misaligned access
        return _("thread {thread} of block {block} makes a misaligned access on line {line}",
                 thread=thread, block=block, line=line)
    verb = VERBS[exc.verb]
    if exc.space == "__shared__":
        return _("thread {thread} of block {block} {verb} shared memory out of bounds on line {line}",
                 thread=thread, block=block, verb=verb, line=line)
    return _("thread {thread} of block {block} {verb} out of bounds on line {line}",
             thread=thread, block=block, verb=verb, line=line)


def triton_memcheck(exc: Exception, lines: Lines) -> Msg:
    """The memcheck stop of a Triton kernel in Triton's words: the program (``tl.program_id``
    along each axis, the block it runs as) and the reader's line with its source; the thread
    is the one the layout gives the element (``kernel.layout``), and the usual cause a mask."""
    site = getattr(exc, "site", None)
    line = lines.of(site) if site is not None else "?"
    if exc.thread is None:
        return _("the simulator's memcheck stopped the kernel on {line}", line=line)
    program, thread = triple(exc.block), int(exc.thread[0])
    if exc.verb is None:
        return _("program {program} makes a misaligned access on {line} (in the elements its thread {thread} holds)",
                 program=program, line=line, thread=thread)
    return _("program {program} {verb} out of bounds on {line}: its thread {thread} holds an element outside the "
             "array, and the mask (`mask=`) must leave out every such element", program=program,
             verb=VERBS[exc.verb], line=line, thread=thread)


def synccheck(exc: Exception, lines: Lines) -> Msg:
    line = _site_line(exc, lines)
    if exc.reached is None:
        return _("the simulator's synccheck stopped the kernel on line {line}", line=line)
    return _("__syncthreads() on line {line} is reached by {reached} of the {total} threads of block {block}: "
             "a barrier inside an if", line=line, reached=exc.reached, total=exc.threads, block=triple(exc.block))


def initcheck(exc: Exception, lines: Lines) -> Msg:
    line = _site_line(exc, lines)
    if exc.thread is None or exc.element is None:
        return _("the simulator's initcheck stopped the kernel on line {line}", line=line)
    fields = dict(thread=triple(exc.thread), block=triple(exc.block), element=exc.element, line=line)
    if getattr(exc, "atomic", False):
        return _("thread {thread} of block {block} updates shared {element} with an atomic on line {line}, "
                 "but no thread of its block gave it a first value", **fields)
    return _("thread {thread} of block {block} reads shared {element} on line {line}, "
             "which no thread of its block wrote", **fields)


def race(races: list[Race], lines: Lines) -> Msg:
    """'a race between warps 0 and 7 on line 6: warp 0 reads shared tile[255], which warp 7
    writes on line 5, …': the first record of ``races`` (a launch's ``stats.races``), with the
    hazards of them all, as compute-sanitizer's racecheck counts them (racing element
    accesses, ``Race.hazards``). The advice is ``__syncthreads()`` whenever any pair on the
    first record's array in its block crosses warps, ``__syncwarp()`` only when every one
    of them is inside a warp."""
    first = races[0]
    count = _n("{n:,} hazard in all", "{n:,} hazards in all", n=sum(r.hazards for r in races))
    across = any(r.across_warps for r in races if r.block == first.block and r.array == first.array)
    line = lines.number(first.site.filename, first.site.lineno)
    other = lines.number(first.other_site.filename, first.other_site.lineno) if first.other_site else "?"
    fields = dict(w=first.warp, o=first.other_warp, elem=f"{first.array}{first.where}", other=other)
    if first.inside_warp:
        fields = dict(lane=first.lane, o=first.other_lane, elem=fields["elem"], other=other)
        if first.atomic:
            if first.kind == "write-after-read":
                what = _("lane {lane} updates shared {elem} with an atomic, which lane {o} reads on line {other}", **fields)
            else:
                what = _("lane {lane} updates shared {elem} with an atomic, which lane {o} writes on line {other}",
                         **fields)
        elif first.other_atomic:
            if first.kind == "read-after-write":
                what = _("lane {lane} reads shared {elem}, which lane {o} updates with an atomic on line {other}",
                         **fields)
            else:
                what = _("lane {lane} writes shared {elem}, which lane {o} updates with an atomic on line {other}",
                         **fields)
        elif first.kind == "read-after-write":
            what = _("lane {lane} reads shared {elem}, which lane {o} writes on line {other}", **fields)
        elif first.kind == "write-after-read":
            what = _("lane {lane} overwrites shared {elem}, which lane {o} reads on line {other}", **fields)
        else:
            what = _("lanes {lane} and {o} both write shared {elem}, the other on line {other}", **fields)
        if across:
            return _("a race inside warp {w} on line {line}: {what}; other warps race on {array} in this block too, "
                     "so it needs __syncthreads() between ({count})", w=first.warp, line=line, what=what,
                     array=first.array, count=count)
        return _("a race inside warp {w} on line {line}: {what}; its lanes are not in lockstep, so it needs "
                 "__syncwarp() between ({count})", w=first.warp, line=line, what=what, count=count)
    if first.atomic:
        if first.kind == "write-after-read":
            what = _("warp {w} updates shared {elem} with an atomic, which warp {o} reads on line {other}", **fields)
        else:
            what = _("warp {w} updates shared {elem} with an atomic, which warp {o} writes on line {other}", **fields)
    elif first.other_atomic:
        if first.kind == "read-after-write":
            what = _("warp {w} reads shared {elem}, which warp {o} updates with an atomic on line {other}", **fields)
        else:
            what = _("warp {w} writes shared {elem}, which warp {o} updates with an atomic on line {other}", **fields)
    elif first.kind == "read-after-write":
        what = _("warp {w} reads shared {elem}, which warp {o} writes on line {other}", **fields)
    elif first.kind == "write-after-read":
        what = _("warp {w} overwrites shared {elem}, which warp {o} reads on line {other}", **fields)
    else:
        what = _("warps {w} and {o} both write shared {elem}, the other on line {other}", **fields)
    return _("a race between warps {a} and {b} on line {line}: {what}, with no __syncthreads() between "
             "({count})", a=min(first.warp, first.other_warp),
             b=max(first.warp, first.other_warp), line=line, what=what, count=count)
