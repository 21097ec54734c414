"""The Triton puzzles: their solutions pass with counters equal to the budgets derived by hand
in ``simtdocs.puzzles.triton_puzzles``; typical wrong answers (a missing mask, an off-by-one
stride, a forgotten tail, an unmasked load reading out of bounds, an index that reads across
rows) fail with the verdict a reader should get, naming the reader's Triton line; the
checker launches them the Triton way, in both languages."""

from __future__ import annotations

import numpy as np
import pytest

from simtdocs import triton
from simtdocs.puzzles import PUZZLES, TRITON_PUZZLES, table
from simtdocs.puzzles import triton_puzzles as tp
from simtdocs.triton import language as tl

# -- wrong answers, each with the start of the verdict it must get ---------------------------------


@triton.jit
def outer_no_row_mask(x_ptr, y_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M)
    y = tl.load(y_ptr + cols, mask=cols < N)
    tl.store(z_ptr + rows[:, None] * N + cols[None, :], x[:, None] + y[None, :], mask=cols[None, :] < N)


@triton.jit
def outer_off_by_one_stride(x_ptr, y_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M)
    y = tl.load(y_ptr + cols, mask=cols < N)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(z_ptr + rows[:, None] * (N - 1) + cols[None, :], x[:, None] + y[None, :], mask=inside)


@triton.jit
def outer_transposed(x_ptr, y_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M)
    y = tl.load(y_ptr + cols, mask=cols < N)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(z_ptr + rows[:, None] + cols[None, :] * M, x[:, None] + y[None, :], mask=inside)


@triton.jit
def softmax_unmasked(out_ptr, x_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


@triton.jit
def softmax_two_passes(out_ptr, x_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < n_cols
    m = tl.max(tl.load(x_ptr + row * n_cols + cols, mask=inside, other=-float("inf")), axis=0)
    e = tl.exp(tl.load(x_ptr + row * n_cols + cols, mask=inside, other=-float("inf")) - m)
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=inside)


@triton.jit
def matmul_unmasked_k(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < M, other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def matmul_one_step_too_many(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K + BLOCK_K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def row_sum_no_tail(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for start in range(0, N - BLOCK_N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        acc += tl.sum(tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=rows[:, None] < M), axis=1)
    tl.store(out_ptr + rows, acc, mask=rows < M)


@triton.jit
def row_sum_no_column_mask(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        acc += tl.sum(tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=rows[:, None] < M, other=0.0), axis=1)
    tl.store(out_ptr + rows, acc, mask=rows < M)


#: (puzzle, wrong kernel, the start of its verdict in English)
WRONG = [
    ("outer_add", outer_no_row_mask,
     "✗ program (6, 0, 0) writes out of bounds on line 6 (`tl.store(z_ptr + rows[:, None] * N + cols[None, :], "
     "x[:, None] + y[None, :], mask=cols[None, :] < N)`): its thread"),
    ("outer_add", outer_off_by_one_stride,
     "✗ wrong value at element [1][94] of z_ptr: expected -0.0972939, got 0.794608, stored by line 7 (`tl.store(z_ptr "
     "+ rows[:, None] * (N - 1) + cols[None, :], x[:, None] + y[None, :], mask=inside)`)"),
    ("outer_add", outer_transposed, "✗ wrong value at element [0][1] of z_ptr: expected"),
    ("outer_add", tp.outer_add_tile_of_x,
     "✗ DRAM bytes: 98,688 where at most 81,088 are allowed; 19,200 of them on line 5 (`x = tl.load(x_ptr + rows[:, None] "
     "+ 0 * cols[None, :], mask=inside)  # x[i] once per column`), where the solution needs 1,600"),
    ("softmax", tp.softmax_other_zero, "✗ wrong value at element [0][2] of out_ptr: expected"),
    ("softmax", softmax_unmasked, "✗ program (47, 0, 0) reads out of bounds on line 4 (`x = tl.load(x_ptr + row * n_cols + cols)`)"),
    ("softmax", softmax_two_passes,
     "✗ DRAM bytes: 41,472 where at most 27,648 are allowed; 13,824 of them on line 6 (`e = tl.exp(tl.load(x_ptr + row "
     "* n_cols + cols, mask=inside, other=-float(\"inf\")) - m)`), which the solution does without"),
    ("matmul", tp.matmul_no_tail, "✗ wrong value at element [0][0] of c_ptr: expected"),
    ("matmul", matmul_unmasked_k, "✗ program (2, 0, 0) reads out of bounds on line 8"),
    ("matmul", matmul_one_step_too_many,
     "✗ shared wavefronts: 3,456 where at most 2,592 are allowed; 3,456 of them on line 10 (`acc = tl.dot(a, b, acc)`), "
     "where the solution needs 2,592"),
    ("row_sum", row_sum_no_tail, "✗ wrong value at element 0 of out_ptr: expected"),
    ("row_sum", row_sum_no_column_mask, "✗ program (7, 0, 0) reads out of bounds on line 6"),
    ("row_sum", tp.row_sum_by_column,
     "✗ coalescing 12% where ≥ 90% is asked, on line 5 (`acc += tl.load(x_ptr + rows * N + col, mask=rows < M, other=0.0)`)"),
]


def test_four_puzzles_apart_from_the_thread_puzzles():
    assert list(TRITON_PUZZLES) == ["outer_add", "softmax", "matmul", "row_sum"]
    assert not set(TRITON_PUZZLES) & set(PUZZLES)
    assert all(p.triton and p.lecture == "p2" and p.block == (p.num_warps * 32,) for p in TRITON_PUZZLES.values())
    assert not any(p.triton for p in PUZZLES.values())


@pytest.mark.parametrize("name", list(TRITON_PUZZLES))
def test_solution_passes_and_spends_exactly_its_budgets(name):
    puzzle = TRITON_PUZZLES[name]
    verdict = puzzle.check(puzzle.solution)
    assert verdict.passed, verdict.text("en")
    assert verdict.text("en").startswith("✓ passed: all ")
    budgets = [r for r in puzzle.rules if hasattr(r, "limit")]
    assert budgets
    for rule in budgets:  # the hand-derived budget is what the solution spends, no slack
        assert getattr(verdict.stats, rule.counter) == rule.limit, (rule, getattr(verdict.stats, rule.counter))


def test_budgets_derived_by_hand():
    # outer: z written once (200 rows × 12 sectors), x read by 2 columns of programs, y by 7 rows
    assert tp.OUT_GRID == (7, 2) and tp.OUT_SECTORS == 200 * 12 + 2 * 25 + 7 * 12
    # softmax: 48 rows of 72 floats (9 sectors) read and written; 3 warps hold a row's 72 elements
    assert tp.SM_BYTES == 2 * 48 * 72 * 4 and tp.SM_REQUESTS == 2 * 48 * 3
    # matmul: A (72 rows × 5 sectors) read by 3 columns of programs, B (40 rows × 10) by 3 rows, C once
    assert tp.MM_SECTORS == 3 * 72 * 5 + 3 * 40 * 10 + 72 * 10
    # a dot: A and B tiles of 2 KiB stored (16 + 16 wavefronts), each read by 2 warps (64)
    assert tp.MM_DOT_WAVEFRONTS == 96 and tp.MM_WAVEFRONTS == 9 * 3 * 96
    # row sum: 64 rows × 25 sectors, out 64 floats in 8 sectors
    assert tp.RS_SECTORS == 64 * 25 + 8


def test_the_dot_counts_what_the_matmul_statement_says():
    puzzle = TRITON_PUZZLES["matmul"]
    stats = puzzle.check(puzzle.solution).stats
    (dot,) = stats.dots.values()
    assert dot.calls == 9 * tp.MM_STEPS
    assert dot.flops == 2 * tp.MM_BM * tp.MM_BN * tp.MM_BK * dot.calls  # the padded tiles' FLOPs
    line = next(ln for ln in stats.lines if "tl.dot" in ln.site.source)
    assert line.counters.shared_wavefronts == stats.shared_wavefronts == tp.MM_WAVEFRONTS


@pytest.mark.parametrize("name", list(TRITON_PUZZLES))
def test_skeleton_fails_on_values(name):
    puzzle = TRITON_PUZZLES[name]
    verdict = puzzle.check(puzzle.skeleton)
    assert not verdict.passed and verdict.text("en").startswith("✗ wrong value at element ")
    assert verdict.card is not None


@pytest.mark.parametrize("name, kernel, said", WRONG, ids=[f"{p}-{k.__name__}" for p, k, _s in WRONG])
def test_wrong_answer_verdict(name, kernel, said):
    verdict = TRITON_PUZZLES[name].check(kernel)
    assert not verdict.passed
    assert verdict.text("en").startswith(said), verdict.text("en")


def test_every_puzzle_has_two_wrong_answers_here():
    per = {name: sum(p == name for p, _k, _s in WRONG) for name in TRITON_PUZZLES}
    assert min(per.values()) >= 2, per
    assert {k for p in TRITON_PUZZLES.values() for k in p.wrong} <= {k for _p, k, _s in WRONG}


def test_a_wrong_value_names_the_store_line_of_the_reader():
    verdict = TRITON_PUZZLES["matmul"].check(tp.matmul_no_tail)
    text = verdict.text("en")
    assert "stored by line 11 (`tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=" in text
    assert "(5,759 of its 5,760 elements are wrong)" in text


def test_out_of_bounds_detail_is_the_sanitizer_report_counted_from_the_def():
    verdict = TRITON_PUZZLES["softmax"].check(softmax_unmasked)
    assert verdict.detail.startswith("Invalid __global__ read of size 4 bytes")
    assert "(line 4: x = tl.load(x_ptr + row * n_cols + cols))" in verdict.detail
    assert "in block (47,0,0)" in verdict.detail


def test_uncoalesced_verdict_draws_the_access():
    verdict = TRITON_PUZZLES["row_sum"].check(tp.row_sum_by_column)
    assert verdict.figure is not None
    assert "tl.load(x_ptr + rows * N + col" in verdict.figure.caption.pick("en")


def test_verdict_in_chinese():
    verdict = TRITON_PUZZLES["softmax"].check(softmax_unmasked)
    zh = verdict.text("zh")
    assert zh == ("✗ 程序 (47, 0, 0) 在第 4 行（`x = tl.load(x_ptr + row * n_cols + cols)`）越界读取：它的线程 72 "
                  "持有一个落在数组之外的元素，掩码（`mask=`）必须把这样的元素都排除在外"), zh
    over = TRITON_PUZZLES["matmul"].check(matmul_one_step_too_many)
    assert over.text("zh") == ("✗ 共享内存 wavefront：3,456，上限是 2,592；其中 3,456 个来自第 10 行（`acc = tl.dot(a, b, acc)`），"
                               "参考解法在这一步只需 2,592 个")
    card = over.card.render("zh")
    assert "| 计分卡 |" in card and "| MMA 指令数 | 576 | 432 |" in card


def test_score_card_shows_the_dot():
    card = TRITON_PUZZLES["matmul"].check(matmul_one_step_too_many).card
    rows = {label.pick("en"): (a, b) for label, a, b in card.rows}
    assert rows["dot FLOPs"] == (format(2 * 32 * 32 * 16 * 9 * 4, ","), format(2 * 32 * 32 * 16 * 9 * 3, ","))
    assert rows["MMA instructions"][0] != rows["MMA instructions"][1]
    assert rows["sectors"] == ("3,000", "3,000")  # the extra step's loads are all masked off


def test_launch_text_names_the_meta_parameters():
    text = TRITON_PUZZLES["matmul"].launch_text().pick("en")
    assert text.startswith("launch with grid (3, 3) (one program each, of 128 threads), `BLOCK_M=32`, `BLOCK_N=32`, "
                           "`BLOCK_K=16`, `num_warps=4`; arguments `a_ptr`: float32[72×40]")


def test_source_shows_the_decorator_and_the_skeleton_name():
    text = TRITON_PUZZLES["row_sum"].source("solution")
    assert text.startswith("@triton.jit\ndef row_sum(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr")


def test_each_check_draws_its_own_inputs():
    puzzle = TRITON_PUZZLES["outer_add"]
    first, second = (puzzle.inputs(s) for s in puzzle.seeds)
    assert not np.array_equal(first.args[0], second.args[0])
    assert not np.array_equal(first.args[0], first.args[1][: first.args[0].size])


def test_kinds_of_kernels_are_kept_apart():
    thread_puzzle = PUZZLES["double"]
    verdict = thread_puzzle.check(tp.outer_add_solution)
    assert not verdict.passed and "not for Triton" in verdict.text("en")

    def by_threads(blk, x_ptr, y_ptr, z_ptr, M, N):  # a blk kernel on a Triton puzzle: one program a block
        i = blk.bx * 32 + blk.tx // 4
        for j0 in range(0, 64, 4):
            j = blk.by * 64 + j0 + blk.tx % 4
            inside = (i < M) & (j < N) & (blk.tx < 128)
            value = blk.load(x_ptr, i, mask=inside) + blk.load(y_ptr, j, mask=inside)
            blk.store(z_ptr, i * N + j, value, mask=inside)

    verdict = TRITON_PUZZLES["outer_add"].check(by_threads)
    assert "wrong value" not in verdict.text("en"), verdict.text("en")


def test_unsupported_construct_is_a_verdict_with_the_line():
    @triton.jit
    def uses_indexing(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        tl.store(out_ptr + rows, rows[3])

    verdict = TRITON_PUZZLES["row_sum"].check(uses_indexing)
    assert not verdict.passed and verdict.text("en") == "✗ the Triton front end cannot run this kernel"
    assert "tl.store(out_ptr + rows, rows[3])" in verdict.detail


def test_table_of_the_triton_puzzles():
    t = table(TRITON_PUZZLES.values())
    assert len(t.rows) == 4


@pytest.mark.parametrize("name", list(TRITON_PUZZLES))
def test_the_companion_script_shows_the_puzzles_skeleton(name):
    # The page and the notebook show the skeleton from snippets/p2/07_puzzles.py (a Triton kernel needs
    # its source in a file, so the script cannot exec it from a string): it must be the puzzle's own.
    from simtdocs.snippets import expand_snippets, repo_root

    script = expand_snippets(f'--8<-- "snippets/p2/07_puzzles.py:{name}"', base=repo_root())
    module = expand_snippets(f'--8<-- "src/simtdocs/puzzles/triton_puzzles.py:{name}"', base=repo_root())
    assert script == module == TRITON_PUZZLES[name].source("skeleton").rstrip("\n")
