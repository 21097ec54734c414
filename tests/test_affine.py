"""Affine thread indices (``simtdocs.affine``): forms follow numpy exactly or are dropped.

A ``ThreadIndex`` carries a ``Form`` (``const + Σ coef·variable`` over bx, by, bz, tx, ty,
tz). The engine trusts a form instead of the values, so every form must describe its
array's values at every (block, thread) position, exactly. These tests evaluate forms
independently (Python ints, every position of the grid), check that what the form cannot
follow leaves no form, that writes cannot leave a stale one, the address, step and
strided-view helpers on small cases worked out by hand, and, end to end, that kernels with
affine indices give the same arrays and counters as the reference engine.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simtdocs
from simtdocs import affine, reference
from simtdocs.affine import Form, ThreadIndex
from simtdocs.threads import Geometry

# -- helpers ------------------------------------------------------------------------------


def capture(grid, block):
    """blk.bx … blk.tz and blk.tid as ``simtdocs.launch`` hands them to a kernel (one pass)."""
    seen = []

    def grab(blk):
        seen.append({"bx": blk.bx, "by": blk.by, "bz": blk.bz, "tx": blk.tx, "ty": blk.ty, "tz": blk.tz,
                     "tid": blk.tid, "nblocks": blk.nblocks})

    simtdocs.launch(grab, grid, block)
    assert len(seen) == 1 and seen[0]["nblocks"] == int(np.prod(grid))
    return seen[0]


def block_variables(geo: Geometry, first: int, count: int):
    """bx, by, bz of blocks ``first .. first + count - 1`` the way ``model.Block`` builds them."""
    gdx, gdy, _ = geo.grid
    ids = np.arange(first, first + count, dtype=np.int32)[:, None]
    return (affine.variable(ids % gdx, 0, geo.extent), affine.variable(ids // gdx % gdy, 1, geo.extent),
            affine.variable(ids // (gdx * gdy), 2, geo.extent))


def variable_values(extent, first=0, blocks=None):
    """The six variables at every position: three (B, 1) and three (1, T) int64 arrays."""
    gdx, gdy, gdz, bdx, bdy, bdz = extent
    if blocks is None:
        blocks = gdx * gdy * gdz - first
    b = np.arange(first, first + blocks, dtype=np.int64)[:, None]
    t = np.arange(bdx * bdy * bdz, dtype=np.int64)[None, :]
    return (b % gdx, b // gdx % gdy, b // (gdx * gdy), t % bdx, t // bdx % bdy, t // (bdx * bdy))


def evaluate(const, coefs, extent, first=0, blocks=None) -> np.ndarray:
    """``const + Σ coefs·variables`` at every (block, thread) of the pass, exactly (object
    dtype: Python ints), shape (blocks, threads)."""
    v = variable_values(extent, first, blocks)
    block_part = sum((int(c) * v[k].astype(object) for k, c in enumerate(coefs[:3])), np.full((1, 1), const, object))
    thread_part = sum((int(c) * v[k].astype(object) for k, c in enumerate(coefs[3:], 3)), np.zeros((1, 1), object))
    return block_part + thread_part


def evaluate_form(form: Form, first=0, blocks=None) -> np.ndarray:
    return evaluate(form.const, form.coefs, form.extent, first, blocks)


def exact(x, shape) -> np.ndarray:
    """The values of ``x`` broadcast to ``shape``, as Python ints."""
    return np.broadcast_to(np.asarray(x), shape).astype(object)


def assert_form_describes(x):
    """``x.form`` gives exactly ``x``'s value at every (block, thread) of the grid."""
    assert isinstance(x, ThreadIndex) and x.form is not None
    want = evaluate_form(x.form)
    got = exact(x, want.shape)
    assert (got == want).all(), f"form {x.form} does not describe\n{np.asarray(x)}"


def extent_of(grid, block):
    return tuple(grid) + tuple(block)


# -- 1. the form follows +, -, * by an int, and nothing else ---------------------------------

#: Multipliers: small ones, and large ones that make int32 (and, chained, int64) overflow.
MULS = (-3, -2, -1, 0, 1, 2, 3, 5, 1000, 1 << 16, 1 << 20, -(1 << 19))
STEPS = ("add", "sub", "mul", "rmul", "neg", "pos", "add_int", "rsub_int", "add_np64", "rsub_np64", "mul_np64",
         "add_0d", "as_int64", "as_uint64", "as_uint32", "as_int16", "as_uint8", "as_float64")

#: What a form cannot follow: each must give an array without one (and numpy's own values).
BREAKERS = {
    "floordiv": lambda x, o: x // 3,
    "mod": lambda x, o: x % 3,
    "where": lambda x, o: np.where(x > 1, x, 0),
    "product of two indices": lambda x, o: x * o,
    "plus a plain ndarray": lambda x, o: x + np.ones(np.broadcast_shapes(np.shape(x), np.shape(o)), np.int32),
    "plus a plain view": lambda x, o: x + np.asarray(o),
    "float multiply": lambda x, o: x * 2.5,
    "integral float multiply": lambda x, o: x * 2.0,
    "astype float": lambda x, o: x.astype(np.float64),
    "astype bool": lambda x, o: x.astype(bool),
    "slice": lambda x, o: x[:, :],
    "ellipsis view": lambda x, o: x[...],
    "view": lambda x, o: x.view(),
    "copy": lambda x, o: x.copy(),
    "transpose": lambda x, o: x.T,
    "left shift": lambda x, o: x << 1,
    "dtype keyword": lambda x, o: np.add(x, 1, dtype=np.int64),
    "abs": lambda x, o: np.abs(x),
    "minimum": lambda x, o: np.minimum(x, 2),
}


def _apply(op, x, other, c):
    """One step on arrays (``x``, ``other``) and on their models ((const, coefs) or None)."""
    k = MULS[c % len(MULS)]
    return {
        "add": lambda: (x[0] + other[0], _lin(x[1], 1, other[1], 1)),
        "sub": lambda: (x[0] - other[0], _lin(x[1], 1, other[1], -1)),
        "mul": lambda: (x[0] * k, _lin(x[1], k)),
        "rmul": lambda: (k * x[0], _lin(x[1], k)),
        "neg": lambda: (-x[0], _lin(x[1], -1)),
        "pos": lambda: (+x[0], _lin(x[1], 1)),
        "add_int": lambda: (x[0] + c, _lin(x[1], 1, (c, (0,) * 6), 1)),
        "rsub_int": lambda: (c - x[0], _lin(x[1], -1, (c, (0,) * 6), 1)),
        "add_np64": lambda: (x[0] + np.int64(c), _lin(x[1], 1, (c, (0,) * 6), 1)),
        "rsub_np64": lambda: (np.int64(c) - x[0], _lin(x[1], -1, (c, (0,) * 6), 1)),
        "mul_np64": lambda: (x[0] * np.int64(k), _lin(x[1], k)),
        "add_0d": lambda: (x[0] + np.array(c), _lin(x[1], 1, (c, (0,) * 6), 1)),
        # A cast keeps the numbers where the new type holds them all (else numpy wraps them).
        **{f"as_{t}": (lambda t=t: (x[0].astype(t), x[1])) for t in ("int64", "uint64", "uint32", "int16", "uint8",
                                                                     "float64")},
    }[op]()


def _lin(a, ka, b=(0, (0,) * 6), kb=0):
    """ka·a + kb·b on models; None when either is None."""
    if a is None or b is None:
        return None
    return ka * a[0] + kb * b[0], tuple(ka * p + kb * q for p, q in zip(a[1], b[1]))


def _fits(model, extent, dtype) -> bool:
    """Whether the exact values of ``model`` over the grid fit ``dtype`` (then numpy computed
    them exactly and a form must be there)."""
    if dtype.kind not in "iu":
        return False
    v = variable_values(extent)
    lo = hi = model[0]
    for c, var in zip(model[1], v):  # each variable runs over 0 .. extent - 1 independently
        reach = (c * int(var.min()), c * int(var.max()))
        lo, hi = lo + min(reach), hi + max(reach)
    info = np.iinfo(dtype)
    return info.min <= lo and hi <= info.max


@st.composite
def programs(draw):
    dims = st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5))
    grid, block = draw(dims), draw(dims)
    steps = draw(st.lists(st.tuples(st.sampled_from(STEPS), st.integers(0, 63), st.integers(0, 63),
                                    st.integers(-40, 40)), min_size=1, max_size=8))
    pick = draw(st.integers(0, 63))
    return grid, block, steps, pick


@settings(max_examples=200, deadline=None)
@given(programs())
def test_forms_follow_numpy_exactly(program):
    with pytest.MonkeyPatch.context() as small:  # the run paths at any size, as the passes here are small
        small.setattr(affine, "_RUN_LANES", 0)
        _forms_follow_numpy_exactly(program)


def _forms_follow_numpy_exactly(program):
    grid, block, steps, pick = program
    extent = extent_of(grid, block)
    v = capture(grid, block)
    bdx, bdy, _ = block
    unit = lambda k: (0, tuple(int(j == k) for j in range(6)))
    pool = [(v[name], unit(k)) for k, name in enumerate(affine.VARIABLES)]
    pool.append((v["tid"], (0, (0, 0, 0, 1, bdx, bdx * bdy))))
    shape = (int(np.prod(grid)), int(np.prod(block)))
    for x, model in pool:  # what the engine hands a kernel
        assert x.dtype == np.int32
        assert x.form == Form(model[0], model[1], extent)
        assert_form_describes(x)
    for op, i, j, c in steps:
        try:
            y, model = _apply(op, pool[i % len(pool)], pool[j % len(pool)], c)
        except OverflowError:  # numpy's own refusal (a negative Python int with an unsigned array)
            plain = lambda p: (np.asarray(p[0]), p[1])
            with pytest.raises(OverflowError):
                _apply(op, plain(pool[i % len(pool)]), plain(pool[j % len(pool)]), c)
            continue
        y_dtype = np.asarray(y).dtype
        if model is not None and _fits(model, extent, y_dtype):
            assert affine.form_of(y) == Form(model[0], model[1], extent), (op, y_dtype)
            want = evaluate(model[0], model[1], extent)
            assert (exact(y, shape) == want).all(), (op, model)
            assert not np.asarray(y).flags.writeable  # a formed index is read-only to numpy's C code
        else:  # made from something without a form, or numpy wrapped around: none may be claimed
            assert affine.form_of(y) is None, (op, y_dtype, model)
            model = None
        pool.append((y, model))
    formed = [x for x, m in pool if m is not None]
    for x in formed:  # comparisons with a number (some answered from a run's end points): numpy's
        v = np.asarray(x)
        for n in {int(v.min()) - 1, int(v.min()), int(np.median(v)), int(v.max()), int(v.max()) + 1, pick - 32}:
            for compare in (np.less, np.less_equal, np.greater, np.greater_equal):
                for args, plain in (((x, n), (v, n)), ((n, x), (n, v)), ((x, np.int64(n)), (v, np.int64(n)))):
                    got = compare(*args)
                    assert type(got) is np.ndarray and np.array_equal(got, compare(*plain)), (compare, n)
    x, other = formed[pick % len(formed)], formed[(pick // 7) % len(formed)]
    for name, f in BREAKERS.items():
        y = f(x, other)
        assert affine.form_of(y) is None and getattr(y, "form", None) is None, name
        assert np.array_equal(np.asarray(y), f(np.asarray(x), np.asarray(other))), name  # numpy's values
    assert affine.form_of(x) is not None  # and x itself kept its form


@pytest.mark.parametrize("grid, block", [((3,), (64,)), ((5,), (8, 4)), ((2, 3), (32,)), ((1,), (7, 3, 2))])
def test_a_run_compared_with_a_number_is_answered_from_its_ends(grid, block, monkeypatch):
    """``i < n`` for ``i = bx·bdx + tx`` (and runs made from it: reversed, scaled, shifted)
    is a prefix or a suffix of the pass, worked out from the end points: every comparison,
    either way round, at every threshold that matters, as numpy gives it. (Small passes
    here: the run paths are taken at any size.)"""
    monkeypatch.setattr(affine, "_RUN_LANES", 0)
    v = capture(grid, block)
    T = int(np.prod(block))
    i = v["bx"] * T + v["tid"] if len(grid) == 1 else v["tid"]  # a run on 1-D grids; (1, T) on one block
    runs = [i, 2 * i + 5, 1000 - i, -3 * i - 7, i.astype(np.int16), i.astype(np.uint32)]
    # Made from a (B, 1) and a (1, T) index, a run is written as one (np.arange): numpy's values
    # and dtypes, whichever side is which and however it is scaled.
    bx, tid = (np.asarray(v[k]) for k in ("bx", "tid"))
    for made, want in ((v["bx"] * T + v["tid"], bx * T + tid), (v["tid"] + v["bx"] * np.int64(T), tid + bx * np.int64(T)),
                       ((-2 * T) * v["bx"] - 2 * v["tid"], (-2 * T) * bx - 2 * tid),
                       (v["bx"].astype(np.uint16) * T + v["tid"].astype(np.uint16), bx.astype(np.uint16) * T + tid.astype(np.uint16))):
        assert made.dtype == want.dtype and np.array_equal(np.asarray(made), want)
        if len(grid) == 1:
            assert_form_describes(made)
    for x in runs:
        plain = np.asarray(x)
        if plain.shape[1] == T and len(grid) == 1:
            assert affine._compare_by_form(np.less, (x, 3)) is not None  # the end points answered it
        lo, hi = int(plain.min()), int(plain.max())
        for n in sorted({lo - 2, lo - 1, lo, lo + 1, (lo + hi) // 2, hi - 1, hi, hi + 1, hi + 2}):
            for compare in (np.less, np.less_equal, np.greater, np.greater_equal):
                assert np.array_equal(compare(x, n), compare(plain, n)), (compare, n)
                assert np.array_equal(compare(n, x), compare(n, plain)), (compare, n)


def test_constants_are_forms_of_their_own():
    assert affine.form_of(7) == 7 and affine.form_of(np.int16(-3)) == -3 and affine.form_of(np.array(5)) == 5
    assert affine.form_of(np.array(2.0)) is None and affine.form_of(2.0) is None
    assert affine.form_of(np.arange(3)) is None  # a plain array is not affine, whatever its values
    geo = Geometry((1, 1, 1), (4, 1, 1))
    assert affine.form_of(geo.tx) is geo.tx.form


# -- 2. overflow: no form where numpy wrapped around ----------------------------------------


def test_int32_overflow_drops_the_form():
    tx = capture(1, 4)["tx"]  # int32, 0..3
    wrapped = tx * 2**30  # 3·2^30 does not fit int32: numpy wraps around
    assert np.asarray(wrapped)[0, 3] == -(2**30)
    assert wrapped.form is None
    fits = tx * 2**29  # 3·2^29 < 2^31
    assert fits.form is not None and fits.form.coefs == (0, 0, 0, 2**29, 0, 0)
    assert_form_describes(fits)
    promoted = tx * np.int64(2**30)  # int64: exact, keeps its form
    assert promoted.dtype == np.int64 and promoted.form is not None
    assert_form_describes(promoted)
    assert (promoted * 2**31).form is not None and (promoted * 2**62).form is None  # 3·2^61 fits int64, 3·2^92 not


def test_overflow_at_the_exact_edges_of_int32():
    tx = capture(1, 2)["tx"]  # 0..1
    top = tx * (2**31 - 1)
    assert top.form is not None and top.form.bounds == (0, 2**31 - 1)
    assert_form_describes(top)
    assert (top + 1).form is None
    bottom = -top - 1  # reaches -2^31 exactly
    assert bottom.form is not None and bottom.form.bounds == (-(2**31), -1)
    assert_form_describes(bottom)
    assert (bottom - 1).form is None
    assert (top - 1).form is not None  # moving down from the top fits again


def test_unsigned_indices_drop_the_form_below_zero():
    extent = (1, 1, 1, 4, 1, 1)
    u = affine.variable(np.arange(4, dtype=np.uint32)[None, :], 3, extent)
    assert u.form is not None
    assert (u + 1).form is not None and (u * 2).form is not None
    assert_form_describes(u + 1)
    five_minus = 5 - u  # 5..2: fits uint32
    assert five_minus.dtype == np.uint32 and five_minus.form == Form(5, (0, 0, 0, -1, 0, 0), extent)
    assert_form_describes(five_minus)
    for negative in (u - 1, -u, 2 - u):
        assert negative.dtype == np.uint32
        assert negative.form is None
    u8 = affine.variable(np.arange(4, dtype=np.uint8)[None, :], 3, extent)
    assert (u8 * 85).form is not None and (u8 * 85).dtype == np.uint8  # 255 fits
    assert (u8 * 86).form is None  # 258 wraps to 2


def test_index_of_a_non_integer_array_has_no_form():
    form = Form(0, (0, 0, 0, 1, 0, 0), (1, 1, 1, 4, 1, 1))
    assert affine.index(np.arange(4.0)[None, :], form).form is None
    assert affine.index(np.arange(4, dtype=np.int8)[None, :], form).form == form


# -- 3. writes drop the form, and values stay numpy's ---------------------------------------


def _formed():
    geo = Geometry((2, 1, 1), (4, 1, 1))
    i = geo.tx * 3 + 1
    assert i.form is not None
    return i


def test_in_place_add_gives_right_values_and_no_wrong_form():
    i = _formed()
    i += 1
    assert np.array_equal(np.asarray(i), [[2, 5, 8, 11]])
    if i.form is not None:
        assert_form_describes(i)


def test_in_place_add_keeps_its_form():
    i = _formed()
    i += 1
    assert i.form == Form(2, (0, 0, 0, 3, 0, 0), (2, 1, 1, 4, 1, 1))
    assert_form_describes(i)


def test_ufunc_into_another_index_gives_it_the_result_form():
    i = _formed()
    j = _formed() * 0  # formed, read-only
    np.add(i, 1, out=j)
    assert np.array_equal(np.asarray(j), [[2, 5, 8, 11]])
    assert j.form == Form(2, (0, 0, 0, 3, 0, 0), (2, 1, 1, 4, 1, 1))
    assert not j.flags.writeable
    assert i.form is not None  # only read


def test_partial_ufunc_write_drops_the_form():
    i = _formed()
    np.add(i, 100, out=i, where=np.asarray(i) > 4)
    assert np.array_equal(np.asarray(i), [[1, 4, 107, 110]])
    assert i.form is None


def test_item_write_drops_the_form():
    i = _formed()
    i[..., :1] = 7
    assert np.array_equal(np.asarray(i), [[7, 4, 7, 10]])
    assert i.form is None
    np.copyto(i, 0)  # without a form the array is an ordinary writable one again
    assert not np.asarray(i).any()


def test_write_through_a_view_drops_the_form_of_its_base():
    i = _formed()
    v = i[:, :]
    v[0, 0] = 5
    assert i.form is None and v.form is None
    assert np.array_equal(np.asarray(i), [[5, 4, 7, 10]])
    j = _formed()
    w = j[:, ::-1][:, 1:]  # a view of a view
    w[0, 0] = -1
    assert j.form is None and np.array_equal(np.asarray(j), [[1, 4, -1, 10]])


@pytest.mark.parametrize("write", [
    lambda i: np.copyto(i, 0),
    lambda i: np.put(i, [0], 9),
    lambda i: np.putmask(i, np.ones(i.shape, bool), 9),
    lambda i: np.add.at(i, [0], 1),
    lambda i: i.sort(axis=1),
    lambda i: np.asarray(i).__setitem__((0, 0), 9),
    lambda i: i.view(np.ndarray).__setitem__((0, 0), 9),
], ids=["copyto", "put", "putmask", "ufunc.at", "sort", "asarray", "plain view"])
def test_numpy_c_writes_to_a_formed_index_raise(write):
    i = -_formed()  # descending values, so that a sort would change them
    before = np.asarray(i).copy()
    with pytest.raises(ValueError, match="read-only"):
        write(i)
    assert np.array_equal(np.asarray(i), before) and i.form is not None
    assert_form_describes(i)


def test_fill_drops_the_form():
    i = _formed()
    i.fill(3)
    assert i.form is None and np.array_equal(np.asarray(i), [[3, 3, 3, 3]])


@pytest.mark.parametrize("change", ["shape", "dtype"])
def test_reinterpreting_in_place_drops_the_form(change):
    geo = Geometry((4, 1, 1), (4, 1, 1))
    t = geo.tx * 2
    if change == "shape":
        t.shape = (4, 1)  # now the values run down the blocks
    else:
        t.dtype = np.float32  # now not an integer index at all
    assert t.form is None


# -- 4. repr ------------------------------------------------------------------------------------


def test_repr_is_numpys():
    v = capture((2, 1), (3, 2))
    for x in (v["tx"], v["bx"], v["tid"], v["tx"] * 3 + v["bx"]):
        assert repr(x).startswith("array(")
        assert repr(x) == repr(np.asarray(x))
    assert repr(v["tx"]) == "array([[0, 1, 2, 0, 1, 2]], dtype=int32)"


# -- 5. address -------------------------------------------------------------------------------


def test_address_of_a_flat_index():
    geo = Geometry((3, 1, 1), (4, 1, 1))
    bx, _, _ = block_variables(geo, 0, 3)
    i = bx * 4 + geo.tx  # 0 .. 11
    form, inside = affine.address(i, (12,), geo.extent, (3, 4))
    assert form == i.form and inside
    assert (evaluate_form(form) == np.arange(12).reshape(3, 4)).all()
    assert affine.address(i, (11,), geo.extent, (3, 4)) == (i.form, False)  # one past the end
    assert affine.address(i, (3, 4), geo.extent, (3, 4)) == (i.form, True)  # a flat index into a 2-D array
    assert affine.address(i, (12,), geo.extent, (3, 4), width=2)[1] is False  # element 11 + 1 is outside
    wide = 2 * i  # 0, 2, … 22, two elements each
    assert affine.address(wide, (24,), geo.extent, (3, 4), width=2) == (wide.form, True)
    assert affine.address(wide, (23,), geo.extent, (3, 4), width=2) == (wide.form, False)
    assert affine.address(i - 1, (12,), geo.extent, (3, 4))[1] is False  # -1 is outside too
    assert affine.address(i + 3, (15,), geo.extent, (3, 4)) == ((i + 3).form, True)


def test_address_of_a_tuple_index():
    geo = Geometry((2, 2, 1), (4, 3, 1))
    bx, by, _ = block_variables(geo, 0, 4)
    row, col = by * 3 + geo.ty, bx * 4 + geo.tx  # 0..5, 0..7
    form, inside = affine.address((row, col), (6, 8), geo.extent, (4, 12))
    assert inside and form == Form(0, (4, 24, 0, 1, 8, 0), geo.extent)
    flat = np.ravel_multi_index((np.broadcast_to(np.asarray(row), (4, 12)), np.broadcast_to(np.asarray(col), (4, 12))),
                                (6, 8))
    assert (evaluate_form(form) == flat).all()
    # Column 7 of 7 columns: A[0, 7] would be element 7 of the flat array, but it is no column.
    assert affine.address((row, col), (6, 7), geo.extent, (4, 12)) == (None, False)
    assert affine.address((row, col), (5, 8), geo.extent, (4, 12)) == (None, False)
    assert affine.address((row, col - 1), (6, 8), geo.extent, (4, 12)) == (None, False)
    # Width > 1 through a tuple: every axis inside, the last run just fits or runs one past.
    wide = (row, 2 * col)  # columns 0..14, two elements each
    assert affine.address(wide, (6, 16), geo.extent, (4, 12), width=2)[1] is True
    form, inside = affine.address(wide, (6, 15), geo.extent, (4, 12), width=2)
    assert form is not None and not inside  # 5·15 + 14 + 2 > 90
    # A constant part and a transposed pair.
    form, inside = affine.address((3, col), (6, 8), geo.extent, (4, 12))
    assert inside and form == (col + 24).form
    form, inside = affine.address((col, row), (8, 6), geo.extent, (4, 12))
    assert inside and form == (col * 6 + row).form
    assert affine.address((-1, col), (6, 8), geo.extent, (4, 12)) == (None, False)


def test_address_refuses_what_it_cannot_prove():
    geo = Geometry((2, 1, 1), (4, 1, 1))
    bx, _, _ = block_variables(geo, 0, 2)
    i = bx * 4 + geo.tx
    other = Geometry((2, 1, 1), (2, 2, 1))  # another launch: as many threads, another extent
    k = other.tx + other.ty * 2  # the same values as geo.tx
    assert np.array_equal(np.asarray(k), np.asarray(geo.tx)) and k.form is not None
    assert affine.address(k, (100,), geo.extent, (2, 4)) == (None, False)
    assert affine.address((i * 0, k), (1, 100), geo.extent, (2, 4)) == (None, False)
    assert affine.address((k, i), (100, 8), geo.extent, (2, 4)) == (None, False)
    assert affine.address(geo.tx, (100,), geo.extent, (2, 4)) == (geo.tx.form, True)  # the launch's own
    assert affine.address(np.asarray(i), (8,), geo.extent, (2, 4)) == (None, False)  # plain values
    assert affine.address(i // 1, (8,), geo.extent, (2, 4)) == (None, False)
    assert affine.address((i, i), (8,), geo.extent, (2, 4)) == (None, False)  # two parts for one axis
    assert affine.address(i, (8,), geo.extent, (2, 5)) == (None, False)  # does not fit the pass's threads
    assert affine.address(i, (8,), geo.extent, (3, 4)) == (None, False)  # nor its blocks
    assert affine.address(5, (8,), geo.extent, (2, 4)) == (None, False)  # a constant: nothing per thread


# -- 6. contiguous_step ------------------------------------------------------------------------


def test_contiguous_step():
    geo = Geometry((4, 1, 1), (32, 1, 1))
    bx, _, _ = block_variables(geo, 0, 4)
    i = bx * 32 + geo.tx
    assert affine.contiguous_step(i.form) == 1
    assert affine.contiguous_step((127 - i).form) == -1
    assert affine.contiguous_step((4 * i).form) == 4
    assert affine.contiguous_step((4 * i + 9).form) == 4
    assert affine.contiguous_step((bx * 33 + geo.tx).form) is None  # a gap between blocks
    assert affine.contiguous_step((bx * 32 + 2 * geo.tx).form) is None
    assert affine.contiguous_step((geo.tx * 0 + 5).form) == 0  # every thread at one element
    # Block-major over a 2-D grid of 2-D blocks: weights T, T·gdx, 1, bdx.
    g2 = Geometry((2, 3, 1), (4, 2, 1))
    bx, by, _ = block_variables(g2, 0, 6)
    linear = (by * 2 + bx) * 8 + g2.ty * 4 + g2.tx
    assert affine.contiguous_step(linear.form) == 1
    assert affine.contiguous_step((3 * linear).form) == 3
    x, y = bx * 4 + g2.tx, by * 2 + g2.ty  # an 8 × 6 matrix
    assert affine.contiguous_step((y * 8 + x).form) is None  # row-major: not block-major
    assert affine.contiguous_step((x * 6 + y).form) is None  # the transpose
    # 3-D: bz weight T·gdx·gdy, tz weight bdx·bdy.
    g3 = Geometry((2, 2, 2), (2, 2, 2))
    bx, by, bz = block_variables(g3, 0, 8)
    assert affine.contiguous_step((((bz * 2 + by) * 2 + bx) * 8 + g3.tid).form) == 1
    assert affine.contiguous_step((((bz * 2 + by) * 2 + bx) * 8 + g3.tid + g3.tz).form) is None


def test_contiguous_step_ignores_axes_of_extent_one():
    extent = (4, 1, 1, 32, 1, 1)
    assert affine.contiguous_step(Form(0, (32, 999, -7, 1, 5, 0), extent)) == 1
    assert affine.contiguous_step(Form(0, (-64, 3, 3, -2, 1, 1), extent)) == -2
    assert affine.contiguous_step(Form(0, (12345, 0, 0, 1, 0, 0), (1, 1, 1, 32, 1, 1))) == 1
    assert affine.contiguous_step(Form(0, (7, 0, 0, 0, 0, 0), (3, 1, 1, 1, 1, 1))) == 7  # one thread a block
    assert affine.contiguous_step(Form(0, (5, 5, 5, 5, 5, 5), (1, 1, 1, 1, 1, 1))) is None  # one thread in all


# -- 7. strided_view, pass_axes, one_to_one ---------------------------------------------------


def _check_view(form: Form, first: int, blocks: int, size: int, width: int = 1):
    mem = np.arange(size, dtype=np.int64) * 10 + 3  # every element different
    view = affine.strided_view(mem, form, first, blocks, width)
    assert view is not None
    threads = int(np.prod(form.extent[3:]))
    flat = evaluate_form(form, first, blocks).astype(np.int64)
    if width == 1:
        assert np.array_equal(view.reshape(blocks, threads), mem[flat])
    else:
        assert np.array_equal(view.reshape(blocks, threads, width), mem[flat[..., None] + np.arange(width)])
    assert np.shares_memory(view, mem)  # a view, not a copy: stores go through it
    return view


def test_strided_view_of_a_1d_grid():
    geo = Geometry((5, 1, 1), (4, 1, 1))
    bx, _, _ = block_variables(geo, 0, 5)
    i = bx * 4 + geo.tx
    _check_view((2 * i + 1).form, 1, 3, 41)
    _check_view((39 - 2 * i).form, 0, 5, 40)  # backwards
    _check_view((2 * i).form, 2, 2, 40, width=2)
    assert affine.pass_axes((2 * i).form, 1, 3) == ((1, 0, 0), [(3, 8)])


def test_strided_view_of_whole_rows_of_a_2d_grid():
    geo = Geometry((3, 4, 1), (2, 2, 1))
    bx, by, _ = block_variables(geo, 0, 12)
    x, y = bx * 2 + geo.tx, by * 2 + geo.ty  # 6 × 8
    transpose = x * 8 + y
    assert affine.pass_axes(transpose.form, 3, 6) == ((0, 1, 0), [(2, 2), (3, 16)])
    _check_view(transpose.form, 3, 6, 48)  # rows 1 and 2
    _check_view(transpose.form, 0, 12, 48)
    _check_view((y * 6 + x).form, 9, 3, 48)


def test_strided_view_of_whole_planes_of_a_3d_grid():
    geo = Geometry((2, 2, 3), (2, 2, 2))
    bx, by, bz = block_variables(geo, 0, 12)
    x, y, z = bx * 2 + geo.tx, by * 2 + geo.ty, bz * 2 + geo.tz  # 4 × 4 × 6
    i = (x * 4 + y) * 6 + z
    assert affine.pass_axes(i.form, 4, 8)[0] == (0, 0, 1)
    _check_view(i.form, 4, 8, 96)
    _check_view(i.form, 0, 12, 96)
    _check_view(((z * 4 + y) * 4 + x).form, 8, 4, 96)


def test_pass_axes_refuses_a_pass_that_is_not_a_box():
    g2 = Geometry((3, 4, 1), (2, 2, 1))
    bx, by, _ = block_variables(g2, 0, 12)
    form = ((bx * 2 + g2.tx) * 8 + by * 2 + g2.ty).form
    mem = np.arange(48)
    for first, blocks in ((1, 3), (3, 4)):  # starting mid-row and running into the next
        assert affine.pass_axes(form, first, blocks) is None
        assert affine.strided_view(mem, form, first, blocks) is None
    # Part of one row is a box: blocks (1, 0) and (2, 0), thread (x, y) at (2·bx + x)·8 + y.
    view = affine.strided_view(mem, form, 1, 2)
    assert view.shape == (2, 1, 2, 2)
    assert [int(v) for v in view.reshape(-1)] == [(2 * b + x) * 8 + y for b in (1, 2) for y in (0, 1) for x in (0, 1)]
    g3 = Geometry((2, 2, 3), (1, 1, 1))
    bx, by, bz = block_variables(g3, 0, 12)
    form = (bx + 2 * by + 4 * bz).form
    assert affine.pass_axes(form, 3, 2) is None  # the end of one row and the start of the next
    assert affine.pass_axes(form, 2, 4) is None  # two rows of a 3-D grid, not a whole plane
    assert affine.pass_axes(form, 4, 4) is not None


def test_one_to_one():
    geo = Geometry((2, 1, 1), (4, 4, 1))
    bx, _, _ = block_variables(geo, 0, 2)
    mem = np.zeros(200)

    def view(i, width=1):
        return affine.strided_view(mem, i.form, 0, 2, width)

    x, y = bx * 4 + geo.tx, geo.ty  # 8 × 4
    assert affine.one_to_one(view(x * 4 + y))  # the transpose
    assert affine.one_to_one(view(y * 8 + x))
    assert not affine.one_to_one(view(geo.ty * 4 + bx * 0 + 1))  # tx coefficient 0 over 4 threads
    assert not affine.one_to_one(view(geo.tx + geo.ty + bx * 16))  # tx and ty both 1
    assert not affine.one_to_one(view(x + bx * 0))  # bx 4 but tx 1, ty 0: ty repeats
    assert not affine.one_to_one(view(y * 8 + x, width=2))  # two elements a lane, one apart
    assert affine.one_to_one(view((y * 8 + x) * 2, width=2))
    assert affine.one_to_one(view(60 - (y * 8 + x)))  # backwards


# -- 8. end to end: the fast engine against the reference -------------------------------------


def transpose(blk, a, out):
    x = blk.bx * blk.bdx + blk.tx
    y = blk.by * blk.bdy + blk.ty
    v = blk.load(a, (y, x))
    blk.store(out, (x, y), v)


def volume(blk, vol, out):
    x = blk.bx * blk.bdx + blk.tx
    y = blk.by * blk.bdy + blk.ty
    z = blk.bz * blk.bdz + blk.tz
    v = blk.load(vol, (z, y, x))
    blk.store(out, (x * 8 + y) * 8 + z, v * 2)


def stride_three(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(a, 3 * i)
    w = blk.load(a, 3 * i + 2)
    blk.store(out, i, v + w)


def masked_tuple(blk, a, out, seen):
    x = blk.bx * blk.bdx + blk.tx
    y = blk.by * blk.bdy + blk.ty
    below = np.asarray(x) < np.asarray(y)
    v = blk.load(a, (x, y), mask=below)  # the lanes masked off get 0
    blk.store(out, (y, x), v, mask=below)
    blk.store(seen, (y, x), v)


def stride_three_ragged(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx  # 10 threads a block: blocks 120 bytes apart, not whole sectors
    blk.store(out, i, blk.load(a, 3 * i))


def one_per_row(blk, out):
    blk.store(out, blk.bx * blk.bdy + blk.ty, blk.tid)  # every tx of a row stores to one element


def diagonals_backwards(blk, out):
    blk.store(out, 6 - blk.tx - blk.ty, blk.tid)  # lanes tx + ty = k share element 6 - k


def one_per_column(blk, out):
    blk.store(out, blk.bx * blk.bdx + blk.tx, blk.tid * 10 + blk.bx)  # every ty of a column: one element


def ragged(blk, a, out, n):
    i = blk.bx * blk.bdx + blk.tx
    inside = i < n
    v = blk.load(a, i, mask=inside)
    r = blk.load(a, n - 1 - i, mask=inside)
    blk.store(out, i, v * 10 + r, mask=inside)


def written_into(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    i[..., :1] = i[..., -1:]  # thread 0 now aims where the last thread does
    v = blk.load(a, 2 * i)
    blk.store(out, i, v + blk.tid)


def one_lane_per_block(blk, a, out, last):
    """The end of every reduction: one chosen thread of each block stores the block's value."""
    blk.store(out, (blk.by, blk.bx), blk.load(a, blk.bx + 0 * blk.tx) + blk.tid, mask=blk.tid == 5)
    blk.store(last, (blk.by, blk.bx), blk.tid, mask=blk.tid >= 7)  # many lanes: the last one's value stays


CASES = {
    "one lane per block stores": (one_lane_per_block, (3, 2), (4, 3),
                                  lambda: (np.arange(3, dtype=np.float32) + 0.5, np.full((2, 3), -1, np.float32),
                                           np.full((2, 3), -1, np.int32)),
                                  lambda a, out, last: np.array_equal(out, np.tile(a + 5, (2, 1))) and (last == 11).all()),
    "transpose 16×16": (transpose, (3, 2), (16, 16),
                        lambda: (np.arange(32 * 48, dtype=np.float32).reshape(32, 48), np.zeros((48, 32), np.float32)),
                        lambda a, out: np.array_equal(out, a.T)),
    "3-D block 4×4×2 over 8³": (volume, (2, 2, 4), (4, 4, 2),
                                lambda: (np.arange(512, dtype=np.float64).reshape(8, 8, 8), np.zeros(512)),
                                lambda vol, out: np.array_equal(out.reshape(8, 8, 8), 2 * vol.transpose(2, 1, 0))),
    "stride 3": (stride_three, 4, 64, lambda: (np.arange(768, dtype=np.int32), np.zeros(256, np.int32)),
                 lambda a, out: np.array_equal(out, a[0::3] + a[2::3])),
    "masked tuple store": (masked_tuple, (2, 2), (8, 8),
                           lambda: (np.arange(256, dtype=np.float32).reshape(16, 16), np.full((16, 16), -1, np.float32),
                                    np.full((16, 16), -1, np.float32)),
                           lambda a, out, seen: np.array_equal(out, np.where(np.tri(16, k=-1, dtype=bool), a.T, -1))
                           and np.array_equal(seen, np.where(np.tri(16, k=-1, dtype=bool), a.T, 0))),
    "stride 3, blocks of 10": (stride_three_ragged, 7, 10,
                               lambda: (np.arange(210, dtype=np.float32), np.zeros(70, np.float32)),
                               lambda a, out: np.array_equal(out, a[::3])),
    "many lanes to one element (rows)": (one_per_row, 3, (4, 5), lambda: (np.full(15, -1, np.int32),),
                                         lambda out: np.array_equal(out, np.tile(np.arange(5) * 4 + 3, 3))),
    "many lanes to one element (backwards diagonals)": (
        diagonals_backwards, 1, (4, 4), lambda: (np.full(7, -1, np.int32),),
        lambda out: np.array_equal(out[::-1], [k - min(3, k) + 4 * min(3, k) for k in range(7)])),  # last lane wins
    "many lanes to one element (columns)": (one_per_column, 3, (4, 5), lambda: (np.full(12, -1, np.int32),),
                                            lambda out: np.array_equal(
                                                out, ((16 + np.arange(4)) * 10 + np.arange(3)[:, None]).reshape(-1))),
    "ragged 1-D grid with a guard": (ragged, simtdocs.cdiv(1000, 128), 128,
                                     lambda: (np.arange(1000, dtype=np.int64), np.zeros(1000, np.int64), 1000),
                                     lambda a, out, n: np.array_equal(out, a * 10 + a[::-1])),
}


def _agree(kernel, grid, block, make_args, passes=(None, 1, 3)):
    ref_args = make_args()
    ref = reference.launch(kernel, grid, block, ref_args)
    for per_pass in passes:
        args = make_args()
        got = simtdocs.launch(kernel, grid, block, args, blocks_per_pass=per_pass)
        for mine, theirs in zip(args, ref_args):
            if isinstance(mine, np.ndarray):
                np.testing.assert_array_equal(mine, theirs)
        assert got.totals == ref.totals, per_pass
        assert {s.lineno: c for s, c in got.by_site.items()} == {s.lineno: c for s, c in ref.by_site.items()}
    return ref_args, ref


@pytest.mark.parametrize("case", list(CASES))
def test_affine_kernels_agree_with_the_reference(case, monkeypatch):
    kernel, grid, block, make_args, right = CASES[case]
    views = []
    real = affine.strided_view

    def spy(*args, **kwargs):
        view = real(*args, **kwargs)
        views.append(view is not None)
        return view

    monkeypatch.setattr(affine, "strided_view", spy)
    args, ref = _agree(kernel, grid, block, make_args)
    assert right(*args)  # and both are right
    assert ref.totals.requests > 0
    if case != "ragged 1-D grid with a guard":  # contiguous runs take the end-point path instead
        assert any(views), "the strided path never ran"


def backwards_pairs(blk, a):
    i = blk.bx * blk.bdx + blk.tx
    blk.load(a, 62 - i, width=2)  # every other lane starts on an odd element: misaligned


def test_a_misaligned_backwards_vector_load_fails_in_both_engines():
    a = np.arange(64, dtype=np.float16)
    with pytest.raises(simtdocs.SimulatorError) as ref:
        reference.launch(backwards_pairs, 2, 16, (a,))
    with pytest.raises(simtdocs.SimulatorError) as got:
        simtdocs.launch(backwards_pairs, 2, 16, (a,))
    assert type(got.value) is type(ref.value)
    assert str(got.value).splitlines()[0] == str(ref.value).splitlines()[0]


def test_a_written_into_index_agrees_with_the_reference():
    make = lambda: (np.arange(512, dtype=np.int32), np.full(256, -1, np.int32))
    args, _ = _agree(written_into, 4, 64, make)
    out = args[1].reshape(4, 64)
    # Thread 0 and thread 63 both store to element 63 of their block: the later lane wins.
    assert (out[:, 0] == -1).all()
    assert np.array_equal(out[:, 63], 2 * (np.arange(4) * 64 + 63) + 63)
    assert np.array_equal(out[:, 1:63], 2 * (np.arange(4)[:, None] * 64 + np.arange(1, 63)) + np.arange(1, 63))


# -- cases that once went wrong: a form lost or kept where it should not be, int32 overflow ---------


def alias_tx(blk, a, out):
    i = blk.tx * 3  # formed: strided, not contiguous
    t = blk.tx  # the same array as blk.tx (numpy aliasing)
    t += 1  # so this writes into blk.tx
    v = blk.load(a, i)
    blk.store(out, blk.tid, v)


def test_writing_into_blk_tx_does_not_change_the_counts():
    _agree(alias_tx, 1, 32, lambda: (np.arange(200, dtype=np.float32), np.zeros(32, np.float32)), passes=(None,))


def store_tx(blk, out):
    blk.store(out, blk.bx * blk.bdx + blk.tx, blk.tx)


def test_a_write_into_blk_tx_stays_in_its_pass():
    # Launches of one configuration share their thread numbering: what one pass wrote into
    # its blk.tx must reach neither the next pass nor the next launch.
    a, out = np.arange(200, dtype=np.float32), np.zeros(96, np.float32)
    simtdocs.launch(alias_tx, 3, 32, args=(a, out), blocks_per_pass=1)
    seen = np.full(96, -1, np.int32)
    simtdocs.launch(store_tx, 3, 32, args=(seen,), blocks_per_pass=1)
    assert np.array_equal(seen, np.tile(np.arange(32), 3))


def wide_rows(blk, a):
    blk.load(a, blk.ty * np.int64(2**31) + blk.tx)


def test_an_int64_index_beyond_int32_is_counted_like_the_reference(tmp_path):
    n = 2**31 + 4  # int8: a 2 GiB file, sparse, so nothing is written
    path = tmp_path / "big.bin"
    with open(path, "wb") as f:
        f.truncate(n)
    if os.stat(path).st_blocks * 512 > 1 << 20:
        pytest.skip("no sparse files here")
    a = np.memmap(path, dtype=np.int8, mode="r", shape=(n,))
    ref = reference.launch(wide_rows, 1, (4, 2), (a,))
    assert ref.totals.sectors == 2
    got = simtdocs.launch(wide_rows, 1, (4, 2), (a,))
    assert got.totals == ref.totals
