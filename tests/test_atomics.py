"""Atomics: every way ``atomics.apply`` serves lanes gives what serving them one at a time gives.

The slow, obviously right version is a Python loop over the lanes in serial order. The fast
ones are the rounds (few lanes per element), the global sort (many), and the per-block
grouping shared memory hands over when every lane of every block runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simtdocs
from simtdocs import atomics, reference


def one_at_a_time(mem, keys, values, op, compare=None):
    old = np.empty(keys.size, mem.dtype)
    with np.errstate(over="ignore"):  # small integers wrap around, as on a GPU
        _serve(mem, keys, values, op, compare, old)
    return old


def _serve(mem, keys, values, op, compare, old):
    for j, (k, v) in enumerate(zip(keys, values)):
        old[j] = mem[k]
        c = None if compare is None else compare[j]
        mem[k] = {"add": lambda o: o + v, "max": lambda o: np.maximum(o, v), "min": lambda o: np.minimum(o, v),
                  "exch": lambda o: v, "cas": lambda o: v if o == c else o}[op](mem[k])


@settings(max_examples=300, deadline=None)
@given(blocks=st.integers(1, 6), threads=st.integers(1, 70), size=st.integers(1, 40),
       op=st.sampled_from(["add", "exch", "max", "min", "cas"]),
       dtype=st.sampled_from([np.int32, np.uint8, np.int64, np.float16, np.float32, np.float64]),
       seed=st.integers(0, 2**31))
def test_grouped_per_block_agrees_with_one_lane_at_a_time(blocks, threads, size, op, dtype, seed):
    rng = np.random.default_rng(seed)
    elements = rng.integers(0, size, (blocks, threads))
    if rng.random() < 0.4:  # many lanes on few elements: more than atomics.ROUNDS on one
        elements %= 2
    keys = (np.arange(blocks)[:, None] * size + elements).reshape(-1)
    values = rng.integers(0, 200, keys.size).astype(dtype)  # uint8 sums wrap, as on a GPU
    if np.dtype(dtype).kind == "f":  # fractions: a float sum rounds differently in another order
        values = (values + rng.random(keys.size)).astype(dtype)
        if rng.random() < 0.2:
            values[rng.integers(0, keys.size)] = np.nan
    compare = rng.integers(0, 3, keys.size).astype(dtype) if op == "cas" else None
    if op == "cas" and rng.random() < 0.5:  # chains: a lane swaps in what the next one compares with
        values = rng.integers(0, 3, keys.size).astype(dtype)
    start = rng.integers(0, 3, blocks * size).astype(dtype)
    want_mem = start.copy()
    want = one_at_a_time(want_mem, keys, values, op, compare)
    grouped = atomics.by_element_per_block(elements, size)
    assert sorted(grouped[0]) == list(range(keys.size))
    assert np.array_equal(grouped[1], keys[grouped[0]])
    for grouping in (None, grouped):
        mem = start.copy()
        got = atomics.apply(mem, keys, values, op, compare, grouping)
        assert np.array_equal(got, want, equal_nan=True) and np.array_equal(mem, want_mem, equal_nan=True), \
            (op, grouping is None)


def histogram_with_tickets(blk, data, bins, tickets, n):
    """Every lane of every block adds to a shared bin and keeps the old value (its ticket)."""
    h = blk.shared(16, np.int32, name="h")
    blk.store(h, blk.tx % 16, 0, mask=blk.tx < 16)
    blk.sync()
    i = blk.bx * blk.bdx + blk.tx
    old = blk.atomic_add(h, blk.load(data, i), 1)
    blk.store(tickets, i, old)
    blk.sync()
    blk.atomic_add(bins, blk.tx, blk.load(h, blk.tx, mask=blk.tx < 16), mask=blk.tx < 16)


def swap_in(blk, data, out):
    """atomicExch on shared memory by every lane: each gets the value of the lane before it."""
    s = blk.shared(8, np.int32, name="s")
    blk.store(s, blk.tx % 8, -1, mask=blk.tx < 8)
    blk.sync()
    i = blk.bx * blk.bdx + blk.tx
    blk.store(out, i, blk.atomic_exch(s, blk.load(data, i) % 8, i))


@pytest.mark.parametrize("per_pass", [None, 1, 3])
def test_shared_atomics_of_every_lane_match_the_reference(per_pass):
    rng = np.random.default_rng(7)
    n, block = 12 * 64, 64
    data = rng.integers(0, 16, n).astype(np.int32)
    results = []
    for engine, kw in ((reference.launch, {}), (simtdocs.launch, {"blocks_per_pass": per_pass})):
        bins, tickets, swapped = np.zeros(16, np.int32), np.zeros(n, np.int32), np.zeros(n, np.int32)
        s1 = engine(histogram_with_tickets, n // block, block, (data, bins, tickets, n), **kw)
        s2 = engine(swap_in, n // block, block, (data, swapped), **kw)
        results.append((bins, tickets, swapped, s1.totals, s2.totals))
    (b0, t0, w0, c0, d0), (b1, t1, w1, c1, d1) = results
    assert np.array_equal(b0, np.bincount(data, minlength=16))
    assert np.array_equal(b1, b0) and np.array_equal(t1, t0) and np.array_equal(w1, w0)
    assert c1 == c0 and d1 == d0
    # The tickets of one block and one bin are 0, 1, 2, … in lane order.
    first = data[:block] == data[0]
    assert t0[:block][first].tolist() == list(range(int(first.sum())))


@pytest.mark.parametrize("op", ["add", "max", "min", "cas"])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
@pytest.mark.parametrize("others", [True, False])
def test_hot_elements_and_long_swap_chains_agree_with_one_lane_at_a_time(monkeypatch, op, dtype, others):
    # Small thresholds, so that a few hundred lanes take the paths meant for millions: a hot
    # element accumulated on its own row, and a compare-and-swap chain finished lane by lane
    # (among other elements, and on its own: a lock, a CAS-built atomicAdd).
    monkeypatch.setattr(atomics, "LONG_ROW", 8)
    monkeypatch.setattr(atomics, "CAS_ROUNDS", 3)
    rng = np.random.default_rng(11)
    keys = np.where(rng.random(600) < 0.7, 3, rng.integers(0, 6, 600))  # element 3 is hot
    if not others:
        keys[:] = 3
    values = rng.integers(0, 4, keys.size).astype(dtype)
    if np.dtype(dtype).kind == "f":
        values = (values + rng.random(keys.size)).astype(dtype)
    compare = None
    if op == "cas":  # lane j swaps in j + 1 when it finds j: a chain that swaps on every lane
        values = (np.arange(keys.size) + 1).astype(dtype)
        compare = np.arange(keys.size).astype(dtype)
    start = np.zeros(6, dtype)
    want_mem = start.copy()
    want = one_at_a_time(want_mem, keys, values, op, compare)
    mem = start.copy()
    got = atomics.apply(mem, keys, values, op, compare)
    assert np.array_equal(got, want) and np.array_equal(mem, want_mem)


@settings(max_examples=150, deadline=None)
@given(lanes=st.integers(1, 400), size=st.integers(1, 60), op=st.sampled_from(["add", "exch", "max", "min", "cas"]),
       dtype=st.sampled_from([np.int32, np.uint8, np.float32, np.float64]), long_row=st.sampled_from([4, 4096]),
       seed=st.integers(0, 2**31))
def test_lanes_already_grouped_by_element_agree_with_one_lane_at_a_time(lanes, size, op, dtype, long_row, seed):
    # COO's row indices, a counter every lane hits: keys already in order take the sorted
    # path without a sort, rows of every length class sharing one buffer.
    rng = np.random.default_rng(seed)
    keys = np.sort(rng.integers(0, size, lanes))
    if rng.random() < 0.3:
        keys = keys[::-1].copy()  # descending: not grouped in order, the general paths
    values = rng.integers(0, 200, lanes).astype(dtype)
    if np.dtype(dtype).kind == "f":  # fractions: a float sum rounds differently in another order
        values = (values + rng.random(lanes)).astype(dtype)
    compare = rng.integers(0, 3, lanes).astype(dtype) if op == "cas" else None
    start = rng.integers(0, 3, size).astype(dtype)
    want_mem = start.copy()
    want = one_at_a_time(want_mem, keys, values, op, compare)
    mem = start.copy()
    saved, atomics.LONG_ROW = atomics.LONG_ROW, long_row
    try:
        got = atomics.apply(mem, keys, values, op, compare)
    finally:
        atomics.LONG_ROW = saved
    assert np.array_equal(got, want) and np.array_equal(mem, want_mem)


@settings(max_examples=150, deadline=None)
@given(lanes=st.integers(0, 300), op=st.sampled_from(["add", "exch", "max", "min", "cas"]),
       dtype=st.sampled_from([np.int32, np.uint8, np.float32, np.float64]), short=st.sampled_from([4, 64]),
       seed=st.integers(0, 2**31))
def test_every_lane_on_one_element_agrees_with_one_lane_at_a_time(lanes, op, dtype, short, seed):
    # A counter, a lock, a total every thread adds to: apply_one, the path a launch takes when
    # the index names one element for every lane, against the lanes one after another.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(atomics, "SHORT_ROWS", short)  # longer rows accumulate as one row
        _one_element_case(lanes, op, dtype, seed)


def _one_element_case(lanes, op, dtype, seed):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 4, lanes).astype(dtype)
    if np.dtype(dtype).kind == "f":
        values = (values + rng.random(lanes)).astype(dtype)
    compare = rng.integers(0, 4, lanes).astype(dtype) if op == "cas" else None
    start = np.full(5, 2, dtype)
    want_mem = start.copy()
    want = one_at_a_time(want_mem, np.full(lanes, 3), values, op, compare)
    mem = start.copy()
    got = atomics.apply_one(mem, 3, values, op, compare)
    assert np.array_equal(got, want, equal_nan=True) and np.array_equal(mem, want_mem, equal_nan=True)
