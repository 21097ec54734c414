"""Speed without cliffs: simtdocs against plain numpy on ordinary and awkward shapes.

    python benchmarks/shapes.py              # the suite (about a minute on 2 cores)
    python benchmarks/shapes.py --quick      # small sizes: checks the script still works
    python benchmarks/shapes.py --cases ragged,gather --repeat 5

Every case runs a kernel with ``simtdocs.launch`` (every counter on) against the numpy
program that does the same arithmetic and data movement without threads and without
counting: ``a + b``, ``A.T``, ``a[idx]``, the reduction's eight halving steps on every block
at once, the histogram's per-block histograms summed over the blocks. The ratio
simtdocs/numpy is what a reader pays for simulating threads and counting; the targets
(issue 10) are every case ≤ 20×, the median ≤ 8×, and no case more than 3× its aligned twin
(ragged vs exact, 16×16 vs 32×8).

A second column, "per thread", runs the kernel function itself through plain numpy that
counts nothing (``floor.py``: the kernel's own per-thread index arithmetic, loads and
stores as numpy indexing, atomics as ``np.add.at``): how a simulator without the engine's
shortcuts would fare, printed for scale and not judged. Results of all three are checked
against each other. Peak memory of one launch is measured with tracemalloc (numpy reports
its buffers to it). A benchmark, not a test: a missed target prints MISS and the script
exits 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import kernels as K  # noqa: E402
from floor import run as run_in_numpy  # noqa: E402
from simtdocs import cdiv, launch  # noqa: E402

WORST_TARGET, MEDIAN_TARGET, TWIN_TARGET = 20.0, 8.0, 3.0
rng = np.random.default_rng(0)


# -- kernels that are not the lectures' (those come from kernels.py) ------------------------


def reverse(blk, a, b, n):
    i = blk.bx * blk.bdx + blk.tx
    m = i < n
    blk.store(b, n - 1 - i, blk.load(a, i, mask=m), mask=m)


def gather(blk, a, idx, out, n):
    i = blk.bx * blk.bdx + blk.tx
    m = i < n
    j = blk.load(idx, i, mask=m)
    blk.store(out, i, blk.load(a, j, mask=m), mask=m)


def divergent(blk, v, out, n):
    i = blk.bx * blk.bdx + blk.tx
    x = blk.load(v, i)
    pos = blk.branch(x > 0)
    blk.store(out, i, x * 2, mask=pos)
    blk.store(out, i, -x, mask=~pos)


def histogram(blk, data, bins, n):
    """256 bins in shared memory, atomics on them, then one atomic per bin to global."""
    h = blk.shared(256, np.int32, name="h")
    blk.store(h, blk.tx, 0)
    blk.sync()
    i = blk.bx * blk.bdx + blk.tx
    m = i < n
    blk.atomic_add(h, blk.load(data, i, mask=m), 1, mask=m)
    blk.sync()
    blk.atomic_add(bins, blk.tx, blk.load(h, blk.tx))


def grid_stride(blk, x, y, alpha, n):
    i = blk.bx * blk.bdx + blk.tx
    stride = blk.bdx * blk.gdx
    while True:
        m = i < n
        if not m.any():
            break
        blk.store(y, i, alpha * blk.load(x, i, mask=m) + blk.load(y, i, mask=m), mask=m)
        i = i + stride


def box3d(blk, a, b):
    """A 3-D block (8×8×4) over a volume: b = 2a."""
    x = blk.bx * blk.bdx + blk.tx
    y = blk.by * blk.bdy + blk.ty
    z = blk.bz * blk.bdz + blk.tz
    blk.store(b, (z, y, x), 2 * blk.load(a, (z, y, x)))


def transpose_naive_16(blk, A, B, n):
    """Naive transpose with one element per thread (works for 16×16 and 32×8 blocks)."""
    x = blk.bx * blk.bdx + blk.tx
    y = blk.by * blk.bdy + blk.ty
    blk.store(B, x * n + y, blk.load(A, y * n + x))


# -- cases ---------------------------------------------------------------------------------


@dataclass
class Case:
    """One shape: the kernel, its launch, and the arrays it writes (compared after each run)."""

    key: str
    name: str
    kernel: Callable
    grid: object
    block: object
    args: Callable[[], tuple]  # fresh arguments (outputs zeroed) for one run
    numpy: Callable[[], np.ndarray]  # the same arithmetic and data movement, without threads
    result: int = -1  # which argument holds the result
    twin: str | None = None  # the aligned case this one must stay within 3× of

    def runner(self, run):
        args = self.args()
        return lambda: (run(self.kernel, self.grid, self.block, args), args[self.result])[1]


def cases(quick: bool) -> list[Case]:
    n22 = 1 << (14 if quick else 22)
    n20 = 1 << (12 if quick else 20)
    side = 128 if quick else 1024
    f32 = np.float32
    a, b = rng.random(n22, f32), rng.random(n22, f32)
    A = rng.random((side, side), f32)
    out = []
    for key, n, twin in (("vadd", n22, None), ("ragged", n22 - 5, "vadd")):
        out.append(Case(key, f"vector add {n:,}" + (" (ragged)" if twin else ""), K.vector_add, cdiv(n, 256), 256,
                        lambda n=n: (a[:n], b[:n], np.zeros(n, f32), n), lambda n=n: a[:n] + b[:n], -2, twin))
    for key, block, twin in (("tr32x8", (32, 8), None), ("tr16x16", (16, 16), "tr32x8")):
        out.append(Case(key, f"naive transpose {side}², {block[0]}×{block[1]}", transpose_naive_16,
                        (side // block[0], side // block[1]), block, lambda: (A, np.zeros_like(A), side),
                        lambda: np.ascontiguousarray(A.T), 1, twin))
    out.append(Case("tiled", f"tiled transpose {side}², 32×33 tile", K.transpose_tiled, (side // 32, side // 32),
                    (32, 8), lambda: (A, np.zeros_like(A), side), lambda: np.ascontiguousarray(A.T), 1))
    out.append(Case("reverse", f"reverse {n22:,}", reverse, cdiv(n22, 256), 256,
                    lambda: (a, np.zeros_like(a), n22), lambda: a[::-1].copy(), 1))
    idx = rng.integers(0, n22, n22).astype(np.int32)
    out.append(Case("gather", f"random gather {n22:,}", gather, cdiv(n22, 256), 256,
                    lambda: (a, idx, np.zeros_like(a), n22), lambda: a[idx], 2))
    x = rng.random(n20, f32)

    def halving():  # the kernel's eight halving steps, in numpy
        s = x.reshape(-1, 256).copy()
        half = 128
        while half:
            s[:, :half] += s[:, half:2 * half]
            half //= 2
        return s[:, 0]

    out.append(Case("reduce", f"reduction {n20:,} (8 syncs)", K.reduce_v3, n20 // 256, 256,
                    lambda: (x, np.zeros(n20 // 256, f32)), halving))
    v = rng.standard_normal(n22).astype(f32)
    out.append(Case("branch", f"divergent branch {n22:,}", divergent, n22 // 256, 256,
                    lambda: (v, np.zeros_like(v), n22), lambda: np.where(v > 0, v * 2, -v), 1))
    data = rng.integers(0, 256, n22).astype(np.int32)

    def per_block_histograms():  # each block's 256 bins, then one sum over the blocks
        keys = data.reshape(-1, 256) + (np.arange(n22 // 256) * 256)[:, None]
        return np.bincount(keys.reshape(-1), minlength=n22).reshape(-1, 256).sum(axis=0)

    out.append(Case("hist", f"shared histogram {n22:,} (atomics)", histogram, cdiv(n22, 256), 256,
                    lambda: (data, np.zeros(256, np.int32), n22), per_block_histograms, 1))
    y0 = rng.random(n22, f32)
    out.append(Case("stride", f"grid-stride loop {n22:,}", grid_stride, 1024, 256,
                    lambda: (a, y0.copy(), f32(2), n22), lambda: f32(2) * a + y0, 1))
    # 2^22 threads like the 1-D cases. At 128³ (2^21) both volumes fit this machine's 32 MB L3
    # cache and numpy's ``2 * vol`` runs at 60+ GB/s: the ratio then measures the cache.
    nz, ny, nx = (32, 32, 32) if quick else (256, 128, 128)
    vol = rng.random((nz, ny, nx), f32)
    out.append(Case("box3d", f"3-D block 8×8×4 over {nz}×{ny}×{nx}", box3d, (nx // 8, ny // 8, nz // 4), (8, 8, 4),
                    lambda: (vol, np.zeros_like(vol)), lambda: 2 * vol, 1))
    return out


def best(f, repeat):
    """Best CPU time of ``repeat`` runs: both sides are single-threaded numpy, and CPU time is
    far less disturbed than wall time on a shared machine."""
    times = []
    for _ in range(repeat):
        t = time.process_time()
        f()
        times.append(time.process_time() - t)
    return min(times)


def peak_bytes(f) -> int:
    tracemalloc.start()
    f()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--cases", default="")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    chosen = [c for c in cases(args.quick) if not args.cases or c.key in args.cases.split(",")]
    rows, ratio = [], {}
    for c in chosen:
        sim, per_thread = c.runner(launch), c.runner(run_in_numpy)
        want = c.numpy()
        for got in (sim(), per_thread()):  # warm-up, and the check
            np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=c.name)
        ts, tn, tp = best(sim, args.repeat), best(c.numpy, args.repeat), best(per_thread, args.repeat)
        ratio[c.key] = ts / tn
        rows.append((c, ts, tn, tp, peak_bytes(sim)))
    print(f"{'case':38} {'simtdocs':>10} {'numpy':>9} {'ratio':>6} {'per thread':>11} {'ratio':>6} {'peak MB':>8}")
    for c, ts, tn, tp, peak in rows:
        print(f"{c.name:38} {ts * 1e3:8.1f}ms {tn * 1e3:7.2f}ms {ts / tn:5.1f}× {tp * 1e3:9.1f}ms "
              f"{ts / tp:5.1f}× {peak / 2**20:8.0f}")
    worst = max(ratio, key=ratio.get)
    median = statistics.median(ratio.values())
    print(f"\nworst {ratio[worst]:.1f}× ({worst}), median {median:.1f}×")
    per_thread = {c.key: ts / tp for c, ts, _, tp, _ in rows}
    print(f"against the per-thread numpy: worst {max(per_thread.values()):.1f}×, "
          f"median {statistics.median(per_thread.values()):.1f}× (for scale, not a target)")
    checks = [(f"every case ≤ {WORST_TARGET:.0f}×", ratio[worst] <= WORST_TARGET),
              (f"median ≤ {MEDIAN_TARGET:.0f}×", median <= MEDIAN_TARGET)]
    times = {c.key: ts for c, ts, *_ in rows}
    for c, ts, *_ in rows:
        if c.twin in times:
            checks.append((f"{c.key} ≤ {TWIN_TARGET:.0f}× {c.twin}: {ts / times[c.twin]:.1f}×",
                           ts <= TWIN_TARGET * times[c.twin]))
    if not args.quick and (not args.cases or "vadd" in args.cases):
        n = 1 << 24
        a, b, c = (np.ones(n, np.float32) for _ in range(3))
        peak = peak_bytes(lambda: launch(K.vector_add, cdiv(n, 256), 256, (a, b, c, n)))
        checks.append((f"2^24-thread vector add peak {peak / 2**30:.2f} GB < 2 GB", peak < 2 * 2**30))
    for text, ok in checks:
        print(f"  {'PASS' if ok else 'MISS'}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
