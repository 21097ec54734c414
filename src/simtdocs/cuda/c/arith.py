"""C's arithmetic on numpy values: the rule set a C source carries (``arithmetic.Rules``).

* Integer promotion: ``bool``, ``char``, ``short`` (signed or not) become ``int`` before
  any arithmetic (``char + char`` is an ``int``: 100 + 100 = 200).
* The usual arithmetic conversions: a float with an integer is the float's type
  (``int * float`` is ``float``, ``x * 0.5`` is ``double``, ``x * 0.5f`` ``float``); two
  integers meet at the higher rank, and an unsigned of at least the signed one's rank wins
  (``int + unsigned`` is ``unsigned``: ``-1 < 0u`` is false).
* ``int`` stays 32 bits: signed overflow, undefined in C, is modelled as the hardware's
  two's-complement wrap (``INT_MAX + 1 == INT_MIN``).
* ``/`` and ``%`` on integers truncate toward zero (``-7 / 2 == -3``, ``-7 % 2 == -1``);
  numpy floors. Shifts have the promoted left operand's type.
* A comparison is a bool here (an ``int`` 0/1 in C; a bool in arithmetic promotes to ``int``).
* ``__half`` with ``__half`` stays ``__half``, as ``cuda_fp16.h``'s operators (``__hadd``,
  ``__hmul`` …) compute it: the exact result rounded once to half (numpy's float16 arithmetic
  does the same: float32 holds every sum and product of two halves exactly enough that one
  rounding to half is the correctly rounded result). A ``__half`` with a ``float`` or
  ``double`` converts to that type (``__half``'s ``operator float``), and with an integer
  computes in ``float``.
"""

from __future__ import annotations

import ast
import operator

import numpy as np

from .. import arithmetic as ar

I32, U32, I64, U64 = (np.dtype(t) for t in (np.int32, np.uint32, np.int64, np.uint64))
F16, F32, F64, BOOL = (np.dtype(t) for t in (np.float16, np.float32, np.float64, np.bool_))


def dtype_of(v) -> np.dtype:
    """A value's dtype; a Python int (blockDim.x and friends) is an ``int`` when it fits."""
    return ar._dtype(v, I32)


def promote(t: np.dtype) -> np.dtype:
    """Integer promotion (``__half`` stays ``__half``: its operators compute in half)."""
    if t.kind in "biu" and t.itemsize < 4:
        return I32
    return t


def common(ta: np.dtype, tb: np.dtype) -> np.dtype:
    """The usual arithmetic conversions."""
    ta, tb = promote(ta), promote(tb)
    if ta == tb:
        return ta
    if ta.kind == "f" or tb.kind == "f":
        if ta.kind == "f" and tb.kind == "f":
            return ta if ta.itemsize >= tb.itemsize else tb
        f = ta if ta.kind == "f" else tb
        return F32 if f == F16 else f  # __half with an integer: both as float
    if ta.kind == tb.kind:
        return ta if ta.itemsize >= tb.itemsize else tb
    u, s = (ta, tb) if ta.kind == "u" else (tb, ta)
    if u.itemsize >= s.itemsize:
        return u
    return s  # the signed type is wider and holds every value of the unsigned one


def _as(v, t: np.dtype):
    if getattr(v, "dtype", None) == t:
        return v
    if isinstance(v, (np.ndarray, np.generic)):
        return v.astype(t)
    return np.array(v).astype(t)[()]


def _binary(f):
    def op(a, b):
        t = common(dtype_of(a), dtype_of(b))
        return f(_as(a, t), _as(b, t))
    op.__name__ = f.__name__
    return op


def _truncdiv(a, b):
    if a.dtype.kind == "f":
        return a / b
    if a.dtype.kind == "u":
        return np.floor_divide(a, b)
    r = np.fmod(a, b)
    return ((a - r) // np.where(b == 0, 1, b)).astype(a.dtype) if np.ndim(a) or np.ndim(b) else \
        (a.dtype.type((a - r) // b) if b != 0 else a.dtype.type(0))


def _truncmod(a, b):
    return np.fmod(a, b)  # the sign of the dividend, floats and integers alike


def _shift(f):
    def op(a, b):
        t = promote(dtype_of(a))
        return f(_as(a, t), _as(b, t))
    op.__name__ = f.__name__
    return op


def _unary(f):
    def op(a):
        t = dtype_of(a)
        if t == BOOL and f is operator.invert:
            t = I32
        return f(_as(a, promote(t)))
    op.__name__ = f.__name__
    return op


def _bitwise(f):
    def op(a, b):
        if dtype_of(a) == BOOL and dtype_of(b) == BOOL:
            return f(a, b)
        return _binary(f)(a, b)
    op.__name__ = f.__name__
    return op


BINOPS = {
    ast.Add: _binary(operator.add), ast.Sub: _binary(operator.sub), ast.Mult: _binary(operator.mul),
    ast.Div: _binary(_truncdiv), ast.FloorDiv: _binary(_truncdiv), ast.Mod: _binary(_truncmod),
    ast.Pow: _binary(operator.pow), ast.LShift: _shift(operator.lshift), ast.RShift: _shift(operator.rshift),
    ast.BitAnd: _bitwise(operator.and_), ast.BitOr: _bitwise(operator.or_), ast.BitXor: _bitwise(operator.xor),
    ast.Lt: _binary(operator.lt), ast.LtE: _binary(operator.le), ast.Gt: _binary(operator.gt),
    ast.GtE: _binary(operator.ge), ast.Eq: _binary(operator.eq), ast.NotEq: _binary(operator.ne),
}
UNARY = {ast.USub: _unary(operator.neg), ast.UAdd: _unary(operator.pos), ast.Invert: _unary(operator.invert)}

#: C's rules, carried by every source the C front end lowers
C = ar.Rules("C", BINOPS, UNARY)


def _caster(t: np.dtype):
    def cast(v):
        """C's conversion to ``t`` (integers wrap, floats truncate toward zero); an array's
        ``astype``, which keeps an affine thread index's form (``simtdocs.affine``)."""
        if isinstance(v, np.ndarray):
            return v.astype(t)
        if getattr(v, "dtype", None) == t:
            return v
        return np.asarray(v).astype(t)[()]
    cast.__name__ = t.name
    return cast


class _NumpyWithCCasts:
    """What the compiled form calls ``_np`` in a C kernel: numpy, with its scalar types as C's
    conversions (``_np.uint32(blk.tx)`` keeps the thread index's affine form, and a Python
    int out of range wraps as a C cast does instead of raising)."""

    def __init__(self):
        for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
                  np.float32, np.float64, np.bool_):
            setattr(self, np.dtype(t).name, _caster(np.dtype(t)))

    def __getattr__(self, name):
        return getattr(np, name)


C.helpers["_np"] = _NumpyWithCCasts()
