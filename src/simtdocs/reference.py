"""The reference engine: the definition of every counter, one lane at a time.

``simtdocs.launch`` is fast because it runs many blocks at once with numpy. This module
runs the same kernels the slow, obvious way, so that a reader can check what each counter
means and the test suite can check the fast engine against it on random kernels:

* one block at a time (``blk.nblocks == 1``, blocks in linear order, x fastest);
* inside every ``blk`` call, a plain loop over the warps of the block in order and over the
  lanes of each warp in order, with dicts and sets instead of array tricks.

A warp *issues* an instruction when at least one of its lanes is active (``mask`` True;
the missing lanes of a partial last warp are never active). Every method below says what
it counts per issued warp instruction and which Nsight Compute metric that mirrors.

Where the contract (``ENGINE_SPEC``) leaves a choice open, this module chose:

* an out-of-bounds access raises ``MemcheckError`` even with ``memcheck`` off, because there
  is no memory outside a numpy array to simulate (a silent wrong answer is never allowed);
  the switch exists for symmetry with ``compute-sanitizer --tool``;
* a misaligned access always raises: the hardware itself faults (cudaErrorMisalignedAddress);
* shared-memory atomics are not checked by initcheck (they only mark elements as written),
  and take no part in race tracking, as the contract says.
"""

from __future__ import annotations

import linecache
import sys
import traceback

import numpy as np

from .counters import Counters, Stats
from .devices import H100, Device
from .diagnostics import (
    RACE_KINDS, TOOLS, InitcheckError, LaunchError, MemcheckError, Race, SimulatorError, Site,
    SynccheckError, fmt3, span,
)

WARP = 32
STATIC_SHARED_LIMIT = 48 * 1024  # nvcc refuses more static __shared__ per block
LANE_BYTES = (1, 2, 4, 8, 16)  # what one thread can move in one instruction


class Shared:
    """One block's ``__shared__`` array, zero-filled, plus what the checks remember.

    ``written``: elements some thread of the block wrote (initcheck). For the race check,
    since the block's last barrier: ``readers``/``writers`` map an element to the set of
    warps that read/wrote it, ``last_read``/``last_write`` to the site of the latest one.
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


class Block:
    """One block, as a kernel sees it (``kernel(blk, *args)``); ``nblocks`` is always 1.

    Per-thread index arrays have shape (1, threads): ``tx, ty, tz``, ``tid`` (x fastest),
    ``lane = tid % 32``, ``warp = tid // 32``. ``bx, by, bz`` have shape (1, 1).
    """

    def __init__(self, L: "_Launch", linear: int):
        self._L = L
        self.bdx, self.bdy, self.bdz = L.block
        self.gdx, self.gdy, self.gdz = L.grid
        self.nthreads, self.nblocks = L.threads, 1
        self.tid = np.arange(self.nthreads, dtype=np.int32)[None, :]
        self.tx, self.ty, self.tz = self.tid % self.bdx, self.tid // self.bdx % self.bdy, self.tid // (self.bdx * self.bdy)
        self.lane, self.warp = self.tid % WARP, self.tid // WARP
        ids = np.array([[linear]], np.int32)
        self.bx, self.by, self.bz = ids % self.gdx, ids // self.gdx % self.gdy, ids // (self.gdx * self.gdy)
        self._linear = linear
        self._block = (int(self.bx[0, 0]), int(self.by[0, 0]), int(self.bz[0, 0]))
        self._shared: list[Shared] = []
        self._static = self._dynamic = 0
        self._calls = 0  # blk calls so far: orders the race records

    # -- the pattern every instruction repeats -----------------------------------------------

    def _site(self) -> Site:
        """The kernel line that called the public method that called this one."""
        f = sys._getframe(2)
        self._calls += 1
        line = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
        return Site(self._L.kernel, f.f_code.co_filename, f.f_lineno, line)

    def _counters(self, site: Site) -> Counters:
        return self._L.stats.by_site.setdefault(site, Counters())

    def _per_thread(self, values, site, what="value", extra=()):
        """``values`` broadcast to one entry per thread: shape (threads,) + extra."""
        values = np.asarray(values)
        try:
            return np.broadcast_to(values, (1, self.nthreads) + extra)[0]
        except ValueError:
            raise ValueError(
                f"{site}: the {what} has shape {values.shape}, which does not fit the threads of this pass: "
                f"(blocks 1, threads {self.nthreads}{', ' + str(extra[0]) if extra else ''}). "
                f"Build it from blk.tx/blk.bx… so it has one entry per thread."
            ) from None

    def _active(self, mask, site) -> list[bool]:
        if mask is None:
            return [True] * self.nthreads
        m = np.asarray(mask)
        if m.dtype != bool:
            raise TypeError(f"mask must be a boolean array, got dtype {m.dtype}")
        return [bool(x) for x in self._per_thread(m, site, "mask")]

    def _warps(self, active):
        """(warp, [active threads of the warp]) for every warp that issues."""
        for w in range(0, self.nthreads, WARP):
            lanes = [t for t in range(w, min(w + WARP, self.nthreads)) if active[t]]
            if lanes:
                yield w // WARP, lanes

    @staticmethod
    def _issue(c: Counters, lanes, ops: int = 1) -> None:
        """warp_instructions (smsp__inst_executed) and active_lanes (smsp__thread_inst_executed)."""
        c.warp_instructions += ops
        c.active_lanes += ops * len(lanes)

    def _thread(self, t: int) -> tuple:
        return (t % self.bdx, t // self.bdx % self.bdy, t // (self.bdx * self.bdy))

    # -- addresses ---------------------------------------------------------------------------

    def _flat(self, array, index, active, site, width, verb) -> dict:
        """Flat element index of every active thread, each axis and the end checked."""
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
        if isinstance(index, tuple):
            for axis, (v, n) in enumerate(zip(values, shape)):
                self._bounds(array, [(t, int(v[t])) for t in threads], n, site, width, verb, axis)
        flat = {}
        for t in threads:
            f = 0
            for v, n in zip(values, shape if isinstance(index, tuple) else (size,)):
                f = f * n + int(v[t])  # Python ints: no overflow whatever the index dtype
            flat[t] = f
        self._bounds(array, list(flat.items()), size - (width - 1), site, width, verb, None)
        lane_bytes = array.dtype.itemsize * width
        base = 0 if shared else byte_offset(array)
        for t, f in flat.items():
            if (base + f * array.dtype.itemsize) % lane_bytes:
                raise MemcheckError(
                    f"cudaErrorMisalignedAddress: misaligned {lane_bytes}-byte access at byte "
                    f"{base + f * array.dtype.itemsize} of {'shared ' + array.name if shared else 'its allocation'} "
                    f"(not a multiple of {lane_bytes})\n    at {site}\n"
                    f"    by thread {fmt3(self._thread(t))} in block {fmt3(self._block)}"
                )
        return flat

    def _bounds(self, array, pairs, n, site, width, verb, axis) -> None:
        bad = [(t, v) for t, v in pairs if not 0 <= v < n]
        if not bad:
            return
        t, v = bad[0]
        shared = isinstance(array, Shared)
        name = array.name if shared else _name_of(array, site)
        extent = array.shape[axis] if axis is not None else int(np.prod(array.shape))
        where = f"dimension {axis} of " if axis is not None else ""
        unit = "elements" if axis is None else "entries"
        lo, hi = min(b for _, b in bad), max(b for _, b in bad)
        touched = f"{name}[{lo}]" if lo == hi else f"{name}[{lo}]…{name}[{hi}]"
        raise MemcheckError(
            f"Invalid {'__shared__' if shared else '__global__'} {verb} of size {array.dtype.itemsize * width} bytes\n"
            f"    at {site}\n"
            f"    by thread {fmt3(self._thread(t))} in block {fmt3(self._block)}\n"
            f"    index {v} is out of bounds: {where}{name} has {extent:,} {unit}\n"
            f"    in block {fmt3(self._block)}, threads {span(b for b, _ in bad)} {verb} {touched}"
        )

    def _check_array(self, array, width, site):
        if not isinstance(width, (int, np.integer)) or width < 1:
            raise ValueError(f"{site}: width must be a positive integer")
        if not isinstance(array, Shared):
            if not isinstance(array, np.ndarray):
                raise TypeError(f"{site}: global memory must be a numpy array, got {type(array).__name__}")
            if not array.flags.c_contiguous:
                raise ValueError(f"{site}: global arrays must be C-contiguous (use np.ascontiguousarray)")
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
                    f"cudaErrorInvalidValue: {L.kernel} declares {self._dynamic:,} bytes of dynamic shared memory "
                    f"but the launch gives shared_bytes={L.shared_bytes:,}"
                )
        else:
            self._static += nbytes
            if self._static > STATIC_SHARED_LIMIT:
                raise LaunchError(
                    f"ptxas error: {L.kernel} uses too much shared data ({self._static:,} bytes of static __shared__, "
                    f"{STATIC_SHARED_LIMIT:,} max); declare the large array with dynamic=True and launch with shared_bytes=..."
                )
        if L.max_dynamic is None and self._static + L.shared_bytes > STATIC_SHARED_LIMIT:
            raise LaunchError(
                f"cudaErrorInvalidValue: {L.kernel} uses {self._static:,} bytes of static and {L.shared_bytes:,} of "
                f"dynamic shared memory per block; more than {STATIC_SHARED_LIMIT:,} in all needs "
                f"launch(..., max_dynamic_shared_bytes=N)"
            )
        if L.max_dynamic is not None and self._static + L.max_dynamic > L.device.max_shared_per_block:
            raise LaunchError(
                f"cudaErrorInvalidValue: max_dynamic_shared_bytes={L.max_dynamic:,} plus {self._static:,} bytes of "
                f"static shared memory exceeds the {L.device.max_shared_per_block:,} bytes {L.device.name} allows per block"
            )
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

    def _access(self, kind, site, array, index, mask, width, value):
        lane_bytes = self._check_array(array, width, site)
        active = self._active(mask, site)
        flat = self._flat(array, index, active, site, width, kind)
        extra = (width,) if width > 1 else ()
        shared = isinstance(array, Shared)
        mem = array.data if shared else (array.reshape(-1) if kind == "read" else _writable(array))
        if kind == "read" and shared and "initcheck" in self._L.tools:
            for t, f in flat.items():
                for e in range(f, f + width):
                    if e not in array.written:
                        raise InitcheckError(
                            f"Uninitialized __shared__ memory read of size {lane_bytes} bytes\n    at {site}\n"
                            f"    by thread {fmt3(self._thread(t))} in block {fmt3(self._block)}\n"
                            f"    shared {array.name}{_unravel(e, array.shape)} was never written by this block"
                        )
        out = np.zeros((1, self.nthreads) + extra, array.dtype)
        if kind == "write":
            values = self._per_thread(np.asarray(value, dtype=array.dtype), site, "value", extra)
        c = self._counters(site)
        found = {}
        for w, lanes in self._warps(active):
            self._issue(c, lanes)
            if shared:
                self._count_shared(c, array, flat, lanes, lane_bytes)
                if "racecheck" in self._L.tools:
                    self._races(kind, site, array, flat, w, lanes, width, found)
            else:
                self._count_global(c, array, flat, lanes, lane_bytes)
            for t in lanes:
                f = flat[t]
                if kind == "read":
                    out[0, t] = mem[f:f + width] if width > 1 else mem[f]
                else:
                    mem[f:f + width] = values[t]
                    if shared:
                        array.written.update(range(f, f + width))
        self._record(found)
        return out if kind == "read" else None

    def _races(self, kind, site, s: Shared, flat, w, lanes, width, found) -> None:
        """racecheck: warp ``w``'s lanes checked together against the warps that touched the
        same elements earlier in this barrier phase (earlier warps of this very instruction
        included), then ``w`` joins the readers or writers. ``found`` keeps, per kind of
        hazard, the first lane (lowest thread) of the instruction that has one."""
        checks = ([("read-after-write", s.writers, s.last_write)] if kind == "read" else
                  [("write-after-read", s.readers, s.last_read), ("write-after-write", s.writers, s.last_write)])
        for t in lanes:
            for e in range(flat[t], flat[t] + width):
                for hazard, table, last in checks:
                    others = table.get(e, set()) - {w}
                    if others and hazard not in found:
                        found[hazard] = Race(hazard, self._block, w, min(others), s.name, e, site,
                                             _unravel(e, s.shape), last[e])
        table, last = (s.readers, s.last_read) if kind == "read" else (s.writers, s.last_write)
        for t in lanes:
            for e in range(flat[t], flat[t] + width):
                table.setdefault(e, set()).add(w)
                last[e] = site

    def _record(self, found) -> None:
        for hazard, race in found.items():
            self._L.races.append(((self._calls, self._linear, RACE_KINDS.index(hazard)), race))

    # -- atomics -----------------------------------------------------------------------------

    def atomic_add(self, array, index, value, mask=None):
        """``atomicAdd``: returns each thread's old value (0 for inactive threads)."""
        return self._atomic(self._site(), array, index, mask, value, None, lambda old, v, _: old + v)

    def atomic_max(self, array, index, value, mask=None):
        """``atomicMax``: see ``atomic_add``."""
        return self._atomic(self._site(), array, index, mask, value, None, lambda old, v, _: np.maximum(old, v))

    def atomic_min(self, array, index, value, mask=None):
        """``atomicMin``: see ``atomic_add``."""
        return self._atomic(self._site(), array, index, mask, value, None, lambda old, v, _: np.minimum(old, v))

    def atomic_exch(self, array, index, value, mask=None):
        """``atomicExch``: see ``atomic_add``."""
        return self._atomic(self._site(), array, index, mask, value, None, lambda old, v, _: v)

    def atomic_cas(self, array, index, compare, value, mask=None):
        """``atomicCAS``: writes ``value`` where the old value equals ``compare``."""
        return self._atomic(self._site(), array, index, mask, value, compare, lambda old, v, cmp: v if old == cmp else old)

    def _atomic(self, site, array, index, mask, value, compare, update):
        """Lanes in order, warps in order, each seeing the lanes before it. Per warp: atomics
        (l1tex__t_requests_…_op_atom, or smsp__inst_executed_op_shared_atom), atomic_conflicts
        = active lanes − distinct elements (the lanes the hardware must serialise), and the
        memory counters of a store of the same addresses."""
        lane_bytes = self._check_array(array, 1, site)
        active = self._active(mask, site)
        flat = self._flat(array, index, active, site, 1, "atomic")
        shared = isinstance(array, Shared)
        mem = array.data if shared else _writable(array)
        values = self._per_thread(np.asarray(value, dtype=array.dtype), site, "value")
        compares = None if compare is None else self._per_thread(np.asarray(compare, dtype=array.dtype), site, "compare value")
        old = np.zeros((1, self.nthreads), array.dtype)
        c = self._counters(site)
        for _, lanes in self._warps(active):
            self._issue(c, lanes)
            c.atomics += 1
            c.atomic_conflicts += len(lanes) - len({flat[t] for t in lanes})
            if shared:
                self._count_shared(c, array, flat, lanes, lane_bytes)
            else:
                self._count_global(c, array, flat, lanes, lane_bytes)
            for t in lanes:
                f = flat[t]
                cell = mem[f:f + 1]  # a 1-element array: integer arithmetic wraps like the GPU's
                old[0, t] = cell[0]
                cell[:] = update(cell, values[t:t + 1], None if compares is None else compares[t])
                if shared:
                    array.written.add(f)
        return old

    # -- control -----------------------------------------------------------------------------

    def branch(self, cond, mask=None) -> np.ndarray:
        """``if (cond)``: returns ``cond & mask``. Per warp: branches
        (smsp__sass_branch_targets); divergent_branches (smsp__sass_branch_targets_threads_divergent)
        when the warp's active lanes do not all agree."""
        site = self._site()
        c = self._counters(site)
        active = self._active(mask, site)
        cond = self._per_thread(np.asarray(cond, dtype=bool), site, "condition")
        for _, lanes in self._warps(active):
            self._issue(c, lanes)
            c.branches += 1
            if len({bool(cond[t]) for t in lanes}) > 1:
                c.divergent_branches += 1
        return (cond & np.array(active))[None, :]

    def alu(self, ops: int = 1, mask=None) -> None:
        """``ops`` arithmetic warp instructions per warp with an active lane."""
        site = self._site()
        c = self._counters(site)
        for _, lanes in self._warps(self._active(mask, site)):
            self._issue(c, lanes, int(ops))

    def sync(self, mask=None) -> None:
        """``__syncthreads()`` reached by the threads of ``mask``. None of them: nothing at
        all. Some: synccheck error (with synccheck off it still acts as the barrier). All:
        one warp instruction per warp, barriers += 1 for the block, a new race phase."""
        site = self._site()
        c = self._counters(site)
        active = self._active(mask, site)
        reached = sum(active)
        if reached == 0:
            return
        if reached < self.nthreads and "synccheck" in self._L.tools:
            raise SynccheckError(
                f"Barrier error: __syncthreads() reached by {reached} of {self.nthreads} threads "
                f"of block {fmt3(self._block)} (divergent code)\n    at {site}\n"
                f"    threads {span(t for t in range(self.nthreads) if not active[t])} of the block never arrive"
            )
        for _, lanes in self._warps(active):
            self._issue(c, lanes)
        c.barriers += 1
        for s in self._shared:
            s.new_phase()

    def syncwarp(self, mask=None) -> None:
        """``__syncwarp()``: one warp instruction per warp with an active lane, nothing else."""
        site = self._site()
        c = self._counters(site)
        for _, lanes in self._warps(self._active(mask, site)):
            self._issue(c, lanes)

    # -- warp-level --------------------------------------------------------------------------

    def shfl_down(self, value, delta: int, mask=None):
        """``__shfl_down_sync``: lane l gets ``value`` of lane l + delta."""
        return self._shuffle(self._site(), value, lambda lane, t: lane + int(delta), mask)

    def shfl_up(self, value, delta: int, mask=None):
        """``__shfl_up_sync``: lane l gets ``value`` of lane l − delta."""
        return self._shuffle(self._site(), value, lambda lane, t: lane - int(delta), mask)

    def shfl_xor(self, value, lane_mask: int, mask=None):
        """``__shfl_xor_sync``: lane l gets ``value`` of lane l ^ lane_mask."""
        return self._shuffle(self._site(), value, lambda lane, t: lane ^ int(lane_mask), mask)

    def shfl(self, value, src_lane, mask=None):
        """``__shfl_sync``: lane l gets ``value`` of lane ``src_lane % 32`` (per thread or one int)."""
        site = self._site()
        src = self._per_thread(src_lane, site, "source lane")
        return self._shuffle(site, value, lambda lane, t: int(src[t]) % WARP, mask)

    def _shuffle(self, site, value, source, mask):
        """A source lane past the warp (< 0 or >= 32) keeps the lane's own value; a source
        inside the warp that is not active is an error. Per warp: shuffles (SHFL)."""
        v = np.asarray(value)
        v = self._per_thread(v, site, "value", v.shape[2:])
        out = v.copy()[None]
        active = self._active(mask, site)
        c = self._counters(site)
        for w, lanes in self._warps(active):
            self._issue(c, lanes)
            c.shuffles += 1
            bad = []
            for t in lanes:
                src = source(t % WARP, t)
                if 0 <= src < WARP:
                    u = WARP * w + src
                    if u >= self.nthreads or not active[u]:
                        bad.append((t, src))
                    else:
                        out[0, t] = v[u]
            if bad:
                raise SimulatorError(
                    f"{site}: shuffle from an inactive lane in block {fmt3(self._block)}, warp {w}: "
                    f"lanes {span(t % WARP for t, _ in bad)} read lanes {span(s for _, s in bad)}, which are "
                    f"outside the mask or past the end of the block (undefined on a GPU)"
                )
        return out

    def _vote(self, site, pred, mask, combine, dtype):
        c = self._counters(site)
        p = self._per_thread(np.asarray(pred, dtype=bool), site, "predicate")
        out = np.zeros((1, self.nthreads), dtype)
        for _, lanes in self._warps(self._active(mask, site)):
            self._issue(c, lanes)
            c.votes += 1
            result = combine([(t % WARP, bool(p[t])) for t in lanes])
            for t in lanes:
                out[0, t] = result
        return out

    def ballot(self, pred, mask=None):
        """``__ballot_sync``: every active thread gets its warp's uint32 with bit l set when
        lane l is active and ``pred`` holds there; inactive threads 0. Per warp: votes (VOTE)."""
        return self._vote(self._site(), pred, mask, lambda lp: sum(1 << lane for lane, p in lp if p), np.uint32)

    def any(self, pred, mask=None):
        """``__any_sync``: whether ``pred`` holds on any active lane of the warp (inactive: False)."""
        return self._vote(self._site(), pred, mask, lambda lp: any(p for _, p in lp), bool)

    def all(self, pred, mask=None):
        """``__all_sync``: whether ``pred`` holds on every active lane of the warp (inactive: False)."""
        return self._vote(self._site(), pred, mask, lambda lp: all(p for _, p in lp), bool)


def _unravel(element: int, shape) -> str:
    return "".join(f"[{int(i)}]" for i in np.unravel_index(element, shape))


def _name_of(array, site: Site) -> str:
    """The kernel's own name for an array, for error messages."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != site.filename:
        frame = frame.f_back
    if frame is not None:
        for name, value in frame.f_locals.items():
            if value is array:
                return name
    return "array"


class _Launch:
    def __init__(self, kernel, grid, block, device, shared_bytes, max_dynamic, tools):
        self.kernel, self.grid, self.block, self.device = kernel, grid, block, device
        self.shared_bytes, self.max_dynamic, self.tools = shared_bytes, max_dynamic, tools
        self.threads = block[0] * block[1] * block[2]
        self.stats = Stats(kernel=kernel, grid=grid, block=block, device=device)
        self.races: list = []  # ((call, block, kind), Race)


def _dims(name: str, dims, limits) -> tuple[int, int, int]:
    if isinstance(dims, (int, np.integer)):
        dims = (dims,)
    if not isinstance(dims, (tuple, list)) or not 1 <= len(dims) <= 3:
        raise LaunchError(f"cudaErrorInvalidConfiguration: {name} must be an int or 1 to 3 ints, got {dims!r}; "
                          f"write {name}=4 or {name}=(16, 16)")
    for axis, d in zip("xyz", dims):
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
            raise LaunchError(f"cudaErrorInvalidConfiguration: {name}.{axis} must be an integer, got {d!r}; "
                              f"write {name}=4 or {name}=(16, 16)")
        if d <= 0:
            raise LaunchError(f"cudaErrorInvalidConfiguration: {name}.{axis} = {d}; every dimension must be at least 1")
    dims = tuple(int(d) for d in dims) + (1,) * (3 - len(dims))
    for axis, d, limit in zip("xyz", dims, limits):
        if d > limit:
            raise LaunchError(f"cudaErrorInvalidConfiguration: {name}.{axis} = {d} exceeds the device limit {limit}")
    return dims


def launch(kernel, grid, block, args=(), device: Device = H100, shared_bytes: int = 0, blocks_per_pass=None,
           tools=TOOLS, max_dynamic_shared_bytes=None, trace=None) -> Stats:
    """Run ``kernel(blk, *args)`` block after block and return its ``Stats``; the same
    signature as ``simtdocs.launch`` (``blocks_per_pass`` and ``trace`` are ignored)."""
    block = _dims("block", block, device.max_block_dims)
    grid = _dims("grid", grid, device.max_grid_dims)
    threads = block[0] * block[1] * block[2]
    if threads > device.max_threads_per_block:
        raise LaunchError(
            f"cudaErrorInvalidConfiguration: {threads:,} threads per block "
            f"({block[0]}×{block[1]}×{block[2]}); {device.name} allows {device.max_threads_per_block:,}"
        )
    if not isinstance(args, tuple):
        raise LaunchError(f"args must be a tuple of the kernel's arguments, got {type(args).__name__}; "
                          f"for one argument write args=(a,)")
    tools = (tools,) if isinstance(tools, str) else tuple(tools)
    for tool in tools:
        if tool not in TOOLS:
            raise LaunchError(f"unknown tool {tool!r}; the tools are {', '.join(TOOLS)}")
    limit = device.max_shared_per_block if max_dynamic_shared_bytes is not None else STATIC_SHARED_LIMIT
    for what, n in (("shared_bytes", shared_bytes), ("max_dynamic_shared_bytes", max_dynamic_shared_bytes)):
        if n is not None and not 0 <= n <= limit:
            raise LaunchError(f"cudaErrorInvalidValue: {what}={n:,} bytes of dynamic shared memory per block; "
                              f"{device.name} allows {limit:,}" + ("" if limit > STATIC_SHARED_LIMIT else
                              " without launch(..., max_dynamic_shared_bytes=N)"))
    if max_dynamic_shared_bytes is not None and shared_bytes > max_dynamic_shared_bytes:
        raise LaunchError(f"cudaErrorInvalidValue: shared_bytes={shared_bytes:,} exceeds "
                          f"max_dynamic_shared_bytes={max_dynamic_shared_bytes:,}")
    name = getattr(kernel, "__name__", "kernel")
    L = _Launch(name, grid, block, device, shared_bytes, max_dynamic_shared_bytes, tools)
    read_only = []
    for a in args:
        if isinstance(a, np.ndarray):
            a = a.view()
            a.flags.writeable = False  # writes go through blk.store, which counts and checks them
        read_only.append(a)
    for linear in range(grid[0] * grid[1] * grid[2]):
        try:
            kernel(Block(L, linear), *read_only)
        except ValueError as exc:
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            where = f"{name} (line {frame.lineno}: {frame.line})"
            if "truth value of an array" in str(exc):
                raise SimulatorError(
                    f"{where} branches in Python on an array of threads "
                    f"or blocks. Threads take branches with masks (m = cond; blk.load(..., mask=m)) or "
                    f"blk.branch(cond); for Python logic per block, launch with blocks_per_pass=1."
                ) from exc
            if "read-only" in str(exc):
                raise SimulatorError(
                    f"{where} writes to a kernel argument directly; kernel arguments are read-only here: "
                    f"write with blk.store(array, index, value), which counts and checks the access"
                ) from exc
            raise
    L.stats.races = [race for _, race in sorted(L.races, key=lambda r: r[0])]
    for counters in L.stats.by_site.values():
        L.stats.totals.add(counters)
    return L.stats
