"""Kernels from the OLCF CUDA Training Series exercises, rewritten with the ``blk`` API, and
the hw8 transposes as profiled with Nsight Compute in a public fork.

Sources:
* https://github.com/olcf/cuda-training-series at commit
  9cd77d539d85ee3457e09a083ba299b787b7a16e, ``exercises/hwN/*_solution.cu`` (each kernel
  names its file);
* https://github.com/eduardo4jesus/cuda-training-series at commit
  2cce63d99119d0aee2bb78e331497ff6abca9492, ``exercises/hw8/task{1,2,3}/task*.cu`` and the
  Nsight Compute profiles beside them (``task1.profile``, ``task2.profile``,
  ``task2b.profile``, ``task3.profile``: 4096 × 4096 doubles, 32 × 32 blocks).

Conventions as in ``test_cuda_samples.py``: a per-thread ``if`` or ``while`` test is a
``blk.branch``; constants of the source (``N``, ``DSIZE``) become kernel arguments scaled
down from the source's sizes, named where they are set.
"""

import numpy as np
import pytest

from zoo_engines import expect, rng

OLCF = "olcf/cuda-training-series@9cd77d539d85ee3457e09a083ba299b787b7a16e"
HW8 = "eduardo4jesus/cuda-training-series@2cce63d99119d0aee2bb78e331497ff6abca9492"


# -- exercises/hw1/vector_add_solution.cu ---------------------------------------------------

def vadd(blk, A, B, C, ds):
    """hw1 ``vadd``: ``if (idx < ds) C[idx] = A[idx] + B[idx]``."""
    idx = blk.tx + blk.bdx * blk.bx
    m = blk.branch(idx < ds)
    blk.store(C, idx, blk.load(A, idx, mask=m) + blk.load(B, idx, mask=m), mask=m)


def test_hw1_vadd(both):
    # The exercise's size: DSIZE = 4096, block_size = 256: 16 blocks, 128 full warps.
    n = 4096
    A, B = rng(100).random(n, dtype=np.float32), rng(101).random(n, dtype=np.float32)
    r = both(vadd, (n + 255) // 256, 256, (A, B, np.zeros(n, np.float32), n))
    np.testing.assert_array_equal(r.args[2], A + B)
    # 3 accesses × 128 warps, 4 sectors each; no warp diverges.
    expect(r.t, requests=3 * 128, sectors=3 * 128 * 4, branches=128, divergent_branches=0)


# -- exercises/hw1/matrix_mul_solution.cu ---------------------------------------------------

def mmul_naive(blk, A, B, C, ds):
    """hw1 ``mmul``: one thread per element of C, a loop over a row of A and a column of B."""
    idx = blk.tx + blk.bdx * blk.bx
    idy = blk.ty + blk.bdy * blk.by
    m = blk.branch((idx < ds) & (idy < ds))
    temp = np.zeros((blk.nblocks, blk.nthreads), np.float32)
    for i in range(ds):
        temp = temp + blk.load(A, idy * ds + i, mask=m) * blk.load(B, i * ds + idx, mask=m)
    blk.store(C, idy * ds + idx, temp, mask=m)


def test_hw1_mmul_naive(both):
    # block_size = 32 (32 × 32 blocks) as in the exercise; ds = 36 (the exercise's 8192,
    # scaled down and made ragged): grid 2 × 2, one warp per row ty.
    ds = 36
    A = rng(102).random((ds, ds), dtype=np.float32)
    B = rng(103).random((ds, ds), dtype=np.float32)
    r = both(mmul_naive, (2, 2), (32, 32), (A, B, np.zeros((ds, ds), np.float32), ds))
    np.testing.assert_allclose(r.args[2], A @ B, rtol=1e-5)
    # Warps with an active lane: block (0,0) 32 full, (1,0) 32 of 4 lanes, (0,1) 4 full,
    # (1,1) 4 of 4 lanes: 72 warps, 36 of each kind (bx = 0: 32 lanes, bx = 1: 4).
    # Divergent branches: the 32 + 4 partial warps of bx = 1.
    # A[idy·ds + i]: one word per warp: 72 · 36 requests, 1 sector each.
    # B[i·ds + idx]: row i starts at byte 144·i, a multiple of 32 for even i: 32 lanes
    # take 4 sectors (even i) or 5 (odd i): 18·4 + 18·5 = 162 per warp; 4 lanes at
    # byte 144·i + 128 (16 B): 1 sector, 36 per warp → 36·162 + 36·36 sectors.
    # C[idy·ds + idx]: the same shapes over idy: 162 (bx = 0 warps), 36 (bx = 1).
    expect(r.t, branches=128, divergent_branches=36, requests=2 * 72 * 36 + 72,
           sectors=72 * 36 + 36 * 162 + 36 * 36 + 162 + 36)


# -- exercises/hw2/stencil_1d_solution.cu ---------------------------------------------------

RADIUS, BLOCK_SIZE = 3, 16


def stencil_1d(blk, in_, out, barrier=True):
    """hw2 ``stencil_1d``: a 7-point sum through ``temp[BLOCK_SIZE + 2 * RADIUS]``, launched as
    ``stencil_1d<<<N/BLOCK_SIZE, BLOCK_SIZE>>>(d_in + RADIUS, d_out + RADIUS)``: the
    pointers start RADIUS ints into their allocations, so here every index adds RADIUS.
    ``barrier=False`` drops the ``__syncthreads()`` the exercise's comment insists on
    ("Synchronize (ensure all the data is available)")."""
    temp = blk.shared(BLOCK_SIZE + 2 * RADIUS, np.int32, name="temp")
    gindex = blk.tx + blk.bx * blk.bdx
    lindex = blk.tx + RADIUS
    blk.store(temp, lindex, blk.load(in_, RADIUS + gindex))
    halo = blk.branch(blk.tx < RADIUS)
    blk.store(temp, lindex - RADIUS, blk.load(in_, RADIUS + gindex - RADIUS, mask=halo), mask=halo)
    blk.store(temp, lindex + BLOCK_SIZE, blk.load(in_, RADIUS + gindex + BLOCK_SIZE, mask=halo), mask=halo)
    if barrier:
        blk.sync()
    result = np.zeros((blk.nblocks, blk.nthreads), np.int32)
    for offset in range(-RADIUS, RADIUS + 1):
        result = result + blk.load(temp, lindex + offset)
    blk.store(out, RADIUS + gindex, result)


def _stencil_gold(padded, n):
    return sum(padded[k:k + n] for k in range(2 * RADIUS + 1))


@pytest.mark.parametrize("n", [64, 4096])
def test_hw2_stencil_1d(both, fast, n):
    # Blocks of 16 threads: one warp with 16 lanes. N = 4096 is the exercise's size (fast
    # engine only); N = 64 (4 blocks) runs on both.
    padded = rng(104).integers(-100, 100, n + 2 * RADIUS).astype(np.int32)
    out = np.zeros(n + 2 * RADIUS, np.int32)
    run = both if n == 64 else fast
    r = run(stencil_1d, n // BLOCK_SIZE, BLOCK_SIZE, (padded, out))
    np.testing.assert_array_equal(r.args[1][RADIUS:RADIUS + n], _stencil_gold(padded, n))
    blocks = n // BLOCK_SIZE
    # Per block: in[3 + gindex] is 64 B starting 12 B into a sector: 3 sectors; the two
    # halo loads (3 lanes, 12 B each inside one sector): 1 each; out: 3 sectors → 4
    # requests, 8 sectors. Shared: 3 stores + 7 loads, each 1 wavefront. The halo branch
    # (3 of 16 lanes) diverges in every block.
    expect(r.t, requests=4 * blocks, sectors=8 * blocks, shared_requests=10 * blocks,
           shared_wavefronts=10 * blocks, barriers=blocks, branches=blocks, divergent_branches=blocks)
    assert r.stats.races == []


def test_hw2_stencil_1d_without_barrier_races_inside_the_warp(both):
    # One warp of 16 lanes per block. Without the barrier, lane 3 reads temp[3] (offset −3)
    # that lane 0 wrote: since Volta the lanes of a warp are scheduled independently, and
    # compute-sanitizer's racecheck reports such a read-after-write hazard.
    n = 64
    padded = rng(117).integers(-100, 100, n + 2 * RADIUS).astype(np.int32)
    r = both(stencil_1d, n // BLOCK_SIZE, BLOCK_SIZE, (padded, np.zeros(n + 2 * RADIUS, np.int32), False))
    assert r.stats.races, "no race reported"
    first = r.stats.races[0]
    assert (first.kind, first.block, first.warp, first.other_warp, first.array) == \
        ("read-after-write", (0, 0, 0), 0, 0, "temp")
    assert "blk.load(temp" in first.site.source and "blk.store(temp, lindex, blk.load" in first.other_site.source
    assert (first.lane, first.other_lane) == (3, 0)
    # Every block, every offset but 0 (a lane reading its own temp[lindex]): 4 × 6 records,
    # all read-after-write, all inside warp 0.
    assert len(r.stats.races) == 4 * 6
    assert {(race.kind, race.warp, race.other_warp) for race in r.stats.races} == {("read-after-write", 0, 0)}
    assert r.t.barriers == 0


# -- exercises/hw2/matrix_mul_shared_solution.cu --------------------------------------------

def mmul_shared(blk, A, B, C, ds):
    """hw2 ``mmul``: 32 × 32 tiles of A and B in shared memory."""
    bs = 32
    As = blk.shared((bs, bs), np.float32, name="As")
    Bs = blk.shared((bs, bs), np.float32, name="Bs")
    idx = blk.tx + blk.bdx * blk.bx
    idy = blk.ty + blk.bdy * blk.by
    m = blk.branch((idx < ds) & (idy < ds))  # every thread, as ds is a multiple of 32
    temp = np.zeros((blk.nblocks, blk.nthreads), np.float32)
    for i in range(ds // bs):
        blk.store(As, (blk.ty, blk.tx), blk.load(A, idy * ds + (i * bs + blk.tx), mask=m), mask=m)
        blk.store(Bs, (blk.ty, blk.tx), blk.load(B, (i * bs + blk.ty) * ds + idx, mask=m), mask=m)
        blk.sync(mask=m)
        for k in range(bs):
            temp = temp + blk.load(As, (blk.ty, 0 * blk.tx + k), mask=m) * blk.load(Bs, (0 * blk.ty + k, blk.tx), mask=m)
        blk.sync(mask=m)
    blk.store(C, idy * ds + idx, temp, mask=m)


def test_hw2_mmul_shared(both, fast):
    # The exercise's DSIZE = 8192, scaled: ds = 32 (one 32 × 32 block, 1 tile) on both
    # engines, ds = 64 (grid 2 × 2, 2 tiles) on the fast one.
    for ds, run in ((32, both), (64, fast)):
        A = rng(105 + ds).random((ds, ds), dtype=np.float32)
        B = rng(106 + ds).random((ds, ds), dtype=np.float32)
        blocks, tiles = (ds // 32) ** 2, ds // 32
        r = run(mmul_shared, (ds // 32, ds // 32), (32, 32), (A, B, np.zeros((ds, ds), np.float32), ds))
        np.testing.assert_allclose(r.args[2], A @ B, rtol=1e-5)
        # Per block (32 warps) and tile: 32 + 32 loads of a 32-float row (4 sectors), 64
        # shared stores (1 wavefront); 32 k × 2 loads × 32 warps = 2,048 shared loads,
        # As[ty][k] a broadcast and Bs[k][tx] 32 banks: 1 wavefront each; 2 barriers.
        # Then 32 stores of C.
        expect(r.t, requests=blocks * (tiles * 64 + 32), sectors=blocks * (tiles * 256 + 128),
               barriers=blocks * tiles * 2, shared_requests=blocks * tiles * (64 + 2048),
               shared_wavefronts=blocks * tiles * (64 + 2048), branches=blocks * 32, divergent_branches=0)
        assert r.stats.races == []


# -- exercises/hw4/matrix_sums_solution.cu --------------------------------------------------

def row_sums(blk, A, sums, ds):
    """hw4 ``row_sums``: thread idx walks row idx (``sum += A[idx*ds+i]``)."""
    idx = blk.tx + blk.bdx * blk.bx
    m = blk.branch(idx < ds)
    total = np.zeros((blk.nblocks, blk.nthreads), np.float32)
    for i in range(ds):
        total = total + blk.load(A, idx * ds + i, mask=m)
    blk.store(sums, idx, total, mask=m)


def column_sums(blk, A, sums, ds):
    """hw4 ``column_sums``: thread idx walks column idx (``sum += A[idx+ds*i]``)."""
    idx = blk.tx + blk.bdx * blk.bx
    m = blk.branch(idx < ds)
    total = np.zeros((blk.nblocks, blk.nthreads), np.float32)
    for i in range(ds):
        total = total + blk.load(A, idx + ds * i, mask=m)
    blk.store(sums, idx, total, mask=m)


@pytest.mark.parametrize("kernel, axis, load_sectors", [
    # Row sums: the 300 active lanes of a step read 300 rows 1,200 B apart: 300 sectors a
    # step, 300 steps.
    (row_sums, 1, 300 * 300),
    # Column sums: row i starts at byte 1,200·i (≡ 16·i mod 32): a full warp takes 4
    # sectors for even i, 5 for odd i; the 12-lane warp (48 B) 2 either way:
    # 150·(9·4 + 2) + 150·(9·5 + 2).
    (column_sums, 0, 150 * 38 + 150 * 47),
])
def test_hw4_matrix_sums(both, kernel, axis, load_sectors):
    # DSIZE = 16384 in the exercise; here ds = 300 on 2 blocks of 256 (block_size as in the
    # exercise): warps 0–7 of block 0 and warps 0 (32 lanes) and 1 (12 lanes) of block 1.
    ds = 300
    A = rng(107).random((ds, ds), dtype=np.float32)
    r = both(kernel, 2, 256, (A, np.zeros(ds, np.float32), ds))
    np.testing.assert_allclose(r.args[1], A.sum(axis=axis), rtol=1e-4)  # 300 float32 adds
    # 10 warps issue each of the 300 loads; the store: 9 warps × 4 sectors + 48 B at byte
    # 1,152 (2 sectors). The branch: 16 warps, block 1's warp 1 diverges.
    expect(r.t, requests=10 * 300 + 10, sectors=load_sectors + 38, branches=16, divergent_branches=1)


# -- exercises/hw5/reductions.cu and max_reduction_solution.cu --------------------------------
# The source's N = 8M and 640 blocks become N = 2,000 on 3 blocks of 256 (BLOCK_SIZE as in
# the source): a grid stride of 768. Thread g = 0…767 reads g, g + 768 and, if g < 464,
# g + 1536. Loop tests: 24 warps (trip 1), 24 (trip 2), 24 with warp 14 (g = 448…479,
# 16 lanes below 464) divergent (trip 3), and the 15 warps still looping, all false: 87
# branches, 1 divergent. Loads: 24 + 24 + 15 requests, 96 + 96 + 14·4 + 2 = 250 sectors.

def atomic_red(blk, gdata, out, N):
    """hw5 ``atomic_red``: ``if (idx < N) atomicAdd(out, gdata[idx])``."""
    idx = (blk.tx + blk.bdx * blk.bx).astype(np.uint64)  # size_t idx
    m = blk.branch(idx < N)
    blk.atomic_add(out, 0 * idx, blk.load(gdata, idx, mask=m), mask=m)


def test_hw5_atomic_red(both):
    n = 1000
    x = rng(108).random(n, dtype=np.float32)
    r = both(atomic_red, 4, 256, (x, np.zeros(1, np.float32), n))
    np.testing.assert_allclose(r.args[1][0], x.sum(dtype=np.float64), rtol=1e-5)  # 1,000 float32 adds in order
    # 32 warps; warp 31 has 8 lanes. Loads 125 sectors; each atomic 1 sector, and its
    # active lanes all hit out[0]: 31 warps × 31 + 7 conflicts.
    expect(r.t, requests=64, sectors=125 + 32, atomics=32, atomic_conflicts=31 * 31 + 7,
           branches=32, divergent_branches=1)


def _grid_stride_into_shared(blk, gdata, sdata, n, combine):
    """``while (idx < N) { sdata[tid] = combine(sdata[tid], gdata[idx]); idx += gridDim.x*blockDim.x; }``"""
    tid = blk.tx
    idx = (blk.tx + blk.bdx * blk.bx).astype(np.uint64)  # size_t idx
    live = blk.branch(idx < n)
    while live.any():
        blk.store(sdata, tid, combine(blk.load(sdata, tid, mask=live), blk.load(gdata, idx, mask=live)), mask=live)
        idx += blk.gdx * blk.bdx  # in place, as the source writes it
        live &= blk.branch(idx < n, mask=live)


def _sweep(blk, sdata, combine):
    tid = blk.tx
    s = blk.bdx // 2
    while s > 0:
        blk.sync()
        m = blk.branch(tid < s)  # parallel sweep reduction
        blk.store(sdata, tid, combine(blk.load(sdata, tid + s, mask=m), blk.load(sdata, tid, mask=m)), mask=m)
        s >>= 1


def reduce_a(blk, gdata, out, N):
    """hw5 ``reduce_a``: grid-stride sums into ``sdata[tid]``, a sweep, one atomicAdd a block."""
    sdata = blk.shared(256, np.float32, name="sdata")
    blk.store(sdata, blk.tx, 0)
    _grid_stride_into_shared(blk, gdata, sdata, N, np.add)
    _sweep(blk, sdata, np.add)
    first = blk.branch(blk.tx == 0)
    blk.atomic_add(out, 0 * blk.bx, blk.load(sdata, 0 * blk.tx, mask=first), mask=first)


def test_hw5_reduce_a(both):
    n = 2000
    x = rng(109).random(n, dtype=np.float32)
    r = both(reduce_a, 3, 256, (x, np.zeros(1, np.float32), n))
    np.testing.assert_allclose(r.args[1][0], x.sum(dtype=np.float64), rtol=1e-5)
    # Shared: 24 zeroing stores; a load and a store per warp trip (63); the sweep (12 warp
    # steps × 3 a block: 108); 3 loads of sdata[0] → 261, 1 wavefront each. Barriers: 8 a
    # block. Branches: 87 (loop) + 8 steps × 24 warps + 24 (tid == 0); divergent
    # 1 + 5 per block + 1 per block. Global: 63 loads (250 sectors) + 3 atomics.
    expect(r.t, requests=66, sectors=253, atomics=3, atomic_conflicts=0, shared_requests=261,
           shared_wavefronts=261, barriers=24, branches=87 + 192 + 24, divergent_branches=1 + 15 + 3)
    assert r.stats.races == []


def reduce_ws(blk, gdata, out, N):
    """hw5 ``reduce_ws``: grid-stride sums in a register, two rounds of warp shuffles with the
    warp sums in ``sdata[32]``, one atomicAdd a block."""
    sdata = blk.shared(32, np.float32, name="sdata")
    tid = blk.tx
    idx = blk.tx + blk.bdx * blk.bx  # int idx
    val = np.zeros((blk.nblocks, blk.nthreads), np.float32)
    lane = blk.tx % 32
    warp_id = blk.tx // 32
    live = blk.branch(idx < N)
    while live.any():
        val += blk.load(gdata, idx, mask=live)
        idx = idx + blk.gdx * blk.bdx
        live = blk.branch(idx < N, mask=live)
    offset = 16
    while offset > 0:
        val = val + blk.shfl_down(val, offset)
        offset >>= 1
    lane0 = blk.branch(lane == 0)
    blk.store(sdata, warp_id, val, mask=lane0)
    blk.sync()
    w0 = blk.branch(warp_id == 0)
    has = w0 & (tid < blk.bdx // 32)  # (tid < blockDim.x/warpSize) ? sdata[lane] : 0
    val = np.where(has, blk.load(sdata, lane, mask=has), np.float32(0))
    offset = 16
    while offset > 0:
        val = val + blk.shfl_down(val, offset, mask=w0)
        offset >>= 1
    first = blk.branch(tid == 0, mask=w0)
    blk.atomic_add(out, 0 * blk.bx, val, mask=first)


def test_hw5_reduce_ws(both):
    n = 2000
    x = rng(110).random(n, dtype=np.float32)
    r = both(reduce_ws, 3, 256, (x, np.zeros(1, np.float32), n))
    np.testing.assert_allclose(r.args[1][0], x.sum(dtype=np.float64), rtol=1e-5)
    # Shuffles: 5 in each of 24 warps, then 5 in each block's warp 0: 135. Branches: 87
    # (loop) + 24 (lane == 0, all divergent) + 24 (warpID == 0, uniform per warp) + 3
    # (tid == 0 in warp 0, divergent). Shared: 24 one-lane stores + 3 loads of 8 lanes.
    expect(r.t, requests=66, sectors=253, atomics=3, shuffles=135, barriers=3, shared_requests=27,
           shared_wavefronts=27, branches=87 + 24 + 24 + 3, divergent_branches=1 + 24 + 3)
    assert r.stats.races == []


def max_reduce(blk, gdata, out, n):
    """hw5 ``reduce`` of max_reduction_solution.cu: as reduce_a with ``max`` for ``+`` and
    ``out[blockIdx.x] = sdata[0]``; run twice (640 blocks, then 1 block over their maxima)."""
    sdata = blk.shared(256, np.float32, name="sdata")
    blk.store(sdata, blk.tx, 0)
    _grid_stride_into_shared(blk, gdata, sdata, n, np.maximum)
    _sweep(blk, sdata, np.maximum)
    first = blk.branch(blk.tx == 0)
    blk.store(out, blk.bx, blk.load(sdata, 0 * blk.tx, mask=first), mask=first)


def test_hw5_max_reduction(both):
    n = 2000
    x = rng(111).random(n, dtype=np.float32)  # positive, as the exercise's rand()/RAND_MAX: sdata starts at 0
    r = both(max_reduce, 3, 256, (x, np.zeros(3, np.float32), n))
    block_of = np.arange(n) % 768 // 256  # the block whose threads read element k
    np.testing.assert_array_equal(r.args[1], [x[block_of == b].max() for b in range(3)])
    # As reduce_a, with a one-sector store per block in place of the atomic.
    expect(r.t, requests=66, sectors=253, atomics=0, shared_requests=261, shared_wavefronts=261, barriers=24,
           branches=87 + 192 + 24, divergent_branches=1 + 15 + 3)
    # Stage 2: reduce<<<1, BLOCK_SIZE>>>(d_sums, d_A, blocks): the maximum of the 3 maxima.
    r2 = both(max_reduce, 1, 256, (r.args[1], np.zeros(1, np.float32), 3))
    assert r2.args[1][0] == x.max()
    # 1 block: warp 0 has 3 lanes in the loop (1 load, 1 sector; tests: 8 warps, warp 0
    # divergent; then warp 0 alone, false); the store of out[0].
    expect(r2.t, requests=2, sectors=2, branches=8 + 1 + 64 + 8, divergent_branches=1 + 5 + 1)


# -- exercises/hw6/array_inc_solution.cu ----------------------------------------------------

def inc(blk, array, n):
    """hw6 ``inc``: a grid-stride loop of ``array[idx]++`` with a size_t index."""
    idx = (blk.tx + blk.bdx * blk.bx).astype(np.uint64)
    live = blk.branch(idx < n)
    while live.any():
        blk.store(array, idx, blk.load(array, idx, mask=live) + 1, mask=live)
        idx += blk.bdx * blk.gdx  # grid-stride loop, in place
        live &= blk.branch(idx < n, mask=live)


def test_hw6_array_inc(both):
    # inc<<<256, 256>>> over 32M ints in the exercise; here 4 blocks of 256 over 2,500 ints:
    # stride 1,024; trip 3 covers g < 452: 14 full warps and warp 14 with 4 lanes.
    n = 2500
    a = rng(112).integers(-1000, 1000, n).astype(np.int32)
    r = both(inc, 4, 256, (a, n))
    np.testing.assert_array_equal(r.args[0], a + 1)
    # Tests: 32 + 32 + 32 (1 divergent) + 15. Loads and stores: 79 warp trips each;
    # 10,000 B = 312 sectors and a half → 128 + 128 + 14·4 + 1 = 313 each.
    expect(r.t, branches=111, divergent_branches=1, requests=2 * 79, sectors=2 * 313)


# -- eduardo4jesus hw8: fp64 transposes against Nsight Compute profiles -----------------------

def INDX(row, col, ld):
    """``#define INDX(row, col, ld) (((col) * (ld)) + (row))``: column-major."""
    return col * ld + row


def naive_cuda_transpose(blk, m, a, c):
    """hw8 task1 ``naive_cuda_transpose``: ``c[INDX(myRow, myCol, m)] = a[INDX(myCol, myRow, m)]``."""
    my_row = blk.bdx * blk.bx + blk.tx
    my_col = blk.bdy * blk.by + blk.ty
    ok = blk.branch((my_row < m) & (my_col < m))
    v = blk.load(a, INDX(my_col, my_row, m), mask=ok)
    blk.store(c, INDX(my_row, my_col, m), v, mask=ok)


def _smem_transpose(blk, m, a, c, pad, transpose_on_load):
    s = blk.shared((32, 32 + pad), np.float64, name="smemArray")
    my_row = blk.bdx * blk.bx + blk.tx
    my_col = blk.bdy * blk.by + blk.ty
    tile_x = blk.bdx * blk.bx
    tile_y = blk.bdy * blk.by
    ok = blk.branch((my_row < m) & (my_col < m))
    into = (blk.tx, blk.ty) if transpose_on_load else (blk.ty, blk.tx)
    blk.store(s, into, blk.load(a, INDX(tile_x + blk.tx, tile_y + blk.ty, m), mask=ok), mask=ok)
    blk.sync()
    ok = blk.branch((my_row < m) & (my_col < m))
    out_of = (blk.ty, blk.tx) if transpose_on_load else (blk.tx, blk.ty)
    blk.store(c, INDX(tile_y + blk.tx, tile_x + blk.ty, m), blk.load(s, out_of, mask=ok), mask=ok)


def smem_cuda_transpose_task2(blk, m, a, c):
    """hw8 task2 ``smem_cuda_transpose``: ``smemArray[threadIdx.x][threadIdx.y] = a[…]``
    (transposing on the shared store), ``double smemArray[32][32]``."""
    _smem_transpose(blk, m, a, c, 0, True)


def smem_cuda_transpose_task2b(blk, m, a, c):
    """hw8 task2b: the same, transposing on the shared load (``smemArray[threadIdx.x][threadIdx.y]``)."""
    _smem_transpose(blk, m, a, c, 0, False)


def smem_cuda_transpose_task3(blk, m, a, c):
    """hw8 task3: task2 with the tile padded to ``smemArray[32][33]``."""
    _smem_transpose(blk, m, a, c, 1, True)


def test_hw8_task1_naive_fp64_transpose(both, fast):
    m = 64
    a = rng(113).random((m, m))
    r = both(naive_cuda_transpose, (2, 2), (32, 32), (m, a, np.zeros((m, m))))
    np.testing.assert_array_equal(r.args[2], a.T)
    # task1.profile at m = 4096: loads 524,288 requests, 16,777,216 sectors (32 a request:
    # each lane's double is m·8 B from the next); stores 524,288 requests, 4,194,304 sectors
    # (32 doubles = 8 sectors). One request per warp = m²/32; at m = 64: 128.
    expect(r.line("v = blk.load(a"), requests=128, sectors=128 * 32)
    expect(r.line("blk.store(c"), requests=128, sectors=128 * 8)
    expect(r.t, requests=2 * 128, sectors=128 * (32 + 8), branches=128, divergent_branches=0)
    # m = 1024 on the fast engine: task1.profile's numbers ÷ (4096 / 1024)² = 16. (At 4096²
    # the launch takes about a second on an idle machine, but 7–9 s on a busy 2-core one.)
    m = 1024
    a = rng(114).random((m, m))
    r = fast(naive_cuda_transpose, (m // 32, m // 32), (32, 32), (m, a, np.zeros((m, m))))
    np.testing.assert_array_equal(r.args[2], a.T)
    expect(r.line("v = blk.load(a"), requests=524_288 // 16, sectors=16_777_216 // 16)
    expect(r.line("blk.store(c"), requests=524_288 // 16, sectors=4_194_304 // 16)


@pytest.mark.parametrize("kernel, store_wavefronts, load_wavefronts, m_fast", [
    # task2: smemArray[tx][ty] stores: doubles 32 apart → one bank pair per half-warp phase,
    # 16 distinct words each: 16 wavefronts a phase, 32 a request (ideal 2). Loads
    # smemArray[ty][tx]: 2. Profile at 4096²: 524,288 requests each way → store wavefronts
    # 16,777,216 derived (hardware: 17,061,038), bank conflicts 15,728,640 (16,012,462);
    # load wavefronts 1,048,576 (1,048,664).
    (smem_cuda_transpose_task2, 32, 2, 1024),
    # task2b: the other way round: stores 2, loads 32 (hardware: 1,321,322 and 16,878,697).
    (smem_cuda_transpose_task2b, 2, 32, 1024),
    # task3: rows of 33 doubles: lane tx of a phase at banks 2·(tx + ty) % 32 (+1), all
    # distinct: 2 wavefronts a request each way: 1,048,576 (hardware: stores 1,290,266 with
    # 241,690 conflicts the addresses do not explain; loads 1,048,576, 0 conflicts).
    (smem_cuda_transpose_task3, 2, 2, 1024),
])
def test_hw8_smem_fp64_transpose_profiles(both, fast, kernel, store_wavefronts, load_wavefronts, m_fast):
    m = 64
    a = rng(115).random((m, m))
    r = both(kernel, (2, 2), (32, 32), (m, a, np.zeros((m, m))))
    np.testing.assert_array_equal(r.args[2], a.T)
    # Both global accesses: 8 sectors a request (the profiles: 8 sector/request each way).
    expect(r.t, requests=2 * 128, sectors=2 * 128 * 8, barriers=4, shared_requests=2 * 128,
           shared_wavefronts=128 * (store_wavefronts + load_wavefronts), shared_ideal_wavefronts=2 * 128 * 2)
    assert r.stats.races == []
    # At 1024² every count is the profile's ÷ (4096 / 1024)² = 16 (m_fast = 4096 checks the
    # profile as printed, in about a second on an idle machine).
    m = m_fast
    a = rng(116).random((m, m))
    r = fast(kernel, (m // 32, m // 32), (32, 32), (m, a, np.zeros((m, m))))
    np.testing.assert_array_equal(r.args[2], a.T)
    scale = (4096 // m) ** 2
    requests = 524_288 // scale
    expect(r.line("blk.store(s, into"), shared_requests=requests, shared_wavefronts=requests * store_wavefronts,
           shared_bank_conflicts=requests * (store_wavefronts - 2))
    expect(r.line("blk.load(s, out_of"), shared_requests=requests, shared_wavefronts=requests * load_wavefronts,
           shared_bank_conflicts=requests * (load_wavefronts - 2))
    expect(r.t, requests=2 * requests, sectors=2 * 4_194_304 // scale)
