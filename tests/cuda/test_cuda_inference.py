"""Types where values meet (``simtdocs.cuda.inference``), against numba's own compiler.

numba gives a variable one type where its values meet: after an ``if``, at the top of a
loop and after it, over a device function's returns, over the sides of ``a if c else b``.
The mask form runs numpy, whose values keep the type of what ran, so without the casts the
inference places, a loop no lane of a pass enters, or a uniform ``if`` not taken, leaves a
variable float32 where numba has float64.

The oracle is numba itself: ``numba.njit`` compiles the same device-function source for the
CPU, with the same typing rules as for the GPU, and runs it thread by thread. Random programs
mix float32 loads, float64 and int64 literals, int32 thread indices, per-thread and uniform
``if``s and loops (some entered by no lane), early returns, breaks and conditional
expressions; every result must be bit for bit numba's, on both engines and with one block
per pass. The suite runs 60 seeds; ``python benchmarks/cuda_dialect.py types -n 1000`` more.
"""

import random

import numpy as np
import pytest

import simtdocs
from simtdocs import cuda, reference

import cuda_random_kernels as rk

numba = pytest.importorskip("numba")

THREADS, BLOCKS = 32, 3
A = np.random.default_rng(7).random(16).astype(np.float32) + np.float32(0.25)


# -- random programs ------------------------------------------------------------------------------

class Program:
    """A device function ``body(t, i, a, n, flag)``: ``t`` int32 (threadIdx.x), ``i`` int64
    (cuda.grid(1)), ``a`` float32[16], ``n`` int64 and ``flag`` bool (uniform)."""

    def __init__(self, choose):
        self.choose = choose  # choose(lo, hi) -> an int in [lo, hi]
        self.lines: list[str] = []
        self.loops = 0
        self.counter = 0

    def pick(self, seq):
        return seq[self.choose(0, len(seq) - 1)]

    def load(self):
        return f"a[({self.pick(['t', 'i', 'i + 3', 't * 5'])}) % 16]"

    def value(self, depth=0):
        k = self.choose(0, 11 if depth < 2 else 5)
        return [
            lambda: self.load(),
            lambda: self.pick(["x", "y"]),
            lambda: self.pick(["0.5", "1.25", "2.0"]),
            lambda: self.pick(["k", "1", "3", "t"]),
            lambda: f"np.float32({self.pick(['x', 'y', 'k', '0.1'])})",
            lambda: f"({self.pick(['x', 'y'])} * 0.5)",
            lambda: f"({self.value(depth + 1)} + {self.value(depth + 1)})",
            lambda: f"({self.value(depth + 1)} * {self.value(depth + 1)})",
            lambda: f"({self.value(depth + 1)} - {self.load()})",
            lambda: f"({self.value(depth + 1)} / 3)",
            lambda: f"({self.value(depth + 1)} if {self.cond()} else {self.value(depth + 1)})",
            lambda: f"min({self.value(depth + 1)}, {self.value(depth + 1)})",
        ][k]()

    def cond(self):
        return self.pick(["flag", "n > 3", "not flag",  # uniform
                          "t % 3 == 0", "i > 40", f"{self.load()} > 0.7", "t < 8"])  # per thread

    def bound(self, literal=True):
        # t // 40 == 0: a loop no lane enters. (numba folds a while loop whose test is a
        # comparison of literals away before typing it, so a while bound is never a literal.)
        return self.pick((["0", "2"] if literal else []) + ["n % 3", "t % 3", "i % 4", "(t // 40)"])

    def emit(self, indent, text):
        self.lines.append("    " * indent + text)

    def block(self, indent, depth):
        for _ in range(self.choose(1, 3)):
            self.statement(indent, depth)

    def statement(self, indent, depth):
        k = self.choose(0, 9 if depth < 3 else 3)
        var = self.pick(["x", "y", "k"])
        if k <= 2:
            self.emit(indent, f"{var} = {self.value()}")
        elif k == 3:
            self.emit(indent, f"{var} {self.pick(['+=', '*=', '-='])} {self.value()}")
        elif k <= 5:
            self.emit(indent, f"if {self.cond()}:")
            self.block(indent + 1, depth + 1)
            if self.choose(0, 1):
                self.emit(indent, "else:")
                self.block(indent + 1, depth + 1)
        elif k == 6:
            self.counter += 1
            self.emit(indent, f"for j{self.counter} in range({self.bound()}):")
            self.loops += 1
            self.block(indent + 1, depth + 1)
            self.loops -= 1
        elif k == 7:
            self.counter += 1
            w = f"w{self.counter}"
            self.emit(indent, f"{w} = 0")
            self.emit(indent, f"while {w} < {self.bound(literal=False)}:")
            self.emit(indent + 1, f"{w} += 1")
            self.loops += 1
            self.block(indent + 1, depth + 1)
            self.loops -= 1
        elif k == 8:
            self.emit(indent, f"if {self.cond()}:")
            self.emit(indent + 1, f"return {self.value()}")
        else:
            self.emit(indent, f"if {self.cond()}:")
            self.emit(indent + 1, "break" if self.loops else f"return {self.value()}")

    def source(self) -> str:
        self.emit(1, f"x = {self.pick([self.load(), self.load(), '0.0', '1', 't'])}")
        self.emit(1, f"y = {self.pick([self.load(), self.load(), '0.5', 'x'])}")
        self.emit(1, f"k = {self.pick(['0', 't', 'i'])}")
        self.block(1, 0)
        # float32 and float64 arithmetic round differently: the result shows the types
        self.emit(1, f"return x * {self.load()} + y * {self.load()} - k / 7")
        return "def body(t, i, a, n, flag):\n" + "\n".join(self.lines) + "\n"


def program(seed: int):
    """A random program and its uniform arguments ``n`` and ``flag``, from a seed."""
    r = random.Random(seed)
    return Program(r.randint).source(), r.randint(0, 9), bool(r.randint(0, 1))


def compile_both(source: str):
    py = rk.load("import numpy as np\n" + source, "body")
    body = cuda.jit(device=True)(py)

    @cuda.jit
    def kernel(a, out, n, flag):
        i = cuda.grid(1)
        out[i] = body(cuda.threadIdx.x, i, a, n, flag)

    return kernel, numba.njit(py)


def numbas(jitted, n, flag) -> np.ndarray:
    out = np.zeros(THREADS * BLOCKS)
    for i in range(out.size):
        out[i] = jitted(np.int32(i % THREADS), np.int64(i), A, np.int64(n), flag)
    return out


def ours(kernel, n, flag, engine=simtdocs.launch, **options) -> np.ndarray:
    out = np.zeros(THREADS * BLOCKS)
    engine(kernel, BLOCKS, THREADS, args=(A, out, n, flag), **options)
    return out


def check(seed: int):
    source, n, flag = program(seed)
    kernel, jitted = compile_both(source)
    expect = numbas(jitted, n, flag)
    for got in (ours(kernel, n, flag), ours(kernel, n, flag, blocks_per_pass=1),
                ours(kernel, n, flag, engine=reference.launch)):
        assert np.array_equal(got, expect, equal_nan=True), source


@pytest.mark.parametrize("seed", range(60))
def test_random_programs_compute_what_numba_computes(seed):
    check(seed)


# -- the cases by name ----------------------------------------------------------------------------


@cuda.jit
def halve_some(a, b, out, counts):
    i = cuda.grid(1)
    x = a[i]                      # float32
    for _ in range(counts[i]):
        x = x * 0.5               # float64: numba's x is float64 from the loop's top on
    out[i] = x * b[i]             # float64 product, even where the loop ran no time


@pytest.mark.parametrize("per_pass", [None, 1])
def test_a_loop_no_lane_enters_leaves_numbas_type(per_pass):
    rng = np.random.default_rng(1)
    a, b = rng.random(64, np.float32), rng.random(64, np.float32)
    counts = np.zeros(64, np.int64)
    counts[32:] = rng.integers(1, 3, 32)  # the first block's loop runs for no lane
    out = np.zeros(64)
    simtdocs.launch(halve_some, 2, 32, args=(a, b, out, counts), blocks_per_pass=per_pass)
    expect = a.astype(np.float64) * 0.5 ** counts * b.astype(np.float64)
    assert np.array_equal(out, expect)
    assert not np.array_equal(out[:32], (a * b)[:32].astype(np.float64))  # what float32 would give


@cuda.jit
def narrow_under_a_mask(a, b, out):
    i = cuda.grid(1)
    x = 0.0                       # float64
    if a[i] > 0.5:
        x = a[i]                  # float32 for these threads: numba's x here is float32 ...
        x = x * b[i]              # ... so this is a float32 product
    out[i] = x                    # float64 again after the if


def test_a_read_under_a_mask_has_numbas_type_not_its_arrays():
    rng = np.random.default_rng(2)
    a, b = rng.random(32, np.float32), rng.random(32, np.float32)
    out = np.zeros(32)
    narrow_under_a_mask[1, 32](a, b, out)
    assert np.array_equal(out, np.where(a > 0.5, (a * b).astype(np.float64), 0.0))
    assert "_as(x, 'float32')" in narrow_under_a_mask.as_masks()


@cuda.jit(device=True)
def scaled(x, twice):
    if twice:                     # the same for every thread: a Python if, one return runs
        return x * 2.0            # float64
    return x                      # float32: numba returns float64 from both


@cuda.jit
def scaled_kernel(a, b, out, twice):
    i = cuda.grid(1)
    out[i] = scaled(a[i], twice) * b[i]


@pytest.mark.parametrize("twice", [False, True])
def test_a_device_functions_returns_join(twice):
    rng = np.random.default_rng(3)
    a, b = rng.random(32, np.float32), rng.random(32, np.float32)
    out = np.zeros(32)
    scaled_kernel[1, 32](a, b, out, twice)
    assert np.array_equal(out, a.astype(np.float64) * (2.0 if twice else 1.0) * b.astype(np.float64))


@cuda.jit
def plain(a, out, n):
    i = cuda.grid(1)
    if i < n:
        s = 0.0
        for k in range(4):
            s += a[(i + k) % n]
        out[i] = s


def test_straight_code_gets_no_casts():
    """Where the types that meet are one, the compiled form is as before: no cast, no cost."""
    a, out = np.ones(40, np.float32), np.zeros(40, np.float32)
    plain[2, 32](a, out, 40)
    text = plain.as_masks()
    assert "_cast" not in text and "_as(" not in text
    assert out.tolist() == [4.0] * 40
