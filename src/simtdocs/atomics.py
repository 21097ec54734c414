"""Atomics: read-modify-write operations that never lose an update.

One atomic instruction updates memory for its active lanes one after another, in a fixed
serial order (blocks of the pass, then warps, then lanes), and every lane gets back the
value it replaced. So ``atomic_add(counter, 0, 1)`` run by 64 threads hands out the tickets
0 to 63. CUDA fixes no order between lanes; fixing one makes the simulator repeatable.

``apply`` does this for a flat memory, one element index and one value per lane, without a
Python loop per lane: in rounds, each serving the next waiting lane of every element, or,
when many lanes hit one element, by sorting the lanes by element once and then running
each element's lanes as one accumulation (a cumulative sum for integer adds, a row of
``ufunc.accumulate`` for float adds, max and min, a shift for exchanges, and for
compare-and-swap one round per successful swap rather than per lane).
"""

from __future__ import annotations

import numpy as np

from .threads import idle_ones

OPS = ("add", "max", "min", "exch", "cas")


def _combine(op: str, old, value, compare):
    if op == "add":
        return old + value
    if op == "max":
        return np.maximum(old, value)
    if op == "min":
        return np.minimum(old, value)
    if op == "exch":
        return value
    if op == "cas":
        return np.where(old == compare, value, old)
    raise ValueError(f"unknown atomic operation {op!r}")


def count(c, lanes, distinct: int) -> None:
    """The counters of one atomic instruction: one per issuing warp, and a conflict for
    every active lane beyond the first on an element (``distinct`` elements per warp, summed)."""
    c.atomics += lanes.rows
    c.atomic_conflicts += lanes.count - distinct


def apply(mem: np.ndarray, keys: np.ndarray, values: np.ndarray, op: str, compare=None, grouped=None) -> np.ndarray:
    """Apply ``op`` for every lane in order; return the old value each lane saw.

    ``mem`` is flat; ``keys`` the element of each lane, ``values`` (and for ``cas`` the
    ``compare`` values) one per lane, all in serial order. ``grouped``, when the caller has
    a cheap way to find it, is ``(lanes, their keys)`` with the lanes grouped by element, each
    group in serial order (``by_element_per_block``); lanes None: in serial order already.
    """
    values = values.astype(mem.dtype, copy=False)
    cmp = None if compare is None else np.asarray(compare, dtype=mem.dtype)
    if keys.size == 0 or grouped is not None and grouped[1].size == 0:  # no lane runs
        return np.zeros(keys.size, mem.dtype)
    if grouped is not None:
        return _sorted(mem, keys, values, op, cmp, grouped)
    if (keys[1:] >= keys[:-1]).all():  # already grouped in serial order (COO rows, one counter)
        return _sorted(mem, keys, values, op, cmp, (None, keys))
    most = int(np.bincount(keys).max())  # the most lanes on one element
    if most <= ROUNDS:
        return _earliest_first(mem, keys, values, op, cmp)
    return _sorted(mem, keys, values, op, cmp)


def apply_across_blocks(mem: np.ndarray, keys: np.ndarray, values: np.ndarray, op: str, compare=None) -> np.ndarray:
    """:func:`apply` when every block of the pass updates the same distinct elements ``keys``
    (K,), block b with ``values[b]`` (B, K): then each element sees one lane per block, in
    block order, and its running value is an accumulation down the blocks (sequential, so
    float sums round exactly as one update after another). Returns the old values (B, K)."""
    values = values.astype(mem.dtype, copy=False)
    start = mem[keys]
    if op in ("add", "max", "min"):
        ufunc = {"add": np.add, "max": np.maximum, "min": np.minimum}[op]
        run = ufunc.accumulate(np.concatenate([start[None], values]), axis=0, dtype=mem.dtype)
        mem[keys] = run[-1]
        return run[:-1]
    old = np.empty_like(values)
    cmp = None if compare is None else compare.astype(mem.dtype, copy=False)
    for b in range(values.shape[0]):  # exch and cas: one numpy step per block
        old[b] = start
        start = _combine(op, start, values[b], None if cmp is None else cmp[b])
    mem[keys] = start
    return old


#: Up to this many lanes on one element, serve the earliest waiting lane of every element
#: per round; beyond it (a counter every block hits), sort the lanes by element once.
ROUNDS = 16


def _earliest_first(mem, keys, values, op, cmp):
    old = np.empty(keys.size, dtype=mem.dtype)
    first = np.empty(mem.size, dtype=np.int64)  # per element: the earliest waiting lane
    waiting = np.arange(keys.size)
    while waiting.size:
        k = keys[waiting]
        first[k[::-1]] = waiting[::-1]  # repeated elements: the last assignment, the earliest lane, wins
        now = first[k] == waiting
        lanes, where = waiting[now], k[now]
        seen = mem[where]
        old[lanes] = seen
        mem[where] = _combine(op, seen, values[lanes], None if cmp is None else cmp[lanes])
        waiting = waiting[~now]
    return old


def by_element_per_block(elements: np.ndarray, size: int, active: np.ndarray | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """For lanes (B, T) that each update their own block's copy of an array of ``size``
    elements (shared memory): the flat lane numbers grouped by (block, element), each group
    in serial order, and the key (block·size + element) of each. One short sort per block,
    which is far faster than one sort of all B·T lanes. ``active`` (B, T): the lanes that run
    (None: all); the others are left out."""
    B, T = elements.shape
    bits = max(1, (T - 1).bit_length())  # the lane in the low bits: shifts, not a division
    wide = np.uint64 if size << bits >= (1 << 32) - 1 else np.uint32
    packed = (elements.astype(wide) << wide(bits)) | np.arange(T, dtype=wide)  # element, then lane
    if active is not None:  # an idle lane becomes all ones: the end of its block's row
        packed |= idle_ones(active, wide)
    ordered = np.sort(packed, axis=1)
    element, lane = (ordered >> wide(bits)).astype(np.int64), (ordered & wide((1 << bits) - 1)).astype(np.int64)
    order = (lane + (np.arange(B) * T)[:, None]).reshape(-1)
    keys = (element + (np.arange(B) * size)[:, None]).reshape(-1)
    if active is None:
        return order, keys
    runs = (ordered != np.iinfo(wide).max).reshape(-1)
    return order[runs], keys[runs]


def _sorted(mem, keys, values, op, cmp, grouped=None):
    if grouped is None:
        small = keys.max() < 1 << 16  # a stable sort of 16-bit keys is a radix sort: much faster
        order = np.argsort(keys.astype(np.uint16) if small else keys, kind="stable")  # serial order kept
        k = keys[order]
    else:
        order, k = grouped  # order None: the lanes are grouped as they come

    def grouped_order(x):
        return x if order is None else x[order]

    head = np.ones(k.size, dtype=bool)
    head[1:] = k[1:] != k[:-1]
    first = np.flatnonzero(head)  # each element's first lane, in sorted order
    last = np.append(first[1:] - 1, k.size - 1)  # and its last
    seen = _by_element(mem, k[first], grouped_order(values), first, last, op,
                       None if cmp is None else grouped_order(cmp))
    if order is None:
        return seen
    old = np.empty(keys.size, dtype=mem.dtype)
    old[order] = seen
    return old


def apply_one(mem: np.ndarray, key: int, values: np.ndarray, op: str, compare=None) -> np.ndarray:
    """:func:`apply` when every lane updates the one element ``key`` (a counter, a lock, a
    total every thread adds to): a single group, with nothing to sort or compare."""
    values = values.astype(mem.dtype, copy=False)
    if values.size == 0:
        return np.zeros(0, mem.dtype)
    cmp = None if compare is None else np.asarray(compare, dtype=mem.dtype)
    return _by_element(mem, np.array([key]), values, np.array([0]), np.array([values.size - 1]), op, cmp)


def _by_element(mem, at, v, first, last, op, cmp):
    """The old value of each lane, the lanes grouped by element (``v`` and ``cmp`` in that
    order; element ``at[g]``'s lanes are ``first[g] .. last[g]``, in serial order), ``mem``
    updated."""
    lanes = last - first + 1  # lanes per element
    if op == "add" and mem.dtype.kind in "iu":  # integers add exactly in any grouping
        run = np.cumsum(v, dtype=mem.dtype)
        before = run[first] - v[first]  # the running sum before each element's first lane
        start = mem[at]
        seen = np.repeat(start - before, lanes) + (run - v)
        mem[at] = start + (run[last] - before)
    elif op == "exch":  # each lane gets the value of the lane before it on its element
        seen = np.roll(v, 1)
        seen[first] = mem[at]
        mem[at] = v[last]
    else:
        if op == "cas":
            seen, final = _compare_and_swap(mem[at], v, cmp, first, lanes)
        else:
            seen, final = _accumulate(_UFUNCS[op], mem.dtype, mem[at], v, first, lanes)
        mem[at] = final
    return seen


_UFUNCS = {"add": np.add, "max": np.maximum, "min": np.minimum}
#: An element with this many lanes or more is accumulated on its own, not padded into a table.
LONG_ROW = 4096
#: After this many rounds of compare-and-swap (one per swap), the lanes left are served one
#: after another in Python: a chain where every lane swaps would take a round per lane.
CAS_ROUNDS = 64


#: Up to this many lanes on every element, an accumulation goes one place of the elements'
#: rows at a time (a round per place) rather than through padded tables.
SHORT_ROWS = 64


def _accumulate_by_place(ufunc, dtype, start, v, first, lanes):
    """:func:`_accumulate` for short rows (COO's rows, a few lanes on each element): round r
    serves the r-th lane of every element that has one, so the rounds are the longest row,
    and each lane is read and written once."""
    seen = np.empty(v.size, dtype)
    running = start.copy()
    alive = np.arange(start.size)
    place = 0
    while alive.size:
        at = first[alive] + place
        seen[at] = running[alive]
        running[alive] = ufunc(running[alive], v[at], dtype=dtype)
        place += 1
        alive = alive[lanes[alive] > place]
    return seen, running


def _accumulate(ufunc, dtype, start, v, first, lanes):
    """Each element's updates one after another, as ``ufunc.accumulate`` does them (so float
    sums round exactly as lane after lane would): element g's row is its value ``start[g]``
    and then its lanes' values. Rows of one length class (up to the next power of two, so
    the padding never doubles the work) form one table, and the tables of every class lie
    in one buffer, so the lanes are put in place and read back with one move each.
    Returns each lane's old value and each element's last."""
    if int(lanes.max()) <= SHORT_ROWS:
        return _accumulate_by_place(ufunc, dtype, start, v, first, lanes)
    G = start.size
    if G == 1:  # one element: its row holds every lane's old value, then its last
        row = _row(ufunc, dtype, start[0], v)
        return row[:-1], row[-1:]
    seen = np.empty(v.size, dtype)
    final = np.empty(G, dtype)
    long = lanes >= LONG_ROW
    for g in np.flatnonzero(long):  # a hot element: its own row, unpadded
        row = _row(ufunc, dtype, start[g], v[first[g]:first[g] + lanes[g]])
        seen[first[g]:first[g] + lanes[g]] = row[:-1]
        final[g] = row[-1]
    if long.all():  # hot elements only (one counter every lane adds to): no table
        return seen, final
    size = np.ceil(np.log2(lanes + 1)).astype(np.uint8)  # row length 2**size: the value, then the lanes
    size[long] = 0  # no row
    order = np.argsort(size, kind="stable")  # small integers: a radix sort
    count = np.bincount(size, minlength=1)
    width = 1 << np.arange(count.size, dtype=np.int64)
    width[0] = 0
    offset = np.concatenate([[0], np.cumsum(count * width)])  # where each class's table starts
    row = np.empty(G, np.int64)  # each element's row in its class's table
    row[order] = np.arange(G) - np.repeat(np.cumsum(count) - count, count)
    base = offset[size] + row * width[size]  # where each element's row starts
    table = np.zeros(int(offset[-1]), dtype)  # padding is never read, but garbage there could warn
    short = ~long
    table[base[short]] = start[short]
    at = np.repeat(base - first, lanes) + np.arange(v.size) + 1  # each lane's cell: after its element's value
    if long.any():
        mine = np.repeat(short, lanes)
        at, vs = at[mine], v[mine]
    else:
        mine, vs = slice(None), v
    table[at] = vs
    for k in np.flatnonzero(count[1:]) + 1:
        rows = table[offset[k]:offset[k + 1]].reshape(-1, int(width[k]))
        ufunc.accumulate(rows, axis=1, dtype=dtype, out=rows)
    seen[mine] = table[at - 1]
    final[short] = table[base[short] + lanes[short]]
    return seen, final


def _row(ufunc, dtype, start, updates):
    """An element's value ``start`` and then its lanes' ``updates``, accumulated in place."""
    row = np.empty(updates.size + 1, dtype)
    row[0], row[1:] = start, updates
    return ufunc.accumulate(row, dtype=dtype, out=row)


def _compare_and_swap(start, v, cmp, first, lanes):
    """atomicCAS on each element, lane after lane: a lane swaps when the element holds its
    ``compare`` value. Served one swap at a time per element: the lanes up to each element's
    next swapping lane all see its current value, so the rounds are the swaps, not the lanes
    (a lock taken by one of many lanes costs one round)."""
    G = start.size
    if G == 1:
        return _compare_and_swap_one(start, v, cmp)
    group = np.repeat(np.arange(G), lanes)
    rank = np.arange(v.size) - np.repeat(first, lanes)  # each lane's place on its element
    state = start.copy()
    done = np.zeros(G, np.int64)  # lanes of each element served so far
    seen = np.empty(v.size, start.dtype)
    position = np.arange(v.size)
    rounds = 0
    while True:
        waiting = rank >= done[group]
        if not waiting.any():
            return seen, state
        rounds += 1
        if rounds > CAS_ROUNDS:  # a long chain of swaps: the rest lane by lane
            for j in np.flatnonzero(waiting):
                g = group[j]
                seen[j] = state[g]
                if cmp[j] == state[g]:
                    state[g] = v[j]
            return seen, state
        swaps = waiting & (cmp == state[group])
        nxt = np.full(G, np.iinfo(np.int64).max)
        np.minimum.at(nxt, group[swaps], position[swaps])
        served = waiting & (position <= nxt[group])
        seen[served] = state[group[served]]
        swapped = nxt < np.iinfo(np.int64).max
        state[swapped] = v[nxt[swapped]]
        done[:] = np.where(swapped, nxt - first + 1, lanes)


def _compare_and_swap_one(start, v, cmp):
    """``_compare_and_swap`` for lanes that all hit one element (a lock, a CAS loop that
    builds an atomicAdd): from each swap to the next lane whose compare value matches."""
    seen = np.empty(v.size, start.dtype)
    state, p = start[0], 0
    for _ in range(CAS_ROUNDS):
        match = cmp[p:] == state
        q = p + int(match.argmax()) if match.size else p
        if q == v.size or not match[q - p]:  # nobody else swaps
            seen[p:] = state
            return seen, np.array([state], start.dtype)
        seen[p:q + 1] = state
        state, p = v[q], q + 1
    for j in range(p, v.size):  # a long chain of swaps: the rest lane by lane
        seen[j] = state
        if cmp[j] == state:
            state = v[j]
    return seen, np.array([state], start.dtype)
