"""Kernels from NVIDIA's CUDA Samples, rewritten with the ``blk`` API.

Source: https://github.com/NVIDIA/cuda-samples at commit
c94ff366aed18c797b8a85dfaac7817b0228b420 (2025-09-05); each kernel names its file.

Conventions of the rewrite (the same in every zoo module):
* every ``if`` of the source whose condition differs between threads is a ``blk.branch``,
  and so is the test of a ``while`` loop (one per trip, by the threads still in the loop);
  a ternary ``c ? x : 0`` is a select (a masked load and ``np.where``), not a branch, as
  the compiler emits it;
* ``__constant__`` arrays are read as Python constants: the simulator has no constant
  cache, so they move no sectors;
* loops whose trip count is the same for every thread (``for (s = blockDim.x/2; …)``)
  are Python loops.
"""

import numpy as np
import pytest

from zoo_engines import expect, rng

SAMPLES = "NVIDIA/cuda-samples@c94ff366aed18c797b8a85dfaac7817b0228b420"


# -- Samples/0_Introduction/vectorAdd/vectorAdd.cu ------------------------------------------

def vectorAdd(blk, A, B, C, numElements):
    """``vectorAdd``: one thread per element, ``if (i < numElements) C[i] = A[i] + B[i] + 0.0f``."""
    i = blk.bdx * blk.bx + blk.tx
    m = blk.branch(i < numElements)
    blk.store(C, i, blk.load(A, i, mask=m) + blk.load(B, i, mask=m) + np.float32(0), mask=m)


def test_vectorAdd(both, fast):
    # n = 1000 floats, 256-thread blocks (the sample's threadsPerBlock): 4 blocks, 32 warps;
    # warp 31 (block 3, warp 7) covers i = 992…1023 and has 8 active lanes.
    n = 1000
    A, B = rng(1).random(n, dtype=np.float32), rng(2).random(n, dtype=np.float32)
    r = both(vectorAdd, 4, 256, (A, B, np.zeros(n, np.float32), n))
    np.testing.assert_array_equal(r.args[2], A + B)  # one float add each: exact
    # A, B, C: 31 full warps × 4 sectors + 8 floats (32 B) = 1 sector → 125 sectors each;
    # one request per warp per access. The branch: 32 warps, only warp 31 diverges.
    expect(r.t, requests=3 * 32, sectors=3 * 125, branches=32, divergent_branches=1, barriers=0)
    assert r.stats.races == []
    # The sample's own size: 50,000 elements, 196 blocks, 1,568 warps; 1,562 full warps and
    # one of 16 lanes (2 sectors) issue, the last 5 warps have no active lane.
    n = 50_000
    A, B = rng(3).random(n, dtype=np.float32), rng(4).random(n, dtype=np.float32)
    r = fast(vectorAdd, 196, 256, (A, B, np.zeros(n, np.float32), n))
    np.testing.assert_array_equal(r.args[2], A + B)
    expect(r.t, requests=3 * 1563, sectors=3 * (1562 * 4 + 2), branches=1568, divergent_branches=1)


# -- Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu ------------------------
# The sample's default type is int (REDUCE_INT) and 256 threads; sdata is extern __shared__.
# n = 1000 ints on 4 blocks of 256 threads (reduce0–2) leaves block 3 with 232 elements:
# its warp 7 has 8 active lanes (i = 992…999), and the load moves 31·4 + 1 = 125 sectors.

BLOCK = 256


def _sdata(blk):
    return blk.shared(BLOCK, np.int32, name="sdata", dynamic=True)


def reduce0(blk, g_idata, g_odata, n):
    """``reduce0``: interleaved addressing with ``tid % (2*s)``, a barrier after every step."""
    sdata = _sdata(blk)
    tid = blk.tx
    i = blk.bx * blk.bdx + blk.tx
    sdata_val = np.where(i < n, blk.load(g_idata, i, mask=i < n), 0)  # (i < n) ? g_idata[i] : 0
    blk.store(sdata, tid, sdata_val)
    blk.sync()
    s = 1
    while s < blk.bdx:
        m = blk.branch(tid % (2 * s) == 0)  # "modulo arithmetic is slow!"
        blk.store(sdata, tid, blk.load(sdata, tid, mask=m) + blk.load(sdata, tid + s, mask=m), mask=m)
        blk.sync()
        s *= 2
    first = blk.branch(tid == 0)
    blk.store(g_odata, blk.bx, blk.load(sdata, 0 * tid, mask=first), mask=first)


def reduce1(blk, g_idata, g_odata, n):
    """``reduce1``: contiguous threads, ``index = 2 * s * tid``: bank conflicts instead of divergence."""
    sdata = _sdata(blk)
    tid = blk.tx
    i = blk.bx * blk.bdx + blk.tx
    blk.store(sdata, tid, np.where(i < n, blk.load(g_idata, i, mask=i < n), 0))
    blk.sync()
    s = 1
    while s < blk.bdx:
        index = 2 * s * tid
        m = blk.branch(index < blk.bdx)
        blk.store(sdata, index, blk.load(sdata, index, mask=m) + blk.load(sdata, index + s, mask=m), mask=m)
        blk.sync()
        s *= 2
    first = blk.branch(tid == 0)
    blk.store(g_odata, blk.bx, blk.load(sdata, 0 * tid, mask=first), mask=first)


def reduce2(blk, g_idata, g_odata, n):
    """``reduce2``: sequential addressing, ``if (tid < s) sdata[tid] += sdata[tid + s]``."""
    sdata = _sdata(blk)
    tid = blk.tx
    i = blk.bx * blk.bdx + blk.tx
    blk.store(sdata, tid, np.where(i < n, blk.load(g_idata, i, mask=i < n), 0))
    blk.sync()
    s = blk.bdx // 2
    while s > 0:
        m = blk.branch(tid < s)
        blk.store(sdata, tid, blk.load(sdata, tid, mask=m) + blk.load(sdata, tid + s, mask=m), mask=m)
        blk.sync()
        s >>= 1
    first = blk.branch(tid == 0)
    blk.store(g_odata, blk.bx, blk.load(sdata, 0 * tid, mask=first), mask=first)


def _first_add(blk, g_idata, n, block_size):
    """reduce3–5: each thread adds two elements a block apart while loading."""
    i = blk.bx * (blk.bdx * 2) + blk.tx
    my_sum = np.where(i < n, blk.load(g_idata, i, mask=i < n), 0)
    second = blk.branch(i + block_size < n)  # if (i + blockSize < n) mySum += g_idata[i + blockSize]
    return my_sum + blk.load(g_idata, i + block_size, mask=second)


def reduce3(blk, g_idata, g_odata, n):
    """``reduce3``: half the threads, the first add during the load; the sum kept in a register."""
    sdata = _sdata(blk)
    tid = blk.tx
    my_sum = _first_add(blk, g_idata, n, blk.bdx)
    blk.store(sdata, tid, my_sum)
    blk.sync()
    s = blk.bdx // 2
    while s > 0:
        m = blk.branch(tid < s)
        # sdata[tid] = mySum = mySum + sdata[tid + s]
        my_sum = np.where(m, my_sum + blk.load(sdata, tid + s, mask=m), my_sum)
        blk.store(sdata, tid, my_sum, mask=m)
        blk.sync()
        s >>= 1
    first = blk.branch(tid == 0)
    blk.store(g_odata, blk.bx, my_sum, mask=first)


def _last_warp(blk, sdata, my_sum, block_size, g_odata):
    """reduce4–6: ``if (cta.thread_rank() < 32)``: add sdata[tid + 32], then shuffle down."""
    tid = blk.tx
    w0 = blk.branch(tid < 32)
    if block_size >= 64:
        my_sum = np.where(w0, my_sum + blk.load(sdata, tid + 32, mask=w0), my_sum)
    offset = 16
    while offset > 0:
        my_sum = my_sum + np.where(w0, blk.shfl_down(my_sum, offset, mask=w0), 0)
        offset //= 2
    first = blk.branch(tid == 0)
    blk.store(g_odata, blk.bx, my_sum, mask=first)


def reduce4(blk, g_idata, g_odata, n):
    """``reduce4<int, 256>``: shared-memory steps while s > 32, then one warp of shuffles."""
    sdata = _sdata(blk)
    tid = blk.tx
    my_sum = _first_add(blk, g_idata, n, BLOCK)
    blk.store(sdata, tid, my_sum)
    blk.sync()
    s = blk.bdx // 2
    while s > 32:
        m = blk.branch(tid < s)
        my_sum = np.where(m, my_sum + blk.load(sdata, tid + s, mask=m), my_sum)
        blk.store(sdata, tid, my_sum, mask=m)
        blk.sync()
        s >>= 1
    _last_warp(blk, sdata, my_sum, BLOCK, g_odata)


def _unrolled(blk, sdata, my_sum, block_size):
    """reduce5–6: the shared steps unrolled on the template blockSize; each step's barrier
    stays even where ``blockSize >= 512`` is false at compile time."""
    tid = blk.tx
    for width in (256, 128, 64):
        if block_size >= 2 * width:  # compile-time part of "(blockSize >= 512) && (tid < 256)"
            m = blk.branch(tid < width)
            my_sum = np.where(m, my_sum + blk.load(sdata, tid + width, mask=m), my_sum)
            blk.store(sdata, tid, my_sum, mask=m)
        blk.sync()
    return my_sum


def reduce5(blk, g_idata, g_odata, n):
    """``reduce5<int, 256>``: the unrolled version of reduce4."""
    sdata = _sdata(blk)
    my_sum = _first_add(blk, g_idata, n, BLOCK)
    blk.store(sdata, blk.tx, my_sum)
    blk.sync()
    _last_warp(blk, sdata, _unrolled(blk, sdata, my_sum, BLOCK), BLOCK, g_odata)


def reduce6(blk, g_idata, g_odata, n):
    """``reduce6<int, 256, nIsPow2=false>``: each thread first sums a grid-stride loop
    (``while (i < n) { mySum += g_idata[i]; i += gridSize; }``), then as reduce5."""
    sdata = _sdata(blk)
    grid_size = BLOCK * blk.gdx
    my_sum = np.zeros((blk.nblocks, blk.nthreads), np.int32)
    i = (blk.bx * BLOCK + blk.tx).astype(np.uint32)  # unsigned int i, as the source declares it
    live = blk.branch(i < n)
    while live.any():
        my_sum += blk.load(g_idata, i, mask=live)
        i += grid_size  # in place, as the source writes it
        live &= blk.branch(i < n, mask=live)
    blk.store(sdata, blk.tx, my_sum)
    blk.sync()
    _last_warp(blk, sdata, _unrolled(blk, sdata, my_sum, BLOCK), BLOCK, g_odata)


def _block_sums(x, per_block, blocks):
    return np.pad(x, (0, per_block * blocks - x.size)).reshape(blocks, per_block).sum(axis=1)


def _ints(n, seed):
    return rng(seed).integers(-1000, 1000, n).astype(np.int32)


def test_reduce0(both):
    n = 1000
    x = _ints(n, 10)
    r = both(reduce0, 4, BLOCK, (x, np.zeros(4, np.int32), n), shared_bytes=BLOCK * 4)
    np.testing.assert_array_equal(r.args[1], _block_sums(x, 256, 4))
    # Per block: steps s = 1…128 (8), each with a branch in all 8 warps and a barrier.
    # A warp diverges when tid % 2s == 0 splits it: every warp for s ≤ 16 (5·8 = 40), then
    # warps 0,2,4,6 (s = 32), 0,4 (s = 64), 0 (s = 128): 47 a block; tid == 0: 1 more.
    # Warps with an active lane, so the shared accesses issue: 5·8 + 4 + 2 + 1 = 47 a block,
    # three accesses each (load tid, load tid + s, store tid); active words are ≥ 2 apart
    # and in distinct banks: 1 wavefront each. Shared per block: 8 stores + 3·47 + 1 load
    # of sdata[0] = 150 requests, 150 wavefronts.
    expect(r.t, requests=32 + 4, sectors=125 + 4, branches=4 * (8 * 8 + 8), divergent_branches=4 * 48,
           barriers=4 * 9, shared_requests=4 * 150, shared_wavefronts=4 * 150, shared_bank_conflicts=0)
    assert r.stats.races == []


def test_reduce1(both):
    n = 1000
    x = _ints(n, 11)
    r = both(reduce1, 4, BLOCK, (x, np.zeros(4, np.int32), n), shared_bytes=BLOCK * 4)
    np.testing.assert_array_equal(r.args[1], _block_sums(x, 256, 4))
    # Step s: threads tid < 128/s are active: 4, 2, 1 full warps (s = 1, 2, 4), then part of
    # warp 0 (s = 8…128: 16, 8, 4, 2, 1 lanes): 12 warp steps a block, 5 divergent.
    # sdata[2·s·tid] (and + s): lanes 2s words apart share banks. Wavefronts per access:
    # s=1: 16 banks × 2 words = 2 (4 warps), s=2: 4 (2 warps), s=4: 8, s=8: 16 lanes on
    # banks 0/16 → 8, s=16: 8 lanes on bank 0 → 8, s=32: 4, s=64: 2, s=128: 1;
    # 8+8+8+8+8+4+2+1 = 47 a block per access, ideal 1 per warp step (12).
    # Per block: 8 stores + 3·47 + 1 = 150 wavefronts; ideal 8 + 3·12 + 1 = 45; requests 45.
    expect(r.t, requests=36, sectors=129, branches=4 * 72, divergent_branches=4 * 6, barriers=36,
           shared_requests=4 * 45, shared_wavefronts=4 * 150, shared_ideal_wavefronts=4 * 45,
           shared_bank_conflicts=4 * 105)
    assert r.stats.races == []


def test_reduce2(both):
    n = 1000
    x = _ints(n, 12)
    r = both(reduce2, 4, BLOCK, (x, np.zeros(4, np.int32), n), shared_bytes=BLOCK * 4)
    np.testing.assert_array_equal(r.args[1], _block_sums(x, 256, 4))
    # tid < s: warps 0–3 (s = 128), 0–1 (64), 0 (32), then part of warp 0 for s = 16…1:
    # 12 warp steps, 5 divergent, all conflict-free. Shared per block: 8 + 3·12 + 1 = 45.
    expect(r.t, requests=36, sectors=129, branches=4 * 72, divergent_branches=4 * 6, barriers=36,
           shared_requests=4 * 45, shared_wavefronts=4 * 45, shared_bank_conflicts=0)
    assert r.stats.races == []


# reduce3–6 each thread loads two elements: n = 2000 on 4 blocks of 256 covers 512 each;
# block 3's second half (1792…2047) has 208 valid elements: warps 0–5 full, warp 6 with 16
# lanes (2 sectors), warp 7 none. First loads: 32 requests, 128 sectors; second loads:
# 31 requests, 3·32 + 6·4 + 2 = 122 sectors; the branch before them diverges once.

def test_reduce3(both):
    n = 2000
    x = _ints(n, 13)
    r = both(reduce3, 4, BLOCK, (x, np.zeros(4, np.int32), n), shared_bytes=BLOCK * 4)
    np.testing.assert_array_equal(r.args[1], _block_sums(x, 512, 4))
    # Shared per block: 8 stores + 12 warp steps × (load tid + s, store tid) = 32, no conflict.
    # Branches: 32 (second load) + 8 steps · 32 warps + 32 (tid == 0); divergent 1 + 4·5 + 4.
    expect(r.t, requests=32 + 31 + 4, sectors=128 + 122 + 4, branches=32 + 256 + 32, divergent_branches=25,
           barriers=4 * 9, shared_requests=4 * 32, shared_wavefronts=4 * 32, shared_bank_conflicts=0)
    assert r.stats.races == []


def test_reduce4(both):
    n = 2000
    x = _ints(n, 14)
    r = both(reduce4, 4, BLOCK, (x, np.zeros(4, np.int32), n), shared_bytes=BLOCK * 4)
    np.testing.assert_array_equal(r.args[1], _block_sums(x, 512, 4))
    # Shared steps s = 128, 64 only (4 + 2 warp steps, 2 accesses each), then warp 0 reads
    # sdata[tid + 32]: per block 8 + 12 + 1 = 21 requests, 1 wavefront each. Barriers:
    # 1 + 2 a block. Warp 0 shuffles 5 times (offsets 16…1). Branches: 32 + 2·32 (steps)
    # + 32 (tid < 32: warp-uniform) + 32 (tid == 0); divergent: 1 + 4 (tid == 0 in warp 0).
    expect(r.t, requests=67, sectors=254, branches=160, divergent_branches=5, barriers=12, shuffles=20,
           shared_requests=4 * 21, shared_wavefronts=4 * 21, shared_bank_conflicts=0)
    assert r.stats.races == []


def test_reduce5(both):
    n = 2000
    x = _ints(n, 15)
    r = both(reduce5, 4, BLOCK, (x, np.zeros(4, np.int32), n), shared_bytes=BLOCK * 4)
    np.testing.assert_array_equal(r.args[1], _block_sums(x, 512, 4))
    # As reduce4, but three unrolled steps each end in a barrier (the 512 step's body is
    # compiled away, its barrier is not): 1 + 3 = 4 barriers a block.
    expect(r.t, requests=67, sectors=254, branches=160, divergent_branches=5, barriers=16, shuffles=20,
           shared_requests=4 * 21, shared_wavefronts=4 * 21, shared_bank_conflicts=0)
    assert r.stats.races == []


def test_reduce6_grid_stride(both):
    # n = 1000 (not a power of 2: the sample's nIsPow2 = false path), 2 blocks of 256:
    # gridSize = 512, thread g = 0…511 sums x[g] and, if g < 488, x[g + 512].
    n = 1000
    x = _ints(n, 16)
    r = both(reduce6, 2, BLOCK, (x, np.zeros(2, np.int32), n), shared_bytes=BLOCK * 4)
    expected = np.zeros(512, np.int64)
    np.add.at(expected, np.arange(n) % 512, x)
    np.testing.assert_array_equal(r.args[1], expected.reshape(2, 256).sum(axis=1))
    # Loop tests: trip 1, 16 warps all true; trip 2, 16 warps, block 1 warp 7 (g = 480…511)
    # has 8 true lanes: divergent; trip 3, the 16 warps still in the loop, all false.
    # Loads: 16 full warps (64 sectors), then 15 full + 8 lanes (61 sectors): 125 sectors.
    # Tail per block: shared 8 + 2·(4 + 2) + 1 = 21, barriers 1 + 3; branches 2·8 (steps)
    # + 8 + 8; divergent: tid == 0 once a block.
    expect(r.t, requests=32 + 2, sectors=125 + 2, branches=48 + 2 * 32, divergent_branches=1 + 2,
           barriers=8, shuffles=10, shared_requests=42, shared_wavefronts=42)
    assert r.stats.races == []


# -- Samples/2_Concepts_and_Techniques/shfl_scan/shfl_scan.cu --------------------------------

def shfl_scan_test(blk, data, width, partial_sums):
    """``shfl_scan_test``: an inclusive scan of each block with ``__shfl_up_sync``: per warp,
    then the warp sums in ``extern __shared__ int sums[]``, scanned by warp 0."""
    sums = blk.shared(blk.bdx // 32, np.int32, name="sums", dynamic=True)
    idx = blk.bx * blk.bdx + blk.tx
    lane_id = idx % 32
    warp_id = blk.tx // 32
    value = blk.load(data, idx)
    i = 1
    while i <= width:
        n = blk.shfl_up(value, i)
        up = blk.branch(lane_id >= i)  # if (lane_id >= i) value += n
        value = np.where(up, value + n, value)
        i *= 2
    last = blk.branch(blk.tx % 32 == 31)
    blk.store(sums, warp_id, value, mask=last)
    blk.sync()
    warps = blk.bdx // 32
    w0 = blk.branch((warp_id == 0) & (lane_id < warps))
    warp_sum = blk.load(sums, lane_id, mask=w0)
    i = 1
    while i <= warps:
        n = blk.shfl_up(warp_sum, i, mask=w0)  # mask = (1 << warps) - 1
        up = blk.branch(lane_id >= i, mask=w0)
        warp_sum = np.where(up, warp_sum + n, warp_sum)
        i *= 2
    blk.store(sums, lane_id, warp_sum, mask=w0)
    blk.sync()
    later = blk.branch(warp_id > 0)
    value = value + blk.load(sums, warp_id - 1, mask=later)  # blockSum = 0 where warp_id == 0
    blk.store(data, idx, value)
    last_thread = blk.branch(blk.tx == blk.bdx - 1)
    blk.store(partial_sums, blk.bx, value, mask=last_thread)


def test_shfl_scan(both):
    # The sample's launch: 256 threads, width 32; 4 blocks over 1024 ints.
    n = 1024
    x = _ints(n, 20)
    r = both(shfl_scan_test, 4, 256, (x, 32, np.zeros(4, np.int32)), shared_bytes=8 * 4)
    blocks = x.reshape(4, 256).astype(np.int64)
    np.testing.assert_array_equal(r.args[0], np.cumsum(blocks, axis=1).ravel())
    np.testing.assert_array_equal(r.args[2], blocks.sum(axis=1))
    # Per block: warp scans i = 1, 2, 4, 8, 16, 32 (i <= width): 6 shuffles and 6 branches
    # a warp, divergent for i ≤ 16 (5); lane 31 writes the warp sum: 8 branches, all
    # divergent, 8 one-lane stores. Warp 0 (lanes 0–7): 1 branch (divergent), a load,
    # i = 1, 2, 4, 8: 4 shuffles, 4 branches (3 divergent: lane 0…i−1 keep), a store.
    # warp_id > 0: 8 branches, 7 loads (a broadcast). Last thread: 8 branches, 1 divergent.
    # Shared: 8 + 1 + 1 + 7 = 17 requests a block, 1 wavefront each. Global: 32 loads,
    # 32 stores of 4 sectors, 4 one-sector stores.
    expect(r.t, requests=32 + 32 + 4, sectors=128 + 128 + 4, shuffles=4 * 52,
           branches=4 * (48 + 8 + 1 * 8 + 4 + 8 + 8), divergent_branches=4 * (40 + 8 + 1 + 3 + 0 + 1),
           barriers=8, shared_requests=4 * 17, shared_wavefronts=4 * 17)
    assert r.stats.races == []


# -- Samples/6_Performance/transpose/transpose.cu (TILE_DIM 32, BLOCK_ROWS 16) -----------------

TILE_DIM, BLOCK_ROWS = 32, 16


def transposeNaive(blk, odata, idata, width, height):
    """``transposeNaive``: reads rows, writes columns (``odata[index_out + i] = idata[index_in + i*width]``)."""
    x = blk.bx * TILE_DIM + blk.tx
    y = blk.by * TILE_DIM + blk.ty
    index_in = x + width * y
    index_out = y + height * x
    for i in range(0, TILE_DIM, BLOCK_ROWS):
        blk.store(odata, index_out + i, blk.load(idata, index_in + i * width))


def _tiled(blk, odata, idata, width, height, tile, bx, by):
    x = bx * TILE_DIM + blk.tx
    y = by * TILE_DIM + blk.ty
    index_in = x + y * width
    x = by * TILE_DIM + blk.tx
    y = bx * TILE_DIM + blk.ty
    index_out = x + y * height
    for i in range(0, TILE_DIM, BLOCK_ROWS):
        blk.store(tile, (blk.ty + i, blk.tx), blk.load(idata, index_in + i * width))
    blk.sync()
    for i in range(0, TILE_DIM, BLOCK_ROWS):
        blk.store(odata, index_out + i * height, blk.load(tile, (blk.tx, blk.ty + i)))


def transposeCoalesced(blk, odata, idata, width, height):
    """``transposeCoalesced``: through a ``tile[TILE_DIM][TILE_DIM]`` in shared memory."""
    _tiled(blk, odata, idata, width, height, blk.shared((TILE_DIM, TILE_DIM), np.float32, name="tile"), blk.bx, blk.by)


def transposeNoBankConflicts(blk, odata, idata, width, height):
    """``transposeNoBankConflicts``: the tile padded to ``[TILE_DIM][TILE_DIM + 1]``."""
    _tiled(blk, odata, idata, width, height, blk.shared((TILE_DIM, TILE_DIM + 1), np.float32, name="tile"),
           blk.bx, blk.by)


def transposeDiagonal(blk, odata, idata, width, height):
    """``transposeDiagonal``: the padded tile, with blocks renumbered along diagonals
    (square case: ``blockIdx_y = blockIdx.x; blockIdx_x = (blockIdx.x + blockIdx.y) % gridDim.x``)."""
    assert width == height  # the sample's other branch handles rectangles
    by = blk.bx
    bx = (blk.bx + blk.by) % blk.gdx
    _tiled(blk, odata, idata, width, height, blk.shared((TILE_DIM, TILE_DIM + 1), np.float32, name="tile"), bx, by)


@pytest.mark.parametrize("kernel, load_wavefronts", [
    # tile[tx][ty + i]: 32 lanes, words 32·tx + c, all in one bank: 32 wavefronts.
    (transposeCoalesced, 32),
    # padded: words 33·tx + c, banks (tx + c) % 32 all distinct: 1 wavefront.
    (transposeNoBankConflicts, 1),
    (transposeDiagonal, 1),
])
def test_transpose_tiled(both, fast, kernel, load_wavefronts):
    W = 64
    a = rng(30).random((W, W), dtype=np.float32)
    r = both(kernel, (2, 2), (TILE_DIM, BLOCK_ROWS), (np.zeros((W, W), np.float32), a, W, W))
    np.testing.assert_array_equal(r.args[0], a.T)
    # Block 32×16 = 16 warps, one row each; 2 rounds in, 2 out. Global: every request is
    # 32 consecutive floats (4 sectors): 4 blocks × 64 requests = 256, 1,024 sectors.
    # Shared: 32 stores (1 wavefront) and 32 loads (load_wavefronts) a block; one barrier.
    expect(r.t, requests=256, sectors=1024, barriers=4, shared_requests=256,
           shared_wavefronts=4 * (32 + 32 * load_wavefronts), shared_ideal_wavefronts=256,
           shared_bank_conflicts=4 * 32 * (load_wavefronts - 1))
    assert r.stats.races == []
    W = 512
    a = rng(31).random((W, W), dtype=np.float32)
    r = fast(kernel, (16, 16), (TILE_DIM, BLOCK_ROWS), (np.zeros((W, W), np.float32), a, W, W))
    np.testing.assert_array_equal(r.args[0], a.T)
    # 256 blocks, W·W / 32 = 8,192 warp rows each way; wavefronts per warp load as above.
    expect(r.t, requests=2 * 8192, sectors=2 * 8192 * 4, shared_wavefronts=8192 * (1 + load_wavefronts))


def test_transposeNaive(both, fast):
    W = 64
    a = rng(32).random((W, W), dtype=np.float32)
    r = both(transposeNaive, (2, 2), (TILE_DIM, BLOCK_ROWS), (np.zeros((W, W), np.float32), a, W, W))
    np.testing.assert_array_equal(r.args[0], a.T)
    # Loads: a row of 32 floats, 4 sectors. Stores: 32 lanes 64 floats (256 B) apart, 32
    # sectors. 4 blocks × 16 warps × 2 rounds = 128 requests each way.
    expect(r.t, requests=256, sectors=128 * 4 + 128 * 32, shared_requests=0)
    W = 512
    a = rng(33).random((W, W), dtype=np.float32)
    r = fast(transposeNaive, (16, 16), (TILE_DIM, BLOCK_ROWS), (np.zeros((W, W), np.float32), a, W, W))
    np.testing.assert_array_equal(r.args[0], a.T)
    expect(r.t, requests=2 * 8192, sectors=8192 * (4 + 32))


# -- Samples/0_Introduction/matrixMul/matrixMul.cu (MatrixMulCUDA<16>) -------------------------

def MatrixMulCUDA16(blk, C, A, B, wA, wB):
    """``MatrixMulCUDA<BLOCK_SIZE = 16>``: tiles of A and B through shared memory."""
    S = 16
    tx, ty = blk.tx, blk.ty
    a_begin = wA * S * blk.by
    a_end = a_begin + wA - 1
    b = S * blk.bx
    c_sub = np.zeros((blk.nblocks, blk.nthreads), np.float32)
    a = a_begin
    # a <= aEnd is the same for every thread of a block (and here of the grid): a Python loop
    while np.all(a <= a_end):
        As = blk.shared((S, S), np.float32, name="As")
        Bs = blk.shared((S, S), np.float32, name="Bs")
        blk.store(As, (ty, tx), blk.load(A, a + wA * ty + tx))
        blk.store(Bs, (ty, tx), blk.load(B, b + wB * ty + tx))
        blk.sync()
        for k in range(S):
            c_sub = c_sub + blk.load(As, (ty, 0 * tx + k)) * blk.load(Bs, (0 * ty + k, tx))
        blk.sync()
        a = a + S
        b = b + S * wB
    c = wB * S * blk.by + S * blk.bx
    blk.store(C, c + wB * ty + tx, c_sub)


def test_matrixMul(both):
    # A 32×32, B 32×32 (wA = wB = 32): grid (2, 2) of 16×16 blocks, 2 tiles along k.
    hA, wA, wB = 32, 32, 32
    A = rng(40).random((hA, wA), dtype=np.float32)
    B = rng(41).random((wA, wB), dtype=np.float32)
    r = both(MatrixMulCUDA16, (2, 2), (16, 16), (np.zeros((hA, wB), np.float32), A, B, wA, wB))
    np.testing.assert_allclose(r.args[0], A @ B, rtol=1e-5)  # float32 sums of 32 products
    # A 16×16 block is 8 warps of two 16-float rows (64 B each, 64-B aligned): 4 sectors
    # a request. Per block and tile: 8 loads of A, 8 of B; then C: 8 stores.
    # Shared per tile: 16 stores (1 wavefront: 32 consecutive words) and 16 k × 2 × 8 = 256
    # loads: As[ty][k] is 2 words (banks k and 16 + k), Bs[k][tx] 16 distinct banks: 1 each.
    expect(r.t, requests=4 * (2 * 16 + 8), sectors=4 * (2 * 64 + 32), barriers=4 * 4,
           shared_requests=4 * 2 * (16 + 256), shared_wavefronts=4 * 2 * (16 + 256), shared_bank_conflicts=0)
    assert r.stats.races == []


# -- Samples/0_Introduction/simpleAtomicIntrinsics/simpleAtomicIntrinsics_kernel.cuh ---------

def atomics_testKernel(blk, g_odata):
    """``testKernel`` of simpleAtomicIntrinsics, the atomics the ``blk`` API has: atomicAdd,
    atomicSub (an add of −10), atomicExch, atomicMax, atomicMin and atomicCAS, every thread
    on the same word of each. (atomicInc/Dec/And/Or/Xor have no ``blk`` counterpart.)"""
    tid = (blk.bdx * blk.bx + blk.tx).astype(np.int32)
    one = 0 * tid
    blk.atomic_add(g_odata, one + 0, 10 + one)
    blk.atomic_add(g_odata, one + 1, -10 + one)
    blk.atomic_exch(g_odata, one + 2, tid)
    blk.atomic_max(g_odata, one + 3, tid)
    blk.atomic_min(g_odata, one + 4, tid)
    blk.atomic_cas(g_odata, one + 7, tid - 1, tid)


def test_simpleAtomicIntrinsics(both):
    # 4 blocks of 256 (the sample runs 64 of 256; see the fast run below): N = 1,024 threads.
    N = 1024
    init = rng(50).integers(-500, 500, 11).astype(np.int32)
    init[7] = 0  # atomicCAS(&g[7], tid − 1, tid) from 0: thread 1 starts the chain
    r = both(atomics_testKernel, 4, 256, (init,))
    g = r.args[0]
    assert g[0] == init[0] + 10 * N and g[1] == init[1] - 10 * N
    assert g[3] == max(init[3], N - 1) and g[4] == min(init[4], 0)
    # Exchange and CAS depend on the order lanes are served; the engines serve blocks, warps
    # and lanes in order, so the last exchange is thread N − 1 and the CAS chain 1, 2, …
    # climbs to N − 1.
    assert g[2] == N - 1 and g[7] == N - 1
    assert list(g[[5, 6, 8, 9, 10]]) == list(init[[5, 6, 8, 9, 10]])
    # 6 atomics × 32 warps: 192 requests, 1 sector each (one word), 31 conflicting lanes each.
    expect(r.t, atomics=192, atomic_conflicts=192 * 31, requests=192, sectors=192)


def test_simpleAtomicIntrinsics_sample_size(fast):
    # The sample's launch: 64 blocks of 256 threads, 16,384 threads, 512 warps.
    N = 64 * 256
    r = fast(atomics_testKernel, 64, 256, (np.zeros(11, np.int32),))
    assert list(r.args[0][:5]) == [10 * N, -10 * N, N - 1, N - 1, 0] and r.args[0][7] == N - 1
    expect(r.t, atomics=6 * 512, atomic_conflicts=6 * 512 * 31, requests=6 * 512, sectors=6 * 512)


# -- Samples/2_Concepts_and_Techniques/histogram/histogram256.cu ------------------------------

WARP_COUNT, BINS = 6, 256
HIST_THREADS = WARP_COUNT * 32  # HISTOGRAM256_THREADBLOCK_SIZE = 192


def histogram256Kernel(blk, d_PartialHistograms, d_Data, dataCount):
    """``histogram256Kernel``: one 256-bin sub-histogram per warp in shared memory, fed by
    ``atomicAdd`` on shared memory for each of the 4 bytes of a word; then each block sums its
    warps' sub-histograms into one partial histogram in global memory."""
    s_Hist = blk.shared(WARP_COUNT * BINS, np.uint32, name="s_Hist")
    warp_base = (blk.tx >> 5) * BINS  # s_WarpHist = s_Hist + (threadIdx.x >> LOG2_WARP_SIZE) * BIN_COUNT
    for i in range(WARP_COUNT * BINS // HIST_THREADS):
        blk.store(s_Hist, blk.tx + i * HIST_THREADS, 0)
    blk.sync()
    pos = (blk.bx * blk.bdx + blk.tx).astype(np.uint32)
    live = blk.branch(pos < dataCount)
    while live.any():
        data = blk.load(d_Data, pos, mask=live)
        for shift in (0, 8, 16, 24):  # addWord: addByte for each byte
            blk.atomic_add(s_Hist, warp_base + ((data >> shift) & 0xFF), 1, mask=live)
        pos = pos + blk.bdx * blk.gdx
        live = blk.branch(pos < dataCount, mask=live)
    blk.sync()
    bin_ = blk.tx
    live = blk.branch(bin_ < BINS)
    while live.any():
        total = np.zeros((blk.nblocks, blk.nthreads), np.uint32)
        for i in range(WARP_COUNT):
            total = total + blk.load(s_Hist, bin_ + i * BINS, mask=live)
        blk.store(d_PartialHistograms, blk.bx * BINS + bin_, total, mask=live)
        bin_ = bin_ + HIST_THREADS
        live = blk.branch(bin_ < BINS, mask=live)


def test_histogram256(both):
    # 1,000 words (4,000 bytes, a uint8 image viewed as uint32 as the sample's d_Data is)
    # on 2 blocks of 192 threads: a grid stride of 384 words.
    n = 1000
    image = rng(60).integers(0, 256, 4 * n, dtype=np.uint8)
    words = image.view(np.uint32)
    r = both(histogram256Kernel, 2, HIST_THREADS, (np.zeros(2 * BINS, np.uint32), words, n))
    np.testing.assert_array_equal(r.args[0].reshape(2, BINS).sum(axis=0), np.bincount(image, minlength=BINS))
    # Trips: words 0–383, 384–767, 768–999 (block 0: 6 full warps; block 1: warp 0 full,
    # warp 1 with 8 lanes). Loop tests: 12 + 12 + 12 (1 divergent) + 8 (all false).
    # Loads: 24 full warps + 7 full + 1 of 8 lanes: 32 requests, 31·4 + 1 = 125 sectors.
    # Shared atomics: 32 warp trips × 4 bytes = 128. Init: 8 stores × 6 warps a block.
    # Merge: bin = tid (6 warps), bin = tid + 192 < 256 (warps 0, 1): 8 warp trips × 6 loads,
    # 8 stores of 32 uints (4 sectors); tests 6 + 6 + 2, no divergence.
    # Atomic conflicts and wavefronts depend on the bytes: derived here from the data, per
    # warp atomic: lanes − distinct bins; wavefronts = the most distinct bins in one bank
    # (bin b of warp w is word 256w + b, bank b % 32).
    conflicts = wavefronts = 0
    for b in range(2):
        for trip in range(3):
            for w in range(WARP_COUNT):
                pos = trip * 384 + b * 192 + w * 32 + np.arange(32)
                pos = pos[pos < n]
                if pos.size == 0:
                    continue
                for k in range(4):
                    bins = image[4 * pos + k]  # byte k of a little-endian word
                    distinct = np.unique(bins)
                    conflicts += bins.size - distinct.size
                    wavefronts += np.bincount(distinct % 32).max()
    expect(r.t, requests=32 + 16, sectors=125 + 64, atomics=128, atomic_conflicts=conflicts,
           shared_requests=96 + 128 + 96, shared_wavefronts=96 + wavefronts + 96, barriers=4,
           branches=44 + 28, divergent_branches=1)
    assert r.stats.races == []


# -- Samples/2_Concepts_and_Techniques/convolutionSeparable/convolutionSeparable.cu -------------

KERNEL_RADIUS = 8
ROWS_X, ROWS_Y, ROWS_STEPS, ROWS_HALO = 16, 4, 8, 1


def convolutionRowsKernel(blk, d_Dst, d_Src, imageW, imageH, pitch, c_Kernel):
    """``convolutionRowsKernel``: 16×4 threads load 8 result steps and one halo step on
    each side of a row segment into ``s_Data[4][160]``, then each computes 8 outputs of the
    17-tap filter (``c_Kernel``, a ``__constant__`` array: Python constants here)."""
    s_Data = blk.shared((ROWS_Y, (ROWS_STEPS + 2 * ROWS_HALO) * ROWS_X), np.float32, name="s_Data")
    baseX = (blk.bx * ROWS_STEPS - ROWS_HALO) * ROWS_X + blk.tx
    baseY = blk.by * ROWS_Y + blk.ty
    base = baseY * pitch + baseX  # d_Src += baseY * pitch + baseX
    for i in range(ROWS_HALO, ROWS_HALO + ROWS_STEPS):
        blk.store(s_Data, (blk.ty, blk.tx + i * ROWS_X), blk.load(d_Src, base + i * ROWS_X))
    for i in range(ROWS_HALO):  # left halo: (baseX >= -i * ROWS_BLOCKDIM_X) ? d_Src[i * ROWS_BLOCKDIM_X] : 0
        ok = baseX >= -i * ROWS_X
        blk.store(s_Data, (blk.ty, blk.tx + i * ROWS_X), np.where(ok, blk.load(d_Src, base + i * ROWS_X, mask=ok), 0))
    for i in range(ROWS_HALO + ROWS_STEPS, ROWS_HALO + ROWS_STEPS + ROWS_HALO):  # right halo
        ok = imageW - baseX > i * ROWS_X
        blk.store(s_Data, (blk.ty, blk.tx + i * ROWS_X), np.where(ok, blk.load(d_Src, base + i * ROWS_X, mask=ok), 0))
    blk.sync()
    for i in range(ROWS_HALO, ROWS_HALO + ROWS_STEPS):
        total = np.float32(0)
        for j in range(-KERNEL_RADIUS, KERNEL_RADIUS + 1):
            total = total + c_Kernel[KERNEL_RADIUS - j] * blk.load(s_Data, (blk.ty, blk.tx + i * ROWS_X + j))
        blk.store(d_Dst, base + i * ROWS_X, total)


def _rows_gold(src, k):
    H, W = src.shape
    padded = np.pad(src.astype(np.float64), ((0, 0), (KERNEL_RADIUS, KERNEL_RADIUS)))
    out = np.zeros((H, W))
    for j in range(-KERNEL_RADIUS, KERNEL_RADIUS + 1):
        out += k[KERNEL_RADIUS - j] * padded[:, KERNEL_RADIUS + j:KERNEL_RADIUS + j + W]
    return out


def test_convolutionRows(both):
    # imageW = 256 (2 blocks of 8·16 = 128 columns), imageH = 8 (2 blocks of 4 rows).
    W, H = 256, 8
    src = rng(70).random((H, W), dtype=np.float32)
    k = rng(71).random(2 * KERNEL_RADIUS + 1).astype(np.float32)
    r = both(convolutionRowsKernel, (2, 2), (ROWS_X, ROWS_Y), (np.zeros((H, W), np.float32), src, W, H, W, k))
    np.testing.assert_allclose(r.args[0], _rows_gold(src, k), rtol=1e-5)  # 17 float32 products
    # A block is 2 warps, each two rows (ty = 2w, 2w + 1) of 16 floats, 64-B aligned: 4
    # sectors a request. Per block: 8 main loads a warp; of the halos only one side lies
    # inside the image (block x = 0: the right one; x = 1: the left one): 1 more a warp;
    # 8 stores a warp. → 2·(8 + 1 + 8) = 34 requests, 136 sectors a block.
    # s_Data rows are 160 words = 5·32: rows ty and ty + 1 fall on the same 16 banks, so
    # every shared access of a warp takes 2 wavefronts where 1 would do: stores 10 a warp,
    # loads 8 × 17 = 136 a warp.
    expect(r.t, requests=4 * 34, sectors=4 * 136, barriers=4, shared_requests=4 * 2 * (10 + 136),
           shared_wavefronts=4 * 2 * 2 * (10 + 136), shared_bank_conflicts=4 * 2 * (10 + 136))
    assert r.stats.races == []


# -- Samples/0_Introduction/simpleVoteIntrinsics/simpleVote_kernel.cuh --------------------------

def VoteAnyKernel1(blk, input_, result, size):
    """``VoteAnyKernel1``: ``result[tx] = __any_sync(mask, input[tx])``."""
    tx = blk.tx
    blk.store(result, tx, blk.any(blk.load(input_, tx) != 0))


def VoteAllKernel2(blk, input_, result, size):
    """``VoteAllKernel2``: ``result[tx] = __all_sync(mask, input[tx])``."""
    tx = blk.tx
    blk.store(result, tx, blk.all(blk.load(input_, tx) != 0))


def VoteAnyKernel3(blk, info, warp_size):
    """``VoteAnyKernel3``: three bools per thread (``bool *offs = info + (tx * 3)``): any and
    all of ``tx >= warp_size * 3 / 2`` over each warp, and the predicate itself."""
    tx = blk.tx
    offs = tx * 3
    pred = tx >= (warp_size * 3) // 2
    blk.store(info, offs, blk.any(pred))
    blk.store(info, offs + 1, pred)
    every = blk.branch(blk.all(pred))  # if (__all_sync(mask, …)) *(offs + 2) = true
    blk.store(info, offs + 2, True, mask=every)


def _vote_pattern():
    # 4 warps (VOTE_DATA_GROUP = 4, one block of 128 threads, as the sample launches):
    # warp 0 all zero, warp 1 random, warp 2 all non-zero, warp 3 one non-zero lane.
    g = rng(80)
    x = np.zeros(128, np.uint32)
    x[32:64] = g.integers(0, 2, 32)
    x[64:96] = g.integers(1, 1000, 32)
    x[96 + g.integers(0, 32)] = g.integers(1, 1000)
    return x


@pytest.mark.parametrize("kernel, vote", [(VoteAnyKernel1, np.any), (VoteAllKernel2, np.all)])
def test_simpleVote_any_all(both, kernel, vote):
    x = _vote_pattern()
    r = both(kernel, 1, 128, (x, np.zeros(128, np.uint32), 128))
    np.testing.assert_array_equal(r.args[1], np.repeat([vote(w != 0) for w in x.reshape(4, 32)], 32))
    # 4 warps: a load and a store of 32 uints each (4 sectors), one vote.
    expect(r.t, votes=4, requests=8, sectors=32)


def test_simpleVote_kernel3(both):
    r = both(VoteAnyKernel3, 1, 96, (np.zeros(96 * 3, np.bool_), 32))
    info = r.args[0].reshape(96, 3)
    t = np.arange(96)
    np.testing.assert_array_equal(info[:, 0], t >= 32)  # warps 1 and 2 have a thread ≥ 48
    np.testing.assert_array_equal(info[:, 1], t >= 48)
    np.testing.assert_array_equal(info[:, 2], t >= 64)  # only warp 2 is all ≥ 48
    # 3 warps × 2 votes; the if on __all_sync is uniform in each warp (no divergence).
    # Byte stores 3 apart: a warp's 32 bools span bytes 96w…96w + 95, 3 sectors; 3 stores
    # in every warp, the third only in warp 2: 7 requests, 21 sectors.
    expect(r.t, votes=6, branches=3, divergent_branches=0, requests=7, sectors=21)


# -- Samples/5_Domain_Specific/SobelFilter/SobelFilter_kernels.cu --------------------------------

def SobelTex(blk, pSobel, img, w, h, fScale):
    """``SobelTex``: one block per image row, threads stride across it
    (``for (int i = threadIdx.x; i < w; i += blockDim.x)``), ``ComputeSobel`` on the 3 × 3
    neighbourhood of unsigned chars. The sample reads a point-filtered texture with
    unnormalised coordinates (clamped at the edges); here the same pixels are global loads
    with clamped coordinates (the simulator has no texture cache).

    ``ComputeSobel`` writes ``short Horz = ur + 2 * mr + lr - ul - 2 * ml - ll;`` with
    unsigned char operands: C promotes them to int before the arithmetic, so this rewrite,
    like a reader's, writes the same expression on the loaded values."""
    row = blk.bx
    i = blk.tx.astype(np.int32)
    live = blk.branch(i < w)
    while live.any():
        def pix(dx, dy):
            return blk.load(img, (np.clip(row + dy, 0, h - 1) + 0 * i, np.clip(i + dx, 0, w - 1)), mask=live)
        ul, um, ur = pix(-1, -1), pix(0, -1), pix(1, -1)
        ml, mm, mr = pix(-1, 0), pix(0, 0), pix(1, 0)  # mm: read, and unused by ComputeSobel
        ll, lm, lr = pix(-1, 1), pix(0, 1), pix(1, 1)
        horz = (ur + 2 * mr + lr - ul - 2 * ml - ll).astype(np.int16)
        vert = (ul + 2 * um + ur - ll - 2 * lm - lr).astype(np.int16)
        total = (fScale * (np.abs(horz.astype(np.int32)) + np.abs(vert.astype(np.int32)))).astype(np.int16)
        out = np.where(total < 0, 0, np.where(total > 0xFF, 0xFF, total)).astype(np.uint8)
        blk.store(pSobel, (row + 0 * i, i), out, mask=live)
        i += blk.bdx  # in place, as the source's i += blockDim.x
        live &= blk.branch(i < w, mask=live)


def _sobel_gold(img, scale):
    p = np.pad(img.astype(np.int32), 1, mode="edge")
    H, W = img.shape
    at = lambda dy, dx: p[1 + dy:1 + dy + H, 1 + dx:1 + dx + W]  # noqa: E731
    horz = at(-1, 1) + 2 * at(0, 1) + at(1, 1) - at(-1, -1) - 2 * at(0, -1) - at(1, -1)
    vert = at(-1, -1) + 2 * at(-1, 0) + at(-1, 1) - at(1, -1) - 2 * at(1, 0) - at(1, 1)
    return np.clip((scale * (np.abs(horz) + np.abs(vert))).astype(np.int32), 0, 255).astype(np.uint8)


def test_SobelTex_uint8(both):
    # SobelTex<<<ih, 384>>> as in the sample: a 4 × 500 uint8 image: 4 blocks of 384
    # threads (12 warps); trip 2 covers columns 384–499: warps 0–2 full, warp 3 20 lanes.
    h, w = 4, 500
    img = rng(90).integers(0, 256, (h, w), dtype=np.uint8)
    r = both(SobelTex, h, 384, (np.zeros((h, w), np.uint8), img, w, h, np.float32(1.0)))
    np.testing.assert_array_equal(r.args[0], _sobel_gold(img, 1.0))
    # (Before the engine promoted narrow loads to int, as C does, this result was wrong:
    # uint8 arithmetic wrapped mod 256.)
    # Loop tests: 12 warps (trip 1), 12 (trip 2: warp 3 divergent), 4 (trip 3, all false)
    # a block. Requests: 10 accesses (9 loads, 1 store) × 16 warp trips a block. Sectors:
    # rows of 500 B are not 32-B aligned, so they are counted from the byte addresses.
    sectors = 0
    for row in range(h):
        for first in list(range(0, 384, 32)) + list(range(384, w, 32)):
            cols = np.arange(first, min(first + 32, w))
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    at = np.clip(row + dy, 0, h - 1) * w + np.clip(cols + dx, 0, w - 1)
                    sectors += np.unique(at // 32).size
            sectors += np.unique((row * w + cols) // 32).size  # the store
    expect(r.t, branches=4 * 28, divergent_branches=4, requests=4 * 10 * 16, sectors=sectors)


# -- Samples/0_Introduction/fp16ScalarProduct/fp16ScalarProduct.cu -------------------------------

FP16_THREADS = 128  # NUM_OF_THREADS


def _reduce_in_shared(blk, v):
    """``reduceInShared_*``: ``if (threadIdx.x < 64) v[tx] = v[tx] + v[tx + 64]``, … 1, each
    step followed by ``__syncthreads()``; half2 elements are 2 float16 (a 4-byte access)."""
    tx = blk.tx
    for k in (64, 32, 16, 8, 4, 2, 1):
        m = blk.branch(tx < k)
        blk.store(v, 2 * tx, blk.load(v, 2 * tx, mask=m, width=2) + blk.load(v, 2 * (tx + k), mask=m, width=2),
                  mask=m, width=2)
        blk.sync()


def _scalar_product(blk, a, b, results, size, fused):
    stride = blk.gdx * blk.bdx
    sh = blk.shared(2 * FP16_THREADS, np.float16, name="shArray")  # __shared__ half2 shArray[NUM_OF_THREADS]
    value = np.zeros((blk.nblocks, blk.nthreads, 2), np.float16)
    blk.store(sh, 2 * blk.tx, value, width=2)
    # The source's start index: "threadIdx.x + blockDim.x + blockIdx.x" (a + where the usual
    # grid-stride loop has blockDim.x * blockIdx.x); kept as written.
    i = blk.tx + blk.bdx + blk.bx
    live = blk.branch(i < size)
    while live.any():
        x = blk.load(a, 2 * i, mask=live, width=2)
        y = blk.load(b, 2 * i, mask=live, width=2)
        if fused:  # __hfma2(a[i], b[i], value): one rounding
            new = (x.astype(np.float32) * y + value).astype(np.float16)
        else:  # a[i] * b[i] + value
            new = x * y + value
        value = np.where(live[..., None], new, value)
        i = i + stride
        live = blk.branch(i < size, mask=live)
    blk.store(sh, 2 * blk.tx, value, width=2)
    blk.sync()
    _reduce_in_shared(blk, sh)
    first = blk.branch(blk.tx == 0)
    result = blk.load(sh, 0 * blk.tx, mask=first, width=2)
    blk.store(results, blk.bx, result[..., 1].astype(np.float32) + result[..., 0].astype(np.float32), mask=first)


def scalarProductKernel_native(blk, a, b, results, size):
    """``scalarProductKernel_native``: half2 products summed with the half2 operators."""
    _scalar_product(blk, a, b, results, size, fused=False)


def scalarProductKernel_intrinsics(blk, a, b, results, size):
    """``scalarProductKernel_intrinsics``: the same with ``__hfma2`` and ``__hadd2``."""
    _scalar_product(blk, a, b, results, size, fused=True)


def _fp16_gold(a, b, blocks, threads, size):
    """What the kernels compute, in float16 as they do: per thread, the products from its
    (shifted) start; then the shared tree 64, 32, … 1; then low + high in float32."""
    out = []
    for bx in range(blocks):
        v = np.zeros((threads, 2), np.float16)
        for tx in range(threads):
            for i in range(tx + threads + bx, size, blocks * threads):
                v[tx] = a[i] * b[i] + v[tx]  # small integers: fused or not, exact
        for k in (64, 32, 16, 8, 4, 2, 1):
            v[:k] = v[:k] + v[k:2 * k]
        out.append(np.float32(v[0, 1]) + np.float32(v[0, 0]))
    return np.array(out, np.float32)


@pytest.mark.parametrize("kernel", [scalarProductKernel_native, scalarProductKernel_intrinsics])
def test_fp16ScalarProduct(both, kernel):
    # The sample: 128 blocks of 128 threads, size = blocks·threads·16 half2. Here 4 blocks,
    # size = 4·128·4 = 2,048 half2; inputs as the sample draws them: x in 0–3, y in 0–1.
    blocks, size = 4, 2048
    g = rng(95)
    a = np.stack([g.integers(0, 4, size), g.integers(0, 2, size)], axis=1).astype(np.float16)
    b = np.stack([g.integers(0, 4, size), g.integers(0, 2, size)], axis=1).astype(np.float16)
    r = both(kernel, blocks, FP16_THREADS, (a.ravel(), b.ravel(), np.zeros(blocks, np.float32), size))
    np.testing.assert_array_equal(r.args[2], _fp16_gold(a, b, blocks, FP16_THREADS, size))
    # The sample only compares its two kernels with each other; with the start index
    # tx + 128 + bx, no block reads half2 0–127 and blocks 1–3 re-read their neighbours'
    # ranges, so the total is not a·b:
    assert r.args[2].sum() != np.float32((a.astype(np.float64) * b).sum())
    # Thread starts 128 + bx + tx < 512: 4 trips (stride 512), 5 loop tests, all uniform:
    # 5 × 4 warps × 4 blocks = 80 branches. Loads: 2 × 4 trips × 16 warps; a warp reads
    # 32 half2 (128 B) from byte 4·(128 + bx + 32w + 512t): aligned for bx = 0 (4 sectors),
    # 4·bx bytes off for bx = 1–3 (5 sectors): 2 × 4 × 4 × (4 + 5 + 5 + 5) = 608.
    # Shared (4-byte half2, 1 wavefront each): 2 stores a warp; the tree: warps 0–1 (64),
    # warp 0 (32), warp 0 in part (16…1, divergent): 8 warp steps × 3 accesses a block;
    # 1 load of v[0]. Barriers 1 + 7 a block. tx == 0: 16 branches, 4 divergent.
    expect(r.t, requests=128 + 4, sectors=608 + 4, branches=80 + 7 * 16 + 16, divergent_branches=5 * 4 + 4,
           barriers=32, shared_requests=4 * (8 + 24 + 1), shared_wavefronts=4 * 33)
    assert r.stats.races == []


# -- Samples/2_Concepts_and_Techniques/histogram/histogram64.cu ----------------------------------

H64_THREADS, H64_BINS, BANKS16 = 64, 64, 16  # HISTOGRAM64_THREADBLOCK_SIZE = 4 * SHARED_MEMORY_BANKS


def histogram64Kernel(blk, d_PartialHistograms, d_Data, dataCount):
    """``histogram64Kernel``: a 64-bin histogram of the top 6 bits of each byte, one uchar
    counter per thread and bin in shared memory (``s_Hist[64 * 64]``, thread ``threadPos``
    at column threadPos of row ``data``), fed by uint4 loads; then 64 threads each sum a bin's
    row. ``SHARED_MEMORY_BANKS`` is 16 in the source: the permutation of threadIdx.x was
    designed for 16 banks."""
    tx = blk.tx
    thread_pos = (tx & ~(BANKS16 * 4 - 1)) | ((tx & (BANKS16 - 1)) << 2) | ((tx & (BANKS16 * 3)) >> 4)
    s_Hist = blk.shared(H64_THREADS * H64_BINS, np.uint8, name="s_Hist")
    for i in range(H64_BINS // 4):  # ((uint *)s_Hist)[threadIdx.x + i * 64] = 0: a 4-byte store
        blk.store(s_Hist, 4 * (tx + i * H64_THREADS), np.zeros(4, np.uint8), width=4)
    blk.sync()
    pos = (blk.bx * blk.bdx + tx).astype(np.uint32)
    live = blk.branch(pos < dataCount)
    while live.any():
        data = blk.load(d_Data, 4 * pos, mask=live, width=4)  # data_t data = d_Data[pos] (uint4)
        for word in range(4):
            for shift in (2, 10, 18, 26):  # addWord: (data >> 2) & 0x3F, >> 10, >> 18, >> 26
                at = thread_pos + ((data[..., word] >> shift) & 0x3F) * H64_THREADS
                blk.store(s_Hist, at, blk.load(s_Hist, at, mask=live) + 1, mask=live)  # s_ThreadBase[…]++
        pos = pos + blk.bdx * blk.gdx
        live = blk.branch(pos < dataCount, mask=live)
    blk.sync()
    base = tx * H64_THREADS  # if (threadIdx.x < HISTOGRAM64_BIN_COUNT): all 64 threads
    total = np.zeros((blk.nblocks, blk.nthreads), np.uint32)
    p = 4 * (tx & (BANKS16 - 1))
    for _ in range(H64_THREADS // 4):
        for k in range(4):
            total = total + blk.load(s_Hist, base + p + k)
        p = (p + 4) & (H64_THREADS - 1)
    blk.store(d_PartialHistograms, blk.bx * H64_BINS + tx, total)


def test_histogram64(both):
    # 2 blocks of 64 threads over 100 uint4 (1,600 bytes of a uint8 image): trips of 128;
    # trip 1: 100 active (block 0 full, block 1 warp 0 full, warp 1 4 lanes).
    n = 100
    image = rng(96).integers(0, 256, 16 * n, dtype=np.uint8)
    words = image.view(np.uint32)
    r = both(histogram64Kernel, 2, H64_THREADS, (np.zeros(2 * H64_BINS, np.uint32), words, n))
    np.testing.assert_array_equal(r.args[0].reshape(2, H64_BINS).sum(axis=0), np.bincount(image >> 2, minlength=64))
    # Byte increments: a lane's counter for bin d is byte threadPos + 64·d, word
    # (tx & 15) + 16·d, bank ((tx & 15) + 16·d) % 32: lanes tx and tx + 16 of a warp share a
    # bank when their bins have the same parity, and a word (no conflict) only when equal.
    wave = 0
    lanes = [np.arange(32 * w, min(32 * w + 32, n)) for w in range(4)]  # 4 warps with lanes
    for warp in lanes:
        tx = warp % 64
        tpos = ((tx & 15) << 2) | ((tx & 48) >> 4)
        for k in range(16):  # bytes in little-endian word order: byte k of the 16
            d = (image[16 * warp + k] >> 2).astype(np.int64)  # widen: 64·d overflows uint8
            word = (tpos + 64 * d) // 4
            banks = {}
            for wd in set(word.tolist()):
                banks[wd % 32] = banks.get(wd % 32, 0) + 1
            wave += 2 * max(banks.values())  # the load and the store
    # Merge: 16 × 4 byte loads a warp at word 16·tx + (tx & 15) + i: lanes tx, tx + 16 in
    # the same bank, different words: 2 wavefronts each (ideal 1) — the 16-bank design on
    # 32 banks. Init: 16 four-byte stores a warp, 1 wavefront.
    # Global: 4 uint4 loads (16 B a lane: a full warp 512 B = 16 sectors, 4 lanes 2
    # sectors): 3·16 + 2 = 50; 4 stores of 32 uints (4 sectors).
    # Branches: loop tests 4 (trip 1, warp 3 divergent) + 4 (trip 2, all false).
    expect(r.t, requests=4 + 4, sectors=50 + 16, barriers=4, branches=8, divergent_branches=1,
           shared_requests=4 * 16 + 4 * 2 * 16 + 4 * 64, shared_wavefronts=4 * 16 + wave + 4 * 64 * 2,
           shared_bank_conflicts=wave - 4 * 2 * 16 + 4 * 64)
    assert r.stats.races == []


# -- Samples/3_CUDA_Features/jacobiCudaGraphs/jacobi.cu ------------------------------------------

def _atomic_add_double(blk, address_as_ull, index, val, mask):
    """jacobi.cu's ``atomicAdd(double *address, double val)`` for GPUs before sm_60: a
    compare-and-swap loop on the 64-bit pattern (``do { assumed = old; old = atomicCAS(…,
    assumed, __double_as_longlong(val + __longlong_as_double(assumed))); } while (assumed != old);``)."""
    old = blk.load(address_as_ull, index, mask=mask)
    live = mask
    while live.any():
        assumed = old
        new = (val + assumed.view(np.float64)).view(np.uint64)
        old = np.where(live, blk.atomic_cas(address_as_ull, index, assumed, new, mask=live), old)
        live = blk.branch(assumed != old, mask=live)  # } while (assumed != old)


def finalError(blk, x, g_sum_bits, n_rows):
    """``finalError``: each thread sums |x[i] − 1| over a grid-stride loop, two rounds of
    shuffles (warp sums in ``extern __shared__ double warpSum[]``), and one double atomicAdd
    a block, through the CAS loop above. ``g_sum`` is passed as its 64-bit pattern
    (``unsigned long long *``), as the CAS loop reads it."""
    warp_sum = blk.shared(blk.bdx // 32, np.float64, name="warpSum", dynamic=True)
    total = np.zeros((blk.nblocks, blk.nthreads), np.float64)
    i = blk.bx * blk.bdx + blk.tx
    live = blk.branch(i < n_rows)
    while live.any():
        total = total + np.where(live, np.abs(blk.load(x, i, mask=live) - 1.0), 0.0)
        i = i + blk.bdx * blk.gdx
        live = blk.branch(i < n_rows, mask=live)
    for offset in (16, 8, 4, 2, 1):
        total = total + blk.shfl_down(total, offset)
    lane0 = blk.branch(blk.lane == 0)
    blk.store(warp_sum, blk.tx // 32, total, mask=lane0)
    blk.sync()
    has = blk.branch(blk.tx < blk.bdx // 32)
    block_sum = np.where(has, blk.load(warp_sum, blk.tx, mask=has), 0.0)
    w0 = blk.branch(blk.tx < 32)
    for offset in (16, 8, 4, 2, 1):
        block_sum = block_sum + np.where(w0, blk.shfl_down(block_sum, offset, mask=w0), 0.0)
    first = blk.branch(blk.lane == 0, mask=w0)
    _atomic_add_double(blk, g_sum_bits, 0 * blk.tx, block_sum, first)


def test_finalError_cas_atomicAdd(both):
    # N_ROWS = 512 as in jacobi.h; 4 blocks of 128 threads: one element per thread. The CAS
    # retry loop depends on the other blocks' atomics: launch's rule for such kernels is that
    # one block per pass counts as the reference does, and batching gives another legal order.
    n = 512
    x = rng(97).random(n) * 2
    g_sum = np.zeros(1)
    r = both(finalError, 4, 128, (x, g_sum.view(np.uint64), n), shared_bytes=4 * 8, order_dependent=True)
    # Batched, the four blocks' lane 0 contend in one instruction: the first CAS succeeds for
    # one, the retry for the next, …: 4 + 3 + 2 + 1 CAS, the same sum.
    assert r.batched.t.atomics == 4 + 3 + 2 + 1
    np.testing.assert_allclose(r.args[1].view(np.float64)[0], np.abs(x - 1).sum(), rtol=1e-12)
    # Loop tests: 2 × 16 warps (the second all false). Loads: 16 warps × 8 sectors (32
    # doubles). Shuffles: 5 × 16 + 5 × 4 (warp 0 of each block). lane == 0: 16 branches,
    # all divergent, 16 one-lane shared stores; tx < 4: 16 branches, warp 0 divergent, 4
    # loads; tx < 32: 16 uniform; lane 0 of warp 0: 4 branches, 4 divergent. The CAS loop,
    # one block after another: a load of g_sum, 1 CAS that succeeds, 1 loop test (false).
    expect(r.t, requests=16 + 4 + 4, sectors=128 + 4 + 4, shuffles=100, atomics=4, atomic_conflicts=0,
           branches=32 + 16 + 16 + 16 + 4 + 4, divergent_branches=16 + 4 + 4, barriers=4, shared_requests=20,
           shared_wavefronts=20)
    assert r.stats.races == []


# -- convolutionSeparable.cu, the column pass ----------------------------------------------------

COLS_X, COLS_Y, COLS_STEPS, COLS_HALO = 16, 8, 8, 1


def convolutionColumnsKernel(blk, d_Dst, d_Src, imageW, imageH, pitch, c_Kernel):
    """``convolutionColumnsKernel``: 16 × 8 threads, 8 result steps down a column strip with
    one halo step above and below, in ``s_Data[16][8 * 10 + 1]`` (the +1 pads the rows)."""
    s_Data = blk.shared((COLS_X, (COLS_STEPS + 2 * COLS_HALO) * COLS_Y + 1), np.float32, name="s_Data")
    baseX = blk.bx * COLS_X + blk.tx
    baseY = (blk.by * COLS_STEPS - COLS_HALO) * COLS_Y + blk.ty
    base = baseY * pitch + baseX
    for i in range(COLS_HALO, COLS_HALO + COLS_STEPS):
        blk.store(s_Data, (blk.tx, blk.ty + i * COLS_Y), blk.load(d_Src, base + i * COLS_Y * pitch))
    for i in range(COLS_HALO):  # upper halo: (baseY >= -i * COLUMNS_BLOCKDIM_Y) ? … : 0
        ok = baseY >= -i * COLS_Y
        blk.store(s_Data, (blk.tx, blk.ty + i * COLS_Y), np.where(ok, blk.load(d_Src, base + i * COLS_Y * pitch, mask=ok), 0))
    for i in range(COLS_HALO + COLS_STEPS, COLS_HALO + COLS_STEPS + COLS_HALO):  # lower halo
        ok = imageH - baseY > i * COLS_Y
        blk.store(s_Data, (blk.tx, blk.ty + i * COLS_Y), np.where(ok, blk.load(d_Src, base + i * COLS_Y * pitch, mask=ok), 0))
    blk.sync()
    for i in range(COLS_HALO, COLS_HALO + COLS_STEPS):
        total = np.float32(0)
        for j in range(-KERNEL_RADIUS, KERNEL_RADIUS + 1):
            total = total + c_Kernel[KERNEL_RADIUS - j] * blk.load(s_Data, (blk.tx, blk.ty + i * COLS_Y + j))
        blk.store(d_Dst, base + i * COLS_Y * pitch, total)


def test_convolutionColumns(both):
    # imageW = 32 (2 blocks of 16 columns), imageH = 128 (2 blocks of 8 · 8 rows).
    W, H = 32, 128
    src = rng(72).random((H, W), dtype=np.float32)
    k = rng(73).random(2 * KERNEL_RADIUS + 1).astype(np.float32)
    r = both(convolutionColumnsKernel, (2, 2), (COLS_X, COLS_Y), (np.zeros((H, W), np.float32), src, W, H, W, k))
    np.testing.assert_allclose(r.args[0], _rows_gold(src.T.copy(), k).T, rtol=1e-5)
    # A warp is rows ty = 2w, 2w + 1 of 16 floats (64 B, 64-B aligned): 4 sectors a request.
    # Per warp: 8 main loads, one halo (block y = 0: the lower; y = 1: the upper), 8 stores:
    # 17 requests; 4 warps × 4 blocks. Shared: s_Data[tx][c] is word 81·tx + c, bank
    # (17·tx + c) % 32: the 16 lanes of row c hit distinct banks, and so do those of row
    # c + 1, but lane 15 of row c + 1 (17·15 + c + 1 ≡ c mod 32) meets lane 0 of row c: one
    # bank holds 2 words, 2 wavefronts (ideal 1) for every access: 10 stores and 8 × 17
    # loads a warp. The +1 pads for a warp of one 32-wide row; a 16-wide block puts two
    # rows in a warp.
    expect(r.t, requests=16 * 17, sectors=16 * 17 * 4, barriers=4, shared_requests=16 * 146,
           shared_wavefronts=16 * 146 * 2, shared_ideal_wavefronts=16 * 146)
    assert r.stats.races == []


# -- Samples/2_Concepts_and_Techniques/scan/scan.cu (THREADBLOCK_SIZE 256) -------------------------

def _scan1_inclusive(blk, s_Data, idata, size):
    """``scan1Inclusive``: ``pos = 2 * threadIdx.x - (threadIdx.x & (size - 1))``; a zero
    below each segment (``s_Data[pos] = 0; pos += size;``) so no thread tests ``pos >= offset``;
    two barriers per step."""
    pos = 2 * blk.tx - (blk.tx & (size - 1))
    blk.store(s_Data, pos, 0)
    pos = pos + size
    blk.store(s_Data, pos, idata)
    offset = 1
    while offset < size:
        blk.sync()
        t = blk.load(s_Data, pos) + blk.load(s_Data, pos - offset)
        blk.sync()
        blk.store(s_Data, pos, t)
        offset <<= 1
    return blk.load(s_Data, pos)


def scanExclusiveShared(blk, d_Dst, d_Src, size):
    """``scanExclusiveShared``: each thread scans a uint4 (``scan4Inclusive``), the segment
    scans the threads' totals with ``scan1Exclusive``, and adds them back."""
    s_Data = blk.shared(2 * 256, np.uint32, name="s_Data")
    pos = blk.bx * blk.bdx + blk.tx
    idata4 = blk.load(d_Src, 4 * pos, width=4)  # uint4 idata4 = d_Src[pos]
    x, y, z, w = (idata4[..., c] for c in range(4))
    y = y + x
    z = z + y
    w = w + z
    oval = _scan1_inclusive(blk, s_Data, w, size // 4) - w  # scan1Exclusive
    inclusive = np.stack([x + oval, y + oval, z + oval, w + oval], axis=-1)
    blk.store(d_Dst, 4 * pos, inclusive - idata4, width=4)  # scan4Exclusive: odata4 -= idata4


@pytest.mark.parametrize("size, steps, wavefronts", [
    # arrayLength 1024: one segment of 256 threads, pos = tx: consecutive words, 1 wavefront;
    # offsets 1…128: 8 steps.
    (1024, 8, 1),
    # arrayLength 64: segments of 16 threads, pos = 2·tx − (tx & 15): a warp's lanes 0–15 and
    # 16–31 use words 0–15 and 32–47 (+ 16 after the zero): the same 16 banks twice, so
    # every shared access takes 2 wavefronts; offsets 1…8: 4 steps.
    (64, 4, 2),
])
def test_scanExclusiveShared(both, size, steps, wavefronts):
    n = 2048  # 2 blocks of 256 threads × 4 elements
    x = rng(74).integers(0, 1000, n).astype(np.uint32)
    r = both(scanExclusiveShared, n // 1024, 256, (np.zeros(n, np.uint32), x, size))
    segments = x.reshape(-1, size).astype(np.int64)
    np.testing.assert_array_equal(r.args[0], (np.cumsum(segments, axis=1) - segments).ravel())
    # uint4 loads and stores: 16 B a lane, 16 sectors a warp; 16 warps. Shared per warp:
    # 2 stores, 3 per step, the final load. Barriers: 2 per step per block.
    expect(r.t, requests=32, sectors=32 * 16, barriers=2 * 2 * steps, branches=0,
           shared_requests=16 * (3 + 3 * steps), shared_wavefronts=16 * (3 + 3 * steps) * wavefronts,
           shared_ideal_wavefronts=16 * (3 + 3 * steps))
    assert r.stats.races == []
