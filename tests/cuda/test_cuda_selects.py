"""Selects by bits, and an ``if``/``else`` fused into one select: the same values and counters.

``threads.select_by_bits`` makes ``np.where(m, new, old)`` with bit operations when ``m`` is a
branch's mask whose lanes are scattered (or that mask's ``else``); ``compiler.fork`` turns an
``if``/``else`` whose two sides only assign the same variables from lane arithmetic into one
select per variable (``runtime.fork``). Both are for speed only: every test here holds them
to ``np.where`` and to the reference engine, on masks at random, regular ones, all lanes, none,
a partial last warp and a ragged last block, in the numba dialect and in CUDA C.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import simtdocs
from simtdocs import cuda, reference
from simtdocs.cuda import RawModule
from simtdocs.cuda import runtime as rt
from simtdocs import threads
from simtdocs.threads import BranchMask, select_by_bits

ROOT = Path(__file__).resolve().parents[2]

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64]


def _values(rng, dtype, shape):
    size = int(np.prod(shape))
    if dtype == np.bool_:
        v = rng.random(size) < 0.5
    elif np.dtype(dtype).kind == "f":
        v = rng.standard_normal(size).astype(dtype)
        v[::7] = np.nan
        v[1::11] = -0.0
        v[2::13] = np.inf
    else:
        info = np.iinfo(dtype)
        v = rng.integers(info.min, info.max, size=size, dtype=dtype, endpoint=True)
    return v.reshape(shape)


def _same(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


CONDITIONS = {
    "random": lambda blk, r: r < 0.5,
    "sparse": lambda blk, r: r < 0.05,
    "regular": lambda blk, r: np.broadcast_to(blk.tx < 16, r.shape),
    "alternate": lambda blk, r: np.broadcast_to(blk.tx % 2 == 0, r.shape),
    "all": lambda blk, r: np.ones(r.shape, bool),
    "none": lambda blk, r: np.zeros(r.shape, bool),
    "per_block": lambda blk, r: np.broadcast_to(blk.bx % 2 == 0, r.shape),
}


@pytest.mark.parametrize("chunk", [None, 48])
@pytest.mark.parametrize("block", [256, 100, 33, (16, 16)])
@pytest.mark.parametrize("condition", sorted(CONDITIONS))
def test_selects_by_bits_are_np_where(condition, block, chunk, monkeypatch):
    """Every select under a branch's mask, its else, and a mask nested in another equals
    np.where bit for bit (NaN payloads, -0.0, every dtype, (B, T), (1, T) and scalars), and
    the bits are what is used where the mask is scattered; with chunks of 48 lanes, the
    chunked form (``_by_bits_in_chunks``, for millions of lanes) runs on these small masks,
    its last chunk partial."""
    if chunk is not None:
        monkeypatch.setattr(threads, "_CHUNK", chunk)
    rng = np.random.default_rng(7)
    used = []

    def kernel(blk, r):
        taken = blk.branch(CONDITIONS[condition](blk, r))
        masks = [taken, rt.else_(None, taken), rt.else_(np.asarray(r > 0.3), taken)]
        B, T = taken.shape
        for m in masks:
            for dtype in DTYPES:
                for a, b in [(_values(rng, dtype, (B, T)), _values(rng, dtype, (B, T))),
                             (_values(rng, dtype, (1, T)), _values(rng, dtype, (B, T))),
                             (_values(rng, dtype, (B, T)), np.zeros((), dtype)[()]),
                             (_values(rng, dtype, ())[()], _values(rng, dtype, (1, T)))]:
                    want = np.where(np.asarray(m), a, b)
                    got = select_by_bits(m, a, b)
                    used.append(got is not None)
                    assert got is None or _same(got, want), (condition, dtype, np.shape(a), np.shape(b))
                    assert _same(rt.sel(m, a, b), want)
                    for swapped in (rt.fork(taken, lambda: (a, b), (), b), rt.fork(taken, lambda: (a, b), (), None)):
                        assert _same(swapped, np.where(np.asarray(taken), a, b))

    grid = 5
    T = block if isinstance(block, int) else block[0] * block[1]
    r = rng.random((grid, T))
    tables = r

    def kernel_with_table(blk, table):
        kernel(blk, np.asarray(table)[blk.first:blk.first + blk.nblocks])

    simtdocs.launch(kernel_with_table, grid, block, args=(tables,))
    if condition in ("random", "sparse", "alternate"):
        assert any(used), "the bits were never used on a scattered mask"
    if condition in ("all", "none", "per_block") or (condition == "regular" and block == 256):
        assert not any(used), "np.where is the faster on these masks"


def test_a_fork_is_the_two_merges_it_replaces():
    """``runtime.fork`` against the two selects it stands for, where the variable's old value
    is of a wider type or shape than both sides (then the merges' dtype is the old one's)."""
    rng = np.random.default_rng(5)

    def kernel(blk, r):
        taken = blk.branch(r < 0.5)
        B, T = taken.shape
        cases = [(np.float32, np.float32, np.float64), (np.int32, np.int32, np.int64), (np.int8, np.int16, np.int64),
                 (np.float32, np.float32, np.float32), (np.uint32, np.int32, np.int64), (np.float16, np.float16, np.int32)]
        for tn, to, told in cases:
            for shape_old in ((B, T), (1, T), ()):
                new, other = _values(rng, tn, (B, T)), _values(rng, to, (1, T))
                old = _values(rng, told, shape_old)
                old = old[()] if shape_old == () else old
                two = rt.sel(rt.else_(None, taken), other, rt.sel(taken, new, old))
                assert _same(rt.fork(taken, lambda: (new, other), (), old), two), (tn, to, told, shape_old)
                assert _same(rt.fork(taken, lambda: (new, other), (), None),
                             rt.sel(rt.else_(None, taken), other, rt.sel(taken, new, None)))
                # by slices of blocks: the arms get each slice of the per-thread values
                for lanes in (1, 5, 96, 200):
                    rt.FORK_LANES, was = lanes, rt.FORK_LANES
                    try:
                        sliced = rt.fork(taken, lambda p, q, s: (p * s, q + s), (new, other, np.int8(3)), old)
                        whole = (new * np.int8(3), other + np.int8(3))
                        assert _same(sliced, rt.sel(rt.else_(None, taken), whole[1], rt.sel(taken, whole[0], old)))
                        bx = np.arange(B, dtype=tn)[:, None]  # a (B, 1) value
                        sliced = rt.fork(taken, lambda p, q: (p + q, q), (new, bx), old)
                        assert _same(sliced, rt.sel(rt.else_(None, taken), bx, rt.sel(taken, new + bx, old)))
                    finally:
                        rt.FORK_LANES = was

    simtdocs.launch(kernel, 3, 96, args=(rng.random((3, 96)),))


def test_a_mask_written_into_forgets_its_bits():
    """An else's mask, written into, is a plain mask again; a branch's mask written after its
    else was made leaves the else the complement of what it was."""
    rng = np.random.default_rng(3)

    def kernel(blk, r):
        taken = blk.branch(r < 0.5)
        other = rt.else_(None, taken)
        before = np.asarray(other).copy()
        a, b = rng.standard_normal(taken.shape), rng.standard_normal(taken.shape)
        assert select_by_bits(other, a, b) is not None
        taken[:, ::3] = True  # the branch's mask changes: the else still holds its values
        assert _same(rt.sel(other, a, b), np.where(before, a, b))
        other &= r < 0.8  # the else changes: it forgets
        assert type(other) is BranchMask and other.complement is None
        assert select_by_bits(other, a, b) is None
        assert _same(rt.sel(other, a, b), np.where(np.asarray(other), a, b))
        nested = rt.else_(np.asarray(r > 0.2), blk.branch(r < 0.5))
        assert select_by_bits(nested, a, b) is not None
        nested[:, 0] = True
        assert select_by_bits(nested, a, b) is None and _same(rt.sel(nested, a, b), np.where(np.asarray(nested), a, b))

    simtdocs.launch(kernel, 4, 128, args=(rng.random((4, 128)),))


# -- kernels: the fast engine against the reference engine ------------------------------------

def _both(kernel, grid, block, args):
    runs = []
    for engine in (reference.launch, simtdocs.launch):
        mine = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        runs.append((mine, engine(kernel, grid, block, args=mine)))
    (ref_args, ref), (fast_args, fast) = runs
    for x, y in zip(ref_args, fast_args):
        if isinstance(x, np.ndarray):
            assert x.tobytes() == y.tobytes()
    assert ref.totals == fast.totals
    assert ref.by_site == fast.by_site
    return fast_args, fast


def _inputs(pattern, n, dtype=np.float32):
    rng = np.random.default_rng(11)
    x = rng.standard_normal(n).astype(dtype)
    if pattern == "regular":
        x = np.where(np.arange(n) % 64 < 32, -1, 1).astype(dtype) * np.abs(x)
    elif pattern == "all":
        x = -np.abs(x) - 1
    elif pattern == "none":
        x = np.abs(x) + 1
    elif pattern == "sparse":
        x = np.abs(x)
        x[rng.random(n) < 0.05] *= -1
    return x


PATTERNS = ["random", "regular", "all", "none", "sparse"]


@cuda.jit
def by_sign(x, y, z, n):
    i = cuda.grid(1)
    v = x[i]
    if v < 0:
        r = (-v * 2 + 1) * 0.5 - 0.5
        q = i + 1
        q = q * 2 + r
    else:
        r = (v * 2 + 1) * 0.5 - 0.5
        q = i * 3
        q = q - r
    y[i] = r
    z[i] = q


@cuda.jit
def by_sign_guarded(x, y, n):
    i = cuda.grid(1)
    if i < n:
        v = x[i]
        if v < 0:
            r = -v
        else:
            r = v * 2
        y[i] = r


@cuda.jit
def by_sign_mixed_types(x, y, n):
    i = cuda.grid(1)
    v = x[i]
    k = 0
    if v < 0:
        k = 1
        w = v * 0.5
    else:
        k = k + 2
        w = v
    y[i] = w + k


@cuda.jit
def widened(x, y, n):
    i = cuda.grid(1)
    v = x[i]
    w = 0.0
    if v < 0:
        w = v
    else:
        w = v + v
    y[i] = w + 0.1


@cuda.jit
def nested_keep(x, y, n):
    i = cuda.grid(1)
    v = x[i]
    r = v * 3
    if v > -0.5:
        if v < 0.5:
            r = v + 1
        else:
            r = v - 1
    y[i] = r


@pytest.mark.parametrize("pattern", PATTERNS)
def test_dialect_if_else_selects_agree_with_the_reference_engine(pattern):
    n = 4 * 256
    x = _inputs(pattern, n)
    (_, y, z, _), _ = _both(by_sign, 4, 256, (x, np.zeros(n), np.zeros(n), n))
    i, xd = np.arange(n), x.astype(np.float64)  # numba: float32 * int64 is float64
    r = np.where(x < 0, (-xd * 2 + 1) * 0.5 - 0.5, (xd * 2 + 1) * 0.5 - 0.5)
    assert np.array_equal(y, r)
    assert np.array_equal(z, np.where(x < 0, (i + 1) * 2 + r, i * 3 - r))
    assert "_fork(" in by_sign.as_masks()
    n = 1000  # a ragged last block under a guard: the else lies inside another mask, no fork
    x = _inputs(pattern, n)
    (_, y, _), _ = _both(by_sign_guarded, 4, 256, (x, np.zeros(n, np.float32), n))
    assert np.array_equal(y, np.where(x < 0, -x, x * 2))
    assert "_fork(" in by_sign_guarded.as_masks()  # inside the guard's mask
    n = 4 * 256  # inside a mask on data: the lanes outside keep their value
    x = _inputs(pattern, n)
    (_, y, _), _ = _both(nested_keep, 4, 256, (x, np.zeros(n), n))
    xd = x.astype(np.float64)
    assert np.array_equal(y, np.where(x > -0.5, np.where(x < 0.5, xd + 1, xd - 1), xd * 3))
    assert "_fork(" in nested_keep.as_masks()
    n = 3 * 100  # a partial last warp in every block; the two sides of different types
    x = _inputs(pattern, n)
    (_, y, _), _ = _both(by_sign_mixed_types, 3, 100, (x, np.zeros(n), n))
    assert np.array_equal(y, np.where(x < 0, x.astype(np.float64) * 0.5 + 1, x.astype(np.float64) + 2))
    n = 2 * 256  # float32 values assigned into a float64 variable
    x = _inputs(pattern, n)
    (_, y, _), _ = _both(widened, 2, 256, (x, np.zeros(n), n))
    assert np.array_equal(y, np.where(x < 0, x, x + x).astype(np.float64) + 0.1)


def _branch_benchmark_kernel() -> str:
    """``by_sign``, the kernel benchmarks/c_front_end.py times (every warp diverges on a sign)."""
    spec = importlib.util.spec_from_file_location("c_front_end_bench", ROOT / "benchmarks" / "c_front_end.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench.BRANCH_CU


C_KERNELS = _branch_benchmark_kernel() + r"""
__global__ void two_sides(const int* x, int* y, unsigned* u, double* d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = x[i];
    int r = 7;
    unsigned w;
    double e = 0.25;
    if (v < 0) { r = v / 3 + 1; w = v * 2u; e = e * v; }
    else { r = v % 5 - r; w = v >> 1; e = r + 0.5; }
    y[i] = r; u[i] = w; d[i] = e;
}

__global__ void guarded(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float r = 1.0f;
    if (v < 0.0f) r = -v; else r = v + r;
    y[i] = r;
}

__global__ void with_a_load(const float* x, const float* a, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    float r;
    if (v < 0.0f) r = a[i]; else r = v;
    y[i] = r;
}
"""


@pytest.mark.parametrize("pattern", PATTERNS)
def test_c_if_else_selects_agree_with_the_reference_engine(pattern):
    module = RawModule(code=C_KERNELS)
    n = 4 * 256
    x = _inputs(pattern, n)
    f = module.get_function("by_sign")
    (_, y), _ = _both(f, (4,), (256,), (x, np.zeros(n, np.float32)))
    assert np.array_equal(y, np.abs(x)) or np.allclose(y, np.abs(x), atol=1e-6)
    assert "_fork(" in f.as_masks()

    xi = (_inputs(pattern, n) * 50).astype(np.int32)
    g = module.get_function("two_sides")
    (_, y, u, d, _), _ = _both(g, (4,), (256,), (xi, np.zeros(n, np.int32), np.zeros(n, np.uint32),
                                                  np.zeros(n), np.int32(n)))
    neg = xi < 0
    trunc3 = np.trunc(xi / 3).astype(np.int32)
    r = np.where(neg, trunc3 + 1, np.fmod(xi, 5) - 7)
    assert np.array_equal(y, r)
    assert np.array_equal(u, np.where(neg, xi.astype(np.uint32) * np.uint32(2), (xi >> 1).astype(np.uint32)))
    assert np.array_equal(d, np.where(neg, 0.25 * xi, r + 0.5))
    assert g.as_masks().count("_fork(") == 3

    n = 1000  # exits before the branch: the else lies inside the mask of the threads left
    x = _inputs(pattern, n)
    h = module.get_function("guarded")
    (_, y, _), _ = _both(h, (4,), (256,), (x, np.zeros(n, np.float32), np.int32(n)))
    assert np.array_equal(y, np.where(x < 0, -x, x + np.float32(1)))

    n = 3 * 256
    x = _inputs(pattern, n)
    a = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    k = module.get_function("with_a_load")
    (_, _, y), _ = _both(k, (3,), (256,), (x, a, np.zeros(n, np.float32)))
    assert np.array_equal(y, np.where(x < 0, a, x))
    assert "_fork(" not in k.as_masks()  # a side with a load keeps its own merge


@pytest.mark.parametrize("lanes", [100, 256, 1000])
@pytest.mark.parametrize("pattern", PATTERNS)
def test_forks_by_slices_agree_with_the_reference_engine(pattern, lanes, monkeypatch):
    """The arms of a fork worked out a slice of blocks at a time (``runtime.FORK_LANES``
    lanes, here a few blocks, the last slice partial): the same arrays and counters as the
    reference engine, in both languages."""
    monkeypatch.setattr(rt, "FORK_LANES", lanes)
    n = 7 * 256
    x = _inputs(pattern, n)
    (_, y, z, _), _ = _both(by_sign, 7, 256, (x, np.zeros(n), np.zeros(n), n))
    i, xd = np.arange(n), x.astype(np.float64)
    r = np.where(x < 0, (-xd * 2 + 1) * 0.5 - 0.5, (xd * 2 + 1) * 0.5 - 0.5)
    assert np.array_equal(y, r) and np.array_equal(z, np.where(x < 0, (i + 1) * 2 + r, i * 3 - r))
    module = RawModule(code=C_KERNELS)
    xi = (_inputs(pattern, n) * 50).astype(np.int32)
    g = module.get_function("two_sides")
    _both(g, (7,), (256,), (xi, np.zeros(n, np.int32), np.zeros(n, np.uint32), np.zeros(n), np.int32(n)))
    x = _inputs(pattern, n)
    (_, y, _), _ = _both(nested_keep, 7, 256, (x, np.zeros(n), n))
    xd = x.astype(np.float64)
    assert np.array_equal(y, np.where(x > -0.5, np.where(x < 0.5, xd + 1, xd - 1), xd * 3))
    m = 7 * 256 - 300  # a ragged last block, exits before the branch
    x = _inputs(pattern, m)
    h = module.get_function("guarded")
    (_, y, _), _ = _both(h, (7,), (256,), (x, np.zeros(m, np.float32), np.int32(m)))
    assert np.array_equal(y, np.where(x < 0, -x, x + np.float32(1)))
    n = 7 * 100
    x = _inputs(pattern, n)
    (_, y, _), _ = _both(by_sign_mixed_types, 7, 100, (x, np.zeros(n), n))
    assert np.array_equal(y, np.where(x < 0, x.astype(np.float64) * 0.5 + 1, x.astype(np.float64) + 2))


def test_millions_of_lanes_select_as_np_where_does(monkeypatch):
    """The chunked selects at the benchmark's scale (2^20 threads, every warp diverging, and a
    ragged grid of 1000-thread blocks): results and counters equal those with np.where."""
    module = RawModule(code=C_KERNELS)
    f, g = module.get_function("by_sign"), module.get_function("guarded")
    n = 1 << 20
    x = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    runs = []
    for bits in (True, False):
        if not bits:
            monkeypatch.setattr(threads, "select_by_bits", lambda m, new, old: None)
            monkeypatch.setattr(rt, "select_by_bits", lambda m, new, old: None)
            monkeypatch.setattr(rt, "_fork_by_slices", lambda *args: None)
        y, z = np.zeros(n, np.float32), np.zeros(n, np.float32)
        s1 = f((n // 256,), (256,), (x, y))
        s2 = g((n // 1000 + 1,), (1000,), (x, z, np.int32(n)))
        runs.append((y, z, s1.totals, s1.by_site, s2.totals, s2.by_site))
    (y1, z1, *c1), (y2, z2, *c2) = runs
    assert y1.tobytes() == y2.tobytes() and z1.tobytes() == z2.tobytes()
    assert c1 == c2
    assert np.array_equal(y1, np.where(x < 0, ((-x * 2) + 1) * np.float32(0.5) - np.float32(0.5),
                                       ((x * 2) + 1) * np.float32(0.5) - np.float32(0.5)))


@pytest.mark.parametrize("step", [1, 7, 1 << 16])
def test_the_span_of_a_mask_is_its_first_and_last_lane(step, monkeypatch):
    """``Lanes.span`` (the run a masked contiguous access moves) looks for the last lane a
    slice at a time from the end: against np.flatnonzero on every kind of mask."""
    monkeypatch.setattr(threads, "_SPAN_STEP", step)
    rng = np.random.default_rng(0)
    for T in (256, 100, 33):
        geo = threads.geometry((1, 1, 1), (T, 1, 1))
        for B in (1, 3, 300):
            n = B * T
            for lanes in ([], "random", [rng.integers(0, n)], [n - 1], [0], range(n - 100), [5, 6], [0, n - 1]):
                m = np.zeros(n, bool)
                if lanes == "random":
                    m[:] = rng.random(n) < 0.5
                else:
                    m[list(lanes)] = True
                found = np.flatnonzero(m)
                want = (int(found[0]), int(found[-1])) if found.size else (0, -1)
                assert threads.Lanes(geo, 0, B, m.reshape(B, T)).span == want
