"""numba's arithmetic on numpy values: the dialect's operators where numpy's differ.

numba types integer arithmetic at 64 bits (its integer-typing proposal, NBEP 1; the cases
are ``integer_binop_cases`` in ``numba/core/typing/builtins.py``): an operation on integers
narrower than 64 bits is done in ``int64``, or ``uint64`` when both are unsigned; a signed
and an unsigned integer give ``int64`` (so ``int64 + uint64`` is ``int64``, the uint64's
bits read as signed). numpy keeps the operands' width (``int32 + int32`` wraps at 32 bits)
and gives ``float64`` for ``int64`` with ``uint64``. Checked against ``numba.njit`` (which
types as numba.cuda does) in ``tests/cuda/test_cuda_integers.py``:

* ``int32 + int32`` (and ``- * // % & | ^``): numba int64; numpy int32, wrapping at 2**31.
* ``uint32 * uint32``: numba uint64; numpy uint32.
* ``int8 + int8``: numba int64 (100 + 100 = 200); numpy int8 (-56).
* ``int64 + uint64``: numba int64; numpy float64.
* ``int / int``: float64 in both.
* ``int32 << k``, ``uint8 >> k``: the left operand's signedness at 64 bits (int64, uint64).
* ``-x``, ``~x``: computed in x's own type, then widened to 64 bits (numba's
  ``int_negate_impl``): ``-int32(-2**31)`` is the int64 -2**31, ``-uint32(5)`` the uint64
  4,294,967,291; ``-True`` is the int64 -1.
* ``abs(x)``: x's own type (``abs(int8(-128))`` is -128; ``abs(True)`` an int8).
* ``min``, ``max``: numpy's promotion, as numba unifies (int64 with uint64: float64).
* ``x < y`` with a uint64 and a signed integer: compared as float64 (numpy compares exactly).
* ``int32 + float32``, ``uint16 * float32``: float64 (numpy: float64, float32); ``int8``,
  ``int16``, ``uint8`` or a bool with a float32: float32.
* ``float32 ** int``: float32 (numpy: float64).

``//`` and ``%`` floor (Python's meaning) in both. A comparison is a bool in both. numba's
signed ``+ - *`` carry LLVM's ``nsw`` flag (``_int_arith_flags`` in
``numba/cpython/numbers.py``): past int64 their result is undefined, and LLVM may fold as if
it could not happen; here they wrap around, as the instruction does when nothing is folded.
Where control flow joins, numba unifies a variable's types with numpy's promotion
(``Integer.unify`` in ``numba/core/types/scalars.py``): int32 with uint32 is int64, int64
with uint64 float64 (``inference.unify``).

Each function here takes what the mask form computes with (numpy arrays, numpy scalars,
Python scalars for weak values such as ``blockDim.x``) and returns numba's type. The
compiler calls them only where numpy's operator would differ: ``plain(op, a, b)`` says,
for operand types the inference knows, whether the numpy operator already gives numba's
answer (then the compiled form keeps ``a + b``, as before, and costs nothing).
"""

from __future__ import annotations

import ast
import functools
import operator

import numpy as np

I64, U64, F32, F64, BOOL = (np.dtype(t) for t in (np.int64, np.uint64, np.float32, np.float64, np.bool_))
#: integers numba converts to float32 without loss when they meet a float32 (``int8 + float32``
#: is float32); every other integer with a float32 is float64
_TO_F32 = frozenset(np.dtype(t) for t in (np.int8, np.int16, np.uint8, np.bool_))


def _dtype(v, small_int: np.dtype = I64) -> np.dtype:
    """A value's dtype; a Python int is ``small_int`` when it fits 32 bits (numba: an int
    literal, blockDim.x, warpsize are int64, int32 widened alike; C: ``int``), else int64."""
    dt = getattr(v, "dtype", None)
    if dt is not None:
        return dt
    if isinstance(v, (bool, np.bool_)):
        return BOOL
    if isinstance(v, int):
        return small_int if -2**31 <= v < 2**31 else I64
    if isinstance(v, float):
        return F64
    return np.asarray(v).dtype


def _as(v, t: np.dtype):
    if getattr(v, "dtype", None) == t:
        return v
    if isinstance(v, np.ndarray):
        return v.astype(t)
    if isinstance(v, np.generic):
        return v.astype(t)
    return t.type(v) if not isinstance(v, int) or t.kind != "u" or v >= 0 else np.int64(v).astype(t)


def _int(t: np.dtype) -> bool:
    return t.kind in "biu"


def int_result(ta: np.dtype, tb: np.dtype) -> np.dtype:
    """numba's result type for an integer operation: uint64 when both are unsigned, else int64."""
    return U64 if ta.kind == "u" and tb.kind == "u" else I64


def _float_result(ti: np.dtype, tf: np.dtype) -> np.dtype:
    if tf == F32:
        return F32 if ti in _TO_F32 else F64
    return np.result_type(ti, tf)


def _operands(a, b, *, bools_stay=False, division=False):
    """``a`` and ``b`` converted to the type numba computes ``a op b`` in."""
    ta, tb = _dtype(a), _dtype(b)
    if _int(ta) and _int(tb):
        if bools_stay and ta == BOOL and tb == BOOL:
            return a, b
        t = F64 if division else int_result(ta, tb)
    elif _int(ta) and tb.kind == "f":
        t = _float_result(ta, tb)
    elif _int(tb) and ta.kind == "f":
        t = _float_result(tb, ta)
    else:
        return a, b
    return _as(a, t), _as(b, t)


def _binary(f, **how):
    def op(a, b):
        x, y = _operands(a, b, **how)
        return f(x, y)
    op.__name__ = f.__name__
    return op


add = _binary(operator.add)
sub = _binary(operator.sub)
mul = _binary(operator.mul)
floordiv = _binary(operator.floordiv)
mod = _binary(operator.mod)
truediv = _binary(operator.truediv, division=True)
and_ = _binary(operator.and_, bools_stay=True)
or_ = _binary(operator.or_, bools_stay=True)
xor = _binary(operator.xor, bools_stay=True)


def _shift(f):
    def op(a, b):
        ta, tb = _dtype(a), _dtype(b)
        if not (_int(ta) and _int(tb)):
            return f(a, b)
        t = U64 if ta.kind == "u" else I64  # the left operand's signedness, at 64 bits
        return f(_as(a, t), _as(b, t))
    op.__name__ = f.__name__
    return op


lshift = _shift(operator.lshift)
rshift = _shift(operator.rshift)


def pow_(a, b):
    """``a ** b``: integers as the other operations (a negative exponent gives 0, or ±1 for a
    base of ±1, as numba's integer power does); a float to an integer power keeps the float's type."""
    ta, tb = _dtype(a), _dtype(b)
    if ta.kind == "f" and _int(tb):
        return operator.pow(a, _as(b, ta))
    x, y = _operands(a, b)
    if not (_int(_dtype(x)) and _int(_dtype(y))) or _dtype(y).kind == "u" or not np.any(y < 0):
        return operator.pow(x, y)
    negative = y < 0
    r = operator.pow(x, np.where(negative, 0, y).astype(_dtype(y)))
    one = np.where(x == 1, 1, np.where(x == -1, np.where(y % 2 == 0, 1, -1), 0)).astype(_dtype(x))
    out = np.where(negative, one, r)
    return out if np.ndim(out) else out[()]


def _compare(f):
    def op(a, b):
        ta, tb = _dtype(a), _dtype(b)
        if _int(ta) and _int(tb) and ta != BOOL and tb != BOOL and {ta.kind, tb.kind} == {"i", "u"} \
                and U64 in (ta, tb):
            return f(_as(a, F64), _as(b, F64))  # no integer type holds both: numba compares as float64
        return f(a, b)
    op.__name__ = f.__name__
    return op


lt, le, gt, ge, eq, ne = (_compare(f) for f in (operator.lt, operator.le, operator.gt, operator.ge,
                                                operator.eq, operator.ne))


def _unary(f, bools_stay=False):
    """``-x``, ``+x``, ``~x``: an integer's result is 64 bits of its signedness, computed in
    its own type first and widened after (numba's ``int_negate_impl``: ``-int32(-2**31)`` is
    -2**31 and ``-uint32(5)`` 4,294,967,291, both now 64-bit); a bool becomes an int64 first."""
    def op(a):
        t = _dtype(a)
        if t == BOOL:
            return f(a) if bools_stay else f(_as(a, I64))
        if _int(t):
            own = f(a) if isinstance(a, (np.generic, np.ndarray)) else f(np.int64(a))  # in its own type
            return _as(own, U64 if t.kind == "u" else I64)
        return f(a)
    op.__name__ = f.__name__
    return op


neg = _unary(operator.neg)
pos = _unary(operator.pos)
invert = _unary(operator.invert, bools_stay=True)


def abs_(a):
    """``abs(x)``: x's own type (numba: ``abs(int8(-128))`` is -128, ``abs(True)`` an int8)."""
    if _dtype(a) == BOOL:
        return _as(a, np.dtype(np.int8))
    return abs(np.int64(a)) if isinstance(a, int) and not isinstance(a, bool) else abs(a)


#: the ast operator -> (the name the compiled form calls, numba's function, numpy's operator)
BINARY = {
    ast.Add: ("_add", add, operator.add), ast.Sub: ("_sub", sub, operator.sub),
    ast.Mult: ("_mul", mul, operator.mul), ast.Div: ("_truediv", truediv, operator.truediv),
    ast.FloorDiv: ("_floordiv", floordiv, operator.floordiv), ast.Mod: ("_mod", mod, operator.mod),
    ast.Pow: ("_pow", pow_, operator.pow), ast.LShift: ("_lshift", lshift, operator.lshift),
    ast.RShift: ("_rshift", rshift, operator.rshift), ast.BitAnd: ("_bitand", and_, operator.and_),
    ast.BitOr: ("_bitor", or_, operator.or_), ast.BitXor: ("_bitxor", xor, operator.xor),
    ast.Lt: ("_lt", lt, operator.lt), ast.LtE: ("_le", le, operator.le), ast.Gt: ("_gt", gt, operator.gt),
    ast.GtE: ("_ge", ge, operator.ge), ast.Eq: ("_eq", eq, operator.eq), ast.NotEq: ("_ne", ne, operator.ne),
}
UNARY = {ast.USub: ("_neg", neg, operator.neg), ast.UAdd: ("_pos", pos, operator.pos),
         ast.Invert: ("_invert", invert, operator.invert)}
HELPERS = {name: f for name, f, _ in list(BINARY.values()) + list(UNARY.values())}
HELPERS["_abs"] = abs_


def _probe(t):
    return np.ones(2, t) if isinstance(t, np.dtype) else t(1)


@functools.lru_cache(maxsize=None)
def _plain(op: type, types: tuple) -> bool:
    name, numba_f, numpy_f = (BINARY if len(types) == 2 else UNARY)[op]
    if op is ast.Pow and all(_int(_strong(t)) for t in types):
        return False  # numpy refuses negative integer exponents
    if op in (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq):
        kinds = {_strong(t).kind for t in types}
        return not ({"i", "u"} <= kinds and U64 in {_strong(t) for t in types})
    try:
        with np.errstate(all="ignore"):
            theirs = numpy_f(*(_probe(t) for t in types))
            ours = numba_f(*(_probe(t) for t in types))
    except Exception:  # noqa: BLE001 — numpy refuses (uint64 << int64): numba's function decides
        return False
    return _dtype(theirs) == _dtype(ours)


def _strong(t) -> np.dtype:
    return t if isinstance(t, np.dtype) else _dtype(t(1))


def plain(op, *types) -> bool:
    """Whether numpy's own operator on values of ``types`` (dtypes, or the Python scalar types
    of weak values) gives numba's type and value: then the compiled form keeps the operator."""
    if not all(isinstance(t, np.dtype) or t in (int, float, bool) for t in types):
        return False
    return _plain(type(op), tuple(types))


# -- the rule set a source carries ---------------------------------------------------------------

class Rules:
    """A language's arithmetic, as a source carries it (``Source.rules``): the function the
    compiled form calls for each operator where numpy's differs (bound under the names in
    ``BINARY``/``UNARY``: ``_add`` …), and ``plain`` saying where numpy's own operator gives
    the language's answer. numba's dialect carries ``NUMBA``; the C front end its own
    (``simtdocs.cuda.c.arith.C``)."""

    def __init__(self, name: str, binops: dict, unary: dict, plain_fn=None):
        self.name = name
        self.binops = binops  # ast operator type -> the language's function
        self.unary = unary
        self.helpers = {BINARY[op][0]: f for op, f in binops.items()}
        self.helpers.update({UNARY[op][0]: f for op, f in unary.items()})
        self._plain_fn = plain_fn

    def plain(self, op, *types) -> bool:
        if self._plain_fn is not None:
            return self._plain_fn(op, *types)
        if not all(isinstance(t, np.dtype) or t in (int, float, bool) for t in types):
            return False
        return _plain_with(self, type(op), tuple(types))

    def __repr__(self) -> str:
        return f"<arithmetic rules {self.name}>"


@functools.lru_cache(maxsize=None)
def _plain_with(rules: Rules, op: type, types: tuple) -> bool:
    """``_plain`` for another rule set: numpy's operator against the rule set's, on probes."""
    f = (rules.binops if len(types) == 2 else rules.unary)[op]
    numpy_f = (BINARY if len(types) == 2 else UNARY)[op][2]
    try:
        with np.errstate(all="ignore"):
            probes = [_probe(t) for t in types]
            theirs, ours = numpy_f(*probes), f(*probes)
            probes = [_probe2(t, k) for k, t in enumerate(types)]
            theirs2, ours2 = numpy_f(*probes), f(*probes)
            probes = [_probe3(t) for t in types]
            theirs3, ours3 = numpy_f(*probes), f(*probes)
    except Exception:  # noqa: BLE001
        return False
    return _dtype(theirs) == _dtype(ours) and np.array_equal(theirs2, ours2) and _dtype(theirs2) == _dtype(ours2) \
        and np.array_equal(theirs3, ours3)


def _probe2(t, k):
    """A second probe: values where truncating and flooring, or wrapping, differ."""
    if isinstance(t, np.dtype):
        if t.kind == "u":
            return np.array([t.type(np.iinfo(t).max - 6), t.type(3)][k:] + [t.type(2)] * k, t)
        if t.kind in "if":
            return np.array([-7, 3] if k == 0 else [2, -2], t)
        return np.ones(2, t)
    return t(-7) if t in (int, float) and k == 0 else t(2) if t in (int, float) else t(1)


def _probe3(t):
    """A third probe: -1 and the largest unsigned value, one number to C's ``int == unsigned``
    (it converts -1) and two to numpy's (it widens both): the second probe's values differ
    both ways, so an equality could not tell."""
    if isinstance(t, np.dtype) and t.kind == "u":
        return np.array([np.iinfo(t).max, 1], t)
    if isinstance(t, np.dtype) and t.kind in "if":
        return np.array([-1, 1], t)
    return t(-1) if t in (int, float) else t(1)


#: numba's rules: the dialect's (every function above, and ``plain``)
NUMBA = Rules("numba", {op: f for op, (_, f, _) in BINARY.items()}, {op: f for op, (_, f, _) in UNARY.items()},
              plain_fn=plain)
