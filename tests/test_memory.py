"""Sector and wavefront counts against the reference engine (simtdocs.reference), on random access patterns."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simtdocs import launch, reference
from simtdocs.memory import distinct_per_warp, phases, wavefronts


@st.composite
def patterns(draw):
    blocks = draw(st.integers(1, 4))
    threads = draw(st.one_of(st.sampled_from([32, 64, 128]), st.integers(1, 130)))  # whole warps, and not
    dtype = draw(st.sampled_from([np.int8, np.float16, np.float32, np.float64]))
    width = draw(st.sampled_from([1, 2, 4])) if np.dtype(dtype).itemsize <= 4 else 1
    size = draw(st.integers(width * 4, 4096))
    size -= size % width
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["random", "strided", "broadcast", "reversed", "forward", "backward", "shifted"]))
    slots = size // width
    tid = np.arange(blocks * threads).reshape(blocks, threads)
    if kind in ("forward", "backward"):  # a run of slots without wrapping: the engine's end-point path
        slots = max(slots, blocks * threads + 64)
        size = slots * width
        first = draw(st.integers(0, 64))
        slot = first + tid if kind == "forward" else slots - 1 - first - tid
    elif kind == "shifted":  # one pattern per block, moved by an offset per block (a 2-D grid)
        unit = draw(st.sampled_from([1, 4, 8, 32]))
        offset = rng.integers(0, max(1, slots // (2 * unit)), blocks) * unit
        slot = (offset[:, None] + rng.integers(0, slots // 2, threads)[None, :]) % slots
    elif kind == "random":
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
    if draw(st.booleans()):  # the same threads in every block
        active[:] = active[0]
    # Elements into the allocation (a view a[skip:]): sectors depend on where the array starts.
    skip = draw(st.sampled_from([0, 0, 1, 3, 8]))
    return blocks, threads, np.dtype(dtype), width, size, index, active, skip


def _read(blk, a, index, active, width):
    rows = blk.bx[:, 0]
    same = (active == active[0]).all()  # then pass one row: the mask of every block, as blk.tx < k is
    return blk.load(a, index[rows], mask=active[:1] if same else active[rows], width=width)


@settings(max_examples=150, deadline=None)
@given(patterns())
def test_global_counters_match_reference(p):
    blocks, threads, dtype, width, size, index, active, skip = p
    if skip % width:  # a vector access through a misaligned view faults: tested elsewhere
        skip = 0
    a = np.arange(size + skip).astype(dtype)[skip:]
    got = launch(_read, grid=blocks, block=threads, args=(a, index, active, width))
    ref = reference.launch(_read, grid=blocks, block=threads, args=(a, index, active, width))
    assert (got.requests, got.sectors, got.requested_bytes, got.active_lanes) == (
        ref.requests, ref.sectors, ref.requested_bytes, ref.active_lanes)
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
    blocks, threads, dtype, width, size, index, active, _skip = p
    index = index // width  # element indices of a scalar access
    got = launch(_read_shared, grid=blocks, block=threads, args=(index, active, dtype, size))
    ref = reference.launch(_read_shared, grid=blocks, block=threads, args=(index, active, dtype, size))
    line, ref_line = got.lines[-1].counters, ref.lines[-1].counters
    assert (line.shared_wavefronts, line.shared_ideal_wavefronts, line.shared_requests) == (
        ref_line.shared_wavefronts, ref_line.shared_ideal_wavefronts, ref_line.shared_requests)


def test_distinct_per_warp_by_hand():
    # Two warps: one walks 0..31 (float32 → 4 sectors), one reads backwards (4 sectors).
    rows = np.stack([np.arange(32) * 4 // 32, np.arange(31, -1, -1) * 4 // 32])
    assert distinct_per_warp(rows) == 8
    # A gather: lanes 0..31 touch sectors 0, 5, 0, 5, …: 2; only lane 0 active: 1.
    gather = np.tile([0, 5], 16)[None, :]
    assert distinct_per_warp(gather) == 2
    only_first = np.zeros((1, 32), bool)
    only_first[0, 0] = True
    assert distinct_per_warp(gather, only_first) == 1
    # Monotone with holes: lanes 8..15 (the second sector) inactive → 3 of 4 sectors.
    holes = np.ones((1, 32), bool)
    holes[0, 8:16] = False
    assert distinct_per_warp(rows[:1], holes) == 3
    assert distinct_per_warp(np.zeros((0, 32), np.int64)) == 0


def test_distinct_per_warp_matches_counting_each_warp_on_random_rows():
    # Rows that walk memory up, down or both ways, spread past 16 bits or not, under no mask,
    # a mask on a few warps or on most: against a set per warp.
    rng = np.random.default_rng(23)
    for case in range(300):
        warps = int(rng.integers(1, 60))
        spread = int(rng.choice([40, 1 << 20]))
        rows = np.sort(rng.integers(0, spread, (warps, 32)), axis=1)
        if rng.random() < 0.5:  # some rows walk backwards
            back = rng.random(warps) < rng.choice([0.0, 0.5, 1.0])
            rows[back] = rows[back, ::-1]
        if rng.random() < 0.3:  # a gather: not monotone
            rows[rng.integers(0, warps)] = rng.integers(0, spread, 32)
        active = None
        if rng.random() < 0.7:
            active = np.ones((warps, 32), bool)
            partial = rng.random(warps) < rng.choice([0.05, 0.5, 1.0])
            active[partial] = rng.random((int(partial.sum()), 32)) < 0.5
        want = sum(len(set(r[a].tolist() if active is not None else r.tolist()))
                   for r, a in zip(rows, active if active is not None else rows))
        assert distinct_per_warp(rows, active) == want, case


def test_wavefronts_by_hand():
    column = np.arange(32) * 32  # every lane in bank 0: 32-way
    broadcast = np.zeros(32, dtype=np.int64)  # one word: 1
    padded = np.arange(32) * 33  # stride 33: conflict-free
    assert wavefronts(np.stack([column, broadcast, padded])) == (32 + 1 + 1, 3)


def test_64_bit_lanes_are_served_in_two_phases():
    # float64 s[tx]: words 0..63, lanes 0-15 then 16-31 → 2 wavefronts, ideal 2, no conflict.
    words = (np.arange(32) * 2)[:, None] + np.arange(2)
    assert wavefronts(*phases(words[None], None)) == (2, 2)
    # float64 s[tx * 16]: words 32·l, 32·l + 1: 16 distinct words in banks 0 and 1 per phase.
    words = (np.arange(32) * 32)[:, None] + np.arange(2)
    assert wavefronts(*phases(words[None], None)) == (32, 2)


def test_blocks_with_one_pattern_shifted_count_like_the_reference():
    """Every block reads block 0's pattern moved by an offset of its own, with the same lanes
    active in each (a 2-D grid over a matrix): offsets by whole sectors and by any element."""
    rng = np.random.default_rng(11)
    for case in range(40):
        blocks, threads = int(rng.integers(2, 6)), int(rng.choice([32, 64, 96, 40]))
        dtype = np.dtype(rng.choice([np.int8, np.float16, np.float32, np.float64]))
        unit = int(rng.choice([1, 3, 8, 16, 32]))  # elements between the blocks' offsets
        pattern = rng.integers(0, 300, threads)
        offset = rng.integers(0, 40, blocks) * unit
        index = (offset[:, None] + pattern[None, :]).astype(np.int32)
        active = np.broadcast_to(rng.random(threads) < rng.choice([0.3, 1.0]), (blocks, threads)).copy()
        a = np.zeros(index.max() + 1, dtype)
        got = launch(_read, grid=blocks, block=threads, args=(a, index, active, 1))
        ref = reference.launch(_read, grid=blocks, block=threads, args=(a, index, active, 1))
        assert (got.sectors, got.requests) == (ref.sectors, ref.requests), (case, blocks, threads, dtype, unit)


def test_taps_a_byte_apart_are_counted_each_on_its_own():
    # s[17·t] then s[17·t + 1] in uint8: lanes move by one byte, not a whole word, so the
    # second access's words are not the first's moved over the banks. Words ⌊17t/4⌋ put
    # two distinct words in one bank at most (2 wavefronts); ⌊(17t+1)/4⌋ three (3).
    def kernel(blk, out):
        s = blk.shared(17 * 32 + 1, np.uint8, name="s")
        i = blk.tx * 17
        for k in (0, 1):
            blk.store(s, i + k, np.uint8(k + 1))
        blk.sync()
        blk.store(out, blk.tx, blk.load(s, i) + blk.load(s, i + 1))

    counts = []
    for run in (launch, reference.launch):
        out = np.zeros(32, np.uint8)
        stats = run(kernel, 1, 32, args=(out,))
        assert (out == 3).all()
        counts.append([c.shared_wavefronts for s, c in sorted(stats.by_site.items(), key=lambda sc: sc[0].lineno)
                       if "(s," in s.source])
    assert counts[0] == counts[1] == [2 + 3, 2 + 3]
