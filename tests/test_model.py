"""The programming model: indexing, launch checks, sanitizer-style errors, warp primitives."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernels as k
from simtdocs import (
    H100, InitcheckError, LaunchError, MemcheckError, SimulatorError, SynccheckError, cdiv, launch,
)


def test_cdiv():
    assert [cdiv(n, 256) for n in (1, 256, 257, 1_000_000)] == [1, 1, 2, 3907]


def test_threads_are_numbered_x_fastest_and_cut_into_warps_of_32():
    seen = {}

    def record(blk):
        seen.update(tid=blk.tid, tx=blk.tx, ty=blk.ty, tz=blk.tz, warp=blk.warp, lane=blk.lane,
                    bx=blk.bx, by=blk.by, bz=blk.bz)

    launch(record, grid=(3, 2, 2), block=(16, 4, 2), blocks_per_pass=12)
    tid = seen["tid"][0]
    np.testing.assert_array_equal(tid, seen["tx"][0] + 16 * seen["ty"][0] + 64 * seen["tz"][0])
    np.testing.assert_array_equal(seen["warp"][0], tid // 32)
    np.testing.assert_array_equal(seen["lane"][0], tid % 32)
    # A 16×4 block's warp 0 is two rows of 16 threads.
    assert set(zip(seen["tx"][0][:32], seen["ty"][0][:32])) == {(x, y) for x in range(16) for y in range(2)}
    blocks = list(zip(seen["bx"][:, 0], seen["by"][:, 0], seen["bz"][:, 0]))
    assert blocks == [(x, y, z) for z in range(2) for y in range(2) for x in range(3)]


@pytest.mark.parametrize("grid, block, message", [
    (1, 1025, "cudaErrorInvalidConfiguration: 1,025 threads per block"),
    (1, (32, 32, 2), "cudaErrorInvalidConfiguration: 2,048 threads per block"),
    (0, 32, "cudaErrorInvalidConfiguration: grid.x = 0"),
    (1, (32, -1), "cudaErrorInvalidConfiguration: block.y = -1"),
    ((1, 1, 1, 1), 32, "cudaErrorInvalidConfiguration: grid must have 1 to 3 dimensions"),
    (1, (1, 1, 65), "cudaErrorInvalidConfiguration: block.z = 65 exceeds the device limit 64"),
])
def test_invalid_launch_fails_before_anything_runs(grid, block, message):
    ran = []
    with pytest.raises(LaunchError, match=message.replace("(", r"\(")):
        launch(lambda blk: ran.append(1), grid=grid, block=block)
    assert ran == []


def test_too_much_shared_memory():
    ran = []
    with pytest.raises(LaunchError, match="cudaErrorInvalidValue"):
        launch(lambda blk: ran.append(1), grid=1, block=32, shared_bytes=H100.max_shared_per_block + 1)
    assert ran == []

    def greedy(blk):
        blk.shared(60_000, np.float32)

    with pytest.raises(LaunchError, match="greedy declares 240,000 bytes of static __shared__ memory"):
        launch(greedy, grid=1, block=32)


def test_missing_bounds_check_is_reported_like_memcheck():
    n = 1000
    a, b, c = (np.zeros(n, np.float32) for _ in range(3))
    with pytest.raises(MemcheckError) as err:
        launch(k.vector_add_unchecked, grid=cdiv(n, 256), block=256, args=(a, b, c, n))
    text = str(err.value)
    assert "Invalid __global__ read of size 4 bytes" in text
    assert "at vector_add_unchecked (line" in text
    assert "by thread (232,0,0) in block (3,0,0)" in text
    assert "index 1000 is out of bounds: a has 1,000 elements" in text
    assert "threads 232–255 read a[1000]…a[1023]" in text
    assert np.all(c == 0)  # nothing was written before the read failed


def test_negative_index_and_out_of_bounds_store():
    def negative(blk, a):
        blk.load(a, blk.tx - 3)

    with pytest.raises(MemcheckError, match=r"by thread \(0,0,0\) in block \(0,0,0\)[\s\S]*index -3"):
        launch(negative, grid=1, block=32, args=(np.zeros(32, np.float32),))

    def store_past_end(blk, out):
        blk.store(out, blk.bx * blk.bdx + blk.tx, 1.0)

    with pytest.raises(MemcheckError, match=r"Invalid __global__ write of size 4[\s\S]*block \(1,0,0\)[\s\S]*out\[40\]…out\[63\]"):
        launch(store_past_end, grid=2, block=32, args=(np.zeros(40, np.float32),))


def test_masked_out_lanes_may_hold_any_index():
    def guarded(blk, a, n):
        i = blk.tx * 1000 - 5
        m = (i >= 0) & (i < n)
        return blk.load(a, i, mask=m)

    launch(guarded, grid=1, block=64, args=(np.zeros(10_000, np.float32), 10_000))


def test_misaligned_vector_load():
    def vec(blk, a):
        blk.load(a, blk.tx * 4 + 2, width=4)

    with pytest.raises(MemcheckError, match="cudaErrorMisalignedAddress"):
        launch(vec, grid=1, block=32, args=(np.zeros(256, np.float32),))


def test_shared_out_of_bounds_names_the_dimension():
    def off_by_one(blk):
        tile = blk.shared((32, 32), np.float32, name="tile")
        blk.store(tile, (blk.tx, blk.tx + 1), 0.0)

    with pytest.raises(MemcheckError, match=r"Invalid __shared__ write[\s\S]*thread \(31,0,0\)[\s\S]*dimension 1 of tile has 32"):
        launch(off_by_one, grid=1, block=32)


def test_divergent_sync_is_a_synccheck_error():
    def half_sync(blk):
        inside = blk.branch(blk.tx < 128)
        blk.sync(mask=inside)

    with pytest.raises(SynccheckError, match=r"reached by 128 of 256 threads of block \(0,0,0\)[\s\S]*threads 128–255"):
        launch(half_sync, grid=1, block=256)

    def uniform(blk):
        everyone = blk.branch(blk.tx >= 0)
        blk.sync(mask=everyone)

    assert launch(uniform, grid=2, block=256).barriers == 2


def test_uninitialized_shared_read_is_reported():
    def forgot_a_row(blk):
        s = blk.shared(64, np.float32, name="s")
        blk.store(s, blk.tx, 1.0)  # only 32 of the 64 words
        blk.sync()
        blk.load(s, 63 - blk.tx)

    with pytest.raises(InitcheckError, match=r"by thread \(0,0,0\)[\s\S]*shared s\[63\] was never written"):
        launch(forgot_a_row, grid=1, block=32)


def test_launch_is_deterministic():
    def run():
        n = 1 << 18
        g = np.random.default_rng(1).random(n, dtype=np.float32)
        out = np.zeros(n // 256, np.float32)
        s = launch(k.reduce_v1, grid=n // 256, block=256, args=(g, out))
        return s, out

    (s1, o1), (s2, o2) = run(), run()
    assert s1.totals == s2.totals
    np.testing.assert_array_equal(o1, o2)


def test_divergence_is_counted_per_warp():
    def even_odd(blk):
        even = blk.branch(blk.tx % 2 == 0)
        blk.alu(mask=even)
        blk.alu(mask=~even)

    s = launch(even_odd, grid=1, block=256)
    assert (s.branches, s.divergent_branches) == (8, 8)
    assert s.simt_efficiency == pytest.approx((256 + 128 + 128) / (3 * 8 * 32))

    def warp_aligned(blk):
        first_half = blk.branch(blk.warp < 4)
        blk.alu(mask=first_half)
        blk.alu(mask=~first_half)

    s = launch(warp_aligned, grid=1, block=256)
    assert (s.divergent_branches, s.simt_efficiency) == (0, 1.0)


def shuffle_reference(v, source, threads):
    """Lane by lane; None when some lane reads a missing lane of a partial warp (undefined)."""
    out = v.copy()
    for t in range(threads):
        src = (t // 32) * 32 + source[t % 32]
        if 0 <= source[t % 32] < 32:
            if src >= threads:
                return None
            out[:, t] = v[:, src]
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 200), st.integers(0, 40), st.sampled_from(["down", "xor"]))
def test_shuffles_match_a_per_lane_reference(threads, amount, kind):
    got = {}

    def kernel(blk):
        v = (blk.tid * 10 + blk.bx).astype(np.float32)
        got["in"] = np.broadcast_to(v, (blk.nblocks, blk.nthreads)).copy()
        got["out"] = blk.shfl_down(v, amount) if kind == "down" else blk.shfl_xor(v, amount % 32)

    source = np.arange(32) + amount if kind == "down" else np.arange(32) ^ (amount % 32)
    v = np.broadcast_to((np.arange(threads) * 10 + np.arange(2)[:, None]).astype(np.float32), (2, threads))
    expected = shuffle_reference(v, source, threads)
    if expected is None:
        with pytest.raises(SimulatorError, match="reads a lane that does not take part"):
            launch(kernel, grid=2, block=threads)
        return
    launch(kernel, grid=2, block=threads)
    np.testing.assert_array_equal(got["out"], expected)


def test_warp_sum_with_shfl_xor():
    def warp_sum(blk, out):
        v = blk.tid.astype(np.float32) + 0 * blk.bx
        for m in (16, 8, 4, 2, 1):
            v = v + blk.shfl_xor(v, m)
        blk.store(out, blk.bx * blk.bdx + blk.tid, v)

    out = np.zeros(64, np.float32)
    launch(warp_sum, grid=1, block=64, args=(out,))
    np.testing.assert_array_equal(out, np.repeat([sum(range(32)), sum(range(32, 64))], 32))


def test_atomic_add_lands_every_addition():
    def histogram(blk, data, bins):
        i = blk.bx * blk.bdx + blk.tx
        blk.atomic_add(bins, blk.load(data, i).astype(np.int32), 1)

    data = np.random.default_rng(3).integers(0, 8, 4096).astype(np.int32)
    bins = np.zeros(8, np.int32)
    s = launch(histogram, grid=16, block=256, args=(data, bins))
    np.testing.assert_array_equal(bins, np.bincount(data, minlength=8))
    assert s.atomics == 4096 // 32


def test_per_line_breakdown_points_at_the_wasteful_line():
    M, N = 100, 70
    X = np.zeros(M * N, np.float32)
    s = launch(k.bias_add_swapped, grid=(cdiv(M, 16), cdiv(N, 16)), block=(16, 16),
               args=(X, np.zeros(M, np.float32), M, N))
    by_source = {line.site.source: line.counters for line in s.lines}
    load = by_source["v = blk.load(X, r * N + c, mask=m) + blk.load(bias, r, mask=m)"]
    store = by_source["blk.store(X, r * N + c, v, mask=m)"]
    # By hand. A warp is 16 rows r (x) × 2 neighbouring columns c, c+1 (y; c even): per row 8 bytes
    # at r*280 + 4c, a multiple of 8, so inside one 32-byte sector. Warps with an active lane: grid
    # x 7 × (4 full block rows × 8 warps + 3 warps of the last, c < 70) = 245; the first 6 block
    # columns have 16 rows each, the last 4 (r < 100). X per access: 6·35·16 + 35·4 = 3,500 sectors
    # for 7,000 × 4 bytes: 25 %. bias[r]: 16 floats from r = 16·bx, 64 aligned bytes = 2 sectors
    # (1 for the last 4 rows): 6·35·2 + 35 = 455 sectors, also 28,000 bytes asked for.
    assert (store.sectors, store.requested_bytes, store.coalescing_efficiency) == (3500, 28_000, 0.25)
    assert (load.sectors, load.requested_bytes) == (3500 + 455, 2 * 28_000)
    assert sum(c.sectors for c in by_source.values()) == s.sectors


def test_a_custom_device():
    tiny = dataclasses.replace(H100, name="tiny", sm_count=2, max_threads_per_block=128)
    with pytest.raises(LaunchError, match="tiny allows 128"):
        launch(k.vector_add, grid=1, block=256, device=tiny)


def test_python_if_on_thread_arrays_is_explained():
    def python_if(blk, a):
        i = blk.bx * blk.bdx + blk.tx
        if i < 10:  # a CUDA habit that cannot work on arrays of threads
            blk.load(a, i)

    with pytest.raises(SimulatorError, match=r"python_if \(line \d+: if i < 10:.*\) branches in Python.*blk.branch"):
        launch(python_if, grid=2, block=32, args=(np.zeros(64, np.float32),))


def test_per_block_python_logic_runs_with_one_block_per_pass():
    def first_block_only(blk, out):
        if blk.bx[0, 0] == 0:
            blk.store(out, blk.tx, 1.0)

    out = np.zeros(32, np.float32)
    launch(first_block_only, grid=4, block=32, args=(out,), blocks_per_pass=1)
    assert out.sum() == 32


def test_an_index_of_the_wrong_shape_says_where():
    def wrong_shape(blk, a):
        blk.load(a, np.arange(7))

    with pytest.raises(ValueError, match=r"wrong_shape \(line \d+: blk.load\(a, np.arange\(7\)\)\): the index has shape \(7,\)"):
        launch(wrong_shape, grid=1, block=32, args=(np.zeros(64, np.float32),))
