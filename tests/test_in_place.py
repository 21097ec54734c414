"""A kernel may change its own arrays in place, as CUDA code changes its registers.

``i += stride`` in a grid-stride loop, ``m &= cond`` narrowing a mask, ``j += 1`` on an index
loaded from a table, ``idx[:] = …``: the fast engine remembers work per array object, so
each case here once went wrong there while the reference engine was right. Both engines
run every kernel; the numbers in the comments are worked out by hand.
"""

import numpy as np
import pytest

from simtdocs import launch, reference

ENGINES = [pytest.param(launch, id="fast"), pytest.param(reference.launch, id="reference")]
RNG = np.random.default_rng(22)


@pytest.mark.parametrize("run", ENGINES)
def test_grid_stride_loop_with_an_int64_index_updated_in_place_copies_every_element_once(run):
    def copy(blk, a, out, n):
        i = (blk.bx * blk.bdx + blk.tx).astype(np.int64)  # size_t i = blockIdx.x * blockDim.x + threadIdx.x
        stride = blk.bdx * blk.gdx
        m = i < n
        while m.any():
            blk.store(out, i, blk.load(a, i, mask=m), mask=m)
            i += stride
            m = i < n

    n = 10_000
    a = RNG.random(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    stats = run(copy, grid=4, block=128, args=(a, out, n))
    np.testing.assert_array_equal(out, a)
    # 512 threads: 19 full sweeps of 512 floats (64 sectors, 16 warps) and a last one of
    # 272 floats (34 sectors, 9 warps), for the load and for the store.
    assert stats.sectors == 2 * (19 * 64 + 34) == 2500
    assert stats.requests == 2 * (19 * 16 + 9) == 626


@pytest.mark.parametrize("run", ENGINES)
def test_a_mask_narrowed_in_place_narrows_the_stores(run):
    def positive(blk, a, out, n):
        i = blk.bx * blk.bdx + blk.tx
        m = i < n
        v = blk.load(a, i, mask=m)
        m &= v > 0
        blk.store(out, i, v, mask=m)

    n = 1000
    a = np.where(np.arange(n) % 4 == 0, 1.0, -1.0).astype(np.float32) * RNG.uniform(1, 2, n).astype(np.float32)
    out = np.zeros(n, np.float32)
    stats = run(positive, grid=4, block=256, args=(a, out, n))
    np.testing.assert_array_equal(out, np.where(a > 0, a, 0))
    store = next(c for s, c in stats.by_site.items() if "store" in s.source)
    assert store.active_lanes == 250  # every fourth of 1,000
    assert store.warp_instructions == 32  # 1,000 threads fill 32 warps, each with positive lanes
    assert stats.totals.active_lanes == 1000 + 250


@pytest.mark.parametrize("run", ENGINES)
def test_a_mask_narrowed_in_place_is_seen_again_by_the_same_instruction_in_a_loop(run):
    def csr_rows(blk, rowptr, vals, out, rows):
        # A CSR sum per row, one thread per row: live narrows as rows run out.
        r = blk.bx * blk.bdx + blk.tx
        live = r < rows
        j = blk.load(rowptr, r, mask=live)
        end = blk.load(rowptr, r + 1, mask=live)
        acc = np.zeros(r.shape, np.float64)
        live &= blk.branch(j < end, mask=live)
        while live.any():
            acc += blk.load(vals, j, mask=live)
            j += 1
            live &= blk.branch(j < end, mask=live)
        blk.store(out, r, acc, mask=r < rows)

    rows = 100
    lengths = np.arange(rows) % 5  # 0, 1, 2, 3, 4 entries per row
    rowptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    vals = RNG.random(int(rowptr[-1]))
    out = np.zeros(rows)
    stats = run(csr_rows, grid=2, block=64, args=(rowptr, vals, out, rows))
    np.testing.assert_allclose(out, np.add.reduceat(np.append(vals, 0), rowptr[:-1]) * (lengths > 0))
    load = next(c for s, c in stats.by_site.items() if "acc +=" in s.source)
    assert load.active_lanes == int(lengths.sum()) == 200  # one lane per stored value


@pytest.mark.parametrize("run", ENGINES)
def test_an_index_loaded_from_a_table_and_moved_in_place_reads_the_next_element(run):
    def next_of(blk, table, a, out):
        t = blk.tx
        j = blk.load(table, t)
        first = blk.load(a, j)
        j += 1
        blk.store(out, t, blk.load(a, j) - first)

    table = np.arange(5, 69, dtype=np.int64)  # lanes 0..63 at elements 5..68: one run
    a = RNG.random(70)
    out = np.zeros(64)
    run(next_of, grid=1, block=64, args=(table, a, out))
    np.testing.assert_array_equal(out, a[table + 1] - a[table])


@pytest.mark.parametrize("run", ENGINES)
def test_an_index_rewritten_by_slice_assignment_is_read_afresh(run):
    def two_halves(blk, a, out):
        t = blk.tx
        idx = (t + 0).astype(np.int32)
        first = blk.load(a, idx)
        idx[:] = 63 - idx  # the same array, reversed
        blk.store(out, t, first + 10 * blk.load(a, idx))

    a = RNG.random(64)
    out = np.zeros(64)
    run(two_halves, grid=1, block=64, args=(a, out))
    np.testing.assert_array_equal(out, a + 10 * a[::-1])


@pytest.mark.parametrize("run", ENGINES)
def test_a_branch_on_thread_indices_narrowed_by_values_that_differ_between_blocks(run):
    def first_half_positive(blk, a, out):
        i = blk.bx * blk.bdx + blk.tx
        m = blk.branch(blk.tx < 16)  # the same in every block...
        m &= blk.load(a, i) > 0  # ...narrowed in place by each block's own data
        blk.store(out, i, 1.0, mask=m)

    a = RNG.standard_normal(4 * 64)
    out = np.zeros(4 * 64)
    stats = run(first_half_positive, grid=4, block=64, args=(a, out))
    want = ((np.arange(4 * 64) % 64 < 16) & (a > 0)).astype(float)
    np.testing.assert_array_equal(out, want)
    store = next(c for s, c in stats.by_site.items() if "blk.store" in s.source)
    assert store.active_lanes == int(want.sum())


def test_widening_a_thread_index_in_place_with_block_values_says_how_to_write_it():
    from simtdocs import SimulatorError

    def shifted(blk, a, out):
        i = blk.tx.copy()
        i += blk.bx * blk.bdx  # blk.tx holds one row for every block of the pass
        blk.store(out, i, blk.load(a, i))

    with pytest.raises(SimulatorError, match=r"line \d+: i \+= blk\.bx \* blk\.bdx  # .*\) updates in place an array that "
                                             r"holds one row for all blocks.*i = i \+ blk\.bx \* blk\.bdx"):
        launch(shifted, grid=4, block=32, args=(np.zeros(128), np.zeros(128)))


def test_a_branch_mask_written_in_place_is_read_afresh_by_the_instruction_after():
    def narrowed(blk, out):
        m = blk.branch(blk.tx < 24)
        blk.store(out, blk.bx * blk.bdx + blk.tx, 1.0, mask=m)  # 24 lanes per block
        m[:, 8:] = False  # slice assignment: 8 lanes per block
        blk.store(out, blk.bx * blk.bdx + blk.tx, 2.0, mask=m)
        np.logical_and(m, blk.tx < 4, out=m)  # a ufunc writing into it: 4 lanes per block
        blk.store(out, blk.bx * blk.bdx + blk.tx, 3.0, mask=m)

    for run in (launch, reference.launch):
        out = np.zeros(3 * 32)
        stats = run(narrowed, grid=3, block=32, args=(out,))
        row = [3.0] * 4 + [2.0] * 4 + [1.0] * 16 + [0.0] * 8
        np.testing.assert_array_equal(out, row * 3)
        lanes = sorted(c.active_lanes for s, c in stats.by_site.items() if "blk.store" in s.source)
        assert lanes == [3 * 4, 3 * 8, 3 * 24]



@pytest.mark.parametrize("run", ENGINES)
def test_a_branch_mask_anded_with_another_in_place_takes_the_lanes_of_the_result(run):
    # m &= blk.branch(…), as a grid-stride loop narrows its mask: when one side is every lane,
    # the result is the other side. 3 blocks of 32: 24, then 8 lanes per block.
    def narrowed(blk, out):
        i = blk.bx * blk.bdx + blk.tx
        m = blk.branch(blk.tx < 24)
        m &= blk.branch(blk.tx >= 0)  # every lane: m keeps its 24
        blk.store(out, i, 1.0, mask=m)
        every = blk.branch(blk.tx >= 0)
        every &= blk.branch(blk.tx < 8)  # now the 8
        blk.store(out, i, 2.0, mask=every)

    out = np.zeros(3 * 32)
    stats = run(narrowed, grid=3, block=32, args=(out,))
    np.testing.assert_array_equal(out, ([2.0] * 8 + [1.0] * 16 + [0.0] * 8) * 3)
    lanes = sorted(c.active_lanes for s, c in stats.by_site.items() if "blk.store" in s.source)
    assert lanes == [3 * 8, 3 * 24]


@pytest.mark.parametrize("run", ENGINES)
def test_a_shared_index_halved_in_place_between_two_stores_is_counted_afresh(run):
    def kernel(blk, out):
        s = blk.shared(64, np.float32, name="s")
        i = blk.tx.astype(np.int64) * 2
        blk.store(s, i, np.float32(1))  # words 0, 2, …, 62: lanes t and t + 16 share a bank
        blk.sync()
        i //= 2
        blk.store(s, i, np.float32(3))  # words 0…31: a bank each
        blk.sync()
        blk.store(out, blk.tx, blk.load(s, blk.tx))

    out = np.zeros(32, np.float32)
    stats = run(kernel, grid=1, block=32, args=(out,))
    np.testing.assert_array_equal(out, np.full(32, 3, np.float32))
    assert stats.races == []
    stores = [c.shared_wavefronts for s, c in sorted(stats.by_site.items(), key=lambda sc: sc[0].lineno)
              if "blk.store(s," in s.source]
    assert stores == [2, 1]


@pytest.mark.parametrize("run", ENGINES)
@pytest.mark.parametrize("per_block", [False, True], ids=["same in every block", "per block"])
def test_a_condition_written_after_its_branch_leaves_the_branch_as_it_was(run, per_block):
    # c = tx < 16; if (c) …: the kernel may reuse its condition array afterwards. The branch
    # took lanes 0-15 of each block, whatever c holds by the time the store runs.
    def kernel(blk, out):
        c = np.asarray(blk.tx < 16) if not per_block else np.asarray(blk.tx + 0 * blk.bx < 16)
        m = blk.branch(c)
        c[...] = True
        blk.store(out, blk.bx * blk.bdx + blk.tx, np.int32(1), mask=m)

    out = np.zeros(64, np.int32)
    stats = run(kernel, grid=2, block=32, args=(out,))
    np.testing.assert_array_equal(out, np.tile(np.repeat([1, 0], 16), 2))
    assert stats.totals.active_lanes == 2 * 32 + 2 * 16  # the branch, then the store
