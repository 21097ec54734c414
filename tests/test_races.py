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
        op = draw(st.sampled_from(["w", "r", "r", "sync"]))
        if op == "sync":
            ops.append(("sync", None, None))
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
        elif op == "w":
            blk.store(s, index[rows] % size, 7, mask=active[rows])
        else:
            blk.load(s, index[rows] % size, mask=active[rows])


@settings(max_examples=120, deadline=None)
@given(programs())
def test_races_match_reference(p):
    blocks, threads, size, ops = p
    stats = launch(_program, grid=blocks, block=threads, args=(size, ops))
    ref = reference.launch(_program, grid=blocks, block=threads, args=(size, ops))
    assert sorted((r.block[0], r.kind) for r in stats.races) == sorted((r.block[0], r.kind) for r in ref.races)


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
