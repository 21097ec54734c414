"""The reference engine's memory instructions: global and shared loads, stores and atomics,
one warp and one lane at a time, with the counters they add and the checks they make."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import diagnostics
from ..diagnostics import RACE_PAIRS, LaunchError, Race, index_text, name_in_kernel
from ..promotion import promoted

WARP = 32
STATIC_SHARED_LIMIT = 48 * 1024  # nvcc refuses more static __shared__ per block
LANE_BYTES = (1, 2, 4, 8, 16)  # what one thread can move in one instruction
MANY_WARPS = "many warps"


class Shared:
    """One block's ``__shared__`` array, zero-filled, plus what the checks remember.

    ``written``: elements some thread of the block wrote (initcheck). For the race check,
    since the block's last barrier: ``readers``/``writers``/``updaters`` map an element to
    the set of warps that read/wrote/atomically updated it, ``last_read``/``last_write``/
    ``last_atomic`` to the site of the latest one.
    """

    def __init__(self, name, shape, dtype, dynamic):
        self.name, self.shape, self.dtype, self.dynamic = name, shape, dtype, dynamic
        self.size = int(np.prod(shape))
        self.data = np.zeros(self.size, dtype)
        self.written: set[int] = set()
        self.new_phase()

    def new_phase(self) -> None:
        """Forget who read and wrote what: called at every barrier of the block."""
        self.readers, self.writers, self.last_read, self.last_write = {}, {}, {}, {}
        self.updaters, self.last_atomic = {}, {}
        # Inside a warp: the latest write's (warp, lane) and the (warp, {lanes}) that read an
        # element (MANY_WARPS once a second warp reads it: a write is then a hazard between
        # warps anyway), and the same for atomics, until a syncwarp of those lanes orders them.
        self.lane_writes: dict[int, tuple[int, int]] = {}
        self.lane_reads: dict[int, tuple[int, set] | str] = {}
        self.lane_atomics: dict[int, tuple[int, set] | str] = {}

    def syncwarp(self, w: int, lanes: set) -> None:
        """``lanes`` of warp ``w`` passed a ``__syncwarp``: their accesses so far are ordered."""
        for e, (warp, lane) in list(self.lane_writes.items()):
            if warp == w and lane in lanes:
                del self.lane_writes[e]
        for table in (self.lane_reads, self.lane_atomics):
            for e, readers in list(table.items()):
                if readers != MANY_WARPS and readers[0] == w:
                    readers[1].difference_update(lanes)
                    if not readers[1]:
                        del table[e]


def _lowest_other_lane(readers, w: int, lane: int):
    """Of ``(warp, {lanes})`` (or None, or MANY_WARPS): the lowest lane other than ``lane``, when the warp is ``w``."""
    if readers is None or readers == MANY_WARPS or readers[0] != w:
        return None
    others = readers[1] - {lane}
    return min(others) if others else None


def byte_offset(array: np.ndarray) -> int:
    """Where ``array`` starts inside the allocation that owns its memory (0 for an owner;
    4 for ``a[1:]`` of float32). Allocations themselves start 256-byte aligned."""
    owner = array
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return array.__array_interface__["data"][0] - owner.__array_interface__["data"][0]


def _writable(array: np.ndarray) -> np.ndarray:
    """A writable alias of a kernel argument (the kernel itself only sees read-only views)."""
    alias = array.view()
    alias.flags.writeable = True
    return alias.reshape(-1)


class MemoryInstructions:
    """The memory methods of the reference ``Block`` (see :mod:`simtdocs.reference.block`)."""

    def _flat(self, array, index, active, site, width, verb):
        """Flat element index of every active thread (each axis checked, then the end), and
        the threads out of bounds, which move no data (memcheck off; on, the lowest such
        thread raises, named on the first axis where it is outside)."""
        shared = isinstance(array, Shared)
        shape = array.shape
        axes = index if isinstance(index, tuple) else (index,)
        if isinstance(index, tuple) and len(index) != len(shape):
            raise IndexError(f"{site}: {len(index)} indices for an array of {len(shape)} dimensions")
        values = [self._per_thread(i, site, "index") for i in axes]
        for v in values:
            if v.dtype.kind not in "iu":
                raise TypeError(f"{site}: index must be an integer array, got dtype {v.dtype}")
        threads = [t for t in range(self.nthreads) if active[t]]
        size = int(np.prod(shape))
        parts = {t: [int(v[t]) for v in values] for t in threads}  # Python ints: no overflow
        flat = {}
        for t in threads:
            f = 0
            for p, n in zip(parts[t], shape if isinstance(index, tuple) else (size,)):
                f = f * n + p
            flat[t] = f
        # Every thread outside on some axis, with the first such axis; then, when none is,
        # the threads whose width elements run past the end.
        bad = {}
        if isinstance(index, tuple):
            for t in threads:
                axis = next((k for k, n in enumerate(shape) if not 0 <= parts[t][k] < n), None)
                if axis is not None:
                    bad[t] = axis
        if not bad and (isinstance(index, tuple) and width > 1 or not isinstance(index, tuple)):
            bad = {t: None for t in threads if not 0 <= flat[t] < size - (width - 1)}
        if bad and "memcheck" in self._L.tools:
            self._out_of_bounds(array, shape, values, parts, flat, bad, site, width, verb, isinstance(index, tuple))
        out = set(bad)
        lane_bytes = array.dtype.itemsize * width
        base = 0 if shared else byte_offset(array)
        for t, f in flat.items():
            if (base + f * array.dtype.itemsize) % lane_bytes:
                where = (f"__shared__ access at element {f} of {array.name} (not a multiple of {width})" if shared else
                         f"access at byte {base + f * array.dtype.itemsize} of the allocation (not a multiple of {lane_bytes})")
                raise diagnostics.misaligned(lane_bytes, where, site, self._thread(t), self._block)
        return flat, out

    def _out_of_bounds(self, array, shape, values, parts, flat, bad, site, width, verb, is_tuple):
        """memcheck: the lowest thread out of bounds raises; the error lists the threads out
        of bounds on the same axis, and the elements they reach."""
        shared = isinstance(array, Shared)
        name = array.name if shared else name_in_kernel(array, site)
        t = min(bad)
        axis = bad[t]
        if axis is None:
            same = sorted(bad)
        else:  # every thread outside on this axis, whichever axis it is outside on first
            same = sorted(u for u in bad if not 0 <= parts[u][axis] < shape[axis])
        if axis is None and not is_tuple:
            value = flat[t]
            what = diagnostics.outside(name, shape, None, value, values[0].dtype)
            lo, hi = min(flat[u] for u in same), max(flat[u] for u in same)
            first, last = diagnostics.element(name, [lo]), diagnostics.element(name, [hi])
        else:
            first, last = diagnostics.element(name, parts[same[0]]), diagnostics.element(name, parts[same[-1]])
            if axis is None:
                value, what = flat[t], diagnostics.outside(name, shape, None, flat[t])
            else:
                value = parts[t][axis]
                what = diagnostics.outside(name, shape, axis, value, values[axis].dtype)
        touched = first if first == last else f"{first}…{last}"
        raise diagnostics.out_of_bounds("__shared__" if shared else "__global__", verb, array.dtype.itemsize * width,
                                        site, self._thread(t), self._block, value, what, same, touched)

    def _check_array(self, array, width, site):
        if not isinstance(width, (int, np.integer)) or width < 1:
            raise ValueError(f"{site}: width must be a positive integer")
        if not isinstance(array, Shared):
            if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
                raise diagnostics.not_global_array(array, site)
        lane_bytes = array.dtype.itemsize * width
        if lane_bytes not in LANE_BYTES:
            raise ValueError(f"{site}: a thread can move 1, 2, 4, 8 or 16 bytes at once, not {lane_bytes}")
        return lane_bytes

    def _count_global(self, c, array, flat, lanes, lane_bytes) -> None:
        """requests (l1tex__t_requests_pipe_lsu_mem_global), sectors (l1tex__t_sectors_…):
        the distinct 32-byte sectors the warp's active lanes touch; requested_bytes."""
        base = byte_offset(array)
        c.requests += 1
        c.sectors += len({(base + flat[t] * array.dtype.itemsize) // 32 for t in lanes})
        c.requested_bytes += len(lanes) * lane_bytes

    @staticmethod
    def _count_shared(c, array, flat, lanes, lane_bytes) -> None:
        """shared_requests (smsp__inst_executed_op_shared_*) and, per phase of the warp
        (32 lanes for <= 4 bytes a lane, 16 for 8, 8 for 16), shared_wavefronts
        (l1tex__data_pipe_lsu_wavefronts_mem_shared): the most distinct 4-byte words any one
        of the 32 banks must deliver (the same word to many lanes is a broadcast), and
        shared_ideal_wavefronts (source view "L1 Wavefronts Shared Ideal"): the distinct
        words over 32, rounded up. Bank conflicts are the difference."""
        c.shared_requests += 1
        per_phase = WARP if lane_bytes <= 4 else 128 // lane_bytes
        phases: dict[int, set] = {}
        for t in lanes:
            first = flat[t] * array.dtype.itemsize
            words = range(first // 4, (first + lane_bytes - 1) // 4 + 1)
            phases.setdefault(t % WARP // per_phase, set()).update(words)
        for words in phases.values():
            banks: dict[int, int] = {}
            for word in words:
                banks[word % 32] = banks.get(word % 32, 0) + 1
            c.shared_wavefronts += max(banks.values())
            c.shared_ideal_wavefronts += -(-len(words) // 32)

    # -- memory ------------------------------------------------------------------------------

    def shared(self, shape, dtype=np.float32, name: str = "shared", dynamic: bool = False) -> Shared:
        """Declare a ``__shared__`` array of this block (``extern __shared__`` if ``dynamic``).

        Static arrays add up to at most 48 KB (nvcc's limit); dynamic ones are carved out
        of ``launch(shared_bytes=...)``; static + dynamic above 48 KB needs
        ``launch(max_dynamic_shared_bytes=...)``. Counts nothing.
        """
        self._site()
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
        s = Shared(name, shape, np.dtype(dtype), dynamic)
        nbytes = s.size * s.dtype.itemsize
        L = self._L
        if dynamic:
            self._dynamic += nbytes
            if self._dynamic > L.shared_bytes:
                raise LaunchError(
                    f"cudaErrorInvalidValue: {L.kernel}'s dynamic shared arrays need {self._dynamic:,} bytes "
                    f"per block, but the launch gave shared_bytes={L.shared_bytes:,}")
        else:
            self._static += nbytes
            if self._static > STATIC_SHARED_LIMIT:
                raise LaunchError(
                    f"{L.kernel} declares {self._static:,} bytes of static __shared__ memory per block; "
                    f"nvcc accepts at most {STATIC_SHARED_LIMIT:,} (48 KB). Make the large array dynamic: "
                    f"blk.shared(..., dynamic=True) with launch(shared_bytes=..., max_dynamic_shared_bytes=...)")
        # cudaFuncAttributeMaxDynamicSharedMemorySize: 48 KB − static unless raised, and at
        # most what the device allows a block beside the static arrays.
        total = self._static + (L.shared_bytes if L.max_dynamic is None else L.max_dynamic)
        limit = STATIC_SHARED_LIMIT if L.max_dynamic is None else L.device.max_shared_per_block
        if total > limit:
            raise LaunchError(
                f"cudaErrorInvalidValue: {L.kernel} uses {total:,} bytes of shared memory per block "
                f"({self._static:,} static + {total - self._static:,} dynamic); " + (
                    f"without max_dynamic_shared_bytes= a block may use {limit:,}" if L.max_dynamic is None else
                    f"{L.device.name} allows {limit:,}"))
        self._shared.append(s)
        return s

    def load(self, array, index, mask=None, width: int = 1):
        """Each active thread reads ``array[index]`` (``width`` elements from there, e.g. a
        float4); inactive threads get 0. Global: see ``_count_global``; shared: see
        ``_count_shared``, plus initcheck and the race check."""
        return self._access("read", self._site(), array, index, mask, width, None)

    def store(self, array, index, value, mask=None, width: int = 1) -> None:
        """Each active thread writes ``value`` to ``array[index]``; lanes in order, so of two
        lanes writing one element the later (lane, warp, block) wins. Counts as ``load``."""
        self._access("write", self._site(), array, index, mask, width, value)

    def _access(self, kind, site, array, index, mask, width=1, value=None, update=None, compare=None):
        """A load (``kind="read"``), store or atomic. Per warp with an active lane: one
        instruction, and the counters of ``_count_global`` or ``_count_shared``; for atomics
        also atomics (l1tex__t_requests_…_op_atom, smsp__inst_executed_op_shared_atom) and
        atomic_conflicts = active lanes − distinct elements (the lanes the hardware serialises).
        Then the lanes in order move their data."""
        lane_bytes = self._check_array(array, width, site)
        active = self._active(mask, site)
        flat, dropped = self._flat(array, index, active, site, width, kind)
        shared = isinstance(array, Shared)
        tools = self._L.tools
        mem = array.data if shared else (array.reshape(-1) if kind == "read" else _writable(array))
        exchange = update is _exchange and shared and "initcheck" in tools and getattr(self, "tracks_undefined", False)
        if kind in ("read", "atomic") and shared and "initcheck" in tools and not exchange:  # an atomic reads the old value
            for t, f in flat.items():
                unwritten = [e for e in range(f, f + width) if e not in array.written]
                if unwritten and t not in dropped:
                    raise diagnostics.uninitialized(lane_bytes, site, self._thread(t), self._block,
                                                    array.name + index_text(unwritten[0], array.shape),
                                                    atomic=kind == "atomic")
        extra = (width,) if width > 1 else ()
        out = np.zeros((1, self.nthreads) + extra, array.dtype)
        if kind != "read":
            values = self._per_thread(np.asarray(value, dtype=array.dtype), site, "value", extra)
        if compare is not None:
            compare = self._per_thread(np.asarray(compare, dtype=array.dtype), site, "compare")
        c = self._counters(site)
        found = {}
        for w, lanes in self._warps(active):
            self._issue(c, lanes)
            if kind == "atomic":
                c.atomics += 1
                c.atomic_conflicts += len(lanes) - len({flat[t] for t in lanes})
            if shared:
                self._count_shared(c, array, flat, lanes, lane_bytes)
                if "racecheck" in tools:
                    self._races(kind, site, array, flat, w, [t for t in lanes if t not in dropped], width, found)
            else:
                self._count_global(c, array, flat, lanes, lane_bytes)
            for t in lanes:
                if t in dropped:
                    continue
                f = flat[t]
                if kind == "read":
                    out[0, t] = mem[f:f + width] if width > 1 else mem[f]
                elif kind == "write":
                    mem[f:f + width] = values[t]
                else:
                    cell = mem[f:f + 1]  # a 1-element array: integer arithmetic wraps as on the GPU
                    out[0, t] = cell[0]
                    if exchange and f not in array.written:  # atomicExch's old value nobody wrote: undefined
                        if getattr(self, "undefined_old", None) is None:
                            self.undefined_old = np.zeros((1, self.nthreads), bool)
                        self.undefined_old[0, t] = True
                    cell[:] = update(cell, values[t:t + 1], None if compare is None else compare[t])
                if shared and kind != "read":
                    array.written.update(range(f, f + width))
        self._record(found)
        return None if kind == "write" else promoted(out)

    def _races(self, kind, site, s: Shared, flat, w, lanes, width, found) -> None:
        """racecheck: warp ``w``'s lanes checked together against what touched the same
        elements earlier in this barrier phase, then ``w`` joins the readers, writers or
        updaters (``kind`` "atomic").

        Between warps: any other warp that read, wrote or atomically updated the element
        (earlier warps of this very instruction included). Inside the warp: another lane of
        ``w`` whose access no ``syncwarp`` has ordered yet (``lane_writes``, ``lane_reads``,
        ``lane_atomics``; lanes of this same instruction are not checked against each
        other). An atomic meets plain reads and writes only, and a plain access meets
        atomics besides plain accesses. ``found`` keeps, per access pair (``RACE_PAIRS``),
        the first lane (lowest thread) of the instruction that has one, named between warps
        when it has both, with the count of racing element accesses and of those that race
        another warp."""
        checks = {  # (pair, the other accesses' warps, their latest site, their lanes in this warp)
            "read": [(0, s.writers, s.last_write, self._lane_writer), (3, s.updaters, s.last_atomic, self._lane_updater)],
            "write": [(1, s.readers, s.last_read, self._lane_reader), (2, s.writers, s.last_write, self._lane_writer),
                      (4, s.updaters, s.last_atomic, self._lane_updater)],
            "atomic": [(5, s.readers, s.last_read, self._lane_reader), (6, s.writers, s.last_write, self._lane_writer)],
        }[kind]
        for t in lanes:
            lane = t % WARP
            for e in range(flat[t], flat[t] + width):
                for pair, table, last, lane_of in checks:
                    others = table.get(e, set()) - {w}
                    other = None if others else lane_of(s, e, w, lane)
                    if not others and other is None:
                        continue
                    first, hazards, across = found.get(pair, (None, 0, 0))
                    if first is None:
                        hazard, atomic, other_atomic = RACE_PAIRS[pair]
                        who = (min(others), None, None) if others else (w, lane, other)
                        first = Race(hazard, self._block, w, who[0], s.name, e, site, index_text(e, s.shape), last[e],
                                     who[1], who[2], atomic, other_atomic)
                    found[pair] = (first, hazards + 1, across + bool(others))
        table, last, lanes_of = {"read": (s.readers, s.last_read, s.lane_reads),
                                 "write": (s.writers, s.last_write, None),
                                 "atomic": (s.updaters, s.last_atomic, s.lane_atomics)}[kind]
        for t in lanes:
            for e in range(flat[t], flat[t] + width):
                table.setdefault(e, set()).add(w)
                last[e] = site
                if kind == "write":
                    s.lane_writes[e] = (w, t % WARP)  # the later lane of the instruction stays
                else:
                    readers = lanes_of.get(e)
                    if readers is None:
                        lanes_of[e] = (w, {t % WARP})
                    elif readers != MANY_WARPS and readers[0] == w:
                        readers[1].add(t % WARP)
                    else:
                        lanes_of[e] = MANY_WARPS

    @staticmethod
    def _lane_writer(s: Shared, e: int, w: int, lane: int):
        """The other lane of warp ``w`` whose write of ``e`` no ``syncwarp`` has ordered (the latest)."""
        writer = s.lane_writes.get(e)
        return writer[1] if writer is not None and writer[0] == w and writer[1] != lane else None

    @staticmethod
    def _lane_reader(s: Shared, e: int, w: int, lane: int):
        """The lowest other lane of warp ``w`` whose read of ``e`` no ``syncwarp`` has ordered."""
        return _lowest_other_lane(s.lane_reads.get(e), w, lane)

    @staticmethod
    def _lane_updater(s: Shared, e: int, w: int, lane: int):
        """The lowest other lane of warp ``w`` whose atomic on ``e`` no ``syncwarp`` has ordered."""
        return _lowest_other_lane(s.lane_atomics.get(e), w, lane)

    def _record(self, found) -> None:
        for pair in range(len(RACE_PAIRS)):
            if pair in found:
                first, hazards, across = found[pair]
                self._L.stats.races.append(replace(first, hazards=hazards, across_warps=across))

    # -- atomics -----------------------------------------------------------------------------

    def atomic_add(self, array, index, value, mask=None):
        """``atomicAdd``: returns each thread's old value (0 for inactive threads)."""
        return self._access("atomic", self._site(), array, index, mask, 1, value, lambda old, v, _: old + v)

    def atomic_max(self, array, index, value, mask=None):
        """``atomicMax``: see ``atomic_add``."""
        return self._access("atomic", self._site(), array, index, mask, 1, value, lambda old, v, _: np.maximum(old, v))

    def atomic_min(self, array, index, value, mask=None):
        """``atomicMin``: see ``atomic_add``."""
        return self._access("atomic", self._site(), array, index, mask, 1, value, lambda old, v, _: np.minimum(old, v))

    def atomic_exch(self, array, index, value, mask=None):
        """``atomicExch``: see ``atomic_add``."""
        return self._access("atomic", self._site(), array, index, mask, 1, value, _exchange)

    def atomic_cas(self, array, index, compare, value, mask=None):
        """``atomicCAS``: writes ``value`` where the old value equals ``compare``."""
        return self._access("atomic", self._site(), array, index, mask, 1, value,
                            lambda old, v, cmp: v if old == cmp else old, compare)

    def atomic_and(self, array, index, value, mask=None):
        """``atomicAnd``: see ``atomic_add``."""
        return self._access("atomic", self._site(), array, index, mask, 1, value, lambda old, v, _: old & v)

    def atomic_or(self, array, index, value, mask=None):
        """``atomicOr``: see ``atomic_add``."""
        return self._access("atomic", self._site(), array, index, mask, 1, value, lambda old, v, _: old | v)

    def atomic_xor(self, array, index, value, mask=None):
        """``atomicXor``: see ``atomic_add``."""
        return self._access("atomic", self._site(), array, index, mask, 1, value, lambda old, v, _: old ^ v)

    def atomic_inc(self, array, index, value, mask=None):
        """``atomicInc``: ``(old >= value) ? 0 : old + 1`` (CUDA's definition)."""
        return self._access("atomic", self._site(), array, index, mask, 1, value,
                            lambda old, v, _: np.where(old >= v, 0, old + 1).astype(old.dtype))

    def atomic_dec(self, array, index, value, mask=None):
        """``atomicDec``: ``(old == 0 || old > value) ? value : old - 1`` (CUDA's definition)."""
        return self._access("atomic", self._site(), array, index, mask, 1, value,
                            lambda old, v, _: np.where((old == 0) | (old > v), v, old - 1).astype(old.dtype))

    # -- control -----------------------------------------------------------------------------


def _exchange(old, value, _):
    """``atomicExch``'s update. Its new value does not read the old one, so under initcheck, in
    a compiled kernel (``tracks_undefined``), an element no thread wrote is not an error: the
    lanes that get such an old value are marked in ``undefined_old`` (the per-thread compiler's
    undefined value, ``cuda.runtime.u_exch``). In the blk API it stays an initcheck error."""
    return value
