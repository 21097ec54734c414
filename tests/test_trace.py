"""launch(..., trace=(block, warp)) and draw_access: one warp's accesses, lane by lane.

The records are checked three ways: exact records of the lectures' textbook cases; on
random kernels, every traced warp instruction against what the *reference engine* counts
for that same warp (its own sector and bank code, one lane at a time, caught per warp by
wrapping its counting methods); and the picture's artists against the record.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simtdocs
from simtdocs import AccessRecord, LaunchError, access_alt, access_caption, draw_access, launch, reference
from simtdocs.counters import Counters
from simtdocs.i18n import language

import test_engines_agree as agree


def one_load(blk, a, stride, offset=0, width=1):
    i = blk.bx * blk.bdx + blk.tx
    blk.load(a, offset + stride * width * i, width=width)


def column(blk, words_per_row):
    tile = blk.shared((32, words_per_row), np.float32, name="tile")
    blk.store(tile, (blk.tx, 0 * blk.tx), 1.0)
    blk.load(tile, (blk.tx, 0 * blk.tx))


LOAD_LINE = one_load.__code__.co_firstlineno + 2  # the source line of the load above

# -- exact records of the textbook cases ------------------------------------------------------------


def test_contiguous_float32_warp_is_four_sectors():
    a = np.zeros(256, np.float32)
    (r,) = launch(one_load, 2, 64, args=(a, 1), trace=(1, 1)).trace
    assert (r.space, r.kind, r.array, r.block, r.warp) == ("global", "load", "a", (1, 0, 0), 1)
    assert r.site.source == "blk.load(a, offset + stride * width * i, width=width)"
    assert r.lanes == tuple(range(32))
    assert r.addresses == tuple(range(384, 512, 4))  # threads 96..127 of the grid, 4 bytes each
    assert r.sectors == (12, 13, 14, 15)
    assert (r.requested_bytes, r.moved_bytes, r.used_bytes, r.wasted_bytes) == (128, 128, 128, 0)
    assert r.coalescing_efficiency == 1.0
    assert str(r) == (f"global load of a at line {LOAD_LINE} (blk.load(a, offset + stride * width * i, width=width)), "
                      "block (1, 0, 0) warp 1: 32 lanes × 4 bytes; 4 sectors [12-15], 128 bytes moved for "
                      "128 requested (0 moved, not requested)")


def test_stride_2_moves_8_sectors_half_of_them_wasted():
    a = np.zeros(256, np.float32)
    (r,) = launch(one_load, 1, 32, args=(a, 2), trace=(0, 0)).trace
    assert r.addresses == tuple(range(0, 256, 8))
    assert r.sectors == tuple(range(8))
    assert (r.requested_bytes, r.moved_bytes, r.wasted_bytes) == (128, 256, 128)
    assert r.coalescing_efficiency == 0.5


def test_a_view_one_float_in_starts_mid_sector():
    base = np.zeros(64, np.float32)
    (r,) = launch(one_load, 1, 32, args=(base[1:], 1), trace=(0, 0)).trace
    assert r.addresses[0] == 4 and r.sectors == (0, 1, 2, 3, 4)
    assert (r.moved_bytes, r.wasted_bytes) == (160, 32)


def test_float4_lanes_have_one_address_each_for_16_bytes():
    a = np.zeros(128, np.float32)
    (r,) = launch(one_load, 1, 32, args=(a, 1, 0, 4), trace=(0, 0)).trace
    assert (r.itemsize, r.width, r.lane_bytes) == (4, 4, 16)
    assert r.addresses == tuple(range(0, 512, 16))
    assert r.sectors == tuple(range(16)) and r.wasted_bytes == 0


def test_shared_column_read_is_32_wavefronts_all_in_bank_0():
    store, read = launch(column, 1, 32, args=(32,), trace=(0, 0)).trace
    assert (read.space, read.kind, read.array) == ("shared", "load", "tile")
    assert read.addresses == tuple(range(0, 32 * 128, 128))  # s[32·tx] of float32
    assert read.banks == (0,) * 32
    assert read.wavefronts == tuple((lane,) for lane in range(32))
    assert read.served == tuple((lane,) for lane in range(32))
    assert (read.ideal_wavefronts, read.bank_conflicts, read.ways) == (1, 31, 32.0)
    assert store.wavefronts == read.wavefronts  # the store writes the same column


def test_padded_tile_column_is_one_wavefront():
    _store, read = launch(column, 1, 32, args=(33,), trace=(0, 0)).trace
    assert read.banks == tuple(range(32))
    assert read.wavefronts == (tuple(range(32)),)
    assert (read.ideal_wavefronts, read.bank_conflicts) == (1, 0)


def test_shared_broadcast_and_8_byte_phases():
    def k(blk):
        s = blk.shared(64, np.float64, name="d")
        blk.store(s, blk.tx, 1.0)
        blk.store(s, blk.tx + 32, 1.0)
        blk.sync()
        blk.load(s, 0 * blk.tx)  # everyone reads one word pair: a broadcast
        blk.load(s, blk.tx)  # 8 bytes a lane: two half-warp phases, one wavefront each
        blk.load(s, 2 * blk.tx, mask=blk.tx < 16)  # stride 2 of doubles: banks 0,1,4,5,… twice

    trace = launch(k, 1, 32, trace=(0, 0)).trace
    broadcast, halves, strided = trace[2:]
    assert broadcast.wavefronts == (tuple(range(16)), tuple(range(16, 32)))  # one per phase
    assert broadcast.ideal_wavefronts == 2 and broadcast.bank_conflicts == 0
    assert halves.wavefronts == (tuple(range(16)), tuple(range(16, 32)))
    assert halves.served[0] == (0, 0) and halves.served[16] == (1, 1)
    assert strided.lanes == tuple(range(16))
    assert strided.wavefronts == (tuple(range(8)), tuple(range(8, 16)))  # words 0-63 then 64-127
    assert (strided.ideal_wavefronts, strided.bank_conflicts) == (1, 1)


def test_masked_ragged_and_silent_warps():
    def k(blk, a):
        blk.load(a, blk.tx, mask=blk.tx < 10)
        blk.load(a, blk.tx, mask=blk.tx >= 32)  # warp 0 does not execute this one
        blk.atomic_add(a, blk.tx % 3, 1.0)
        blk.store(a, blk.tx, 2.0)

    a = np.zeros(64, np.float32)
    first, atomic, store = launch(k, 1, 40, args=(a,), trace=(0, 0)).trace
    assert first.lanes == tuple(range(10)) and first.sectors == (0, 1)
    assert (atomic.kind, atomic.sectors, atomic.lanes) == ("atomic", (0,), tuple(range(32)))
    assert store.kind == "store"
    assert [r.site.lineno for r in (first, atomic, store)] == sorted(r.site.lineno for r in (first, atomic, store))
    last = launch(k, 1, 40, args=(a,), trace=(0, 1)).trace  # warp 1 has 8 lanes: threads 32..39
    assert [len(r.lanes) for r in last] == [8, 8, 8]
    assert last[0].addresses == tuple(range(128, 160, 4))


def test_block_as_tuple_in_a_2d_grid_and_any_batching():
    def k(blk, a):
        blk.load(a, (blk.by * blk.gdx + blk.bx) * blk.bdx + blk.tx)

    a = np.zeros(6 * 64, np.float32)
    for per_pass in (1, 2, None):
        (r,) = launch(k, (3, 2), 64, args=(a,), trace=((2, 1), 1), blocks_per_pass=per_pass).trace
        assert r.block == (2, 1, 0) and r.addresses[0] == (5 * 64 + 32) * 4
    (same,) = launch(k, (3, 2), 64, args=(a,), trace=(5, 1)).trace  # linear id 5 = (2, 1)
    assert same == r


def test_no_trace_means_none_and_the_same_counters():
    a = np.zeros(256, np.float32)
    plain = launch(one_load, 4, 64, args=(a, 1))
    traced = launch(one_load, 4, 64, args=(a, 1), trace=(3, 1))
    assert plain.trace is None and len(traced.trace) == 1
    assert plain.totals == traced.totals


# -- bad trace arguments ------------------------------------------------------------------------


BAD = [
    (5, "trace=5: trace must be a pair (block, warp), the block as an int (its linear id) or a tuple like grid, "
        "e.g. trace=(0, 0) for warp 0 of block 0"),
    ((0, 0, 0), "trace=(0, 0, 0): trace must be a pair (block, warp)"),
    ((4, 0), "trace=(4, 0): there is no block 4: the grid (4, 1, 1) has 4 blocks (0 to 3)"),
    ((-1, 0), "trace=(-1, 0): there is no block -1"),
    (((0, 1), 0), "trace=((0, 1), 0): there is no block (0, 1, 0): blockIdx.y goes from 0 to 0 in the grid (4, 1, 1)"),
    ((1.0, 0), "trace=(1.0, 0): the block must be an int (its linear id) or a tuple of 1 to 3 ints like grid, got 1.0"),
    ((0, 2), "trace=(0, 2): there is no warp 2: a block of 40 threads has 2 warps (0 to 1)"),
    ((0, True), "trace=(0, True): the warp must be an int, its number in the block, got True"),
]


@pytest.mark.parametrize("trace, message", BAD, ids=[str(b[0]) for b in BAD])
def test_bad_trace_is_refused_before_anything_runs(trace, message):
    ran = []

    def k(blk):
        ran.append(1)

    with pytest.raises(LaunchError) as info:
        launch(k, 4, 40, trace=trace)
    assert str(info.value).startswith(message)
    assert ran == []


# -- agreement with the reference engine, warp by warp ---------------------------------------------


@contextlib.contextmanager
def reference_per_warp():
    """Run the reference engine with its counting methods wrapped: the log gets, per warp
    instruction, (block, warp, site, space, sectors or (wavefronts, ideal), requested bytes, lanes),
    counted by the reference's own code into a fresh Counters."""
    log = []
    current = {}
    Block = reference.Block
    access, count_global, count_shared = Block._access, Block._count_global, Block._count_shared

    def wrapped_access(self, kind, site, *rest, **kw):
        current["at"] = (self._block, site)
        return access(self, kind, site, *rest, **kw)

    def wrapped_global(self, c, array, flat, lanes, lane_bytes):
        d = Counters()
        count_global(self, d, array, flat, lanes, lane_bytes)
        c.add(d)
        block, site = current["at"]
        log.append((block, lanes[0] // 32, site, "global", d.sectors, d.requested_bytes,
                    tuple(t % 32 for t in lanes)))

    def wrapped_shared(c, array, flat, lanes, lane_bytes):
        d = Counters()
        count_shared(d, array, flat, lanes, lane_bytes)
        c.add(d)
        block, site = current["at"]
        log.append((block, lanes[0] // 32, site, "shared", (d.shared_wavefronts, d.shared_ideal_wavefronts),
                    len(lanes) * lane_bytes, tuple(t % 32 for t in lanes)))

    own = {name: Block.__dict__[name] for name in ("_access", "_count_global", "_count_shared") if name in Block.__dict__}
    Block._access, Block._count_global = wrapped_access, wrapped_global
    Block._count_shared = staticmethod(wrapped_shared)
    try:
        yield log
    finally:
        for name in ("_access", "_count_global", "_count_shared"):  # as they were, wherever they were defined
            if name in own:
                setattr(Block, name, own[name])
            else:
                delattr(Block, name)


def as_logged(r: AccessRecord):
    counted = len(r.sectors) if r.space == "global" else (len(r.wavefronts), r.ideal_wavefronts)
    return (r.block, r.warp, r.site, r.space, counted, r.requested_bytes, r.lanes)


@st.composite
def traced_programs(draw):
    p = agree.generate(agree.Chooser(draw))
    blocks = int(np.prod(p.grid))
    warps = -(-int(np.prod(p.block)) // 32)
    return p, draw(st.integers(0, blocks - 1)), draw(st.integers(0, warps - 1)), draw(st.sampled_from([1, 3, None]))


def check_against_reference(p, block, warp, per_pass):
    with reference_per_warp() as log:
        ref = agree.run(reference.launch, p)
    grid = p.grid + (1,) * (3 - len(p.grid))
    index = (block % grid[0], block // grid[0] % grid[1], block // (grid[0] * grid[1]))
    bases, views = p.fresh_args()
    try:
        stats = simtdocs.launch(p.kernel(), p.grid, p.block, args=(p.tables, agree.Recorder(), *views),
                                tools=p.tools, shared_bytes=p.shared_bytes, blocks_per_pass=per_pass,
                                trace=(block, warp))
    except Exception as exc:  # noqa: BLE001 - the reference must have failed alike
        assert "error" in ref, exc
        # Batched, blocks meet their errors in another order (as in test_engines_agree): with two kinds
        # of error in the kernel, another block's other error may come first.
        assert type(exc) is ref["error"][0] or (per_pass != 1 and len(p.risks) > 1), (exc, ref["error"])
        return
    assert "error" not in ref, ref["error"]
    assert stats.totals == ref["totals"]
    expected = [e for e in log if e[0] == index and e[1] == warp]
    assert [as_logged(r) for r in stats.trace] == expected


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(traced_programs())
def test_trace_counts_what_the_reference_counts_for_that_warp(case):
    check_against_reference(*case)


@pytest.mark.parametrize("name", ["transpose_naive", "transpose_tiled", "transpose_tiled padded", "bank_kernel",
                                  "reduce_v1", "bias_add_swapped", "vector_add ragged block"])
def test_lecture_kernels_traced_like_the_reference(name):
    kernel, grid, block, make_args = agree.LECTURE[name]
    with reference_per_warp() as log:
        reference.launch(kernel, grid, block, args=make_args())
    for b, w in {(0, 0), (1, 1)}:
        grid3 = tuple(grid) if isinstance(grid, tuple) else (grid,)
        if b >= int(np.prod(grid3)) or w >= -(-int(np.prod(block)) // 32):
            continue
        gx, gy = grid3[0], grid3[1] if len(grid3) > 1 else 1
        index = (b % gx, b // gx % gy, b // (gx * gy))
        stats = launch(kernel, grid, block, args=make_args(), trace=(b, w))
        assert [as_logged(r) for r in stats.trace] == [e for e in log if e[0] == index and e[1] == w]


# -- the picture -----------------------------------------------------------------------------------


def patches(fig, prefix):
    return sorted(p.get_gid() for ax in fig.axes for p in ax.patches if (p.get_gid() or "").startswith(prefix))


def texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts] + [ax.get_title(loc="left") for ax in fig.axes]


def test_picture_of_a_strided_load_has_its_sectors_and_waste():
    a = np.zeros(256, np.float32)
    (r,) = launch(one_load, 1, 32, args=(a, 2), trace=(0, 0)).trace
    fig = draw_access(r)
    assert patches(fig, "sector-") == sorted(f"sector-{s}" for s in r.sectors)
    assert len(patches(fig, "used-")) * 4 == r.used_bytes
    assert len(patches(fig, "wasted-")) * 4 == r.wasted_bytes
    assert len([ln for ln in fig.axes[0].lines if (ln.get_gid() or "").startswith("to-")]) == len(r.lanes)
    assert texts(fig)[-1] == ("global memory load: blk.load(a, offset + stride * width * i, width=width)\n"
                              "32 lanes · 8 sectors · 256 bytes moved for 128 requested · 128 moved, not requested")
    assert str(access_alt(r)) == ("One warp's load of a in global memory: 128 bytes requested by 32 active "
                                  "lanes, at addresses in 8 sectors of 32 bytes; 256 bytes move, 128 of them not "
                                  "requested.")
    assert str(access_caption(r)).startswith("Top: the 32 lanes of warp 0 of block (0, 0, 0) (hollow: inactive). ")


def test_picture_of_a_32_way_conflict_and_of_the_padded_tile():
    _s, conflict = launch(column, 1, 32, args=(32,), trace=(0, 0)).trace
    fig = draw_access(conflict)
    assert len(patches(fig, "bank-")) == 32
    assert len(patches(fig, "cell-")) == 32  # bank 0 delivers 32 words, one per wavefront
    red = [p for p in fig.axes[0].patches if (p.get_gid() or "").startswith("cell-") and p.get_facecolor()[0] > 0.8]
    assert len(red) == 31  # every wavefront after the first is a conflict
    assert "32-way bank conflict" in texts(fig)[-1]
    _s, padded = launch(column, 1, 32, args=(33,), trace=(0, 0)).trace
    fig = draw_access(padded)
    assert patches(fig, "cell-") == sorted(f"cell-0-{b}" for b in range(32))
    assert "no bank conflict" in texts(fig)[-1]
    assert str(access_alt(conflict)) == (
        "One warp's load of tile in shared memory: 32 active lanes spread over 1 bank; bank 0 is asked "
        "for 32 different words, so the access takes 32 wavefronts where 1 would do.")


def test_picture_reads_in_the_page_language():
    (r,) = launch(one_load, 1, 32, args=(np.zeros(64, np.float32), 1), trace=(0, 0)).trace
    with language("zh", strict=True):  # strict: a label missing from the catalog fails here
        fig = draw_access(r)
        alt = str(access_alt(r))
    title = texts(fig)[-1]
    assert "全局内存" in title and "sector" in title
    assert "lane 号" in texts(fig) and "sector 号" in texts(fig)
    assert alt.startswith("一个 warp 对全局内存 a 的一次读取") and "共请求 128 字节" in alt
    _s, conflict = launch(column, 1, 32, args=(32,), trace=(0, 0)).trace
    with language("zh", strict=True):
        shared_title = texts(draw_access(conflict))[-1]
        shared_alt = str(access_alt(conflict))
    assert "共享内存" in shared_title and "32" in shared_alt


def test_draw_access_refuses_what_is_not_a_record():
    stats = launch(one_load, 1, 32, args=(np.zeros(64, np.float32), 1), trace=(0, 0))
    with pytest.raises(TypeError, match="draw_access takes one record of stats.trace"):
        draw_access(stats.trace)


# -- the reduction picture of P2 6.3 ---------------------------------------------------------------


def test_reduce_v2_first_step_is_a_2_way_conflict_and_the_picture_traces_the_lecture_kernel():
    from simtdocs.snippets import definitions

    # What the page's picture block includes: code 08's imports and code 03's own reduce_v2.
    kernel = definitions("snippets/p2/08_access_pictures.py:setup",
                         "snippets/p2/03_shared_memory_sync_reduction.py:reduce_v2")["reduce_v2"]
    x = np.ones(512, np.float32)
    ours = launch(kernel, 2, 256, args=(x, np.zeros(2, np.float32)), trace=(0, 0)).trace
    load_line = "v = blk.load(sdata, index, mask=w) + blk.load(sdata, index + s, mask=w)"

    # Step s = 1, warp 0: lane l reads the float32 sdata[2l] (byte 8l, bank 2l mod 32), then
    # sdata[2l + 1] (the odd banks), then writes sdata[2l]. Lanes l and l + 16 ask the same bank for
    # words 2l and 2l + 32: the first wavefront serves lanes 0-15, the second 16-31.
    first_step = ours[2:5]
    assert [(r.kind, r.site.source) for r in first_step] == [("load", load_line), ("load", load_line),
                                                             ("store", "blk.store(sdata, index, v, mask=w)")]
    even, odd, store = first_step
    assert even.lanes == tuple(range(32))
    assert even.addresses == tuple(range(0, 256, 8))
    assert even.banks == tuple(range(0, 32, 2)) * 2
    assert odd.banks == tuple(range(1, 32, 2)) * 2
    assert store.banks == even.banks
    for r in first_step:
        assert r.wavefronts == (tuple(range(16)), tuple(range(16, 32)))
        assert r.served == ((0,),) * 16 + ((1,),) * 16
        assert (r.ideal_wavefronts, r.bank_conflicts, r.ways) == (1, 1, 2.0)
    assert max(first_step, key=lambda r: len(r.wavefronts)) is even  # the record the page draws
    assert str(access_alt(even)) == (
        "One warp's load of sdata in shared memory: 32 active lanes spread over 16 banks; bank 0 is asked "
        "for 2 different words, so the access takes 2 wavefronts where 1 would do.")
    # Version 3 (sequential addressing) in any step: lane l reads sdata[l] and sdata[l + s], one word a bank.
    v3 = definitions("snippets/p2/03_shared_memory_sync_reduction.py:setup",
                     "snippets/p2/03_shared_memory_sync_reduction.py:reduce_v3")["reduce_v3"]
    shared = [r for r in launch(v3, 2, 256, args=(x, np.zeros(2, np.float32)), trace=(0, 0)).trace
              if r.space == "shared"]
    assert len(shared) == 2 + 3 * 8  # sdata[tid]'s store, 8 steps, the last load of sdata[0]
    assert {len(r.wavefronts) for r in shared} == {1} and {r.bank_conflicts for r in shared} == {0}
