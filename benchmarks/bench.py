"""How fast is the GPU on paper? simtdocs against plain numpy and numba's CUDA simulator.

    python benchmarks/bench.py                 # the full run (about a minute with numba)
    python benchmarks/bench.py --quick         # tiny sizes: checks the script still works
    python benchmarks/bench.py --no-numba      # skip numba's CUDA simulator
    python benchmarks/bench.py --profile vadd22 --cases vadd22   # cProfile a simtdocs case

Each case is timed three ways, in one run:

(a) ``simtdocs.launch`` with every counter on (the simulator has no "off": sectors,
    wavefronts, divergence, races and the per-line breakdown are always counted), best of
    ``--repeat`` runs after one warm-up, and the result is checked against numpy;
(b) the same computation in plain numpy with no simulation: the floor;
(c) the same kernel as a real ``@cuda.jit`` kernel under numba's CUDA simulator
    (``NUMBA_ENABLE_CUDASIM=1``), which runs one Python thread per CUDA thread. It cannot
    finish the full sizes in reasonable time, so it runs a smaller grid of the same blocks
    (best of up to ``--numba-repeat`` runs after a one-block warm-up) and the comparison
    is in simulated threads per second.

Targets (issue 2, "Speed"): simtdocs simulates at least 1,000× as many threads per second as
numba's simulator on every case, and the 2^22-element vector add is within 20× of numpy.
This is a benchmark, not a test: a missed target prints MISS and the script still exits 0.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import gc
import io
import os
import platform
import pstats
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import kernels as K  # noqa: E402
from simtdocs import cdiv, launch  # noqa: E402

NUMBA_TARGET = 1000  # simtdocs threads/s ≥ this × numba's
NUMPY_TARGET = 20  # simtdocs seconds ≤ this × numpy's, on the case below
NUMPY_TARGET_CASE = "vadd22"
NUMBA_BUDGET_S = 10.0  # numba's simulator repeats a case only while it has spent less than this


# -- the cases -----------------------------------------------------------------------------


@dataclass
class Run:
    """One case at one size: how to launch it each way, and how to check the answer."""

    threads: int
    simtdocs: Callable[[], object]  # returns the launch's Stats
    numpy: Callable[[], None]
    numba: Callable[[dict], None]  # takes the numba kernels
    reset: Callable[[], None]  # clears the output (untimed)
    check: Callable[[], None]  # asserts the output is right
    check_stats: Callable[[object], None] = lambda stats: None


def vadd(n: int) -> Run:
    a = (np.arange(n) % 1000).astype(np.float32)
    b = np.full(n, 0.5, np.float32)
    c = np.zeros(n, np.float32)
    want = a + b
    grid = cdiv(n, K.VADD_THREADS)

    def check_stats(s):
        assert s.coalescing_efficiency == 1.0 and s.simt_efficiency == 1.0, s

    return Run(
        threads=grid * K.VADD_THREADS,
        simtdocs=lambda: launch(K.vector_add, grid=grid, block=K.VADD_THREADS, args=(a, b, c, n)),
        numpy=lambda: K.np_vector_add(a, b, c),
        numba=lambda nb: nb["vector_add"][grid, K.VADD_THREADS](a, b, c, n),
        reset=lambda: c.fill(0),
        check=lambda: np.testing.assert_array_equal(c, want),
        check_stats=check_stats,
    )


def transpose(kernel: str) -> Callable[[int], Run]:
    def make(n: int) -> Run:
        assert n % K.TILE == 0
        A = np.arange(n * n, dtype=np.float32).reshape(n, n)
        B = np.zeros_like(A)
        grid = (n // K.TILE, n // K.TILE)
        block = (K.TILE, K.BLOCK_ROWS)
        simt = getattr(K, kernel)

        def check_stats(s):
            assert s.races == [], s.races[:1]
            if kernel == "transpose_tiled":
                assert s.shared_wavefronts == s.shared_requests, s  # the 33-word row: no bank conflict
            else:
                assert s.coalescing_efficiency < 0.5, s  # the strided write

        return Run(
            threads=grid[0] * grid[1] * K.TILE * K.BLOCK_ROWS,
            simtdocs=lambda: launch(simt, grid=grid, block=block, args=(A, B, n)),
            numpy=lambda: K.np_transpose(A, B),
            numba=lambda nb: nb[kernel][grid, block](A.reshape(-1), B.reshape(-1), n),
            reset=lambda: B.fill(0),
            check=lambda: np.testing.assert_array_equal(B, A.T),
            check_stats=check_stats,
        )

    return make


def reduce3(n: int) -> Run:
    assert n % K.REDUCE_THREADS == 0
    x = (np.arange(n) % 7).astype(np.float32)  # small integers: every partial sum is exact
    blocks = n // K.REDUCE_THREADS
    out = np.zeros(blocks, np.float32)
    want = x.reshape(-1, K.REDUCE_THREADS).sum(1)

    def check_stats(s):
        assert s.shared_wavefronts == s.shared_requests and s.races == [], s  # sequential addressing

    return Run(
        threads=n,
        simtdocs=lambda: launch(K.reduce_v3, grid=blocks, block=K.REDUCE_THREADS, args=(x, out)),
        numpy=lambda: K.np_reduce(x, out),
        numba=lambda nb: nb["reduce_v3"][blocks, K.REDUCE_THREADS](x, out),
        reset=lambda: out.fill(0),
        check=lambda: np.testing.assert_array_equal(out, want),
        check_stats=check_stats,
    )


@dataclass
class Case:
    key: str
    label: str
    make: Callable[[int], Run]
    size: int  # the simtdocs and numpy size
    numba_size: int  # what numba's simulator finishes in well under a minute
    quick_size: int
    quick_numba_size: int
    unit: str  # how to print a size


CASES = [
    Case("vadd20", "vector add 2^20", vadd, 1 << 20, 1 << 14, 1 << 12, 1 << 8, "n"),
    Case("vadd22", "vector add 2^22", vadd, 1 << 22, 1 << 14, 1 << 13, 1 << 8, "n"),
    Case("naive", "transpose naive 512²", transpose("transpose_naive"), 512, 128, 64, 32, "n×n"),
    Case("tiled", "transpose tiled 512²", transpose("transpose_tiled"), 512, 128, 64, 32, "n×n"),
    Case("reduce", "reduce v3 2^18", reduce3, 1 << 18, 1 << 12, 1 << 12, 1 << 8, "n"),
]


# -- timing --------------------------------------------------------------------------------


def best_of(fn: Callable[[], object], reset: Callable[[], None], repeat: int) -> float:
    """Best wall time of ``repeat`` calls of ``fn``; ``reset`` runs before each, untimed."""
    best = float("inf")
    for _ in range(repeat):
        reset()
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def size_text(case: Case, size: int) -> str:
    if case.unit == "n×n":
        return f"{size}×{size}"
    return f"2^{size.bit_length() - 1}" if size & (size - 1) == 0 else f"{size:,}"


def load_numba(enabled: bool):
    """numba's kernels and a line saying what was loaded, or (None, why not)."""
    if not enabled:
        return None, "numba: skipped (--no-numba)"
    try:
        nb = K.numba_kernels()
    except ImportError as e:
        return None, f"numba: not available ({e}); column (c) skipped. Install it with `pip install numba` (extra: bench)"
    import numba

    return nb, f"numba {numba.__version__}, CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"


def simtdocs_version() -> str:
    """Which simtdocs is measured: the git commit of this checkout, or where it was imported from."""
    import simtdocs

    where = Path(simtdocs.__file__).resolve().parent
    if where != ROOT / "src" / "simtdocs":
        return f"simtdocs from {where} (not this checkout's src/)"
    try:
        git = lambda *a: subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()  # noqa: E731
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--", "src/simtdocs")
        return f"simtdocs at git {head}" + (" + uncommitted changes in src/simtdocs" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return f"simtdocs from {where}"


def fmt_rate(x: float | None) -> str:
    if x is None:
        return "-"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g}{unit}"
    return f"{x:.3g}"


def fmt_s(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 1:
        return f"{x:.2f}"
    if x >= 1e-3:
        return f"{x * 1e3:.2f}m"
    return f"{x * 1e6:.1f}µ"


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def profile_case(case: Case, size: int, repeat: int, top: int) -> str:
    """cProfile the simtdocs launches of a case: the functions that take the time."""
    run = case.make(size)
    run.simtdocs()  # warm-up, not profiled
    prof = cProfile.Profile()
    for _ in range(repeat):
        run.reset()
        prof.enable()
        run.simtdocs()
        prof.disable()
    run.check()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    total = stats.total_tt
    lines = [f"cProfile of {case.label} ({repeat} launches, {total:.3f} s profiled; self time = tottime)"]
    rows = []
    for (filename, lineno, func), (cc, nc, tt, ct, _) in stats.stats.items():
        rows.append((tt, ct, nc, f"{Path(filename).name}:{lineno}({func})" if lineno else func))
    rows.sort(reverse=True)
    lines.append(f"  {'self s':>8} {'share':>6} {'cum s':>8} {'calls':>8}  function")
    for tt, ct, nc, name in rows[:top]:
        lines.append(f"  {tt:8.4f} {tt / total:6.1%} {ct:8.4f} {nc:8d}  {name}")
    return "\n".join(lines)


# -- main ----------------------------------------------------------------------------------


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes, one timed run: a smoke test, not a measurement")
    p.add_argument("--no-numba", action="store_true", help="skip numba's CUDA simulator (column c)")
    p.add_argument("--repeat", type=int, default=None, help="timed simtdocs/numpy runs per case, best kept (default 7; 1 with --quick)")
    p.add_argument("--numba-repeat", type=int, default=5,
                   help=f"numba runs per case, best kept, stopping once {NUMBA_BUDGET_S:g} s are spent (default 5)")
    p.add_argument("--cases", default=",".join(c.key for c in CASES), help="comma-separated subset of: " + ", ".join(c.key for c in CASES))
    p.add_argument("--profile", default="", help="comma-separated cases to cProfile (simtdocs only), printed after the table")
    p.add_argument("--top", type=int, default=20, help="functions to list per profile")
    p.add_argument("--no-dialect", action="store_true",
                   help="skip the per-thread dialect (simtdocs.cuda) against its blk twins and numba's simulator")
    args = p.parse_args(argv)
    repeat = args.repeat or (1 if args.quick else 7)
    numba_repeat = 1 if args.quick else max(1, args.numba_repeat)
    wanted = args.cases.split(",")
    unknown = set(wanted) - {c.key for c in CASES}
    if unknown:
        p.error(f"unknown case(s): {', '.join(sorted(unknown))}")
    cases = [c for c in CASES if c.key in wanted]
    profiled = [c for key in filter(None, args.profile.split(",")) for c in CASES if c.key == key]
    if len(profiled) != len(list(filter(None, args.profile.split(",")))):
        p.error(f"unknown case to profile in {args.profile!r}; cases: " + ", ".join(c.key for c in CASES))

    nb, nb_line = load_numba(not args.no_numba)
    print(f"simtdocs benchmark, {datetime.datetime.now().isoformat(timespec='seconds')}")
    print(f"  command: python {' '.join([os.path.relpath(sys.argv[0], ROOT)] + (argv if argv is not None else sys.argv[1:]))}")
    print(f"  machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
          f"load average {os.getloadavg()[0]:.2f} at start; "
          f"Python {platform.python_version()}, numpy {np.__version__}")
    print(f"  {simtdocs_version()}")
    print(f"  {nb_line}")
    print(f"  simtdocs and numpy: best of {repeat} after a warm-up; numba: best of up to {numba_repeat} "
          f"(while under {NUMBA_BUDGET_S:g} s) after a one-block warm-up"
          + ("; QUICK: tiny sizes, not a measurement" if args.quick else ""))
    print()

    rows, results = [], {}
    for case in cases:
        size = case.quick_size if args.quick else case.size
        run = case.make(size)
        # (a) simtdocs: warm-up, check the answer and the counters, then time.
        run.reset()
        stats = run.simtdocs()
        run.check()
        run.check_stats(stats)
        t_simt = best_of(run.simtdocs, run.reset, repeat)
        run.check()
        # (b) numpy.
        run.reset()
        run.numpy()
        run.check()
        t_np = best_of(run.numpy, run.reset, repeat)
        # (c) numba's simulator, at its own size.
        nb_threads = nb_rate = None
        nb_size = case.quick_numba_size if args.quick else case.numba_size
        if nb is not None:
            warm = case.make(case.quick_numba_size)
            warm.numba(nb)
            warm.check()
            small = case.make(nb_size)
            t_nb, spent = float("inf"), 0.0
            for _ in range(numba_repeat):  # best of a few, while within the time budget
                small.reset()
                t0 = time.perf_counter()
                small.numba(nb)
                t = time.perf_counter() - t0
                small.check()
                t_nb, spent = min(t_nb, t), spent + t
                if spent > NUMBA_BUDGET_S:
                    break
            nb_threads, nb_rate = small.threads, small.threads / t_nb
        rate = run.threads / t_simt
        results[case.key] = dict(threads=run.threads, simt_s=t_simt, rate=rate, numpy_s=t_np, numba_rate=nb_rate)
        rows.append([
            case.label + (f" ({size_text(case, size)})" if args.quick else ""),
            f"{run.threads:,}",
            fmt_s(t_simt),
            fmt_rate(rate),
            fmt_s(t_np),
            f"{t_simt / t_np:,.0f}×",
            "-" if nb_threads is None else f"{size_text(case, nb_size)}: {nb_threads:,}",
            fmt_rate(nb_rate),
            "-" if nb_rate is None else f"{rate / nb_rate:,.0f}×",
        ])
        print(f"  done: {case.label}", file=sys.stderr, flush=True)

    print(table(rows, ["case", "threads", "simtdocs s", "threads/s", "numpy s", "simtdocs/numpy",
                       "numba size: threads", "numba thr/s", "simtdocs/numba"]))
    print("(s: seconds, m = milli, µ = micro; threads/s: simulated CUDA threads per second; k/M/G = 10^3/10^6/10^9)")
    print()
    print("Targets (issue 2):")
    for case in cases:
        r = results[case.key]
        if r["numba_rate"] is None:
            print(f"  ----  {case.label}: ≥ {NUMBA_TARGET:,}× numba's threads/s: not measured (no numba)")
        else:
            ratio = r["rate"] / r["numba_rate"]
            verdict = "PASS" if ratio >= NUMBA_TARGET else "MISS"
            print(f"  {verdict}  {case.label}: ≥ {NUMBA_TARGET:,}× numba's threads/s: {ratio:,.0f}×")
    if NUMPY_TARGET_CASE in results:
        r = results[NUMPY_TARGET_CASE]
        ratio = r["simt_s"] / r["numpy_s"]
        verdict = "PASS" if ratio <= NUMPY_TARGET else "MISS"
        label = next(c.label for c in cases if c.key == NUMPY_TARGET_CASE)
        print(f"  {verdict}  {label}: within {NUMPY_TARGET}× of plain numpy: {ratio:.1f}×")
    if args.quick:
        print("  (QUICK sizes: these verdicts mean nothing)")
    if not args.quick and not args.no_dialect:
        # The per-thread dialect (issue 24): each lecture kernel written per thread against its
        # blk twin (target ≤ 1.5×), and the same source against numba's simulator (≥ 1,000×).
        # In a process of its own: it imports the tests' kernels, whose module name this one shares.
        print()
        print("Per-thread kernels (simtdocs.cuda), benchmarks/cuda_dialect.py:", flush=True)
        for what in ("speed",) + (("numba",) if nb is not None else ()):
            subprocess.run([sys.executable, str(HERE / "cuda_dialect.py"), what], check=False)
            print(flush=True)

    for case in profiled:
        print()
        print(profile_case(case, case.quick_size if args.quick else case.size, repeat, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
