"""The programming model: ``launch`` a kernel over a grid of blocks of threads.

A kernel is a Python function ``kernel(blk, *args)`` written the way CUDA writes one:
"what does one thread do". ``blk`` hands it per-thread index arrays, so one Python
statement runs for every thread of the block at once, the way one warp instruction runs
for 32 lanes. ``if`` becomes a boolean mask; memory goes through ``blk.load`` and
``blk.store`` so the simulator can count sectors, wavefronts and hazards.

To be fast, ``blk`` stands for a *batch* of blocks: thread-indexed values have shape
(blocks in the batch, threads per block), ``blk.tx`` has shape (1, threads) and ``blk.bx``
(blocks, 1), and numpy broadcasting does the rest. Blocks are independent in CUDA, so a
kernel that is correct on hardware gives the same answer batched. A kernel that branches
in Python on a block index (``if blk.bx == 0:``) needs ``launch(..., blocks_per_pass=1)``.
"""

from __future__ import annotations

import functools
import linecache
import sys
import traceback
from dataclasses import dataclass, field

import numpy as np

from .counters import Counters, Stats
from .devices import H100, Device
from .diagnostics import (
    InitcheckError,
    LaunchError,
    MemcheckError,
    Race,
    SimulatorError,
    Site,
    SynccheckError,
    fmt3,
    span,
)
from .memory import count_sectors, count_wavefronts

#: Threads simulated in one numpy pass; bounds the memory of a pass, not the result.
THREADS_PER_PASS = 1 << 22



def cdiv(a: int, b: int) -> int:
    """Ceiling division ⌈a / b⌉: the number of blocks of size ``b`` that cover ``a`` items."""
    return -(-a // b)


def _dims(name: str, dims) -> tuple[int, int, int]:
    if isinstance(dims, (int, np.integer)):
        dims = (dims,)
    dims = tuple(dims)
    if not 1 <= len(dims) <= 3:
        raise LaunchError(f"cudaErrorInvalidConfiguration: {name} must have 1 to 3 dimensions, got {dims}")
    for axis, d in zip("xyz", dims):
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
            raise LaunchError(f"cudaErrorInvalidConfiguration: {name}.{axis} must be an integer, got {d!r}")
        if d <= 0:
            raise LaunchError(f"cudaErrorInvalidConfiguration: {name}.{axis} = {d}; every dimension must be at least 1")
    return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))


def _check_limits(name: str, dims, limits) -> None:
    for axis, d, limit in zip("xyz", dims, limits):
        if d > limit:
            raise LaunchError(f"cudaErrorInvalidConfiguration: {name}.{axis} = {d} exceeds the device limit {limit}")


@dataclass
class Shared:
    """A ``__shared__`` array: one copy per block, read and written with ``blk.load/store``.

    Besides the data it keeps, per 4-byte word, which warps wrote and read it in the current
    barrier phase (for the race check) and whether anyone ever wrote it (for initcheck).
    """

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    data: np.ndarray  # (blocks in the pass, elements)
    written: np.ndarray  # (blocks, elements) bool: written at some point
    writers: np.ndarray = field(repr=False, default=None)  # flat, a bit per warp, this phase
    readers: np.ndarray = field(repr=False, default=None)

    def __post_init__(self):
        self.writers = np.zeros(self.data.size, np.uint32)
        self.readers = np.zeros(self.data.size, np.uint32)

    def new_phase(self) -> None:
        """Forget who touched what: called at every barrier."""
        self.writers[:] = 0
        self.readers[:] = 0

    @property
    def size(self) -> int:
        return self.data.shape[1]


class _Lanes:
    """The threads one instruction runs for, as a flat list in (block, thread) order.

    ``b`` and ``t`` are the block (within the pass) and thread of every lane; ``starts``
    the index of the first lane of each warp that has one. For an unmasked instruction
    these are the same for every call, computed once per pass and only when needed.
    """

    def __init__(self, count: int, starts: np.ndarray, threads: int, b=None, t=None):
        self.count = count
        self.starts = starts
        self.threads = threads
        self.dense = b is None  # every thread of every block of the pass
        if not self.dense:
            self.b, self.t = b, t

    @functools.cached_property
    def b(self) -> np.ndarray:
        return np.repeat(np.arange(self.count // self.threads), self.threads)

    @functools.cached_property
    def t(self) -> np.ndarray:
        return np.tile(np.arange(self.threads), self.count // self.threads)

    @property
    def rows(self) -> int:
        """Warps with at least one lane: the warp instructions this instruction issues."""
        return self.starts.size

    @functools.cached_property
    def ends(self) -> np.ndarray:
        """Index of the last lane of each warp."""
        return np.append(self.starts[1:], self.count) - 1

    @functools.cached_property
    def warp_bit(self) -> np.ndarray:
        """``1 << warp`` of every lane: the hazard tables keep one bit per warp."""
        return np.left_shift(np.uint32(1), (self.t // 32).astype(np.uint32))


class Block:
    """What a kernel sees: the threads of a batch of blocks, and the calls that count.

    Per-thread indices: ``tx, ty, tz`` (``threadIdx``), ``tid`` (linear, x fastest),
    ``lane`` and ``warp`` (``tid % 32`` and ``tid // 32``). Per-block: ``bx, by, bz``
    (``blockIdx``). Shapes: ``bdx, bdy, bdz`` (``blockDim``) and ``gdx, gdy, gdz``
    (``gridDim``) are plain ints.
    """

    def __init__(self, launch_state: "_Launch", first: int, count: int):
        L = launch_state
        self._L = L
        self.bdx, self.bdy, self.bdz = L.block
        self.gdx, self.gdy, self.gdz = L.grid
        self.nthreads = L.threads
        self.nblocks = count
        ids = np.arange(first, first + count, dtype=np.int32)[:, None]
        self.bx = ids % self.gdx
        self.by = (ids // self.gdx) % self.gdy
        self.bz = ids // (self.gdx * self.gdy)
        self.tid = L.tid
        self.tx, self.ty, self.tz = L.tx, L.ty, L.tz
        self.lane = L.lane
        self.warp = L.warp
        self._shared: list[Shared] = []
        self._shared_bytes = L.dynamic_shared
        self._contiguous_memo = None
        self._lanes_memo = None
        self._all = None

    # -- helpers ---------------------------------------------------------------------------

    def _site(self, depth: int = 2) -> Site:
        frame = sys._getframe(depth)
        key = (frame.f_code.co_filename, frame.f_lineno)
        site = self._L.sites.get(key)
        if site is None:
            source = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
            site = Site(self._L.kernel_name, frame.f_code.co_filename, frame.f_lineno, source)
            self._L.sites[key] = site
        return site

    def _counters(self, site: Site) -> Counters:
        c = self._L.stats.by_site.get(site)
        if c is None:
            c = self._L.stats.by_site[site] = Counters()
        return c

    def _all_lanes(self) -> _Lanes:
        if self._all is None:
            B, T = self.nblocks, self.nthreads
            warps = -(-T // 32)
            starts = (np.arange(B)[:, None] * T + 32 * np.arange(warps)[None, :]).reshape(-1)
            self._all = _Lanes(B * T, starts, T)
        return self._all

    def _lanes(self, mask) -> _Lanes:
        """The active lanes of ``mask`` (all threads when it is None or all true).

        The answer is remembered for the same mask object, which a kernel usually passes
        to several instructions in a row.
        """
        if mask is None:
            return self._all_lanes()
        memo = self._lanes_memo
        if memo is not None and memo[0] is mask:
            return memo[1]
        m = np.asarray(mask)
        if m.dtype != bool:
            raise TypeError(f"mask must be a boolean array, got dtype {m.dtype}")
        m = np.broadcast_to(m, (self.nblocks, self.nthreads))
        if m.all():
            lanes = self._all_lanes()
        else:
            b, t = np.nonzero(m)
            row = b * (-(-self.nthreads // 32)) + t // 32
            starts = np.flatnonzero(np.diff(row, prepend=-1)) if row.size else row
            lanes = _Lanes(b.size, starts, self.nthreads, b, t)
        self._lanes_memo = (mask, lanes)
        return lanes

    def _per_thread_view(self, values, site: Site, extra=(), what: str = "value") -> np.ndarray:
        """``values`` broadcast to (blocks, threads[, extra]), or an error that says where."""
        values = np.asarray(values)
        try:
            return np.broadcast_to(values, (self.nblocks, self.nthreads) + extra)
        except ValueError:
            raise ValueError(
                f"{site}: the {what} has shape {values.shape}, which does not fit the threads of this pass: "
                f"(blocks {self.nblocks}, threads {self.nthreads}{', ' + str(extra[0]) if extra else ''}). "
                f"Build it from blk.tx/blk.bx… so it has one entry per thread."
            ) from None

    def _per_lane(self, values, lanes: _Lanes, site: Site, extra=(), what: str = "value") -> np.ndarray:
        """A per-thread array (or anything broadcastable to one) as one value per lane."""
        v = self._per_thread_view(values, site, extra, what)
        if lanes.dense:
            return v.reshape((-1,) + extra)
        return v[lanes.b, lanes.t]

    def _per_thread(self, lane_values, lanes: _Lanes, dtype, extra=()) -> np.ndarray:
        """Per-lane values back to a (blocks, threads) array; inactive threads get 0."""
        if lanes.dense:
            return lane_values.reshape((self.nblocks, self.nthreads) + extra)
        out = np.zeros((self.nblocks, self.nthreads) + extra, dtype)
        out[lanes.b, lanes.t] = lane_values
        return out

    def _thread_of(self, b: int, t: int) -> tuple[tuple, tuple]:
        block = (int(self.bx[b, 0]), int(self.by[b, 0]), int(self.bz[b, 0]))
        thread = (t % self.bdx, (t // self.bdx) % self.bdy, t // (self.bdx * self.bdy))
        return block, thread

    @staticmethod
    def _issue(c: Counters, lanes: _Lanes) -> int:
        """Count one warp instruction for every warp with an active lane; return how many."""
        c.warp_instructions += lanes.rows
        c.active_lanes += lanes.count
        return lanes.rows

    # -- memory ----------------------------------------------------------------------------

    def shared(self, shape, dtype=np.float32, name: str = "shared") -> Shared:
        """Allocate a ``__shared__`` array of ``shape`` and ``dtype`` for each block."""
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
        dtype = np.dtype(dtype)
        size = int(np.prod(shape))
        self._shared_bytes += size * dtype.itemsize
        limit = self._L.device.max_shared_per_block
        if self._shared_bytes > limit:
            raise LaunchError(
                f"cudaErrorInvalidValue: {self._L.kernel_name} asks for {self._shared_bytes:,} bytes of shared memory "
                f"per block; {self._L.device.name} allows {limit:,}"
            )
        arr = Shared(
            name=name,
            shape=shape,
            dtype=dtype,
            data=np.zeros((self.nblocks, size), dtype),
            written=np.zeros((self.nblocks, size), bool),
        )
        self._shared.append(arr)
        return arr

    def load(self, array, index, mask=None, width: int = 1):
        """Each active thread reads ``array[index]`` (``width`` consecutive elements for a
        vector load such as ``float4``: then ``index`` is the first element and the result
        gains a last axis of length ``width``). Inactive lanes get 0.

        ``array`` is a numpy array in global memory or a ``Shared`` array. ``index`` is a
        per-thread integer array (a tuple of them for a multi-dimensional array).
        """
        return self._access("read", self._site(), array, index, mask, width, None)

    def store(self, array, index, value, mask=None, width: int = 1) -> None:
        """Each active thread writes ``value`` to ``array[index]`` (see ``load``)."""
        self._access("write", self._site(), array, index, mask, width, value)

    def atomic_add(self, array, index, value, mask=None) -> None:
        """``atomicAdd(&array[index], value)`` for each active thread (global memory).

        Every addition lands, even when many threads hit the same element. The old values
        are not returned.
        """
        if isinstance(array, Shared):
            raise TypeError("atomic_add works on global memory arrays only in this simulator")
        self._access("atomic", self._site(), array, index, mask, 1, value)

    def _access(self, kind, site, array, index, mask, width, value):
        if not isinstance(width, (int, np.integer)) or width < 1:
            raise ValueError(f"{site}: width must be a positive integer")
        shared = isinstance(array, Shared)
        if not shared:
            if not isinstance(array, np.ndarray):
                raise TypeError(f"{site}: global memory must be a numpy array, got {type(array).__name__}")
            if not array.flags.c_contiguous:
                raise ValueError(f"{site}: global arrays must be C-contiguous (use np.ascontiguousarray)")
            lane_bytes = array.dtype.itemsize * width
            if lane_bytes not in (1, 2, 4, 8, 16):
                raise ValueError(f"{site}: a thread can move 1, 2, 4, 8 or 16 bytes at once, not {lane_bytes}")
        lanes = self._lanes(mask)
        c = self._counters(site)
        if not shared and lanes.dense and not isinstance(index, tuple):
            start = self._contiguous_start(index, width)
            if start is not None:
                return self._contiguous_access(kind, site, c, array, start, width, value)
        flat = self._lane_index(array, index, lanes, kind, site, width)
        if shared:
            return self._shared_access(kind, site, c, array, flat, lanes, width, value)
        return self._global_access(kind, site, c, array, flat, lanes, width, value)

    def _lane_index(self, array, index, lanes, kind, site, width) -> np.ndarray:
        """The flat element index of every active lane, bounds- and alignment-checked."""
        shape = array.shape
        if isinstance(index, tuple):
            if len(index) != len(shape):
                raise IndexError(f"{site}: {len(index)} indices for an array of {len(shape)} dimensions")
            flat = None
            for axis, (i, n) in enumerate(zip(index, shape)):
                v = self._per_lane(i, lanes, site, what="index")
                self._check_bounds(array, v, n, lanes, kind, site, width, axis)
                flat = v if flat is None else flat * n + v
        else:
            flat = self._per_lane(index, lanes, site, what="index")
            self._check_bounds(array, flat, int(np.prod(shape)) - (width - 1), lanes, kind, site, width, None)
        if width > 1:
            bad = flat % width != 0
            if bad.any():
                k = int(np.argmax(bad))
                block, thread = self._thread_of(int(lanes.b[k]), int(lanes.t[k]))
                raise MemcheckError(
                    f"cudaErrorMisalignedAddress: misaligned {width * array.dtype.itemsize}-byte vector access at "
                    f"element {int(flat[k])} (not a multiple of {width})\n    at {site}\n"
                    f"    by thread {fmt3(thread)} in block {fmt3(block)}"
                )
        return flat

    def _check_bounds(self, array, v, n, lanes, kind, site, width, axis):
        if v.dtype.kind not in "iu":
            raise TypeError(f"{site}: index must be an integer array, got dtype {v.dtype}")
        if v.size == 0 or (v.min() >= 0 and v.max() < n):
            return
        bad = (v < 0) | (v >= n)
        k = int(np.argmax(bad))
        b, t = int(lanes.b[k]), int(lanes.t[k])
        in_block = bad & (lanes.b == b)
        threads, values = lanes.t[in_block], v[in_block]
        block, thread = self._thread_of(b, t)
        name = array.name if isinstance(array, Shared) else _name_of(array, site)
        space = "__shared__" if isinstance(array, Shared) else "__global__"
        verb = {"read": "read", "write": "write", "atomic": "atomic"}[kind]
        where = f"dimension {axis} of " if axis is not None else ""
        extent = array.shape[axis] if axis is not None else int(np.prod(array.shape))
        unit = "elements" if axis is None else "entries"
        first, last = int(values.min()), int(values.max())
        touched = f"{name}[{first}]" if first == last else f"{name}[{first}]…{name}[{last}]"
        raise MemcheckError(
            f"Invalid {space} {verb} of size {array.dtype.itemsize * width} bytes\n"
            f"    at {site}\n"
            f"    by thread {fmt3(thread)} in block {fmt3(block)}\n"
            f"    index {int(v[k])} is out of bounds: {where}{name} has {extent:,} {unit}\n"
            f"    in block {fmt3(block)}, threads {span(threads)} {verb} {touched}"
        )

    def _contiguous_start(self, index, width):
        """If thread t of the pass accesses element ``start + width·t``, return ``start``.

        This is the shape of nearly every 1-D kernel (``i = bx·bdx + tx``); it makes the
        bounds check, the sector count and the data movement a matter of the end points.
        The answer is remembered for the same index array, which a kernel usually passes
        to several loads and stores.
        """
        memo = self._contiguous_memo
        if memo is not None and memo[0] is index:
            return memo[1]
        start = None
        n = self.nblocks * self.nthreads
        if (isinstance(index, np.ndarray) and index.shape == (self.nblocks, self.nthreads)
                and index.dtype.kind in "iu" and index.flags.c_contiguous):
            flat = index.reshape(-1)
            s0 = int(flat[0])
            if int(flat[-1]) == s0 + width * (n - 1) and s0 % width == 0:
                probe = flat[::97]
                if np.array_equal(probe, s0 + width * np.arange(0, n, 97, dtype=np.int64)):
                    if np.array_equal(flat, np.arange(s0, s0 + width * n, width, dtype=flat.dtype)):
                        start = s0
        self._contiguous_memo = (index, start)
        return start

    def _contiguous_access(self, kind, site, c, array, start, width, value):
        mem = array.reshape(-1)
        n = self.nblocks * self.nthreads
        stop = start + width * n
        if start < 0 or stop > mem.size:
            flat = np.arange(start, stop, width, dtype=np.int64)
            self._check_bounds(array, flat, mem.size - (width - 1), self._all_lanes(), kind, site, width, None)
        itemsize = array.dtype.itemsize
        lanes = self._all_lanes()
        lo = (start + width * lanes.starts) * itemsize >> 5
        hi = ((start + width * lanes.ends + width) * itemsize - 1) >> 5
        c.sectors += int((hi - lo + 1).sum())
        requests = self._issue(c, self._all_lanes())
        c.requests += requests
        c.requested_bytes += n * width * itemsize
        if kind == "atomic":
            c.atomics += requests
        shape = (self.nblocks, self.nthreads) + ((width,) if width > 1 else ())
        if kind == "read":
            return mem[start:stop].reshape(shape).copy()
        value = np.broadcast_to(np.asarray(value, dtype=array.dtype), shape)
        if kind == "atomic":
            mem[start:stop] += value.reshape(-1)  # distinct elements: no two threads collide
        else:
            mem[start:stop] = value.reshape(-1)
        return None

    def _global_access(self, kind, site, c, array, flat, lanes, width, value):
        mem = array.reshape(-1)
        itemsize = array.dtype.itemsize
        # Arrays start 256-byte aligned and accesses are aligned to their size, so every
        # lane falls in exactly one 32-byte sector.
        sectors = (flat.astype(np.int64) if mem.nbytes >= 2**31 else flat) * itemsize >> 5
        c.sectors += count_sectors(sectors, lanes.starts)
        requests = self._issue(c, lanes)
        c.requests += requests
        c.requested_bytes += lanes.count * width * itemsize
        if kind == "atomic":
            c.atomics += requests
        extra = (width,) if width > 1 else ()
        cols = flat[:, None] + np.arange(width, dtype=flat.dtype) if width > 1 else flat
        if kind == "read":
            return self._per_thread(mem[cols], lanes, array.dtype, extra)
        vals = self._per_lane(np.asarray(value, dtype=array.dtype), lanes, site, extra)
        if kind == "atomic":
            np.add.at(mem, cols, vals)
        else:
            mem[cols] = vals
        return None

    def _shared_access(self, kind, site, c, arr: Shared, flat, lanes, width, value):
        itemsize = arr.dtype.itemsize
        per_lane = max(1, itemsize * width // 4)
        words = flat * itemsize // 4
        if per_lane > 1:
            words = words[:, None] + np.arange(per_lane, dtype=words.dtype)
        c.shared_wavefronts += count_wavefronts(words, lanes.starts)
        c.shared_requests += lanes.rows
        self._issue(c, lanes)

        # One flat key per element touched: block of the pass × array size + element.
        key = lanes.b * arr.size + flat
        warp_bit = lanes.warp_bit
        extra = (width,) if width > 1 else ()
        if width > 1:
            key = (key[:, None] + np.arange(width)).reshape(-1)
            warp_bit = np.repeat(warp_bit, width)
        data = arr.data.reshape(-1)
        if kind == "read":
            unwritten = ~arr.written.reshape(-1)[key]
            if unwritten.any():
                self._raise_uninitialized(site, arr, lanes, int(key[np.argmax(unwritten)]), int(np.argmax(unwritten)) // width, width)
            self._hazards("read-after-write", site, arr, arr.writers, arr.readers, key, warp_bit)
            return self._per_thread(data[key].reshape((-1,) + extra), lanes, arr.dtype, extra)
        self._hazards("write-after-read", site, arr, arr.readers, arr.writers, key, warp_bit)
        data[key] = self._per_lane(np.asarray(value, dtype=arr.dtype), lanes, site, extra).reshape(-1)
        arr.written.reshape(-1)[key] = True
        return None

    def _hazards(self, kind, site, arr, before, mine, key, warp_bit):
        """Check this access against the other kind of access earlier in the phase, then log it.

        ``before`` and ``mine`` hold, per element, a bit per warp that read or wrote it since
        the last barrier.
        """
        earlier = before[key]
        conflict = (earlier & ~warp_bit) != 0
        if conflict.any():
            self._record_races(kind, site, arr, key, warp_bit, earlier, conflict)
        # A fancy |= keeps one lane's result when several lanes hit the same element; when
        # those lanes belong to different warps, a bit is lost. Find the lanes whose bit is
        # missing (rare) and add them one by one with the unbuffered ufunc.at.
        mine[key] |= warp_bit
        lost = (mine[key] & warp_bit) == 0
        if lost.any():
            np.bitwise_or.at(mine, key[lost], warp_bit[lost])

    def _record_races(self, kind, site, arr, key, warp_bit, earlier, conflict):
        # One record per block: its first conflicting lane (keys come in block, thread order).
        hits = np.nonzero(conflict)[0]
        blocks = key[hits] // arr.size
        _, first = np.unique(blocks, return_index=True)
        for k in hits[first]:
            others = int(earlier[k]) & ~int(warp_bit[k])
            other = (others & -others).bit_length() - 1
            warp = int(warp_bit[k]).bit_length() - 1
            b, element = divmod(int(key[k]), arr.size)
            block, _ = self._thread_of(b, 0)
            self._L.stats.races.append(Race(kind, block, warp, other, arr.name, element, site, _unravel(element, arr.shape)))

    def _raise_uninitialized(self, site, arr, lanes, key: int, lane: int, width: int):
        element = key % arr.size
        block, thread = self._thread_of(int(lanes.b[lane]), int(lanes.t[lane]))
        raise InitcheckError(
            f"Uninitialized __shared__ memory read of size {arr.dtype.itemsize * width} bytes\n"
            f"    at {site}\n"
            f"    by thread {fmt3(thread)} in block {fmt3(block)}\n"
            f"    shared {arr.name}{_unravel(element, arr.shape)} was never written by this block"
        )

    # -- control flow ----------------------------------------------------------------------

    def branch(self, cond, mask=None) -> np.ndarray:
        """``if (cond)``: returns the mask of threads that take the ``if`` side.

        ``mask`` is the set of threads that reach the branch (all, by default). A warp whose
        reaching threads do not all agree is a divergent branch: it runs both sides.
        """
        site = self._site()
        c = self._counters(site)
        lanes = self._lanes(mask)
        cond = self._per_thread_view(np.asarray(cond, dtype=bool), site, what="condition")
        c.branches += self._issue(c, lanes)
        if lanes.count:
            taken = np.add.reduceat(self._per_lane(cond, lanes, site, what="condition").astype(np.int32), lanes.starts)
            reached = np.diff(lanes.starts, append=lanes.count)
            c.divergent_branches += int(np.count_nonzero((taken > 0) & (taken < reached)))
        if mask is None:
            return cond.copy()
        return cond & np.broadcast_to(np.asarray(mask, dtype=bool), cond.shape)

    def sync(self, mask=None) -> None:
        """``__syncthreads()``: a barrier for all threads of the block.

        ``mask`` says which threads reach it (all, by default). A barrier reached by only
        part of a block is the synccheck error "divergent __syncthreads". Shared-memory
        accesses on either side of a barrier cannot race.
        """
        site = self._site()
        c = self._counters(site)
        if mask is not None:
            m = np.broadcast_to(np.asarray(mask, dtype=bool), (self.nblocks, self.nthreads))
            reached = m.sum(axis=1)
            bad = np.nonzero((reached > 0) & (reached < self.nthreads))[0]
            if bad.size:
                b = int(bad[0])
                block, _ = self._thread_of(b, 0)
                missing = np.nonzero(~m[b])[0]
                raise SynccheckError(
                    f"Barrier error: __syncthreads() reached by {int(reached[b])} of {self.nthreads} threads "
                    f"of block {fmt3(block)} (divergent code)\n    at {site}\n"
                    f"    threads {span(missing)} of the block never arrive"
                )
        self._issue(c, self._all_lanes())
        c.barriers += self.nblocks
        for arr in self._shared:
            arr.new_phase()

    def alu(self, ops: int = 1, mask=None) -> None:
        """Count ``ops`` arithmetic warp instructions (add, compare, index math…) for every
        warp with an active lane.

        numpy does the arithmetic of a kernel without the simulator seeing it; a kernel that
        wants its instruction count to include arithmetic says so with this call.
        """
        c = self._counters(self._site())
        lanes = self._lanes(mask)
        c.warp_instructions += int(ops) * lanes.rows
        c.active_lanes += int(ops) * lanes.count

    # -- warp-level primitives ------------------------------------------------------------

    def _shuffle(self, value, source_lane, mask):
        c = self._counters(self._site(depth=3))
        self._issue(c, self._lanes(mask))
        c.shuffles += 1
        v = np.asarray(value)
        v = np.broadcast_to(v, (self.nblocks, self.nthreads) + v.shape[2:])
        warps = -(-self.nthreads // 32)
        # A lane whose source is outside the warp or the block keeps its own value.
        tid = np.arange(warps * 32).reshape(warps, 32)
        src = tid - np.arange(32) + source_lane[None, :]
        ok = (source_lane[None, :] >= 0) & (source_lane[None, :] < 32) & (src < self.nthreads)
        src = np.where(ok, src, tid).reshape(-1)[: self.nthreads]
        return v[:, src].copy()

    def shfl_down(self, value, delta: int, mask=None):
        """``__shfl_down_sync``: lane ``l`` gets ``value`` from lane ``l + delta`` of its warp
        (and keeps its own where that lane does not exist)."""
        return self._shuffle(value, np.arange(32) + delta, mask)

    def shfl_xor(self, value, lane_mask: int, mask=None):
        """``__shfl_xor_sync``: lane ``l`` gets ``value`` from lane ``l ^ lane_mask``."""
        return self._shuffle(value, np.arange(32) ^ lane_mask, mask)


def _unravel(element: int, shape) -> str:
    """'[1][0]' for element 33 of a (32, 33) array: the index as the kernel wrote it."""
    return "".join(f"[{int(i)}]" for i in np.unravel_index(element, shape))


def _name_of(array, site: Site) -> str:
    """The kernel's own name for an array, for error messages ('a' rather than 'array')."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != site.filename:
        frame = frame.f_back
    if frame is not None:
        for name, value in frame.f_locals.items():
            if value is array:
                return name
    return "array"


@dataclass
class _Launch:
    kernel_name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    device: Device
    dynamic_shared: int
    stats: Stats
    sites: dict = field(default_factory=dict)

    def __post_init__(self):
        bdx, bdy, bdz = self.block
        self.threads = bdx * bdy * bdz
        tid = np.arange(self.threads, dtype=np.int32)[None, :]
        self.tid = tid
        self.tx = tid % bdx
        self.ty = (tid // bdx) % bdy
        self.tz = tid // (bdx * bdy)
        self.lane = tid % 32
        self.warp = tid // 32


def launch(kernel, grid, block, args=(), device: Device = H100, shared_bytes: int = 0,
           blocks_per_pass: int | None = None) -> Stats:
    """Run ``kernel(blk, *args)`` on every block of ``grid`` and return its ``Stats``.

    ``grid`` and ``block`` are ints or 1- to 3-tuples, as in ``kernel<<<grid, block>>>``.
    ``shared_bytes`` is the dynamic shared memory per block (the third launch parameter).
    The launch is checked against ``device`` before anything runs; an invalid one raises
    ``LaunchError`` naming the CUDA error.
    """
    block = _dims("block", block)
    grid = _dims("grid", grid)
    threads = block[0] * block[1] * block[2]
    if threads > device.max_threads_per_block:
        raise LaunchError(
            f"cudaErrorInvalidConfiguration: {threads:,} threads per block "
            f"({block[0]}×{block[1]}×{block[2]}); {device.name} allows {device.max_threads_per_block:,}"
        )
    _check_limits("block", block, device.max_block_dims)
    _check_limits("grid", grid, device.max_grid_dims)
    if shared_bytes < 0 or shared_bytes > device.max_shared_per_block:
        raise LaunchError(
            f"cudaErrorInvalidValue: {shared_bytes:,} bytes of dynamic shared memory per block; "
            f"{device.name} allows {device.max_shared_per_block:,}"
        )
    name = getattr(kernel, "__name__", "kernel")
    stats = Stats(kernel=name, grid=grid, block=block, device=device)
    state = _Launch(name, grid, block, device, shared_bytes, stats)
    total = grid[0] * grid[1] * grid[2]
    per_pass = blocks_per_pass or max(1, THREADS_PER_PASS // threads)
    for first in range(0, total, per_pass):
        blk = Block(state, first, min(per_pass, total - first))
        try:
            kernel(blk, *args)
        except ValueError as exc:
            if "truth value of an array" not in str(exc):
                raise
            # A Python `if` on a per-thread or per-block array: say where and what to do.
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            raise SimulatorError(
                f"{name} (line {frame.lineno}: {frame.line}) branches in Python on an array of threads "
                f"or blocks. Threads take branches with masks (m = cond; blk.load(..., mask=m)) or "
                f"blk.branch(cond); for Python logic per block, launch with blocks_per_pass=1."
            ) from exc
    for counters in stats.by_site.values():
        stats.totals.add(counters)
    return stats
