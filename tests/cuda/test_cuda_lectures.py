"""The lectures' kernels written per thread give the counters of their ``blk`` versions.

The ``blk`` versions are the companion scripts' own (``tests/kernels.py`` takes them from
snippets/), compared on ``stats.totals`` and on the results, exactly. Where the two
dialects differ by design, the test says so and removes exactly those lines on each side:

* the lecture declares arithmetic with ``blk.alu`` (the per-thread dialect counts none):
  the lecture's ``blk.alu`` lines are left out;
* an ``if`` of the per-thread kernel is a counted branch where the lecture uses a plain mask
  (``inside = gid < n``, ``mask=tid == 0``) or a Python loop (the grid-stride loop): the
  per-thread kernel's lines that only branch are left out, and the branch they count is
  checked on its own.
"""

import numpy as np
import pytest

import kernels as lec
from simtdocs import cdiv, launch
from simtdocs.counters import Counters
from simtdocs.snippets import definitions

import cuda_lecture_kernels as pt


def total(stats, leave_out=lambda source: False) -> Counters:
    c = Counters()
    for site, counters in stats.by_site.items():
        if not leave_out(site.source):
            c.add(counters)
    return c


def alu_lines(source):
    return source.startswith("blk.alu")


def branch_lines(*lines):
    return lambda source: source in lines


def test_vector_add_ragged():
    n = 1000
    rng = np.random.default_rng(0)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c1, c2 = np.zeros(n, np.float32), np.zeros(n, np.float32)
    s1 = launch(lec.vector_add, grid=cdiv(n, 256), block=256, args=(a, b, c1, n))
    s2 = pt.vector_add[cdiv(n, 256), 256](a, b, c2, n)
    assert np.array_equal(c1, c2) and np.array_equal(c2, a + b)
    assert s2.totals == s1.totals  # the lecture's mask form counts its `if` with blk.branch, as the C does
    branch = next(c for s, c in s2.by_site.items() if s.source == "if i < n:")
    # one branch per warp, divergent only in the warp that straddles n
    assert (branch.branches, branch.divergent_branches) == (cdiv(n, 256) * 8, 1)
    assert pt.vector_add.last_stats is s2


@pytest.mark.parametrize("blocks,threads", [(4, 128), (16, 256), (cdiv(100_000, 256), 256)])
def test_grid_stride_loop(blocks, threads):
    n = 100_000
    x = np.random.default_rng(4).random(n, dtype=np.float32)
    y1, y2 = np.zeros(n, np.float32), np.zeros(n, np.float32)
    s1 = launch(lec.scale, grid=blocks, block=threads, args=(x, y1, np.float32(2), n))
    s2 = pt.scale[blocks, threads](x, y2, np.float32(2), n)
    assert np.array_equal(y1, y2)
    loop_line = "for i in range(cuda.grid(1), n, cuda.gridsize(1)):"
    assert s2.totals == s1.totals  # the lecture's mask form tests each thread's index per trip, as the C does
    # the loop test is a branch per warp per trip, the last trip of each warp included
    loop = next(c for s, c in s2.by_site.items() if s.source == loop_line)
    warps = blocks * threads // 32
    trips = sum(len(range(w * 32, n, blocks * threads)) + 1 for w in range(warps))
    assert loop.branches == trips


@pytest.mark.parametrize("version", ["naive", "tiled0", "tiled1", "nosync"])
def test_transposes(version):
    N = 128
    A = np.random.default_rng(5).random((N, N), dtype=np.float32)
    B1, B2 = np.zeros_like(A), np.zeros_like(A)
    args1 = args2 = ()
    if version == "naive":
        k1, k2 = lec.transpose_naive, pt.transpose_naive
    else:
        pad, sync = {"tiled0": (0, True), "tiled1": (1, True), "nosync": (1, False)}[version]
        k1, k2 = lec.transpose_tiled, pt.transpose_tiled
        args1, args2 = (pad, sync), (pad, sync)
    s1 = launch(k1, grid=(N // 32, N // 32), block=(32, 8), args=(A.reshape(-1), B1.reshape(-1), N, *args1))
    s2 = k2[(N // 32, N // 32), (32, 8)](A.reshape(-1), B2.reshape(-1), N, *args2)
    assert np.array_equal(B1, B2)
    assert s1.totals == s2.totals
    assert len(s1.races) == len(s2.races)
    if version == "nosync":
        assert s2.races and "tile[cuda.threadIdx.x, cuda.threadIdx.y + j]" in s2.races[0].site.source


@pytest.mark.parametrize("sync", [True, False])
def test_reverse(sync):
    d1 = np.random.default_rng(7).random(256, dtype=np.float32)
    d2 = d1.copy()
    s1 = launch(lec.reverse, grid=1, block=256, args=(d1, sync))
    s2 = pt.reverse[1, 256](d2, sync)
    assert np.array_equal(d1, d2)
    assert s1.totals == s2.totals
    assert [(r.kind, r.site.source) for r in s1.races] == [
        (r.kind, {"d[t] = buf[255 - t]": "blk.store(d, t, blk.load(buf, mirror))"}.get(r.site.source, r.site.source))
        for r in s2.races]


@pytest.mark.parametrize("v", [1, 2, 3, 4, 5])
def test_reductions(v):
    n, threads = 1 << 14, 256
    per = 1 if v <= 3 else 2
    x = np.random.default_rng(6).random(n, dtype=np.float32)
    o1, o2 = np.zeros(n // (threads * per), np.float32), np.zeros(n // (threads * per), np.float32)
    s1 = launch(getattr(lec, f"reduce_v{v}"), grid=o1.size, block=threads, args=(x, o1))
    s2 = getattr(pt, f"reduce_v{v}")[o2.size, threads](x, o2)
    assert np.array_equal(o1, o2)
    # the lecture stores the block's sum under the plain mask tid == 0; the CUDA code has an if
    assert total(s2, branch_lines("if tid == 0:")) == total(s1, alu_lines)
    # ... and that if splits warp 0 of every block
    assert s2.divergent_branches == s1.divergent_branches + o2.size


def test_warp_synchronous_tail_agrees_with_shuffles():
    """The warp-synchronous tail (shared memory, __syncwarp between steps) sums like v5's
    shuffles, is race-free, and moves its partial sums through shared memory instead of registers."""
    n, threads = 1 << 12, 256
    x = np.random.default_rng(8).random(n, dtype=np.float32)
    out = np.zeros(n // threads, np.float32)
    st = pt.reduce_warp_sync[out.size, threads](x, out)
    assert np.allclose(out, x.reshape(-1, threads).sum(1), rtol=1e-5)
    assert not st.races
    assert st.shuffles == 0 and st.divergent_branches == out.size  # only `if tid == 0` splits a warp


def test_shuffle_steps():
    x = np.arange(32, dtype=np.float32)
    t1, t2 = np.zeros(6 * 32, np.float32), np.zeros(6 * 32, np.float32)
    s1 = launch(lec.shuffle_steps, grid=1, block=32, args=(x, t1))
    s2 = pt.shuffle_steps[1, 32](x, t2)
    assert np.array_equal(t1, t2) and t2[-32] == x.sum()
    assert s1.totals == s2.totals


@pytest.mark.parametrize("layout", ["alternate", "aligned"])
def test_divergence_demo_if_else(layout):
    ns = definitions("snippets/exec_model/warp_divergence.py:setup", "snippets/exec_model/warp_divergence.py:kernel")
    n = 1024
    take = (np.arange(n) % 2 == 0) if layout == "alternate" else ((np.arange(n) // 32) % 2 == 0)
    o1, o2 = np.zeros(n, np.int32), np.zeros(n, np.int32)
    s1 = launch(ns["if_else"], grid=n // 256, block=256, args=(take, o1))
    s2 = pt.if_else[n // 256, 256](take, o2)
    assert np.array_equal(o1, o2)
    assert s1.totals == s2.totals
    assert s2.divergent_branches == (n // 32 if layout == "alternate" else 0)


@pytest.mark.parametrize("pick", ["odd/even", "warp"])
def test_divergence_demo_two_paths(pick):
    ns = definitions("snippets/p2/01_cuda_programming_model.py:setup", "snippets/p2/01_cuda_programming_model.py:divergence")
    rng = np.random.default_rng(3)
    a, b = rng.random(256 * 8, dtype=np.float32), rng.random(256 * 8, dtype=np.float32)
    o1, o2 = np.zeros(256 * 8, np.float32), np.zeros(256 * 8, np.float32)
    s1 = launch(ns["two_paths"], grid=8, block=256, args=(a, b, o1, pick))
    s2 = pt.two_paths[8, 256](a, b, o2, pick == "odd/even")
    assert np.array_equal(o1, o2)
    assert s2.totals == s1.totals
