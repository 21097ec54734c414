"""The page "The simulator and a real GPU": each simulated figure against its expectation.

The companion script runs once under a Recorder, as the site build runs it. Every figure's
simulated value is checked against a count derived here by hand from the kernel's addresses
(not from the engine); where the engine and the published profile agree, the published
value must equal it too, and the figures that differ are exactly the ones the page explains.
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

from simtdocs.devices import A100_40GB, V100
from simtdocs.display.recorder import Recorder, recording

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "snippets/silicon/01_published_profiles.py"

N = 4096  # the hw8 matrix: N×N doubles, one element per thread
WARPS = N * N // 32  # one load and one store instruction per warp
DOUBLE, FLOAT = 8, 4
SECTOR, WAVEFRONT = 32, 128  # bytes of a sector, bytes a shared wavefront serves


def by_hand() -> list[float]:
    """The value each figure's kernel must give, from its addresses, in the page's order."""
    # Naive transpose: a warp's loads are N doubles apart (one sector per lane), its stores
    # are 32 neighbouring doubles (256 bytes: 8 sectors).
    naive = [WARPS, WARPS * 32, WARPS * 32 * DOUBLE // SECTOR, 100 * DOUBLE / SECTOR]
    # Shared 32×32 tile written down a column: lanes 32 doubles (256 bytes) apart share a bank
    # pair; 8-byte accesses go half a warp at a time, 16 lanes in one bank: 16 wavefronts per
    # half, 32 per instruction, where 256 bytes need 2. The read along a row takes the 2.
    column, row = 32, 32 * DOUBLE // WAVEFRONT
    moved = 2 * WARPS * 32 * DOUBLE  # bytes the shared store and load move
    tiled = [WARPS * column, WARPS * (column - row), WARPS * row,
             round(100 * moved / (WAVEFRONT * WARPS * (column + row)), 2)]
    # Padded 32×33 tile: a column's lanes are 33 doubles apart, every bank pair once per half.
    padded = [WARPS * row, 0, 100.0]
    # Source B: written along rows, read down columns; the extra blocks do nothing.
    on_read = [WARPS * column, WARPS * (column - row)]
    # LDS.128: 32 lanes × 16 bytes = 512 bytes, 4 wavefronts at best; 128 bytes apart, every
    # lane's float4 is in banks 0-3, so each of the 4 quarter-warps takes 8: 32 in all.
    lds = [32, 32 - 4, 4]
    # Strided vector add: lanes stride × 4 bytes apart; a 32-byte sector holds 8 // stride lanes.
    strided = [32 / max(1, 8 // s) for s in (8, 4)]
    # SAXPY: the estimate moves 3 × 4 × n bytes at the preset's peak, so GiB/s = peak / 2^30.
    saxpy = [round(d.memory_bandwidth / 2**30, 2) for d in (A100_40GB, V100)]
    return naive + tiled + padded + on_read + lds + strided + saxpy


# Figures (1-based, the page's order) where the published value differs from the engine's:
# the hardware's l1tex__data_* counters (5, 6, 7, 10, 12, 13) and the measured bandwidths (19, 20).
DIFFER = {5, 6, 7, 10, 12, 13, 19, 20}


@pytest.fixture(scope="module")
def run():
    rec = Recorder()
    with recording(rec):
        ns = runpy.run_path(str(SCRIPT), run_name="silicon_test")
    return ns, {k: g.value for k, g in rec.glue.items()}, rec


def test_every_simulated_value_is_the_hand_derived_count(run):
    ns, _, _ = run
    figures = ns["figures"]
    expected = by_hand()
    assert len(figures) == len(expected)
    for i, (f, want) in enumerate(zip(figures, expected), 1):
        assert f.simulated == want, (i, f.metric, f.simulated, want)


def test_published_equals_simulated_except_where_the_page_says_why(run):
    ns, glued, _ = run
    figures = ns["figures"]
    assert {i for i, f in enumerate(figures, 1) if not f.exact} == DIFFER
    assert glued["si_matched"] == len(figures) - len(DIFFER)
    assert glued["si_unmatched"] == len(DIFFER)
    # the hardware counters count more than the addresses, never less
    assert all(figures[i - 1].published > figures[i - 1].simulated for i in DIFFER - {19, 20})
    # the estimate at peak bandwidth is faster than any measurement
    assert all(figures[i - 1].simulated > figures[i - 1].published for i in (19, 20))


def test_enough_figures_from_enough_sources_each_pinned(run):
    ns, glued, _ = run
    sources = {f.source.key: f.source for f in ns["figures"]}
    assert len(ns["figures"]) >= 8 and len(sources) >= 3
    assert glued["si_sources"] == len(ns["SOURCES"]) == len(sources)
    for s in sources.values():
        pin = s.pin if isinstance(s.pin, str) else s.pin.msgid
        assert re.search(r"\b[0-9a-f]{7}\b|\d{4}-\d{2}-\d{2}", pin), s
        assert s.url.startswith("https://"), s
        commit = re.search(r"/(?:tree|blob)/([0-9a-f]{40})/", s.url)
        if commit:  # a repository: the link is the pinned commit
            assert commit.group(1).startswith(pin.split()[0]), s


def test_the_excess_of_the_counter_is_the_same_on_wavefronts_and_conflicts(run):
    """Source A's store: wavefronts and bank conflicts exceed the addresses by the same number."""
    ns, glued, _ = run
    f = ns["figures"]
    assert f[4].published - f[4].simulated == f[5].published - f[5].simulated == glued["si_st_extra"]
    assert f[11].published - f[11].simulated == f[12].published - f[12].simulated == glued["si_ld_extra_b"]


def test_caches_figures(run):
    ns, glued, _ = run
    assert ns["l1_bytes"] == SECTOR * (WARPS * 32 + WARPS * 8)
    assert ns["matrix_bytes"] == 2 * N * N * DOUBLE
    assert glued["si_l1_over_copy"] > 2  # more than the GPU's copy bandwidth: caches served it
    assert glued["si_unused"] == 1 - DOUBLE / SECTOR


def test_both_tables_render_in_both_languages(run):
    _, _, rec = run
    tables = [i for i in rec.items if isinstance(i, dict) and i["en"].startswith("| ")]
    assert len(tables) == 3  # sources, the CUDA dialect beside blk, the comparison
    for t, word in zip(tables, ("未注明", "写法", "相等")):
        assert word in t["zh"] and word not in t["en"]
        assert t["en"].count("\n") >= 5


def test_the_cuda_dialect_counts_what_blk_counts(run):
    """Source A's kernels written with simtdocs.cuda give the counts of their blk versions."""
    ns, _, _ = run
    keys = ("requests", "sectors", "shared_wavefronts", "shared_bank_conflicts", "barriers")
    assert len(ns["pairs"]) == 3
    for label, by_blk, by_cuda in ns["pairs"]:
        assert [getattr(by_blk, k) for k in keys] == [getattr(by_cuda, k) for k in keys], label
    naive = ns["pairs"][0][2]
    assert naive.sectors == WARPS * 32 + WARPS * 8
