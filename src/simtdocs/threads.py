"""Threads, warps and masks: which lanes one instruction runs for.

The simulator runs a *pass* of B blocks of T threads at once, so a per-thread value is an
array of shape (B, T). Thread ``t`` of a block is lane ``t % 32`` of warp ``t // 32``; when T
is not a multiple of 32 the last warp is partial and its missing lanes never run.

Everything the hardware counts, it counts per warp instruction. So the counting code looks
at warps as *rows* of 32 lanes: ``Geometry.rows`` turns a (B, T) array into (B·W, 32), W
warps per block, and ``Lanes`` holds the active lanes of one instruction as such rows.
"""

from __future__ import annotations

import functools

import numpy as np

from . import affine

#: Lanes of a warp. The counters, shuffles and votes are all defined for this width.
WARP_SIZE = 32


@functools.lru_cache(maxsize=32)
def geometry(grid: tuple[int, int, int], block: tuple[int, int, int]) -> "Geometry":
    """The ``Geometry`` of a launch configuration, shared by the launches that use it (it
    holds nothing but the numbering and what is derived from it)."""
    return Geometry(grid, block)


class Geometry:
    """The thread numbering of one launch: ``threadIdx`` of every thread of a block."""

    def __init__(self, grid: tuple[int, int, int], block: tuple[int, int, int]):
        self.grid = grid
        self.bdx, self.bdy, self.bdz = block
        self.threads = self.bdx * self.bdy * self.bdz
        self.warps = -(-self.threads // WARP_SIZE)
        tid = np.arange(self.threads, dtype=np.int32)[None, :]
        self.extent = tuple(grid) + tuple(block)
        self.tx = affine.variable(tid % self.bdx, 3, self.extent)
        self.ty = affine.variable((tid // self.bdx) % self.bdy, 4, self.extent)
        self.tz = affine.variable(tid // (self.bdx * self.bdy), 5, self.extent)
        self.tid = affine.index(tid, affine.Form(0, (0, 0, 0, 1, self.bdx, self.bdx * self.bdy), self.extent))
        self.lane = tid % WARP_SIZE
        self.warp = tid // WARP_SIZE
        #: False for the missing lanes of a partial last warp.
        self.lane_exists = np.arange(self.warps * WARP_SIZE) < self.threads
        self.ragged = self.threads % WARP_SIZE != 0
        for shared in (self.lane, self.warp, self.lane_exists):  # launches share a geometry
            shared.flags.writeable = False

    def index(self, name: str) -> np.ndarray:
        """A fresh copy of ``tid``, ``tx``, ``ty``, ``tz``, ``lane`` or ``warp`` for one pass: a
        kernel may write into its own copy (``t = blk.tx; t += 1``) without touching the one the
        engine counts with."""
        a = getattr(self, name)
        return affine.index(a.copy(), a.form) if isinstance(a, affine.ThreadIndex) else a.copy()

    def thread_offsets(self, kx: int, ky: int, kz: int) -> np.ndarray:
        """``kx·tx + ky·ty + kz·tz`` for every thread of a block, (1, T) int64: the thread
        part of an affine index, which every access of a loop asks for again."""
        memo = self.__dict__.setdefault("_offsets", {})
        found = memo.get((kx, ky, kz))
        if found is None:
            if len(memo) >= 64:
                memo.clear()
            tx, ty, tz = (np.asarray(v, np.int64) for v in (self.tx, self.ty, self.tz))
            found = kx * tx + ky * ty + kz * tz
            found.flags.writeable = False  # shared by every access that asks
            memo[(kx, ky, kz)] = found
        return found

    def block(self, linear: int) -> tuple[int, int, int]:
        """``blockIdx`` of the block with linear id ``linear`` (x fastest)."""
        gx, gy, _ = self.grid
        return (linear % gx, (linear // gx) % gy, linear // (gx * gy))

    def thread(self, t: int) -> tuple[int, int, int]:
        """``threadIdx`` of thread ``t`` of a block."""
        return (t % self.bdx, (t // self.bdx) % self.bdy, t // (self.bdx * self.bdy))

    def rows(self, x: np.ndarray, fill=0) -> np.ndarray:
        """(B, T, ...) per-thread values as (B·W, 32, ...) warp rows; missing lanes get ``fill``."""
        B = x.shape[0]
        extra = x.shape[2:]
        if not self.ragged:
            return x.reshape((B * self.warps, WARP_SIZE) + extra)
        out = np.full((B, self.warps * WARP_SIZE) + extra, fill, dtype=x.dtype)
        out[:, : self.threads] = x
        return out.reshape((B * self.warps, WARP_SIZE) + extra)


def runs_of(flags: np.ndarray) -> list[tuple[int, int]]:
    """The runs ``(start, stop)`` of consecutive true entries of the 1-D bools ``flags``."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], flags.astype(np.int8), [0]])))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def warp_bits(rows: np.ndarray) -> np.ndarray:
    """(R, 32) bools, one warp a row, as (R,) uint32 masks: lane l is bit l (a ballot's layout).
    The 32 bools of a row are 32 bytes in a row, which ``packbits`` folds into 4."""
    return np.packbits(np.ascontiguousarray(rows), axis=1, bitorder="little").view("<u4")[:, 0]


def warp_any(rows: np.ndarray) -> np.ndarray:
    """(R, 32) bools, one warp a row, as (R,): whether the warp has a true lane. The 32 bytes
    of a row are read as four 64-bit words and OR-ed: ``any`` along so short an axis is
    about ten times slower."""
    if rows.shape[1] != WARP_SIZE:
        return rows.any(axis=1)
    w = np.ascontiguousarray(rows).view(np.uint64)
    return (w[:, 0] | w[:, 1] | w[:, 2] | w[:, 3]) != 0


def idle_ones(active: np.ndarray, dtype) -> np.ndarray:
    """All ones (in unsigned ``dtype``) on the lanes ``active`` leaves out, 0 on the others:
    1 − 1 and 0 − 1, wrapping. OR-ed or AND-ed with lane values it marks or clears the idle
    lanes without a branch per lane, which a mask no predictor can guess (a sparse matrix's
    rows ending anywhere) makes ``np.where`` and boolean assignment many times slower for."""
    return np.subtract(active.view(np.uint8), np.uint8(1), dtype=dtype, order="C")


def warp_all(rows: np.ndarray) -> np.ndarray:
    """(R, 32) bools as (R,): whether every lane of the warp is true (``warp_any``'s way)."""
    if rows.shape[1] != WARP_SIZE:
        return rows.all(axis=1)
    w = np.ascontiguousarray(rows).view(np.uint64)
    return (w[:, 0] & w[:, 1] & w[:, 2] & w[:, 3]) == _ALL_TRUE


_ALL_TRUE = np.uint64(0x0101010101010101)  # eight bools, every one true


#: Beyond this many ways of masking one instruction across the blocks of a pass, go per block.
MAX_PATTERNS = 32  # a 3-D stencil's faces, edges and corners: 27


class Lanes:
    """The active threads of one instruction over a pass.

    ``mask`` is a dense (B, T) bool array, or None when every thread runs. Everything else is
    derived on first use: most instructions need only a few of these.
    """

    def __init__(self, geo: Geometry, first: int, blocks: int, mask: np.ndarray | None):
        self.geo = geo
        self.first = first  # linear id of the pass's first block
        self.blocks = blocks
        #: The mask of one block when every block of the pass has the same (else None).
        self.one = None if mask is None else mask[:1] if mask.strides[0] == 0 or blocks == 1 else None
        self.mask = mask

    @property
    def uniform(self) -> bool:
        """The same threads run in every block of the pass."""
        return self.mask is None or self.one is not None

    def single(self) -> "Lanes":
        """These lanes in the pass's first block alone (for a uniform instruction)."""
        if self.blocks == 1:
            return self
        return self.remember("single", lambda: Lanes(self.geo, self.first, 1, self.one))

    def without(self, bad: np.ndarray) -> "Lanes":
        """These lanes minus ``bad`` (a (B, T) mask of the same blocks)."""
        return Lanes(self.geo, self.first, self.blocks, ~bad if self.mask is None else self.mask & ~bad)

    def block_of(self, b: int) -> tuple[int, int, int]:
        """``blockIdx`` of block ``b`` of the pass."""
        return self.geo.block(self.first + b)

    @property
    def all(self) -> bool:
        return self.mask is None

    @functools.cached_property
    def count(self) -> int:
        """Active lanes: the ``active_lanes`` this instruction adds once per issue."""
        if self.mask is None:
            return self.blocks * self.geo.threads
        if self.one is not None:
            return self.blocks * int(np.count_nonzero(self.one))
        return int(np.count_nonzero(self.mask))

    @functools.cached_property
    def row_mask(self) -> np.ndarray | None:
        """(B·W, 32) bool: the active lanes of every warp; None when all 32 lanes of all run."""
        if self.mask is None:
            if not self.geo.ragged:
                return None
            exists = self.geo.lane_exists.reshape(self.geo.warps, WARP_SIZE)
            return np.broadcast_to(exists, (self.blocks,) + exists.shape).reshape(-1, WARP_SIZE)
        return self.geo.rows(self.mask, False)

    @functools.cached_property
    def row_any(self) -> np.ndarray | None:
        """(B·W,) bool: warps with an active lane, the warps that issue; None when all do."""
        if self.mask is None:
            return None
        return warp_any(self.row_mask)

    @functools.cached_property
    def patterns(self) -> list | bool:
        """The ways the blocks of the pass are masked: ``[(lanes of one block, its blocks), …]``,
        one entry per distinct mask row with an active lane, in the order of their first block
        (a guard such as ``x > 0`` leaves block 0 one way and the others another); blocks None
        when every block runs alike. Whatever depends on a block's lanes alone (its wavefronts,
        its sectors) is then worked out once per way. False beyond ``MAX_PATTERNS`` ways."""
        if self.uniform:
            return [(self.single(), None)]
        m = self.mask
        packed = np.ascontiguousarray(np.packbits(m, axis=1))
        rows = packed.view(np.dtype((np.void, packed.shape[1]))).reshape(-1)
        _, first, which = np.unique(rows, return_index=True, return_inverse=True)
        if first.size > MAX_PATTERNS + 1:
            return False
        found = []
        for k in np.argsort(first):
            f = int(first[k])
            if m[f].any():  # a block that runs every lane is all of it: the unmasked paths apply
                one = None if m[f].all() else m[f:f + 1]
                found.append((Lanes(self.geo, self.first + f, 1, one), np.flatnonzero(which.reshape(-1) == k)))
        return found

    def remember(self, key: str, compute):
        """``compute()``, worked out once for these lanes: a kernel passes one mask (a
        branch's) to many instructions, and an instruction's lanes never change, so what an
        access derives from them alone (runs of active blocks, mask patterns) is kept here."""
        memo = self.__dict__.setdefault("_remembered", {})
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    @functools.cached_property
    def block_any(self) -> np.ndarray:
        """(B,) bool: the blocks with an active lane."""
        if self.mask is None:
            return np.ones(self.blocks, bool)
        if self.one is not None:
            return np.full(self.blocks, bool(self.one.any()))
        return self.mask.any(axis=1)

    @functools.cached_property
    def idle_runs(self) -> list[tuple[int, int]]:
        """The runs ``(start, stop)`` of consecutive blocks of the pass with no active lane."""
        return runs_of(~self.block_any)

    @functools.cached_property
    def row_full(self) -> np.ndarray | None:
        """(B·W,) bool: warps whose every lane runs; None when all do."""
        if self.mask is None:
            return None
        return warp_all(self.geo.rows(self.mask, True))  # a missing lane of a partial warp counts as running

    @functools.cached_property
    def rows(self) -> int:
        """Warps with at least one active lane: the warp instructions this instruction issues."""
        if self.mask is None:
            return self.blocks * self.geo.warps
        if self.one is not None and self.blocks > 1:
            return self.blocks * self.single().rows
        return int(np.count_nonzero(self.row_any))

    @functools.cached_property
    def span(self) -> tuple[int, int]:
        """(first, last) active thread of the pass, counted block-major; (0, -1) when none is."""
        n = self.blocks * self.geo.threads
        if self.mask is None:
            return 0, n - 1
        if self.one is not None and self.blocks > 1:  # the same lanes in every block: the first and last block's
            t = np.flatnonzero(self.one[0])
            return (int(t[0]), n - self.geo.threads + int(t[-1])) if t.size else (0, -1)
        flat = np.ascontiguousarray(self.mask).reshape(-1)
        if not flat.any():
            return 0, -1
        return int(flat.argmax()), n - 1 - int(flat[::-1].argmax())

    @functools.cached_property
    def threads(self) -> tuple[np.ndarray, np.ndarray]:
        """(block in the pass, thread) of every active lane, in serial order."""
        if self.mask is None:
            T = self.geo.threads
            return np.repeat(np.arange(self.blocks), T), np.tile(np.arange(T), self.blocks)
        # np.nonzero of a 2-D mask is several times slower than finding the flat positions
        return np.divmod(np.flatnonzero(self.mask), self.geo.threads)

    def where(self, values: np.ndarray, fill=0) -> np.ndarray:
        """``values`` (B, T, ...) with the inactive lanes set to ``fill``."""
        if self.mask is None:
            return values
        if isinstance(fill, (int, float)) and fill == 0 and np.asarray(values).dtype.kind in "biuf":
            return self.cleared(np.array(values))
        m = self.mask.reshape(self.mask.shape + (1,) * (values.ndim - 2))
        return np.where(m, values, fill)

    def cleared(self, values: np.ndarray) -> np.ndarray:
        """``where(values)`` in place, for a fresh array the caller owns (a load's result).
        Numbers are cleared bit by bit (AND with ``keep``: a 0, +0.0 for floats, on the idle
        lanes)."""
        if self.mask is None:
            return values
        size = values.dtype.itemsize
        if values.dtype.kind in "biuf" and size in (1, 2, 4, 8) and values.flags.c_contiguous:  # zero: all zero bits
            bits = values.view(f"u{size}")
            keep = self.keep(size)
            np.bitwise_and(bits, keep.reshape(keep.shape + (1,) * (values.ndim - 2)), out=bits)
        else:
            values[self.idle] = 0
        return values

    def keep(self, size: int) -> np.ndarray:
        """(B, T) unsigned integers of ``size`` bytes: all ones on the lanes that run, 0 elsewhere."""
        return self.remember(("keep", size), lambda: np.invert(idle_ones(self.mask, f"u{size}")))

    @functools.cached_property
    def idle(self) -> np.ndarray:
        """(B, T) bool: the lanes that do not run."""
        return ~self.mask


class BranchMask(np.ndarray):
    """The mask ``blk.branch`` returns: the kernel's own (blocks, threads) array, which also
    remembers the ``Lanes`` it stands for, so the instructions under it need not find them
    again. It stays read-only until the kernel writes into it (``m &= v > 0``, ``m[...] = …``
    from Python): the write forgets the lanes first, so they never describe other values."""

    lanes: "Lanes | None" = None

    def __array_finalize__(self, obj):
        self.lanes = None  # a view, a copy or a result: plain values

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        plain = tuple(np.asarray(x) if isinstance(x, BranchMask) else x for x in inputs)
        if out is not None:
            # m &= blk.branch(…) with one side every lane (a loop that goes on): the result is
            # the other side, whose lanes are known.
            kept = _and_lanes(ufunc, method, inputs, out) if not kwargs else None
            for o in out:
                if isinstance(o, BranchMask):
                    o._forget()
            kwargs["out"] = tuple(np.asarray(o) if isinstance(o, BranchMask) else o for o in out)
            result = getattr(ufunc, method)(*plain, **kwargs)
            if kept is not None:
                out[0].lanes = kept
                out[0].flags.writeable = False
            return out[0] if len(out) == 1 else out
        return getattr(ufunc, method)(*plain, **kwargs)

    def __setitem__(self, key, value):
        self._forget()
        super().__setitem__(key, value)

    def fill(self, value):
        self._forget()
        super().fill(value)

    def _forget(self):
        self.lanes = None
        if not self.flags.writeable:
            self.flags.writeable = True


def _and_lanes(ufunc, method, inputs, out) -> "Lanes | None":
    """The lanes of ``a & b`` written into ``a`` when both are branch masks of the same pass
    that know their lanes and one of them is every lane (its values all true)."""
    if (ufunc is not np.bitwise_and and ufunc is not np.logical_and) or method != "__call__" or len(out) != 1 \
            or len(inputs) != 2 or out[0] is not inputs[0]:
        return None
    a, b = inputs
    if not (isinstance(a, BranchMask) and isinstance(b, BranchMask)) or a.lanes is None or b.lanes is None \
            or a.shape != b.shape or (a.lanes.first, a.lanes.blocks) != (b.lanes.first, b.lanes.blocks):
        return None
    if a.lanes.mask is None:
        return b.lanes
    return a.lanes if b.lanes.mask is None else None


def branch_mask(values: np.ndarray, lanes: "Lanes") -> BranchMask:
    """``values`` (blocks, threads) as a ``BranchMask`` that knows its ``lanes``."""
    m = np.ascontiguousarray(values).view(BranchMask)
    m.lanes = lanes
    m.flags.writeable = False
    return m
