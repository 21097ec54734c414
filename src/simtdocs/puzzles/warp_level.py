"""P2 puzzles at warp level: a scan with shfl_up, a butterfly with shfl_xor, compaction with a
ballot, a shared histogram with atomics on a skewed input, a reduction tail that needs
__syncwarp, and a ticket counter built from atomicCAS.

Each has a skeleton, a solution and typical wrong answers (``Puzzle.wrong``), plain kernels
``kernel(blk, ...)`` as the lecture writes them.
"""

from __future__ import annotations

import numpy as np

from simtdocs import cdiv
from simtdocs.i18n import _

from .core import Budget, Case, Puzzle, integers, uniform

# -- 12. a warp scan -------------------------------------------------------------------

SCAN_N, SCAN_BLOCK = 2048, 256


# --8<-- [start:warp_scan]
def warp_scan(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    # TODO: v = x[i] plus the values of the lanes before this one in its warp
    blk.store(out, i, v)
# --8<-- [end:warp_scan]


# --8<-- [start:warp_scan_solution]
def warp_scan_solution(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for delta in (1, 2, 4, 8, 16):
        up = blk.shfl_up(v, delta)
        v = np.where(blk.lane >= delta, v + up, v)
    blk.store(out, i, v)
# --8<-- [end:warp_scan_solution]


# --8<-- [start:warp_scan_wrong]
def warp_scan_unguarded(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for delta in (1, 2, 4, 8, 16):
        v = v + blk.shfl_up(v, delta)
    blk.store(out, i, v)
# --8<-- [end:warp_scan_wrong]


def _scan_case(rng):
    x, drawn = integers(rng, SCAN_N, 0, 9)
    return Case((x, np.zeros_like(x)), {1: np.cumsum(x.reshape(-1, 32), axis=1).reshape(-1)}, {0: drawn})


WARP_SCAN = Puzzle(
    "warp_scan", "p2", "write", _("Warp scan: prefix sums with shfl_up"),
    _("Every thread writes the sum of the values of its warp up to and including its own lane: "
      "`out[i] = x[32w] + … + x[i]` for the warp `w` of thread `i` (an inclusive scan per warp). "
      "Registers and shuffles only: no shared memory."),
    _("`blk.shfl_up(v, d)` gives lane l the `v` of lane l − d (lanes below d keep their own). "
      "Add it for d = 1, 2, 4, 8, 16, but only in lanes l ≥ d: after five steps lane l holds "
      "the sum of lanes 0 to l."),
    warp_scan, warp_scan_solution, _scan_case, grid=(SCAN_N // SCAN_BLOCK,), block=(SCAN_BLOCK,),
    rules=(Budget("shared_requests", 0),), wrong=(warp_scan_unguarded,))

# -- 13. a butterfly: every lane gets the warp's maximum ---------------------------------

WMAX_N, WMAX_BLOCK = 2048, 128


# --8<-- [start:warp_max]
def warp_max(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for delta in (16, 8, 4, 2, 1):
        v = np.maximum(v, blk.shfl_down(v, delta))
    blk.store(out, i, v)
# --8<-- [end:warp_max]


# --8<-- [start:warp_max_solution]
def warp_max_solution(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for lane_mask in (16, 8, 4, 2, 1):
        v = np.maximum(v, blk.shfl_xor(v, lane_mask))
    blk.store(out, i, v)
# --8<-- [end:warp_max_solution]


# --8<-- [start:warp_max_wrong]
def warp_max_broadcast_late(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for delta in (16, 8, 4, 2):
        v = np.maximum(v, blk.shfl_down(v, delta))
    blk.store(out, i, blk.shfl(v, 0))
# --8<-- [end:warp_max_wrong]


def _max_case(rng):
    x, drawn = uniform(rng, WMAX_N)
    return Case((x, np.zeros_like(x)), {1: np.repeat(x.reshape(-1, 32).max(axis=1), 32)}, {0: drawn})


WARP_MAX = Puzzle(
    "warp_max", "p2", "fix", _("Fix: every lane needs the maximum"),
    _("Every thread must write the maximum of its warp's 32 values to `out[i]`. The kernel's "
      "`shfl_down` tree leaves the maximum in lane 0 only. Make all 32 lanes end with it, "
      "still with shuffles only."),
    _("`blk.shfl_xor(v, m)` pairs lane l with lane l ^ m: both see each other's value. With m = 16, "
      "8, 4, 2, 1 every lane takes part in every step (a butterfly), and each ends with the maximum."),
    warp_max, warp_max_solution, _max_case, grid=(WMAX_N // WMAX_BLOCK,), block=(WMAX_BLOCK,),
    rules=(Budget("shared_requests", 0),), wrong=(warp_max_broadcast_late,))

# -- 14. stream compaction with a ballot ---------------------------------------------------

PACK_N, PACK_BLOCK = 2048, 256


# --8<-- [start:compact]
def compact(blk, x, out, count):
    i = blk.bx * blk.bdx + blk.tx
    w = i // 32
    v = blk.load(x, i)
    keep = v > 0
    # TODO: pack the kept values at the front of out[32 * w:32 * w + 32], in order
    blk.store(out, i, v, mask=keep)
# --8<-- [end:compact]


# --8<-- [start:compact_solution]
def compact_solution(blk, x, out, count):
    i = blk.bx * blk.bdx + blk.tx
    w = i // 32
    v = blk.load(x, i)
    keep = v > 0
    votes = blk.ballot(keep)
    before = np.bitwise_count(votes & ((1 << blk.lane) - 1))
    blk.store(out, 32 * w + before, v, mask=keep)
    blk.store(count, w, np.bitwise_count(votes), mask=blk.lane == 0)
# --8<-- [end:compact_solution]


# --8<-- [start:compact_wrong]
def compact_with_atomics(blk, x, out, count):
    i = blk.bx * blk.bdx + blk.tx
    w = i // 32
    v = blk.load(x, i)
    keep = v > 0
    slot = blk.atomic_add(count, w, 1 + 0 * i, mask=keep)
    blk.store(out, 32 * w + slot, v, mask=keep)
# --8<-- [end:compact_wrong]


def _compact_case(rng):
    x, drawn = integers(rng, PACK_N, -9, 9, np.int32)
    warps = x.reshape(-1, 32)
    packed = np.zeros_like(warps)
    counts = (warps > 0).sum(axis=1).astype(np.int32)
    for w, row in enumerate(warps):
        kept = row[row > 0]
        packed[w, :kept.size] = kept
    return Case((x, np.zeros_like(x), np.zeros(PACK_N // 32, np.int32)), {1: packed.reshape(-1), 2: counts}, {0: drawn})


COMPACT = Puzzle(
    "compact", "p2", "write", _("Ballot: stream compaction in a warp"),
    _("Each warp keeps its positive values: it writes them, in their order, to the front of its "
      "own 32 elements of `out` (`out[32w]` onwards; the rest stays 0), and lane 0 writes how many "
      "it kept to `count[w]`. One vote per warp tells every lane where its value goes: no atomics, "
      "no shared memory."),
    _("`votes = blk.ballot(keep)` gives every lane the warp's 32-bit mask of lanes that keep a value. "
      "A lane's slot is the number of keeping lanes before it: the bits of `votes` below its own, "
      "`np.bitwise_count(votes & ((1 << lane) - 1))` (CUDA's `__popc(votes & __lanemask_lt())`)."),
    compact, compact_solution, _compact_case, grid=(PACK_N // PACK_BLOCK,), block=(PACK_BLOCK,),
    rules=(Budget("atomics", 0), Budget("shared_requests", 0)), wrong=(compact_with_atomics,))

# -- 15. a shared-memory histogram on a skewed input --------------------------------------

HIST_N, HIST_BLOCK, BINS = 4096, 256, 32
HIST_BLOCKS = HIST_N // HIST_BLOCK
# One load per warp, and one global atomic per bin per block, from the first BINS threads.
HIST_REQUESTS = HIST_N // 32 + HIST_BLOCKS * cdiv(BINS, 32)


# --8<-- [start:histogram]
def histogram(blk, x, hist):
    i = blk.bx * blk.bdx + blk.tx
    b = blk.load(x, i)
    blk.atomic_add(hist, b, 1 + 0 * i)
# --8<-- [end:histogram]


# --8<-- [start:histogram_solution]
def histogram_solution(blk, x, hist):
    local = blk.shared(hist.size, np.int32, name="local")
    t = blk.tx
    first = t < hist.size
    blk.store(local, t, 0 * t, mask=first)
    blk.sync()
    b = blk.load(x, blk.bx * blk.bdx + t)
    blk.atomic_add(local, b, 1 + 0 * t)
    blk.sync()
    blk.atomic_add(hist, t, blk.load(local, t, mask=first), mask=first)
# --8<-- [end:histogram_solution]


# --8<-- [start:histogram_wrong]
def histogram_plain_increment(blk, x, hist):
    local = blk.shared(hist.size, np.int32, name="local")
    t = blk.tx
    first = t < hist.size
    blk.store(local, t, 0 * t, mask=first)
    blk.sync()
    b = blk.load(x, blk.bx * blk.bdx + t)
    blk.store(local, b, blk.load(local, b) + 1)
    blk.sync()
    blk.atomic_add(hist, t, blk.load(local, t, mask=first), mask=first)
# --8<-- [end:histogram_wrong]


def _histogram_case(rng):
    common = rng.random(HIST_N) < 0.5
    x = np.where(common, 0, rng.integers(0, BINS, HIST_N)).astype(np.int32)
    drawn = _("random bins from 0 to {last}, skewed: half of them bin 0", last=BINS - 1)
    return Case((x, np.zeros(BINS, np.int32)), {1: np.bincount(x, minlength=BINS).astype(np.int32)}, {0: drawn})


HISTOGRAM = Puzzle(
    "histogram", "p2", "target", _("Atomics: a shared-memory histogram"),
    _("`hist[b]` counts the elements of `x` equal to `b`, for {bins} bins. The kernel is right, but every "
      "thread updates `hist` in global memory with its own atomic, and half the input falls into bin 0. "
      "Count each block in a shared histogram first, then add it to `hist` with one atomic per bin: "
      "at most {budget} global requests.", bins=BINS, budget=HIST_REQUESTS),
    _("Zero a shared array of {bins} counters, `blk.sync()`, let every thread `blk.atomic_add` its bin "
      "there, `blk.sync()` again, and let the first {bins} threads each add one counter to `hist`. "
      "Shared atomics that hit one bin are served one after another, but they stay on the chip.",
      bins=BINS),
    histogram, histogram_solution, _histogram_case, grid=(HIST_BLOCKS,), block=(HIST_BLOCK,),
    rules=(Budget("requests", HIST_REQUESTS),), wrong=(histogram_plain_increment,))

# -- 16. a reduction tail that needs __syncwarp ---------------------------------------------

TAIL_N, TAIL_BLOCK = 4096, 256


# --8<-- [start:tail_sum]
def tail_sum(blk, x, out):
    sdata = blk.shared(blk.bdx, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = blk.bdx // 2
    while s > 16:
        w = tid < s
        blk.store(sdata, tid, blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w), mask=w)
        blk.sync()
        s //= 2
    while s > 0:
        w = tid < s
        blk.store(sdata, tid, blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w), mask=w)
        s //= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)
# --8<-- [end:tail_sum]


# --8<-- [start:tail_sum_solution]
def tail_sum_solution(blk, x, out):
    sdata = blk.shared(blk.bdx, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = blk.bdx // 2
    while s > 16:
        w = tid < s
        blk.store(sdata, tid, blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w), mask=w)
        blk.sync()
        s //= 2
    while s > 0:
        w = tid < s
        blk.store(sdata, tid, blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w), mask=w)
        blk.syncwarp(mask=tid < 32)
        s //= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)
# --8<-- [end:tail_sum_solution]


# --8<-- [start:tail_sum_wrong]
def tail_sum_syncwarp_once(blk, x, out):
    sdata = blk.shared(blk.bdx, np.float32, name="sdata")
    tid = blk.tx
    blk.store(sdata, tid, blk.load(x, blk.bx * blk.bdx + tid))
    blk.sync()
    s = blk.bdx // 2
    while s > 16:
        w = tid < s
        blk.store(sdata, tid, blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w), mask=w)
        blk.sync()
        s //= 2
    while s > 0:
        w = tid < s
        blk.store(sdata, tid, blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w), mask=w)
        s //= 2
    blk.syncwarp(mask=tid < 32)
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)
# --8<-- [end:tail_sum_wrong]


def _tail_case(rng):
    x, drawn = integers(rng, TAIL_N, 0, 9)
    return Case((x, np.zeros(TAIL_N // TAIL_BLOCK, np.float32)), {1: x.reshape(-1, TAIL_BLOCK).sum(axis=1)}, {0: drawn})


TAIL_SUM = Puzzle(
    "tail_sum", "p2", "fix", _("Fix: the last warp needs __syncwarp"),
    _("The block reduction stops calling `blk.sync()` once only warp 0 is left (s ≤ 16): the old "
      "warp-synchronous trick, which assumed the 32 lanes run in lockstep. Since Volta they need "
      "not, and a lane may read `sdata[tid + s]` before the lane that writes it has. The simulator "
      "gets the right sums, but racecheck finds the hazard. Fix it without a block-wide barrier."),
    _("Lane tid reads what lane tid + s wrote in the step before. `blk.syncwarp(mask=tid < 32)` "
      "after each store of the last loop orders the lanes of warp 0, like `__syncwarp()`."),
    tail_sum, tail_sum_solution, _tail_case, grid=(TAIL_N // TAIL_BLOCK,), block=(TAIL_BLOCK,),
    rules=(), wrong=(tail_sum_syncwarp_once,))

# -- 17. a ticket counter from atomicCAS ------------------------------------------------

TICKET_N, TICKET_BLOCK, TICKET_WRAP = 256, 64, 50


# --8<-- [start:tickets]
def tickets(blk, flag, counter, ticket, K):
    i = blk.bx * blk.bdx + blk.tx
    want = blk.load(flag, i) == 1
    zero = 0 * i
    old = blk.load(counter, zero, mask=want)
    blk.store(counter, zero, (old + 1) % K, mask=want)
    blk.store(ticket, i, old, mask=want)
# --8<-- [end:tickets]


# --8<-- [start:tickets_solution]
def tickets_solution(blk, flag, counter, ticket, K):
    i = blk.bx * blk.bdx + blk.tx
    want = blk.load(flag, i) == 1
    zero = 0 * i
    mine = -1 + zero
    old = blk.load(counter, zero, mask=want)
    waiting = want
    while waiting.any():
        seen = blk.atomic_cas(counter, zero, old, (old + 1) % K, mask=waiting)
        won = waiting & (seen == old)
        mine = np.where(won, old, mine)
        waiting = waiting & ~won
        old = seen
    blk.store(ticket, i, mine, mask=want)
# --8<-- [end:tickets_solution]


# --8<-- [start:tickets_wrong]
def tickets_add_then_wrap(blk, flag, counter, ticket, K):
    i = blk.bx * blk.bdx + blk.tx
    want = blk.load(flag, i) == 1
    old = blk.atomic_add(counter, 0 * i, 1 + 0 * i, mask=want)
    blk.store(ticket, i, old % K, mask=want)
# --8<-- [end:tickets_wrong]


def _tickets_case(rng):
    flag, drawn = integers(rng, TICKET_N, 0, 1, np.int32)
    taken = int(flag.sum())
    want = np.full(TICKET_N, -1, np.int32)
    want[:taken] = np.arange(taken) % TICKET_WRAP
    return Case((flag, np.zeros(1, np.int32), np.full(TICKET_N, -1, np.int32), TICKET_WRAP),
                {1: np.array([taken % TICKET_WRAP], np.int32), 2: want}, {0: drawn}, unordered=frozenset({2}))


TICKETS = Puzzle(
    "tickets", "p2", "write", _("atomicCAS: a ticket counter that wraps"),
    _("Every thread whose `flag` is 1 takes a ticket from `counter`: tickets are handed out 0, 1, 2, … "
      "up to K − 1 = {last}, then from 0 again, and `counter` always holds the next one. A thread writes "
      "its ticket to `ticket[i]` (the others leave their −1). Which thread gets which ticket is up to "
      "the scheduler; no ticket may be lost or handed out twice. CUDA's `atomicAdd` cannot wrap: build "
      "the update from `atomicCAS`.", last=TICKET_WRAP - 1),
    _("Read the counter, then loop: `seen = blk.atomic_cas(counter, zero, old, (old + 1) % K, mask=waiting)`. "
      "A thread whose `seen == old` got ticket `old`; the others saw someone else's update and retry "
      "with `old = seen`, until no thread is waiting."),
    tickets, tickets_solution, _tickets_case, grid=(TICKET_N // TICKET_BLOCK,), block=(TICKET_BLOCK,),
    wrong=(tickets_add_then_wrap,))

PUZZLES = (WARP_SCAN, WARP_MAX, COMPACT, HISTOGRAM, TAIL_SUM, TICKETS)
