"""Verdicts that name the cause (issue 38): a budget's excess blamed on what is in excess,
not on how the lines are laid out; an out-of-bounds index traced to the narrow integers
it came from; the hint worded in the kernel's own dialect. Every expected number below is
derived by hand in the comment above it."""

import numpy as np
import pytest

from simtdocs import cuda
from simtdocs.cuda import RawKernel
from simtdocs.counters import Counters, LineCounters
from simtdocs.diagnostics import Site
from simtdocs.i18n import _
from simtdocs.puzzles import PUZZLES
from simtdocs.puzzles.core import Case, Puzzle, attribute
from simtdocs.puzzles.provenance import narrow_sources


# -- a budget's excess, by what is in excess --------------------------------------------

def block_sum_on_one_line_reading_the_total_everywhere(blk, x, out):
    sdata = blk.shared(blk.bdx, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = blk.bdx // 2
    while s > 0:
        blk.store(sdata, tid, blk.load(sdata, tid, mask=tid < s) + blk.load(sdata, tid + s, mask=tid < s), mask=tid < s)
        blk.sync()
        s //= 2
    total = blk.load(sdata, 0 * tid)
    blk.store(out, blk.bx, total, mask=tid == 0)


def test_a_reduction_on_one_line_is_not_blamed_for_the_broadcast_read_of_another():
    # A block of 256: the tile store takes 8 wavefronts; each step (s = 128 … 1) its two loads
    # and its store take ⌈s/32⌉ each, 3 × (4+2+1+1+1+1+1+1) = 36, all conflict-free, on one
    # line here where the solution spends them on two (384 + 192 over 16 blocks = 576). The
    # total read by every thread is one broadcast per warp: 8 a block where the solution's
    # masked read takes 1. 16 × (8 + 36 + 8) = 832 against 16 × (8 + 36 + 1) = 720; the 112
    # over come from that read alone: 16 × 8 = 128 of them on it, 16 where the solution reads.
    verdict = PUZZLES["block_sum"].check(block_sum_on_one_line_reading_the_total_everywhere)
    assert not verdict.passed
    assert verdict.message.en == ("shared wavefronts: 832 where at most 720 are allowed; 128 of them on line 11 "
                                  "(`total = blk.load(sdata, 0 * tid)`), where the solution needs 16")


def _lines(*rows):
    """Per-line counters: (line, source, wavefronts, ideal wavefronts, shared requests)."""
    return [LineCounters(Site("k", "k.py", n, src), Counters(shared_wavefronts=w, shared_ideal_wavefronts=i,
                                                             shared_requests=r)) for n, src, w, i, r in rows]


SOLUTION = _lines((1, "blk.store(s, t, v)", 8, 8, 8),
                  (2, "v = blk.load(s, t) + blk.load(s, t + k)", 24, 24, 24),
                  (3, "blk.store(s, t, v, mask=w)", 12, 12, 12),
                  (4, "total = blk.load(s, 0 * t, mask=t == 0)", 1, 1, 1))


def test_a_line_that_does_the_work_of_two_solution_lines_is_matched_with_both():
    # Line 2 makes exactly the accesses of solution lines 2 and 3 (24 + 12 = 36 wavefronts,
    # ideal and requests alike); line 3 reads 8 where the solution's line 4 reads 1.
    mine = _lines((1, "blk.store(s, t, v)", 8, 8, 8),
                  (2, "blk.store(s, t, blk.load(s, t) + blk.load(s, t + k), mask=w)", 36, 36, 36),
                  (3, "total = blk.load(s, 0 * t)", 8, 8, 8))
    blame = attribute("shared_wavefronts", mine, SOLUTION)
    assert (blame.line.site.lineno, blame.need, blame.above_ideal) == (3, 1, 0)


def test_wavefronts_above_the_ideal_are_named_as_bank_conflicts():
    # The same accesses as the solution (ideal 8, 24, 12, 1), but line 2's take 64 wavefronts:
    # 40 above their ideal, which is all of the excess (the ideal parts are equal).
    mine = _lines((1, "blk.store(s, t, v)", 8, 8, 8),
                  (2, "v = blk.load(s, 2 * t) + blk.load(s, 2 * t + k)", 64, 24, 24),
                  (3, "blk.store(s, t, v, mask=w)", 12, 12, 12),
                  (4, "total = blk.load(s, 0 * t, mask=t == 0)", 1, 1, 1))
    blame = attribute("shared_wavefronts", mine, SOLUTION)
    assert (blame.line.site.lineno, blame.need, blame.above_ideal) == (2, None, 40)


def test_more_accesses_outweigh_a_smaller_bank_conflict():
    # Line 4 reads 8 (ideal 8) where the solution reads 1: 7 over in the ideal part; line 2
    # has 2 wavefronts above its ideal: 2 over in conflicts. The accesses are the cause.
    mine = _lines((1, "blk.store(s, t, v)", 8, 8, 8), (2, "v = blk.load(s, t) + blk.load(s, t + k)", 26, 24, 24),
                  (3, "blk.store(s, t, v, mask=w)", 12, 12, 12), (4, "total = blk.load(s, 0 * t)", 8, 8, 8))
    blame = attribute("shared_wavefronts", mine, SOLUTION)
    assert (blame.line.site.lineno, blame.need, blame.above_ideal) == (4, 1, 0)


def test_a_line_with_no_counterpart_is_all_excess():
    # Line 5 reads 16 times; the solution has no fifth access (its four lines all matched).
    mine = SOLUTION + _lines((5, "extra = blk.load(s, t, mask=t < 16)", 16, 16, 16))
    blame = attribute("shared_wavefronts", mine, SOLUTION)
    assert (blame.line.site.lineno, blame.need) == (5, 0)


def test_the_skeletons_conflicts_and_the_modulo_reductions_extra_warps_read_differently():
    # Both spend 1,504 wavefronts on their load line where the solution's takes 384: the
    # skeleton's 16 × 2 × 35 = 1,120 are above the ideal (strided words), the modulo one's are
    # ideal wavefronts of warps the solution leaves idle (tests/test_puzzles.py derives both).
    skeleton = PUZZLES["block_sum"].check(PUZZLES["block_sum"].skeleton).message.en
    assert skeleton.endswith("1,120 of them above the ideal of its accesses (bank conflicts)")
    zh = PUZZLES["block_sum"].check(PUZZLES["block_sum"].skeleton).message.pick("zh")
    assert zh.startswith("共享内存 wavefront：2,400，上限是 720；其中 1,504 个来自第 10 行（")
    assert zh.endswith("，有 1,120 个超出了这些访问的理想值（bank 冲突）")


# -- an out-of-bounds index from a narrow integer array --------------------------------

N = 256


def _lookup_case(rng):
    codes = rng.integers(-128, 128, N).astype(np.int8)  # signed codes: table[code + 128]
    table = rng.random(256).astype(np.float32)
    return Case((codes, table, np.zeros(N, np.float32)), {2: table[codes.astype(np.int32) + 128]})


def lookup_solution(blk, codes, table, out):
    i = blk.bx * blk.bdx + blk.tx
    blk.store(out, i, blk.load(table, blk.load(codes, i) + 128))


LOOKUP = Puzzle("lookup_int8_verdicts", "p2", "write", _("x"), _("x"), _("x"), lookup_solution, lookup_solution,
                _lookup_case, grid=(1,), block=(N,))


def lookup_loaded(blk, codes, table, out):
    i = blk.bx * blk.bdx + blk.tx
    blk.store(out, i, blk.load(table, blk.load(codes, i)))


def lookup_arithmetic(blk, codes, table, out):
    i = blk.bx * blk.bdx + blk.tx
    c = blk.load(codes, i)
    k = c * 2 + 1
    blk.store(out, i, blk.load(table, k))


@cuda.jit
def lookup_dialect(codes, table, out):
    i = cuda.grid(1)
    out[i] = table[codes[i]]


@cuda.jit
def lookup_dialect_arithmetic(codes, table, out):
    i = cuda.grid(1)
    c = codes[i]
    out[i] = table[c + 1]


@cuda.jit
def lookup_through_shared(codes, table, out):
    s = cuda.shared.array(256, np.int8)
    t = cuda.threadIdx.x
    s[t] = codes[t]
    cuda.syncthreads()
    out[t] = table[s[t]]


@cuda.jit
def lookup_dialect_converted(codes, table, out):
    i = cuda.grid(1)
    out[i] = table[np.int8(i)]


def lookup_blk_converted(blk, codes, table, out):
    i = blk.bx * blk.bdx + blk.tx
    blk.store(out, i, blk.load(table, i.astype(np.int8)))


def lookup_unrelated(blk, codes, table, out):
    i = blk.bx * blk.bdx + blk.tx
    blk.store(out, i, blk.load(table, i + 1) + 0 * blk.load(codes, i))


ARRAY_NOTE = ("; its index comes from `codes`, an int8 array, whose elements can only be -128..127 (a value "
              "outside that range wraps around when it is stored there; an index needs an int32 array)")


def _first_negative(codes, f):
    """The first thread whose index ``f(code)`` is out of the 256-entry table."""
    k = f(codes.astype(np.int64))
    return int(np.flatnonzero((k < 0) | (k >= 256))[0])


@pytest.mark.parametrize("kernel, index, line", [
    (lookup_loaded, lambda c: c, 3), (lookup_arithmetic, lambda c: 2 * c + 1, 5),
    (lookup_dialect, lambda c: c, 3), (lookup_dialect_arithmetic, lambda c: c + 1, 4)])
def test_an_index_loaded_from_an_int8_array_is_traced_to_it(kernel, index, line):
    codes = LOOKUP.inputs().args[0]
    t = _first_negative(codes, index)
    verdict = LOOKUP.check(kernel)
    said = f"thread ({t}, 0, 0) of block (0, 0, 0) reads out of bounds on line {line}"
    assert verdict.message.en == said + ARRAY_NOTE
    assert ".astype" not in (verdict.detail or "") or not hasattr(kernel, "py_func")


def test_an_index_read_from_a_narrow_shared_array_is_traced_to_it():
    codes = LOOKUP.inputs().args[0]
    t = _first_negative(codes, lambda c: c)
    assert LOOKUP.check(lookup_through_shared).message.en == (
        f"thread ({t}, 0, 0) of block (0, 0, 0) reads out of bounds on line 6" + ARRAY_NOTE.replace("`codes`", "`s`"))


LOOKUP_C = RawKernel(r"""
__global__ void lookup(const signed char* codes, const float* table, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = codes[i] + 1;
    out[i] = table[j];
}""", "lookup")


def test_an_index_from_a_signed_char_array_in_cuda_c_is_traced_to_it():
    # C promotes codes[i] to int: the value is already wrapped (a signed char), + 1 keeps it.
    codes = LOOKUP.inputs().args[0]
    t = _first_negative(codes, lambda c: c + 1)
    verdict = LOOKUP.check(LOOKUP_C)
    assert verdict.message.en == (
        f"thread ({t}, 0, 0) of block (0, 0, 0) reads out of bounds on line 4; its index comes from `codes`, a "
        "signed char array, whose elements can only be -128..127 (a value outside that range wraps around when it "
        "is stored there; an index needs an int array)")


LOOKUP_C_CONVERTED = RawKernel(r"""
__global__ void lookup(const signed char* codes, const float* table, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    signed char j = i;
    out[i] = table[j];
}""", "lookup")


def test_a_conversion_to_signed_char_in_cuda_c_is_named_with_cs_fix():
    # Thread 128 is the first whose (signed char)i wraps: -128, where j is declared (lines count
    # from the __global__ line, as the puzzles' C verdicts do).
    verdict = LOOKUP.check(LOOKUP_C_CONVERTED)
    assert verdict.message.en == (
        "thread (128, 0, 0) of block (0, 0, 0) reads out of bounds on line 4; its index comes from a conversion "
        "to signed char on line 3: a signed char holds only -128..127, and a value outside that range wraps "
        "around (keep the value in an int instead)")
    # the sanitizer's report in C's words: no numpy, no .astype
    assert verdict.detail.splitlines()[3].endswith(
        "the index is a signed char, which holds only -128..127: a value outside that range wrapped around "
        "where it became a signed char (C computes in int; keep such values in an int, or an int array)")


def test_the_note_reads_in_chinese():
    codes = LOOKUP.inputs().args[0]
    t = _first_negative(codes, lambda c: c)
    assert LOOKUP.check(lookup_dialect).message.pick("zh") == (
        f"线程块 (0, 0, 0) 的线程 ({t}, 0, 0) 在第 3 行越界读取；"
        "它的下标来自 `codes`，一个 int8 数组，其元素只能是 "
        "-128..127（超出这个范围的值存进去时会回绕；下标需要 int32 数组）")


def test_a_conversion_is_named_with_the_fix_of_the_kernels_dialect():
    # Thread 128 is the first whose np.int8(i) wraps: -128.
    dialect = LOOKUP.check(lookup_dialect_converted)
    assert dialect.message.en == (
        "thread (128, 0, 0) of block (0, 0, 0) reads out of bounds on line 3; its index comes from `np.int8(i)` "
        "on line 3: int8 holds only -128..127, and a value outside that range wraps around (convert with "
        "np.int32(…) instead)")
    # The sanitizer's own hint, for the blk API, would say .astype: the dialect has none.
    assert ".astype" not in dialect.detail and "the index is int8" in dialect.detail
    assert "convert with np.int32(…)" in dialect.detail
    blk = LOOKUP.check(lookup_blk_converted)
    assert blk.message.en == (
        "thread (128, 0, 0) of block (0, 0, 0) reads out of bounds on line 3; its index comes from "
        "`i.astype(np.int8)` on line 3: int8 holds only -128..127, and a value outside that range wraps around "
        "(widen it with .astype(np.int32) instead)")
    assert "widen it with .astype(np.int32)" in blk.detail


def test_an_index_that_owes_nothing_to_the_narrow_array_gets_no_note():
    # i + 1 is 256 on thread 255; the int8 codes are loaded on that line but not indexed by.
    assert LOOKUP.check(lookup_unrelated).message.en == (
        "thread (255, 0, 0) of block (0, 0, 0) reads out of bounds on line 3")


def test_a_load_from_a_wide_array_indexed_by_narrow_values_is_not_narrow():
    def kernel(blk, codes, table, out):
        i = blk.bx * blk.bdx + blk.tx
        v = blk.load(table, blk.load(codes, i) + 128)  # a float32 value, whatever indexed it
        blk.store(out, i + v.astype(np.int32), v)

    args = LOOKUP.inputs().args
    first = kernel.__code__.co_firstlineno  # the def
    assert narrow_sources(kernel, args, first + 3) == []  # the store's index: i and v
    assert [s.array for s in narrow_sources(kernel, args, first + 2)] == ["codes"]  # the load's: codes + 128
