"""Lecture P2, part 2 (§7, §8, §12): the numbers the source lecture states, checked against
the code the pages include.

Each test runs the same snippet sections the pages include (expanded by the site's own
``expand_snippets``) and compares the result with the source lecture's figures, worked out
here by plain arithmetic wherever that is possible.
"""

from __future__ import annotations

import math

import pytest

from simtdocs.display import expand_snippets

OCC = "snippets/p2/04_occupancy_latency_waves.py"
LAUNCH = "snippets/p2/05_amdahl_and_launch_overhead.py"
EX = "snippets/p2/06_exercises.py"


CODE01 = "snippets/p2/01_cuda_programming_model.py"
CODE02 = "snippets/p2/02_memory_coalescing.py"
CODE03 = "snippets/p2/03_shared_memory_sync_reduction.py"


def run(script: str, *sections: str, uses: tuple[tuple[str, str], ...] = ()) -> dict:
    """Execute ``setup``, the sections of other scripts in ``uses`` (as the page includes
    them), then ``sections`` of ``script``, in one fresh namespace."""
    ns: dict = {"__name__": "__main__"}  # as when the script runs alone
    for path, name in ((script, "setup"), *uses, *((script, s) for s in sections)):
        code = expand_snippets(f'--8<-- "{path}:{name}"')
        exec(compile(code, f"{path}:{name}", "exec", dont_inherit=True), ns)
    return ns


# -- §7 -------------------------------------------------------------------------------------


def test_occupancy_of_the_96_register_kernel():
    ns = run(OCC, "occupancy")
    ex = ns["occupancy"](128, 96, 32 * 1024)
    assert [r.blocks_per_sm for r in ns["results"].values()] == [8, 32, 5, 5, 1, 2]  # of the six kernels
    # 96 × 32 = 3072 registers per warp; a quarter of 65,536 holds 5 such warps: 20 warps, 5 blocks.
    assert ex.registers_per_warp == 3072
    assert (ex.blocks_per_sm, ex.warps_per_sm) == (5, 20)
    assert ex.limiters == ["registers"]
    assert ex.limits["shared memory"] == (228 * 1024) // (33 * 1024)  # 6
    assert ns["occupancy"](128, 96, 16 * 1024).blocks_per_sm == 5


def test_littles_law():
    ns = run(OCC, "latency", "latency_glue")
    need = 3.35e12 / 132 * 500e-9
    assert ns["need"].needed_bytes == pytest.approx(need)
    assert round(need / 1e3, 1) == 12.7
    lh = ns["latency_hiding"]
    assert lh(64, 1, 128).fraction == pytest.approx(64 * 128 / need)  # about 65%
    assert round(lh(64, 1, 128).fraction, 2) == 0.65
    assert round(lh(16, 1, 128).fraction, 2) == 0.16
    assert lh(16, 2, 512).fraction == 1.0


def test_waves_and_tiles():
    ns = run(OCC, "waves", "tiles")
    assert ns["waves"](133, 1).waves == 2

    def tile(size, t):  # (blocks/SM, blocks, capacity, waves, utilisation) of C = size × size in t × t tiles
        occ, wv = ns["results"][size, t]
        return occ.blocks_per_sm, wv.blocks, wv.capacity, wv.waves, wv.utilisation

    assert tile(1024, 128) == (2, 64, 264, 1, pytest.approx(64 / 264))
    assert tile(1024, 64) == (4, 256, 528, 1, pytest.approx(256 / 528))
    assert ns["lecture"].tile_intensity(128) == 128 * 128 / 256  # t_m t_n / (t_m + t_n)


# -- §8 -------------------------------------------------------------------------------------


def test_amdahl_and_gustafson_at_gpu_scale():
    ns = run(LAUNCH, "amdahl", "speedup_figure")
    assert ns["H100"].fp32_lanes == 16_896
    assert ns["amdahl"](0.01, 16_896) == pytest.approx(1 / (0.01 + 0.99 / 16_896))
    assert round(ns["amdahl"](0.01, 16_896), 1) == 99.4
    assert round(ns["gustafson"](0.01, 16_896)) == 16_727  # s + (1 - s) n
    on_sms, on_lanes, grown = ns["speedups"][0.01]
    assert on_sms == pytest.approx(1 / (0.01 + 0.99 / 132))  # one worker per SM: 57.1
    assert (on_lanes, grown) == (ns["amdahl"](0.01, 16_896), ns["gustafson"](0.01, 16_896))


def test_decode_step_launch_overhead():
    ns = run(LAUNCH, "models", "launch", "launch_glue")
    one = ns["one"]
    assert one[12].kernels == 16 * 12 + 3 == 195
    assert one[8].kernels == 16 * 8 + 3 == 131
    m = ns["LLAMA_1B"]
    assert m.params() == pytest.approx(1.236e9, rel=1e-3)  # Llama 3.2 1B: 1.24B parameters
    gpu = ns["gpu_time"](m)
    assert round(gpu * 1e3, 2) == 0.75  # the source's 0.75 ms
    # Fully overlapped at 8 µs per launch: 1–1.6 ms instead of 0.75 ms.
    assert one[8].overlapped_s == pytest.approx(131 * 8e-6)
    assert one[12].overlapped_s == pytest.approx(195 * 8e-6)


def test_numpy_measurement_is_sane():
    ns = run(LAUNCH, "numpy_overhead")
    per_call = ns["per_call"]
    assert all(t > 0 for t in per_call.values())
    assert per_call[2**18] > per_call[1]  # a big call costs more than the fixed part alone
    assert ns["small_calls"] > 0 and ns["one_call"] > 0


# -- §12 ------------------------------------------------------------------------------------


def test_exercise_1_grid_size():
    rows = {r[0]: r for r in run(EX, "ex1", uses=((CODE01, "kernel"),))["rows"]}
    assert rows[256][1:3] == (math.ceil(1e6 / 256), 3907 * 256 - 10**6) == (3907, 192)
    assert rows[1000][1:3] == (1000, 0)
    assert rows[1000][4] == pytest.approx(1000 / 1024)


def test_exercise_2_indices():
    ns = run(EX, "ex2")
    assert ns["grid"] == (32, 125)
    assert (ns["row"], ns["col"], ns["flat"]) == (5 * 8 + 2, 3 * 32 + 7, 42 * 1000 + 103)


def test_exercise_3_stride_3():
    ns = run(EX, "ex3", uses=((CODE02, "pattern_kernel"),))
    assert ns["read"].sectors == math.ceil((31 * 12 + 4) / 32) == 12
    assert ns["read"].coalescing_efficiency == pytest.approx(128 / 384)


def test_exercise_4_bank_conflicts():
    ways = {r[0]: r[3] for r in run(EX, "ex4", uses=((CODE03, "bank_kernel"),))["rows"]}
    assert ways == {64: 32, 65: 1, 66: 2}


def test_exercise_5_sync_inside_the_loop():
    rows = run(EX, "ex5")["rows"]
    by_place = {r[0].en.split(" (")[0]: r for r in rows}
    after, inside, none = by_place["after the loop"], by_place["inside the first loop"], by_place["no sync at all"]
    assert (after[2], after[3]) == (1, 0)
    assert (inside[2], inside[3]) == (4, 0)
    assert inside[1].en == "yes"
    assert none[3] == 1_024  # the same 512×512 matrix and count as §5.3's "sync left out"


def test_exercise_6_reduction_v2_v3():
    runs = run(EX, "ex6", uses=((CODE03, "reduce_v2"), (CODE03, "reduce_v3")))["runs"]
    assert runs["v2"].warp_instructions == runs["v3"].warp_instructions
    # the kernels are §6.3's own, so the count is §6.3's table's
    red = run(CODE03, "reduce_v1", "reduce_v2", "reduce_v3", "reduce_v4", "reduce_v5", "reduction_launch",
              "reduction_glue")["red"]
    assert runs["v2"].warp_instructions == red["v2"].warp_instructions
    # 45 shared requests and 150 wavefronts per block in version 2: 3.33 on average.
    assert round(runs["v2"].shared_ways, 2) == 3.33
    assert runs["v3"].shared_ways == 1.0
    assert runs["v2"].estimate_time().issue_s > runs["v3"].estimate_time().issue_s


def test_exercises_7_to_10():
    occ = run(EX, "ex7", uses=(("snippets/p2/04_occupancy_latency_waves.py", "setup"),))["occ"]
    assert (occ.blocks_per_sm, occ.warps_per_sm, round(occ.occupancy, 2)) == (5, 20, 0.31)
    ns = run(EX, "ex8")
    assert round(ns["before"].fraction, 2) == 0.16 and ns["after"].fraction == 1.0
    rows = {r[0]: r for r in run(EX, "ex9")["rows"]}
    assert rows["128×128"][2:5] == (64, 264, 1) and rows["64×64"][2:5] == (256, 528, 1)
    rows = {r[0]: r for r in run(EX, "ex10")["rows"]}
    assert rows[5][2:] == (pytest.approx(3.5), pytest.approx(2.0))
    assert rows[1][2:] == (pytest.approx(2.3), pytest.approx(2.0))


# -- the scripts themselves ------------------------------------------------------------------


@pytest.mark.parametrize("script,name", [(OCC, "occupancy_figure"), (OCC, "latency_figure"),
                                         (OCC, "waves_figure"), (LAUNCH, "speedup_figure"),
                                         (LAUNCH, "launch_figure")])
def test_figures_draw_in_both_languages(script, name):
    import re

    from simtdocs.display.recorder import Recorder, recording

    sections = {"speedup_figure": ("amdahl",), "launch_figure": ("models", "launch")}.get(name, ())
    rec = Recorder()
    with recording(rec):
        run(script, *sections, name)
    (figure,) = [{lang: re.search(r'src="([^"]+)"', html).group(1) for lang, html in i.items()}
                 for i in rec.items if isinstance(i, dict) and i["en"].startswith("<figure")]
    assert figure["zh"].startswith("data:image/svg+xml") and figure["zh"] != figure["en"]


@pytest.mark.parametrize("script", [OCC, LAUNCH, EX])
def test_script_runs_alone_quickly(script):
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, script], cwd=root, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "MPLBACKEND": "Agg"})
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "|" in proc.stdout  # it printed its tables
    assert elapsed < 3.0, f"{script} took {elapsed:.1f} s"
