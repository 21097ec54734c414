"""The benchmark scripts still run (tiny sizes). Timings are never asserted here."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = "benchmarks/bench.py"
LABELS = ["vector add 2^20", "vector add 2^22", "transpose naive 512²", "transpose tiled 512²", "reduce v3 2^18"]


def run(*cmd, timeout=300):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    proc = subprocess.run([sys.executable, *cmd], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**env, "MPLBACKEND": "Agg"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def test_bench_quick_simtdocs_cases():
    """Every simtdocs kernel computes the right answer (bench.py asserts it) and the table prints."""
    out = run(BENCH, "--quick", "--no-numba")
    for label in LABELS:
        assert label in out
    assert "Targets (issue 2):" in out
    assert "within 20× of plain numpy" in out


def test_bench_without_numba_installed():
    """With numba unimportable the script says so and skips column (c)."""
    code = (
        "import sys, runpy; sys.modules['numba'] = None; "
        f"sys.argv = ['{BENCH}', '--quick', '--cases', 'vadd20']; "
        f"runpy.run_path('{BENCH}', run_name='__main__')"
    )
    out = run("-c", code)
    assert "numba: not available" in out
    assert "not measured (no numba)" in out


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is an optional benchmark dependency")
def test_bench_quick_numba_kernels():
    """The @cuda.jit kernels still run in numba's CUDA simulator and give the right answer."""
    out = run(BENCH, "--quick", timeout=600)
    assert "CUDA simulator" in out
    assert "not measured" not in out


def test_bench_profile_option():
    out = run(BENCH, "--quick", "--no-numba", "--cases", "reduce", "--profile", "reduce", "--top", "3")
    assert "cProfile of reduce v3 2^18" in out


def test_companion_scripts_timer():
    out = run("benchmarks/companion_scripts.py", "--repeat", "1", "snippets/home/01_first_launch.py")
    assert "snippets/home/01_first_launch.py" in out
    assert "0 failed" in out


def test_shapes_quick_runs_every_case_and_checks_its_answer():
    """shapes.py asserts each simulated result against its numpy program; every case prints."""
    out = run("benchmarks/shapes.py", "--quick", "--repeat", "1")
    for label in ("(ragged)", "16×16", "reverse", "random gather", "8 syncs", "divergent branch",
                  "shared histogram", "grid-stride", "3-D block", "tiled transpose"):
        assert label in out
    assert "median" in out and "ragged ≤ 3× vadd" in out


def test_zoo_quick_runs_every_case_and_checks_its_answer():
    """zoo.py checks simtdocs, the floor and the padded twin against each case's numpy idiom
    (tiny sizes, one run each); every family prints, and the issue's targets are reported."""
    out = run("benchmarks/zoo.py", "--quick", "--repeat", "1")
    for label in ("vectorAdd", "reduce4 (shuffles)", "finalError", "shfl_scan_test", "transposeNoBankConflicts",
                  "hw8 task3", "matrixMul<16>", "convolutionRowsKernel", "shared-halo stencil", "histogram256",
                  "SpMV CSR", "merge", "VoteAnyKernel1", "simpleAtomicIntrinsics"):
        assert label in out
    for target in ("its floor", "its idiom", "median", "padded twin", "peak < 2 GB"):
        assert target in out
