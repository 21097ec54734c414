"""Kernels for the warp-level P2 puzzles and those of the execution-model lecture: ``CORRECT``
in styles other than the solution's must pass, ``WRONG`` must fail (messages in
tests/puzzles/test_styles.py, line numbers counted from each kernel's def)."""

import numpy as np

# -- warp_of --------------------------------------------------------------------------


def warp_of_builtin(blk, warp, lane):
    g = blk.bx * (blk.bdx * blk.bdy) + blk.tid
    blk.store(warp, g, blk.warp)
    blk.store(lane, g, blk.lane)


def warp_of_bits(blk, warp, lane):
    t = blk.tx + blk.bdx * blk.ty
    g = blk.bx * (blk.bdx * blk.bdy) + t
    blk.store(warp, g, t >> 5)
    blk.store(lane, g, t & 31)


def warp_of_rows(blk, warp, lane):
    rows_per_warp = 32 // blk.bdx
    g = (blk.bx * blk.bdy + blk.ty) * blk.bdx + blk.tx
    blk.store(warp, g, blk.ty // rows_per_warp)
    blk.store(lane, g, (blk.ty % rows_per_warp) * blk.bdx + blk.tx)


def warp_of_lane_is_tx(blk, warp, lane):
    t = blk.ty * blk.bdx + blk.tx
    g = blk.bx * (blk.bdx * blk.bdy) + t
    blk.store(warp, g, t // 32)
    blk.store(lane, g, blk.tx)


def warp_of_grid_warp(blk, warp, lane):
    t = blk.ty * blk.bdx + blk.tx
    g = blk.bx * (blk.bdx * blk.bdy) + t
    blk.store(warp, g, g // 32)
    blk.store(lane, g, t % 32)


# -- even_odd -------------------------------------------------------------------------


def even_odd_no_annotation(blk, a, out):
    g = blk.bx * (blk.bdx // 32) + blk.warp
    parity = g % 2
    i = 2 * (32 * (g // 2) + blk.lane) + parity
    v = blk.load(a, i)
    even = parity == 0
    blk.alu(4, mask=even)
    blk.alu(4, mask=~even)
    blk.store(out, i, np.where(even, 2 * v, v + 100))


def even_odd_bits(blk, a, out):
    g = (blk.bx << 3) + (blk.tx >> 5)
    i = ((g >> 1) << 6) + ((blk.tx & 31) << 1) + (g & 1)
    v = blk.load(a, i)
    even = blk.branch((g & 1) == 0)
    blk.alu(4, mask=even)
    blk.alu(4, mask=~even)
    blk.store(out, i, np.where(even, v + v, v + 100))


def even_odd_halves_of_block(blk, a, out):
    half = blk.warp // 4
    i = blk.bx * blk.bdx + 2 * (32 * (blk.warp % 4) + blk.lane) + half
    v = blk.load(a, i)
    even = blk.branch(half == 0)
    blk.alu(4, mask=even)
    blk.alu(4, mask=~even)
    blk.store(out, i, 2 * v, mask=even)
    blk.store(out, i, v + 100, mask=~even)


def even_odd_annotation_removed(blk, a, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(a, i)
    even = i % 2 == 0
    blk.alu(4, mask=even)
    blk.alu(4, mask=~even)
    blk.store(out, i, np.where(even, 2 * v, v + 100))


def even_odd_index_only(blk, a, out):
    g = blk.bx * (blk.bdx // 32) + blk.warp
    i = 2 * (32 * (g // 2) + blk.lane) + g % 2
    even = blk.branch(g % 2 == 0)
    blk.alu(4, mask=even)
    blk.alu(4, mask=~even)
    blk.store(out, i, np.where(even, 2.0 * i, i + 100.0))


# -- signed ---------------------------------------------------------------------------


def signed_no_annotation(blk, x, order, y):
    i = blk.bx * blk.bdx + blk.tx
    j = blk.load(order, i)
    v = blk.load(x, j)
    pos = v > 0
    blk.alu(4, mask=pos)
    blk.alu(4, mask=~pos)
    blk.store(y, j, np.where(pos, np.sqrt(np.abs(v)), -v * v))


def signed_guarded(blk, x, order, y):
    i = blk.tid + blk.bx * blk.bdx
    m = i < x.size
    j = blk.load(order, i, mask=m)
    v = blk.load(x, j, mask=m)
    pos = blk.branch(v > 0, mask=m)
    blk.alu(4, mask=pos)
    blk.alu(4, mask=m & ~pos)
    blk.store(y, j, np.where(pos, np.sqrt(np.abs(v)), -v * v), mask=m)


def signed_two_stores(blk, x, order, y):
    i = blk.bx * blk.bdx + blk.tx
    j = blk.load(order, i)
    v = blk.load(x, j)
    pos = blk.branch(v > 0)
    blk.alu(4, mask=pos)
    blk.store(y, j, np.sqrt(np.abs(v)), mask=pos)
    blk.alu(4, mask=~pos)
    blk.store(y, j, -v * v, mask=~pos)


def signed_annotation_removed(blk, x, order, y):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    pos = v > 0
    blk.alu(4, mask=pos)
    blk.alu(4, mask=~pos)
    blk.store(y, i, np.where(pos, np.sqrt(np.abs(v)), -v * v))


def signed_reads_unsorted(blk, x, order, y):
    i = blk.bx * blk.bdx + blk.tx
    j = blk.load(order, i)
    v = blk.load(x, i)
    pos = blk.branch(v > 0)
    blk.alu(4, mask=pos)
    blk.alu(4, mask=~pos)
    blk.store(y, j, np.where(pos, np.sqrt(np.abs(v)), -v * v))


# -- copy4 ----------------------------------------------------------------------------


def copy4_shifted(blk, a, out):
    i = (blk.bx * blk.bdx + blk.tx) << 2
    blk.store(out, i, blk.load(a, i, width=4), width=4)


def copy4_guarded(blk, a, out):
    i = 4 * blk.tid + 4 * blk.bdx * blk.bx
    m = i < a.size
    v = blk.load(a, i, mask=m, width=4)
    blk.store(out, i, v, mask=m, width=4)


def copy4_by_columns(blk, a, out):
    i = (blk.bx * blk.bdx + blk.tx) * 4
    v = blk.load(a, i, width=4)
    blk.store(out, i, np.stack([v[..., k] for k in range(4)], axis=-1), width=4)


def copy4_index_only(blk, a, out):
    i = (blk.bx * blk.bdx + blk.tx) * 4
    blk.store(out, i, np.stack([i + k for k in range(4)], axis=-1).astype(np.float32), width=4)


# -- warp_scan ------------------------------------------------------------------------


def scan_add_zero(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for d in (1, 2, 4, 8, 16):
        up = blk.shfl_up(v, d)
        v = v + np.where(blk.lane >= d, up, 0)
    blk.store(out, i, v)


def scan_explicit_source(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    d = 1
    while d < 32:
        has = blk.lane >= d
        got = blk.shfl(v, np.where(has, blk.lane - d, blk.lane))
        v = np.where(has, v + got, v)
        d *= 2
    blk.store(out, i, v)


def scan_masked_shuffle(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for d in (1, 2, 4, 8, 16):
        v = v + np.where(blk.lane >= d, blk.shfl_up(v, d), 0 * v)
    blk.store(out, i // 32 * 32 + blk.lane, v)


def scan_down(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for d in (1, 2, 4, 8, 16):
        down = blk.shfl_down(v, d)
        v = np.where(blk.lane + d < 32, v + down, v)
    blk.store(out, i, v)


def scan_four_steps(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for d in (1, 2, 4, 8):
        up = blk.shfl_up(v, d)
        v = np.where(blk.lane >= d, v + up, v)
    blk.store(out, i, v)


def scan_shared(blk, x, out):
    s = blk.shared(blk.bdx, np.float32, name="s")
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for d in (1, 2, 4, 8, 16):
        blk.store(s, blk.tx, v)
        blk.syncwarp()
        has = blk.lane >= d
        v = v + np.where(has, blk.load(s, blk.tx - d, mask=has), 0)
        blk.syncwarp()
    blk.store(out, i, v)


# -- warp_max -------------------------------------------------------------------------


def max_down_then_broadcast(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for d in (16, 8, 4, 2, 1):
        v = np.maximum(v, blk.shfl_down(v, d))
    blk.store(out, i, blk.shfl(v, 0))


def max_xor_while(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    m = 1
    while m < 32:
        other = blk.shfl_xor(v, m)
        v = np.where(other > v, other, v)
        m <<= 1
    blk.store(out, i, v)


def max_general_shuffle(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for m in (16, 8, 4, 2, 1):
        v = np.maximum(v, blk.shfl(v, blk.lane ^ m))
    blk.store(out, i, v)


def max_xor_four_steps(blk, x, out):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    for m in (16, 8, 4, 2):
        v = np.maximum(v, blk.shfl_xor(v, m))
    blk.store(out, i, v)


def max_shared(blk, x, out):
    s = blk.shared(blk.bdx, np.float32, name="s")
    i = blk.bx * blk.bdx + blk.tx
    blk.store(s, blk.tx, blk.load(x, i))
    blk.syncwarp()
    best = blk.load(s, blk.warp * 32)
    for k in range(1, 32):
        best = np.maximum(best, blk.load(s, blk.warp * 32 + k))
    blk.store(out, i, best)


# -- compact --------------------------------------------------------------------------


def compact_wide_mask(blk, x, out, count):
    i = blk.bx * blk.bdx + blk.tx
    v = blk.load(x, i)
    keep = v > 0
    votes = blk.ballot(keep).astype(np.uint64)
    before = np.bitwise_count(votes & ((np.uint64(1) << blk.lane.astype(np.uint64)) - np.uint64(1)))
    blk.store(out, i - blk.lane + before, v, mask=keep)
    blk.store(count, i // 32, np.bitwise_count(votes), mask=blk.lane == 0)


def compact_bit_loop(blk, x, out, count):
    i = blk.bx * blk.bdx + blk.tx
    w = i // 32
    v = blk.load(x, i)
    keep = v > 0
    votes = blk.ballot(keep)
    before = 0 * i
    for k in range(32):
        before = before + ((votes >> k) & 1) * (k < blk.lane)
    blk.store(out, 32 * w + before, v, mask=keep)
    blk.store(count, w, before + keep, mask=blk.lane == 31)


def compact_shuffled_count(blk, x, out, count):
    i = blk.bx * blk.bdx + blk.tx
    w = i // 32
    v = blk.load(x, i)
    keep = blk.branch(v > 0)
    votes = blk.ballot(keep)
    total = blk.shfl(np.bitwise_count(votes).astype(np.int32), 0)
    blk.store(out, 32 * w + np.bitwise_count(votes & ((1 << blk.lane) - 1)), v, mask=keep)
    blk.store(count, w, total, mask=blk.lane == 0)


def compact_counts_itself(blk, x, out, count):
    i = blk.bx * blk.bdx + blk.tx
    w = i // 32
    v = blk.load(x, i)
    keep = v > 0
    votes = blk.ballot(keep)
    before = np.bitwise_count(votes & ((1 << (blk.lane + 1)) - 1))
    blk.store(out, 32 * w + before, v, mask=keep)
    blk.store(count, w, np.bitwise_count(votes), mask=blk.lane == 0)


def compact_own_vote(blk, x, out, count):
    i = blk.bx * blk.bdx + blk.tx
    w = i // 32
    v = blk.load(x, i)
    keep = v > 0
    votes = blk.ballot(keep)
    blk.store(out, 32 * w + np.bitwise_count(votes & ((1 << blk.lane) - 1)), v, mask=keep)
    blk.store(count, w, keep.astype(np.int32), mask=blk.lane == 0)


# -- histogram ------------------------------------------------------------------------


def histogram_per_warp(blk, x, hist):
    bins = hist.size
    local = blk.shared((blk.bdx // 32, bins), np.int32, name="local")
    blk.store(local, (blk.warp, blk.lane % bins), 0 * blk.tx)
    blk.sync()
    b = blk.load(x, blk.bx * blk.bdx + blk.tx)
    blk.atomic_add(local, (blk.warp, b), 1 + 0 * blk.tx)
    blk.sync()
    first = blk.tx < bins
    total = 0 * blk.tx
    for w in range(blk.bdx // 32):
        total = total + blk.load(local, (w + 0 * blk.tx, blk.tx % bins), mask=first)
    blk.atomic_add(hist, blk.tx, total, mask=first)


def histogram_zero_loop(blk, x, hist):
    bins = hist.size
    local = blk.shared(bins, np.int32, name="local")
    for start in range(0, bins, blk.bdx):
        k = start + blk.tx
        blk.store(local, k, 0 * k, mask=k < bins)
    blk.sync()
    blk.atomic_add(local, blk.load(x, blk.bx * blk.bdx + blk.tx), 1 + 0 * blk.tx)
    blk.sync()
    for start in range(0, bins, blk.bdx):
        k = start + blk.tx
        m = k < bins
        blk.atomic_add(hist, k, blk.load(local, k, mask=m), mask=m)


def histogram_branch(blk, x, hist):
    local = blk.shared(hist.size, np.int32, name="local")
    t = blk.tx
    first = blk.branch(t < hist.size)
    blk.store(local, t, 0 * t, mask=first)
    blk.sync()
    b = blk.load(x, blk.bx * blk.bdx + t)
    blk.atomic_add(local, b, 1 + 0 * t)
    blk.sync()
    count = blk.load(local, t, mask=first)
    blk.atomic_add(hist, t, count, mask=first & (count > 0))


def histogram_flush_by_store(blk, x, hist):
    local = blk.shared(hist.size, np.int32, name="local")
    t = blk.tx
    first = t < hist.size
    blk.store(local, t, 0 * t, mask=first)
    blk.sync()
    b = blk.load(x, blk.bx * blk.bdx + t)
    blk.atomic_add(local, b, 1 + 0 * t)
    blk.sync()
    blk.store(hist, t, blk.load(local, t, mask=first), mask=first)


def histogram_not_zeroed(blk, x, hist):
    local = blk.shared(hist.size, np.int32, name="local")
    t = blk.tx
    b = blk.load(x, blk.bx * blk.bdx + t)
    blk.atomic_add(local, b, 1 + 0 * t)
    blk.sync()
    first = t < hist.size
    blk.atomic_add(hist, t, blk.load(local, t, mask=first), mask=first)


# -- tail_sum -------------------------------------------------------------------------


def tail_syncwarp_active_lanes(blk, x, out):
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
        blk.syncwarp(mask=tid < 2 * s)
        s //= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)


def tail_shuffles(blk, x, out):
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
    last = tid < 32
    v = blk.load(sdata, tid, mask=last)
    for d in (16, 8, 4, 2, 1):
        v = v + blk.shfl_down(v, d, mask=last)
    blk.store(out, blk.bx, v, mask=tid == 0)


def tail_syncwarp_both_sides(blk, x, out):
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
    warp0 = tid < 32
    while s > 0:
        w = tid < s
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.syncwarp(mask=warp0)
        blk.store(sdata, tid, v, mask=w)
        blk.syncwarp(mask=warp0)
        s //= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)


def tail_syncwarp_before_store(blk, x, out):
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
        v = blk.load(sdata, tid, mask=w) + blk.load(sdata, tid + s, mask=w)
        blk.syncwarp(mask=tid < 32)
        blk.store(sdata, tid, v, mask=w)
        s //= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)


def tail_sync_inside_if(blk, x, out):
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
        blk.sync(mask=tid < 32)
        s //= 2
    blk.store(out, blk.bx, blk.load(sdata, 0 * tid, mask=tid == 0), mask=tid == 0)


# -- tickets --------------------------------------------------------------------------


def tickets_reread(blk, flag, counter, ticket, K):
    i = blk.bx * blk.bdx + blk.tx
    want = blk.load(flag, i) == 1
    zero = 0 * i
    mine = -1 + zero
    waiting = want
    while waiting.any():
        old = blk.load(counter, zero, mask=waiting)
        seen = blk.atomic_cas(counter, zero, old, (old + 1) % K, mask=waiting)
        won = waiting & (seen == old)
        mine = np.where(won, old, mine)
        waiting = waiting & ~won
    blk.store(ticket, i, mine, mask=want)


def tickets_per_warp(blk, flag, counter, ticket, K):
    i = blk.bx * blk.bdx + blk.tx
    zero = 0 * i
    want = blk.load(flag, i) == 1
    votes = blk.ballot(want)
    many = np.bitwise_count(votes).astype(np.int32)
    before = np.bitwise_count(votes & ((1 << blk.lane) - 1)).astype(np.int32)
    leader = (blk.lane == 0) & (many > 0)
    base = 0 * i
    waiting = leader
    old = blk.load(counter, zero, mask=waiting)
    while waiting.any():
        seen = blk.atomic_cas(counter, zero, old, (old + many) % K, mask=waiting)
        won = waiting & (seen == old)
        base = np.where(won, old, base)
        waiting = waiting & ~won
        old = seen
    base = blk.shfl(base, 0)
    blk.store(ticket, i, (base + before) % K, mask=want)


def tickets_guess_zero(blk, flag, counter, ticket, K):
    i = blk.bx * blk.bdx + blk.tx
    want = blk.load(flag, i) == 1
    zero = 0 * i
    mine = -1 + zero
    old = zero
    waiting = want
    while waiting.any():
        seen = blk.atomic_cas(counter, zero, old, (old + 1) % K, mask=waiting)
        won = waiting & (seen == old)
        mine = np.where(won, old, mine)
        waiting = waiting & ~won
        old = seen
    blk.store(ticket, i, mine, mask=want)


def tickets_one_try(blk, flag, counter, ticket, K):
    i = blk.bx * blk.bdx + blk.tx
    want = blk.load(flag, i) == 1
    zero = 0 * i
    old = blk.load(counter, zero, mask=want)
    seen = blk.atomic_cas(counter, zero, old, (old + 1) % K, mask=want)
    blk.store(ticket, i, np.where(seen == old, old, -1), mask=want)


def tickets_no_wrap(blk, flag, counter, ticket, K):
    i = blk.bx * blk.bdx + blk.tx
    want = blk.load(flag, i) == 1
    zero = 0 * i
    mine = -1 + zero
    old = blk.load(counter, zero, mask=want)
    waiting = want
    while waiting.any():
        seen = blk.atomic_cas(counter, zero, old, old + 1, mask=waiting)
        won = waiting & (seen == old)
        mine = np.where(won, old, mine)
        waiting = waiting & ~won
        old = seen
    blk.store(ticket, i, mine, mask=want)


CORRECT = {
    "warp_of": [warp_of_builtin, warp_of_bits, warp_of_rows],
    "even_odd": [even_odd_no_annotation, even_odd_bits, even_odd_halves_of_block],
    "signed": [signed_no_annotation, signed_guarded, signed_two_stores],
    "copy4": [copy4_shifted, copy4_guarded, copy4_by_columns],
    "warp_scan": [scan_add_zero, scan_explicit_source, scan_masked_shuffle],
    "warp_max": [max_down_then_broadcast, max_xor_while, max_general_shuffle],
    "compact": [compact_wide_mask, compact_bit_loop, compact_shuffled_count],
    "histogram": [histogram_per_warp, histogram_zero_loop, histogram_branch],
    "tail_sum": [tail_syncwarp_active_lanes, tail_shuffles, tail_syncwarp_both_sides],
    "tickets": [tickets_reread, tickets_per_warp, tickets_guess_zero],
}

WRONG = {
    "warp_of": [warp_of_lane_is_tx, warp_of_grid_warp],
    "even_odd": [even_odd_annotation_removed, even_odd_index_only],
    "signed": [signed_annotation_removed, signed_reads_unsorted],
    "copy4": [copy4_index_only],
    "warp_scan": [scan_down, scan_four_steps, scan_shared],
    "warp_max": [max_xor_four_steps, max_shared],
    "compact": [compact_counts_itself, compact_own_vote],
    "histogram": [histogram_flush_by_store, histogram_not_zeroed],
    "tail_sum": [tail_syncwarp_before_store, tail_sync_inside_if],
    "tickets": [tickets_one_try, tickets_no_wrap],
}
