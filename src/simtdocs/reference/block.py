"""The reference engine's block: thread geometry, the per-instruction bookkeeping, control
flow (branches, barriers) and warp-level operations (shuffles, votes)."""

from __future__ import annotations

import linecache
import sys

import numpy as np

from .. import diagnostics, warp_ops
from ..counters import Counters
from ..diagnostics import Site
from .memory import WARP, MemoryInstructions, Shared


class Block(MemoryInstructions):
    """One block, as a kernel sees it (``kernel(blk, *args)``); ``nblocks`` is always 1.

    Per-thread index arrays have shape (1, threads): ``tx, ty, tz``, ``tid`` (x fastest),
    ``lane = tid % 32``, ``warp = tid // 32``. ``bx, by, bz`` have shape (1, 1).
    """

    def __init__(self, L, linear: int):  # L: the launch (reference._Launch)
        self._L = L
        self.bdx, self.bdy, self.bdz = L.block
        self.gdx, self.gdy, self.gdz = L.grid
        self.nthreads, self.nblocks = L.threads, 1
        self.tid = np.arange(self.nthreads, dtype=np.int32)[None, :]
        self.tx, self.ty, self.tz = self.tid % self.bdx, self.tid // self.bdx % self.bdy, self.tid // (self.bdx * self.bdy)
        self.lane, self.warp = self.tid % WARP, self.tid // WARP
        ids = np.array([[linear]], np.int32)  # 32-bit, as blockIdx is
        self.bx, self.by, self.bz = ids % self.gdx, ids // self.gdx % self.gdy, ids // (self.gdx * self.gdy)
        self._block = (int(self.bx[0, 0]), int(self.by[0, 0]), int(self.bz[0, 0]))
        self._shared: list[Shared] = []
        self._static = self._dynamic = 0
        self._exited = [False] * self.nthreads  # threads that returned (``exit``)

    # -- the pattern every instruction repeats -----------------------------------------------

    def _site(self) -> Site:
        """The kernel line that called the public method that called this one."""
        f = sys._getframe(2)
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
        """The threads of ``mask``; one that has exited cannot be among them."""
        if mask is None:
            active = [True] * self.nthreads
        else:
            m = np.asarray(mask)
            if m.dtype != bool:
                raise TypeError(f"{site}: mask must be a boolean array, got dtype {m.dtype}")
            try:
                active = [bool(x) for x in np.broadcast_to(m, (1, self.nthreads))[0]]
            except ValueError:
                raise ValueError(f"{site}: the mask has shape {m.shape}, which does not fit the threads "
                                 f"of this pass (blocks 1, threads {self.nthreads})") from None
        for t in range(self.nthreads) if True in self._exited else ():
            if active[t] and self._exited[t]:
                raise diagnostics.exited_thread(site, self._thread(t), self._block)
        return active

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
        """``__syncthreads()`` reached by the threads of ``mask``; it waits for the threads
        that have not exited (``exit``). None of them reach it: nothing at all. Some of the
        non-exited ones: synccheck error (with synccheck off it still acts as the barrier).
        All of them: one warp instruction per warp with a thread there, barriers += 1 for
        the block, a new race phase."""
        site = self._site()
        c = self._counters(site)
        active = self._active(mask, site)
        reached = sum(active)
        if reached == 0:
            return
        alive = [t for t in range(self.nthreads) if not self._exited[t]]
        if reached < len(alive) and "synccheck" in self._L.tools:
            raise diagnostics.divergent_barrier(reached, len(alive), self._block, site,
                                                [t for t in alive if not active[t]], self.nthreads - len(alive))
        for _, lanes in self._warps(active):
            self._issue(c, lanes)
        c.barriers += 1
        for s in self._shared:
            s.new_phase()

    def exit(self, mask=None) -> None:
        """``return``: the threads of ``mask`` exit. No instruction is counted (the branch that
        chose them was). Later instructions must leave them out of their masks; barriers
        stop waiting for them."""
        site = self._site()
        for t, a in enumerate(self._active(mask, site)):
            if a:
                self._exited[t] = True

    def syncwarp(self, mask=None) -> None:
        """``__syncwarp()``: one warp instruction per warp with an active lane. For racecheck,
        what those lanes did to shared memory before is ordered before what their warp does
        after (``Shared.syncwarp``). Exited lanes of the warp are not waited for (they are
        never active)."""
        site = self._site()
        c = self._counters(site)
        for w, lanes in self._warps(self._active(mask, site)):
            self._issue(c, lanes)
            for s in self._shared:
                s.syncwarp(w, {t % WARP for t in lanes})

    # -- warp-level --------------------------------------------------------------------------

    def shfl_down(self, value, delta: int, mask=None):
        """``__shfl_down_sync``: lane l gets ``value`` of lane l + delta."""
        return self._shuffle(self._site(), "__shfl_down_sync", value, lambda t: t % WARP + int(delta), mask)

    def shfl_up(self, value, delta: int, mask=None):
        """``__shfl_up_sync``: lane l gets ``value`` of lane l − delta."""
        return self._shuffle(self._site(), "__shfl_up_sync", value, lambda t: t % WARP - int(delta), mask)

    def shfl_xor(self, value, lane_mask: int, mask=None):
        """``__shfl_xor_sync``: lane l gets ``value`` of lane l ^ lane_mask."""
        return self._shuffle(self._site(), "__shfl_xor_sync", value, lambda t: t % WARP ^ int(lane_mask), mask)

    def shfl(self, value, src_lane, mask=None):
        """``__shfl_sync``: thread t gets ``value`` of lane ``src_lane[t] % 32`` (or one int for all)."""
        site = self._site()
        src = self._per_thread(src_lane, site, "source lane")
        return self._shuffle(site, "__shfl_sync", value, lambda t: int(src[t]) % WARP, mask)

    def _shuffle(self, site, name, value, source, mask):
        """Thread t reads the thread of lane ``source(t)`` of its warp. A source lane past the
        warp (< 0 or >= 32) keeps the thread's own value; a source inside the warp that is not
        active is an error. Inactive threads keep their own value. Per warp: shuffles (SHFL)."""
        v = np.asarray(value)
        v = self._per_thread(v, site, "value", v.shape[2:])
        active = self._active(mask, site)
        sources = {}  # active thread -> the thread it reads, when the source lane is inside the warp
        for t in range(self.nthreads):
            src = source(t)
            if active[t] and 0 <= src < WARP:
                sources[t] = t - t % WARP + src
        bad = [t for t, u in sources.items() if u >= self.nthreads or not active[u]]
        if bad:
            raise warp_ops.undefined_source(name, site, self._block, bad, [sources[t] for t in bad])
        out = v.copy()[None]
        c = self._counters(site)
        for _, lanes in self._warps(active):
            self._issue(c, lanes)
            c.shuffles += 1
            for t in lanes:
                if t in sources:
                    out[0, t] = v[sources[t]]
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
