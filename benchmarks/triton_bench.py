"""simtdocs.triton against Triton's own interpreter (``TRITON_INTERPRET=1``) on the
tutorial-style kernels at the tutorials' default sizes.

    python benchmarks/triton_bench.py            # 3 runs each, the median
    python benchmarks/triton_bench.py --runs 5
    python benchmarks/triton_bench.py --cpu      # CPU time of this process, not wall time

The kernels are the team's tutorial-style ones (tests/triton/triton_style_kernels.py), run
unchanged by both (the interpreter through tests/triton/triton_oracle.py's small wrapper):

- vector add: n = 98,432 float32, BLOCK 1024, 4 warps (the tutorial's ``size``);
- fused softmax: 1,823 x 781 float32, BLOCK 1024, 8 warps, a persistent grid of 528
  programs (132 SMs x 4: the tutorial sizes it from the device's occupancy), so the rows
  each program walks differ by one;
- matmul: 512 x 512 x 512 float16, the tutorial's first CUDA config (128 x 256 x 64,
  GROUP 8, 8 warps);
- layer norm forward: 1,151 x 8,192 float16, BLOCK 8192, 8 warps (the tutorial's test).

Both sides run on the same numpy with one BLAS thread (``OPENBLAS_NUM_THREADS=1``, set
before numpy loads: with two cores shared, a multi-threaded BLAS makes a 128 x 64 x 256
matmul 100x slower at random). Results are compared before timing. Prints a table and
the median speed-up; exits 1 if the median is below 10x or any kernel is slower.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "triton"))

import triton_oracle as O  # noqa: E402
import triton_style_kernels as K  # noqa: E402

from simtdocs import triton  # noqa: E402


def cases():
    """(name, size, run_paper, run_interpreter, check) for each kernel."""
    rng = np.random.default_rng(0)
    T = O.twin_module(str(HERE.parent / "tests" / "triton" / "triton_style_kernels.py"), "triton_style_real")
    if T is None:
        raise SystemExit("triton is not installed: pip install triton (its interpreter runs on the CPU)")
    out = []

    n = 98432
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    o1, o2 = np.zeros_like(a), np.zeros_like(a)
    g = (triton.cdiv(n, 1024),)
    out.append(("vector add", f"n={n:,}", lambda: K.vec_add[g](a, b, o1, n, BLOCK=1024),
                lambda: O.run(T.vec_add, g, a, b, o2, n, BLOCK=1024),
                lambda: np.testing.assert_array_equal(o1, o2)))

    out.append(softmax_case(rng, T))

    S = 512
    A = rng.standard_normal((S, S)).astype(np.float16)
    Bm = rng.standard_normal((S, S)).astype(np.float16)
    c1, c2 = np.zeros((S, S), np.float16), np.zeros((S, S), np.float16)
    meta = dict(BM=128, BN=256, BK=64, GROUP=8, num_warps=8)
    gm = (triton.cdiv(S, 128) * triton.cdiv(S, 256),)
    cfg = triton.Config({k: v for k, v in meta.items() if k != "num_warps"}, num_warps=8)
    out.append(("matmul", f"{S}x{S}x{S}", lambda: K.matmul[gm](A, Bm, c1, S, S, S, S, 1, S, 1, S, 1, config=cfg),
                lambda: O.run(T.matmul.fn, gm, A, Bm, c2, S, S, S, S, 1, S, 1, S, 1, **meta),
                lambda: np.testing.assert_allclose(c1.astype(np.float32), c2.astype(np.float32), rtol=1e-2, atol=1e-2)))

    M, N = 1151, 8192
    x = rng.standard_normal((M, N)).astype(np.float16)
    w, bias = rng.standard_normal(N).astype(np.float16), rng.standard_normal(N).astype(np.float16)
    ys = [np.zeros_like(x), np.zeros_like(x)]
    stats = [(np.zeros(M, np.float32), np.zeros(M, np.float32)) for _ in range(2)]
    out.append(("layer norm fwd", f"{M:,}x{N:,}",
                lambda: K.layer_norm_fwd[(M,)](x, ys[0], w, bias, *stats[0], N, N, 1e-5, BLOCK=8192, num_warps=8),
                lambda: O.run(T.layer_norm_fwd, (M,), x, ys[1], w, bias, *stats[1], N, N, 1e-5, BLOCK=8192,
                              num_warps=8),
                lambda: (np.testing.assert_allclose(ys[0].astype(np.float32), ys[1].astype(np.float32), rtol=1e-2,
                                                    atol=1e-2),
                         np.testing.assert_allclose(stats[0][1], stats[1][1], rtol=1e-4))))
    return out


def softmax_case(rng, T):
    M, N = 1823, 781
    x = rng.standard_normal((M, N)).astype(np.float32)
    y1, y2 = np.zeros_like(x), np.zeros_like(x)
    progs = (min(132 * 4, M),)
    return ("fused softmax", f"{M:,}x{N}", lambda: K.row_softmax[progs](y1, x, N, N, M, N, BLOCK=1024, num_warps=8),
            lambda: O.run(T.row_softmax, progs, y2, x, N, N, M, N, BLOCK=1024, num_warps=8),
            lambda: np.testing.assert_allclose(y1, y2, rtol=1e-5, atol=1e-7))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cpu", action="store_true",
                    help="time by this process's CPU time: both sides run on one thread, so on a shared "
                         "machine this leaves out the time spent waiting for a core")
    args = ap.parse_args(argv)
    clock = time.process_time if args.cpu else time.perf_counter
    rows = []
    for name, size, mine, theirs, check in cases():
        mine()  # compile, warm up
        theirs()
        check()
        tm, tt = [], []
        for _ in range(args.runs):  # alternate, so a busy machine slows both alike
            t = clock()
            mine()
            tm.append(clock() - t)
            t = clock()
            theirs()
            tt.append(clock() - t)
        rows.append((name, size, statistics.median(tm), statistics.median(tt)))
    print(f"{'kernel':<16}{'size':>14}{'simtdocs.triton':>18}{'Triton interpreter':>20}{'speed-up':>10}")
    for name, size, m, t in rows:
        print(f"{name:<16}{size:>14}{m * 1e3:>15.1f} ms{t * 1e3:>17.1f} ms{t / m:>9.1f}x")
    speedups = [t / m for _, _, m, t in rows]
    med = statistics.median(speedups)
    print(f"median speed-up {med:.1f}x, slowest {min(speedups):.1f}x")
    return 0 if med >= 10 and min(speedups) >= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
