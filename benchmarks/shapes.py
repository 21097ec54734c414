"""Speed without cliffs: simtdocs against plain numpy on ordinary and awkward shapes.

    python benchmarks/shapes.py              # the suite (about a minute on 2 cores)
    python benchmarks/shapes.py --quick      # small sizes: checks the script still works
    python benchmarks/shapes.py --cases ragged,gather --repeat 5

Every case runs a kernel with ``simtdocs.launch`` (every counter on) and a plain-numpy
program that does the same arithmetic and data movement without counting: the floor a
simulator cannot beat. Results are checked against each other. The ratio simtdocs/numpy
is what a reader pays for the counters; the targets (issue 10) are every case ≤ 20×, the
median ≤ 8×, and no case more than 3× its aligned twin (ragged vs exact, 16×16 vs 32×8).
Peak memory of one launch is measured with tracemalloc (numpy reports its buffers to it).
A benchmark, not a test: a missed target prints MISS and the script exits 0.
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


def box3d(blk, a, b, n):
    """A 3-D block (8×8×4) over an n³ volume: b = 2a."""
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
    key: str
    name: str
    sim: Callable[[], object]  # runs the launch; returns what to compare
    floor: Callable[[], object]  # plain numpy, same work; returns the same
    twin: str | None = None  # the aligned case this one must stay within 3× of


def cases(quick: bool) -> list[Case]:
    n22 = 1 << (14 if quick else 22)
    n20 = 1 << (12 if quick else 20)
    side = 128 if quick else 1024
    out = []

    def vadd(n):
        a, b = rng.random(n, np.float32), rng.random(n, np.float32)
        c = np.empty(n, np.float32)
        return (lambda: (launch(K.vector_add, cdiv(n, 256), 256, (a, b, c, n)), c)[1],
                lambda: np.add(a, b, out=np.empty_like(a)))

    sim, floor = vadd(n22)
    out.append(Case("vadd", f"vector add {n22:,}", sim, floor))
    sim, floor = vadd(n22 - 5)
    out.append(Case("ragged", f"vector add {n22 - 5:,} (ragged)", sim, floor, twin="vadd"))

    A = rng.random((side, side), np.float32)
    for key, block, twin in (("tr32x8", (32, 8), None), ("tr16x16", (16, 16), "tr32x8")):
        B = np.empty_like(A)
        out.append(Case(key, f"naive transpose {side}², {block[0]}×{block[1]}",
                        lambda B=B, block=block: (launch(transpose_naive_16, (side // block[0], side // block[1]),
                                                         block, (A, B, side)), B)[1],
                        lambda: np.ascontiguousarray(A.T), twin))
    Bt = np.empty_like(A)
    out.append(Case("tiled", f"tiled transpose {side}², 32×33 tile",
                    lambda: (launch(K.transpose_tiled, (side // 32, side // 32), (32, 8), (A, Bt, side)), Bt)[1],
                    lambda: np.ascontiguousarray(A.T)))

    a = rng.random(n22, np.float32)
    rb = np.empty_like(a)
    out.append(Case("reverse", f"reverse {n22:,}", lambda: (launch(reverse, cdiv(n22, 256), 256, (a, rb, n22)), rb)[1],
                    lambda: a[::-1].copy()))
    idx = rng.integers(0, n22, n22).astype(np.int32)
    gb = np.empty_like(a)
    out.append(Case("gather", f"random gather {n22:,}",
                    lambda: (launch(gather, cdiv(n22, 256), 256, (a, idx, gb, n22)), gb)[1], lambda: a[idx]))

    x = rng.random(n20, np.float32)
    partial = np.empty(n20 // 256, np.float32)

    def reduce_floor():
        s = x.reshape(-1, 256).copy()
        half = 128
        while half:  # the same eight halving steps
            s[:, :half] += s[:, half:2 * half]
            half //= 2
        return s[:, 0].copy()

    out.append(Case("reduce", f"reduction {n20:,} (8 syncs)",
                    lambda: (launch(K.reduce_v3, n20 // 256, 256, (x, partial)), partial)[1], reduce_floor))

    v = rng.standard_normal(n22).astype(np.float32)
    dv = np.empty_like(v)
    out.append(Case("branch", f"divergent branch {n22:,}",
                    lambda: (launch(divergent, n22 // 256, 256, (v, dv, n22)), dv)[1],
                    lambda: np.where(v > 0, v * 2, -v)))

    data = rng.integers(0, 256, n22).astype(np.int32)
    bins = np.zeros(256, np.int32)

    def hist_sim():
        bins[:] = 0
        launch(histogram, cdiv(n22, 256), 256, (data, bins, n22))
        return bins.copy()

    out.append(Case("hist", f"shared histogram {n22:,} (atomics)", hist_sim,
                    lambda: np.bincount(data, minlength=256).astype(np.int32)))

    y0 = rng.random(n22, np.float32)
    ys = np.empty_like(y0)

    def stride_sim():
        ys[:] = y0
        launch(grid_stride, 1024, 256, (a, ys, np.float32(2), n22))
        return ys.copy()

    out.append(Case("stride", f"grid-stride loop {n22:,}", stride_sim, lambda: np.float32(2) * a + y0))

    m = 32 if quick else 128
    vol = rng.random((m, m, m), np.float32)
    vb = np.empty_like(vol)
    out.append(Case("box3d", f"3-D block 8×8×4 over {m}³",
                    lambda: (launch(box3d, (m // 8, m // 8, m // 4), (8, 8, 4), (vol, vb, m)), vb)[1],
                    lambda: 2 * vol))
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
        got, want = c.sim(), c.floor()  # warm-up, and the check
        np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=c.name)
        ts, tn = best(c.sim, args.repeat), best(c.floor, args.repeat)
        ratio[c.key] = ts / tn
        rows.append((c, ts, tn, peak_bytes(c.sim)))
    print(f"{'case':38} {'simtdocs':>10} {'numpy':>10} {'ratio':>7} {'peak MB':>8}")
    for c, ts, tn, peak in rows:
        print(f"{c.name:38} {ts * 1e3:8.1f}ms {tn * 1e3:8.2f}ms {ts / tn:6.1f}× {peak / 2**20:8.0f}")
    worst = max(ratio, key=ratio.get)
    median = statistics.median(ratio.values())
    print(f"\nworst {ratio[worst]:.1f}× ({worst}), median {median:.1f}×")
    checks = [(f"every case ≤ {WORST_TARGET:.0f}×", ratio[worst] <= WORST_TARGET),
              (f"median ≤ {MEDIAN_TARGET:.0f}×", median <= MEDIAN_TARGET)]
    times = {c.key: ts for c, ts, _, _ in rows}
    for c, ts, _, _ in rows:
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
