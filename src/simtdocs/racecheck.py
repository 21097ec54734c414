"""Racecheck's bookkeeping for shared memory: who touched each element in this barrier phase.

Per element and phase, ``Shared`` keeps a bit per warp that read it and one per warp that
wrote it, the source lines of its latest read and write, and, inside a warp until a
``syncwarp`` orders them, the lane of its latest write and the lanes that read it
(``hazards``). An access is checked against them and then logged; that is about a dozen
scattered reads and writes of the tables per lane.

Most elements of a phase are touched by one thread only (a thread's own counters in a
histogram, its own slot of a tile): such an element cannot be part of a hazard until
another thread touches it. So an element first records only its **owner**: the thread,
whether it read and wrote, and the lines of its latest read and write (as slots in a short
list of the array's lines), all in one int32 (``owned_access``). A thread that reads and
writes its own element again from the same lines changes nothing, so that costs one read
of one table. The element gets its tables in full (``materialize``) the moment another
thread, a ``syncwarp`` or an access of any other shape reaches it. What racecheck reports
is the same either way.

Atomics meet plain accesses only (``diagnostics``: two atomics never race). Their tables
are their own (``updaters``, ``last_atomic``, ``atomic_warp``, ``atomic_lanes``, kept as the
read tables are), and an atomic instruction reached when nothing plain has touched the
array since the barrier cannot race yet: it is only remembered (``pending_atomics``: how
to find its lanes' keys from the sort its lanes made anyway, worked out only if needed)
and logged when a plain access, a
``syncwarp`` or a barrier of only some blocks comes before the next barrier of all. A
histogram whose atomics sit between two barriers, as it should, costs racecheck nothing.
"""

from __future__ import annotations

import numpy as np

from .diagnostics import RACE_PAIRS, Race, index_text

#: ``Shared.read_warp`` of an element that several warps read in this barrier phase.
MANY_WARPS = -2
#: ``Shared.owner`` of an element nobody touched this phase, and of one with full tables.
UNTOUCHED, SHARED = -1, -2
# Any other owner is thread << THREAD | read line's slot << READ_LINE | write line's slot
# << WRITE_LINE | READ | WROTE.
WROTE, READ, WRITE_LINE, READ_LINE, THREAD = 1, 2, 2, 10, 18
SLOT = 0xFF  # up to 256 lines per array
LINE_BITS = {"read": (READ, SLOT << READ_LINE, READ_LINE), "write": (WROTE, SLOT << WRITE_LINE, WRITE_LINE)}


def _slot(arr, sid: int) -> int | None:
    """The array's slot for source line ``sid`` (None once its 256 slots are taken)."""
    slot = arr.line_slots.get(sid)
    if slot is None and len(arr.line_slots) <= SLOT:
        slot = arr.line_slots[sid] = len(arr.line_slots)
        arr.slot_lines[slot] = sid
    return slot


def owned_access(blk, arr, site, kind: str, key: np.ndarray, thread: np.ndarray) -> bool:
    """Log a read or write of the elements ``key`` by ``thread`` (one per lane) when every
    element is untouched this phase or already this lane's thread's own, and no two threads
    of this access share one: then no hazard is possible. False (nothing logged) otherwise."""
    slot = _slot(arr, blk._L.site_id(site))
    if slot is None:
        return False
    before = arr.owner[key]
    flag, line_mask, shift = LINE_BITS[kind]
    mine = (thread.astype(np.int32) << THREAD) | (flag | slot << shift)
    # The threads' own elements, from this line again (UNTOUCHED and SHARED are negative).
    if ((before & np.int32((-1 << THREAD) | line_mask | flag)) == mine).all():
        return True
    owner = before >> THREAD  # UNTOUCHED and SHARED give -1: no thread
    if not ((owner == thread) | (before == UNTOUCHED)).all():
        return False
    new = np.where(before >= 0, before & ~line_mask, thread.astype(np.int32) << THREAD) | (flag | slot << shift)
    # Every lane's code written back (the unchanged ones too: picking out the changed lanes
    # costs more than writing them). Two threads of this access on one element nobody had:
    # one of them lost, so everything goes back and the full check runs. (An element a
    # thread already owned cannot be another thread's: it failed the test above.)
    arr.owner[key] = new
    if not np.array_equal(arr.owner[key], new):
        arr.owner[key] = before
        return False
    arr.owned = True
    arr.plain_this_phase = True
    if kind == "write":
        arr.written_this_phase = True
    return True


def materialize(arr, key: np.ndarray | None = None) -> None:
    """Full tables for the owned elements among ``key`` (all of them when None), as the
    accesses of their one thread would have left them."""
    if key is None:
        at = np.flatnonzero(arr.owner >= 0)
        arr.owned = False
    else:
        at = key[arr.owner[key] >= 0]
    if at.size == 0:
        return
    code = arr.owner[at].astype(np.int64)
    thread = code >> THREAD
    warp_bit = np.left_shift(np.uint32(1), (thread >> 5).astype(np.uint32))
    read, wrote = (code & READ) != 0, (code & WROTE) != 0
    arr.writers[at] = np.where(wrote, warp_bit, np.uint32(0))
    arr.readers[at] = np.where(read, warp_bit, np.uint32(0))
    arr.last_write[at] = np.where(wrote, arr.slot_lines[(code >> WRITE_LINE) & SLOT], -1)
    arr.last_read[at] = np.where(read, arr.slot_lines[(code >> READ_LINE) & SLOT], -1)
    arr.lane_write[at] = np.where(wrote, thread, -1)
    arr.read_warp[at] = np.where(read, thread >> 5, -1)
    arr.read_lanes[at] = np.where(read, np.left_shift(np.uint32(1), (thread & 31).astype(np.uint32)), np.uint32(0))
    arr.owner[at] = SHARED


def _mark(table: np.ndarray, key: np.ndarray, bit: np.ndarray) -> None:
    # A fancy |= keeps one lane's result when several lanes hit the same element; when they
    # belong to different warps a bit is lost. Add those lanes again, unbuffered.
    table[key] |= bit
    lost = (table[key] & bit) == 0
    if lost.any():
        np.bitwise_or.at(table, key[lost], bit[lost])


def hazards(blk, arr, site, kind: str, key, warp, lane, blocks=None) -> None:
    """Check one access (``kind`` "read", "write" or "atomic") of the lanes ``lane`` of warps
    ``warp`` (in serial order) against this phase, then log it: between warps, against
    every other warp that touched the element (earlier warps of this very store included);
    inside a warp, against another lane whose access no ``syncwarp`` has ordered yet (not
    against lanes of this same instruction). A plain access meets plain writes (and, a
    write, plain reads) and atomics; an atomic meets plain reads and writes. ``blocks`` (of
    the pass), when given, are the blocks that share the keys' row of tables and run this
    access; else each key's row is its block. One record per block and access pair
    (``diagnostics.RACE_PAIRS``), naming its first racing lane, with the count of racing
    element accesses (``hazards``) and of those that meet another warp (``across_warps``).
    """
    if arr.owned:  # elements one thread had to itself: their tables, in full
        materialize(arr, key)
    arr.owner[key] = SHARED
    L = blk._L
    sid = L.site_id(site)
    seq = L.next_seq()
    bit = np.left_shift(np.uint32(1), warp.astype(np.uint32))
    lane_bit = np.left_shift(np.uint32(1), lane.astype(np.uint32))
    found = []  # (pair, other warps' bits, other lane or -1, other site)
    if kind == "read" and not arr.written_this_phase:
        same_warp_wrote = None  # nothing written since the barrier: a read has nothing to meet
    else:
        wrote = arr.lane_write[key].astype(np.int64)
        same_warp_wrote = np.where((wrote >= 0) & (wrote >> 5 == warp) & (wrote & 31 != lane), wrote & 31, -1)
    if kind != "atomic" and arr.atomics_this_phase:  # a plain access meets atomics (pairs 3, 4)
        updated = np.where(arr.atomic_warp[key] == warp, arr.atomic_lanes[key] & ~lane_bit, np.uint32(0))
        found.append((3 if kind == "read" else 4, arr.updaters[key] & ~bit, _lowest_bit(updated), arr.last_atomic[key]))
    if kind == "read":
        if same_warp_wrote is not None:
            found.insert(0, (0, arr.writers[key] & ~bit, same_warp_wrote, arr.last_write[key]))
        _mark(arr.readers, key, bit)
        arr.last_read[key] = sid
        _log_lanes(arr, arr.read_warp, arr.read_lanes, key, warp, lane_bit)
        arr.plain_this_phase = True
    elif kind == "atomic":
        others = np.where(arr.read_warp[key] == warp, arr.read_lanes[key] & ~lane_bit, np.uint32(0))
        found.append((5, arr.readers[key] & ~bit, _lowest_bit(others), arr.last_read[key]))
        if same_warp_wrote is not None:
            found.append((6, arr.writers[key] & ~bit, same_warp_wrote, arr.last_write[key]))
        _log_atomics(arr, sid, key, warp, lane_bit, bit)
    else:
        others = np.where(arr.read_warp[key] == warp, arr.read_lanes[key] & ~lane_bit, np.uint32(0))
        lowest = _lowest_bit(others)
        plain = [(1, arr.readers[key] & ~bit, lowest, arr.last_read[key])]
        prior = arr.writers[key] & ~bit
        other_site = arr.last_write[key]
        # Warps of this same store that write an element before this warp does.
        order = np.arange(key.size)
        arr._stamp[key] = order
        if (arr._stamp[key] != order).any():
            lowest = np.full(arr.writers.size, 64, np.int64)
            np.minimum.at(lowest, key, warp)
            first = lowest[key]
            earlier = first < warp
            prior = prior | np.where(earlier, np.left_shift(np.uint32(1), first.astype(np.uint32)), np.uint32(0))
            other_site = np.where(earlier, sid, other_site)
        plain.append((2, prior, same_warp_wrote, other_site))
        found[:0] = plain
        arr.written_this_phase = arr.plain_this_phase = True
        _mark(arr.writers, key, bit)
        arr.last_write[key] = sid
        arr.lane_write[key] = (warp * 32 + lane).astype(np.int16)  # the later lane of the instruction stays
    for pair, others, other_lane, other_site in found:
        across = others != 0
        racing = across | (other_lane >= 0)
        hits = np.flatnonzero(racing)
        if hits.size == 0:
            continue
        block = key[hits] // arr.size
        # first lane of every block with a hit, and the block's racing accesses
        rows, first, counts = np.unique(block, return_index=True, return_counts=True)
        across_counts = np.bincount(block[across[hits]], minlength=int(rows[-1]) + 1)[rows]
        kind_name, atomic, other_atomic = RACE_PAIRS[pair]
        for h, n, n_across in zip(hits[first], counts, across_counts):
            o = int(others[h])
            b, element = divmod(int(key[h]), arr.size)
            other = L.site_list[int(other_site[h])] if other_site[h] >= 0 else None
            w = int(warp[h])
            if o:
                who = dict(other_warp=(o & -o).bit_length() - 1)
            else:
                who = dict(other_warp=w, lane=int(lane[h]), other_lane=int(other_lane[h]))
            for block in ([blk.first + b] if blocks is None else blk.first + blocks):
                block = int(block)
                L.race_log.append((block, seq, pair, Race(
                    kind_name, blk._geo.block(block), w, array=arr.name, address=element, site=site,
                    index=index_text(element, arr.shape), other_site=other, atomic=atomic, other_atomic=other_atomic,
                    hazards=int(n), across_warps=int(n_across), **who)))


def _log_lanes(arr, warp_table, lanes_table, key, warp, lane_bit) -> None:
    """Log reading (or atomic) lanes: per element the one warp that did it so far, or
    MANY_WARPS, and while it is one warp, its lanes (a bit each)."""
    # warps run in order, so the last assignment leaves each element's latest warp of this instruction
    arr._stamp[key] = warp
    latest = arr._stamp[key]
    before = warp_table[key]
    now = np.where((before == -1) | (before == latest), latest, MANY_WARPS)
    now[latest != warp] = MANY_WARPS  # several warps of this very instruction
    warp_table[key] = now
    warp_table[key[now == MANY_WARPS]] = MANY_WARPS
    one = warp_table[key] >= 0
    _mark(lanes_table, key[one], lane_bit[one])


def _log_atomics(arr, sid: int, key, warp, lane_bit, bit) -> None:
    """Log an atomic instruction's lanes (any order): its warps, its line, its lanes."""
    _mark(arr.updaters, key, bit)
    arr.last_atomic[key] = sid
    _log_lanes(arr, arr.atomic_warp, arr.atomic_lanes, key, warp, lane_bit)
    arr.atomics_this_phase = True


def atomic(blk, arr, site, lanes_of, threads: int) -> bool:
    """An atomic on shared ``arr``. ``lanes_of()`` gives its lanes' elements (block row ·
    size + element, one row per block of the pass) and their numbers in the pass (block ·
    ``threads`` + thread), in any order: worked out only if they are ever needed. With
    nothing plain logged since the barrier it cannot race: remembered for later (True). Else
    False: the caller checks it with :func:`hazards`, its lanes in serial order."""
    if arr.plain_this_phase:
        return False
    arr.pending_atomics.append((blk._L.site_id(site), lanes_of, threads))
    return True


def flush_atomics(arr) -> None:
    """Log the remembered atomics (see :func:`atomic`) in tables of one row per block."""
    pending, arr.pending_atomics = arr.pending_atomics, []
    if not pending:
        return
    arr.per_block()
    for sid, lanes_of, threads in pending:
        key, lanes = lanes_of()
        if arr.owned:
            materialize(arr, key)
        arr.owner[key] = SHARED
        thread = lanes % threads
        warp = thread // 32
        _log_atomics(arr, sid, key, warp, np.left_shift(np.uint32(1), (thread % 32).astype(np.uint32)),
                     np.left_shift(np.uint32(1), warp.astype(np.uint32)))


def _lowest_bit(bits: np.ndarray) -> np.ndarray:
    """The position of the lowest set bit of each uint32; -1 for 0."""
    b = bits.astype(np.int64)
    out = np.full(b.shape, -1, np.int64)
    some = b != 0
    out[some] = np.log2(b[some] & -b[some]).astype(np.int64)
    return out


