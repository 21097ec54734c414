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

OPS = ("add", "max", "min", "exch", "cas", "and", "or", "xor", "inc", "dec")


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
    if op in _UFUNCS:  # and, or, xor
        return _UFUNCS[op](old, value)
    if op == "inc":  # CUDA's atomicInc: ((old >= val) ? 0 : (old + 1))
        return np.where(old >= value, np.zeros_like(old), old + np.ones_like(old))
    if op == "dec":  # CUDA's atomicDec: (((old == 0) || (old > val)) ? val : (old - 1))
        return np.where((old == 0) | (old > value), value, old - np.ones_like(old))
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
    if op in _UFUNCS:
        ufunc = _UFUNCS[op]
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
    found = PerBlock(elements, size, active)
    return found.lanes(), found.keys()


class PerBlock:
    """The running lanes of one atomic on shared memory, (B, T) lanes each updating its own
    block's copy of an array of ``size`` elements, sorted by (block, element, lane): the
    order in which :func:`apply_per_block` serves them (every element's lanes in serial
    order), and where both counters of the instruction can be read off.

    Each lane is one packed unsigned integer, block, then element, then lane within the
    block, so the sort is one short sort per block row (a block's bits are the same along
    its row) and the packed value itself tells the groups apart: a lane starts an element's
    group where the value shifted past the lane bits changes, and a warp's group of one
    element where the value shifted past the lane's low five bits (the lane within the
    warp) changes. An idle lane packs to all ones and sorts to the end of its row."""

    def __init__(self, elements: np.ndarray, size: int, active: np.ndarray | None = None):
        B, T = elements.shape
        self.B, self.T, self.size = B, T, size
        self.lane_bits = max(1, (T - 1).bit_length())
        self.element_bits = max(1, (size - 1).bit_length())
        total = (B - 1).bit_length() + self.element_bits + self.lane_bits
        if total >= 64:
            raise ValueError(f"{B} blocks of {T} lanes on {size} elements do not pack into 64 bits")
        wide = np.uint32 if total < 32 else np.uint64  # below: all ones is no lane's value
        self.wide = wide
        packed = np.arange(B, dtype=wide)[:, None] << wide(self.element_bits)
        packed = (packed + elements.astype(wide)) << wide(self.lane_bits)
        packed |= np.arange(T, dtype=wide)
        if active is not None:
            packed |= idle_ones(active, wide)
        packed.sort(axis=1)
        flat = packed.reshape(-1)
        #: The packed lanes that run, sorted, block after block (1-D).
        self.packed = flat if active is None else flat[flat != np.iinfo(wide).max]

    def heads(self) -> np.ndarray:
        """Where each (block, element) group starts in the sorted lanes."""
        group = self.packed >> self.wide(self.lane_bits)
        head = np.empty(group.size, bool)
        head[:1] = True
        np.not_equal(group[1:], group[:-1], out=head[1:])
        return np.flatnonzero(head)

    # What follows is worked out when asked, not kept: racecheck may hold on to a pass's
    # atomics until the next barrier, and their packed lanes are a quarter of it.

    def lane(self) -> np.ndarray:
        """Each sorted lane's thread in its block (int64)."""
        return (self.packed & self.wide((1 << self.lane_bits) - 1)).astype(np.int64)

    def block(self) -> np.ndarray:
        """Each sorted lane's block of the pass (int64)."""
        return (self.packed >> self.wide(self.element_bits + self.lane_bits)).astype(np.int64)

    def lanes(self, lane: np.ndarray | None = None) -> np.ndarray:
        """Each sorted lane's number in the pass (block·T + thread); ``lane``: ``self.lane()``."""
        return self.block() * self.T + (self.lane() if lane is None else lane)

    def keys(self) -> np.ndarray:
        """Each sorted lane's element in the flat memory of every block (block·size + element)."""
        return self.block() * self.size + self._element(self.packed)

    def _element(self, packed: np.ndarray) -> np.ndarray:
        return ((packed >> self.wide(self.lane_bits)) & self.wide((1 << self.element_bits) - 1)).astype(np.int64)

    def head_keys(self, heads: np.ndarray) -> np.ndarray:
        """The key (block·size + element) of each group (``heads``: ``self.heads()``)."""
        p = self.packed[heads]
        return (p >> self.wide(self.element_bits + self.lane_bits)).astype(np.int64) * self.size + self._element(p)

    def _warp_heads(self) -> np.ndarray:
        """The sorted lanes that start a warp's lanes on one element (its first lane there)."""
        shift = self.wide(min(5, self.lane_bits))  # a block under 32 lanes is one warp
        key = self.packed >> shift
        head = np.empty(key.size, bool)
        head[:1] = True
        np.not_equal(key[1:], key[:-1], out=head[1:])
        return self.packed[head]

    def distinct_per_warp(self) -> int:
        """Distinct elements per warp, summed (``memory.distinct_per_warp``)."""
        return int(self._warp_heads().size)

    def counters(self) -> tuple[int, int]:
        """(distinct elements per warp, summed; shared wavefronts) of the instruction, for
        4-byte elements, one per bank word: a warp's wavefronts are the most distinct words
        it asks of one bank (``memory.wavefronts``), each element a word."""
        first = self._warp_heads()
        lane = first & self.wide((1 << self.lane_bits) - 1)
        warps = -(-self.T // 32)
        bank = self._element(first) & 31
        row = ((first >> self.wide(self.element_bits + self.lane_bits)).astype(np.int64) * warps
               + (lane >> self.wide(5)).astype(np.int64))
        per_bank = np.bincount(row * 32 + bank, minlength=self.B * warps * 32)
        return int(first.size), int(per_bank.reshape(-1, 32).max(axis=1).sum())


def apply_per_block(mem: np.ndarray, found: PerBlock, values, op: str, compare=None) -> np.ndarray:
    """:func:`apply` for the lanes of ``found`` on the flat memory ``mem`` of every block
    (block·size + element): ``values`` (and for ``cas`` ``compare``) per lane, (B, T), or
    (1, T) for the same row in every block. Returns the old values (B·T,) in lane order,
    0 on the lanes that do not run."""
    m = found.packed.size
    old = np.zeros(found.B * found.T, mem.dtype)
    if m == 0:
        return old

    lane = found.lane()
    lanes = found.lanes(lane)

    def sorted_(x):  # the lanes' values in sorted order
        x = np.asarray(x, dtype=mem.dtype)
        if x.ndim == 0:
            return np.full(m, x)
        if x.shape[0] == 1 or not x.strides[0]:  # one row for every block
            return x.reshape(x.shape[0], -1)[0][lane]
        return x.reshape(-1)[lanes]

    first = found.heads()
    last = np.append(first[1:] - 1, m - 1)
    seen = _by_element(mem, found.head_keys(first), sorted_(values), first, last, op,
                       None if compare is None else sorted_(compare))
    old[lanes] = seen
    return old


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
    if at.size == v.size:  # one lane on each element: nothing to serialise
        seen = mem[at]
        mem[at] = _combine(op, seen, v, cmp)
        return seen
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
        elif op in ("inc", "dec"):
            seen, final = _by_place(op, mem[at], v, first, lanes)
        else:
            seen, final = _accumulate(_UFUNCS[op], mem.dtype, mem[at], v, first, lanes)
        mem[at] = final
    return seen


_UFUNCS = {"add": np.add, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or,
           "xor": np.bitwise_xor}


def _by_place(op, start, v, first, lanes):
    """The old values of the lanes grouped by element for an operation that is no ufunc's
    accumulation (``inc``, ``dec``: each step depends on the old value and the lane's own
    bound): one numpy step per place in the elements' rows, every element at once."""
    if v.size > SHORT_ROWS and (v == v[0]).all() and start.dtype.kind in "iu":
        return _wrapping_counter(op, start, v[0], first, lanes)
    seen = np.empty(v.size, dtype=start.dtype)
    cur = start.copy()
    for p in range(int(lanes.max()) if lanes.size else 0):
        rows = np.flatnonzero(lanes > p)
        at = first[rows] + p
        seen[at] = cur[rows]
        cur[rows] = _combine(op, cur[rows], v[at], None)
    return seen, cur


def _wrapping_counter(op, start, bound, first, lanes):
    """``inc``/``dec`` with one bound ``m`` for every lane (a ring buffer's index): a counter
    that cycles through 0..m, so lane j of an element sees its value j steps on, in closed form
    (``inc`` from s <= m: (s + j) mod (m + 1); from s > m: s, then 0, 1, …; ``dec`` the mirror)."""
    m = np.uint64(bound) if np.asarray(bound).dtype.kind == "u" else np.uint64(max(int(bound), 0))
    period = np.uint64(int(m) + 1)
    j = (np.arange(int(lanes.sum()), dtype=np.uint64) - np.repeat(first, lanes).astype(np.uint64))  # step in its row
    s = np.repeat(start, lanes).astype(np.int64)
    big = s.astype(np.uint64) > m if start.dtype.kind == "u" else (s < 0) | (s.astype(np.uint64) > m)
    su = s.astype(np.uint64)
    if op == "inc":
        regular = (su + j) % period
        after = (j - np.uint64(1)) % period  # from above the bound: s, then 0, 1, …
    else:
        regular = (su + period - j % period) % period  # s, s - 1, …, 0, m, …
        after = (m + period - (j - np.uint64(1)) % period) % period  # s, then m, m - 1, …
    seen = np.where(big, np.where(j == 0, su, after), regular).astype(start.dtype)
    steps = lanes.astype(np.uint64)
    s0 = start.astype(np.int64).astype(np.uint64)
    big0 = s0 > m if start.dtype.kind == "u" else (start.astype(np.int64) < 0) | (s0 > m)
    if op == "inc":
        final = np.where(big0, (steps - np.uint64(1)) % period, (s0 + steps) % period)
    else:
        final = np.where(big0, (m + period - (steps - np.uint64(1)) % period) % period,
                         (s0 + period - steps % period) % period)
    return seen, final.astype(start.dtype)


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
