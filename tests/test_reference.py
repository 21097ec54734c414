"""The reference engine alone, on cases whose counts are derived by hand in the comments.

These numbers are the definitions the fast engine is held to (tests/test_engines_agree.py).
"""

import numpy as np
import pytest

import simtdocs

from simtdocs import H100, InitcheckError, LaunchError, MemcheckError, SimulatorError, SynccheckError
from simtdocs.reference import launch


def line(stats, text):
    """The counters of the one kernel line whose source contains ``text``."""
    (c,) = [lc.counters for lc in stats.lines if text in lc.site.source]
    return c


def filled(blk, shape, dtype, name="s"):
    """A shared array every element of which has been written, and a barrier after."""
    s = blk.shared(shape, dtype, name=name)
    size = int(np.prod(shape))
    for first in range(0, size, blk.nthreads):
        blk.store(s, np.minimum(first + blk.tid, size - 1), 1)
    blk.sync()
    return s


# -- geometry ---------------------------------------------------------------------------------

def test_thread_and_block_indices_are_x_fastest():
    seen = {}

    def kernel(blk):
        seen[(int(blk.bx[0, 0]), int(blk.by[0, 0]), int(blk.bz[0, 0]))] = (blk.tx.copy(), blk.ty.copy(), blk.tz.copy())
        assert blk.nblocks == 1 and blk.tid.shape == (1, 24)

    launch(kernel, grid=(2, 3, 2), block=(4, 3, 2))
    assert len(seen) == 12
    tx, ty, tz = seen[(1, 2, 1)]
    assert tx[0, :6].tolist() == [0, 1, 2, 3, 0, 1] and ty[0, 4] == 1 and tz[0, 12] == 1


# -- shared memory: phases, wavefronts, ideal wavefronts ------------------------------------

@pytest.mark.parametrize("dtype, width, index, wavefronts, ideal", [
    # float32 s[tx]: 32 words in 32 banks, one wavefront.
    (np.float32, 1, lambda tx: tx, 1, 1),
    # float32 s[32·tx]: every lane in bank 0, 32 distinct words: 32 wavefronts, 1 ideal.
    (np.float32, 1, lambda tx: 32 * tx, 32, 1),
    # every lane reads s[0]: a broadcast, one wavefront.
    (np.float32, 1, lambda tx: 0 * tx, 1, 1),
    # int8 s[tx]: 32 bytes = 8 words, one wavefront.
    (np.int8, 1, lambda tx: tx, 1, 1),
    # float64 s[tx]: two half-warp phases of 16 lanes × 2 words = 32 words each: 2, ideal 2.
    (np.float64, 1, lambda tx: tx, 2, 2),
    # float64 s[2·tx]: per phase lanes tx and tx+8 both hit banks 4tx%32, 4tx%32+1 with
    # different words: 2 wavefronts per phase, 4 in all; 32 distinct words a phase: ideal 2.
    (np.float64, 1, lambda tx: 2 * tx, 4, 2),
    # float4 s[4·tx] (float32, width 4): four quarter-warp phases of 8 lanes × 4 words: 4, ideal 4.
    (np.float32, 4, lambda tx: 4 * tx, 4, 4),
    # double2 s[2·tx] (float64, width 2): same 16 bytes a lane: 4, ideal 4.
    (np.float64, 2, lambda tx: 2 * tx, 4, 4),
])
def test_shared_wavefronts_by_phase(dtype, width, index, wavefronts, ideal):
    def kernel(blk):
        s = filled(blk, 1024 * width, dtype)
        blk.load(s, index(blk.tx), width=width)

    c = line(launch(kernel, grid=1, block=32), "blk.load(s, index")
    assert (c.shared_requests, c.shared_wavefronts, c.shared_ideal_wavefronts) == (1, wavefronts, ideal)
    assert c.shared_bank_conflicts == wavefronts - ideal


def test_transposed_16x16_float64_tile_takes_32_wavefronts_per_request():
    # A warp is rows ty = 2w, 2w+1 of the block. s[tx, ty] is word 2·(16·tx + ty) (+1):
    # bank 2·ty (+1), one distinct word per tx, so each 16-lane phase needs 16 wavefronts.
    def kernel(blk):
        s = blk.shared((16, 16), np.float64, name="tile")
        blk.store(s, (blk.ty, blk.tx), 1.0)  # row-major: conflict-free
        blk.sync()
        blk.load(s, (blk.tx, blk.ty))

    stats = launch(kernel, grid=1, block=(16, 16))
    store, load = line(stats, "blk.store"), line(stats, "blk.load")
    assert (store.shared_requests, store.shared_wavefronts, store.shared_bank_conflicts) == (8, 16, 0)
    assert (load.shared_requests, load.shared_wavefronts, load.shared_ideal_wavefronts) == (8, 8 * 32, 8 * 2)
    assert load.shared_ways == 16.0


# -- global memory: sectors, index dtypes, views ---------------------------------------------

def test_int16_gather_4kb_apart_touches_32_sectors():
    # tx·1024 fits int16; the byte address tx·4096 would not: it is computed in int64.
    def gather(blk, a, out):
        v = blk.load(a, (blk.tx * 1024).astype(np.int16))
        blk.store(out, blk.tx, v)

    a = np.arange(32 * 1024, dtype=np.float32)
    out = np.zeros(32, np.float32)
    stats = launch(gather, grid=1, block=32, args=(a, out))
    assert line(stats, "blk.load").sectors == 32
    np.testing.assert_array_equal(out, a[::1024])


@pytest.mark.parametrize("guard, sectors", [
    # 3 blocks of 64 threads: 2 warps each. No guard: 6 warps, one sector each.
    ("none", 6),
    # tx < 40: lanes 0-31 and 32-39 of every block: both warps of each, 6.
    ("tx < 40", 6),
    # i < 100: block 0 both warps, block 1 lanes 64-95 and 96-99 (both warps), block 2 none: 4.
    ("i < 100", 4),
])
def test_every_lane_reading_one_element_gets_it_on_its_active_lanes_only(guard, sectors):
    # A filter's tap F[1][2] read by every thread (the index names no thread): each warp with
    # an active lane reads one sector; an inactive lane gets 0.
    def tap(blk, F, out):
        i = blk.bx * blk.bdx + blk.tx
        m = None if guard == "none" else blk.branch(blk.tx < 40 if guard == "tx < 40" else i < 100)
        v = blk.load(F, (0 * i + 1, 0 * i + 2), mask=m)
        blk.store(out, i, v)

    F = (np.arange(9, dtype=np.float32) * 1.5 + 1).reshape(3, 3)
    out = np.full(192, -1, np.float32)
    stats = launch(tap, grid=3, block=64, args=(F, out))
    assert line(stats, "blk.load").sectors == sectors and line(stats, "blk.load").requests == sectors
    i = np.arange(192)
    active = {"none": i >= 0, "tx < 40": i % 64 < 40, "i < 100": i < 100}[guard]
    np.testing.assert_array_equal(out, np.where(active, F[1, 2], 0))



@pytest.mark.parametrize("blocks", [1, 3])
def test_a_misaligned_run_under_a_branch_counts_full_and_partial_warps(blocks):
    # x[tx + 1] (4 bytes past a sector) under tx < 40, blocks of 64 threads. Warp 0 runs all
    # 32 lanes: elements 1-32, bytes 4-131, sectors 0-4: 5. Warp 1 runs lanes 32-39:
    # elements 33-40, bytes 132-163, sectors 4 and 5: 2. Every block alike: 7 a block.
    # A test no thread passes (tx > 100) issues the branch in both warps and nothing under it.
    def kernel(blk, x, out):
        m = blk.branch(blk.tx < 40)
        v = blk.load(x, blk.tx + 1, mask=m)
        blk.store(out, blk.bx * blk.bdx + blk.tx, v, mask=m)
        never = blk.branch(blk.tx > 100, mask=m)
        blk.store(out, blk.bx * blk.bdx + blk.tx, v + 1, mask=never)

    x = np.arange(128, dtype=np.float32)
    out = np.full(64 * blocks, -1, np.float32)
    stats = launch(kernel, grid=blocks, block=64, args=(x, out))
    load, branch, never = line(stats, "blk.load"), line(stats, "tx < 40"), line(stats, "tx > 100")
    assert (load.sectors, load.requests) == (7 * blocks, 2 * blocks)
    assert (branch.branches, branch.divergent_branches) == (2 * blocks, blocks)
    assert (never.branches, never.divergent_branches) == (2 * blocks, 0)
    assert line(stats, "v + 1").requests == 0
    tx = np.arange(64 * blocks) % 64
    np.testing.assert_array_equal(out, np.where(tx < 40, tx + 1, -1))

def test_uint8_tuple_index_does_not_overflow():
    def column(blk, A, out):
        v = blk.load(A, (blk.tx.astype(np.uint8), np.zeros_like(blk.tx, np.uint8)))
        blk.store(out, blk.tx, v)

    A = np.arange(40 * 300, dtype=np.float32).reshape(40, 300)
    out = np.zeros(32, np.float32)
    stats = launch(column, grid=1, block=32, args=(A, out))
    np.testing.assert_array_equal(out, A[:32, 0])
    assert line(stats, "blk.load").sectors == 32  # rows 1200 bytes apart


def test_a_view_starts_at_its_byte_offset():
    def read(blk, a):
        blk.load(a, blk.tx)

    base = np.zeros(64, np.float32)
    assert launch(read, grid=1, block=32, args=(base,)).sectors == 4
    # a[1:] starts at byte 4: 32 floats cover bytes 4..131, sectors 0..4.
    assert launch(read, grid=1, block=32, args=(base[1:],)).sectors == 5


def test_vector_load_through_a_misaligned_view_is_an_error():
    def read4(blk, a):
        blk.load(a, 4 * blk.tx, width=4)

    base = np.zeros(256, np.float32)
    assert launch(read4, grid=1, block=32, args=(base[8:],)).sectors == 16  # byte 32: aligned
    with pytest.raises(MemcheckError, match="cudaErrorMisalignedAddress"):
        launch(read4, grid=1, block=32, args=(base[1:],))


def test_float_index_and_axis_out_of_bounds_are_located():
    def float_index(blk, a):
        blk.load(a, blk.tx * 1.0)

    with pytest.raises(TypeError, match=r"float_index \(line \d+: .*\): index must be an integer array, got dtype float64"):
        launch(float_index, grid=1, block=32, args=(np.zeros(32),))

    def past_column(blk, A):
        blk.load(A, (0 * blk.tx, blk.tx))

    with pytest.raises(MemcheckError, match=r"(?s)Invalid __global__ read of size 8.*by thread \(20,0,0\).*column 20 of A\[10\]\[20\]"):
        launch(past_column, grid=1, block=32, args=(np.zeros((10, 20)),))


def test_later_lanes_warps_and_blocks_win_a_store():
    def everyone_writes_one(blk, out):
        blk.store(out, 0 * blk.tid, blk.bx * 1000 + blk.tid)

    out = np.zeros(1, np.int64)
    launch(everyone_writes_one, grid=3, block=40, args=(out,))
    assert out[0] == 2039


# -- races ------------------------------------------------------------------------------------

def test_two_warps_writing_one_word_is_a_write_after_write_naming_both_lines():
    def two_writers(blk):
        s = blk.shared(1, np.int32, name="s")
        blk.store(s, 0 * blk.tx, 1, mask=blk.warp == 0)  # first write
        blk.store(s, 0 * blk.tx, 2, mask=blk.warp == 1)  # second write

    (race,) = launch(two_writers, grid=1, block=64).races
    assert (race.kind, race.warp, race.other_warp, race.array, race.address) == ("write-after-write", 1, 0, "s", 0)
    assert race.site.source.endswith("# second write") and race.other_site.source.endswith("# first write")


def test_one_store_by_two_warps_to_one_word_races_with_itself():
    def same_store(blk):
        s = blk.shared(4, np.int32, name="s")
        blk.store(s, 0 * blk.tx, blk.tx)

    (race,) = launch(same_store, grid=1, block=64).races
    assert (race.kind, race.warp, race.other_warp, race.site) == ("write-after-write", 1, 0, race.other_site)


def test_race_kinds_sites_and_order():
    def kernel(blk):
        s = blk.shared(64, np.float32, name="s")
        blk.store(s, blk.tx, 1.0)  # A
        v = blk.load(s, 63 - blk.tx)  # B
        blk.store(s, blk.tx, v)  # C
        blk.store(s, 63 - blk.tx, v)  # D

    stats = launch(kernel, grid=2, block=64)
    got = [(r.block[0], r.kind, r.warp, r.other_warp, r.address, r.site.source[-1], r.other_site.source[-1])
           for r in stats.races]
    # B: warp 0 reads s[63..32], which warp 1 wrote at A (thread 0 first: s[63]).
    # C: warp 0 writes s[0..31], which warp 1 read at B. No WAW: warp 0 itself wrote them at A.
    # D: warp 0 writes s[63..32]: only warp 0 read them (B), but warp 1 wrote them at C.
    # One record per instruction, block and kind, ordered by block, then instruction.
    per_block = [("read-after-write", 0, 1, 63, "B", "A"), ("write-after-read", 0, 1, 0, "C", "B"),
                 ("write-after-write", 0, 1, 63, "D", "C")]
    assert got == [(b,) + r for b in (0, 1) for r in per_block]


def test_race_kinds_of_one_instruction_come_in_order_raw_war_waw():
    def kernel(blk):
        s = blk.shared(64, np.float32, name="s")
        blk.store(s, blk.tx, 1.0, mask=blk.warp == 1)  # A: warp 1 writes s[32..63]
        blk.load(s, blk.tx + 32, mask=blk.warp == 0)  # B: warp 0 reads them (RAW)
        blk.store(s, 32 + blk.tx % 32, 2.0)  # C: warp 0 rewrites what warp 1 wrote (WAW) ...

    kinds = [(r.kind, r.warp, r.other_warp) for r in launch(kernel, grid=1, block=64).races]
    # ... and warp 1 what warp 0 read at B (WAR) and wrote just before in this instruction (WAW).
    assert kinds == [("read-after-write", 0, 1), ("write-after-read", 1, 0), ("write-after-write", 0, 1)]


def test_racecheck_off_records_nothing():
    def same_store(blk):
        s = blk.shared(4, np.int32, name="s")
        blk.store(s, 0 * blk.tx, blk.tx)

    assert launch(same_store, grid=1, block=64, tools=("memcheck",)).races == []


def test_a_32_thread_block_that_skips_its_sync_races_inside_warp_0_naming_both_lines():
    def reverse(blk, out):
        s = blk.shared(32, np.float32, name="s")
        blk.store(s, blk.tx, 1.0 * blk.tx)
        v = blk.load(s, 31 - blk.tx)  # the __syncthreads() that belongs before this line is missing
        blk.store(out, blk.tx + 32 * blk.bx, v)

    races = launch(reverse, grid=4, block=32, args=(np.zeros(128, np.float32),)).races
    # One record per block: lane 0 reads s[31], which lane 31 wrote at the store above.
    assert [(r.kind, r.block, r.warp, r.other_warp, r.lane, r.other_lane, r.address) for r in races] == [
        ("read-after-write", (b, 0, 0), 0, 0, 0, 31, 31) for b in range(4)]
    assert races[0].site.source == "v = blk.load(s, 31 - blk.tx)  # the __syncthreads() that belongs before this line is missing"
    assert races[0].other_site.source == "blk.store(s, blk.tx, 1.0 * blk.tx)"
    assert "lane 0 of warp 0 reads shared s[31], written in this phase by lane 31 of the same warp" in str(races[0])


def test_a_syncwarp_orders_the_lanes_of_a_warp_and_a_shuffle_does_not():
    def exchange(blk, use_syncwarp):
        s = blk.shared(64, np.int32, name="s")
        blk.store(s, blk.tid, blk.tid)
        blk.shfl_down(blk.tid, 1)  # registers only: orders nothing in shared memory
        if use_syncwarp:
            blk.syncwarp()
        blk.load(s, blk.tid ^ 1)
        blk.store(s, blk.tid ^ 2, blk.tid)  # WAR with the load: lanes t^2 read what lane t overwrites

    races = launch(exchange, grid=1, block=64, args=(False,)).races
    # Per warp instruction, the first lane: lane 0 reads s[1] (lane 1 wrote it), then lane 0
    # writes s[2] (lane 3 read it) and overwrites what lane 2 wrote.
    assert [(r.kind, r.warp, r.lane, r.other_lane) for r in races] == [
        ("read-after-write", 0, 0, 1), ("write-after-read", 0, 0, 3), ("write-after-write", 0, 0, 2)]
    races = launch(exchange, grid=1, block=64, args=(True,)).races
    assert [(r.kind, r.warp, r.lane, r.other_lane) for r in races] == [("write-after-read", 0, 0, 3)]


def test_lanes_of_one_instruction_and_a_lane_with_itself_do_not_race():
    def own_and_together(blk):
        s = blk.shared(8, np.int32, name="s")
        blk.store(s, blk.tx % 8, blk.tx)  # four lanes per element in one store: one value stays
        blk.store(s, blk.tx % 8, blk.load(s, blk.tx % 8, mask=blk.tx < 8) + 1, mask=blk.tx < 8)

    assert launch(own_and_together, grid=1, block=8).races == []  # each lane reads back its own element
    races = launch(own_and_together, grid=1, block=32).races
    # Lane 0 reads s[0], last written by lane 24 (the later lane of the first store stays).
    assert [(r.kind, r.lane, r.other_lane) for r in races] == [("read-after-write", 0, 24), ("write-after-write", 0, 24)]


def test_a_syncwarp_orders_only_the_lanes_that_pass_it():
    def half(blk):
        s = blk.shared(32, np.int32, name="s")
        blk.store(s, blk.tx, blk.tx)
        blk.syncwarp(mask=blk.tx < 16)  # lanes 16..31 do not pass it
        blk.load(s, 31 - blk.tx)

    races = launch(half, grid=1, block=32).races
    # Lanes 0..15 read what lanes 31..16 wrote, unordered; lanes 16..31 read what 15..0
    # wrote before their syncwarp: ordered.
    assert [(r.kind, r.lane, r.other_lane) for r in races] == [("read-after-write", 0, 31)]


def test_a_hazard_between_warps_is_named_before_one_inside_a_warp():
    def both(blk):
        s = blk.shared(64, np.int32, name="s")
        blk.store(s, blk.tx, blk.tx)
        blk.load(s, 63 - blk.tx)  # lane 0 of warp 0 reads s[63], written by warp 1

    races = launch(both, grid=1, block=64).races
    assert [(r.kind, r.warp, r.other_warp, r.lane) for r in races] == [("read-after-write", 0, 1, None)]


# -- barriers ---------------------------------------------------------------------------------

def test_a_sync_no_thread_of_a_block_reaches_is_no_barrier():
    def first_block_syncs(blk):
        s = blk.shared(64, np.float32, name="s")
        blk.store(s, blk.tx, 1.0)
        blk.sync(mask=np.broadcast_to(blk.bx == 0, (blk.nblocks, blk.nthreads)))
        blk.load(s, 63 - blk.tx)

    stats = launch(first_block_syncs, grid=2, block=64)
    assert stats.barriers == 1
    assert line(stats, "blk.sync").warp_instructions == 2  # block 0's two warps only
    assert [(r.block, r.kind) for r in stats.races] == [((1, 0, 0), "read-after-write")]


def test_a_sync_part_of_a_block_reaches_is_a_synccheck_error():
    def half(blk):
        blk.sync(mask=blk.tx < 40)

    with pytest.raises(SynccheckError, match=r"reached by 40 of 64 threads of block \(0,0,0\)"):
        launch(half, grid=1, block=64)
    stats = launch(half, grid=1, block=64, tools=("memcheck", "racecheck", "initcheck"))
    assert (stats.barriers, stats.warp_instructions, stats.active_lanes) == (1, 2, 40)


def test_syncwarp_issues_and_does_nothing_else():
    def kernel(blk):
        blk.syncwarp(mask=blk.tx < 33)

    stats = launch(kernel, grid=2, block=64)
    assert (stats.warp_instructions, stats.active_lanes, stats.barriers) == (4, 66, 0)


# -- control ----------------------------------------------------------------------------------

def test_divergence_and_alu_are_counted_per_warp():
    def even_odd(blk):
        even = blk.branch(blk.tx % 2 == 0, mask=blk.tx < 48)
        blk.alu(3, mask=even)

    stats = launch(even_odd, grid=1, block=64)
    # Warp 0: 32 lanes disagree; warp 1: lanes 32..47 disagree. alu: 3 ops × 2 warps, 16 + 8 lanes.
    assert (stats.branches, stats.divergent_branches) == (2, 2)
    assert line(stats, "blk.alu").warp_instructions == 6 and line(stats, "blk.alu").active_lanes == 3 * 24


# -- warp-level -------------------------------------------------------------------------------

def run_warp(op, block=32):
    out = {}

    def kernel(blk):
        out["v"] = op(blk)

    stats = launch(kernel, grid=1, block=block)
    return out["v"][0], stats


def test_shuffles():
    v, stats = run_warp(lambda blk: blk.shfl_up(blk.tx * 10, 1))
    assert v[:3].tolist() == [0, 0, 10] and v[31] == 300  # lane 0 has no lane −1: keeps its own
    assert (stats.shuffles, stats.warp_instructions) == (1, 1)
    v, _ = run_warp(lambda blk: blk.shfl_down(blk.tx * 10, 16))
    assert v[0] == 160 and v[16] == 160 and v[31] == 310  # lanes 16.. have no lane 32..: own
    v, _ = run_warp(lambda blk: blk.shfl_xor(blk.tx, 1))
    assert v[:4].tolist() == [1, 0, 3, 2]
    v, _ = run_warp(lambda blk: blk.shfl(blk.tx * 10, 5))
    assert set(v.tolist()) == {50}
    v, _ = run_warp(lambda blk: blk.shfl(blk.tx * 10, 33 - blk.tx))  # (33 − l) % 32
    assert v[0] == 10 and v[1] == 0 and v[2] == 310
    v, _ = run_warp(lambda blk: blk.shfl_down(np.stack([blk.tx, -blk.tx], axis=-1), 1))
    assert v[0].tolist() == [1, -1]  # a trailing axis travels with the lane


def test_a_shuffle_from_an_inactive_lane_is_an_error():
    with pytest.raises(SimulatorError, match=r"(?s)__shfl_down_sync reads a lane that does not take part.*line \d+.*block \(0,0,0\), threads 15 read from threads 16"):
        run_warp(lambda blk: blk.shfl_down(blk.tx, 1, mask=blk.tx < 16))
    # Block of 40: thread 32 (lane 0 of warp 1) reads lane 8 of warp 1, thread 40: past the block.
    with pytest.raises(SimulatorError, match=r"threads 32–39 read from threads 40–47"):
        run_warp(lambda blk: blk.shfl_down(blk.tx, 8), block=40)
    v, _ = run_warp(lambda blk: blk.shfl_down(blk.tx, 8, mask=blk.tx < 32), block=40)
    assert v[0] == 8 and v[35] == 35  # inactive threads keep their own value


def test_votes():
    pred = lambda blk: blk.tx % 3 == 0  # noqa: E731
    v, stats = run_warp(lambda blk: blk.ballot(pred(blk), mask=blk.tx < 40), block=64)
    bits = sum(1 << lane for lane in range(0, 32, 3))
    warp1 = sum(1 << (t - 32) for t in range(33, 40, 3))
    assert v.dtype == np.uint32 and v[0] == bits and v[32] == warp1 and v[40] == 0
    assert (stats.votes, stats.warp_instructions, stats.active_lanes) == (2, 2, 40)
    v, _ = run_warp(lambda blk: blk.any(blk.tx == 35, mask=blk.tx < 40), block=64)
    assert v[:32].tolist() == [False] * 32 and v[32:40].all() and not v[40:].any()
    v, _ = run_warp(lambda blk: blk.all(blk.tx < 40, mask=blk.tx < 40), block=64)
    assert v[:40].all() and not v[40:].any()
    v, _ = run_warp(lambda blk: blk.all(blk.tx < 40), block=64)
    assert v[:32].all() and not v[32:].any()


# -- atomics ----------------------------------------------------------------------------------

def test_a_ticket_counter_hands_out_0_to_n_minus_1():
    def tickets(blk, counter, out):
        ticket = blk.atomic_add(counter, 0 * blk.tid, 1)
        blk.store(out, blk.bx * blk.bdx + blk.tid, ticket)

    counter, out = np.zeros(1, np.int32), np.zeros(3 * 40, np.int32)
    stats = launch(tickets, grid=3, block=40, args=(counter, out))
    assert counter[0] == 120 and out.tolist() == list(range(120))
    c = line(stats, "atomic_add")
    # 2 warps a block (32 + 8 lanes): conflicts 31 + 7 per block; one sector; a store's bytes.
    assert (c.atomics, c.atomic_conflicts, c.requests, c.sectors, c.requested_bytes) == (6, 3 * 38, 6, 6, 480)


def test_shared_atomics_return_old_values_in_lane_order():
    got = {}

    def kernel(blk):
        s = blk.shared(4, np.int32, name="h")
        blk.store(s, blk.tx % 4, 0, mask=blk.tx < 4)
        blk.sync()
        got["add"] = blk.atomic_add(s, blk.tx % 2, blk.tx)
        got["max"] = blk.atomic_max(s, 0 * blk.tx + 2, blk.tx % 5)
        got["min"] = blk.atomic_min(s, 0 * blk.tx + 3, -blk.tx)
        got["exch"] = blk.atomic_exch(s, 0 * blk.tx + 3, blk.tx)
        got["cas"] = blk.atomic_cas(s, 0 * blk.tx, 0 * blk.tx + 240, 7, mask=blk.tx < 3)
        got["final"] = blk.load(s, blk.tx % 4)

    stats = launch(kernel, grid=1, block=32)
    assert got["add"][0, :4].tolist() == [0, 0, 0, 1]  # lane 2 sees lane 0's 0; lane 3 lane 1's 1
    assert got["max"][0, :6].tolist() == [0, 0, 1, 2, 3, 4]
    assert got["min"][0, :3].tolist() == [0, 0, -1]
    assert got["exch"][0, :3].tolist() == [-31, 0, 1]
    evens = sum(range(0, 32, 2))
    assert evens == 240 and got["cas"][0, :4].tolist() == [240, 7, 7, 0]
    assert got["final"][0, :4].tolist() == [7, sum(range(1, 32, 2)), 4, 31]
    c = line(stats, "atomic_add")
    assert (c.atomics, c.atomic_conflicts, c.shared_requests, c.shared_wavefronts, c.requests) == (1, 30, 1, 1, 0)


# -- initcheck, limits, launch errors --------------------------------------------------------

def test_reading_shared_memory_nobody_wrote():
    def kernel(blk, out):
        s = blk.shared(64, np.float32, name="s")
        blk.store(s, blk.tx, 2.0, mask=blk.tx < 16)
        blk.store(out, blk.tx, blk.load(s, blk.tx))

    with pytest.raises(InitcheckError, match=r"(?s)by thread \(16,0,0\).*shared s\[16\] was never written"):
        launch(kernel, grid=1, block=32, args=(np.zeros(32, np.float32),))
    out = np.ones(32, np.float32)
    launch(kernel, grid=1, block=32, args=(out,), tools=("memcheck", "racecheck", "synccheck"))
    assert out.tolist() == [2.0] * 16 + [0.0] * 16


def shared_histogram(zeroed_from_block):
    """A block histogram in shared memory, zeroed only by the blocks from ``zeroed_from_block`` on."""
    def kernel(blk, data, hist):
        local = blk.shared(8, np.int32, name="local")
        blk.store(local, blk.tx, 0, mask=(blk.tx < 8) & (blk.bx >= zeroed_from_block))
        blk.sync()
        blk.atomic_add(local, blk.load(data, blk.bx * blk.bdx + blk.tx) % 8, 1)
        blk.sync()
        first = blk.tx < 8
        blk.atomic_add(hist, blk.tx, blk.load(local, blk.tx, mask=first), mask=first)
    return kernel


@pytest.mark.parametrize("engine, options", [(launch, {}), (simtdocs.launch, {}), (simtdocs.launch, {"blocks_per_pass": 1})])
def test_an_atomic_on_shared_memory_nobody_wrote(engine, options):
    """An atomic starts from the element's value: a shared histogram a block did not zero is an
    initcheck error (zeroed simulator memory would otherwise give the right counts by luck)."""
    data = np.arange(3 * 64, dtype=np.int32) * 5
    hist = np.zeros(8, np.int32)
    engine(shared_histogram(0), grid=3, block=64, args=(data, hist), **options)
    assert hist.tolist() == np.bincount(data % 8, minlength=8).tolist()
    for zeroed_from, block in ((1, 0), (3, 0)):
        with pytest.raises(InitcheckError, match=rf"(?s)size 4 bytes by an atomic.*by thread \(0,0,0\) in block "
                                                 rf"\({block},0,0\).*shared local\[0\] was never written"):
            engine(shared_histogram(zeroed_from), grid=3, block=64, args=(data, np.zeros(8, np.int32)), **options)


def test_an_atomic_names_the_first_block_that_did_not_zero():
    """Blocks 0 and 1 zero their histogram and block 2 does not: the error names block 2,
    on the fast engine too, whose pass holds all three blocks (a table of writes per block)."""
    def kernel(blk, data, hist):
        local = blk.shared(8, np.int32, name="local")
        blk.store(local, blk.tx, 0, mask=(blk.tx < 8) & (blk.bx < 2))
        blk.sync()
        blk.atomic_add(local, 7 - blk.tx % 8, 1)

    data, hist = np.zeros(3 * 64, np.int32), np.zeros(8, np.int32)
    for engine in (launch, simtdocs.launch):
        with pytest.raises(InitcheckError, match=r"(?s)by thread \(0,0,0\) in block \(2,0,0\).*shared local\[7\]"):
            engine(kernel, grid=3, block=64, args=(data, hist))


def test_shared_memory_limits():
    def static(nbytes, dynamic=0):
        def kernel(blk):
            blk.shared(nbytes // 4, np.float32)
            if dynamic:
                blk.shared(dynamic // 4, np.float32, dynamic=True)
        return kernel

    launch(static(48 * 1024), grid=1, block=32)
    with pytest.raises(LaunchError, match="nvcc accepts at most 49,152"):
        launch(static(64 * 1024), grid=1, block=32)
    with pytest.raises(LaunchError, match="dynamic"):
        launch(static(1024, dynamic=2048), grid=1, block=32, shared_bytes=1024)
    launch(static(1024, dynamic=2048), grid=1, block=32, shared_bytes=2048)
    with pytest.raises(LaunchError, match="max_dynamic_shared_bytes"):
        launch(static(16 * 1024, dynamic=40 * 1024), grid=1, block=32, shared_bytes=40 * 1024)
    launch(static(16 * 1024, dynamic=40 * 1024), grid=1, block=32, shared_bytes=40 * 1024,
           max_dynamic_shared_bytes=40 * 1024)
    with pytest.raises(LaunchError):
        launch(static(40 * 1024), grid=1, block=32, max_dynamic_shared_bytes=H100.max_shared_per_block)


def test_kernel_arguments_are_read_only():
    def direct(blk, a):
        a[0] = 1.0

    a = np.zeros(4)
    with pytest.raises(SimulatorError, match=r"direct \(line \d+: a\[0\] = 1.0\).*blk.store"):
        launch(direct, grid=1, block=32, args=(a,))
    assert a.flags.writeable and a.sum() == 0


def test_launch_errors_say_what_to_write():
    def nothing(blk, a):
        pass

    with pytest.raises(LaunchError, match=r"args=\(a,\)"):
        launch(nothing, grid=1, block=32, args=(np.zeros(3)))
    with pytest.raises(LaunchError, match=r"cudaErrorInvalidConfiguration: grid = 2.0 is not an integer; write grid=2"):
        launch(nothing, grid=2.0, block=32)
    with pytest.raises(LaunchError, match="unknown tool 'memchek'"):
        launch(nothing, grid=1, block=32, args=(None,), tools=("memchek",))
    with pytest.raises(LaunchError, match="cudaErrorInvalidConfiguration: 2,048 threads"):
        launch(nothing, grid=1, block=(64, 32))


def test_with_memcheck_off_an_out_of_bounds_lane_is_counted_but_moves_nothing():
    def past_the_end(blk, a, out, small):
        v = blk.load(a, blk.tx + 30)  # a has 32 elements: lanes 2..31 are past the end
        blk.store(out, blk.tx, v)
        blk.store(small, blk.tx, 1.0)  # small has 4 elements: lanes 4..31 are dropped

    a, out, small = np.arange(32, dtype=np.float32), np.full(32, -1, np.float32), np.zeros(4, np.float32)
    with pytest.raises(MemcheckError, match="Invalid __global__ read of size 4 bytes"):
        launch(past_the_end, grid=1, block=32, args=(a, out, small))
    stats = launch(past_the_end, grid=1, block=32, args=(a, out, small), tools=("racecheck", "initcheck"))
    assert out.tolist() == [30.0, 31.0] + [0.0] * 30 and small.tolist() == [1.0] * 4
    # Bytes 120..247 of a: sectors 3..7. The store to small: bytes 0..127, 4 sectors.
    assert (line(stats, "blk.load").sectors, line(stats, "small, blk.tx").sectors) == (5, 4)
    assert line(stats, "blk.load").requested_bytes == 128


def test_shuffles_are_counted_per_warp_instruction():
    # A warp sum: 5 shuffles per warp, 8 warps per block, 10 blocks: 400 warp instructions.
    def warp_sum(blk, out):
        v = blk.tid.astype(np.float32)
        for m in (16, 8, 4, 2, 1):
            v = v + blk.shfl_xor(v, m)
        blk.store(out, blk.bx * blk.bdx + blk.tid, v)

    out = np.zeros(2560, np.float32)
    stats = launch(warp_sum, grid=10, block=256, args=(out,))
    assert stats.shuffles == 400
    assert out[:64].tolist() == [sum(range(32))] * 32 + [sum(range(32, 64))] * 32


def test_a_value_or_mask_of_the_wrong_shape_names_the_line():
    def bad_value(blk, a):
        blk.store(a, blk.tx, np.ones(5))

    def bad_mask(blk, a):
        blk.load(a, blk.tx, mask=np.ones(7, bool))

    a = np.zeros(32)
    with pytest.raises(ValueError, match=r"bad_value \(line \d+: .*\): the value has shape \(5,\)"):
        launch(bad_value, grid=1, block=32, args=(a,))
    with pytest.raises(ValueError, match=r"bad_mask \(line \d+: .*\): the mask has shape \(7,\)"):
        launch(bad_mask, grid=1, block=32, args=(a,))


def test_every_counter_is_defined_in_the_reference_docstring():
    import dataclasses

    import simtdocs.reference
    from simtdocs import Counters

    table = simtdocs.reference.__doc__
    missing = [f.name for f in dataclasses.fields(Counters) if f"\n{f.name} " not in table]
    assert not missing, f"counters without a definition in simtdocs/reference/__init__.py's docstring: {missing}"
