"""srush/GPU-Puzzles with ``from simtdocs import cuda``: all 14 puzzles (17 problems, two
sizes for Conv, Sum and Matmul), solved in the puzzles' own style at their sizes, give their
spec functions' results, checked as ``CudaProblem.check`` checks them (``assert_allclose``).
``test_cuda_numba.py`` also runs them side by side with numba's simulator (case "gpu_puzzles")."""

import numpy as np
import pytest

import numba_cases
from numba_side_by_side import run_case

pytest.importorskip("numba")  # the puzzles name numba.float32, as GPU-Puzzles does

PUZZLES = ["Map", "Zip", "Guard", "Map 2D", "Broadcast", "Blocks", "Blocks 2D", "Shared", "Pooling", "Dot",
           "1D Conv (Simple)", "1D Conv (Full)", "Sum (Simple)", "Sum (Full)", "Axis Sum", "Matmul (Simple)",
           "Matmul (Full)"]


@pytest.fixture(scope="module")
def results():
    return run_case("simtdocs", "gpu_puzzles", numba_cases.CASES["gpu_puzzles"][1])


@pytest.mark.parametrize("name", PUZZLES)
def test_puzzle_passes_its_check(name, results):
    np.testing.assert_allclose(results[name], results[name + " (spec)"])
