"""The race check against the reference engine (simtdocs.reference) on the same shared-memory accesses."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simtdocs import launch, reference


@st.composite
def programs(draw):
    blocks = draw(st.integers(1, 3))
    threads = draw(st.integers(1, 100))
    size = draw(st.integers(1, 128))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ops = []
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(["w", "r", "r", "sync", "syncwarp", "block sync"]))
        if op in ("sync", "syncwarp"):
            ops.append((op, None, None))
        elif op == "block sync":  # a barrier every thread of some blocks reaches and none of the others
            ops.append((op, rng.random(blocks) < 0.5, None))
        else:
            ops.append((op, rng.integers(0, size, (blocks, threads)), rng.random((blocks, threads)) < 0.7))
    return blocks, threads, size, ops


def _program(blk, size, ops):
    s = blk.shared(size, np.int32, name="s")
    for first in range(0, size, blk.nthreads):  # fill it, so no read is of an unwritten word
        blk.store(s, first + blk.tid, 0, mask=first + blk.tid < size)
    blk.sync()
    rows = blk.bx[:, 0]
    for op, index, active in ops:
        if op == "sync":
            blk.sync()
        elif op == "block sync":
            blk.sync(mask=np.broadcast_to(index[rows][:, None], (blk.nblocks, blk.nthreads)))
        elif op == "syncwarp":
            blk.syncwarp()
        elif op == "w":
            blk.store(s, index[rows] % size, blk.tid, mask=active[rows])
        elif op == "r":
            blk.load(s, index[rows] % size, mask=active[rows])
        else:  # s[i] += 1: a load and a store on one line, as a histogram does
            i = index[rows] % size
            blk.store(s, i, blk.load(s, i, mask=active[rows]) + 1, mask=active[rows])


@settings(max_examples=120, deadline=None)
@given(programs())
def test_races_match_reference(p):
    blocks, threads, size, ops = p
    stats = launch(_program, grid=blocks, block=threads, args=(size, ops))
    ref = reference.launch(_program, grid=blocks, block=threads, args=(size, ops))
    assert sorted((r.block[0], r.kind) for r in stats.races) == sorted((r.block[0], r.kind) for r in ref.races)


def test_a_write_left_in_a_block_that_skipped_a_barrier_still_meets_a_later_read():
    # Both blocks: thread 0 writes s[0] and a syncwarp orders warp 0 (its lanes' write marks are
    # cleared, the warp's bit stays). Only block 0 passes the barrier; in block 1, warp 1 then
    # reads s[0], which warp 0 wrote in the same phase: a read-after-write race, there alone.
    def skipped(blk):
        s = blk.shared(64, np.int32, name="s")
        blk.store(s, blk.tx, 0)
        blk.sync()
        blk.store(s, 0 * blk.tx, 7, mask=blk.tx == 0)
        blk.syncwarp()
        blk.sync(mask=np.broadcast_to(blk.bx == 0, (blk.nblocks, blk.nthreads)))
        blk.load(s, 0 * blk.tx, mask=blk.tx == 32)

    for run in (launch, reference.launch):
        stats = run(skipped, grid=2, block=64)
        assert [(r.block[0], r.kind) for r in stats.races] == [(1, "read-after-write")], run


def test_write_after_read_is_named():
    def overwrite_too_early(blk):
        s = blk.shared(64, np.float32, name="s")
        blk.store(s, blk.tx, 1.0)
        blk.sync()
        v = blk.load(s, 63 - blk.tx)  # warp 1 reads what warp 0 wrote
        blk.store(s, blk.tx, v)  # warp 0 overwrites s[0..31] that warp 1 just read

    stats = launch(overwrite_too_early, grid=1, block=64)
    [race] = stats.races
    assert race.other_site.source == "v = blk.load(s, 63 - blk.tx)  # warp 1 reads what warp 0 wrote"
    assert race.message == (f"warp 0 writes shared s[0], read in this phase by warp 1 at line "
                            f"{race.other_site.lineno}, with no sync between")


@st.composite
def private_programs(draw):
    """Accesses where each thread mostly keeps to its own elements (a histogram's counters,
    a slot of its own), from a few source lines, with some lanes reaching into another
    thread's elements, in the same warp or another; ``syncwarp`` and barriers between."""
    blocks = draw(st.integers(1, 3))
    threads = draw(st.integers(1, 96))
    per_thread = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ops = []
    for _ in range(draw(st.integers(1, 10))):
        op = draw(st.sampled_from(["w", "r", "rw", "syncwarp", "sync"]))
        if op in ("sync", "syncwarp"):
            ops.append((op, None, None))
            continue
        own = np.arange(threads) * per_thread + rng.integers(0, per_thread, (blocks, threads))
        strays = rng.random((blocks, threads)) < draw(st.sampled_from([0.0, 0.0, 0.02, 0.2]))
        near = np.clip(np.arange(threads) + rng.integers(-3, 4, (blocks, threads)), 0, threads - 1)  # a lane nearby
        far = rng.integers(0, threads, (blocks, threads))  # any thread, often another warp
        other = np.where(rng.random((blocks, threads)) < 0.5, near, far) * per_thread
        ops.append((op, np.where(strays, other, own), rng.random((blocks, threads)) < 0.8))
    return blocks, threads, per_thread * threads, ops


def _race_record(r):
    return (r.block, r.kind, r.warp, r.other_warp, r.lane, r.other_lane, r.address,
            r.site.lineno, None if r.other_site is None else r.other_site.lineno)


@settings(max_examples=150, deadline=None)
@given(private_programs())
def test_races_on_mostly_private_elements_match_reference(p):
    # Elements one thread keeps to itself are logged by their owner alone until another
    # thread reaches them (simtdocs.racecheck): every race must still be found and named.
    blocks, threads, size, ops = p
    ref = reference.launch(_program, grid=blocks, block=threads, args=(size, ops))
    for per_pass in (None, 1):
        stats = launch(_program, grid=blocks, block=threads, args=(size, ops), blocks_per_pass=per_pass)
        assert sorted(map(_race_record, stats.races)) == sorted(map(_race_record, ref.races))


# -- atomics in racecheck, and hazard counts (issue 38) -----------------------------------------

ENGINES = (reference.launch, launch, lambda *a, **k: launch(*a, blocks_per_pass=1, **k))


def skipped_in_last_block(blk, out):
    s = blk.shared(256, np.int32, name="s")
    tid = blk.tid
    blk.store(s, tid, tid)
    blk.sync(mask=np.broadcast_to(blk.bx != blk.gdx - 1, (blk.nblocks, blk.nthreads)))
    blk.store(out, blk.bx * 256 + tid, blk.load(s, (tid + 1) % 256))


def test_a_barrier_skipped_in_the_last_block_counts_256_hazards_and_advises_syncthreads():
    # Block 2 skips the barrier: each of its 256 threads reads s[(tid + 1) % 256], which
    # another thread wrote in the same phase: 256 racing reads, one record (block and access
    # pair). 31 of every 32 readers race a lane of their own warp (lane 0 reads what lane 1
    # wrote, the first named), the last lane of each of the 8 warps the next warp's (thread
    # 255 warp 0's s[0]): 8 across warps, so __syncwarp() would not do.
    from simtdocs.puzzles import verdict as V

    for run in ENGINES:
        stats = run(skipped_in_last_block, grid=3, block=256, args=(np.zeros(768, np.int32),))
        [race] = stats.races
        assert (race.block, race.kind, race.warp, race.lane, race.other_lane) == ((2, 0, 0), "read-after-write", 0, 0, 1)
        assert (race.hazards, race.across_warps, stats.hazards) == (256, 8, 256)
        assert str(race).endswith("[256 hazards]")
        message = V.race(stats.races, V.Lines(skipped_in_last_block)).en
        assert message.startswith("a race inside warp 0 on line 6: lane 0 reads shared s[1], which lane 1 writes on "
                                  "line 4; other warps race on s in this block too, so it needs __syncthreads() "
                                  "between (256 hazards in all)"), message


def histogram_read_out_early(blk, x, hist):
    local = blk.shared(32, np.int32, name="local")
    t = blk.tx
    first = t < 32
    blk.store(local, t, 0 * t, mask=first)
    blk.sync()
    blk.atomic_add(local, blk.load(x, blk.bx * blk.bdx + t), 1 + 0 * t)
    blk.atomic_add(hist, t, blk.load(local, t, mask=first), mask=first)  # no sync() before the read-out


def test_a_histogram_read_out_without_its_second_barrier_races_its_atomics():
    # x[i] = i % 32: bin b of every block is updated by threads b, b + 32, …, b + 224, one in
    # each of the 8 warps. The read-out threads 0..31 (warp 0) each read a bin that 7 other
    # warps updated with no barrier between: 32 racing reads per block, all across warps, a
    # plain read after atomics; 16 blocks, 512 hazards.
    x = (np.arange(4096) % 32).astype(np.int32)
    for run in ENGINES:
        hist = np.zeros(32, np.int32)
        stats = run(histogram_read_out_early, grid=16, block=256, args=(x, hist))
        assert hist.tolist() == [128] * 32  # the simulator's serial order: right, by luck of the order
        assert [r.block[0] for r in stats.races] == list(range(16))
        for r in stats.races:
            assert (r.kind, r.atomic, r.other_atomic, r.hazards, r.across_warps) == ("read-after-write", False, True,
                                                                                   32, 32)
            assert r.site.source.startswith("blk.atomic_add(hist, t, blk.load(local, t")
            assert r.other_site.source.startswith("blk.atomic_add(local, blk.load(x")
        assert stats.hazards == 512
        assert "reads shared local[0], atomically updated in this phase by warp 1" in str(stats.races[0])


def test_atomics_inside_one_warp_race_a_plain_read_unless_a_syncwarp_orders_them():
    # Lane t adds to s[(t + 1) % 32], then reads s[t], which lane t - 1 updated: 32 racing
    # reads inside the warp (lane 0 reads what lane 31 updated); a __syncwarp() between
    # orders them.
    def kernel(blk, order):
        s = blk.shared(32, np.int32, name="s")
        blk.store(s, blk.tx, 0 * blk.tx)
        blk.sync()
        blk.atomic_add(s, (blk.tx + 1) % 32, 1 + 0 * blk.tx)
        if order:
            blk.syncwarp()
        blk.load(s, blk.tx)

    for run in ENGINES:
        stats = run(kernel, grid=2, block=32, args=(False,))
        assert [(r.block[0], r.lane, r.other_lane, r.hazards, r.across_warps, r.other_atomic) for r in stats.races] \
            == [(0, 0, 31, 32, 0, True), (1, 0, 31, 32, 0, True)]
        assert not run(kernel, grid=2, block=32, args=(True,)).races


def test_two_atomics_never_race_but_an_atomic_meets_plain_reads_and_writes():
    def atomics_only(blk):
        s = blk.shared(1, np.int32, name="s")
        blk.store(s, 0 * blk.tx, 0, mask=blk.tx == 0)
        blk.sync()
        blk.atomic_add(s, 0 * blk.tx, 1 + 0 * blk.tx)
        blk.atomic_max(s, 0 * blk.tx, blk.tx)

    def atomic_after_read(blk):  # thread t reads s[t]; then thread t updates s[(t + 32) % 64], read by another warp
        s = blk.shared(64, np.int32, name="s")
        blk.store(s, blk.tx, 0 * blk.tx)
        blk.sync()
        blk.load(s, blk.tx)
        blk.atomic_add(s, (blk.tx + 32) % 64, 1 + 0 * blk.tx)

    def zeroed_without_barrier(blk):  # threads 0..31 zero the bins, threads 32..63 add to them at once
        s = blk.shared(32, np.int32, name="s")
        blk.store(s, blk.tx, 0 * blk.tx, mask=blk.tx < 32)
        blk.atomic_add(s, blk.tx % 32, 1 + 0 * blk.tx)

    for run in ENGINES:
        assert not run(atomics_only, grid=2, block=128).races
        stats = run(atomic_after_read, grid=1, block=64)
        assert [(r.kind, r.atomic, r.warp, r.other_warp, r.hazards, r.across_warps) for r in stats.races] == [
            ("write-after-read", True, 0, 1, 64, 64)]
        assert stats.races[0].message.startswith("warp 0 atomically updates shared s[32], read in this phase by warp 1")
        stats = run(zeroed_without_barrier, grid=1, block=64)
        assert [(r.kind, r.atomic, r.warp, r.other_warp, r.address, r.hazards, r.across_warps) for r in stats.races] \
            == [("write-after-write", True, 1, 0, 0, 32, 32)]
