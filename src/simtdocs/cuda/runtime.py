"""What the compiled mask form calls besides ``blk``: masks, merges, per-thread storage.

None of these is a warp instruction: every counted instruction is a ``blk`` method called
from the kernel's own frame (``blk._site()`` finds the reader's line there). These helpers
only combine masks and values with numpy, the way the compiler's register allocator and
predication would.

Masks: ``None`` is "every thread the function was entered with"; otherwise a bool array of
shape (1, T) or (B, T). Exit sets (lanes that returned, broke out of or continued a loop)
start as ``False`` (no lane). Every helper returns a new array: nothing is updated in place,
so an engine memo keyed by an array's identity can never go stale.
"""

from __future__ import annotations

import builtins
import functools
import math
import sys

import numpy as np

from ..diagnostics import MemcheckError, SimulatorError
from ..threads import complement_mask, scattered_like, select_by_bits

i64, f64, i32 = np.int64, np.float64, np.int32


def any_(m) -> bool:
    """Whether a mask has an active lane (None: all have)."""
    if m is None:
        return True
    lanes = getattr(m, "lanes", None)  # a mask blk.branch returned knows its lanes
    return lanes.count > 0 if lanes is not None else bool(np.asarray(m).any())


def else_(m, taken):
    """The lanes of ``m`` that do not take the branch whose taken lanes are ``taken``. Under
    every lane, the complement of a branch's mask knows it is one (``complement_mask``); inside
    another mask, it is marked scattered when the branch's lanes are (``scattered_like``)."""
    if m is None:
        return complement_mask(taken)
    return scattered_like(m & np.logical_not(taken), taken)


def and_(m, c):
    """``m`` restricted to ``c``: the lanes of a pure ``a and b`` that go on."""
    c = np.asarray(c, dtype=bool)
    return c if m is None else m & c


def or_(exits, m):
    """Add the lanes of mask ``m`` to the exit set ``exits``."""
    if m is None:
        return True
    if exits is False:
        return m
    if exits is True:
        return True
    return exits | m


def without(m, *exits):
    """``m`` minus the lanes of every exit set."""
    for x in exits:
        if x is False:
            continue
        if x is True:
            return np.False_
        m = np.logical_not(x) if m is None else m & np.logical_not(x)
    return m


def sel(m, new, old):
    """``new`` where ``m``, else ``old``: an assignment under a mask (a new array)."""
    if m is None:
        return new
    if isinstance(new, tuple):  # a tuple per thread (x, y = …, a device function's pair)
        return tuple(sel(m, n, o) for n, o in zip(new, old if isinstance(old, tuple) else (old,) * len(new)))
    if old is None:
        old = np.zeros_like(np.asarray(new))
    by_bits = select_by_bits(m, new, old)  # a branch's scattered lanes: the same values
    return np.where(m, new, old) if by_bits is None else by_bits


def fork(taken, arms, values, old, outer=None):
    """``x = new`` where ``taken`` and ``x = other`` elsewhere, ``(new, other) = arms(*values)``:
    an ``if``/``else`` under every lane whose sides both assign ``x`` from lane arithmetic
    (``compiler.fork``). One select, ``where(taken, new, other)``, where the two sides' merges
    (``sel(taken, new, old)``, then ``sel(~taken, other, …)``) were two; made so only when that
    is exactly their result, the same shape and dtype (``old``'s dtype widens nothing), else as
    the two merges. Inside a mask ``outer`` (``taken`` lies in it) the lanes outside keep
    ``old``: ``where(outer, where(taken, new, other), old)``. Over millions of lanes the arms
    are worked out and selected a slice of blocks at a time (``_fork_by_slices``): lane
    arithmetic gives each lane the same value whatever else is in the array."""
    done = _fork_by_slices(taken, arms, values, old, outer)
    if done is not None:
        return done
    new, other = arms(*values)
    if _one_select(taken, new, other, old):
        chosen = sel(taken, new, other)
        return chosen if outer is None else sel(outer, chosen, _kept(old, new))
    return sel(else_(outer, taken), other, sel(taken, new, old))


def _kept(old, new):
    """What the lanes outside an ``if``/``else`` keep: ``old``, or (a variable not yet
    assigned) the zeros of ``new``'s type that ``sel`` fills in."""
    return old if old is not None else np.zeros((), np.asarray(new).dtype)[()]


def _one_select(taken, new, other, old) -> bool:
    """Whether ``where(taken, new, other)`` is what the two merges of ``fork`` make."""
    plain = (np.ndarray, np.generic)
    if not (isinstance(taken, np.ndarray) and isinstance(new, plain) and isinstance(other, plain)):
        return False
    if old is None:  # a variable not yet assigned: sel fills the idle lanes with zeros of new's type
        return True
    if not isinstance(old, plain):
        return False
    d = np.result_type(new, other)
    shapes = (np.shape(taken), np.shape(new), np.shape(other))
    return np.result_type(new, old) == d and np.result_type(d, other) == d \
        and np.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes, np.shape(old))


#: Lanes ``fork`` works on at once: a few arrays of them fit in a core's cache.
FORK_LANES = 1 << 18


def _fork_by_slices(taken, arms, values, old, outer=None):
    """``fork`` a slice of blocks at a time, or None where it does not apply: a pass of fewer
    than two slices, a value that is not a per-thread array ((B, T), (B, 1) or (1, T)) or a
    scalar, or arms whose values are not plain numbers."""
    if not isinstance(taken, np.ndarray) or taken.ndim != 2 or taken.size < 2 * FORK_LANES:
        return None
    B, T = taken.shape
    for v in values:
        if isinstance(v, np.ndarray) and not (v.ndim == 2 and v.shape[0] in (1, B) and v.shape[1] in (1, T)) \
                or not isinstance(v, (np.ndarray, np.generic, int, float, bool)):
            return None
    if old is not None and not (isinstance(old, np.generic) or isinstance(old, np.ndarray) and old.ndim == 2
                                and old.shape[0] in (1, B) and old.shape[1] in (1, T)):
        return None
    rows = max(1, FORK_LANES // T)
    lanes = getattr(taken, "lanes", None)
    bits = lanes is not None and lanes.mask is not None and lanes.mask.shape == taken.shape and lanes.scattered
    if outer is not None and not (isinstance(outer, np.ndarray) and outer.shape == taken.shape):
        return None
    m = np.asarray(taken)
    out = None
    for b0 in range(0, B, rows):
        b1 = min(B, b0 + rows)
        part = tuple(v[b0:b1] if isinstance(v, np.ndarray) and v.shape[0] == B > 1 else v for v in values)
        new, other = arms(*part)
        if out is None:  # the first slice: the dtype, and whether one select is the merges' result
            if not _one_select(m[b0:b1], new, other, old):
                return None
            d = np.result_type(new, other)
            out = np.empty((B, T), d)
            u = _UNSIGNED.get(d.itemsize) if d.kind in "biuf" and d.isnative else None
            keep = np.empty((rows, T), u) if bits and u is not None else None
        o, mm = out[b0:b1], m[b0:b1]
        if keep is not None and getattr(new, "dtype", None) == d and getattr(other, "dtype", None) == d:
            k = keep[:b1 - b0]
            k[...] = mm.view(np.uint8)
            np.negative(k, out=k)  # the slice's lanes that take the if: all ones
            x, y, ou = _bits(new, u), _bits(other, u), o.view(u)
            np.bitwise_xor(x, y, out=ou)
            np.bitwise_and(ou, k, out=ou)
            np.bitwise_xor(ou, y, out=ou)
        else:
            o[...] = np.where(mm, new, other)
        inside = None if outer is None else np.asarray(outer)[b0:b1]
        if inside is not None and not inside.all():  # the lanes outside the if/else keep their values
            kept = _kept(old, new)
            o[...] = np.where(inside, o, kept[b0:b1] if np.ndim(kept) and kept.shape[0] == B > 1 else kept)
    return out


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _bits(v, u):
    return np.asarray(v).view(u) if isinstance(v, np.ndarray) else v.view(u)


def cast(v, name: str):
    """``v`` as the type numba gives a variable where its values meet (``inference.Types``):
    a float32 value that meets a float64 one becomes float64. It only ever widens; a
    narrowing would mean the inference went wrong."""
    if v is None:  # a variable no lane has assigned yet (Compiler.undefined)
        return v
    t = _named(name)
    dt = getattr(v, "dtype", None)
    if dt is None:  # a Python scalar (cuda.warpsize, a bool literal)
        return t.type(v)
    if dt == t:
        return v
    if np.result_type(dt, t) != t:
        raise AssertionError(f"internal error: the type inference made a {t} variable of a {dt} value")
    return v.astype(t) if isinstance(v, np.ndarray) else t.type(v)


def as_(v, name: str):
    """A variable read as numba's type there, where the array holding it is wider (a float32
    value assigned under a mask into a float64 variable): exact for the lanes that read it."""
    t = _named(name)
    if v is None or getattr(v, "dtype", None) == t:
        return v
    return v.astype(t) if isinstance(v, np.ndarray) else t.type(v)


def narrow(v, array):
    """A value loaded from ``array`` in the array's own integer type (numba's), where the
    engine widened an int8/int16 to int32 as C would (``promotion``)."""
    dt = getattr(array, "dtype", None)
    if dt is not None and dt.kind in "iu" and dt.itemsize < 4 and getattr(v, "dtype", dt) != dt:
        return v.astype(dt)
    return v


@functools.lru_cache(maxsize=None)
def _named(name: str) -> np.dtype:
    return np.dtype(name)


def truth(c):
    """A condition as a bool per thread (numba: nonzero is true)."""
    return np.asarray(c, dtype=bool) if not isinstance(c, (bool, np.bool_)) else c


def not_(c):
    return np.logical_not(c)


def select(c, a, b):
    """``a if c else b`` with no memory access on either side: a select, not a branch."""
    if isinstance(c, (bool, np.bool_)):
        return a if c else b
    return np.where(c, a, b)


def range_cond(i, stop, step):
    """The test of ``for i in range(start, stop, step)`` for each thread."""
    if np.ndim(step) == 0:
        return i < stop if step > 0 else i > stop
    return np.where(step > 0, i < stop, i > stop)


def urange(*args):
    """``range`` whose values are int64, as numba types a range index."""
    for k in range(*(int(a) for a in args)):
        yield np.int64(k)


# -- builtins and math, per thread -----------------------------------------------------------------


def int_(x):
    """``int(x)``: truncation toward zero, int64."""
    if isinstance(x, np.ndarray):
        return x.astype(np.int64) if x.dtype.kind in "iub" else np.trunc(x).astype(np.int64)
    return np.int64(builtins.int(x))


def float_(x):
    return x.astype(np.float64) if isinstance(x, np.ndarray) else np.float64(x)


def complex_(real=0.0, imag=0.0):
    """``complex(re, im)``: complex128 per thread, as numba types it."""
    return np.asarray(real, np.float64) + 1j * np.asarray(imag, np.float64) if np.ndim(real) or np.ndim(imag) \
        else np.complex128(complex(real, imag))


def bool_(x):
    return truth(x)


def _reduce(f, args):
    if len(args) == 1:
        args = tuple(args[0])
    out = args[0]
    for a in args[1:]:
        out = f(out, a)
    return out


def min_(*args):
    return _reduce(np.minimum, args)


def max_(*args):
    return _reduce(np.maximum, args)


def round_(x, n=None):
    if n is not None:
        return np.round(x, int(n))
    return int_(np.rint(x))


def floor_(x):
    """``math.floor``: an int64 in numba."""
    return int_(np.floor(x))


def ceil_(x):
    return int_(np.ceil(x))


def trunc_(x):
    return int_(np.trunc(x))


def _vectorize(f):
    v = np.vectorize(f, otypes=[np.float64])

    def g(*args):
        if all(np.ndim(a) == 0 for a in args):
            return np.float64(f(*args))
        return v(*args)
    g.__name__ = f.__name__
    return g


MATH = {  # math.<name> -> what computes it per thread (numba keeps float32 for float32 inputs)
    "sqrt": np.sqrt, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "fabs": np.fabs,
    "hypot": np.hypot, "pow": np.power, "copysign": np.copysign, "fmod": np.fmod, "isnan": np.isnan,
    "isinf": np.isinf, "isfinite": np.isfinite, "floor": floor_, "ceil": ceil_, "trunc": trunc_,
    "erf": _vectorize(math.erf), "erfc": _vectorize(math.erfc), "gamma": _vectorize(math.gamma),
    "lgamma": _vectorize(math.lgamma), "degrees": np.degrees, "radians": np.radians,
    "ldexp": np.ldexp, "frexp": np.frexp, "remainder": np.remainder,
}


def popc(x):
    """``cuda.popc``: set bits of an integer."""
    return np.bitwise_count(np.asarray(x)).astype(np.int32) if np.ndim(x) else np.int32(builtins.int(x).bit_count() if builtins.int(x) >= 0 else np.bitwise_count(x))


def brev(x):
    """``cuda.brev``: the bits of a 32- or 64-bit integer reversed."""
    a = np.asarray(x)
    bits = 64 if a.dtype.itemsize == 8 else 32
    u = a.astype(np.uint64 if bits == 64 else np.uint32)
    out = np.zeros_like(u)
    for k in range(bits):
        out |= ((u >> type(u.flat[0])(k)) & type(u.flat[0])(1)) << type(u.flat[0])(bits - 1 - k)
    return out if np.ndim(x) else out[()]


def clz(x):
    """``cuda.clz``: leading zero bits (32 or 64 by the input's size)."""
    a = np.asarray(x)
    bits = 64 if a.dtype.itemsize == 8 else 32
    u = a.astype(np.uint64 if bits == 64 else np.uint32)
    n = np.full(u.shape, bits, np.int32)
    for k in range(bits):
        n = np.where((u >> np.uint64(k)).astype(bool), np.int32(bits - 1 - k), n)
    return n if np.ndim(x) else n[()]


def ffs(x):
    """``cuda.ffs``: 1 + the position of the lowest set bit, 0 when none."""
    a = np.asarray(x)
    bits = 64 if a.dtype.itemsize == 8 else 32
    u = a.astype(np.uint64 if bits == 64 else np.uint32)
    n = np.zeros(u.shape, np.int32)
    for k in reversed(range(bits)):
        n = np.where((u >> np.uint64(k)) & np.uint64(1) == 1, np.int32(k + 1), n)
    return n if np.ndim(x) else n[()]


def fma(a, b, c):
    return a * b + c


def cbrt(x):
    return np.cbrt(x)


def lanemask_lt(blk):
    return ((np.uint32(1) << blk.lane.astype(np.uint32)) - np.uint32(1)).astype(np.uint32)


def activemask(blk, m):
    """``cuda.activemask()``: the warp's active lanes as a uint32 (no instruction counted)."""
    T = blk.nthreads
    active = np.ones((1, T), bool) if m is None else np.broadcast_to(np.asarray(m, bool), (np.shape(m)[0] if np.ndim(m) == 2 else 1, T))
    warps = -(-T // 32)
    pad = np.zeros((active.shape[0], warps * 32), bool)
    pad[:, :T] = active
    bits = (pad.reshape(active.shape[0], warps, 32).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(2)
    return np.repeat(bits.astype(np.uint32), 32, axis=1)[:, :T]


def shfl_up_source(blk, delta):
    """The source lane of ``shfl_up_sync`` with a per-thread ``delta``: a lane before 0 keeps its own."""
    src = blk.lane - delta
    return np.where(src >= 0, src, blk.lane)


def shfl_down_source(blk, delta):
    src = blk.lane + delta
    return np.where(src < 32, src, blk.lane)


def shfl_xor_source(blk, lane_mask):
    src = blk.lane ^ lane_mask
    return np.where((src >= 0) & (src < 32), src, blk.lane)


def block_reduce(blk, pred, m, how):
    """``syncthreads_count/and/or``: the predicate combined over the block's threads that reached it."""
    p = np.broadcast_to(np.asarray(pred, bool), (blk.nblocks, blk.nthreads))
    active = np.ones_like(p) if m is None else np.broadcast_to(np.asarray(m, bool), p.shape)
    if how == "count":
        out = np.count_nonzero(p & active, axis=1).astype(np.int32)
    elif how == "and":
        out = (~(active & ~p).any(axis=1)).astype(np.int32)
    else:
        out = (p & active).any(axis=1).astype(np.int32)
    return out[:, None]


# -- per-thread and constant arrays --------------------------------------------------------------


class Local:
    """``cuda.local.array``: each thread's own array, kept as (blocks, threads, *shape).

    Local memory is private to a thread, so it is not counted as global traffic here.
    """

    def __init__(self, blk, shape, dtype):
        shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
        self.shape, self.dtype = shape, np.dtype(dtype)
        self.data = np.zeros((blk.nblocks, blk.nthreads) + shape, self.dtype)
        self.size = int(np.prod(shape))
        self.ndim = len(shape)
        self.name = "local"

    def __len__(self):
        return self.shape[0]


def _where(depth=2):
    f = sys._getframe(depth)
    import linecache
    return f"{f.f_code.co_name} (line {f.f_lineno}: {linecache.getline(f.f_code.co_filename, f.f_lineno).strip()})"


def _local_index(arr, index, m, verb):
    parts = index if isinstance(index, tuple) else (index,)
    if len(parts) != len(arr.shape):
        raise IndexError(f"{_where(3)}: {len(parts)} indices for a local array of {len(arr.shape)} dimensions")
    B, T = arr.data.shape[:2]
    out = []
    for axis, (p, n) in enumerate(zip(parts, arr.shape)):
        p = np.asarray(p)
        if p.dtype.kind not in "iu":
            raise TypeError(f"{_where(3)}: index of a local array must be an integer, got dtype {p.dtype}")
        bad = (p < 0) | (p >= n)
        if np.ndim(p) and m is not None:
            bad = bad & m
        elif np.ndim(p) == 0 and m is not None and not np.any(m):
            bad = False
        if np.any(bad):
            v = p if np.ndim(p) == 0 else np.broadcast_to(p, (B, T))[np.broadcast_to(bad, (B, T))][0]
            raise MemcheckError(f"Invalid local {verb} at {_where(3)}: index {int(v)} of a local array of "
                                f"shape {arr.shape} (axis {axis} has {n})")
        out.append(p)
    return out


def local_load(arr, index, m=None):
    """``l[index]`` for every thread (its own copy of ``l``)."""
    parts = _local_index(arr, index, m, "read")
    if all(np.ndim(p) == 0 for p in parts):
        return arr.data[(slice(None), slice(None)) + tuple(int(p) for p in parts)].copy()
    B, T = arr.data.shape[:2]
    bb, tt = np.arange(B)[:, None], np.arange(T)[None, :]
    safe = [np.clip(np.broadcast_to(p, (B, T)), 0, n - 1) for p, n in zip(parts, arr.shape)]
    return arr.data[(bb, tt) + tuple(safe)]


def local_store(arr, index, value, m=None):
    """``l[index] = value`` for the threads of ``m``."""
    parts = _local_index(arr, index, m, "write")
    B, T = arr.data.shape[:2]
    value = np.broadcast_to(np.asarray(value), (B, T)).astype(arr.dtype, copy=False)
    if all(np.ndim(p) == 0 for p in parts):
        key = (slice(None), slice(None)) + tuple(int(p) for p in parts)
        arr.data[key] = value if m is None else np.where(m, value, arr.data[key])
        return
    bb, tt = np.broadcast_arrays(np.arange(B)[:, None], np.arange(T)[None, :])
    idx = [np.broadcast_to(p, (B, T)) for p in parts]
    act = np.ones((B, T), bool) if m is None else np.broadcast_to(np.asarray(m, bool), (B, T))
    arr.data[(bb[act], tt[act]) + tuple(i[act] for i in idx)] = value[act]


def const_load(arr, index, m=None):
    """A read of constant memory (``cuda.const.array_like``, or a global array the kernel names):
    served by the constant cache, so not counted as global traffic; out of bounds is an error."""
    arr = np.asarray(arr)
    parts = index if isinstance(index, tuple) else (index,)
    if len(parts) != arr.ndim:
        raise IndexError(f"{_where(2)}: {len(parts)} indices for a constant array of {arr.ndim} dimensions")
    safe = []
    for axis, (p, n) in enumerate(zip(parts, arr.shape)):
        p = np.asarray(p)
        bad = (p < 0) | (p >= n)
        if m is not None and np.ndim(p):
            bad = bad & m
        if np.any(bad) and (m is None or np.any(m)):
            raise MemcheckError(f"Invalid __constant__ read at {_where(2)}: axis {axis} has {n} elements")
        safe.append(np.clip(p, 0, n - 1))
    return arr[tuple(safe)]


def print_(blk, m, *values):
    """``print(...)`` in a kernel: one line per active thread, blocks then threads in order
    (numba's threads print in whatever order they run)."""
    B, T = blk.nblocks, blk.nthreads
    active = np.ones((B, T), bool) if m is None else np.broadcast_to(np.asarray(m, bool), (B, T))
    per = [v if isinstance(v, str) else np.broadcast_to(np.asarray(v), (B, T)) for v in values]
    for b, t in zip(*np.nonzero(active)):
        print(*[v if isinstance(v, str) else v[b, t] for v in per])


def assert_(blk, m, cond, message=None):
    """``assert cond``: every active thread's condition must hold (numba checks it with
    ``debug=True``); the first thread where it does not is named."""
    B, T = blk.nblocks, blk.nthreads
    ok = np.broadcast_to(np.asarray(cond, bool), (B, T))
    bad = ~ok if m is None else np.broadcast_to(np.asarray(m, bool), (B, T)) & ~ok
    if bad.any():
        b, t = (int(x[0]) for x in np.nonzero(bad))
        block = blk._geo.block(blk.first + b) if hasattr(blk, "_geo") else blk._block
        thread = (t % blk.bdx, t // blk.bdx % blk.bdy, t // (blk.bdx * blk.bdy))
        text = f"assertion failed at {_where(2)} by thread {thread} in block {block}"
        raise AssertionError(text + (f": {message}" if message is not None else ""))


# -- undefined values: the shadow masks of the compiled dialects ----------------------------------
#
# A shuffle whose source lane does not take part (outside the active lanes, exited, or past the
# end of the block) gives an undefined value on a GPU (PTX ISA, ``shfl``: "the value of
# SourceA[lane] is unpredictable for inactive ... threads"; "results are undefined ... if an
# active thread sources a register from an inactive thread"). The compiled form keeps, beside
# each variable that can hold one, a *shadow*: ``False`` while every lane is defined (the only
# state most kernels ever see, at no cost), else an int32 array per thread, 0 where the value is
# defined and elsewhere the number of the ``origin`` (the shuffle) that made it. Arithmetic and
# assignments carry it along; a store, an index or a branch that reads a lane whose shadow is
# set is the error (``UndefinedValueError``), naming the line that made the value and the line
# that used it. Left unused, an undefined value is silent, as on a GPU.


class UndefinedValueError(SimulatorError):
    """An undefined value (a shuffle's read of a lane that does not take part) that reached
    memory, an address or a branch."""


#: (file, line, source text, instruction) of every place that can make an undefined value; the
#: compiled code names them by their position + 1 (``origin``).
ORIGINS: list[tuple[str, int, str, str]] = []
_ORIGIN_IDS: dict[tuple, int] = {}


def origin(filename: str, line: int, instruction: str) -> int:
    """The number of a place that can make undefined values (registered at compile time)."""
    import linecache
    key = (filename, line, instruction)
    n = _ORIGIN_IDS.get(key)
    if n is None:
        ORIGINS.append((filename, line, linecache.getline(filename, line).strip(), instruction))
        n = _ORIGIN_IDS[key] = len(ORIGINS)
    return n


def _full(u, B, T):
    """A shadow as a (B, T) int32 array (a copy where it is written to)."""
    return np.broadcast_to(np.asarray(u, np.int32), (B, T))


def _active(blk, m):
    B, T = blk.nblocks, blk.nthreads
    return np.ones((B, T), bool) if m is None else np.broadcast_to(np.asarray(m, bool), (B, T))


def u_or(*shadows):
    """The shadow of a value computed from values with these shadows (lane by lane)."""
    out = False
    for u in shadows:
        if u is False or u is None:
            continue
        if out is False:
            out = u
        else:
            out = np.where(np.asarray(out) != 0, out, u)
    return out


def u_sel(m, new, old):
    """The shadow of ``x = sel(m, value, x)``: the lanes of ``m`` take the value's shadow (a
    defined value clears it), the others keep theirs."""
    if new is False and old is False:
        return False
    if m is None:
        return new
    out = np.where(m, np.int32(0) if new is False else new, np.int32(0) if old is False else old)
    return out if out.any() else False


def u_and(a, ua, ub):
    """The shadow of ``a and b`` evaluated as ``a & b``: where ``a`` is a defined False, ``b`` is
    never looked at (Python and numba short-circuit), so its shadow does not count there."""
    if ub is False:
        return ua
    ub = np.where(np.asarray(a, bool), ub, np.int32(0))
    return u_or(ua, ub if ub.any() else False)


def u_or_else(a, ua, ub):
    """The shadow of ``a or b`` (``b`` not looked at where ``a`` is a defined True)."""
    if ub is False:
        return ua
    ub = np.where(np.asarray(a, bool), np.int32(0), ub)
    return u_or(ua, ub if ub.any() else False)


def u_select(c, uc, ua, ub):
    """The shadow of ``a if c else b`` computed as a select: the side taken, and ``c``'s."""
    if ua is False and ub is False:
        return uc
    side = np.where(np.asarray(c, bool), np.int32(0) if ua is False else ua, np.int32(0) if ub is False else ub)
    return u_or(uc, side if side.any() else False)


def u_warp(blk, m, u):
    """The shadow of a vote (``ballot``/``any``/``all``) whose predicate has shadow ``u``: an
    undefined predicate in an active lane makes the result of its whole warp undefined."""
    if u is False:
        return False
    B, T = blk.nblocks, blk.nthreads
    a = _active(blk, m)
    bad = np.where(a, _full(u, B, T), 0)
    W = -(-T // 32)
    pad = np.zeros((B, W * 32), np.int32)
    pad[:, :T] = bad
    first = pad.reshape(B, W, 32).max(axis=2)  # one origin per warp (any will do)
    out = np.where(a, np.repeat(first, 32, axis=1)[:, :T], 0).astype(np.int32)
    return out if out.any() else False


def u_block(blk, m, u):
    """The shadow of ``syncthreads_count/and/or`` whose predicate has shadow ``u``: the whole
    block's result is undefined."""
    if u is False:
        return False
    B, T = blk.nblocks, blk.nthreads
    a = _active(blk, m)
    first = np.where(a, _full(u, B, T), 0).max(axis=1, keepdims=True)
    out = np.broadcast_to(first, (B, T)).astype(np.int32)
    return out if out.any() else False


#: what each shuffle computes its source lane from: (lane, arg) -> (source lane, keep own)
_SOURCES = {
    "shfl": lambda lane, a: (np.asarray(a) % 32 + 0 * lane, np.zeros(np.shape(lane), bool)),
    "shfl_down": lambda lane, a: (lane + a, lane + a >= 32),
    "shfl_up": lambda lane, a: (lane - a, lane - a < 0),
    "shfl_xor": lambda lane, a: (lane ^ a, ((lane ^ a) < 0) | ((lane ^ a) >= 32)),
}


def _sources(blk, kind, arg, a):
    """``(source thread, bad)`` of every lane of the rows of ``a`` (active lanes, (k, T)):
    the thread each lane reads (its own where the source lane lies past the warp's width or
    the block), and the active lanes whose source does not take part."""
    T = a.shape[1]
    lane = np.asarray(blk.lane, np.int64).reshape(1, T)
    own = np.arange(T)[None, :]
    s, keep = _SOURCES[kind](lane, np.asarray(arg, np.int64))
    s, keep = np.broadcast_to(s, a.shape), np.broadcast_to(keep, a.shape)
    src = np.where(keep, own, own - lane + s)
    exists = (src >= 0) & (src < T)
    src = np.where(exists, src, own)
    return src, a & ~(exists & np.take_along_axis(a, src, axis=1))


def _rows(x, sel, B):
    """The rows ``sel`` of a per-thread value (as it is when it is the same in every block)."""
    return x[sel] if np.ndim(x) == 2 and np.shape(x)[0] == B and B > 1 else x


def shfl_plan(blk, m, kind, arg, uv, ua, where):
    """What the compiled shuffle does, worked out before it runs: ``(plain, arg, source, u)``.

    ``plain``: no lane can read an undefined value (every source takes part and ``value`` and
    ``arg`` are defined): the shuffle runs as written, ``arg`` as given. Else ``source`` is the
    source lane of every thread, with the lanes whose source does not take part reading their
    own value instead (what they get does not matter: it is undefined, and ``u`` says so),
    and ``u`` is the result's shadow: those lanes, the lanes whose ``arg`` is undefined, and the
    shadow of ``value`` at the lane each one reads.

    The search costs nothing where every lane of whole warps runs (``mask`` None, or all of
    it) and looks only at the blocks with a lane that does not run (the last, partial block
    after ``if i >= n: return``)."""
    T, B = blk.nthreads, blk.nblocks
    plain = (True, arg, None, False)
    if uv is False and ua is False:
        if m is None and T % 32 == 0:
            return plain
        lanes = getattr(m, "lanes", None)
        if lanes is not None and lanes.all and T % 32 == 0:
            return plain
        per_block = np.ndim(arg) == 2 and np.shape(arg)[0] > 1
        one = None if lanes is None or per_block else lanes.one  # a branch's mask knows when its blocks agree
        a, look = (np.asarray(one, bool), arg) if one is not None else (_active(blk, m), arg)
        if not per_block and (a.shape[0] == 1 or a.strides[0] == 0):
            a = a[:1]  # the same lanes and sources in every block: look at one
        if T % 32 == 0:  # only a warp with some lanes running and some not can read a missing one
            w = a.reshape(a.shape[0], T // 32, 32)
            part = (w.any(axis=2) & ~w.all(axis=2)).any(axis=1)
            if not part.any():
                return plain
            if a.shape[0] > 1:
                a, look = a[part], _rows(arg, part, B)
        _, bad = _sources(blk, kind, look, a)
        if not bad.any():
            return plain
    a = _active(blk, m)
    src, bad = _sources(blk, kind, arg, a)
    own = np.arange(T)[None, :]
    src = np.where(bad, own, src)
    u = np.where(bad, np.int32(where), np.int32(0))
    if uv is not False:
        moved = np.take_along_axis(_full(uv, B, T), src, axis=1)
        u = np.where(u != 0, u, moved)
    if ua is not False:
        u = np.where(u != 0, u, np.where(a, _full(ua, B, T), 0))
    u = u.astype(np.int32)
    if not u.any():
        return plain
    return (False, arg, (src % 32).astype(np.int64), u)


_USES = {
    "store": "stored to memory", "index": "used as an index", "branch": "branched on",
    "atomic": "given to an atomic", "print": "printed", "call": "passed to a device function",
    "assert": "asserted",
}


def u_check(blk, m, value, u, use: str, text: str):
    """``value`` (returned as it is) after checking that no active lane of ``m`` holds an
    undefined one in shadow ``u`` for this ``use``: else the error, at the caller's line."""
    if u is False:
        return value
    B, T = blk.nblocks, blk.nthreads
    bad = np.where(_active(blk, m), _full(u, B, T), 0)
    if not bad.any():
        return value
    b, t = (int(x[0]) for x in np.nonzero(bad))
    filename, line, source, instruction = ORIGINS[int(bad[b, t]) - 1]
    made, why = _MADE.get(instruction, _MADE[None])
    block = blk._geo.block(blk.first + b) if hasattr(blk, "_geo") else blk._block
    thread = (t % blk.bdx, t // blk.bdx % blk.bdy, t // (blk.bdx * blk.bdy))
    lanes = int(np.count_nonzero(bad[b]))
    fmt = lambda x: "(" + ",".join(str(int(k)) for k in x) + ")"  # noqa: E731
    raise UndefinedValueError(
        f"Undefined value {_USES.get(use, use)} at {_where(2)}\n"
        f"    by thread {fmt(thread)} in block {fmt(block)} ({lanes} thread{'s' if lanes != 1 else ''} of the block): "
        f"{text} is undefined there\n"
        f"    made at line {line} ({source}): {instruction} {made}\n"
        f"    {why}"
    ).at(thread=thread, block=tuple(int(k) for k in block))


#: what made an undefined value, and why it is one: by the instruction (None: a shuffle)
_MADE = {
    None: ("read a lane that does not take part (inactive, exited, or past the end of the block)",
           "on a GPU that value is undefined (PTX ISA, shfl: results are undefined if an active thread sources a "
           "register from an inactive thread); an undefined value is harmless until it is stored, used as an index "
           "or address, or branched on: read only lanes that take part, or leave the value unused in the lanes "
           "that read one"),
    "atomicExch": ("returned the old value of a __shared__ element no thread of the block had written",
                   "shared memory starts undefined; atomicExch's new value does not depend on the old one, so the "
                   "exchange itself is fine, but the old value it returns is undefined: harmless until it is stored, "
                   "used as an index or address, or branched on; write the element first (or ignore the old value)"),
}


def u_exch(holder: list, value, blk, where: int):
    """Right after an ``atomicExch`` on a shared array returned ``value``: its shadow into
    ``holder[0]``. The lanes whose old value no thread of the block had written (the engines
    mark them in ``blk.undefined_old`` under initcheck, instead of reporting the read) hold an
    undefined value.

    Why not initcheck's error, as for ``atomicAdd``: an add's new value is computed from the old
    one, so an unwritten element makes the stored result garbage; an exchange stores its operand
    whatever was there (a lock released with ``atomicExch(&lock, 0)``, a slot claimed with
    ``atomicExch(&s[k], v)``), so only the returned old value is undefined. compute-sanitizer's
    initcheck reports uninitialised *global* memory when it is accessed; here, as for a
    shuffle's missing lane, the value is an error once it reaches memory, an address or a branch."""
    m = getattr(blk, "undefined_old", None)
    if m is None:
        holder[0] = False
        return value
    blk.undefined_old = None
    holder[0] = np.where(m, np.int32(where), np.int32(0))
    return value


#: the shadow a device function's ``return`` hands its caller (set just before it returns)
_RETURNED = [False]


def u_put(value, u):
    """A device function returns ``value`` whose shadow is ``u``."""
    _RETURNED[0] = u
    return value


def u_take(holder: list, value):
    """Right after a device function returned ``value``: its shadow into ``holder[0]``."""
    holder[0] = _RETURNED[0]
    _RETURNED[0] = False
    return value


# -- the C front end's vocabulary: vector accesses, reinterpreting casts, printf ---------------


def vsplit(v, width: int) -> tuple:
    """A vector load's values (a last axis of ``width``) as a tuple of ``width`` arrays."""
    return tuple(v[..., k] for k in range(width))


def vstack(*values):
    """A vector store's values, one per element of the vector, as one array with a last axis."""
    return np.stack(np.broadcast_arrays(*[np.asarray(v) for v in values]), axis=-1)


def bitcast(dtype, source, *values):
    """The bytes of ``values`` (each a ``source`` value per thread, or a tuple of them) read as
    ``dtype`` values: one array, or a tuple when the bytes make several (C's reinterpreting
    pointer casts, ``((uint4 *)p)[i]``)."""
    dt, src = np.dtype(dtype), np.dtype(source)
    flat = [x for v in values for x in (v if isinstance(v, tuple) else (v,))]
    parts = np.broadcast_arrays(*[np.asarray(x).astype(src, copy=False) for x in flat])
    out = np.ascontiguousarray(np.stack(parts, axis=-1)).view(dt)
    n = out.shape[-1]
    return out[..., 0] if n == 1 else tuple(out[..., k] for k in range(n))


def printf_(blk, mask, fmt: str, *values) -> None:
    """C's ``printf``: one line per active thread, ``fmt % values`` (the C front end turns C's
    conversions into Python's). The lines are kept on ``blk.printf_lines`` as (block, thread,
    order, text) and printed after the pass in that order (the kernel's ``__call__``); a GPU
    prints them in an unspecified order."""
    block = np.asarray(blk.bx + blk.by * blk.gdx + blk.bz * (blk.gdx * blk.gdy))
    thread = np.asarray(blk.tx + blk.ty * blk.bdx + blk.tz * (blk.bdx * blk.bdy))
    arrays = [np.asarray(v) for v in values]
    shape = np.broadcast_shapes(block.shape, thread.shape, *(a.shape for a in arrays),
                                () if mask is None else np.shape(mask))
    active = np.broadcast_to(True if mask is None else np.asarray(mask), shape)
    block, thread = np.broadcast_to(block, shape), np.broadcast_to(thread, shape)
    arrays = [np.broadcast_to(a, shape) for a in arrays]
    lines = getattr(blk, "printf_lines", None)
    order = len(lines) if lines is not None else 0
    for at in zip(*np.nonzero(active)):
        text = fmt % tuple(a[at].item() for a in arrays)
        if lines is None:  # a launch that does not collect the lines: print them as they come
            print(text, end="")
        else:
            lines.append((int(block[at]), int(thread[at]), order, text))
