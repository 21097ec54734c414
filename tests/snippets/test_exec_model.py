"""The execution-model lecture's companion scripts: their claims, and the GPU lab.

The GPU lab needs PyTorch with a CUDA GPU; everywhere else it is skipped, saying why.
The other scripts run on the simulator and are checked against what the page says of
them, and the divergence counts against an independent, plain-Python count.
"""

from __future__ import annotations

import importlib.util
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "snippets" / "exec_model"


def run(name: str) -> dict:
    return runpy.run_path(str(SNIPPETS / name))


def cuda_available() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


@pytest.mark.skipif(not cuda_available(), reason="GPU lab: needs PyTorch with a CUDA GPU")
def test_gpu_lab_runs_on_a_real_gpu():
    proc = subprocess.run(
        [sys.executable, str(SNIPPETS / "gpu_lab_bandwidth.py")],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "SMs" in proc.stdout
    rows = [ln.split() for ln in proc.stdout.splitlines() if ln.strip()[:1].isdigit()]
    assert len(rows) == 5 and all(float(r[-1]) > 0 for r in rows)


def test_gpu_lab_says_why_it_skips_without_a_gpu():
    if cuda_available():
        pytest.skip("this machine has a CUDA GPU: the lab runs instead")
    proc = subprocess.run(
        [sys.executable, str(SNIPPETS / "gpu_lab_bandwidth.py")],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "GPU lab skipped" in proc.stdout and "needs PyTorch with CUDA" in proc.stdout


def bodies_by_hand(take_if) -> int:
    """The source lecture's rule in plain Python: 1 body for a uniform warp, 2 for a split one."""
    bodies = 0
    for start in range(0, len(take_if), 32):
        w = list(take_if[start:start + 32])
        bodies += 1 if all(w) or not any(w) else 2
    return bodies


def test_warp_divergence_numbers_of_the_lecture():
    ns = run("warp_divergence.py")
    # layout -> (divergent branches, branch bodies, divergence tax = bodies per warp)
    got = {name: (stats.divergent_branches, bodies, bodies / stats.warps)
           for name, (stats, bodies) in ns["results"].items()}
    assert ns["stats"].warps == 8
    assert got == {"interleaved": (8, 16, 2.0), "warp_aligned": (0, 8, 1.0)}


@pytest.mark.parametrize("seed", range(5))
def test_simulated_branch_bodies_match_the_plain_count(seed):
    ns = run("warp_divergence.py")
    rng = np.random.default_rng(seed)
    n = 32 * int(rng.integers(1, 9))
    # runs of equal decisions of random length: some warps uniform, some split
    take_if = np.repeat(rng.random(n) < 0.5, rng.integers(1, 64, n))[:n]
    out = np.zeros(n, np.int32)
    stats = ns["launch"](ns["if_else"], grid=1, block=n, args=(take_if, out), device=ns["RTX4090"])
    assert ns["branch_bodies"](stats) == bodies_by_hand(take_if)


def test_occupancy_of_the_register_example():
    ns = run("01_occupancy.py")
    assert ns["occ"].warps_per_sm == 32
    assert round(ns["occ"].occupancy, 2) == 0.67
    assert ns["occ"].limiters == ["registers"]
    assert ns["best_1024"] == pytest.approx(2 / 3)  # 1,536 threads hold one 1,024-thread block


def test_bandwidth_model_rises_to_the_peak():
    ns = run("02_bandwidth_model.py")
    rows, peak = ns["rows"], ns["peak"]
    gbps = [r["gbps"] for r in rows]
    assert gbps == sorted(gbps)
    assert gbps[0] < 0.02 * peak and gbps[-1] > 0.95 * peak and gbps[-1] <= peak


def test_divergence_follows_the_data():
    ns = run("03_divergence_experiment.py")
    random, ordered, aligned = (ns["results"][k] for k in ("random", "sorted", "aligned"))
    assert random.divergent_branches == random.warps  # every warp of random data splits
    assert ordered.divergent_branches <= 1  # only the warp at the sign change can split
    assert aligned.divergent_branches == 0 and aligned.simt_efficiency == 1.0
