"""The dialect's integers are numba's: 64-bit arithmetic, numba's signed/unsigned rules,
narrow types widened by arithmetic (``simtdocs.cuda.arithmetic``).

The oracle is numba itself: ``numba.njit`` types a function as numba.cuda does (the typing
is shared; ``numba/core/typing/builtins.py``). Random integer expressions over elements of
int8 … uint64 arrays whose values sit at the ends of their types, so that sums and
products overflow 32 bits (and sometimes 64), are compiled once as a device function of
the dialect and once by ``numba.njit``; for every lane the dialect's value and its dtype
must be numba's, and so must the type the dialect's inference gives (``return_type``).
The suite runs a few seeds; ``SIMTDOCS_LONG=1`` runs 200 more, and
``python benchmarks/cuda_dialect.py integers -n 1000`` any number.

Then the rules by hand, each expectation also asked of numba.njit, in a kernel on both
engines: ``int32 + int32`` at 2**31 - 1 is 4,294,967,294 (numpy: -2); ``uint32 * uint32``
is a uint64; ``int8 + int8`` is 200 (an int8 load is an int8, widened by the addition);
``int64 + uint64`` is an int64 (numba's NBEP 1: signed wins; numpy says float64), while
where an int64 and a uint64 *meet* (after an ``if``, in ``min``) numba has float64.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

import simtdocs
from simtdocs import cuda, reference

import cuda_oracle
import cuda_random_kernels as rk

numba = pytest.importorskip("numba")

LANES = 32
DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
PARAMS = ["a8", "a16", "a32", "a64", "u8", "u16", "u32", "u64"]
#: eight values per dtype at the ends of its range; none is 0 or -1 (nor, for uint64, the
#: bits of -1), so that every element can be a divisor without dividing by zero or INT_MIN by -1
VALUES = {
    "int8": [127, -128, 100, -100, 99, -99, 64, 3],
    "int16": [32767, -32768, 30000, -30000, 1000, -7, 255, 12345],
    "int32": [2**31 - 1, -2**31, 2**31 - 2, -(2**31 - 2), 123456789, -987654321, 46341, 65536],
    "int64": [2**62 + 3, -(2**62) - 5, 2**40 + 1, -(2**33), 9, 2**32 + 1, -7, 10**18],
    "uint8": [255, 254, 128, 200, 1, 7, 100, 3],
    "uint16": [65535, 65534, 40000, 32768, 2, 1000, 255, 9],
    "uint32": [2**32 - 1, 2**32 - 2, 2**31, 3000000000, 5, 65537, 4000000000, 123],
    "uint64": [2**64 - 2, 2**63 + 5, 2**63, 2**40 + 7, 3, 10**19, 2**32, 11],
}
ARRAYS = tuple(np.array(VALUES[t], dtype=t) for t in DTYPES)


# -- random expressions ---------------------------------------------------------------------------

class Expressions:
    """Random integer expressions of ``t`` (int32, the lane) and the arrays ``a8`` … ``u64``."""

    def __init__(self, choose):
        self.choose = choose  # choose(lo, hi) -> an int in [lo, hi]

    def pick(self, seq):
        return seq[self.choose(0, len(seq) - 1)]

    def load(self):
        return f"{self.pick(PARAMS)}[{self.pick(['t', '(t + 3)', '(t * 5)'])} % 8]"

    def operand(self):
        """A left operand: never a literal, so no subexpression is folded by Python itself."""
        return self.pick([self.load(), self.load(), self.load(), "t"])

    def right(self):
        return self.pick([self.load(), self.load(), "t", "3", "-5", "1000", "4294967296", "-2147483649"])

    def divisor(self):
        return self.pick([self.load(), self.load(), "3", "7", "-5", "4294967297"])

    def int_expr(self, depth=0):
        if depth >= 3:
            return self.operand()
        k = self.choose(0, 13)
        e = lambda: self.int_expr(depth + 1)  # noqa: E731
        if k <= 2:
            return self.operand()
        if k <= 5:
            return f"({e()} {self.pick(['+', '-', '*'])} {self.pick([e(), self.right()])})"
        if k == 6:
            return f"({e()} {self.pick(['//', '%'])} {self.divisor()})"
        if k == 7:
            return f"({e()} {self.pick(['<<', '>>'])} {self.pick([str(self.choose(0, 31)), '(t % 8)'])})"
        if k == 8:
            return f"({e()} {self.pick(['&', '|', '^'])} {self.pick([e(), self.right()])})"
        if k == 9:
            return self.pick([f"(-{e()})", f"(~{e()})", f"abs({e()})"])
        if k == 10:
            return f"np.{self.pick(['int8', 'int16', 'int32', 'uint8', 'uint32', 'int64', 'uint64'])}({e()})"
        if k == 11:
            return f"(({e()} {self.pick(['<', '>', '==', '>='])} {e()}) + {e()})"
        if k == 12:
            base = self.pick([f"{p}[{self.pick(['t', '(t + 3)'])} % 8]" for p in ("a8", "a16", "u8", "u16")] + ["t"])
            return f"({base} ** {self.choose(0, 3)})"
        return f"({e()} * {self.load()})"

    def top(self):
        """An expression: an integer one, or one whose result is a float or a bool."""
        k = self.choose(0, 9)
        if k <= 4:
            return self.int_expr()
        if k == 5:
            return f"({self.int_expr(1)} / {self.divisor()})"
        if k == 6:
            return f"{self.pick(['min', 'max'])}({self.int_expr(1)}, {self.int_expr(1)})"
        if k == 7:
            return f"({self.int_expr(1)} {self.pick(['<', '<=', '>', '==', '!='])} {self.int_expr(1)})"
        if k == 8:
            return f"{self.pick(['min', 'max'])}({self.load()}, {self.load()})"
        return f"({self.load()} {self.pick(['+', '*', '-'])} {self.load()})"


#: ``np`` for the per-thread oracle: casts as numba's
ORACLE_NP = type("np", (), {t: staticmethod(lambda x, t=t: cuda_oracle.cast(x, t)) for t in DTYPES})


def oracle(expr: str) -> list:
    """``expr`` per lane as ``cuda_oracle`` computes it (numba's rules, written independently)."""
    f = eval(f"lambda t, {', '.join(PARAMS)}: {expr}",
             {"np": ORACLE_NP, "min": cuda_oracle.nmin, "max": cuda_oracle.nmax, "abs": cuda_oracle.nabs})
    arrays = [cuda_oracle.Arr(a) for a in ARRAYS]
    return [cuda_oracle.num(f(cuda_oracle.num(np.int32(t)), *arrays)) for t in range(LANES)]


def defined(expr: str) -> bool:
    """Whether no lane's signed 64-bit ``+ - * **`` wraps: numba's are ``nsw`` (undefined past
    int64: LLVM folded ``(a64 * a32) % a32`` to 0 and picked a wrapped ``-u32 ** 2`` as
    ``min(1, …)``), so such an expression has no answer to compare with."""
    before = cuda_oracle.wrapped
    oracle(expr)
    return cuda_oracle.wrapped == before


def program(seed: int, count: int = 10) -> tuple[str, list]:
    """``body(t, a8, …, u64)`` returning ``count`` random expressions that stay defined, and the expressions."""
    r = random.Random(seed)
    g = Expressions(r.randint)
    exprs = []
    while len(exprs) < count:
        e = g.top()
        if defined(e):
            exprs.append(e)
    return (f"def body(t, {', '.join(PARAMS)}):\n"
            f"    return ({', '.join(exprs)},)\n"), exprs


def numbas(py) -> tuple[list, list]:
    """numba.njit's value of each expression for each lane, and the expressions' types."""
    jitted = numba.njit(py)
    values = [jitted(np.int32(t), *ARRAYS) for t in range(LANES)]
    sig = jitted.nopython_signatures[0]
    return values, [str(t) for t in sig.return_type.types]


def ours(py, engine=simtdocs.launch):
    """The dialect's value of each expression per lane (arrays of numpy's dtypes) and the types
    its inference gives: the device function's mask form called from a blk kernel."""
    body = cuda.jit(device=True)(py)
    spec = body.specialize(("varying",) + ("global",) * len(PARAMS), (), None,
                           (np.dtype(np.int32),) + tuple(a.dtype for a in ARRAYS))
    got = []

    def driver(blk, *arrays):
        with np.errstate(all="ignore"):
            got.append(spec.function(blk, None, blk.tx, *arrays))

    engine(driver, 1, LANES, args=ARRAYS)
    out = got[0]
    return out, [str(t) for t in spec.return_type]


def same(value, expect) -> bool:
    if isinstance(expect, float):
        return np.isnan(expect) and np.isnan(value) or float(value) == expect
    return int(value) == int(expect)


def check(seed: int):
    """The dialect's values, dtypes and inferred types are numba.njit's; so are the oracle's."""
    source, exprs = program(seed)
    py = rk.load("import numpy as np\n" + source, "body")
    expect, expect_types = numbas(py)
    got, inferred = ours(py)
    assert inferred == expect_types, (source, inferred, expect_types)
    for k, (value, t) in enumerate(zip(got, expect_types)):
        assert np.asarray(value).dtype.name == t, (source, k, np.asarray(value).dtype, t)
        lanes = np.broadcast_to(np.asarray(value), (1, LANES))[0]
        theirs = oracle(exprs[k])
        for lane in range(LANES):
            assert same(lanes[lane], expect[lane][k]), (source, k, lane, lanes[lane], expect[lane][k])
            assert theirs[lane].t == t and same(theirs[lane].v, expect[lane][k]), (exprs[k], lane, theirs[lane])


@pytest.mark.parametrize("seed", range(3))
def test_random_integer_expressions_are_numbas(seed):
    check(seed)


@pytest.mark.skipif(not os.environ.get("SIMTDOCS_LONG"), reason="long form: set SIMTDOCS_LONG=1")
def test_random_integer_expressions_are_numbas_long():
    for seed in range(3, 203):  # one test, so the normal run lists one skip, not 200
        check(seed)


def test_the_expressions_overflow_32_bits():
    """The draws reach what they are for: values past 32 bits, uint64s, float64s and bools."""
    types, big = set(), 0
    for seed in range(3):
        py = rk.load("import numpy as np\n" + program(seed)[0], "body")
        got, inferred = ours(py)
        types |= set(inferred)
        big += sum(int(np.count_nonzero(np.abs(np.asarray(v, np.float64)) > 2**32)) for v in got)
    assert {"int64", "uint64"} <= types and big > 0, (types, big)


# -- by hand --------------------------------------------------------------------------------------


def numba_says(text: str, *args):
    """``numba.njit`` of ``lambda <params>: <text>``: its value and type for ``args``."""
    params = ", ".join(f"x{k}" for k in range(len(args)))
    f = numba.njit(eval(f"lambda {params}: ({text})", {"np": np}))
    value = f(*args)
    return value, str(f.nopython_signatures[0].return_type)


@cuda.jit
def add(a, b, out):
    i = cuda.grid(1)
    out[i] = a[i] + b[i]


@cuda.jit
def mul(a, b, out):
    i = cuda.grid(1)
    out[i] = a[i] * b[i]


ENGINES = [pytest.param(lambda k, g, b, args: simtdocs.launch(k, g, b, args=args), id="fast"),
           pytest.param(lambda k, g, b, args: reference.launch(k, g, b, args=args), id="reference")]


@pytest.mark.parametrize("launch", ENGINES)
def test_int32_plus_int32_is_an_int64(launch):
    a = np.full(32, 2**31 - 1, np.int32)
    out = np.zeros(32, np.int64)
    launch(add, 1, 32, (a, a, out))
    assert out.tolist() == [4_294_967_294] * 32  # numpy's int32 sum: -2
    assert numba_says("x0 + x1", np.int32(2**31 - 1), np.int32(2**31 - 1)) == (4_294_967_294, "int64")


@pytest.mark.parametrize("launch", ENGINES)
def test_uint32_times_uint32_is_a_uint64(launch):
    a = np.full(32, 2**32 - 1, np.uint32)
    out = np.zeros(32, np.uint64)
    launch(mul, 1, 32, (a, a, out))
    assert out.tolist() == [(2**32 - 1) ** 2] * 32  # 18,446,744,065,119,617,025; numpy's uint32: 1
    assert numba_says("x0 * x1", np.uint32(2**32 - 1), np.uint32(2**32 - 1)) == ((2**32 - 1) ** 2, "uint64")


@cuda.jit
def int8s(a, b, out, kinds):
    i = cuda.grid(1)
    x = a[i]                                       # an int8, as numba loads it
    out[i, 0] = x + b[i]                           # int8 + int8: int64
    out[i, 1] = np.int8(100) + np.int8(cuda.threadIdx.x)
    kinds[i] = x                                   # stored back as an int8
    a[i] += b[i]                                   # int64 sum, stored as the int8 it wraps to


@pytest.mark.parametrize("launch", ENGINES)
def test_int8_plus_int8_is_200(launch):
    a, b = np.full(128, 100, np.int8), np.full(128, 100, np.int8)
    out, kinds = np.zeros((128, 2), np.int64), np.zeros(128, np.int8)
    launch(int8s, 1, 128, (a, b, out, kinds))
    assert out[:, 0].tolist() == [200] * 128  # numpy's int8: -56
    assert out[100, 1] == 200 and out[:, 1].tolist() == [100 + t for t in range(128)]
    assert kinds.tolist() == [100] * 128
    assert a.tolist() == [-56] * 128  # the store converts to the array's int8, as numba's does
    assert numba_says("x0 + x1", np.int8(100), np.int8(100)) == (200, "int64")
    assert numba_says("np.int8(100) + np.int8(x0)", np.int32(100)) == (200, "int64")
    assert numba_says("x0[0]", a)[1] == "int8"  # a load from an int8 array is an int8 ...


@cuda.jit(device=True)
def first(a):
    return a[0]


@cuda.jit(device=True)
def mixed_sum(a, b):
    return a[0] + b[0]


@cuda.jit(device=True)
def smaller(a, b):
    return min(a[0], b[0])


@cuda.jit(device=True)
def joined(a, b, flag):
    x = a[0]
    if flag:
        x = b[0]
    return x


def device_result(fn, kinds, arrays, flag=None):
    """``fn``'s value for lane 0 and the type the dialect gives it (its inference's and the value's)."""
    extra = () if flag is None else (flag,)
    spec = fn.specialize(kinds, (), None, tuple(a.dtype for a in arrays) + ((np.dtype(bool),) if extra else ()))
    got = []
    simtdocs.launch(lambda blk, *a: got.append(spec.function(blk, None, *a, *extra)), 1, 32, args=arrays)
    value = np.asarray(got[0])
    return value.reshape(-1)[0], value.dtype.name, str(spec.return_type)


def test_a_load_from_an_int8_array_is_an_int8():
    a = np.array([-100], np.int8)
    assert device_result(first, ("global",), (a,))[1:] == ("int8", "int8")  # the engine's own load: an int32
    assert numba_says("x0[0]", a) == (-100, "int8")


def test_int64_plus_uint64_is_an_int64_and_where_they_meet_a_float64():
    """numba's arithmetic on a signed and an unsigned integer is signed (NBEP 1; the bits of the
    uint64 read as an int64), where numpy gives float64; where an int64 and a uint64 *meet*
    (``min``, a variable after an ``if``) numba unifies them as numpy promotes: float64."""
    i, u = np.array([-1], np.int64), np.array([2**64 - 1], np.uint64)
    assert device_result(mixed_sum, ("global", "global"), (i, u)) == (-2, "int64", "int64")
    assert numba_says("x0[0] + x1[0]", i, u) == (-2, "int64")
    value, dtype, inferred = device_result(smaller, ("global", "global"), (i, u))
    assert (float(value), dtype, inferred) == (-1.0, "float64", "float64")
    assert numba_says("min(x0[0], x1[0])", i, u) == (-1.0, "float64")
    for flag in (False, True):  # the type does not hang on the path taken
        value, dtype, inferred = device_result(joined, ("global", "global", "value"), (i, u), flag)
        assert (dtype, inferred) == ("float64", "float64")
        assert float(value) == (2.0**64 if flag else -1.0)
    f = numba.njit(joined.py_func)
    f(i, u, True)
    assert str(f.nopython_signatures[0].return_type) == "float64"


@cuda.jit(device=True)
def product(a, b):
    return a[0] * b[0]


@cuda.jit(device=True)
def squared(f):
    return f[0] ** 2


def test_integers_meeting_floats_convert_as_numbas():
    """``uint16 * float32`` is float64 in numba (numpy: float32), ``int16 * float32`` float32,
    and ``float32 ** 2`` stays float32 (numpy: float64)."""
    f = np.array([1.5], np.float32)
    for ints, expect in ((np.array([3], np.uint16), "float64"), (np.array([3], np.int16), "float32")):
        assert device_result(product, ("global", "global"), (ints, f))[1:] == (expect, expect)
        assert numba_says("x0[0] * x1[0]", ints, f) == (4.5, expect)
    assert device_result(squared, ("global",), (f,)) == (np.float32(2.25), "float32", "float32")
    assert numba_says("x0[0] ** 2", f) == (2.25, "float32")


@cuda.jit
def rules(a, u, big, ubig, out, flags):
    i = cuda.grid(1)
    out[i, 0] = a[i] // 2              # floor: -7 // 2 = -4
    out[i, 1] = a[i] % 2               # the divisor's sign: -7 % 2 = 1
    out[i, 2] = np.int32(1) << 40      # int64: numpy's int32 shift would lose the bit
    out[i, 3] = abs(np.int8(-128))     # abs keeps the int8: -128
    out[i, 4] = -u[i] % 1000           # -uint32: negated in 32 bits, a uint64 4,294,967,291; % 1000: 291
    flags[i, 0] = big[i] == ubig[i]    # int64 and uint64 compare as float64: 2**53 + 1 == 2**53
    flags[i, 1] = a[i] / 2 == -3.5     # / is float64


@pytest.mark.parametrize("launch", ENGINES)
def test_floor_division_shifts_abs_and_comparisons_are_numbas(launch):
    a, u = np.full(32, -7, np.int32), np.full(32, 5, np.uint32)
    big, ubig = np.full(32, 2**53 + 1, np.int64), np.full(32, 2**53, np.uint64)
    out, flags = np.zeros((32, 5), np.int64), np.zeros((32, 2), bool)
    launch(rules, 1, 32, (a, u, big, ubig, out, flags))
    assert out[0].tolist() == [-4, 1, 2**40, -128, 291]
    assert flags[0].tolist() == [True, True]
    assert numba_says("x0 // 2, x0 % 2, np.int32(1) << 40, abs(np.int8(-128)), -x1 % 1000", np.int32(-7),
                      np.uint32(5))[0] == (-4, 1, 2**40, -128, 291)
    assert numba_says("x0 == x1", np.int64(2**53 + 1), np.uint64(2**53)) == (True, "bool")


@cuda.jit
def histogram_in_int32(x, bins, weights):
    i = cuda.grid(1)
    bins[x[i] % 4] += weights[i]       # int32 element += int64 weight: the sum stored as int32


def test_an_augmented_store_casts_back_to_the_arrays_dtype():
    x = np.array([2, 0, 3, 1], np.int32)
    bins = np.full(4, 2**31 - 10, np.int32)
    weights = np.full(4, 2**32 + 5, np.int64)  # the sum is an int64; its low 32 bits add 5
    histogram_in_int32[1, 4](x, bins, weights)
    assert bins.tolist() == [2**31 - 5] * 4


# -- random kernels with integers past 32 bits ------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from test_cuda_compiler import agree_with_python  # noqa: E402
from test_cuda_random import check as engines_agree  # noqa: E402


@st.composite
def wide_programs(draw, private):
    source, block, grid, name = rk.program(lambda kind, lo, hi: draw(st.integers(lo, hi)), private=private, wide=True)
    return source, block, grid, name, draw(st.integers(0, 3))


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(wide_programs(private=True))
def test_random_kernels_with_wide_integers_mean_what_numba_means(p):
    """``cuda_random_kernels.program(..., wide=True)``: the compiled kernel against the
    per-thread oracle, which computes as numba types (``cuda_oracle``): the atomic counts
    exactly, the float outputs to 1e-4 (the oracle types each value as it runs, with no
    unification where control flow joins)."""
    agree_with_python(*p)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(wide_programs(private=False), st.sampled_from([None, 1, 2]))
def test_random_kernels_with_wide_integers_agree_with_the_reference_engine(p, per_pass):
    engines_agree(*p, per_pass)
