"""Per-lane traces: what one warp's memory instructions touch, lane by lane.

``launch(kernel, grid, block, args, trace=(block, warp))`` records, for that one warp of that
one block, every global and shared load, store and atomic the warp executes, in program
order, as an :class:`AccessRecord` in ``stats.trace``. A record says which lanes ran, the
byte address of each lane, and what the counters make of it: the 32-byte sectors of a
global access, the wavefronts (groups of lanes served together) and the bank of each lane
of a shared one. ``simtdocs.draw_access(record)`` draws it.

A record is worked out from the lanes' addresses here, one warp and one lane at a time,
not taken from the engine's counting; ``tests/test_trace.py`` checks that, for every
traced warp instruction, its sectors and wavefronts are exactly what the reference engine
counts for that warp.

Addresses: a global address is the byte offset in the array's allocation (allocations
start 256-byte aligned, as ``cudaMalloc`` promises; a view ``a[1:]`` starts 4 bytes in). A
shared address is the byte offset in the ``__shared__`` array, which starts at bank 0.
There is one address per lane, that of the first element it accesses: a vector access
(``width`` > 1) covers ``itemsize × width`` bytes from there, element ``j`` at
``address + j·itemsize``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .diagnostics import LaunchError, Site, name_in_kernel
from .memory import BANKS, SECTOR_BYTES
from .threads import WARP_SIZE

#: Bytes of one shared-memory bank word.
WORD_BYTES = 4
KINDS = {"read": "load", "write": "store", "atomic": "atomic"}


@dataclass(frozen=True)
class AccessRecord:
    """One warp's memory instruction, lane by lane.

    ``lanes`` are the active lanes (0 to 31) in order; ``addresses[i]`` is the byte address
    of lane ``lanes[i]`` (see the module's notes), and the lane reads or writes
    ``lane_bytes`` bytes from there.

    Global memory (``space == "global"``): ``sectors`` are the distinct 32-byte sectors the
    lanes touch (sector ``s`` holds bytes ``32·s`` to ``32·s + 31``), sorted; the warp
    instruction costs ``len(sectors)``, which is what the ``sectors`` counter adds for it.

    Shared memory (``space == "shared"``): ``banks[i]`` is the bank (0 to 31) of the first
    4-byte word of lane ``lanes[i]``; ``wavefronts`` lists the groups of lanes served
    together, in order: within a phase of the warp (all 32 lanes for accesses up to 4
    bytes, half a warp for 8, a quarter for 16), the first wavefront serves the first word
    asked of every bank, the second the second distinct word of every bank that has one,
    and so on (the words of a bank in the order of the lowest lane asking for each). Lanes
    reading the same word are served together (a broadcast). ``served[i]`` gives, for
    each word of lane ``lanes[i]``, the index in ``wavefronts`` that serves it.
    ``len(wavefronts)`` and ``ideal_wavefronts`` are what the ``shared_wavefronts`` and
    ``shared_ideal_wavefronts`` counters add for this warp instruction.
    """

    site: Site
    space: str  # "global" or "shared"
    kind: str  # "load", "store" or "atomic"
    array: str  # the kernel's name for the array
    block: tuple[int, int, int]  # blockIdx of the traced block
    warp: int  # the traced warp of that block
    lanes: tuple[int, ...]
    addresses: tuple[int, ...]
    itemsize: int
    width: int
    sectors: tuple[int, ...] = ()
    wavefronts: tuple[tuple[int, ...], ...] = ()
    banks: tuple[int, ...] = ()
    served: tuple[tuple[int, ...], ...] = ()
    ideal_wavefronts: int = 0

    @property
    def lane_bytes(self) -> int:
        """Bytes each lane moves: ``itemsize × width``."""
        return self.itemsize * self.width

    @property
    def requested_bytes(self) -> int:
        """Active lanes × bytes per lane (the ``requested_bytes`` counter; a byte two lanes
        read counts twice)."""
        return len(self.lanes) * self.lane_bytes

    @property
    def moved_bytes(self) -> int:
        """Bytes the sectors move: 32 per sector (global; 0 for shared)."""
        return SECTOR_BYTES * len(self.sectors)

    @property
    def used_bytes(self) -> int:
        """Distinct bytes some lane asked for (global; 0 for shared)."""
        if self.space != "global":
            return 0
        return len({a + k for a in self.addresses for k in range(self.lane_bytes)})

    @property
    def wasted_bytes(self) -> int:
        """Bytes moved that no lane asked for (global)."""
        return self.moved_bytes - self.used_bytes

    @property
    def coalescing_efficiency(self) -> float:
        """Requested bytes over moved bytes, as the counter of the same name (global)."""
        return self.requested_bytes / self.moved_bytes if self.moved_bytes else 1.0

    @property
    def bank_conflicts(self) -> int:
        """Wavefronts beyond the ideal (shared)."""
        return len(self.wavefronts) - self.ideal_wavefronts

    @property
    def ways(self) -> float:
        """Wavefronts over ideal wavefronts: 32.0 for a 32-way bank conflict (shared)."""
        return len(self.wavefronts) / self.ideal_wavefronts if self.ideal_wavefronts else 0.0

    def words(self, i: int) -> tuple[int, ...]:
        """The 4-byte words (shared memory) that lane ``lanes[i]`` asks for."""
        first = self.addresses[i] // WORD_BYTES
        last = (self.addresses[i] + self.lane_bytes - 1) // WORD_BYTES
        return tuple(range(first, last + 1))

    def __str__(self) -> str:
        head = (f"{self.space} {self.kind} of {self.array} at line {self.site.lineno} ({self.site.source}), "
                f"block {self.block} warp {self.warp}: {len(self.lanes)} lanes × {self.lane_bytes} bytes")
        if self.space == "global":
            return (f"{head}; {len(self.sectors)} sectors {_runs(self.sectors)}, {self.moved_bytes} bytes moved "
                    f"for {self.requested_bytes} requested ({self.wasted_bytes} moved, not requested)")
        return (f"{head}; {len(self.wavefronts)} wavefronts (ideal {self.ideal_wavefronts}), "
                f"banks {_runs(sorted(set(self.banks)))}")


def _runs(values) -> str:
    """[0-3, 8, 10-11]: sorted integers as runs."""
    out, values = [], list(values)
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        out.append(str(values[i]) if i == j else f"{values[i]}-{values[j]}")
        i = j + 1
    return "[" + ", ".join(out) + "]"


# -- the launch's side ------------------------------------------------------------------------


def target(trace, grid: tuple[int, int, int], block: tuple[int, int, int]) -> tuple[int, int] | None:
    """``trace=(block, warp)`` checked against the launch: (linear block id, warp), or None.

    The block is an int (its linear id, x fastest: ``blockIdx.x`` for a 1-D grid) or a
    tuple like ``grid``; the warp is its number in the block (thread ``32·warp`` is its lane 0).
    """
    if trace is None:
        return None
    given = f"trace={trace!r}"

    def whole(v) -> bool:
        return isinstance(v, (int, np.integer)) and not isinstance(v, bool)

    if not isinstance(trace, tuple) or len(trace) != 2:
        raise LaunchError(f"{given}: trace must be a pair (block, warp), the block as an int (its linear id) "
                          f"or a tuple like grid, e.g. trace=(0, 0) for warp 0 of block 0")
    b, w = trace
    blocks = grid[0] * grid[1] * grid[2]
    if whole(b):
        if not 0 <= b < blocks:
            raise LaunchError(f"{given}: there is no block {b}: the grid {grid} has {blocks:,} blocks (0 to {blocks - 1:,})")
        linear = int(b)
    elif isinstance(b, tuple) and 1 <= len(b) <= 3 and all(whole(v) for v in b):
        idx = tuple(int(v) for v in b) + (0,) * (3 - len(b))
        for axis, v, n in zip("xyz", idx, grid):
            if not 0 <= v < n:
                raise LaunchError(f"{given}: there is no block {idx}: blockIdx.{axis} goes from 0 to {n - 1} "
                                  f"in the grid {grid}")
        linear = idx[0] + grid[0] * (idx[1] + grid[1] * idx[2])
    else:
        raise LaunchError(f"{given}: the block must be an int (its linear id) or a tuple of 1 to 3 ints "
                          f"like grid, got {b!r}")
    threads = block[0] * block[1] * block[2]
    warps = -(-threads // WARP_SIZE)
    if not whole(w):
        raise LaunchError(f"{given}: the warp must be an int, its number in the block, got {w!r}")
    if not 0 <= w < warps:
        raise LaunchError(f"{given}: there is no warp {w}: a block of {threads:,} threads has {warps:,} "
                          f"warp{'s' if warps > 1 else ''} (0 to {warps - 1:,})")
    return linear, int(w)


def record(blk, site: Site, kind: str, array, index, mask, width: int) -> None:
    """Append the record of this access by the traced warp, if it is in this pass and runs."""
    L = blk._L
    linear, warp = L.trace
    b = linear - blk.first
    if not 0 <= b < blk.nblocks:
        return
    T = blk.nthreads
    t0, t1 = warp * WARP_SIZE, min(T, (warp + 1) * WARP_SIZE)
    if mask is None:
        lanes = np.arange(t1 - t0)
    else:
        active = np.broadcast_to(np.asarray(mask), (blk.nblocks, T))[b, t0:t1]
        lanes = np.flatnonzero(active)
        if lanes.size == 0:
            return  # the warp does not execute this instruction
    shared = not isinstance(array, np.ndarray)
    shape = array.shape
    parts = index if isinstance(index, tuple) else (index,)
    dims = shape if isinstance(index, tuple) else (int(np.prod(shape)),)
    flat = np.zeros(t1 - t0, np.int64)
    for i, n in zip(parts, dims):  # row-major, as C lays out array[r][c]
        flat = flat * n + np.broadcast_to(np.asarray(i), (blk.nblocks, T))[b, t0:t1].astype(np.int64)
    flat = [int(f) for f in flat[lanes]]
    itemsize = array.dtype.itemsize
    lane_list = tuple(int(x) for x in lanes)
    common = dict(site=site, kind=KINDS[kind], block=blk._geo.block(linear), warp=warp, lanes=lane_list,
                  itemsize=itemsize, width=width)
    if shared:
        addresses = tuple(f * itemsize for f in flat)
        wavefronts, served, ideal = _shared(lane_list, addresses, itemsize * width)
        rec = AccessRecord(space="shared", array=array.name, addresses=addresses, wavefronts=wavefronts,
                           served=served, ideal_wavefronts=ideal,
                           banks=tuple(a // WORD_BYTES % BANKS for a in addresses), **common)
    else:
        from .arguments import byte_offset

        base = byte_offset(array)
        addresses = tuple(base + f * itemsize for f in flat)
        rec = AccessRecord(space="global", array=name_in_kernel(array, site), addresses=addresses,
                           sectors=tuple(sorted({a // SECTOR_BYTES for a in addresses})), **common)
    L.stats.trace.append(rec)


def _shared(lanes, addresses, lane_bytes):
    """(wavefronts, served, ideal) of one warp's shared access: see ``AccessRecord``."""
    per_phase = WARP_SIZE if lane_bytes <= WORD_BYTES else 4 * WARP_SIZE // lane_bytes
    words = [tuple(range(a // WORD_BYTES, (a + lane_bytes - 1) // WORD_BYTES + 1)) for a in addresses]
    groups: list[set] = []
    served = [()] * len(lanes)
    ideal = 0
    for phase in sorted({lane // per_phase for lane in lanes}):
        mine = [i for i, lane in enumerate(lanes) if lane // per_phase == phase]
        order: dict[int, list[int]] = {}  # bank -> its distinct words, in the order of the first lane asking
        for i in mine:
            for w in words[i]:
                in_bank = order.setdefault(w % BANKS, [])
                if w not in in_bank:
                    in_bank.append(w)
        first = len(groups)
        groups.extend(set() for _i in range(max(len(v) for v in order.values())))
        for i in mine:
            rounds = tuple(first + order[w % BANKS].index(w) for w in words[i])
            served[i] = rounds
            for r in rounds:
                groups[r].add(lanes[i])
        ideal += -(-sum(len(v) for v in order.values()) // WARP_SIZE)
    return tuple(tuple(sorted(g)) for g in groups), tuple(served), ideal
