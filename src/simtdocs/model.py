"""The programming model: ``launch`` a kernel over a grid of blocks of threads.

A kernel is a Python function ``kernel(blk, *args)`` written the way CUDA writes one:
"what does one thread do". ``blk`` hands it per-thread index arrays, so one Python
statement runs for every thread of the block at once, the way one warp instruction runs
for 32 lanes. ``if`` becomes a boolean mask; memory goes through ``blk.load`` and
``blk.store`` so the simulator can count sectors, wavefronts and hazards.

To be fast, ``blk`` stands for a *batch* of blocks: thread-indexed values have shape
(blocks in the batch, threads per block), ``blk.tx`` has shape (1, threads) and ``blk.bx``
(blocks, 1), and numpy broadcasting does the rest. Every counter is counted per warp
instruction, so it does not depend on the batch size. A kernel that branches in Python
on a block index (``if blk.bx == 0:``) needs ``launch(..., blocks_per_pass=1)``.

Where each concern lives: ``threads`` (warps and masks), ``affine`` (thread indices that
know they are ``c + a·bx + b·tx …``), ``global_memory`` and ``shared_memory`` (accesses,
sectors, wavefronts, hazards; ``global_runs`` for addresses of a known shape, ``arguments``
for where an array sits), ``memory`` (the counting), ``atomics``, ``warp_ops`` (shuffles
and votes), ``control`` (branches and barriers), ``diagnostics`` (the sanitizer's messages). ``simtdocs.reference`` is the same model
written one lane at a time: the definition every counter here must agree with.
"""

from __future__ import annotations

import functools
import itertools
import linecache
import sys

import numpy as np

from . import affine, allocator, control, global_memory, shared_memory, trace as tracing, warp_ops
from .configuration import _check, _dims, _explain, _Launch, _shared_limit
from .counters import Counters, Stats
from .devices import H100, Device
from .diagnostics import TOOLS, LaunchError, Site, exited_thread
from .indexing import one_row
from .promotion import promoted
from .shared_memory import Shared
from .threads import WARP_SIZE, BranchMask, Lanes

#: Threads simulated in one numpy pass; bounds the memory of a pass, not the result.
THREADS_PER_PASS = 1 << 22

#: One number per ``blk.exit`` call in the process: what a ``Lanes`` remembers it was checked against.
_EXITS = itertools.count(1)


def cdiv(a: int, b: int) -> int:
    """Ceiling division ⌈a / b⌉: the number of blocks of size ``b`` that cover ``a`` items."""
    return -(-a // b)


def _thread_index(name: str) -> functools.cached_property:
    def made(blk):
        return blk._geo.index(name)
    made.__name__ = name
    return functools.cached_property(made)


class Block:
    """What a kernel sees: the threads of a batch of blocks, and the calls that count.

    Per-thread indices: ``tx, ty, tz`` (``threadIdx``), ``tid`` (linear, x fastest),
    ``lane`` and ``warp`` (``tid % 32`` and ``tid // 32``). Per-block: ``bx, by, bz``
    (``blockIdx``). Shapes: ``bdx, bdy, bdz`` (``blockDim``) and ``gdx, gdy, gdz``
    (``gridDim``) are plain ints. Every method takes ``mask``: the threads that execute
    it (all when None), as the ``if`` around it would decide.
    """

    def __init__(self, launch_state: "_Launch", first: int, count: int):
        L = self._L = launch_state
        geo = self._geo = L.geometry
        self.bdx, self.bdy, self.bdz = L.block
        self.gdx, self.gdy, self.gdz = L.grid
        self.nthreads = geo.threads
        self.nblocks = count
        self.first = first
        self._shared: list[Shared] = []
        self._static_bytes = 0
        self._dynamic_bytes = 0
        self._contiguous_memo = None
        self._lanes_memo = None
        self._wavefronts_memo = None
        self._lane_plans = {}  # shared_memory._lane_plan's, by an index form's coefficients
        self._branch_memo = None
        self._all = Lanes(geo, first, count, None)
        #: (B, T) bool of the threads that exited (``exit``), None while none has.
        self._exited = None
        self._exit_epoch = 0

    # The indices are made on first use, each pass its own copy: a kernel may write into
    # them (``t = blk.tx; t += 1``), and most kernels read only two or three of the nine.
    tx, ty, tz, tid, lane, warp = (_thread_index(name) for name in ("tx", "ty", "tz", "tid", "lane", "warp"))

    @functools.cached_property
    def bx(self):
        return affine.variable(self._block_ids % self.gdx, 0, self._geo.extent)

    @functools.cached_property
    def by(self):
        return affine.variable((self._block_ids // self.gdx) % self.gdy, 1, self._geo.extent)

    @functools.cached_property
    def bz(self):
        return affine.variable(self._block_ids // (self.gdx * self.gdy), 2, self._geo.extent)

    @functools.cached_property
    def _block_ids(self):
        return np.arange(self.first, self.first + self.nblocks, dtype=np.int32)[:, None]  # 32-bit, as blockIdx is

    # -- bookkeeping -----------------------------------------------------------------------

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

    def _lanes(self, mask, site: Site | None = None) -> Lanes:
        """The active lanes of ``mask``; remembered for the same mask object, which a kernel
        usually passes to several instructions in a row. A kernel may narrow its mask in
        place (``m &= v > 0``), so a hit counts only when the values are still the same.
        Once threads have exited (``exit``), a mask that names one of them is an error."""
        lanes = self._mask_lanes(mask, site)
        if self._exited is not None:
            bad = lanes.remember(("exited", self._exit_epoch), lambda: self._first_exited(lanes))
            if bad is not None:
                b, t = bad
                raise exited_thread(site, self._geo.thread(t), lanes.block_of(b))
        return lanes

    def _first_exited(self, lanes: Lanes):
        """(block in the pass, thread) of the first exited thread ``lanes`` name, or None."""
        both = self._exited if lanes.all else lanes.mask & self._exited
        flat = np.flatnonzero(both)
        return None if flat.size == 0 else divmod(int(flat[0]), self.nthreads)

    def _mask_lanes(self, mask, site: Site | None = None) -> Lanes:
        if mask is None:
            return self._all
        if isinstance(mask, BranchMask) and mask.lanes is not None and mask.lanes.first == self.first \
                and mask.lanes.blocks == self.nblocks:
            return mask.lanes  # a mask from blk.branch, not written since
        memo = self._lanes_memo
        if memo is not None and memo[0] is mask and np.array_equal(memo[2], mask):
            return memo[1]
        m0 = np.asarray(mask)
        if m0.dtype != bool:
            raise TypeError(f"{site}: mask must be a boolean array, got dtype {m0.dtype}")
        try:
            m = np.broadcast_to(m0, (self.nblocks, self.nthreads))
        except ValueError:
            raise ValueError(f"{site}: the mask has shape {m0.shape}, which does not fit the threads "
                             f"of this pass (blocks {self.nblocks}, threads {self.nthreads})") from None
        kept = m0.copy()  # the kernel's array may change under the lanes and the memo
        if m0.all():
            lanes = self._all
        elif m0.ndim == 2 and one_row(m0).shape[0] == 1 < m0.shape[0]:
            lanes = Lanes(self._geo, self.first, self.nblocks, np.broadcast_to(kept[:1], m.shape))  # alike in every block
        else:
            lanes = Lanes(self._geo, self.first, self.nblocks, np.broadcast_to(kept, m.shape))
        self._lanes_memo = (mask, lanes, kept)
        return lanes

    @staticmethod
    def _issue(c: Counters, lanes: Lanes) -> int:
        """Count one warp instruction for every warp with an active lane; return how many."""
        c.warp_instructions += lanes.rows
        c.active_lanes += lanes.count
        return lanes.rows

    def _memory(self, kind, site, array, index, mask, width=1, value=None, op=None, compare=None):
        if not isinstance(width, (int, np.integer)) or width < 1:
            raise ValueError(f"{site}: width must be a positive integer")
        space = shared_memory if isinstance(array, Shared) else global_memory
        out = space.access(self, site, self._counters(site), self._lanes(mask, site), kind, array, index,
                           int(width), value, op, compare)
        if self._L.trace is not None:
            tracing.record(self, site, kind, array, index, mask, int(width))
        return promoted(out)

    # -- memory ----------------------------------------------------------------------------

    def shared(self, shape, dtype=np.float32, name: str = "shared", dynamic: bool = False) -> Shared:
        """Allocate a ``__shared__`` array of ``shape`` and ``dtype`` for each block.

        ``dynamic=True`` makes it ``extern __shared__``: carved out of the launch's
        ``shared_bytes``. Static arrays may total 48 KB per block.
        """
        return shared_memory.allocate(self, shape, dtype, name, dynamic)

    def load(self, array, index, mask=None, width: int = 1):
        """Each active thread reads ``array[index]`` (``width`` consecutive elements for a
        vector load such as ``float4``: then ``index`` is the first element and the result
        gains a last axis of length ``width``). Inactive lanes get 0.

        ``array`` is a numpy array in global memory or a ``Shared`` array. ``index`` is a
        per-thread integer array (a tuple of them for a multi-dimensional array).
        """
        return self._memory("read", self._site(), array, index, mask, width)

    def store(self, array, index, value, mask=None, width: int = 1) -> None:
        """Each active thread writes ``value`` to ``array[index]`` (see ``load``)."""
        self._memory("write", self._site(), array, index, mask, width, value)

    def atomic_add(self, array, index, value, mask=None):
        """``atomicAdd(&array[index], value)``: returns the old value of each active thread.

        Lanes are served one after another (blocks, then warps, then lanes, in order), so
        every addition lands and each thread sees the value just before its own.
        """
        return self._memory("atomic", self._site(), array, index, mask, 1, value, "add")

    def atomic_max(self, array, index, value, mask=None):
        """``atomicMax``: stores max(old, value); returns the old value (see ``atomic_add``)."""
        return self._memory("atomic", self._site(), array, index, mask, 1, value, "max")

    def atomic_min(self, array, index, value, mask=None):
        """``atomicMin``: stores min(old, value); returns the old value (see ``atomic_add``)."""
        return self._memory("atomic", self._site(), array, index, mask, 1, value, "min")

    def atomic_exch(self, array, index, value, mask=None):
        """``atomicExch``: stores value; returns the old value (see ``atomic_add``)."""
        return self._memory("atomic", self._site(), array, index, mask, 1, value, "exch")

    def atomic_cas(self, array, index, compare, value, mask=None):
        """``atomicCAS``: stores value where old == compare; returns the old value."""
        return self._memory("atomic", self._site(), array, index, mask, 1, value, "cas", compare)

    def atomic_and(self, array, index, value, mask=None):
        """``atomicAnd``: stores old & value; returns the old value (see ``atomic_add``)."""
        return self._memory("atomic", self._site(), array, index, mask, 1, value, "and")

    def atomic_or(self, array, index, value, mask=None):
        """``atomicOr``: stores old | value; returns the old value (see ``atomic_add``)."""
        return self._memory("atomic", self._site(), array, index, mask, 1, value, "or")

    def atomic_xor(self, array, index, value, mask=None):
        """``atomicXor``: stores old ^ value; returns the old value (see ``atomic_add``)."""
        return self._memory("atomic", self._site(), array, index, mask, 1, value, "xor")

    def atomic_inc(self, array, index, value, mask=None):
        """``atomicInc``: stores ``(old >= value) ? 0 : old + 1``; returns the old value."""
        return self._memory("atomic", self._site(), array, index, mask, 1, value, "inc")

    def atomic_dec(self, array, index, value, mask=None):
        """``atomicDec``: stores ``(old == 0 || old > value) ? value : old - 1``; returns the old value."""
        return self._memory("atomic", self._site(), array, index, mask, 1, value, "dec")

    # -- control flow ----------------------------------------------------------------------

    def branch(self, cond, mask=None) -> np.ndarray:
        """``if (cond)``: returns the mask of threads that take the ``if`` side.

        ``mask`` is the set of threads that reach the branch (all, by default). A warp whose
        reaching threads do not all agree is a divergent branch: it runs both sides.
        """
        site = self._site()
        return control.branch(self, site, self._counters(site), self._lanes(mask, site), cond)

    def sync(self, mask=None) -> None:
        """``__syncthreads()``: a barrier for the threads of the block that have not exited.

        ``mask`` says which threads reach it (all, by default). Since Volta a barrier "will
        not succeed until reached by all non-exited threads in the block" (CUDA C++
        Programming Guide, independent thread scheduling): threads that returned before it
        (``exit``) are not waited for. A barrier reached by only part of a block's
        non-exited threads is the synccheck error "divergent __syncthreads"; a block none of
        whose threads reach it (all of them exited, say) has no barrier there. Shared-memory
        accesses on either side of a barrier cannot race.
        """
        site = self._site()
        control.sync(self, site, self._counters(site), self._lanes(mask, site))

    def exit(self, mask=None) -> None:
        """``return`` from the kernel: the threads of ``mask`` (all, by default) exit.

        An exited thread runs nothing more, so every later instruction's mask leaves it out
        (naming it is an error), and barriers no longer wait for it: after
        ``blk.exit(i >= n)``, ``blk.sync(mask=i < n)`` is a barrier for the threads still
        running. It costs no instruction here: the ``if`` that chose the threads was counted
        as a branch, as the per-thread dialect's ``if i >= n: return`` is. Warp operations
        treat exited lanes as lanes that do not take part, as PTX does ("all non-exited
        threads in membermask"): ``syncwarp`` does not wait for them, votes do not count
        them (a ballot has 0 in their bits), and a shuffle that reads one reads a lane
        outside the mask (undefined on a GPU, an error here).
        """
        site = self._site()
        lanes = self._lanes(mask, site)  # a thread that already exited cannot return again
        if lanes.all:
            exited = np.ones((self.nblocks, self.nthreads), bool)
        else:
            now = np.broadcast_to(lanes.mask, (self.nblocks, self.nthreads))
            exited = np.array(now) if self._exited is None else self._exited | now
        self._exited = exited
        self._exit_epoch = next(_EXITS)

    def syncwarp(self, mask=None) -> None:
        """``__syncwarp()``: one warp instruction. Since Volta the lanes of a warp are not in
        lockstep: a shared-memory write by one lane and an access by another lane of the same
        warp race unless a ``syncwarp`` (or ``sync``) lies between them; racecheck says so."""
        site = self._site()
        lanes = self._lanes(mask, site)
        self._issue(self._counters(site), lanes)
        if self._shared and "racecheck" in self._L.tools:
            control.syncwarp(self, lanes)

    def alu(self, ops: int = 1, mask=None) -> None:
        """Count ``ops`` arithmetic warp instructions (add, compare, index math…) for every
        warp with an active lane.

        numpy does the arithmetic of a kernel without the simulator seeing it; a kernel that
        wants its instruction count to include arithmetic says so with this call.
        """
        site = self._site()
        c = self._counters(site)
        lanes = self._lanes(mask, site)
        c.warp_instructions += int(ops) * lanes.rows
        c.active_lanes += int(ops) * lanes.count

    # -- warp-level primitives ------------------------------------------------------------

    def _shuffle(self, value, source_lane, mask, name):
        site = self._site(3)
        return warp_ops.shuffle(self, site, self._counters(site), self._lanes(mask, site), value, source_lane, name)

    def shfl_down(self, value, delta: int, mask=None):
        """``__shfl_down_sync``: lane ``l`` gets ``value`` from lane ``l + delta`` of its warp
        (and keeps its own where ``l + delta ≥ 32``)."""
        return self._shuffle(value, self.lane + int(delta), mask, "__shfl_down_sync")

    def shfl_up(self, value, delta: int, mask=None):
        """``__shfl_up_sync``: lane ``l`` gets ``value`` from lane ``l - delta`` (its own where < 0)."""
        return self._shuffle(value, self.lane - int(delta), mask, "__shfl_up_sync")

    def shfl_xor(self, value, lane_mask: int, mask=None):
        """``__shfl_xor_sync``: lane ``l`` gets ``value`` from lane ``l ^ lane_mask``."""
        return self._shuffle(value, self.lane ^ int(lane_mask), mask, "__shfl_xor_sync")

    def shfl(self, value, src_lane, mask=None):
        """``__shfl_sync``: every lane gets ``value`` from lane ``src_lane % 32`` of its warp
        (``src_lane`` an int or a per-thread int array)."""
        return self._shuffle(value, np.asarray(src_lane) % WARP_SIZE, mask, "__shfl_sync")

    def _vote(self, pred, mask, how):
        site = self._site(3)
        return warp_ops.vote(self, site, self._counters(site), self._lanes(mask, site), pred, how)

    def ballot(self, pred, mask=None):
        """``__ballot_sync``: every active thread gets its warp's 32-bit mask of lanes whose
        ``pred`` is true (inactive threads get 0)."""
        return self._vote(pred, mask, "ballot")

    def any(self, pred, mask=None):
        """``__any_sync``: true for the active threads of a warp where some active lane's pred is."""
        return self._vote(pred, mask, "any")

    def all(self, pred, mask=None):
        """``__all_sync``: true for the active threads of a warp where every active lane's pred is."""
        return self._vote(pred, mask, "all")


def _blocks_per_pass(grid, threads: int) -> int:
    """Blocks of one pass: about ``THREADS_PER_PASS`` threads, cut to whole rows of a 2-D grid
    (whole planes of a 3-D one) when that many fit, so that a pass is a box of blocks, which
    strided accesses move through one view; a whole 2-D or 3-D grid when it is at most an eighth
    more."""
    n = max(1, THREADS_PER_PASS // threads)
    gx, gy, gz = grid
    if gy * gz > 1 and gx * gy * gz <= n + n // 8:
        # A 2-D or 3-D grid a little over one pass (padded by a block per axis): cut, it would
        # leave a sliver of rows, each pass with the same idle column. A 1-D grid cut there
        # leaves its idle tail alone in the second pass, and the first pass runs every lane.
        return gx * gy * gz
    for whole in (gx * gy if gz > 1 else 0, gx if gy * gz > 1 else 0):
        if whole and n >= whole:
            return n - n % whole
    return n


def launch(kernel, grid, block, args=(), device: Device = H100, shared_bytes: int = 0,
           blocks_per_pass: int | None = None, tools=TOOLS, max_dynamic_shared_bytes: int | None = None,
           trace=None) -> Stats:
    """Run ``kernel(blk, *args)`` on every block of ``grid`` and return its ``Stats``.

    ``grid`` and ``block`` are ints or 1- to 3-tuples, as in ``kernel<<<grid, block>>>``.
    ``shared_bytes`` is the dynamic shared memory per block (the third launch parameter);
    above 48 KB it needs ``max_dynamic_shared_bytes`` (the opt-in attribute). ``tools``
    chooses the sanitizer checks, like ``compute-sanitizer --tool``: any of "memcheck"
    (without it an out-of-bounds lane reads 0 and its write is dropped), "racecheck",
    "synccheck" and "initcheck". The launch is checked before anything runs; an invalid one
    raises ``LaunchError`` naming the CUDA error. Numpy arguments are read-only inside the
    kernel: write with ``blk.store``.

    Blocks run in an order a GPU may choose: the blocks of a pass execute each instruction
    together, in blockIdx order (x fastest), and passes run one after another. Results and
    counters that do not depend on the order of blocks are the same for every
    ``blocks_per_pass``. A kernel whose control flow depends on what other blocks' atomics
    did (a lock taken with ``atomic_cas``, a ticket counter, a last-block-done flag) sees
    another legal interleaving at each batching: a correct kernel still computes the right
    result, but its counters may change. ``blocks_per_pass=1`` runs blocks one after
    another, as ``simtdocs.reference`` does, and counts what it counts.

    ``trace=(block, warp)`` records every memory instruction that one warp executes in
    ``stats.trace`` (``simtdocs.trace.AccessRecord``: lanes, byte addresses, sectors or
    wavefronts and banks); the block is an int (linear id) or a tuple like ``grid``.
    """
    name = getattr(kernel, "__name__", "kernel")
    allocator.keep_freed_memory()
    if not isinstance(args, tuple):
        raise LaunchError(f"args must be a tuple of the kernel's arguments, got {type(args).__name__}: "
                          f"write args=(a,) for one argument (args=(a) is just a)")
    tools = frozenset((tools,) if isinstance(tools, str) else tools)
    if not tools <= set(TOOLS):
        raise LaunchError(f"unknown tool {sorted(tools - set(TOOLS))[0]!r}: choose from {', '.join(TOOLS)}")
    block = _dims("block", block)
    grid = _dims("grid", grid)
    threads = block[0] * block[1] * block[2]
    if threads > device.max_threads_per_block:
        raise LaunchError(
            f"cudaErrorInvalidConfiguration: {threads:,} threads per block "
            f"({block[0]}×{block[1]}×{block[2]}); {device.name} allows {device.max_threads_per_block:,}"
        )
    _check("block", block, device.max_block_dims)
    _check("grid", grid, device.max_grid_dims)
    if shared_bytes < 0 or shared_bytes > device.max_shared_per_block:
        raise LaunchError(
            f"cudaErrorInvalidValue: {shared_bytes:,} bytes of dynamic shared memory per block; "
            f"{device.name} allows {device.max_shared_per_block:,}"
        )
    limit, reason = _shared_limit(device, shared_bytes, max_dynamic_shared_bytes)
    traced = tracing.target(trace, grid, block)
    stats = Stats(kernel=name, grid=grid, block=block, device=device, trace=None if traced is None else [])
    reserved = shared_bytes if max_dynamic_shared_bytes is None else max_dynamic_shared_bytes
    state = _Launch(name, grid, block, device, shared_bytes, reserved, limit, reason, tools, stats, traced)
    args = tuple(state.argument(a) for a in args)
    total = grid[0] * grid[1] * grid[2]
    per_pass = blocks_per_pass or _blocks_per_pass(grid, threads)
    for first in range(0, total, per_pass):
        blk = Block(state, first, min(per_pass, total - first))
        try:
            kernel(blk, *args)
        except ValueError as exc:
            _explain(name, exc)
            raise
    stats.races.extend(r for *_, r in sorted(state.race_log, key=lambda e: e[:3]))
    for counters in stats.by_site.values():
        stats.totals.add(counters)
    return stats
