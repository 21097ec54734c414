"""Kernels from *Programming Massively Parallel Processors: A Hands-on Approach*, 4th edition
(Wen-mei W. Hwu, David B. Kirk, Izzat El Hajj; Morgan Kaufmann, 2022), rewritten with the
``blk`` API from the book's figures. Each kernel names its chapter, section and figure.
(Figure numbers as the book's own exercises cite them: Figs. 7.7, 7.9, 7.12, 8.6, 8.8,
8.10, 9.6, 9.10, 10.6, 10.9, 10.15, 11.3; the Brent-Kung scan and the SpMV kernels are
named by section.)

Conventions as in ``test_cuda_samples.py``: a per-thread ``if``/``else`` or loop test is a
``blk.branch`` (both sides of an ``if``/``else`` issue where the warp has lanes on each);
``__constant__`` filters (``F_c``) are Python constants. The book leaves sizes open; each
test states the ones it chose. Where a count depends on random data (sparse matrices,
histograms), the test derives it from the addresses with a few lines of numpy, written
independently of the simulator.
"""

import numpy as np
import pytest

import simtdocs
from simtdocs import InitcheckError, reference
from zoo_engines import expect, rng

PMPP = "Hwu, Kirk, El Hajj, Programming Massively Parallel Processors, 4th ed. (2022)"


def zeros(blk, dtype=np.float32):
    return np.zeros((blk.nblocks, blk.nthreads), dtype)


def sectors_of(byte_addresses, lane_bytes):
    """Distinct 32-byte sectors of one warp access (independent of simtdocs)."""
    a = np.asarray(byte_addresses, np.int64)
    return len(set((a // 32).tolist()) | set(((a + lane_bytes - 1) // 32).tolist())) if a.size else 0


def conv2d_gold(N, F, r):
    H, W = N.shape
    padded = np.pad(N.astype(np.float64), r)
    out = np.zeros((H, W))
    for fr in range(2 * r + 1):
        for fc in range(2 * r + 1):
            out += F[fr, fc] * padded[fr:fr + H, fc:fc + W]
    return out


# -- Chapter 7, convolution ------------------------------------------------------------------

def convolution_2D_basic_kernel(blk, N, F, P, r, width, height):
    """§7.2, Fig. 7.7: one thread per output pixel, the filter F in global memory; a ghost
    cell is skipped by ``if (inRow >= 0 && inRow < height && inCol >= 0 && inCol < width)``."""
    out_col = blk.bx * blk.bdx + blk.tx
    out_row = blk.by * blk.bdy + blk.ty
    p = zeros(blk)
    for f_row in range(2 * r + 1):
        for f_col in range(2 * r + 1):
            in_row = out_row - r + f_row
            in_col = out_col - r + f_col
            m = blk.branch((in_row >= 0) & (in_row < height) & (in_col >= 0) & (in_col < width))
            f = blk.load(F, (0 * in_row + f_row, 0 * in_col + f_col), mask=m)
            p = p + f * blk.load(N, in_row * width + in_col, mask=m)
    blk.store(P, out_row * width + out_col, p)


def convolution_2D_const_mem_kernel(blk, N, F_c, P, r, width, height):
    """§7.3, Fig. 7.9: Fig. 7.7 with the filter in constant memory (``F_c``)."""
    out_col = blk.bx * blk.bdx + blk.tx
    out_row = blk.by * blk.bdy + blk.ty
    p = zeros(blk)
    for f_row in range(2 * r + 1):
        for f_col in range(2 * r + 1):
            in_row = out_row - r + f_row
            in_col = out_col - r + f_col
            m = blk.branch((in_row >= 0) & (in_row < height) & (in_col >= 0) & (in_col < width))
            p = p + F_c[f_row, f_col] * blk.load(N, in_row * width + in_col, mask=m)
    blk.store(P, out_row * width + out_col, p)


@pytest.mark.parametrize("kernel, filter_traffic", [
    # Fig. 7.7 reads F[fRow][fCol] from global memory: one word a warp per (fRow, fCol)
    # where the warp has an inside lane (all 288): 288 requests, 288 sectors.
    (convolution_2D_basic_kernel, 288),
    (convolution_2D_const_mem_kernel, 0),
])
def test_convolution_2D_basic(both, kernel, filter_traffic):
    # r = 1 (3 × 3 filter), a 32 × 32 image, 16 × 16 blocks: grid 2 × 2, 8 warps a block,
    # each warp two rows (ty = 2w, 2w + 1) of 16 columns; rows are 128 B, 32-B aligned.
    r, W = 1, 32
    N = rng(200).random((W, W), dtype=np.float32)
    F = rng(201).random((3, 3), dtype=np.float32)
    r_ = both(kernel, (2, 2), (16, 16), (N, F, np.zeros((W, W), np.float32), r, W, W))
    np.testing.assert_allclose(r_.args[2], conv2d_gold(N, F, r), rtol=1e-5)
    # Branches: 9 per warp, 32 warps. A ghost lane makes its warp diverge: column ghosts
    # (fCol = 0 in bx = 0 blocks, fCol = 2 in bx = 1) in every warp, 3 fRows each: 96;
    # row ghosts (fRow = 0 for block row 0's warp 0, fRow = 2 for block row 1's warp 7)
    # add 2 more (fCol) each in 4 warps: 8. Divergent: 104.
    # N loads: per row of a warp, over fCol: fCol = 1: 2 sectors; fCol = 0: 2 (bx = 0:
    # cols 0–14) or 3 (bx = 1: cols 15–30, bytes 60–123); fCol = 2: 3 or 2 → 7 per row
    # per fRow; 2 rows × 3 fRows × 7 = 42 a warp, less 7 in the 4 warps with a ghost row:
    # 32·42 − 28 = 1,316 sectors, 288 requests. P: 32 requests, 2 rows × 2 sectors.
    expect(r_.t, branches=288, divergent_branches=104, requests=288 + filter_traffic + 32,
           sectors=1316 + filter_traffic + 128)


IN_TILE, R12 = 16, 1
OUT_TILE = IN_TILE - 2 * R12


def convolution_tiled_2D_const_mem_kernel(blk, N, F_c, P, width, height):
    """§7.4, Fig. 7.12: blocks of IN_TILE_DIM² threads load an input tile with its halo
    (``if … N_s[ty][tx] = N[…]; else N_s[ty][tx] = 0.0``), and the inner OUT_TILE_DIM² threads
    compute; FILTER_RADIUS = 1, IN_TILE_DIM = 16, OUT_TILE_DIM = 14."""
    N_s = blk.shared((IN_TILE, IN_TILE), np.float32, name="N_s")
    col = blk.bx * OUT_TILE + blk.tx - R12
    row = blk.by * OUT_TILE + blk.ty - R12
    inside = blk.branch((row >= 0) & (row < height) & (col >= 0) & (col < width))
    blk.store(N_s, (blk.ty, blk.tx), blk.load(N, row * width + col, mask=inside), mask=inside)
    blk.store(N_s, (blk.ty, blk.tx), 0, mask=~inside)
    blk.sync()
    tile_col = blk.tx - R12
    tile_row = blk.ty - R12
    inside = blk.branch((row >= 0) & (row < height) & (col >= 0) & (col < width))
    m = blk.branch((tile_col >= 0) & (tile_col < OUT_TILE) & (tile_row >= 0) & (tile_row < OUT_TILE), mask=inside)
    p = zeros(blk)
    for f_row in range(2 * R12 + 1):
        for f_col in range(2 * R12 + 1):
            p = p + F_c[f_row, f_col] * blk.load(N_s, (tile_row + f_row, tile_col + f_col), mask=m)
    blk.store(P, row * width + col, p, mask=m)


def test_convolution_tiled_2D(both):
    # A 24 × 24 image (rows of 96 B, 32-B aligned): grid 2 × 2 of 16 × 16 (⌈24 / 14⌉ = 2).
    # col = 14·bx + tx − 1: bx = 0 → tx = 0 is a ghost; bx = 1 → cols 13–23 (tx 0–10),
    # tx 11–15 ghosts; rows likewise with ty. Block row 1's warps 6, 7 (ty 12–15) have no
    # inside lane.
    W = 24
    N = rng(202).random((W, W), dtype=np.float32)
    F = rng(203).random((3, 3), dtype=np.float32)
    r = both(convolution_tiled_2D_const_mem_kernel, (2, 2), (16, 16), (N, F, np.zeros((W, W), np.float32), W, W))
    np.testing.assert_allclose(r.args[2], conv2d_gold(N, F, 1), rtol=1e-5)
    # Load: 32 branches, 28 divergent (every warp with an inside lane has a ghost column);
    # 28 loads; rows inside: 15 (block row 0) or 11, each 2 sectors (bx = 0: bytes 0–59;
    # bx = 1: 52–95): 2·(15 + 15 + 11 + 11) = 104. Shared: 28 then-stores + 32 else-stores.
    # Compute: the same 32/28 branch again; the inner tile test, reached in 28 warps, splits
    # each of them (tx = 15 or 0 fails it): 28 divergent; 28 warps × 9 shared loads, 1
    # wavefront each (≤ 2 rows of 14 words, in different bank halves). P: 28 stores,
    # output rows 14 or 10, 2 sectors each: 2·(14 + 14 + 10 + 10) = 96.
    expect(r.t, requests=56, sectors=104 + 96, barriers=4, branches=32 + 32 + 28, divergent_branches=84,
           shared_requests=60 + 252, shared_wavefronts=312)
    assert r.stats.races == []


# -- Chapter 8, stencil -----------------------------------------------------------------------

C7 = np.array([0.5, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35], np.float32)  # c0…c6


def stencil_gold(a, c):
    out = np.zeros_like(a, dtype=np.float64)
    core = (slice(1, -1),) * 3
    out[core] = (c[0] * a[1:-1, 1:-1, 1:-1] + c[1] * a[1:-1, 1:-1, :-2] + c[2] * a[1:-1, 1:-1, 2:]
                 + c[3] * a[1:-1, :-2, 1:-1] + c[4] * a[1:-1, 2:, 1:-1] + c[5] * a[:-2, 1:-1, 1:-1]
                 + c[6] * a[2:, 1:-1, 1:-1])
    return out


def stencil_kernel(blk, in_, out, N):
    """§8.2, Fig. 8.6: the basic 3-D seven-point stencil, one thread per grid point, block 8³."""
    i = blk.bz * blk.bdz + blk.tz
    j = blk.by * blk.bdy + blk.ty
    k = blk.bx * blk.bdx + blk.tx
    m = blk.branch((i >= 1) & (i < N - 1) & (j >= 1) & (j < N - 1) & (k >= 1) & (k < N - 1))
    at = i * N * N + j * N + k
    v = (C7[0] * blk.load(in_, at, mask=m) + C7[1] * blk.load(in_, at - 1, mask=m)
         + C7[2] * blk.load(in_, at + 1, mask=m) + C7[3] * blk.load(in_, at - N, mask=m)
         + C7[4] * blk.load(in_, at + N, mask=m) + C7[5] * blk.load(in_, at - N * N, mask=m)
         + C7[6] * blk.load(in_, at + N * N, mask=m))
    blk.store(out, at, v, mask=m)


def test_stencil_basic(both):
    # N = 16 (rows of 64 B, 32-B aligned), blocks 8 × 8 × 8 (the book's exercise size):
    # grid 2 × 2 × 2, 16 warps a block, a warp = one tz, four ty rows of 8 tx.
    N = 16
    a = rng(204).random((N, N, N), dtype=np.float32)
    r = both(stencil_kernel, (2, 2, 2), (8, 8, 8), (a, np.zeros((N, N, N), np.float32), N))
    np.testing.assert_allclose(r.args[1], stencil_gold(a, C7), rtol=1e-5)
    # Interior per axis: tz 1–7 (block 0) or 0–6 (block 1): 7 of 8 in every block. A warp
    # has an interior lane when its tz is interior and one of its 4 ty rows is: 7 × 2 = 14
    # warps a block, 112 in all; each also has exterior tx lanes: 112 divergent of 128.
    # Rows of 7 interior floats: 49 a block, 392 in all. Sectors a row: the centre, j ± 1,
    # i ± 1 and the store 1 each; k − 1 and k + 1 one of them 2 (bytes 28–55 or 8–35)
    # → 9 a row.
    expect(r.t, branches=128, divergent_branches=112, requests=8 * 112, sectors=9 * 392)


IN8, OUT6 = 8, 6


def stencil_tiled_kernel(blk, in_, out, N):
    """§8.3, Fig. 8.8: shared-memory tiling, IN_TILE_DIM = 8 (block 8³), OUT_TILE_DIM = 6."""
    in_s = blk.shared((IN8, IN8, IN8), np.float32, name="in_s")
    i = blk.bz * OUT6 + blk.tz - 1
    j = blk.by * OUT6 + blk.ty - 1
    k = blk.bx * OUT6 + blk.tx - 1
    ok = blk.branch((i >= 0) & (i < N) & (j >= 0) & (j < N) & (k >= 0) & (k < N))
    blk.store(in_s, (blk.tz, blk.ty, blk.tx), blk.load(in_, i * N * N + j * N + k, mask=ok), mask=ok)
    blk.sync()
    core = blk.branch((i >= 1) & (i < N - 1) & (j >= 1) & (j < N - 1) & (k >= 1) & (k < N - 1))
    tz, ty, tx = blk.tz, blk.ty, blk.tx
    m = blk.branch((tz >= 1) & (tz < IN8 - 1) & (ty >= 1) & (ty < IN8 - 1) & (tx >= 1) & (tx < IN8 - 1), mask=core)
    v = (C7[0] * blk.load(in_s, (tz, ty, tx), mask=m) + C7[1] * blk.load(in_s, (tz, ty, tx - 1), mask=m)
         + C7[2] * blk.load(in_s, (tz, ty, tx + 1), mask=m) + C7[3] * blk.load(in_s, (tz, ty - 1, tx), mask=m)
         + C7[4] * blk.load(in_s, (tz, ty + 1, tx), mask=m) + C7[5] * blk.load(in_s, (tz - 1, ty, tx), mask=m)
         + C7[6] * blk.load(in_s, (tz + 1, ty, tx), mask=m))
    blk.store(out, i * N * N + j * N + k, v, mask=m)


def test_stencil_shared_tiling(both):
    # N = 8 (rows of 32 B): grid ⌈8 / 6⌉³ = 2³ blocks of 8³. Per axis, block 0 loads
    # t = 1–7 (7 values), block 1 t = 0–2 (3: points 5–7).
    N = 8
    a = rng(205).random((N, N, N), dtype=np.float32)
    r = both(stencil_tiled_kernel, (2, 2, 2), (8, 8, 8), (a, np.zeros((N, N, N), np.float32), N))
    np.testing.assert_allclose(r.args[1], stencil_gold(a, C7), rtol=1e-5)
    # Load: warps with a loading lane: (7 + 3) tz × (2 + 1) row halves × 2 (bx) = 60, all
    # divergent (ghost tx in every warp); rows loaded (7 + 3)² × 2 = 200, 1 sector each;
    # 60 shared stores, 32 consecutive words: 1 wavefront.
    # Outer test (interior i, j, k = 1–6: t = 2–7 or 0–1): (6 + 2) × (2 + 1) × 2 = 48 warps,
    # all divergent. Inner test (tile t = 1–6) reached in those 48: splits the 36 whose tz
    # passes it ((5 + 1) × 3 × 2); 36 warps × 7 shared loads, 1 wavefront each (4 rows
    # within 32 words); stores: 36 requests, rows (5 + 1)² × 2 = 72, 1 sector each.
    expect(r.t, branches=128 + 128 + 48, divergent_branches=60 + 48 + 36, requests=60 + 36, sectors=200 + 72,
           barriers=8, shared_requests=60 + 252, shared_wavefronts=312)
    assert r.stats.races == []


def stencil_coarsened_kernel(blk, in_, out, N):
    """§8.4, Fig. 8.10: thread coarsening in z: a 2-D block of IN_TILE_DIM² threads walks
    OUT_TILE_DIM planes with ``inPrev_s``, ``inCurr_s`` and ``inNext_s``."""
    prev = blk.shared((IN8, IN8), np.float32, name="inPrev_s")
    curr = blk.shared((IN8, IN8), np.float32, name="inCurr_s")
    nxt = blk.shared((IN8, IN8), np.float32, name="inNext_s")
    ty, tx = blk.ty, blk.tx
    i_start = blk.bz * OUT6
    j = blk.by * OUT6 + ty - 1
    k = blk.bx * OUT6 + tx - 1
    jk = (j >= 0) & (j < N) & (k >= 0) & (k < N)
    ok = blk.branch((i_start - 1 >= 0) & (i_start - 1 < N) & jk)
    blk.store(prev, (ty, tx), blk.load(in_, (i_start - 1) * N * N + j * N + k, mask=ok), mask=ok)
    ok = blk.branch((i_start >= 0) & (i_start < N) & jk)
    blk.store(curr, (ty, tx), blk.load(in_, i_start * N * N + j * N + k, mask=ok), mask=ok)
    for step in range(OUT6):
        i = i_start + step
        ok = blk.branch((i + 1 >= 0) & (i + 1 < N) & jk)
        blk.store(nxt, (ty, tx), blk.load(in_, (i + 1) * N * N + j * N + k, mask=ok), mask=ok)
        blk.sync()
        core = blk.branch((i >= 1) & (i < N - 1) & (j >= 1) & (j < N - 1) & (k >= 1) & (k < N - 1))
        m = blk.branch((ty >= 1) & (ty < IN8 - 1) & (tx >= 1) & (tx < IN8 - 1), mask=core)
        v = (C7[0] * blk.load(curr, (ty, tx), mask=m) + C7[1] * blk.load(curr, (ty, tx - 1), mask=m)
             + C7[2] * blk.load(curr, (ty, tx + 1), mask=m) + C7[3] * blk.load(curr, (ty - 1, tx), mask=m)
             + C7[4] * blk.load(curr, (ty + 1, tx), mask=m) + C7[5] * blk.load(prev, (ty, tx), mask=m)
             + C7[6] * blk.load(nxt, (ty, tx), mask=m))
        blk.store(out, i * N * N + j * N + k, v, mask=m)
        blk.sync()
        blk.store(prev, (ty, tx), blk.load(curr, (ty, tx)))  # inPrev_s[ty][tx] = inCurr_s[ty][tx]
        blk.store(curr, (ty, tx), blk.load(nxt, (ty, tx)))  # inCurr_s[ty][tx] = inNext_s[ty][tx]


def test_stencil_coarsened(both):
    # N = 8, blocks of 8 × 8 threads (2 warps: ty 0–3, 4–7), grid 2 × 2 × 2; block z = 0
    # walks planes 0–5, block z = 1 planes 6–11.
    N = 8
    a = rng(206).random((N, N, N), dtype=np.float32)
    args = (a, np.zeros((N, N, N), np.float32), N)
    # The last two lines copy every thread's tile element, ghost cells included, and a ghost
    # cell of inCurr_s was never loaded: the simulator's initcheck (which, unlike
    # compute-sanitizer's, covers shared memory) stops at the first such copy.
    for engine in (reference.launch, simtdocs.launch):
        with pytest.raises(InitcheckError, match="inCurr_s"):
            engine(stencil_coarsened_kernel, (2, 2, 2), (8, 8), args=(a, np.zeros((N, N, N), np.float32), N))
    r = both(stencil_coarsened_kernel, (2, 2, 2), (8, 8), args, tools=("memcheck", "racecheck", "synccheck"))
    np.testing.assert_allclose(r.args[1], stencil_gold(a, C7), rtol=1e-5)
    # Plane loads that lie inside the grid: block z = 0: inCurr + 6 inNext = 7; z = 1:
    # inPrev, inCurr, 1 inNext (plane 7) = 3. Rows of a plane inside (j): 7 (by = 0, both
    # warps) or 3 (by = 1, warp 0): requests (7 + 3) × (2 + 1) × 2 = 60, sectors
    # (7 + 3) × (7 + 3) × 2 = 200 (a row of ≤ 8 floats is one sector). 8 load tests a block,
    # 2 warps: 128 branches; divergent: the 60 that load (ghost tx in every warp).
    # Compute: interior planes 1–5 (z = 0) and 6 (z = 1), rows j: ty 2–7 (both warps) or
    # 0–1 (warp 0): (5 + 1) × (2 + 1) × 2 = 36 warps pass the outer test in part (all
    # divergent, of 96); the inner test, in those 36, splits each (tx = 7 or 0): 36.
    # 36 × 7 shared loads; 36 stores, rows (5 + 1) × (5 + 1) × 2 = 72, 1 sector each.
    # Copies: 4 shared accesses × 2 warps × 6 steps × 8 blocks = 384. Barriers 2 × 6 × 8.
    expect(r.t, requests=60 + 36, sectors=200 + 72, barriers=96, branches=128 + 96 + 36,
           divergent_branches=60 + 36 + 36, shared_requests=60 + 252 + 384, shared_wavefronts=696)
    assert r.stats.races == []


# -- Chapter 9, parallel histogram --------------------------------------------------------------

def _text(n, seed):
    """Lower-case letters and a few spaces and digits, as uint8 (the book's char data)."""
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz    0123456789", np.uint8)
    return alphabet[rng(seed).integers(0, alphabet.size, n)]


def histo_kernel(blk, data, length, histo):
    """§9.2, Fig. 9.6: ``alphabet_position = data[i] - 'a'``; letters counted in bins of 4
    (``atomicAdd(&histo[alphabet_position/4], 1)``)."""
    i = blk.bx * blk.bdx + blk.tx
    m = blk.branch(i < length)
    pos = blk.load(data, i, mask=m).astype(np.int32) - ord("a")  # char promoted to int, as in C
    letter = blk.branch((pos >= 0) & (pos < 26), mask=m)
    blk.atomic_add(histo, pos // 4, 1, mask=letter)


def histo_private_kernel(blk, data, length, histo):
    """§9.4, Fig. 9.10: a private histogram per block in shared memory (``histo_s``),
    merged into the global one with one atomicAdd per non-empty bin."""
    NUM_BINS = 7
    histo_s = blk.shared(NUM_BINS, np.uint32, name="histo_s")
    b = blk.tx
    live = blk.branch(b < NUM_BINS)
    while live.any():
        blk.store(histo_s, b, 0, mask=live)
        b = b + blk.bdx
        live = blk.branch(b < NUM_BINS, mask=live)
    blk.sync()
    i = blk.bx * blk.bdx + blk.tx
    m = blk.branch(i < length)
    pos = blk.load(data, i, mask=m).astype(np.int32) - ord("a")
    letter = blk.branch((pos >= 0) & (pos < 26), mask=m)
    blk.atomic_add(histo_s, pos // 4, 1, mask=letter)
    blk.sync()
    b = blk.tx
    live = blk.branch(b < NUM_BINS)
    while live.any():
        value = blk.load(histo_s, b, mask=live)
        some = blk.branch(value > 0, mask=live)
        blk.atomic_add(histo, b, value, mask=some)
        b = b + blk.bdx
        live = blk.branch(b < NUM_BINS, mask=live)


def _letter_warps(text, n_threads):
    """Per warp of 32 consecutive characters: (lanes with a letter, distinct bins, whether
    letters and non-letters mix)."""
    out = []
    for w in range(0, n_threads, 32):
        chunk = text[w:w + 32].astype(np.int32) - ord("a")
        if chunk.size == 0:
            continue
        letters = chunk[(chunk >= 0) & (chunk < 26)]
        out.append((letters.size, np.unique(letters // 4).size, 0 < letters.size < chunk.size))
    return out


@pytest.mark.parametrize("kernel", [histo_kernel, histo_private_kernel])
def test_histogram(both, kernel):
    n = 1000  # characters, on 4 blocks of 256; warp 31 has 8 characters
    text = _text(n, 207)
    r = both(kernel, 4, 256, (text, n, np.zeros(7, np.uint32)))
    letters = text[(text >= ord("a")) & (text <= ord("z"))].astype(np.int64) - ord("a")
    np.testing.assert_array_equal(r.args[2], np.bincount(letters // 4, minlength=7))
    warps = _letter_warps(text, 1024)
    with_letters = sum(1 for lanes, _, _ in warps if lanes)
    conflicts = sum(lanes - bins for lanes, bins, _ in warps)
    mixed = sum(1 for *_, mix in warps if mix)
    # Both: i < length: 32 branches, warp 31 diverges; the char loads: 32 requests, one
    # sector each (32 bytes, or 8). The letter test: 32 warps, divergent where letters and
    # other characters mix; the atomics: one per warp with a letter, conflicts = letters −
    # distinct bins in each.
    if kernel is histo_kernel:
        expect(r.t, branches=64, divergent_branches=1 + mixed, requests=32 + with_letters, sectors=32 + with_letters,
               atomics=with_letters, atomic_conflicts=conflicts)
    else:
        # Per block: init and merge loops each test 8 warps (warp 0 divergent: lanes 0–6),
        # then warp 0 again (false); 1 store, 1 load of 7 words; every bin of a block of
        # 256 characters is almost surely non-empty ('value > 0' diverges only in a block
        # with an empty bin); one global atomic of ≤ 7 distinct bins (1 sector) a block.
        bins = [np.bincount(letters_in // 4, minlength=7) for letters_in in
                [t[(t >= 0) & (t < 26)] for t in (text[256 * b:256 * b + 256].astype(np.int64) - ord("a") for b in range(4))]]
        zero_mixed = sum(1 for c in bins if 0 < (c == 0).sum() < 7)
        expect(r.t, branches=4 * (9 + 9 + 1) + 64, divergent_branches=4 * 2 + zero_mixed + 1 + mixed, barriers=8,
               requests=32 + 4, sectors=32 + 4, atomics=with_letters + 4, atomic_conflicts=conflicts,
               shared_requests=4 * 2 + with_letters)


# -- Chapter 10, reduction --------------------------------------------------------------------

def SimpleSumReductionKernel(blk, input_, output):
    """§10.3, Fig. 10.6: one block; ``i = 2*threadIdx.x``; ``if (threadIdx.x % stride == 0)
    input[i] += input[i + stride]`` in global memory, stride = 1…blockDim.x."""
    i = 2 * blk.tx
    stride = 1
    while stride <= blk.bdx:
        m = blk.branch(blk.tx % stride == 0)
        blk.store(input_, i, blk.load(input_, i, mask=m) + blk.load(input_, i + stride, mask=m), mask=m)
        blk.sync()
        stride *= 2
    first = blk.branch(blk.tx == 0)
    blk.store(output, 0 * blk.tx, blk.load(input_, 0 * blk.tx, mask=first), mask=first)


def ConvergentSumReductionKernel(blk, input_, output):
    """§10.4, Fig. 10.9: ``i = threadIdx.x``; stride = blockDim.x…1; ``if (threadIdx.x < stride)``."""
    i = blk.tx
    stride = blk.bdx
    while stride >= 1:
        m = blk.branch(blk.tx < stride)
        blk.store(input_, i, blk.load(input_, i, mask=m) + blk.load(input_, i + stride, mask=m), mask=m)
        blk.sync()
        stride //= 2
    first = blk.branch(blk.tx == 0)
    blk.store(output, 0 * blk.tx, blk.load(input_, 0 * blk.tx, mask=first), mask=first)


@pytest.mark.parametrize("kernel, divergent, requests, sectors", [
    # Fig. 10.6, block 256 over 512 floats: strides 1…256 (9 steps) in 8 warps: 72 branches
    # + 8 for tx == 0. Active warps: 8 per step for strides 1–32, then 4, 2, 1: 55 warp
    # steps, 47 divergent (all but stride 1), + 1. Sectors per access of a warp step: 8
    # (strides 1, 2, 4: lanes span 256 B), 4, 2, 1 (strides 8, 16, 32), 1 (64, 128, 256):
    # 8·(8 + 8 + 8 + 4 + 2 + 1) + 4 + 2 + 1 = 255 per access, 3 accesses; + 2 at the end.
    (SimpleSumReductionKernel, 48, 3 * 55 + 2, 3 * 255 + 2),
    # Fig. 10.9: tx < stride: 8, 4, 2, 1 full warps (strides 256…32), then warp 0 with 16, 8,
    # 4, 2, 1 lanes: 20 warp steps, 5 divergent (+1); sectors 15·4 + 2 + 1 + 1 + 1 + 1 = 66
    # per access.
    (ConvergentSumReductionKernel, 6, 3 * 20 + 2, 3 * 66 + 2),
])
def test_reduction_single_block(both, kernel, divergent, requests, sectors):
    x = rng(208).random(512, dtype=np.float32)
    r = both(kernel, 1, 256, (x, np.zeros(1, np.float32)))
    np.testing.assert_allclose(r.args[1][0], x.sum(dtype=np.float64), rtol=1e-5)
    expect(r.t, branches=80, divergent_branches=divergent, requests=requests, sectors=sectors, barriers=9)


COARSE_FACTOR, BLOCK_DIM = 2, 64


def CoarsenedSumReductionKernel(blk, input_, output):
    """§10.8, Fig. 10.15: each block sums COARSE_FACTOR·2·blockDim elements (segment),
    each thread 4 of them first, then a shared sweep and one atomicAdd a block."""
    input_s = blk.shared(BLOCK_DIM, np.float32, name="input_s")
    segment = COARSE_FACTOR * 2 * blk.bdx * blk.bx
    i = segment + blk.tx
    t = blk.tx
    total = blk.load(input_, i)
    for tile in range(1, COARSE_FACTOR * 2):
        total = total + blk.load(input_, i + tile * BLOCK_DIM)
    blk.store(input_s, t, total)
    stride = blk.bdx // 2
    while stride >= 1:
        blk.sync()
        m = blk.branch(t < stride)
        blk.store(input_s, t, blk.load(input_s, t, mask=m) + blk.load(input_s, t + stride, mask=m), mask=m)
        stride //= 2
    first = blk.branch(t == 0)
    blk.atomic_add(output, 0 * t, blk.load(input_s, 0 * t, mask=first), mask=first)


def test_reduction_coarsened(both):
    # BLOCK_DIM = 64 (2 warps), COARSE_FACTOR = 2: 256 floats a block, 4 blocks, n = 1,024.
    x = rng(209).random(1024, dtype=np.float32)
    r = both(CoarsenedSumReductionKernel, 4, BLOCK_DIM, (x, np.zeros(1, np.float32)))
    np.testing.assert_allclose(r.args[1][0], x.sum(dtype=np.float64), rtol=1e-5)
    # Loads: 4 per thread, full warps: 32 requests, 128 sectors. Sweep strides 32…1: 6
    # barriers and 12 branches a block; warp 1 never passes, warp 0 passes whole at
    # stride 32 and in part after: 5 divergent. Shared a block: 2 stores + 6 × 3 + 1 = 21.
    # tx == 0: 8 branches, 4 divergent; 4 atomics of one lane.
    expect(r.t, requests=32 + 4, sectors=128 + 4, barriers=24, branches=48 + 8, divergent_branches=24,
           shared_requests=84, shared_wavefronts=84, atomics=4, atomic_conflicts=0)
    assert r.stats.races == []


# -- Chapter 11, prefix sum ---------------------------------------------------------------------

SECTION = 128


def Kogge_Stone_scan_kernel(blk, X, Y, N):
    """§11.2, Fig. 11.3: an inclusive scan of each SECTION_SIZE = blockDim section, with a
    second ``__syncthreads()`` between reading ``XY`` into ``temp`` and writing it back."""
    XY = blk.shared(SECTION, np.float32, name="XY")
    i = blk.bx * blk.bdx + blk.tx
    m = blk.branch(i < N)
    blk.store(XY, blk.tx, blk.load(X, i, mask=m), mask=m)
    blk.store(XY, blk.tx, 0, mask=~m)
    stride = 1
    while stride < blk.bdx:
        blk.sync()
        up = blk.branch(blk.tx >= stride)
        temp = blk.load(XY, blk.tx, mask=up) + blk.load(XY, blk.tx - stride, mask=up)
        blk.sync()
        up = blk.branch(blk.tx >= stride)
        blk.store(XY, blk.tx, temp, mask=up)
        stride *= 2
    m = blk.branch(i < N)
    blk.store(Y, i, blk.load(XY, blk.tx, mask=m), mask=m)


def _section_scan(x, size):
    out = np.zeros(x.size)
    for s in range(0, x.size, size):
        out[s:s + size] = np.cumsum(x[s:s + size].astype(np.float64))
    return out


def test_kogge_stone_scan(both):
    # Sections of 128 (block 128 = 4 warps), N = 300 on 3 blocks: block 2 has 44 elements
    # (warp 0 full, warp 1 12 lanes, warps 2–3 none).
    N = 300
    x = rng(210).random(N, dtype=np.float32)
    r = both(Kogge_Stone_scan_kernel, 3, SECTION, (x, np.zeros(N, np.float32), N))
    np.testing.assert_allclose(r.args[1], _section_scan(x, SECTION), rtol=1e-5)
    # Load: 12 branches, 1 divergent; 10 loads (9 full warps + 12 lanes: 38 sectors),
    # 10 then-stores, 3 else-stores. Strides 1…64 (7): 2 barriers and 2 × 4 branches a
    # block each; tx >= stride splits warp 0 for strides 1–16: 10 divergent a block.
    # Warps that pass: 4 (strides 1–16), 3 (32), 2 (64): 25 a block, 3 shared accesses
    # each, 1 wavefront. End: 12 branches (1 divergent), 10 shared loads, 10 stores (38).
    expect(r.t, requests=20, sectors=76, barriers=3 * 14, branches=12 + 3 * 56 + 12, divergent_branches=32,
           shared_requests=13 + 3 * 75 + 10, shared_wavefronts=248, shared_bank_conflicts=0)
    assert r.stats.races == []


def Brent_Kung_scan_kernel(blk, X, Y, N):
    """§11.4 (the Brent-Kung scan kernel): blockDim = SECTION_SIZE / 2 threads, a reduction
    tree (``index = (threadIdx.x + 1)*2*stride - 1``) and a reverse tree."""
    XY = blk.shared(SECTION, np.float32, name="XY")
    i = 2 * blk.bx * blk.bdx + blk.tx
    m = blk.branch(i < N)
    blk.store(XY, blk.tx, blk.load(X, i, mask=m), mask=m)
    m = blk.branch(i + blk.bdx < N)
    blk.store(XY, blk.tx + blk.bdx, blk.load(X, i + blk.bdx, mask=m), mask=m)
    stride = 1
    while stride <= blk.bdx:
        blk.sync()
        index = (blk.tx + 1) * 2 * stride - 1
        up = blk.branch(index < SECTION)
        blk.store(XY, index, blk.load(XY, index, mask=up) + blk.load(XY, index - stride, mask=up), mask=up)
        stride *= 2
    stride = SECTION // 4
    while stride > 0:
        blk.sync()
        index = (blk.tx + 1) * stride * 2 - 1
        down = blk.branch(index + stride < SECTION)
        blk.store(XY, index + stride, blk.load(XY, index + stride, mask=down) + blk.load(XY, index, mask=down),
                  mask=down)
        stride //= 2
    blk.sync()
    m = blk.branch(i < N)
    blk.store(Y, i, blk.load(XY, blk.tx, mask=m), mask=m)
    m = blk.branch(i + blk.bdx < N)
    blk.store(Y, i + blk.bdx, blk.load(XY, blk.tx + blk.bdx, mask=m), mask=m)


def test_brent_kung_scan(both):
    # 64 threads (2 warps) scan sections of 128; N = 384 on 3 blocks.
    N = 384
    x = rng(211).random(N, dtype=np.float32)
    r = both(Brent_Kung_scan_kernel, 3, 64, (x, np.zeros(N, np.float32), N))
    np.testing.assert_allclose(r.args[1], _section_scan(x, SECTION), rtol=1e-5)
    # Up-sweep, strides 1…64: active tx < 64/stride: 2 warps, then warp 0 with 32, 16, 8,
    # 4, 2, 1 lanes: 8 warp steps, 5 divergent. Wavefronts per access (index, index −
    # stride, store): lanes 2·stride words apart: stride 1: 2 a warp (×2), 2: 4, 4: 4
    # (16 lanes on 4 banks), 8: 4, 16: 4, 32: 2, 64: 1 → 23 a block per access, ideal 8.
    # Down-sweep, strides 32…1: lanes 1, 3, 7, 15, 31 of warp 0, then 32 + 31: 7 warp
    # steps, 6 divergent; wavefronts: stride 32: 1; 16: 3 lanes on one bank: 3; 8: 7
    # lanes on 2 banks: 4; 4: 15 on 4: 4; 2: 31 on 8: 4; 1: 2 + 2 (odd or even words)
    # → 20 a block per access, 3 accesses, ideal 7.
    # Loads/stores: 4 + 4 a block, full warps, 1 wavefront; barriers 7 + 6 + 1.
    expect(r.t, requests=24, sectors=96, barriers=42, branches=3 * (4 + 14 + 12 + 4), divergent_branches=33,
           shared_requests=3 * (4 + 24 + 21 + 4), shared_wavefronts=3 * (4 + 69 + 60 + 4),
           shared_ideal_wavefronts=3 * 53)
    assert r.stats.races == []


# -- Chapter 14, sparse matrix computation ----------------------------------------------------

def _sparse(rows, cols, max_per_row, seed):
    g = rng(seed)
    lengths = g.integers(0, max_per_row + 1, rows)
    col_idx = np.concatenate([np.sort(g.choice(cols, k, replace=False)) for k in lengths]).astype(np.int32)
    values = g.random(col_idx.size, dtype=np.float32)
    row_ptrs = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    dense = np.zeros((rows, cols), np.float64)
    for r in range(rows):
        dense[r, col_idx[row_ptrs[r]:row_ptrs[r + 1]]] = values[row_ptrs[r]:row_ptrs[r + 1]]
    return lengths, row_ptrs, col_idx, values, dense


def spmv_coo_kernel(blk, rowIdx, colIdx, value, numNonzeros, x, y):
    """§14.2 (SpMV with COO): one thread per non-zero, ``atomicAdd(&y[row], x[col]*value)``."""
    i = blk.bx * blk.bdx + blk.tx
    m = blk.branch(i < numNonzeros)
    row = blk.load(rowIdx, i, mask=m)
    col = blk.load(colIdx, i, mask=m)
    v = blk.load(value, i, mask=m)
    blk.atomic_add(y, row, blk.load(x, col, mask=m) * v, mask=m)


def spmv_csr_kernel(blk, rowPtrs, colIdx, value, numRows, x, y):
    """§14.3 (SpMV with CSR): one thread per row, ``for (i = rowStart; i < rowEnd; ++i)``."""
    row = blk.bx * blk.bdx + blk.tx
    m = blk.branch(row < numRows)
    total = zeros(blk)
    i = blk.load(rowPtrs, row, mask=m)
    row_end = blk.load(rowPtrs, row + 1, mask=m)
    live = blk.branch(i < row_end, mask=m)
    while live.any():
        col = blk.load(colIdx, i, mask=live)
        total = total + blk.load(x, col, mask=live) * blk.load(value, i, mask=live)
        i += 1  # ++i, in place
        live &= blk.branch(i < row_end, mask=live)
    blk.store(y, row, blk.load(y, row, mask=m) + total, mask=m)


def spmv_ell_kernel(blk, colIdx, value, nnzPerRow, numRows, x, y):
    """§14.4 (SpMV with ELL): column-major padded arrays, ``i = t*numRows + row``."""
    row = blk.bx * blk.bdx + blk.tx
    m = blk.branch(row < numRows)
    total = zeros(blk)
    count = blk.load(nnzPerRow, row, mask=m)
    t = 0
    live = blk.branch(t < count, mask=m)
    while live.any():
        i = t * numRows + row
        col = blk.load(colIdx, i, mask=live)
        total = total + blk.load(x, col, mask=live) * blk.load(value, i, mask=live)
        t += 1
        live = blk.branch(t < count, mask=live)
    blk.store(y, row, total, mask=m)


ROWS, COLS = 100, 64


def test_spmv_coo(both):
    lengths, row_ptrs, col_idx, values, dense = _sparse(ROWS, COLS, 6, 212)
    row_idx = np.repeat(np.arange(ROWS, dtype=np.int32), lengths)
    nnz = int(col_idx.size)
    x = rng(213).random(COLS, dtype=np.float32)
    blocks = -(-nnz // 64)
    r = both(spmv_coo_kernel, blocks, 64, (row_idx, col_idx, values, nnz, x, np.zeros(ROWS, np.float32)))
    np.testing.assert_allclose(r.args[5], dense @ x, rtol=1e-5)
    # Per warp of 32 non-zeros (the last partial): rowIdx, colIdx, value: consecutive
    # words; x[col] gathers; the atomic hits y[row], conflicts = lanes − distinct rows.
    warps = [np.arange(s, min(s + 32, nnz)) for s in range(0, nnz, 32)]
    seq = sum(sectors_of(4 * w, 4) for w in warps)
    gather = sum(sectors_of(4 * col_idx[w], 4) for w in warps)
    atom = sum(sectors_of(4 * row_idx[w], 4) for w in warps)
    conflicts = sum(w.size - np.unique(row_idx[w]).size for w in warps)
    expect(r.t, requests=5 * len(warps), sectors=3 * seq + gather + atom, atomics=len(warps),
           atomic_conflicts=conflicts, branches=2 * blocks, divergent_branches=int(nnz % 32 != 0))


def test_spmv_csr(both):
    lengths, row_ptrs, col_idx, values, dense = _sparse(ROWS, COLS, 6, 214)
    x = rng(215).random(COLS, dtype=np.float32)
    y0 = rng(216).random(ROWS, dtype=np.float32)
    r = both(spmv_csr_kernel, 4, 32, (row_ptrs, col_idx, values, ROWS, x, y0))
    np.testing.assert_allclose(r.args[5], y0 + dense @ x, rtol=1e-5)
    # Rows 0–99 on 4 blocks of 32: warp 3 has rows 96–99. Trip t of a warp: the rows with
    # more than t non-zeros load colIdx[rowPtrs[row] + t], value[…] and x[col].
    req = sec = branches = divergent = 0
    for w in range(4):
        rows = np.arange(32 * w, min(32 * w + 32, ROWS))
        live = rows
        branches += 1  # row < numRows
        divergent += rows.size < 32
        t = 0
        while True:
            branches += 1  # the loop test, by the rows still looping
            go = live[lengths[live] > t]
            divergent += 0 < go.size < live.size
            if go.size == 0:
                break
            at = row_ptrs[go] + t
            req += 3
            sec += 2 * sectors_of(4 * at, 4) + sectors_of(4 * col_idx[at], 4)
            live = go
            t += 1
    # Plus rowPtrs[row], rowPtrs[row + 1], y[row] load and store: 4 per warp, consecutive
    # words: 4 sectors a full warp (rowPtrs[row + 1] starts 4 B in: 5); rows 96–99 touch
    # bytes 384–399 (or 388–403 for rowPtrs[row + 1]): 1 sector each.
    fixed = 3 * (4 + 5 + 4 + 4) + (1 + 1 + 1 + 1)
    expect(r.t, requests=req + 16, sectors=sec + fixed, branches=branches, divergent_branches=divergent)


def test_spmv_ell(both):
    lengths, row_ptrs, col_idx, values, dense = _sparse(ROWS, COLS, 6, 217)
    width = int(lengths.max())
    ell_col = np.zeros((width, ROWS), np.int32)  # column-major: element t of row r at t·rows + r
    ell_val = np.zeros((width, ROWS), np.float32)
    for r_ in range(ROWS):
        k = lengths[r_]
        ell_col[:k, r_] = col_idx[row_ptrs[r_]:row_ptrs[r_] + k]
        ell_val[:k, r_] = values[row_ptrs[r_]:row_ptrs[r_] + k]
    x = rng(218).random(COLS, dtype=np.float32)
    nnz_per_row = lengths.astype(np.int32)
    r = both(spmv_ell_kernel, 4, 32, (ell_col.ravel(), ell_val.ravel(), nnz_per_row, ROWS, x,
                                      np.zeros(ROWS, np.float32)))
    np.testing.assert_allclose(r.args[5], dense @ x, rtol=1e-5)
    req = sec = branches = divergent = 0
    for w in range(4):
        rows = np.arange(32 * w, min(32 * w + 32, ROWS))
        live = rows
        branches += 1
        divergent += rows.size < 32
        t = 0
        while True:
            branches += 1
            go = live[lengths[live] > t]
            divergent += 0 < go.size < live.size
            if go.size == 0:
                break
            at = t * ROWS + go  # coalesced: consecutive rows of slot t
            req += 3
            sec += 2 * sectors_of(4 * at, 4) + sectors_of(4 * ell_col.ravel()[at], 4)
            live = go
            t += 1
    # nnzPerRow[row] and y[row]: 3 full warps × 4 sectors + rows 96–99 (1 sector), twice.
    expect(r.t, requests=req + 8, sectors=sec + 2 * 13, branches=branches, divergent_branches=divergent)


# -- Chapter 12, merge ------------------------------------------------------------------------

def co_rank(blk, k, A, m, B, n, reach):
    """§12.4, the co-rank function: a binary search per thread for the i (and j = k − i) with
    A[i−1] <= B[j] and B[j−1] < A[i], by the book's two ``if`` tests and their ``delta``
    steps. ``reach``: the threads that call it."""
    i = np.minimum(k, m)
    j = k - i
    i_low = np.maximum(0, k - n)
    j_low = np.maximum(0, k - m)
    live = blk.branch(reach, mask=reach)  # while (active): every caller enters
    while live.any():
        pre = live & (i > 0) & (j < n)  # if (i > 0 && j < n && A[i-1] > B[j])
        c1 = blk.branch(pre & (blk.load(A, i - 1, mask=pre) > blk.load(B, j, mask=pre)), mask=live)
        rest = live & ~c1
        pre = rest & (j > 0) & (i < m)  # else if (j > 0 && i < m && B[j-1] >= A[i])
        c2 = blk.branch(pre & (blk.load(B, j - 1, mask=pre) >= blk.load(A, i, mask=pre)), mask=rest)
        d1 = (i - i_low + 1) >> 1
        d2 = (j - j_low + 1) >> 1
        j_low = np.where(c1, j, j_low)
        i_low = np.where(c2, i, i_low)
        i, j = np.where(c1, i - d1, np.where(c2, i + d2, i)), np.where(c1, j + d1, np.where(c2, j - d2, j))
        live = blk.branch(c1 | c2, mask=live)  # else { active = false; }, then the while test
    return i


def merge_basic_kernel(blk, A, m, B, n, C):
    """§12.5 (the basic parallel merge kernel): each thread finds its output range's
    co-ranks and merges that piece sequentially (the book's merge_sequential, inlined).
    ``elementsPerThread = ceil((m+n)/(blockDim.x*gridDim.x))`` divides integers before the
    ceil in C; the test makes m + n a multiple of the thread count, where that is exact."""
    tid = blk.bx * blk.bdx + blk.tx
    per_thread = (m + n) // (blk.bdx * blk.gdx)
    k_curr = tid * per_thread
    k_next = np.minimum((tid + 1) * per_thread, m + n)
    everyone = np.ones((blk.nblocks, blk.nthreads), bool)
    i_curr = co_rank(blk, k_curr, A, m, B, n, everyone)
    i_next = co_rank(blk, k_next, A, m, B, n, everyone)
    ia, ib, kc = i_curr, k_curr - i_curr, k_curr
    ia_end, ib_end = i_next, k_next - i_next
    live = blk.branch((ia < ia_end) & (ib < ib_end))  # while ((i < m) && (j < n))
    while live.any():
        a = blk.load(A, ia, mask=live)
        b = blk.load(B, ib, mask=live)
        take_a = blk.branch(a <= b, mask=live)
        take_b = live & ~take_a
        blk.store(C, kc, a, mask=take_a)
        blk.store(C, kc, b, mask=take_b)
        ia, ib, kc = ia + take_a, ib + take_b, kc + live
        live = blk.branch((ia < ia_end) & (ib < ib_end), mask=live)
    a_done = blk.branch(ia == ia_end)  # if (i == m) copy the rest of B, else the rest of A
    live = blk.branch(ib < ib_end, mask=a_done)
    while live.any():
        b = blk.load(B, ib, mask=live)
        blk.store(C, kc, b, mask=live)
        ib, kc = ib + live, kc + live
        live = blk.branch(ib < ib_end, mask=live)
    live = blk.branch(ia < ia_end, mask=~a_done)
    while live.any():
        a = blk.load(A, ia, mask=live)
        blk.store(C, kc, a, mask=live)
        ia, kc = ia + live, kc + live
        live = blk.branch(ia < ia_end, mask=live)


def test_merge_basic(both):
    # m = 100, n = 156 sorted ints with repeats inside and across the arrays; 2 blocks of 32
    # threads, 4 outputs each.
    g = rng(219)
    A = np.sort(g.integers(0, 60, 100)).astype(np.int32)
    B = np.sort(g.integers(0, 60, 156)).astype(np.int32)
    m, n = A.size, B.size
    r = both(merge_basic_kernel, 2, 32, (A, m, B, n, np.zeros(m + n, np.int32)))
    np.testing.assert_array_equal(r.args[4], np.sort(np.concatenate([A, B]), kind="stable"))
    # Every output is stored once, by one lane: the four store lines' active lanes add up to
    # m + n, 4 bytes each.
    stores = [lc.counters for lc in r.stats.lines if lc.site.source.startswith("blk.store(C, kc")]
    assert len(stores) == 4
    assert sum(c.active_lanes for c in stores) == m + n and sum(c.requested_bytes for c in stores) == 4 * (m + n)
    # Requests and sectors depend on the data: derived here by running each thread's C code
    # in plain Python, recording per loop trip which element each load or store touches, and
    # counting per warp and trip (a request if a lane of the warp touches it; the distinct
    # 32-B sectors of those lanes' elements).
    requests, sectors = _merge_counts(A, B, threads=64, per_thread=4)
    expect(r.t, requests=requests, sectors=sectors)
    assert r.stats.races == []


def _merge_counts(A, B, threads, per_thread):
    m, n = A.size, B.size

    def co_rank_trips(k):
        i, j = min(k, m), k - min(k, m)
        i_low, j_low = max(0, k - n), max(0, k - m)
        trips = []
        while True:
            t = {}
            if i > 0 and j < n:
                t["A[i-1]"], t["B[j]"] = i - 1, j
            c1 = i > 0 and j < n and A[i - 1] > B[j]
            if not c1 and j > 0 and i < m:
                t["B[j-1]"], t["A[i]"] = j - 1, i
            c2 = not c1 and j > 0 and i < m and B[j - 1] >= A[i]
            trips.append(t)
            if c1:
                d = (i - i_low + 1) >> 1
                j_low, j, i = j, j + d, i - d
            elif c2:
                d = (j - j_low + 1) >> 1
                i_low, i, j = i, i + d, j - d
            else:
                return i, trips

    def merge_trips(i, i_end, j, j_end, k):
        main, tail = [], []
        while i < i_end and j < j_end:
            take_a = A[i] <= B[j]
            main.append({"A[i]": i, "B[j]": j, "C<-A" if take_a else "C<-B": k})
            i, j, k = i + take_a, j + (not take_a), k + 1
        while j < j_end if i == i_end else i < i_end:  # the tail of B (i == i_end) or of A
            tail.append({"B tail": j, "C<-B tail": k} if i == i_end else {"A tail": i, "C<-A tail": k})
            i, j, k = (i, j + 1, k + 1) if i == i_end else (i + 1, j, k + 1)
        return main, tail

    phases = [[] for _ in range(threads)]  # per thread: co_rank, co_rank, merge, tail trips
    for tid in range(threads):
        k0, k1 = tid * per_thread, min((tid + 1) * per_thread, m + n)
        i0, t0 = co_rank_trips(k0)
        i1, t1 = co_rank_trips(k1)
        main, tail = merge_trips(i0, i1, k0 - i0, k1 - i1, k0)
        phases[tid] = [t0, t1, main, tail]
    requests = sectors = 0
    for w in range(0, threads, 32):
        for phase in range(4):
            lanes = [phases[t][phase] for t in range(w, w + 32)]
            for trip in range(max(len(x) for x in lanes)):
                touched = {}
                for x in lanes:
                    if trip < len(x):
                        for key, element in x[trip].items():
                            # tails of A and of B are different instructions, as are the two stores
                            touched.setdefault(key, set()).add(element * 4 // 32)
                requests += len(touched)
                sectors += sum(len(v) for v in touched.values())
    return requests, sectors


# -- The same kernels with their guard deleted: the error names the array, axis and thread ------

def convolution_2D_no_ghost_test(blk, N, F_c, P, r, width, height):
    """Fig. 7.9 without ``if (inRow >= 0 && inRow < height && inCol >= 0 && inCol < width)``,
    N and P indexed [row][col] as the book draws them."""
    out_col = blk.bx * blk.bdx + blk.tx
    out_row = blk.by * blk.bdy + blk.ty
    p = zeros(blk)
    for f_row in range(2 * r + 1):
        for f_col in range(2 * r + 1):
            p = p + F_c[f_row, f_col] * blk.load(N, (out_row - r + f_row, out_col - r + f_col))
    blk.store(P, (out_row, out_col), p)


def stencil_no_interior_test(blk, in_, out, N):
    """Fig. 8.6 without its interior test, in[i][j][k] indexed as a 3-D array."""
    i = blk.bz * blk.bdz + blk.tz
    j = blk.by * blk.bdy + blk.ty
    k = blk.bx * blk.bdx + blk.tx
    v = C7[0] * blk.load(in_, (i, j, k)) + C7[1] * blk.load(in_, (i, j, k - 1))
    blk.store(out, (i, j, k), v)


def test_deleted_guards_are_named():
    from zoo_engines import raise_both
    from simtdocs import MemcheckError
    W = 32
    message = raise_both(MemcheckError, convolution_2D_no_ghost_test, (2, 2), (16, 16),
                         (rng(220).random((W, W), dtype=np.float32), np.ones((3, 3), np.float32),
                          np.zeros((W, W), np.float32), 1, W, W))
    # The first load, (fRow, fCol) = (0, 0): thread (0,0,0) of block (0,0,0) reads N[-1][-1];
    # the first axis out of bounds is the row, named as the reader indexes N.
    assert "by thread (0,0,0) in block (0,0,0)" in message and "row -1 of N[32][32]" in message
    N = 16
    message = raise_both(MemcheckError, stencil_no_interior_test, (2, 2, 2), (8, 8, 8),
                         (rng(221).random((N, N, N), dtype=np.float32), np.zeros((N, N, N), np.float32), N))
    # in[i][j][k - 1] at k = 0: the last axis (x, threadIdx.x's) is -1.
    assert "by thread (0,0,0) in block (0,0,0)" in message and "x = -1 of in_[16][16][16]" in message


def SharedMemorySumReductionKernel(blk, input_, output):
    """§10.6, Fig. 10.11: the first add while loading into ``input_s``, then the convergent
    sweep in shared memory with the barrier at the top of each step."""
    input_s = blk.shared(256, np.float32, name="input_s")
    t = blk.tx
    blk.store(input_s, t, blk.load(input_, t) + blk.load(input_, t + 256))
    stride = blk.bdx // 2
    while stride >= 1:
        blk.sync()
        m = blk.branch(t < stride)
        blk.store(input_s, t, blk.load(input_s, t, mask=m) + blk.load(input_s, t + stride, mask=m), mask=m)
        stride //= 2
    first = blk.branch(t == 0)
    blk.store(output, 0 * t, blk.load(input_s, 0 * t, mask=first), mask=first)


def test_reduction_shared_memory(both):
    x = rng(222).random(512, dtype=np.float32)  # BLOCK_DIM = 256, one block
    r = both(SharedMemorySumReductionKernel, 1, 256, (x, np.zeros(1, np.float32)))
    np.testing.assert_allclose(r.args[1][0], x.sum(dtype=np.float64), rtol=1e-5)
    # Loads: 2 × 8 warps, 4 sectors. Strides 128…1: 8 barriers, 8 × 8 branches; 4, 2, 1
    # full warps then warp 0 in part (5 divergent): 12 warp steps × 3 shared accesses;
    # + 8 stores and 1 load of input_s[0]; tx == 0: 8 branches, 1 divergent; 1 store.
    expect(r.t, requests=17, sectors=65, barriers=8, branches=72, divergent_branches=6, shared_requests=45,
           shared_wavefronts=45)
    assert r.stats.races == []
