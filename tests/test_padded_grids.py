"""Blocks that run nothing: a grid rounded up past the data, as the OLCF transpose exercise
launches 129 × 129 blocks of 32 × 32 for a 4096² matrix (here at a size the reference can run).

The padded launch must give the exact launch's data and memory counters, on both engines and
at every batching: the extra blocks only evaluate the guard. Their cost belongs in
benchmarks (``benchmarks/zoo.py``); here, the answers.
"""

import numpy as np
import pytest

from simtdocs import launch, reference

M = 96  # 3 × 3 tiles of 32


def naive(blk, a, c, m):
    row = blk.by * blk.bdy + blk.ty
    col = blk.bx * blk.bdx + blk.tx
    ok = blk.branch((row < m) & (col < m))
    blk.store(c, col * m + row, blk.load(a, row * m + col, mask=ok), mask=ok)


def tiled(blk, a, c, m):
    tile = blk.shared((32, 33), np.float64, name="tile")
    x0, y0 = blk.bx * 32, blk.by * 32
    for j in range(0, 32, blk.bdy):  # 32 × 8 threads: four rows each
        ok = blk.branch((y0 + blk.ty + j < m) & (x0 + blk.tx < m))
        blk.store(tile, (blk.ty + j, blk.tx), blk.load(a, (y0 + blk.ty + j) * m + x0 + blk.tx, mask=ok), mask=ok)
    blk.sync()
    for j in range(0, 32, blk.bdy):
        ok = blk.branch((x0 + blk.ty + j < m) & (y0 + blk.tx < m))
        blk.store(c, (x0 + blk.ty + j) * m + y0 + blk.tx, blk.load(tile, (blk.tx, blk.ty + j), mask=ok), mask=ok)


def stencil(blk, u, v, n):
    """A 3-D 7-point stencil with a shared halo in x, guarded at the faces."""
    s = blk.shared((blk.bdz, blk.bdy, blk.bdx + 2), np.float32, name="s")
    x, y, z = blk.bx * blk.bdx + blk.tx, blk.by * blk.bdy + blk.ty, blk.bz * blk.bdz + blk.tz
    inside = (x < n) & (y < n) & (z < n)
    blk.store(s, (blk.tz, blk.ty, blk.tx + 1), blk.load(u, (z, y, x), mask=inside), mask=inside)
    left = inside & (blk.tx == 0) & (x > 0)
    blk.store(s, (blk.tz, blk.ty, blk.tx), blk.load(u, (z, y, x - 1), mask=left), mask=left)
    right = inside & ((blk.tx == blk.bdx - 1) | (x == n - 1)) & (x < n - 1)
    blk.store(s, (blk.tz, blk.ty, blk.tx + 2), blk.load(u, (z, y, x + 1), mask=right), mask=right)
    blk.sync()
    core = inside & (x > 0) & (x < n - 1) & (y > 0) & (y < n - 1) & (z > 0) & (z < n - 1)
    total = blk.load(s, (blk.tz, blk.ty, blk.tx), mask=core) + blk.load(s, (blk.tz, blk.ty, blk.tx + 2), mask=core)
    for dz, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        total = total + blk.load(u, (z + dz, y + dy, x), mask=core)
    blk.store(v, (z, y, x), total - 6 * blk.load(s, (blk.tz, blk.ty, blk.tx + 1), mask=core), mask=core)


# Barriers are not among them: every block of the grid, padding included, passes each sync.
MEMORY = ("sectors", "requests", "requested_bytes", "shared_wavefronts", "shared_ideal_wavefronts",
          "shared_requests")


def runs(kernel, grid, block, make):
    """(exact, padded) × (reference, fast batched, fast one block per pass): outputs and stats."""
    out = {}
    for name, g in (("exact", grid), ("padded", tuple(d + 1 for d in grid))):
        for engine, kw in ((reference.launch, {}), (launch, {}), (launch, {"blocks_per_pass": 1})):
            args = make()
            stats = engine(kernel, g, block, args=args, **kw)
            out.setdefault(name, []).append((args, stats))
    return out


@pytest.mark.parametrize("kernel, block", [(naive, (32, 8)), (tiled, (32, 8))])
def test_a_padded_transpose_moves_and_counts_what_the_exact_one_does(kernel, block):
    a = np.random.default_rng(5).random(M * M)
    grid = (M // block[0], M // block[1]) if kernel is naive else (M // 32, M // 32)
    found = runs(kernel, grid, block, lambda: (a, np.zeros(M * M), M))
    for name, results in found.items():
        for args, stats in results:
            np.testing.assert_array_equal(args[1].reshape(M, M), a.reshape(M, M).T)
            assert stats.races == []
        ref = results[0][1]
        for _, stats in results[1:]:
            assert stats.totals == ref.totals, name
    exact, padded = found["exact"][0][1].totals, found["padded"][0][1].totals
    for counter in MEMORY:
        assert getattr(padded, counter) == getattr(exact, counter), counter
    if kernel is naive:
        # 96² doubles, 288 warps of 32 lanes along a row: a load reads 32 adjacent doubles
        # (256 bytes, 8 sectors), a store writes 32 doubles a column apart (32 sectors).
        assert exact.sectors == 288 * 8 + 288 * 32
        assert padded.divergent_branches == exact.divergent_branches == 0


def test_a_padded_3d_stencil_with_a_shared_halo_matches_numpy_and_the_exact_grid():
    n = 18
    rng = np.random.default_rng(9)
    u = rng.random((n, n, n), dtype=np.float32)
    want = np.zeros_like(u)
    c = u[1:-1, 1:-1, 1:-1]
    want[1:-1, 1:-1, 1:-1] = (u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:] + u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1]
                              + u[1:-1, :-2, 1:-1] + u[1:-1, 2:, 1:-1] - 6 * c)
    found = runs(stencil, (3, 3, 3), (6, 6, 6), lambda: (u, np.zeros_like(u), n))
    for name, results in found.items():
        for args, stats in results:
            np.testing.assert_allclose(args[1], want, rtol=1e-5, atol=1e-5)
            assert stats.races == []
        for _, stats in results[1:]:
            assert stats.totals == results[0][1].totals, name
    exact, padded = found["exact"][0][1].totals, found["padded"][0][1].totals
    for counter in MEMORY:
        assert getattr(padded, counter) == getattr(exact, counter), counter



def shifted_copy(blk, u, v, n):
    """``v[z][y][x] = u[z][y][x] + 1`` where every coordinate is at least one block in and
    inside the array, on a grid one block too big: the first and the last plane, row and
    column of blocks run nothing, so the blocks that do are a box starting inside the pass."""
    x, y, z = blk.bx * blk.bdx + blk.tx, blk.by * blk.bdy + blk.ty, blk.bz * blk.bdz + blk.tz
    ok = blk.branch((x >= blk.bdx) & (y >= blk.bdy) & (z >= blk.bdz) & (x < n) & (y < n) & (z < n))
    at = (z * n + y) * n + x
    blk.store(v, at, blk.load(u, at, mask=ok) + 1, mask=ok)


def shifted_copy_2d(blk, u, v, n):
    x, y = blk.bx * blk.bdx + blk.tx, blk.by * blk.bdy + blk.ty
    ok = blk.branch((x >= blk.bdx) & (y >= blk.bdy) & (x < n) & (y < n))
    blk.store(v, y * n + x, blk.load(u, y * n + x, mask=ok) + 1, mask=ok)


@pytest.mark.parametrize("kernel, grid, block, n", [(shifted_copy, (5, 5, 5), (4, 4, 4), 16),
                                                    (shifted_copy_2d, (5, 9, 1), (8, 4, 1), 32)],
                         ids=["3-D, whole planes", "2-D, whole rows"])
def test_a_box_of_blocks_that_starts_inside_the_pass_moves_its_own_elements(kernel, grid, block, n):
    dims = 3 if grid[2] > 1 else 2
    u = np.random.default_rng(3).random((n,) * dims).astype(np.float32)
    want = np.zeros_like(u)
    inner = tuple(slice(b, None) for b in (block[2], block[1], block[0])[3 - dims:])
    want[inner] = u[inner] + 1
    results = []
    for engine, kw in ((reference.launch, {}), (launch, {}), (launch, {"blocks_per_pass": 1})):
        out = np.zeros_like(u)
        results.append((engine(kernel, grid, block, args=(u.reshape(-1), out.reshape(-1), n), **kw), out))
    for stats, out in results:
        np.testing.assert_array_equal(out, want)
        assert stats.totals == results[0][0].totals


def every_lane_loads(blk, u, seen, n):
    """Every thread's loaded value, idle blocks' threads included, stored unmasked: a load
    hands the lanes that do not run it 0. Strided (``2·x``), so the blocks that run it
    move through views: runs of blocks on a 1-D grid, one box of them on a 2-D grid."""
    x, y = blk.bx * blk.bdx + blk.tx, blk.by * blk.bdy + blk.ty
    if blk.gdy == 1:  # blocks 1 and 2 of 5 run it: idle blocks before, between none, after
        ok = blk.branch((x >= blk.bdx) & (x < 3 * blk.bdx))
    else:  # a box of blocks with idle blocks on every side
        ok = blk.branch((x >= blk.bdx) & (x < 4 * blk.bdx) & (y >= blk.bdy) & (y < 3 * blk.bdy))
    v = blk.load(u, y * n + 2 * x, mask=ok)
    blk.store(seen, y * (blk.gdx * blk.bdx) + x, v)


@pytest.mark.parametrize("grid, block", [((5,), (32,)), ((5, 4), (8, 4))], ids=["1-D runs", "2-D box"])
def test_the_blocks_around_the_ones_that_load_get_zeros(grid, block):
    n = 100
    u = np.random.default_rng(4).random(n * 40).astype(np.float32) + 1  # no element is 0
    width = grid[0] * block[0]
    height = grid[1] * block[1] if len(grid) > 1 else 1
    y, x = np.divmod(np.arange(width * height), width)
    if len(grid) == 1:
        runs_it = (x >= 32) & (x < 96)
    else:
        runs_it = (x >= 8) & (x < 32) & (y >= 4) & (y < 12)
    want = np.where(runs_it, u[np.minimum(y * n + 2 * x, u.size - 1)], 0)
    for engine, kw in ((reference.launch, {}), (launch, {}), (launch, {"blocks_per_pass": 1})):
        seen = np.full(width * height, -1, np.float32)
        engine(every_lane_loads, grid, block, args=(u, seen, n), **kw)
        np.testing.assert_array_equal(seen, want)
