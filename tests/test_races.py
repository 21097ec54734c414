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
