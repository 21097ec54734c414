"""Random Triton block programs (triton_random.py): simtdocs.triton against a per-element
numpy reference, against itself batched differently (counters per line equal), and against
Triton's own interpreter where triton is installed.

The suite runs 30 seeds; ``SIMTDOCS_LONG=1`` runs 2,000 more (seeds 1000-2999)."""

import os

import numpy as np
import pytest

import triton_oracle as O
import triton_random as R

HAVE_TRITON = O.load_triton()[0] is not None


def check(seed, interpreter=True):
    case = R.make(seed)
    kernel = case.kernel()
    mine = [a.copy() for a in case.arrays]
    stats = kernel[case.grid](*mine, *case.scalars, **case.meta)
    out, red = case.reference()
    msg = f"seed {seed}:\n{case.source}"
    if case.float_out:
        np.testing.assert_allclose(mine[2], out, rtol=1e-5, atol=1e-5, err_msg=msg)
    else:
        np.testing.assert_array_equal(mine[2], out, err_msg=msg)
    if case.reduce_kind == "sum":
        np.testing.assert_allclose(mine[3], red, rtol=1e-4, atol=1e-4, err_msg=msg)
    else:
        np.testing.assert_array_equal(mine[3], red, err_msg=msg)
    one = [a.copy() for a in case.arrays]
    s1 = kernel[case.grid](*one, *case.scalars, blocks_per_pass=1, **case.meta)
    for x, y in zip(one, mine):
        np.testing.assert_array_equal(x, y, err_msg=msg)
    assert s1.totals == stats.totals, msg
    assert {ln.site.lineno: ln.counters for ln in s1.lines} == {ln.site.lineno: ln.counters for ln in stats.lines}
    if interpreter and HAVE_TRITON:
        T = O.twin_module(case.path, f"triton_random_real_{seed}")
        theirs = [a.copy() for a in case.arrays]
        O.run(getattr(T, case.name), case.grid, *theirs, *case.scalars, **case.meta)
        if case.float_out:
            np.testing.assert_allclose(mine[2], theirs[2], rtol=1e-5, atol=1e-5, err_msg=msg)
        else:
            np.testing.assert_array_equal(mine[2], theirs[2], err_msg=msg)
        if case.reduce_kind == "sum":
            np.testing.assert_allclose(mine[3], theirs[3], rtol=1e-4, atol=1e-4, err_msg=msg)
        else:
            np.testing.assert_array_equal(mine[3], theirs[3], err_msg=msg)


@pytest.mark.parametrize("seed", range(30))
def test_random_programs(seed):
    check(seed)


@pytest.mark.skipif(not os.environ.get("SIMTDOCS_LONG"), reason="long form: set SIMTDOCS_LONG=1")
def test_random_programs_long():
    for seed in range(1000, 3000):
        check(seed)
