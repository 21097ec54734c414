"""The kernel zoo at speed: kernels nobody on the team designed, against their numpy floor and idiom.

    python benchmarks/zoo.py                   # the suite (a few minutes on 2 cores)
    python benchmarks/zoo.py --quick           # tiny sizes: checks the script still works
    python benchmarks/zoo.py --cases vadd,task3 --repeat 5
    python benchmarks/zoo.py --profile task3 [--padded]   # cProfile of one launch: where the time goes

The kernels are those of ``tests/zoo`` (CUDA Samples, the OLCF training series, PMPP),
imported from the test modules, at 1–4 M elements or about 1024² (a tiled matrix multiply at
256², see below), and a shared-memory histogram of 256 bins (``shared_histogram256``, the
grid-stride form of the histogram puzzle's solution) on skewed, uniform and random inputs.
Each case runs three ways:

* **simtdocs**: ``simtdocs.launch`` with every counter and every check on (the default
  tools), as a reader runs it;
* **floor**: the same kernel function through ``floor.py``'s plain-numpy block (the kernel's
  own index arithmetic, loads and stores as numpy indexing, no counting, no checks);
* **idiom**: what a numpy programmer writes for the same result (``a + b``,
  ``x.reshape(-1, 256).sum(1)``, ``np.bincount``, ``A.T.copy()``, slicing stencils,
  ``np.cumsum`` per block, ``np.add.reduceat`` for CSR, ``A @ B``).

The three results are checked against each other. Times are best-of-``repeat`` CPU time
(single-threaded numpy on every side; CPU time is far less disturbed than wall time on a
shared machine), simtdocs and the idiom taking turns so that their ratio does not pick up
the machine's drift between two runs; peak memory of one launch is measured with tracemalloc.

Twins: every kernel with a bounds guard also runs on a grid padded by one block per axis
(the extra blocks masked off, as the OLCF transpose exercise launches 129 × 129 blocks for
4096² / 32), timed the same way, the two grids taking turns so that both meet the machine
in the same state. Kernels without a guard cannot run padded (the extra blocks
would read out of bounds: memcheck stops them, as it should), and a grid-stride loop gives an
extra block real work, so neither has a twin; the table says which.

Targets (issue 23): every case ≤ 3× its floor; ≤ 30× its idiom where the idiom does the
same number of element operations (the cases that do not are listed with the reason);
median ≤ 8× the idiom over those cases; every padded twin ≤ 1.3× its exact twin; peak
memory < 2 GB. A benchmark, not a test: a missed target prints MISS and the script exits 0.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "zoo"))
# Single-threaded numpy on every side: a BLAS idiom's worker threads would otherwise spin on
# after it and add their CPU time to whatever runs next in this process.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import test_cuda_samples as CS  # noqa: E402
import test_olcf as OL  # noqa: E402
import test_pmpp as PM  # noqa: E402
from floor import run as run_floor  # noqa: E402
from simtdocs import launch  # noqa: E402

FLOOR_TARGET, IDIOM_TARGET, MEDIAN_TARGET, TWIN_TARGET, PEAK_TARGET = 3.0, 30.0, 8.0, 1.3, 2 * 2**30
f32, f64, i32, u32 = np.float32, np.float64, np.int32, np.uint32

NO_GUARD = "no guard"
GRID_STRIDE = "grid-stride"


@dataclass
class Case:
    key: str
    name: str
    family: str
    kernel: Callable
    grid: tuple
    block: object
    args: Callable[[tuple], tuple]  # fresh arguments for a launch on this grid
    result: Callable[[tuple], np.ndarray]  # what the launch computed, read from its arguments
    idiom: Callable[[], np.ndarray]  # the numpy idiom for the same result
    kw: dict = field(default_factory=dict)  # launch keywords (shared_bytes)
    twin: str | None = None  # why the padded twin does not run (None: it runs)
    excluded: str | None = None  # why the idiom does not do the same element operations
    rtol: float = 1e-5

    @property
    def padded(self):
        return tuple(g + 1 for g in self.grid)


def shared_histogram256(blk, x, n, hist):
    """The histogram puzzle's solution (``simtdocs.puzzles.warp_level``) at 256 bins with a
    grid-stride loop, as a numba or CUDA programmer writes it: a zeroed ``__shared__``
    histogram, a barrier, one shared ``atomicAdd`` per element, a barrier, one global
    ``atomicAdd`` per bin. Launched with 256 threads a block."""
    local = blk.shared(256, np.int32, name="local")
    t = blk.tx
    blk.store(local, t, 0 * t)
    blk.sync()
    i = blk.bx * blk.bdx + t
    live = blk.branch(i < n)
    while live.any():
        blk.atomic_add(local, blk.load(x, i, mask=live), 1 + 0 * t, mask=live)
        i = i + blk.bdx * blk.gdx
        live = blk.branch(i < n, mask=live)
    blk.sync()
    blk.atomic_add(hist, t, blk.load(local, t))


def _grid(g):
    return g if isinstance(g, tuple) else (g,)


def cases(quick: bool) -> list[Case]:
    rng = np.random.default_rng(23)
    out: list[Case] = []

    def add(*a, **k):
        out.append(Case(*a, **k))

    def ints(n, lo=-1000, hi=1000):
        return rng.integers(lo, hi, n).astype(i32)

    n22 = 1 << (13 if quick else 22)
    n20 = 1 << (12 if quick else 20)
    side = 128 if quick else 1024

    # -- vector add -------------------------------------------------------------------------
    A, B = rng.random(n22, f32), rng.random(n22, f32)
    add("vadd", f"vectorAdd {n22:,}", "vector add", CS.vectorAdd, (n22 // 256,), 256,
        lambda g: (A, B, np.zeros(n22, f32), n22), lambda a: a[2], lambda: A + B)
    a0 = ints(n22)
    add("inc", f"hw6 inc (grid-stride) {n22:,}", "vector add", OL.inc, (256,), 256,
        lambda g: (a0.copy(), n22), lambda a: a[0], lambda: a0 + 1, twin=GRID_STRIDE)

    # -- reductions ------------------------------------------------------------------------
    x = ints(n20)
    for key, k in (("reduce0", CS.reduce0), ("reduce2", CS.reduce2)):
        add(key, f"{k.__name__} {n20:,}", "reduction", k, (n20 // 256,), 256,
            lambda g: (x, np.zeros(g[0], i32), n20), lambda a: a[1][:n20 // 256],
            lambda: x.reshape(-1, 256).sum(1, dtype=i32), kw={"shared_bytes": 1024})
    x2 = ints(2 * n20)
    add("reduce4", f"reduce4 (shuffles) {2 * n20:,}", "reduction", CS.reduce4, (2 * n20 // 512,), 256,
        lambda g: (x2, np.zeros(g[0], i32), 2 * n20), lambda a: a[1][:2 * n20 // 512],
        lambda: x2.reshape(-1, 512).sum(1, dtype=i32), kw={"shared_bytes": 1024})
    x4 = ints(n22)
    G6 = 16 if quick else 1024
    add("reduce6", f"reduce6 (grid-stride, shuffles) {n22:,}", "reduction", CS.reduce6, (G6,), 256,
        lambda g: (x4, np.zeros(g[0], i32), n22), lambda a: a[1],
        lambda: x4.reshape(-1, G6 * 256).sum(0, dtype=i32).reshape(G6, 256).sum(1, dtype=i32),
        kw={"shared_bytes": 1024}, twin=GRID_STRIDE)
    xf = rng.random(n22, f32)
    add("atomic_red", f"hw5 atomic_red {n22:,}", "reduction", OL.atomic_red, (n22 // 256,), 256,
        lambda g: (xf, np.zeros(1, f32), n22), lambda a: a[1], lambda: xf.sum(keepdims=True), rtol=1e-3)
    G5 = 40 if quick else 640  # the source's 640 blocks
    for key, k, gold in (("reduce_a", OL.reduce_a, lambda: xf.sum(keepdims=True)),
                         ("reduce_ws", OL.reduce_ws, lambda: xf.sum(keepdims=True))):
        add(key, f"hw5 {k.__name__} {n22:,}", "reduction", k, (G5,), 256,
            lambda g, k=k: (xf, np.zeros(1, f32), n22), lambda a: a[1], gold, twin=GRID_STRIDE, rtol=1e-3)

    def strided_max():  # block b's threads read x[b·256 + t + k·stride]
        s = G5 * 256
        v = np.pad(xf, (0, -n22 % s)).reshape(-1, G5, 256)
        return v.max(axis=(0, 2))

    add("max_reduce", f"hw5 max reduce {n22:,}", "reduction", OL.max_reduce, (G5,), 256,
        lambda g: (xf, np.zeros(g[0], f32), n22), lambda a: a[1], strided_max, twin=GRID_STRIDE)
    add("coarsened", f"PMPP 10.15 coarsened sum {n22:,}", "reduction", PM.CoarsenedSumReductionKernel,
        (n22 // 256,), PM.BLOCK_DIM, lambda g: (xf, np.zeros(1, f32)), lambda a: a[1],
        lambda: xf.sum(keepdims=True), twin=NO_GUARD, rtol=1e-3)
    xd = rng.random(n22) * 2
    G_f = 16 if quick else 256
    add("finalError", f"jacobi finalError (CAS atomicAdd) {n22:,}", "atomics CAS", CS.finalError, (G_f,), 128,
        lambda g: (xd, np.zeros(1, np.uint64), n22), lambda a: a[1].view(f64),
        lambda: np.abs(xd - 1).sum(keepdims=True), kw={"shared_bytes": 32}, twin=GRID_STRIDE, rtol=1e-9)
    NA = 2048 if quick else 64 * 256  # the sample's launch; a CAS chain of 2^18 lanes took over 2 minutes
    init = np.zeros(11, i32)

    def atomics_gold():
        tid = np.arange(NA, dtype=i32)
        g = init.copy()
        g[0] += np.full(NA, 10).sum()
        g[1] -= np.full(NA, 10).sum()
        g[2], g[3], g[4] = tid[-1], max(g[3], tid.max()), min(g[4], tid.min())
        g[7] = NA - 1  # the CAS chain 0 → 1 → … → NA − 1 (lane t swaps t − 1 for t)
        return g

    add("atomics", f"simpleAtomicIntrinsics {NA:,} threads", "atomics CAS", CS.atomics_testKernel,
        (NA // 256,), 256, lambda g: (init.copy(),), lambda a: a[0], atomics_gold, twin=NO_GUARD,
        excluded="the CAS chain has no numpy idiom; the closed form does not serialise it")

    # -- scans -----------------------------------------------------------------------------
    xs = ints(n22)
    add("shfl_scan", f"shfl_scan_test {n22:,}", "scan", CS.shfl_scan_test, (n22 // 256,), 256,
        lambda g: (xs.copy(), 32, np.zeros(g[0], i32)), lambda a: a[0],
        lambda: np.cumsum(xs.reshape(-1, 256), axis=1, dtype=i32).ravel(), kw={"shared_bytes": 32},
        twin=NO_GUARD)
    xu = rng.integers(0, 1000, n22).astype(u32)

    def exclusive_1024():
        s = np.cumsum(xu.reshape(-1, 1024), axis=1, dtype=u32)
        return (s - xu.reshape(-1, 1024)).ravel()

    add("scan4", f"scanExclusiveShared (uint4) {n22:,}", "scan", CS.scanExclusiveShared, (n22 // 1024,), 256,
        lambda g: (np.zeros(n22, u32), xu, 1024), lambda a: a[0], exclusive_1024, twin=NO_GUARD)
    for key, k, per_block, twin in (
            ("kogge", PM.Kogge_Stone_scan_kernel, PM.SECTION, None),
            # Its padded blocks load nothing, then the trees read XY: initcheck stops that.
            ("brent", PM.Brent_Kung_scan_kernel, PM.SECTION // 2, "padded blocks read XY they never wrote")):
        add(key, f"PMPP {k.__name__.split('_scan')[0]} scan {n22:,}", "scan", k, (n22 // PM.SECTION,), per_block,
            lambda g: (xf, np.zeros(n22, f32), n22), lambda a: a[1],
            lambda: np.cumsum(xf.reshape(-1, PM.SECTION), axis=1).ravel(), twin=twin, rtol=1e-4)

    # -- transposes ------------------------------------------------------------------------
    M = rng.random((side, side), f32)
    for key, k in (("trNaive", CS.transposeNaive), ("trCoalesced", CS.transposeCoalesced),
                   ("trNoBank", CS.transposeNoBankConflicts)):
        add(key, f"{k.__name__} {side}²", "transpose", k, (side // 32, side // 32), (32, 16),
            lambda g: (np.zeros((side, side), f32), M, side, side), lambda a: a[0],
            lambda: M.T.copy(), twin=NO_GUARD)
    m8 = 128 if quick else 2048  # fp64, 4 M elements: the hw8 profiles' 4096² ÷ 4
    M8 = rng.random((m8, m8))
    for key, k in (("task1", OL.naive_cuda_transpose), ("task2", OL.smem_cuda_transpose_task2),
                   ("task3", OL.smem_cuda_transpose_task3)):
        add(key, f"hw8 {key} fp64 {m8}²", "transpose", k, (m8 // 32, m8 // 32), (32, 32),
            lambda g: (m8, M8, np.zeros((m8, m8))), lambda a: a[2], lambda: M8.T.copy())

    # -- matrix multiply (judged against the floor only) -------------------------------------
    mm = 32 if quick else 256  # O(n³): 256² is 16.8 M multiply-adds
    MA, MB = rng.random((mm, mm), f32), rng.random((mm, mm), f32)
    blas = "the idiom is one BLAS call (issue 23: judged against the floor only)"
    add("mmNaive", f"hw1 mmul naive {mm}²", "matmul", OL.mmul_naive, (mm // 32, mm // 32), (32, 32),
        lambda g: (MA, MB, np.zeros((mm, mm), f32), mm), lambda a: a[2], lambda: MA @ MB, excluded=blas)
    add("mmShared", f"hw2 mmul shared {mm}²", "matmul", OL.mmul_shared, (mm // 32, mm // 32), (32, 32),
        lambda g: (MA, MB, np.zeros((mm, mm), f32), mm), lambda a: a[2], lambda: MA @ MB, excluded=blas)
    add("matrixMul", f"matrixMul<16> {mm}²", "matmul", CS.MatrixMulCUDA16, (mm // 16, mm // 16), (16, 16),
        lambda g: (np.zeros((mm, mm), f32), MA, MB, mm, mm), lambda a: a[0], lambda: MA @ MB,
        excluded=blas, twin=NO_GUARD)
    ds = side
    MS = rng.random((ds, ds), f32)
    add("rowSums", f"hw4 row_sums {ds}²", "reduction", OL.row_sums, (-(-ds // 256),), 256,
        lambda g: (MS, np.zeros(ds, f32), ds), lambda a: a[1], lambda: MS.sum(1), rtol=1e-4)
    add("colSums", f"hw4 column_sums {ds}²", "reduction", OL.column_sums, (-(-ds // 256),), 256,
        lambda g: (MS, np.zeros(ds, f32), ds), lambda a: a[1], lambda: MS.sum(0), rtol=1e-4)

    # -- convolutions ------------------------------------------------------------------------
    img = rng.random((side, side), f32)
    K17 = rng.random(2 * CS.KERNEL_RADIUS + 1).astype(f32)
    R = CS.KERNEL_RADIUS

    def rows_idiom(src):
        p = np.pad(src, ((0, 0), (R, R)))
        acc = np.zeros_like(src)
        for j in range(-R, R + 1):
            acc += K17[R - j] * p[:, R + j:R + j + src.shape[1]]
        return acc

    add("convRows", f"convolutionRowsKernel {side}²", "convolution", CS.convolutionRowsKernel,
        (side // 128, side // 4), (16, 4), lambda g: (np.zeros((side, side), f32), img, side, side, side, K17),
        lambda a: a[0], lambda: rows_idiom(img), twin=NO_GUARD, rtol=1e-4)
    add("convCols", f"convolutionColumnsKernel {side}²", "convolution", CS.convolutionColumnsKernel,
        (side // 16, side // 64), (16, 8), lambda g: (np.zeros((side, side), f32), img, side, side, side, K17),
        lambda a: a[0], lambda: rows_idiom(np.ascontiguousarray(img.T)).T, twin=NO_GUARD, rtol=1e-4)
    F5 = rng.random((5, 5)).astype(f32)
    F3 = rng.random((3, 3)).astype(f32)

    def conv2d(F):
        r = F.shape[0] // 2
        p = np.pad(img, r)
        acc = np.zeros_like(img)
        for fr in range(2 * r + 1):
            for fc in range(2 * r + 1):
                acc += F[fr, fc] * p[fr:fr + side, fc:fc + side]
        return acc

    add("conv2dBasic", f"PMPP 7.7 conv2d 5×5 {side}²", "convolution", PM.convolution_2D_basic_kernel,
        (side // 16, side // 16), (16, 16), lambda g: (img, F5, np.zeros((side, side), f32), 2, side, side),
        lambda a: a[2], lambda: conv2d(F5), twin=NO_GUARD, rtol=1e-4)
    add("conv2dConst", f"PMPP 7.9 conv2d const 5×5 {side}²", "convolution", PM.convolution_2D_const_mem_kernel,
        (side // 16, side // 16), (16, 16), lambda g: (img, F5, np.zeros((side, side), f32), 2, side, side),
        lambda a: a[2], lambda: conv2d(F5), twin=NO_GUARD, rtol=1e-4)
    gt = -(-side // PM.OUT_TILE)
    add("conv2dTiled", f"PMPP 7.12 tiled conv2d 3×3 {side}²", "convolution",
        PM.convolution_tiled_2D_const_mem_kernel, (gt, gt), (16, 16),
        lambda g: (img, F3, np.zeros((side, side), f32), side, side), lambda a: a[2], lambda: conv2d(F3), rtol=1e-4)
    himg = rng.integers(0, 256, (side, side), dtype=np.uint8)

    def sobel():
        return CS._sobel_gold(himg, 1.0)

    add("sobel", f"SobelTex uint8 {side}²", "convolution", CS.SobelTex, (side,), 384,
        lambda g: (np.zeros((side, side), np.uint8), himg, side, side, f32(1.0)), lambda a: a[0], sobel,
        twin="grid-stride rows, no row guard")

    # -- stencils ----------------------------------------------------------------------------
    pad1 = ints(n22 + 2 * OL.RADIUS, -100, 100)
    add("stencil1d", f"hw2 stencil_1d {n22:,}", "stencil", OL.stencil_1d, (n22 // OL.BLOCK_SIZE,), OL.BLOCK_SIZE,
        lambda g: (pad1, np.zeros(n22 + 2 * OL.RADIUS, i32)), lambda a: a[1][OL.RADIUS:OL.RADIUS + n22],
        lambda: sum(pad1[k:k + n22] for k in range(2 * OL.RADIUS + 1)), twin=NO_GUARD)
    N3 = 16 if quick else 160  # 4.1 M points
    vol = rng.random((N3, N3, N3), f32)

    def seven_point(a):
        out = np.zeros_like(a)
        c = PM.C7
        out[1:-1, 1:-1, 1:-1] = (c[0] * a[1:-1, 1:-1, 1:-1] + c[1] * a[1:-1, 1:-1, :-2] + c[2] * a[1:-1, 1:-1, 2:]
                                 + c[3] * a[1:-1, :-2, 1:-1] + c[4] * a[1:-1, 2:, 1:-1] + c[5] * a[:-2, 1:-1, 1:-1]
                                 + c[6] * a[2:, 1:-1, 1:-1])
        return out

    add("stencil3d", f"PMPP 8.6 stencil {N3}³", "stencil", PM.stencil_kernel, (N3 // 8,) * 3, (8, 8, 8),
        lambda g: (vol, np.zeros_like(vol), N3), lambda a: a[1], lambda: seven_point(vol), rtol=1e-4)
    N4 = 16 if quick else 128  # 2.1 M points, 22³ blocks of 8³ (5.5 M threads)
    vol4 = rng.random((N4, N4, N4), f32)
    g4 = -(-N4 // PM.OUT6)
    add("stencilTiled", f"PMPP 8.8 shared-halo stencil {N4}³", "stencil", PM.stencil_tiled_kernel, (g4,) * 3,
        (8, 8, 8), lambda g: (vol4, np.zeros_like(vol4), N4), lambda a: a[1], lambda: seven_point(vol4), rtol=1e-4)

    # -- histograms --------------------------------------------------------------------------
    words = rng.integers(0, 1 << 32, n20, dtype=np.uint64).astype(u32)  # 4 M bytes
    G256 = 16 if quick else 240  # PARTIAL_HISTOGRAM256_COUNT
    add("hist256", f"histogram256 (shared atomics) {4 * n20:,} B", "histogram", CS.histogram256Kernel, (G256,),
        CS.HIST_THREADS, lambda g: (np.zeros(g[0] * 256, u32), words, n20),
        lambda a: a[0].reshape(-1, 256).sum(0), lambda: np.bincount(words.view(np.uint8), minlength=256),
        twin=GRID_STRIDE)
    n64 = n20 // 4  # uint4 elements: 4 M bytes
    words4 = rng.integers(0, 1 << 32, 4 * n64, dtype=np.uint64).astype(u32)
    add("hist64", f"histogram64 (uchar shared) {16 * n64:,} B", "histogram", CS.histogram64Kernel, (64 if quick else 256,),
        CS.H64_THREADS, lambda g: (np.zeros(g[0] * 64, u32), words4, n64),
        lambda a: a[0].reshape(-1, 64).sum(0), lambda: np.bincount(words4.view(np.uint8) >> 2, minlength=64),
        twin=GRID_STRIDE)
    # 256 bins in shared memory over 4 M elements (issue 38), the grid-stride form of the
    # histogram puzzle's kernel, on three inputs that load its atomics differently: half the
    # elements in bin 0 (the puzzle's skew: long same-address chains in a warp), every warp
    # on 32 distinct bins (i mod 256) and bins drawn at random (a few collisions per warp).
    # Their own generator: the draws of the cases after them stay what they were.
    hx, hrng = n22, np.random.default_rng(38)
    skewed = np.where(hrng.random(hx) < 0.5, 0, hrng.integers(0, 256, hx)).astype(i32)
    spread = (np.arange(hx) % 256).astype(i32)
    drawn = hrng.integers(0, 256, hx).astype(i32)
    Gh = 16 if quick else 256
    for key, label, xh in (("histSkewed", "skewed", skewed), ("histUniform", "uniform", spread),
                           ("histRandom", "random", drawn)):
        add(key, f"shared histogram 256 bins, {label} {hx:,}", "histogram", shared_histogram256, (Gh,), 256,
            lambda g, xh=xh: (xh, hx, np.zeros(256, i32)), lambda a: a[2],
            lambda xh=xh: np.bincount(xh, minlength=256).astype(i32), twin=GRID_STRIDE)
    text = PM._text(n22, 207)

    def letters():
        t = text.astype(i32) - ord("a")
        return np.bincount(t[(t >= 0) & (t < 26)] // 4, minlength=7)

    add("histo", f"PMPP 9.6 histo (global atomics) {n22:,}", "histogram", PM.histo_kernel, (n22 // 256,), 256,
        lambda g: (text, n22, np.zeros(7, u32)), lambda a: a[2], letters)
    add("histoPrivate", f"PMPP 9.10 histo privatized {n22:,}", "histogram", PM.histo_private_kernel,
        (n22 // 256,), 256, lambda g: (text, n22, np.zeros(7, u32)), lambda a: a[2], letters)

    # -- SpMV --------------------------------------------------------------------------------
    rows = 1 << (10 if quick else 20)
    lengths = rng.integers(0, 7, rows)
    nnz = int(lengths.sum())
    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(i32)
    col = rng.integers(0, rows, nnz).astype(i32)
    val = rng.random(nnz, f32)
    row_of = np.repeat(np.arange(rows, dtype=i32), lengths)
    xv = rng.random(rows, f32)
    y0 = rng.random(rows, f32)

    def csr_idiom():
        prod = xv[col] * val
        s = np.add.reduceat(prod, ptr[:-1].clip(max=nnz - 1))
        return np.where(lengths > 0, s, 0).astype(f32)

    add("spmvCoo", f"PMPP SpMV COO {nnz:,} nz", "SpMV", PM.spmv_coo_kernel, (-(-nnz // 256),), 256,
        lambda g: (row_of, col, val, nnz, xv, np.zeros(rows, f32)), lambda a: a[5], csr_idiom, rtol=1e-4)
    add("spmvCsr", f"PMPP SpMV CSR {rows:,} rows", "SpMV", PM.spmv_csr_kernel, (rows // 256,), 256,
        lambda g: (ptr, col, val, rows, xv, y0.copy()), lambda a: a[5], lambda: y0 + csr_idiom(), rtol=1e-4)
    width = int(lengths.max())
    slot = np.arange(nnz) - np.repeat(ptr[:-1], lengths)
    ell_col, ell_val = np.zeros((width, rows), i32), np.zeros((width, rows), f32)
    ell_col[slot, row_of], ell_val[slot, row_of] = col, val
    ell_col, ell_val = ell_col.ravel(), ell_val.ravel()
    nz_row = lengths.astype(i32)
    add("spmvEll", f"PMPP SpMV ELL {rows:,} rows", "SpMV", PM.spmv_ell_kernel, (rows // 256,), 256,
        lambda g: (ell_col, ell_val, nz_row, rows, xv, np.zeros(rows, f32)), lambda a: a[5],
        lambda: (xv[ell_col] * ell_val).reshape(width, rows).sum(0), rtol=1e-4)

    # -- merge -------------------------------------------------------------------------------
    mA = np.sort(rng.integers(0, n22, n22 // 2)).astype(i32)
    mB = np.sort(rng.integers(0, n22, n22 // 2)).astype(i32)
    add("merge", f"PMPP 12.5 merge {n22:,}", "merge", PM.merge_basic_kernel, (n22 // 4 // 256,), 256,
        lambda g: (mA, mA.size, mB, mB.size, np.zeros(n22, i32)), lambda a: a[4],
        lambda: np.sort(np.concatenate([mA, mB]), kind="stable"), twin="elements per thread follow the grid")

    # -- votes -------------------------------------------------------------------------------
    vx = CS._vote_pattern()
    Gv = n22 // 128

    def vote(how):  # every block votes on the same 128 values (the kernel indexes by threadIdx.x only)
        p = np.broadcast_to(vx != 0, (Gv, 128)).reshape(-1, 32)
        return np.repeat(getattr(p, how)(axis=1).reshape(Gv, 4)[-1], 32).astype(u32)

    for key, k, how in (("voteAny", CS.VoteAnyKernel1, "any"), ("voteAll", CS.VoteAllKernel2, "all")):
        add(key, f"{k.__name__} {n22:,} threads", "vote", k, (Gv,), 128,
            lambda g: (vx, np.zeros(128, u32), 128), lambda a: a[1], lambda how=how: vote(how),
            twin="indexes by threadIdx.x only: an extra block is not masked off")
    return out


# -- timing ------------------------------------------------------------------------------------

def best(run, make_args, repeat):
    """Best CPU time of ``repeat`` runs, each on fresh arguments (made outside the clock)."""
    times = []
    for _ in range(repeat):
        args = make_args()
        t = time.process_time()
        run(args)
        times.append(time.process_time() - t)
    return min(times)


def best_taking_turns(runs, repeat):
    """``best`` of each of ``runs`` (``(run, make_args)`` pairs), the runs taking turns
    ``repeat`` times: a kernel, its padded twin and its idiom meet the same state of the
    machine (on a shared 2-core machine its speed drifts by tens of percent over a minute,
    which timing one after the other turns into a ratio)."""
    times = [[] for _ in runs]
    for _ in range(repeat):
        for (run, make), spent in zip(runs, times):
            args = make()
            t = time.process_time()
            run(args)
            spent.append(time.process_time() - t)
    return [min(spent) for spent in times]


def peak_bytes(run, make_args) -> int:
    args = make_args()
    tracemalloc.start()
    run(args)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def sim_runner(c: Case, grid):
    return lambda args: launch(c.kernel, grid, c.block, args=args, **c.kw)


def floor_runner(c: Case, grid):
    return lambda args: run_floor(c.kernel, grid, c.block, args)


def check(got, want, c: Case, what):
    got = np.asarray(got)
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(want, np.float64).reshape(got.shape),
                               rtol=c.rtol, atol=0 if c.rtol <= 1e-5 else c.rtol, err_msg=f"{c.name}: {what}")


def _commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              timeout=10).stdout.strip() or "?"
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src/simtdocs"], cwd=HERE.parent,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head + (" with uncommitted changes in src/simtdocs" if dirty else "")
    except OSError:
        return "?"


def fmt_t(s):
    return f"{s * 1e3:8.1f}ms" if s < 10 else f"{s:8.2f}s "


def profile(c: Case, top: int, padded: bool):
    grid = c.padded if padded else c.grid
    launch(c.kernel, grid, c.block, args=c.args(grid), **c.kw)  # warm-up (first-touch memory)
    args = c.args(grid)
    pr = cProfile.Profile(time.process_time)  # CPU time, as the table: wall time moves with the load
    pr.enable()
    launch(c.kernel, grid, c.block, args=args, **c.kw)
    pr.disable()
    print(f"cProfile of {c.name} (one launch after a warm-up, {'padded' if padded else 'exact'} grid {grid}, "
          f"CPU time), by cumulative time:")
    pstats.Stats(pr, stream=sys.stdout).sort_stats("cumtime").print_stats(top)
    pstats.Stats(pr, stream=sys.stdout).sort_stats("tottime").print_stats(top)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--cases", default="")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--profile", default="", help="a case key: cProfile one launch of it and stop")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--padded", action="store_true", help="with --profile: the padded twin's launch")
    args = p.parse_args(argv)
    all_cases = cases(args.quick)
    if args.profile:
        profile(next(c for c in all_cases if c.key == args.profile), args.top, args.padded)
        return 0
    chosen = [c for c in all_cases if not args.cases or c.key in args.cases.split(",")]
    engine = sorted((HERE.parent / "src" / "simtdocs").rglob("*.py"))
    stamp = max((f.stat().st_mtime for f in engine), default=0)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {_commit()}, "
          f"load average {os.getloadavg()[0]:.1f}, numpy {np.__version__}\n")
    rows = []
    print(f"{'case':44} {'family':12} {'simtdocs':>10} {'floor':>10} {'idiom':>10} {'sim/floor':>9} "
          f"{'sim/idiom':>9} {'floor/idiom':>11} {'peak MB':>8} {'padded':>10} {'twin':>6} {'floor twin':>10}",
          flush=True)
    for c in chosen:
        want = c.idiom()
        sim, flo = sim_runner(c, c.grid), floor_runner(c, c.grid)
        a = c.args(c.grid)
        sim(a)  # warm-up, and the check
        check(c.result(a), want, c, "simtdocs against the idiom")
        a = c.args(c.grid)
        flo(a)
        check(c.result(a), want, c, "floor against the idiom")
        tp = tfp = None
        if c.twin is None:
            pad = sim_runner(c, c.padded)
            a = c.args(c.padded)
            pad(a)
            check(c.result(a), want, c, "padded twin against the idiom")
        idiom = (lambda _: c.idiom(), lambda: None)
        if c.twin is None:
            # (the exact and the padded grid one after the other, the idiom after them)
            ts, tp, ti = best_taking_turns([(sim, lambda: c.args(c.grid)), (pad, lambda: c.args(c.padded)), idiom],
                                           args.repeat)
            # The kernel's own arithmetic runs on the extra blocks' lanes too: the floor's twin
            # is what padding costs before the simulator does anything.
            tf, tfp = best_taking_turns([(flo, lambda: c.args(c.grid)),
                                         (floor_runner(c, c.padded), lambda: c.args(c.padded))], args.repeat)
        else:
            ts, ti = best_taking_turns([(sim, lambda: c.args(c.grid)), idiom], args.repeat)
            tf = best(flo, lambda: c.args(c.grid), args.repeat)
        peak = peak_bytes(sim, lambda: c.args(c.grid))
        if c.twin is None:
            peak = max(peak, peak_bytes(pad, lambda: c.args(c.padded)))
        rows.append((c, ts, tf, ti, peak, tp, tfp))
        twin = f"{fmt_t(tp)} {tp / ts:5.2f}× {tfp / tf:9.2f}×" if tp is not None else f"{'—':>10} {'':>6} {'':>10}"
        print(f"{c.name:44} {c.family:12} {fmt_t(ts)} {fmt_t(tf)} {fmt_t(ti)} {ts / tf:8.1f}× {ts / ti:8.1f}× "
              f"{tf / ti:10.1f}× {peak / 2**20:8.0f} {twin}", flush=True)

    judged = {c.key: ts / ti for c, ts, tf, ti, *_ in rows if c.excluded is None}
    print("\n(times: best-of-%d CPU time; floor: the kernel through floor.py's plain numpy; padded: the grid "
          "padded by one block per axis, twin = padded / exact, floor twin: the same for the floor)" % args.repeat)
    no_twin = {}
    for c, *_ in rows:
        if c.twin is not None:
            no_twin.setdefault(c.twin, []).append(c.key)
    for reason, keys in no_twin.items():
        print(f"no padded twin ({reason}): {', '.join(keys)}")
    for c, *_ in rows:
        if c.excluded is not None:
            print(f"not judged against its idiom: {c.key}: {c.excluded}")
    checks = []
    worst_f = max(rows, key=lambda r: r[1] / r[2]) if rows else None
    if worst_f:
        bad = [f"{c.key} {ts / tf:.1f}×" for c, ts, tf, *_ in rows if ts / tf > FLOOR_TARGET]
        checks.append((f"every case ≤ {FLOOR_TARGET:.0f}× its floor: worst {worst_f[1] / worst_f[2]:.1f}× "
                       f"({worst_f[0].key})" + (f"; over: {', '.join(bad)}" if bad else ""),
                       not bad))
    if judged:
        worst = max(judged, key=judged.get)
        bad = [f"{k} {v:.0f}×" for k, v in judged.items() if v > IDIOM_TARGET]
        floor_over = {c.key for c, ts, tf, ti, *_ in rows if c.excluded is None and tf / ti > IDIOM_TARGET}
        out_of_reach = [k for k, v in judged.items() if v > IDIOM_TARGET and k in floor_over]
        checks.append((f"every judged case ≤ {IDIOM_TARGET:.0f}× its idiom: worst {judged[worst]:.1f}× ({worst})"
                       + (f"; over: {', '.join(bad)}" if bad else "")
                       + (f"\n        (of these, the floor itself is over {IDIOM_TARGET:.0f}× the idiom for "
                          f"{', '.join(out_of_reach)})" if out_of_reach else ""), not bad))
        med = statistics.median(judged.values())
        checks.append((f"median ≤ {MEDIAN_TARGET:.0f}× the idiom ({len(judged)} judged cases): {med:.1f}×",
                       med <= MEDIAN_TARGET))
    twins = [(c.key, tp / ts, tfp / tf) for c, ts, tf, _, _, tp, tfp in rows if tp is not None]
    if twins:
        worst_t = max(twins, key=lambda t: t[1])
        bad = [f"{k} {r:.2f}× (floor {f:.2f}×)" for k, r, f in twins if r > TWIN_TARGET]
        checks.append((f"every padded twin ≤ {TWIN_TARGET}× its exact twin ({len(twins)} twins): worst "
                       f"{worst_t[1]:.2f}× ({worst_t[0]})" + (f"; over: {', '.join(bad)}" if bad else ""), not bad))
    if rows:
        top = max(rows, key=lambda r: r[4])
        checks.append((f"peak < 2 GB: largest {top[4] / 2**20:.0f} MB ({top[0].key})", top[4] < PEAK_TARGET))
    if max((f.stat().st_mtime for f in engine), default=0) != stamp:
        print("\nnote: src/simtdocs changed on disk during the run (this run used the code it imported first)")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    print()
    for text, ok in checks:
        print(f"  {'PASS' if ok else 'MISS'}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
