"""An independent meaning for per-thread kernels: run the kernel's own Python function once
per thread, in order, with ``cuda`` replaced by the indices of that thread.

This is what numba's simulator does (without its threads), so it only gives a meaning to
kernels whose threads do not talk to each other: no shared memory, barriers, shuffles or
votes. It checks the *compiler* (that masks, merges, loops, exits and device calls mean
what the Python means); the engine is checked against ``simtdocs.reference`` elsewhere.

Values compute as numba types them, not as Python's unbounded ints or numpy's scalars do:
every number the kernel sees (an element it loads, a thread index, a scalar argument) is a
``Num``, a value with numba's type, and its operators follow numba's rules, written here
from numba's own typing (``numba/core/typing/builtins.py``, NBEP 1) and checked against
``numba.njit`` in ``test_cuda_integers.py``, independently of ``simtdocs.cuda.arithmetic``:
integers narrower than 64 bits compute in ``int64`` (``uint64`` when both are unsigned) and
wrap around at 64 bits; a signed with an unsigned integer is ``int64``; ``/`` is float64;
``//`` and ``%`` floor; an integer meets a float as numba converts it (``int8`` and
``float32``: float32; ``int32`` and ``float32``: float64); a Python int literal is an
int64 and a float literal a float64 (numba's types, where numpy 2 would keep a float32
for ``x * 0.5``); ``min``/``max`` unify their operands as numba does (``int64`` with
``uint64``: float64); a store converts to the array's dtype.

numba's *signed* ``+``, ``-`` and ``*`` are LLVM's ``nsw`` ("no signed wrap";
``_int_arith_flags`` in ``numba/cpython/numbers.py``): past int64 their result is undefined,
as in C, and LLVM may fold as if it cannot happen (``(x * y) % y`` is 0). The oracle wraps
around, which is what the instruction gives when nothing is folded, and counts each wrap
in ``wrapped``; unsigned arithmetic wraps by definition.
"""

from __future__ import annotations

import math
import operator
import types

import numpy as np

from simtdocs import cuda as sc

_FLOAT32_EXACT = {"int8", "int16", "uint8", "bool"}  # integers numba turns into float32 beside a float32
#: signed 64-bit results of + - * ** that wrapped around (undefined in numba: ``nsw``)
wrapped = 0
_NSW = (operator.add, operator.sub, operator.mul, operator.pow)


def _bits(t: str) -> int:
    return np.dtype(t).itemsize * 8


def _wrap(v: int, t: str) -> int:
    """``v`` as a ``t`` holds it: the low bits, read as signed for a signed type."""
    if t == "bool":
        return bool(v)
    n = _bits(t)
    v %= 1 << n
    return v - (1 << n) if t.startswith("int") and v >= 1 << (n - 1) else v


def _is_int(t: str) -> bool:
    return t == "bool" or "int" in t


def _unsigned(t: str) -> bool:
    return t.startswith("uint")


class Num:
    """A number with numba's type: ``v`` a Python int (integers, bool) or a numpy float scalar."""

    __slots__ = ("v", "t")
    __array_ufunc__ = None  # numpy scalars give way to Num's reflected operators

    def __init__(self, v, t: str):
        self.t = t
        if _is_int(t):
            self.v = _wrap(int(v), t)
        else:
            self.v = np.dtype(t).type(v)

    def __repr__(self):
        return f"{self.t}({self.v})"

    # conversions
    def __index__(self):
        if not _is_int(self.t):
            raise TypeError(f"a {self.t} is not an index")
        return int(self.v)

    def __int__(self):
        return int(self.v)

    def __float__(self):
        return float(self.v)

    def __bool__(self):
        return bool(self.v)

    def __hash__(self):
        return hash(self.v)

    # arithmetic: numba's rules
    def __add__(self, o): return _binary(operator.add, self, o)
    def __radd__(self, o): return _binary(operator.add, o, self)
    def __sub__(self, o): return _binary(operator.sub, self, o)
    def __rsub__(self, o): return _binary(operator.sub, o, self)
    def __mul__(self, o): return _binary(operator.mul, self, o)
    def __rmul__(self, o): return _binary(operator.mul, o, self)
    def __floordiv__(self, o): return _binary(operator.floordiv, self, o)
    def __rfloordiv__(self, o): return _binary(operator.floordiv, o, self)
    def __mod__(self, o): return _binary(operator.mod, self, o)
    def __rmod__(self, o): return _binary(operator.mod, o, self)
    def __truediv__(self, o): return _binary(operator.truediv, self, o)
    def __rtruediv__(self, o): return _binary(operator.truediv, o, self)
    def __pow__(self, o): return _binary(operator.pow, self, o)
    def __rpow__(self, o): return _binary(operator.pow, o, self)
    def __and__(self, o): return _binary(operator.and_, self, o)
    def __rand__(self, o): return _binary(operator.and_, o, self)
    def __or__(self, o): return _binary(operator.or_, self, o)
    def __ror__(self, o): return _binary(operator.or_, o, self)
    def __xor__(self, o): return _binary(operator.xor, self, o)
    def __rxor__(self, o): return _binary(operator.xor, o, self)
    def __lshift__(self, o): return _binary(operator.lshift, self, o)
    def __rlshift__(self, o): return _binary(operator.lshift, o, self)
    def __rshift__(self, o): return _binary(operator.rshift, self, o)
    def __rrshift__(self, o): return _binary(operator.rshift, o, self)
    def __lt__(self, o): return _compare(operator.lt, self, o)
    def __le__(self, o): return _compare(operator.le, self, o)
    def __gt__(self, o): return _compare(operator.gt, self, o)
    def __ge__(self, o): return _compare(operator.ge, self, o)
    def __eq__(self, o): return _compare(operator.eq, self, o)
    def __ne__(self, o): return _compare(operator.ne, self, o)

    def __neg__(self):
        # numba negates in the integer's own type, then widens (-uint32(5) is 4,294,967,291); a bool is an int64 first
        if self.t == "bool":
            return Num(-int(self.v), "int64")
        if _is_int(self.t):
            return Num(_wrap(-self.v, self.t), "uint64" if _unsigned(self.t) else "int64")
        return Num(-self.v, self.t)

    def __pos__(self):
        if _is_int(self.t):
            return Num(self.v, "uint64" if _unsigned(self.t) else "int64")
        return self

    def __invert__(self):
        if self.t == "bool":
            return Num(not self.v, "bool")
        return Num(_wrap(~int(self.v), self.t), "uint64" if _unsigned(self.t) else "int64")

    def __abs__(self):
        if self.t == "bool":
            return Num(int(self.v), "int8")
        return Num(abs(self.v), self.t)  # the same type: abs(int8(-128)) is -128


def num(x) -> Num:
    """A value as numba types it: Python ints int64, floats float64, numpy scalars their own."""
    if isinstance(x, Num):
        return x
    if isinstance(x, (bool, np.bool_)):
        return Num(bool(x), "bool")
    if isinstance(x, int):
        return Num(x, "int64")
    if isinstance(x, float):
        return Num(x, "float64")
    if isinstance(x, np.generic):
        return Num(x.item() if x.dtype.kind in "iu" else x, x.dtype.name)
    raise TypeError(f"no numba type for {x!r}")


def _to_float(x: Num, t: str):
    """``x`` converted to float type ``t`` as a cast does it (rounded once, from the integer itself)."""
    if _is_int(x.t):
        return np.array(x.v, dtype=x.t).astype(t)[()]
    return np.dtype(t).type(x.v)


def _float_type(a: Num, b: Num) -> str:
    """The float type an operation with a float operand computes in."""
    fa, fb = (not _is_int(a.t)), (not _is_int(b.t))
    if fa and fb:
        return np.result_type(a.t, b.t).name
    f, i = (a, b) if fa else (b, a)
    if f.t == "float32":
        return "float32" if i.t in _FLOAT32_EXACT else "float64"
    return f.t


def _binary(f, a, b):
    a, b = num(a), num(b)
    if _is_int(a.t) and _is_int(b.t):
        if f is operator.truediv:
            return Num(float(a.v) / float(b.v), "float64")
        if f in (operator.and_, operator.or_, operator.xor) and a.t == b.t == "bool":
            return Num(f(a.v, b.v), "bool")
        if f in (operator.lshift, operator.rshift):
            t = "uint64" if _unsigned(a.t) else "int64"  # the left operand's signedness
        else:
            t = "uint64" if _unsigned(a.t) and _unsigned(b.t) else "int64"
        x, y = _wrap(int(a.v), t), _wrap(int(b.v), t)
        if f is operator.pow and y < 0:
            return Num(1 if x == 1 else (0 if x != -1 else (1 if y % 2 == 0 else -1)), t)
        if f is operator.pow:
            exact = x ** y if y < 64 or abs(x) <= 1 else 1 << 64
        else:
            exact = f(x, y)
        if t == "int64" and f in _NSW and not -(1 << 63) <= exact < 1 << 63:
            global wrapped
            wrapped += 1
        return Num(pow(x, y, 1 << 64) if f is operator.pow else exact, t)
    if f is operator.pow and not _is_int(a.t) and _is_int(b.t):
        t = a.t  # a float to an integer power keeps the float's type
    else:
        t = _float_type(a, b)
    with np.errstate(all="ignore"):
        return Num(f(_to_float(a, t), _to_float(b, t)), t)


def _compare(f, a, b):
    a, b = num(a), num(b)
    if _is_int(a.t) and _is_int(b.t):
        if "uint64" in (a.t, b.t) and any(t.startswith("int") for t in (a.t, b.t)):
            return f(float(a.v), float(b.v))  # no integer type holds both: numba compares as float64
        return f(int(a.v), int(b.v))
    t = _float_type(a, b)
    return bool(f(_to_float(a, t), _to_float(b, t)))


def _unified(*xs) -> str:
    """numba's unification of types (numpy's promotion: int64 with uint64 is float64)."""
    return np.result_type(*[np.dtype(x.t) for x in xs]).name


def _convert(x: Num, t: str) -> Num:
    if _is_int(t) and _is_int(x.t):
        return Num(x.v, t)
    if not _is_int(t):
        return Num(_to_float(x, t), t)
    return Num(np.array(x.v, dtype=x.t).astype(t)[()], t)


def cast(x, t: str) -> Num:
    """``np.int8(x)`` and the like: numba's conversion (an integer keeps its low bits)."""
    return _convert(num(x), np.dtype(t).name)


def nmin(*xs):
    xs = [num(x) for x in (xs[0] if len(xs) == 1 else xs)]
    t = _unified(*xs)
    out = _convert(xs[0], t)
    for x in xs[1:]:
        x = _convert(x, t)
        out = x if x.v < out.v else out
    return out


def nmax(*xs):
    xs = [num(x) for x in (xs[0] if len(xs) == 1 else xs)]
    t = _unified(*xs)
    out = _convert(xs[0], t)
    for x in xs[1:]:
        x = _convert(x, t)
        out = x if x.v > out.v else out
    return out


def nabs(x):
    return abs(num(x))


def store_value(x, dtype: np.dtype):
    """What a store of ``x`` into an array of ``dtype`` writes (numba's cast)."""
    x = num(x)
    return np.array(x.v, dtype=x.t).astype(dtype)[()]


class Arr:
    """An array the kernel reads and writes element by element: loads are ``Num``s of the
    array's type, stores convert to it."""

    def __init__(self, a: np.ndarray):
        self.a = a
        self.shape, self.size, self.ndim, self.dtype = a.shape, a.size, a.ndim, a.dtype

    @staticmethod
    def _key(i):
        return tuple(int(k) for k in i) if isinstance(i, tuple) else int(i)

    def __getitem__(self, i):
        v = self.a[self._key(i)]
        return Num(v.item() if self.dtype.kind in "iub" else v, self.dtype.name)

    def __setitem__(self, i, value):
        self.a[self._key(i)] = store_value(value, self.dtype)

    def __len__(self):
        return len(self.a)


class _Dim:
    def __init__(self, x, y, z):
        self.x, self.y, self.z = (Num(v, "int32") for v in (x, y, z))  # numba: int32


class FakeCuda:
    """What ``cuda`` means inside one thread."""

    def __init__(self, grid, block):
        self.blockDim, self.gridDim = _Dim(*block), _Dim(*grid)
        self.block, self.grid_ = block, grid
        self.warpsize = Num(32, "int32")
        self.atomic = types.SimpleNamespace(add=self._add, max=self._max, min=self._min, exch=self._exch,
                                            sub=self._sub)
        self.local = types.SimpleNamespace(array=lambda shape, dtype: Arr(np.zeros(shape, sc.types.dtype(dtype))))
        self.const = types.SimpleNamespace(array_like=lambda a: a)
        self.shared = types.SimpleNamespace(array=lambda shape, dtype: Arr(np.zeros(shape, sc.types.dtype(dtype))))

    def at(self, block, thread):
        self.blockIdx, self.threadIdx = _Dim(*block), _Dim(*thread)
        self._b, self._t = block, thread
        bx, by = self.block[0], self.block[1]
        self.laneid = Num((thread[0] + bx * (thread[1] + by * thread[2])) % 32, "int32")

    def grid(self, n):
        out = tuple(Num(b * d + t, "int64") for b, d, t in zip(self._b, self.block, self._t))[:n]
        return out[0] if n == 1 else out

    def gridsize(self, n):
        out = tuple(Num(g * d, "int64") for g, d in zip(self.grid_, self.block))[:n]
        return out[0] if n == 1 else out

    @staticmethod
    def popc(x):
        return Num(bin(int(x) & 0xFFFFFFFFFFFFFFFF).count("1"), "int32")

    def syncthreads(self):
        pass

    @staticmethod
    def _add(a, i, v):
        old = a[i]
        a[i] = old + v
        return old

    @staticmethod
    def _sub(a, i, v):
        old = a[i]
        a[i] = old - v
        return old

    @staticmethod
    def _max(a, i, v):
        old = a[i]
        a[i] = nmax(old, v)
        return old

    @staticmethod
    def _min(a, i, v):
        old = a[i]
        a[i] = nmin(old, v)
        return old

    @staticmethod
    def _exch(a, i, v):
        old = a[i]
        a[i] = v
        return old


def _plain(fn, fake, cache):
    """``fn``'s Python function with ``cuda`` (and the device functions it calls) rebound, its
    global arrays read through ``Arr`` and ``min``/``max``/``abs`` numba's."""
    if fn in cache:
        return cache[fn]
    py = fn.py_func if hasattr(fn, "py_func") else fn
    g = dict(py.__globals__)
    g["cuda"] = fake
    g["math"] = math
    g.update(min=nmin, max=nmax, abs=nabs)
    out = cache[fn] = types.FunctionType(py.__code__, g, py.__name__, py.__defaults__, py.__closure__)
    for name, value in list(g.items()):
        if isinstance(value, sc.DeviceFunction):
            g[name] = _plain(value, fake, cache)
        elif isinstance(value, np.ndarray):
            g[name] = Arr(value)  # a constant array the kernel names
    return out


def _argument(a):
    if isinstance(a, np.ndarray):
        return Arr(a)
    if isinstance(a, (bool, int, float, np.generic)):
        return num(a)
    return a


def launch(kernel, grid, block, args):
    """Run ``kernel`` thread by thread (blocks in order, threads x fastest) on ``args`` in place."""
    grid = tuple(grid) + (1,) * (3 - len(grid))
    block = tuple(block) + (1,) * (3 - len(block))
    fake = FakeCuda(grid, block)
    f = _plain(kernel, fake, {})
    typed = [_argument(a) for a in args]
    with np.errstate(all="ignore"):
        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    for tz in range(block[2]):
                        for ty in range(block[1]):
                            for tx in range(block[0]):
                                fake.at((bx, by, bz), (tx, ty, tz))
                                f(*typed)
