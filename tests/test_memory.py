"""Sector and wavefront counts against the per-lane reference, on random access patterns."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import global_counters, shared_wavefronts
from simtdocs import launch
from simtdocs.memory import count_sectors, count_wavefronts


@st.composite
def patterns(draw):
    blocks = draw(st.integers(1, 4))
    threads = draw(st.integers(1, 130))
    dtype = draw(st.sampled_from([np.int8, np.float16, np.float32, np.float64]))
    width = draw(st.sampled_from([1, 2, 4])) if np.dtype(dtype).itemsize <= 4 else 1
    size = draw(st.integers(width * 4, 4096))
    size -= size % width
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["random", "strided", "broadcast", "reversed"]))
    slots = size // width
    tid = np.arange(blocks * threads).reshape(blocks, threads)
    if kind == "random":
        slot = rng.integers(0, slots, (blocks, threads))
    elif kind == "strided":
        stride = draw(st.integers(1, 40))
        slot = (draw(st.integers(0, 50)) + stride * tid) % slots
    elif kind == "broadcast":
        slot = np.full((blocks, threads), rng.integers(0, slots))
    else:
        slot = (slots - 1 - tid) % slots
    index = (slot * width).astype(np.int32)
    active = rng.random((blocks, threads)) < draw(st.sampled_from([0.0, 0.3, 0.9, 1.0]))
    return blocks, threads, np.dtype(dtype), width, size, index, active


def _read(blk, a, index, active, width):
    rows = blk.bx[:, 0]
    return blk.load(a, index[rows], mask=active[rows], width=width)


@settings(max_examples=150, deadline=None)
@given(patterns())
def test_global_counters_match_reference(p):
    blocks, threads, dtype, width, size, index, active = p
    a = np.arange(size).astype(dtype)
    got = launch(_read, grid=blocks, block=threads, args=(a, index, active, width))
    ref = global_counters(index, active, dtype.itemsize, width)
    assert got.requests == ref["requests"]
    assert got.sectors == ref["sectors"]
    assert got.requested_bytes == ref["requested_bytes"]
    assert got.active_lanes == ref["active_lanes"]
    # Batching blocks into one numpy pass must not change a single counter.
    one_by_one = launch(_read, grid=blocks, block=threads, args=(a, index, active, width), blocks_per_pass=1)
    assert one_by_one.totals == got.totals


def _read_shared(blk, index, active, dtype, size):
    s = blk.shared(size, dtype, name="s")
    blk.store(s, np.minimum(blk.tid, size - 1), 1)  # warm every element the read may touch
    for start in range(0, size, blk.nthreads):
        blk.store(s, np.minimum(start + blk.tid, size - 1), 1)
    blk.sync()
    rows = blk.bx[:, 0]
    return blk.load(s, index[rows], mask=active[rows])


@settings(max_examples=150, deadline=None)
@given(patterns())
def test_shared_wavefronts_match_reference(p):
    blocks, threads, dtype, width, size, index, active = p
    index = index // width  # element indices of a scalar access
    got = launch(_read_shared, grid=blocks, block=threads, args=(index, active, dtype, size))
    line = got.lines[-1].counters
    assert (line.shared_wavefronts, line.shared_requests) == shared_wavefronts(index, active, dtype.itemsize)


def test_count_sectors_by_hand():
    # Two warps: one walks 0..31 (float32 → 4 sectors), one reads backwards (4 sectors).
    sectors = np.concatenate([np.arange(32) * 4 // 32, np.arange(31, -1, -1) * 4 // 32])
    assert count_sectors(sectors, np.array([0, 32])) == 8
    assert count_sectors(np.array([], dtype=np.int32), np.array([], dtype=np.int64)) == 0


def test_count_wavefronts_by_hand():
    column = np.arange(32) * 32  # every lane in bank 0: 32-way
    broadcast = np.zeros(32, dtype=np.int64)  # one word: 1
    padded = np.arange(32) * 33  # stride 33: conflict-free
    words = np.concatenate([column, broadcast, padded])
    assert count_wavefronts(words, np.array([0, 32, 64])) == 32 + 1 + 1
