"""Lecture P2, first half: the companion scripts 01-03 compute the figures the page quotes.

Each script runs once under a Recorder (as the site build runs it), so the test sees the
glued values and the shown tables and figures exactly as the page does.
"""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from simtdocs.display.recorder import Recorder, recording
from simtdocs.lectures.p2.memory import column_read_ways

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = {
    "01": ROOT / "snippets/p2/01_cuda_programming_model.py",
    "02": ROOT / "snippets/p2/02_memory_coalescing.py",
    "03": ROOT / "snippets/p2/03_shared_memory_sync_reduction.py",
    "09": ROOT / "snippets/p2/09_cuda_way.py",
}


@pytest.fixture(scope="module")
def run():
    cache = {}

    def get(key):
        if key not in cache:
            rec = Recorder()
            with recording(rec):
                ns = runpy.run_path(str(SCRIPTS[key]), run_name="p2_test")
            cache[key] = (ns, {k: g.value for k, g in rec.glue.items()}, rec)
        return cache[key]

    return get


def shown_table(rec, header: str) -> list[list[str]]:
    """The cells of the English table the script showed whose first column is ``header``."""
    md = next(i["en"] for i in rec.items if isinstance(i, dict) and i["en"].startswith(f"| {header} |"))
    return [[c.strip() for c in line.strip("|").split("|")] for line in md.splitlines()[2:]]


def shown_figures(rec) -> list[dict[str, str]]:
    """The image (a data: URI) of each figure the script showed, per language."""
    return [{lang: re.search(r'src="([^"]+)"', html).group(1) for lang, html in i.items()}
            for i in rec.items if isinstance(i, dict) and i["en"].startswith("<figure")]


def test_block_size_table(run):
    _, glued, _ = run("01")
    assert round(glued["p2_bs100_simt"], 2) == 0.78
    assert round(glued["p2_bs100_coalescing"], 2) == 0.86
    assert glued["p2_bs_min_simt"] >= 0.97
    assert glued["p2_bs100_last_warp"] == 4


def test_missing_bounds_check_is_reported_where_it_happens(run):
    _, _, rec = run("01")
    text = "".join(i for i in rec.items if isinstance(i, str))
    assert "Invalid __global__ read of size 4 bytes" in text
    assert "block (3,0,0), threads 232–255 read a[1000]…a[1023]" in text


def test_two_d_mapping_and_grid_stride(run):
    _, glued, _ = run("01")
    assert (glued["p2_bias_sectors_right"], glued["p2_bias_sectors_swapped"]) == (2_750, 7_455)
    assert round(glued["p2_bias_coalescing_right"], 2) == 0.95
    assert round(glued["p2_bias_coalescing_swapped"], 2) == 0.35
    assert glued["p2_gs_requests"] == 2 * 100_000 // 32  # a load and a store per 32 elements


def test_vector_add_in_c(run):
    ns, glued, _ = run("01")
    # n = 1000 over blocks of 256: the last block holds 232 elements, so its warp 7 (threads
    # 224-255) has 8 threads inside and 24 past the end, the launch's only divergent branch
    assert (glued["p2_va_warp"], glued["p2_va_tail"]) == (7, 24)


def test_divergence_demo(run):
    _, glued, _ = run("01")
    # 64 blocks of 8 warps; a warp issues its branch, then a load and a store per side it runs:
    # 5 instructions when it splits (16 lanes on each side), 3 when the whole warp agrees
    assert glued["p2_div_instr_split"] == 64 * 8 * 5
    assert glued["p2_div_instr_uniform"] == 64 * 8 * 3
    assert glued["p2_div_simt_split"] == (32 + 4 * 16) / (5 * 32)
    assert glued["p2_div_simt_uniform"] == 1.0


def test_access_patterns_and_transpose(run):
    _, glued, _ = run("02")
    assert glued["p2_stride3_sectors"] == 12 and round(glued["p2_stride3_eff"], 2) == 0.33
    assert glued["p2_stride32_moved"] == 1_024
    assert glued["p2_misaligned_sectors"] == 5
    assert glued["p2_naive_over_copy"] == 4.5
    assert glued["p2_tiled_ways"] == 32
    assert glued["p2_nosync_races"] == 1_024


def test_transpose_versions(run):
    ns, _, _ = run("02")
    runs = ns["runs"]  # the transpose versions: (stats, result correct)
    assert column_read_ways(runs["tiled 32×33 (padded)"][0]) == 1
    assert column_read_ways(runs["tiled 32×32, no padding"][0]) == 32
    assert all(ok for _st, ok in runs.values())  # even without sync: lock step


def test_bank_conflicts_by_stride(run):
    _, glued, rec = run("03")
    ways = {int(row[0]): int(row[3]) for row in shown_table(rec, "row length = stride (words)")}
    assert [ways[s] for s in (1, 2, 4, 8, 16, 32)] == [1, 2, 4, 8, 16, 32]
    assert ways[3] == ways[33] == ways[65] == 1
    assert (glued["p2_ways_pow2"], glued["p2_ways_odd"], glued["p2_ways_even"]) == (32, 1, 2)


def test_reverse_race_report(run):
    _, glued, _ = run("03")
    assert glued["p2_reverse_race"].startswith("warp 0 reads shared buf[255], written in this phase by warp 7")


def test_reduction_versions(run):
    ns, glued, _ = run("03")
    red = ns["red"]
    assert red["v2"].warp_instructions == red["v3"].warp_instructions
    assert round(red["v2"].shared_ways, 2) == 3.33 and red["v3"].shared_ways == 1.0
    assert all(ok for _st, ok in ns["runs"].values())  # the reduction versions: (stats, sum correct)
    read = glued["p2_red_read_ns"] / 1e9  # the time to read the input once
    assert red["v1"].estimate_time().issue_s > read > red["v5"].estimate_time().issue_s
    assert glued["p2_red_div_removed"] > 0.85
    assert glued["p2_shfl_sum"] == sum(range(32))


def test_cuda_way_glued_numbers(run):
    ns, glued, rec = run("09")
    n, threads = glued["cw_n"], glued["cw_threads"]
    warps = -(-n // threads) * threads // 32
    assert glued["cw_warps"] == warps
    assert glued["cw_divergent"] == warps + (n % 32 != 0)  # every warp on even/odd, the one straddling n on i < n
    assert glued["cw_differ"] == 0 and glued["cw_compared"] == len(vars(ns["stats"].totals))
    assert glued["cw_store_sectors"] == 2 * glued["cw_sectors_array"]  # c's sectors, once per path
    assert glued["cw_sectors"] == 4 * glued["cw_sectors_array"]
    text = "".join(i for i in rec.items if isinstance(i, str))
    assert "blk.branch(i < n)" in text and "# " in text  # the mask form, with the reader's lines
    assert glued["cw_check_divergent"] == 1 and ns["verdict"].passed


@pytest.mark.parametrize("n,threads", [(1000, 256), (4096, 128), (77, 32)])
def test_cuda_way_per_thread_kernel_and_blk_twin_count_alike(run, n, threads):
    """The page's @cuda.jit kernel and its blk twin, on other sizes and inputs: identical totals."""
    from simtdocs import cdiv, launch

    ns, _, _ = run("09")
    rng = np.random.default_rng(n)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c1, c2 = np.zeros(n, np.float32), np.zeros(n, np.float32)
    s1 = ns["add_or_sub"][cdiv(n, threads), threads](a, b, c1, n)
    s2 = launch(ns["add_or_sub_blk"], grid=cdiv(n, threads), block=threads, args=(a, b, c2, n))
    assert np.array_equal(c1, c2) and np.array_equal(c1, np.where(np.arange(n) % 2 == 0, a + b, a - b))
    assert s1.totals == s2.totals
    assert s1.divergent_branches > 0


@pytest.mark.parametrize("key", ["02", "03"])  # the sector figure, the bank figure
def test_figures_draw_in_both_languages(run, key):
    _, _, rec = run(key)
    (figure,) = shown_figures(rec)
    assert figure["zh"].startswith("data:image/svg+xml") and figure["zh"] != figure["en"]


@pytest.mark.parametrize("key", sorted(SCRIPTS))
def test_script_runs_alone_quickly(key):
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(SCRIPTS[key])], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={"MPLBACKEND": "Agg", **__import__("os").environ})
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "|" in proc.stdout  # it printed its tables
    assert elapsed < 3.0, f"{SCRIPTS[key].name} took {elapsed:.1f} s"
