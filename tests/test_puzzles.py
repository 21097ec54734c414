"""Kernel puzzles (simtdocs.puzzles): every solution passes, and the skeleton and typical wrong
answers fail with the message the lecture would give, in English and in Chinese."""

from pathlib import Path

import numpy as np
import pytest

from simtdocs.display.recorder import Recorder, recording, show
from simtdocs.i18n import language
from simtdocs.puzzles import KINDS, PUZZLES, Verdict, of_lecture, table

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = {"p2": ROOT / "snippets" / "p2" / "07_puzzles.py", "exec_model": ROOT / "snippets" / "exec_model" / "05_puzzles.py"}


# -- typical wrong answers (line numbers in the messages count from each kernel's def) ---


def double_no_block(blk, a, out):
    i = blk.tx
    blk.store(out, i, 2 * blk.load(a, i))


def add_le(blk, a, b, out, n):
    i = blk.bx * blk.bdx + blk.tx
    m = i <= n
    blk.store(out, i, blk.load(a, i, mask=m) + blk.load(b, i, mask=m), mask=m)


def bias_swapped(blk, a, bias, out, M, N):
    row = blk.bx * blk.bdx + blk.tx
    col = blk.by * blk.bdy + blk.ty
    m = (row < M) & (col < N)
    blk.store(out, (row, col), blk.load(a, (row, col), mask=m) + blk.load(bias, col, mask=m), mask=m)


def square_chunks(blk, a, out, n):
    per = -(-n // (blk.gdx * blk.bdx))
    t = blk.bx * blk.bdx + blk.tx
    for k in range(per):
        i = t * per + k
        m = i < n
        v = blk.load(a, i, mask=m)
        blk.store(out, i, v * v, mask=m)


def warp_sum_short(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for delta in (8, 4, 2, 1):
        v = v + blk.shfl_down(v, delta)
    blk.store(out, i // 32, v, mask=blk.lane == 0)


def warp_sum_shared(blk, x, out):
    s = blk.shared(blk.bdx, np.float32, name="s")
    i = blk.bx * blk.bdx + blk.tx
    blk.store(s, blk.tx, blk.load(x, i))
    blk.sync()
    first = blk.lane == 0
    total = 0
    for k in range(32):
        total = total + blk.load(s, blk.tx + k, mask=first)
    blk.store(out, i // 32, total, mask=first)


def window_naive(blk, a, out, n):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(a, i)
    v = v + blk.load(a, i + 1, mask=i + 1 < n)
    v = v + blk.load(a, i + 2, mask=i + 2 < n)
    blk.store(out, i, v)


def window_no_halo(blk, a, out, n):
    tile = blk.shared(blk.bdx, np.float32, name="tile")
    i = blk.bx * blk.bdx + blk.tx
    t = blk.tx
    blk.store(tile, t, blk.load(a, i))
    blk.sync()
    blk.store(out, i, blk.load(tile, t) + blk.load(tile, t + 1) + blk.load(tile, t + 2))


def window_halo_unloaded(blk, a, out, n):
    tile = blk.shared(blk.bdx + 2, np.float32, name="tile")
    i = blk.bx * blk.bdx + blk.tx
    t = blk.tx
    blk.store(tile, t, blk.load(a, i))
    blk.sync()
    blk.store(out, i, blk.load(tile, t) + blk.load(tile, t + 1) + blk.load(tile, t + 2))


def reverse_sync_in_if(blk, a, out):
    tile = blk.shared(blk.bdx, np.float32, name="tile")
    t = blk.tx
    i = blk.bx * blk.bdx + t
    blk.store(tile, t, blk.load(a, i))
    blk.sync(mask=t < blk.bdx // 2)
    blk.store(out, i, blk.load(tile, blk.bdx - 1 - t))


def reverse_sync_first(blk, a, out):
    tile = blk.shared(blk.bdx, np.float32, name="tile")
    t = blk.tx
    i = blk.bx * blk.bdx + t
    blk.sync()
    blk.store(tile, t, blk.load(a, i))
    blk.store(out, i, blk.load(tile, blk.bdx - 1 - t))


def scale_block_only(blk, A, B, N):
    row = blk.bx * blk.bdx + blk.ty
    col = blk.by * blk.bdy + blk.tx
    blk.store(B, (row, col), 3 * blk.load(A, (row, col)))


def transpose_pad2(blk, A, B, N):
    tile = blk.shared((32, 34), np.float32, name="tile")
    x = blk.bx * 32 + blk.tx
    y = blk.by * 32 + blk.ty
    for j in range(0, 32, 8):
        blk.store(tile, (blk.ty + j, blk.tx), blk.load(A, (y + j) * N + x))
    blk.sync()
    x = blk.by * 32 + blk.tx
    y = blk.bx * 32 + blk.ty
    for j in range(0, 32, 8):
        blk.store(B, (y + j) * N + x, blk.load(tile, (blk.tx, blk.ty + j)))


def transpose_naive(blk, A, B, N):
    x = blk.bx * 32 + blk.tx
    y = blk.by * 32 + blk.ty
    for j in range(0, 32, 8):
        blk.store(B, x * N + (y + j), blk.load(A, (y + j) * N + x))


def pair_halves(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    n = blk.gdx * blk.bdx
    blk.store(out, i, blk.load(a, i) + blk.load(a, i + n))


def block_sum_modulo(blk, x, out):
    sdata = blk.shared(blk.bdx, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = 1
    while s < blk.bdx:
        w = tid % (2 * s) == 0
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.store(sdata, tid, v, mask=w)
        blk.sync()
        s *= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)


def block_sum_no_sync(blk, x, out):
    sdata = blk.shared(blk.bdx, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = blk.bdx // 2
    while s > 0:
        w = tid < s
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.store(sdata, tid, v, mask=w)
        s //= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)


def block_sum_warp_tail_without_syncwarp(blk, x, out):
    sdata = blk.shared(blk.bdx, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = blk.bdx // 2
    while s > 32:
        w = tid < s
        blk.store(sdata, tid, blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w), mask=w)
        blk.sync()
        s //= 2
    while s > 0:  # the pre-Volta warp-synchronous tail: no __syncwarp() between the steps
        w = tid < s
        blk.store(sdata, tid, blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w), mask=w)
        s //= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)


def warp_of_columns(blk, warp, lane):
    t = blk.tx * blk.bdy + blk.ty
    g = blk.bx * (blk.bdx * blk.bdy) + blk.ty * blk.bdx + blk.tx
    blk.store(warp, g, t // 32)
    blk.store(lane, g, t % 32)


def even_odd_branch_only(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(a, i)
    even = blk.branch(blk.warp % 2 == 0)
    blk.alu(4, mask=even)
    blk.alu(4, mask=~even)
    blk.store(out, i, np.where(even, 2 * v, v + 100))


def signed_store_i(blk, x, order, y):
    i = blk.bx * blk.bdx + blk.tx
    j = blk.load(order, i)
    v = blk.load(x, j)
    pos = blk.branch(v > 0)
    blk.alu(4, mask=pos)
    blk.alu(4, mask=~pos)
    blk.store(y, i, np.where(pos, np.sqrt(np.abs(v)), -v * v))


def copy4_chunks(blk, a, out):
    base = (blk.bx * blk.bdx + blk.tx) * 4
    for k in range(4):
        blk.store(out, base + k, blk.load(a, base + k))


def copy4_unscaled(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    blk.store(out, i, blk.load(a, i, width=4), width=4)

SKELETON = {
    "double": 'wrong value at element 0 of out: expected -0.152099, got 0.0 (1,024 of its 1,024 elements '
              'are wrong)',
    "guard": 'thread (232, 0, 0) of block (3, 0, 0) reads out of bounds on line 3',
    "add_bias": 'wrong value at element [0][16] of out: expected 1.91659, got 0.0 (3,244 of its 3,500 '
                'elements are wrong)',
    "grid_stride": 'wrong value at element 1024 of out: expected 0.799584, got 0.0 (8,897 of its 10,000 '
                   'elements are wrong)',
    "warp_sum": 'wrong value at element 0 of out: expected 139.0, got 1.0, stored by line 6 '
                '(`blk.store(out, i // 32, v, mask=first)`) (128 of its 128 elements are wrong)',
    "window_sum": 'wrong value at element 0 of out: expected 18.0, got 0.0 (2,048 of its 2,048 elements are '
                  'wrong)',
    "reverse_blocks": 'a race between warps 0 and 7 on line 6: warp 0 reads shared tile[255], which warp 7 writes'
                      ' on line 5, with no __syncthreads() between (1,024 hazards in all)',
    "scale": 'coalescing 12% where ≥ 90% is asked, on line 4 (`blk.store(B, (row, col), 3 * blk.load(A, '
             '(row, col)))`)',
    "transpose": '32-way bank conflict on line 11 (`blk.store(B, (y + j) * N + x, blk.load(tile, (blk.tx, '
                 'blk.ty + j)))`)',
    "pair_sum": 'sectors: 1,280 where at most 768 are allowed; 512 of them on line 4 (`right = blk.load(a, '
                '2 * i + 1)`), which the solution does without',
    # 16 blocks × 2 loads × (8+8+8+8+8+4+2+1 = 47 wavefronts, ideal 4+2+1+1+1+1+1+1 = 12) a block:
    # 1,504, of them 16 × 2 × 35 = 1,120 above the ideal; the solution's ideal 384 is the same.
    "block_sum": 'shared wavefronts: 2,400 where at most 720 are allowed; 1,504 of them on line 10 (`v = '
                 'blk.load(sdata, index, mask=w) + blk.load(sdata, index + s, mask=w)`), 1,120 of them above '
                 'the ideal of its accesses (bank conflicts)',
    "warp_scan": 'wrong value at element 2 of out: expected 14.0, got 8.0, stored by line 5 (`blk.store(out,'
                 ' i, v)`) (1,978 of its 2,048 elements are wrong)',
    "warp_max": 'wrong value at element 13 of out: expected 0.964468, got 0.877868, stored by line 6 '
                '(`blk.store(out, i, v)`) (999 of its 2,048 elements are wrong)',
    "compact": 'wrong value at element 1 of out: expected 7, got 9, stored by line 7 (`blk.store(out, i, '
               'v, mask=keep)`) (1,347 of its 2,048 elements are wrong)',
    "histogram": 'global requests: 256 where at most 144 are allowed; 128 of them on line 4 '
                 '(`blk.atomic_add(hist, b, 1 + 0 * i)`), where the solution needs 16',
    "tail_sum": 'a race inside warp 0 on line 14: lane 0 reads shared sdata[8], which lane 8 writes on line'
                ' 14; its lanes are not in lockstep, so it needs __syncwarp() between (240 hazards in all)',
    "tickets": 'wrong value at element 0 of counter: expected 32, got 1, stored by line 6 '
               '(`blk.store(counter, zero, (old + 1) % K, mask=want)`) (1 of its 1 elements are wrong)',
    "warp_of": 'wrong value at element 32 of warp: expected 1, got 0 (192 of its 256 elements are wrong)',
    "even_odd": '128 divergent branches where 0 are allowed, on line 4 (`even = blk.branch(i % 2 == 0)  # '
                'if (i % 2 == 0)`)',
    "signed": '128 divergent branches where 0 are allowed, on line 4 (`pos = blk.branch(v > 0)  # if '
              '(x[i] > 0)`)',
    "copy4": 'warp instructions: 512 where at most 128 are allowed; 512 of them on line 5 '
             '(`blk.store(out, i, blk.load(a, i))`), where the solution needs 64',
}

WRONG = [
    ("double", double_no_block, 'wrong value at element 256 of out: expected -1.7792, got 0.0 (768 of its 1,024 elements '
                                'are wrong)'),
    ("guard", add_le, 'thread (232, 0, 0) of block (3, 0, 0) reads out of bounds on line 4'),
    ("add_bias", bias_swapped, 'wrong value at element [0][64] of out: expected 0.128601, got 0.0 (300 of its 3,500 '
                               'elements are wrong)'),
    ("grid_stride", square_chunks, 'coalescing 12% where ≥ 90% is asked, on line 7 (`v = blk.load(a, i, mask=m)`)'),
    ("warp_sum", warp_sum_short, 'wrong value at element 0 of out: expected 139.0, got 75.0, stored by line 6 '
                                 '(`blk.store(out, i // 32, v, mask=blk.lane == 0)`) (128 of its 128 elements are wrong)'),
    ("warp_sum", warp_sum_shared, 'shared requests: 4,224 where at most 0 are allowed; 4,096 of them on line 9 (`total = '
                                  'total + blk.load(s, blk.tx + k, mask=first)`), which the solution does without'),
    ("window_sum", window_naive, 'sectors: 1,150 where at most 520 are allowed; 319 of them on line 5 (`v = v + blk.load(a, '
                                 'i + 2, mask=i + 2 < n)`), which the solution does without'),
    ("window_sum", window_no_halo, 'thread (255, 0, 0) of block (0, 0, 0) reads shared memory out of bounds on line 7'),
    ("window_sum", window_halo_unloaded, 'thread (255, 0, 0) of block (0, 0, 0) reads shared tile[256] on line 7, which no thread of'
                                         ' its block wrote'),
    ("reverse_blocks", reverse_sync_in_if, '__syncthreads() on line 6 is reached by 128 of the 256 threads of block (0, 0, 0): a '
                                           'barrier inside an if'),
    ("reverse_blocks", reverse_sync_first, 'a race between warps 0 and 7 on line 7: warp 0 reads shared tile[255], which warp 7 writes'
                                           ' on line 6, with no __syncthreads() between (1,024 hazards in all)'),
    ("scale", scale_block_only, 'thread (24, 0, 0) of block (0, 5, 0) reads out of bounds on line 4'),
    ("transpose", transpose_pad2, '2-way bank conflict on line 11 (`blk.store(B, (y + j) * N + x, blk.load(tile, (blk.tx, '
                                  'blk.ty + j)))`)'),
    ("transpose", transpose_naive, 'coalescing 22% where ≥ 90% is asked, on line 5 (`blk.store(B, x * N + (y + j), blk.load(A,'
                                   ' (y + j) * N + x))`)'),
    ("pair_sum", pair_halves, 'wrong value at element 0 of out: expected 1.21776, got 1.62634, stored by line 4 '
                              '(`blk.store(out, i, blk.load(a, i) + blk.load(a, i + n))`) (2,047 of its 2,048 elements '
                              'are wrong)'),
    # No bank conflict (a warp's active lanes read every 2s-th word: distinct banks), but
    # every warp with an active lane reads, step after step: 16 blocks × 2 loads × (8 warps
    # for s = 1..16, then 4, 2, 1: 47) = 1,504 where the solution's loads take 384.
    ("block_sum", block_sum_modulo, 'shared wavefronts: 2,400 where at most 720 are allowed; 1,504 of them on line 9 (`v = '
                                    'blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)`), where the solution '
                                    'needs 384'),
    ("block_sum", block_sum_no_sync, 'a race between warps 0 and 2 on line 9: warp 0 reads shared sdata[64], which warp 2 writes'
                                     ' on line 10, with no __syncthreads() between (2,032 hazards in all)'),
    ("block_sum", block_sum_warp_tail_without_syncwarp, 'a race inside warp 0 on line 14: lane 0 reads shared sdata[16], which lane 16 writes on '
                                                        'line 14; its lanes are not in lockstep, so it needs __syncwarp() between (496 hazards in '
                                                        'all)'),
    ("warp_of", warp_of_columns, 'wrong value at element 4 of warp: expected 0, got 1, stored by line 4 (`blk.store(warp, g,'
                                 ' t // 32)`) (192 of its 256 elements are wrong)'),
    ("even_odd", even_odd_branch_only, 'wrong value at element 1 of out: expected 99.1552, got -1.68953, stored by line 7 '
                                       '(`blk.store(out, i, np.where(even, 2 * v, v + 100))`) (2,048 of its 4,096 elements are '
                                       'wrong)'),
    ("signed", signed_store_i, 'wrong value at element 2 of y: expected -1.78379, got 0.955131, stored by line 8 '
                               '(`blk.store(y, i, np.where(pos, np.sqrt(np.abs(v)), -v * v))`) (4,092 of its 4,096 '
                               'elements are wrong)'),
    ("copy4", copy4_chunks, 'warp instructions: 512 where at most 128 are allowed; 512 of them on line 4 '
                            '(`blk.store(out, base + k, blk.load(a, base + k))`), where the solution needs 64'),
    ("copy4", copy4_unscaled, 'thread (1, 0, 0) of block (0, 0, 0) makes a misaligned access on line 3'),
]


def test_at_least_twelve_puzzles_of_three_kinds_across_both_lectures():
    assert len(PUZZLES) >= 12
    assert {p.kind for p in PUZZLES.values()} == set(KINDS)
    assert {p.lecture for p in PUZZLES.values()} == {"p2", "exec_model"}
    assert list(PUZZLES) == [p.name for lecture in ("p2", "exec_model") for p in of_lecture(lecture)]
    assert all(p.name == name for name, p in PUZZLES.items())


@pytest.mark.parametrize("name", list(PUZZLES))
def test_the_solution_passes(name):
    puzzle = PUZZLES[name]
    verdict = puzzle.check(puzzle.solution)
    assert verdict.passed, verdict.message.en
    assert verdict.message.en.startswith("passed: all ")
    assert verdict.detail is None


@pytest.mark.parametrize("name", list(PUZZLES))
def test_the_skeleton_fails_with_the_intended_message(name):
    verdict = PUZZLES[name].check(PUZZLES[name].skeleton)
    assert not verdict.passed
    assert verdict.message.en == SKELETON[name]


def test_every_puzzle_has_a_skeleton_message_and_a_wrong_answer():
    assert set(SKELETON) == set(PUZZLES)
    assert {name for name, _k, _m in WRONG} | {p.name for p in PUZZLES.values() if p.wrong} == set(PUZZLES)


@pytest.mark.parametrize("name, kernel, message", WRONG, ids=[k.__name__ for _n, k, _m in WRONG])
def test_a_typical_wrong_answer_fails_with_the_intended_message(name, kernel, message):
    verdict = PUZZLES[name].check(kernel)
    assert not verdict.passed
    assert verdict.message.en == message


def test_passing_messages_name_what_was_measured():
    assert PUZZLES["transpose"].check(PUZZLES["transpose"].solution).message.en == (
        "passed: all 4,096 values right, coalescing 100%, no bank conflict")
    assert PUZZLES["pair_sum"].check(PUZZLES["pair_sum"].solution).message.en == (
        "passed: all 2,048 values right, sectors: 768 (budget 768)")
    assert PUZZLES["even_odd"].check(PUZZLES["even_odd"].solution).message.en == (
        "passed: all 4,096 values right, 0 divergent branches, SIMT efficiency 100%")


@pytest.mark.parametrize("name, kernel, zh", [
    ("double", double_no_block, "out 的元素 256 值不对：应为 -1.7792，实为 0.0（1,024 个元素中有 768 个不对）"),
    ("guard", add_le, "线程块 (3, 0, 0) 的线程 (232, 0, 0) 在第 4 行越界读取"),
    ("reverse_blocks", reverse_sync_first, "第 7 行有 warp 0 与 warp 7 之间的竞争：warp 0 读共享内存 tile[255]，"
                                           "而 warp 7 在第 6 行写它，中间没有 __syncthreads()（共 1,024 处冲突）"),
    ("reverse_blocks", reverse_sync_in_if, "第 6 行的 __syncthreads() 只有线程块 (0, 0, 0) 的 256 个线程中的 128 个"
                                           "到达：屏障放在了 if 里"),
    ("grid_stride", square_chunks, "合并效率只有 12%，要求 ≥ 90%，问题在第 7 行（`v = blk.load(a, i, mask=m)`）"),
    ("transpose", transpose_pad2, "第 11 行（`blk.store(B, (y + j) * N + x, blk.load(tile, (blk.tx, blk.ty + j)))`）"
                                  "有 2 路 bank 冲突"),
    ("block_sum", block_sum_modulo, "共享内存 wavefront：2,400，上限是 720；其中 1,504 个来自第 9 行"
                                    "（`v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)`），参考解法在这一步只需 384 个"),
    ("even_odd", None, "128 个发散分支，而只允许 0 个，发生在第 4 行（`even = blk.branch(i % 2 == 0)  # if (i % 2 == 0)`）"),
    ("window_sum", window_halo_unloaded, "线程块 (0, 0, 0) 的线程 (255, 0, 0) 在第 7 行读共享内存 tile[256]，"
                                         "而本块没有任何线程写过它"),
])
def test_messages_in_chinese(name, kernel, zh):
    puzzle = PUZZLES[name]
    assert puzzle.check(kernel or puzzle.skeleton).message.pick("zh") == zh


def test_the_sanitizer_report_comes_along_with_lines_counted_from_the_def():
    verdict = PUZZLES["guard"].check(add_le)
    assert verdict.detail.splitlines()[:3] == [
        "Invalid __global__ read of size 4 bytes",
        "    at add_le (line 4: blk.store(out, i, blk.load(a, i, mask=m) + blk.load(b, i, mask=m), mask=m))",
        "    by thread (232,0,0) in block (3,0,0)",
    ]
    assert "index 1000 is out of bounds: a has 1,000 elements" in verdict.detail


def test_a_verdict_is_shown_in_the_page_language_with_the_report_as_code():
    verdict = PUZZLES["guard"].check(PUZZLES["guard"].skeleton)
    rec = Recorder()
    with recording(rec):
        show(verdict)
    (shown,) = rec.items
    assert shown["en"].startswith("**✗ thread (232, 0, 0) of block (3, 0, 0) reads out of bounds on line 3**\n\n```text\n"
                                  "Invalid __global__ read of size 4 bytes\n")
    assert shown["zh"].startswith("**✗ 线程块 (3, 0, 0) 的线程 (232, 0, 0) 在第 3 行越界读取**\n\n```text\n")
    assert shown["zh"].endswith("```")
    with language("zh"):
        assert str(PUZZLES["double"].check(PUZZLES["double"].solution)) == "✓ 通过：1,024 个值全部正确"
    assert isinstance(verdict, Verdict)


def test_a_kernel_that_fails_in_python_raises_as_it_would_anywhere():
    def typo(blk, a, out):
        blk.store(out, blk.tx, 2 * blk.load(a, blk.txx))

    with pytest.raises(AttributeError, match="txx"):
        PUZZLES["double"].check(typo)


def test_the_checker_leaves_nothing_behind_between_runs():
    puzzle = PUZZLES["double"]
    assert puzzle.check(puzzle.skeleton).message.en == SKELETON["double"]
    assert puzzle.check(puzzle.solution).passed
    assert puzzle.check(puzzle.skeleton).message.en == SKELETON["double"]  # fresh inputs each time


def test_the_solution_source_reads_as_a_replacement_for_the_skeleton():
    source = PUZZLES["double"].source("solution")
    assert source.splitlines()[0] == "def double(blk, a, out):"
    namespace = {"np": np}
    exec(source, namespace)
    assert PUZZLES["double"].check(namespace["double"]).passed


def test_launch_and_overview_read_in_both_languages():
    launch = PUZZLES["transpose"].launch_text()
    assert launch.en == ("launch with grid (2, 2) and block (32, 8); arguments `A`: float32[64×64], "
                         "`B`: float32[64×64], `N` = 64. `A` holds random values from -1 to 1; "
                         "`check` runs the kernel on two such draws")
    assert launch.pick("zh") == ("启动配置：网格 (2, 2)，线程块 (32, 8)；参数 `A`: float32[64×64]、`B`: float32[64×64]、"
                                 "`N` = 64。`A`：-1 到 1 之间的随机值；`check` 用两组这样的随机输入各运行一次内核")
    assert PUZZLES["double"].launch_text().en.startswith("launch with grid 4 and block 256;")
    rendered = table("exec_model").render("zh").splitlines()
    assert rendered[0] == "| # | 谜题 | 类型 | 值全对、运行无误之外的要求 |"
    assert rendered[-1] == "| 4 | 预算：warp 指令数 | 达到指标 | warp 指令数：≤ 128、每一行的合并效率 ≥ 90% |"


@pytest.mark.parametrize("lecture", list(SCRIPTS))
def test_the_notebook_cells_hold_the_skeletons_as_the_package_has_them(lecture):
    """The downloadable notebook carries each skeleton verbatim (the script includes it from
    the package, the notebook has it written out) in a cell of its own to edit, and the next
    cell checks it with its puzzle: the page, the notebook and the tests grade the same kernel."""
    from simtdocs_site import notebooks

    cells = [c["source"] for c in notebooks.build_notebook(SCRIPTS[lecture], "en", "test").cells
             if c["cell_type"] == "code"]
    for puzzle in of_lecture(lecture):
        name = puzzle.skeleton.__name__
        (i,) = [k for k, c in enumerate(cells) if c.endswith(puzzle.source("skeleton").rstrip())]
        assert cells[i + 1] == f'show(PUZZLES["{puzzle.name}"].check({name}))', puzzle.name


def test_coalescing_and_bank_conflict_failures_come_with_the_warps_access_picture():
    scale = PUZZLES["scale"].check(PUZZLES["scale"].skeleton)
    assert scale.figure.alt.en == ("One warp's load of A in global memory: 128 bytes requested by 32 active lanes, "
                                   "at addresses in 32 sectors of 32 bytes; 1024 bytes move, 896 of them not requested.")
    tile = PUZZLES["transpose"].check(PUZZLES["transpose"].skeleton)
    assert tile.figure.alt.en == ("One warp's load of tile in shared memory: 32 active lanes spread over 1 bank; bank 0 "
                                  "is asked for 32 different words, so the access takes 32 wavefronts where 1 would do.")
    assert PUZZLES["transpose"].check(transpose_pad2).figure.alt.en.endswith(
        "so the access takes 2 wavefronts where 1 would do.")
    rec = Recorder()
    with recording(rec):
        show(tile)
    (shown,) = rec.items
    for lang in ("zh", "en"):
        assert shown[lang].count('<figure class="simt-figure"><img src="data:image/svg+xml;base64,') == 1
    assert "<figure" not in tile._repr_markdown_()  # a terminal gets the words only
    assert PUZZLES["double"].check(double_no_block).figure is None
    assert PUZZLES["pair_sum"].check(PUZZLES["pair_sum"].skeleton).figure is None  # a budget: no one warp to blame
