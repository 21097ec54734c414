"""Diagnostics: the errors and hazard reports, worded like NVIDIA's compute-sanitizer.

* ``LaunchError``: an invalid launch, raised before any thread runs (the CUDA error name
  comes first, as ``cudaGetErrorName`` would print it).
* ``MemcheckError``: an out-of-bounds or misaligned access (``memcheck``).
* ``SynccheckError``: ``__syncthreads()`` reached by only part of a block's non-exited threads
  (``synccheck``); threads that exited (``return``) are not waited for.
* ``InitcheckError``: a read of a ``__shared__`` word no thread of the block wrote (an atomic
  on it too: it starts from the word's value, so a shared histogram nobody zeroed). The real
  ``initcheck`` looks at *global* memory (``cudaMalloc`` without a write); shared memory is
  where a tile that was never filled goes unnoticed in a simulator, so that is what this
  one checks.
* ``Race``: one shared-memory hazard inside a block (``racecheck``): read-after-write,
  write-after-read or write-after-write, between two warps with no ``__syncthreads`` between
  them, or between two lanes of one warp with no ``__syncwarp`` (or ``__syncthreads``)
  between them. Races are recorded, not raised: the simulated result is one valid order
  (warps in turn, lanes in turn), but a real GPU may pick another.

``launch(..., tools=...)`` chooses which checks run, like ``compute-sanitizer --tool``.

What orders two shared-memory accesses, as the CUDA Programming Guide's section on
independent thread scheduling (compute capability 7.0 and later) has it, and as both
engines check it:

* ``__syncthreads()`` orders everything before it with everything after it, in its block.
* ``__syncwarp()`` orders what a lane that executes it did before with everything its warp
  does after. (A lane outside the ``__syncwarp`` that touches the element afterwards is not
  caught: the check errs towards silence there, never towards a false alarm.)
* Nothing else does: lanes of one warp are not in lockstep, and shuffles and votes exchange
  registers, not shared memory. Two lanes of one *instruction* writing one element are not
  a hazard (the hardware serialises them; one value stays), nor is a lane reading back what
  it wrote itself.
* Atomics order only against atomics: two atomics on one element are never a hazard, but an
  atomic and a plain load or store of the same element by another thread (another warp, or
  another lane of the same warp with no ``__syncwarp`` between) in one phase is, either way
  round. A shared histogram read out with no ``__syncthreads()`` after its ``atomicAdd`` calls
  reads counts that may still grow. compute-sanitizer's racecheck does not report this
  pair (measured for the course: "racecheck does not flag a plain write racing with an
  atomicAdd"); the simulator does, so it is stricter than the tool here, on purpose.

**Hazard count.** compute-sanitizer's racecheck prints, for each pair of racing
instructions, how many hazards it saw ("Race reported between Read access at … and Write
access at … [3968 hazards]", as a racecheck run quoted in kokkos/kokkos#4855 reads). Here a record (``Race``) is one block and one access pair
(this instruction, the kind of hazard, and which side is an atomic); its ``hazards`` is the
number of *racing element accesses* of this instruction in that block: each active lane's
access of each element (a ``width=4`` access is four) that meets an unordered access of
that kind by another thread counts once, however many other threads it meets.
``across_warps`` counts those of them that meet another warp (the rest meet only a lane of
their own warp). ``Stats.hazards`` is the sum over the records.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

import numpy as np


class SimulatorError(Exception):
    """Base class of every error a kernel or a launch can raise in the simulator.

    Beside its message, a sanitizer error says where as data (None when it does not apply):
    ``site``, the first offending ``thread`` and its ``block`` (``threadIdx``/``blockIdx``
    tuples); a memcheck error also the ``space`` ("__global__"/"__shared__") and ``verb``
    of an out-of-bounds access, an initcheck error the shared ``element``, a synccheck
    error how many threads ``reached`` the barrier of how many (``threads``).
    """

    site = thread = block = space = verb = element = reached = threads = None

    def at(self, **facts) -> "SimulatorError":
        for name, value in facts.items():
            setattr(self, name, value)
        return self


class LaunchError(SimulatorError, ValueError):
    """An invalid launch configuration, found before any thread ran."""


class MemcheckError(SimulatorError, IndexError):
    """An invalid global or shared memory access (out of bounds, negative or misaligned)."""


class SynccheckError(SimulatorError):
    """A barrier that only some threads of a block reached."""


class InitcheckError(SimulatorError):
    """A shared-memory read of a word that no thread of the block had written."""


@dataclass(frozen=True)
class Site:
    """Where a warp instruction comes from: the kernel's source line."""

    kernel: str
    filename: str
    lineno: int
    source: str

    def __str__(self) -> str:
        text = f": {self.source}" if self.source else ""
        return f"{self.kernel} (line {self.lineno}{text})"


#: The checks ``launch(..., tools=...)`` can turn on, as ``compute-sanitizer --tool`` names them.
TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")

RACE_KINDS = ("read-after-write", "write-after-read", "write-after-write")
#: The access pairs a race record can be, in the order of ``stats.races`` inside one
#: instruction: (kind, this access is an atomic, the other access is an atomic). Two
#: atomics never race.
RACE_PAIRS = (("read-after-write", False, False), ("write-after-read", False, False),
              ("write-after-write", False, False), ("read-after-write", False, True),
              ("write-after-write", False, True), ("write-after-read", True, False),
              ("write-after-write", True, False))


@dataclass(frozen=True)
class Race:
    """A shared-memory hazard inside one block and one barrier phase, between two warps or
    between two lanes of one warp.

    ``kind`` is ``"read-after-write"`` (``warp`` read a word ``other_warp`` had written),
    ``"write-after-read"`` (``warp`` overwrote a word ``other_warp`` had read) or
    ``"write-after-write"`` (both wrote it: which value stays depends on their order).
    ``site`` is this access; ``other_site`` the latest earlier access of the other kind
    (the latest write for the two ``-after-write`` kinds), as racecheck names both lines.

    Inside a warp (``other_warp == warp``), ``lane`` and ``other_lane`` name the two lanes:
    since Volta the lanes of a warp are scheduled independently, so nothing orders them
    but ``__syncwarp`` or ``__syncthreads``; between warps they are None.

    ``atomic``: this access is an atomic (it races a plain read or write); ``other_atomic``:
    the other one is (a plain read or write races atomics). ``hazards``: how many element
    accesses of this instruction in this block race this way, ``across_warps`` how many of
    them race another warp (see the module's *Hazard count*); the access named is the
    first of them (the lowest thread), named between warps when it races both ways.
    """

    kind: str
    block: tuple[int, int, int]
    warp: int
    other_warp: int
    array: str
    address: int  # flat element index
    site: Site
    index: str = ""  # the element as the kernel indexes it, e.g. "[1][0]"
    other_site: Site | None = None
    lane: int | None = None
    other_lane: int | None = None
    atomic: bool = False
    other_atomic: bool = False
    hazards: int = 1
    across_warps: int = 0

    @property
    def where(self) -> str:
        return self.index or f"[{self.address}]"

    @property
    def inside_warp(self) -> bool:
        return self.lane is not None

    @property
    def pair(self) -> int:
        """This record's place in ``RACE_PAIRS``."""
        return RACE_PAIRS.index((self.kind, self.atomic, self.other_atomic))

    @property
    def message(self) -> str:
        verb = "atomically updates" if self.atomic else {"read-after-write": "reads"}.get(self.kind, "writes")
        earlier = "atomically updated" if self.other_atomic else \
            {"write-after-read": "read"}.get(self.kind, "written")
        line = f" at line {self.other_site.lineno}" if self.other_site else ""
        if self.inside_warp:
            return (f"lane {self.lane} of warp {self.warp} {verb} shared {self.array}{self.where}, {earlier} in this "
                    f"phase by lane {self.other_lane} of the same warp{line}, with no __syncwarp or sync between")
        what = f"{verb} shared {self.array}{self.where}, {earlier} in this phase by warp {self.other_warp}{line}"
        return f"warp {self.warp} {what}, with no sync between"

    def __str__(self) -> str:
        b = ",".join(map(str, self.block))
        count = f"{self.hazards:,} hazard" + ("" if self.hazards == 1 else "s")
        return f"{self.kind} hazard in block ({b}) at {self.site}: {self.message} [{count}]"


def fmt3(v) -> str:
    return "(" + ",".join(str(int(x)) for x in v) + ")"


def span(values) -> str:
    """'7' for one value, '232–255' for a run, '1, 5, 9' for a few scattered ones."""
    values = sorted(set(int(v) for v in values))
    if len(values) == 1:
        return str(values[0])
    if values[-1] - values[0] + 1 == len(values):
        return f"{values[0]}–{values[-1]}"
    head = ", ".join(map(str, values[:6]))
    return head + (", …" if len(values) > 6 else "")


def index_text(element: int, shape) -> str:
    """'[1][0]' for element 33 of a (32, 33) array: the index as the kernel wrote it."""
    return "".join(f"[{int(i)}]" for i in np.unravel_index(element, shape))


def name_in_kernel(array, site: Site) -> str:
    """The kernel's own name for an array ('a' rather than 'array'), for error messages."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != site.filename:
        frame = frame.f_back
    if frame is not None:
        for name, value in frame.f_locals.items():
            if value is array:
                return name
    return "array"


# -- the sanitizer's messages, worded once for both engines ---------------------------------


def not_global_array(array, site: Site) -> Exception:
    """A global access whose array is not a C-contiguous numpy array, named as the kernel names it."""
    name = name_in_kernel(array, site)
    if not isinstance(array, np.ndarray):
        return TypeError(f"{site}: global memory must be a numpy array, but {name} is a {type(array).__name__}")
    return ValueError(f"{site}: global array {name} must be C-contiguous, but it is a strided view "
                      f"(shape {array.shape}, strides {array.strides} bytes): pass np.ascontiguousarray({name})")


def misaligned(lane_bytes: int, where: str, site: Site, thread, block) -> MemcheckError:
    """memcheck: an access not aligned to its size (``where`` says which address)."""
    return MemcheckError(f"cudaErrorMisalignedAddress: misaligned {lane_bytes}-byte {where}\n    at {site}\n"
                         f"    by thread {fmt3(thread)} in block {fmt3(block)}").at(
        site=site, thread=tuple(thread), block=tuple(block))


def out_of_bounds(space: str, verb: str, lane_bytes: int, site: Site, thread, block, index: int, what: str,
                  threads, touched: str) -> MemcheckError:
    """memcheck: ``thread`` of ``block`` (the first of ``threads``) accesses element ``index``,
    outside its array (``what`` says how); ``touched`` names the elements all of them reach."""
    return MemcheckError(
        f"Invalid {space} {verb} of size {lane_bytes} bytes\n"
        f"    at {site}\n"
        f"    by thread {fmt3(thread)} in block {fmt3(block)}\n"
        f"    index {index} is out of bounds: {what}\n"
        f"    in block {fmt3(block)}, threads {span(threads)} {verb} {touched}"
    ).at(site=site, thread=tuple(thread), block=tuple(block), space=space, verb=verb)


#: How an error names the axes of a 2-D and a 3-D array, in the order C indexes them.
AXIS_NAMES = {2: ("row", "column"), 3: ("z", "y", "x")}


def outside(name: str, shape, axis: int | None, value: int, dtype=None) -> str:
    """Why ``value`` is out of bounds, in the reader's terms: "column -1 of A[10][20]: A has
    20 columns", "x = 64 of u[4][8][64]: u has 64 along x", "a has 300 elements". ``axis``
    is None for a flat index; ``dtype`` is the index's, named when it is narrower than C's
    ``int`` (arithmetic in it wraps around where C's would not)."""
    dims = "".join(f"[{n}]" for n in shape)
    if axis is None:
        what = f"{name} has {int(np.prod(shape)):,} elements"
    else:
        n = shape[axis]
        words = AXIS_NAMES.get(len(shape))
        if len(shape) == 2:
            what = f"{words[axis]} {value} of {name}{dims}: {name} has {n:,} {words[axis]}s"
        else:
            axis_name = words[axis] if words else f"axis {axis}"
            what = f"{axis_name} = {value} of {name}{dims}: {name} has {n:,} along {axis_name}"
        what += f" (dimension {axis} of {name} has {n})"
    if dtype is not None and np.dtype(dtype).kind in "iu" and np.dtype(dtype).itemsize < 4:
        what += "; " + narrow_index("blk", dtype)
    return what


#: The C names of the narrow integer types (an index's type in C's words).
C_NAMES = {np.dtype(np.int8): "signed char", np.dtype(np.uint8): "unsigned char", np.dtype(np.int16): "short",
           np.dtype(np.uint16): "unsigned short"}

#: Why a narrow index went wrong and what to do, in the words of each way of writing a kernel:
#: the ``blk`` API computes in the array's dtype (numpy's rules), the numba dialect in int64
#: (a value is narrow only as it was loaded or converted), CUDA C in int (C's promotions).
NARROW_INDEX = {
    "blk": "the index is {dtype}, which holds only {lo}..{hi}: numpy wraps {dtype} arithmetic around, "
           "where C computes in int (widen it with .astype(np.int32))",
    "numba": "the index is {dtype}, which holds only {lo}..{hi}: a value outside that range wrapped around "
             "where it became {dtype} (numba's arithmetic is int64; convert with np.int32(…), or keep such "
             "values in an int32 array)",
    "c": "the index is a {c_type}, which holds only {lo}..{hi}: a value outside that range wrapped around "
         "where it became a {c_type} (C computes in int; keep such values in an int, or an int array)",
}


def narrow_index(language: str, dtype) -> str:
    """The note on an index of a narrow integer type, in ``language``'s words."""
    dt = np.dtype(dtype)
    info = np.iinfo(dt)
    return NARROW_INDEX[language].format(dtype=dt, c_type=C_NAMES[dt], lo=info.min, hi=info.max)


#: The ``blk`` note as the engine writes it, made from its template (its first {dtype} named).
_BLK_NOTE = re.compile(re.escape(NARROW_INDEX["blk"]).replace(re.escape("{dtype}"), r"(?P<dtype>u?int\d+)", 1)
                       .replace(re.escape("{dtype}"), r"u?int\d+").replace(re.escape("{lo}"), r"-?\d+")
                       .replace(re.escape("{hi}"), r"\d+"))


def in_language(exc: "SimulatorError", language: str) -> "SimulatorError":
    """``exc`` with its note on a narrow index (see :func:`outside`) in the words of the
    kernel's ``language`` ("blk", "numba" or "c"): the engine writes it for the ``blk`` API,
    and a compiled kernel's launch hands its errors through here."""
    if language != "blk" and exc.args and isinstance(exc.args[0], str):
        say = lambda m: narrow_index(language, m.group("dtype"))  # noqa: E731
        exc.args = (_BLK_NOTE.sub(say, exc.args[0]),) + exc.args[1:]
    return exc


def element(name: str, parts) -> str:
    """'A[3][-1]': an element as the kernel indexes it, from its index on every axis."""
    return name + "".join(f"[{int(p)}]" for p in parts)


def uninitialized(lane_bytes: int, site: Site, thread, block, element: str, atomic: bool = False) -> InitcheckError:
    """initcheck: a read of shared ``element`` (e.g. ``s[63]``) that no thread of the block
    wrote; ``atomic``: the read of an atomic, which adds to (or compares with) that value."""
    by_atomic = " by an atomic (which starts from the element's value)" if atomic else ""
    return InitcheckError(
        f"Uninitialized __shared__ memory read of size {lane_bytes} bytes{by_atomic}\n"
        f"    at {site}\n"
        f"    by thread {fmt3(thread)} in block {fmt3(block)}\n"
        f"    shared {element} was never written by this block\n"
        f"    (turn this check off with launch(..., tools=...) without \"initcheck\")"
    ).at(site=site, thread=tuple(thread), block=tuple(block), element=element, atomic=atomic)


def divergent_barrier(reached: int, threads: int, block, site: Site, missing, exited: int = 0) -> SynccheckError:
    """synccheck: ``__syncthreads()`` reached by only part of a block's non-exited threads
    (``threads`` of them; ``exited`` more returned before it and are not waited for)."""
    gone = f" ({exited} threads of the block exited before it)" if exited else ""
    return SynccheckError(
        f"Barrier error: __syncthreads() reached by {reached} of {threads} {'non-exited ' if exited else ''}threads "
        f"of block {fmt3(block)} (divergent code)\n    at {site}\n"
        f"    threads {span(missing)} of the block never arrive{gone}"
    ).at(site=site, block=tuple(block), reached=reached, threads=threads)


def exited_thread(site: Site, thread, block) -> SimulatorError:
    """An instruction whose mask names a thread that has exited (``blk.exit``)."""
    return SimulatorError(
        f"thread {fmt3(thread)} of block {fmt3(block)} exited (blk.exit) and cannot execute this instruction\n"
        f"    at {site}\n"
        f"    an exited thread runs nothing more: leave the threads that exited out of every later mask"
    ).at(site=site, thread=tuple(thread), block=tuple(block))


def inactive_source(name: str, site: Site, block, threads, sources) -> SimulatorError:
    """A shuffle that reads a lane outside the mask or past the end of the block."""
    return SimulatorError(
        f"{name} reads a lane that does not take part\n    at {site}\n"
        f"    in block {fmt3(block)}, threads {span(threads)} read from threads {span(sources)}, "
        f"which are outside the mask or past the end of the block; on a GPU that value is undefined"
    )
