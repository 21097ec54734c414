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
    ones = active.view(np.uint8).astype(dtype, order="C")  # a plain cast, then 1 - 1 or 0 - 1:
    ones -= 1  # twice as fast as one ufunc that casts as it subtracts
    return ones


def _active_ones(active: np.ndarray, dtype) -> np.ndarray:
    """All ones (unsigned ``dtype``) on the lanes ``active`` names, 0 elsewhere: 0 − 1 and
    0 − 0, wrapping (``idle_ones``' complement)."""
    ones = active.view(np.uint8).astype(dtype, order="C")
    np.negative(ones, out=ones)
    return ones


def warp_all(rows: np.ndarray) -> np.ndarray:
    """(R, 32) bools as (R,): whether every lane of the warp is true (``warp_any``'s way)."""
    if rows.shape[1] != WARP_SIZE:
        return rows.all(axis=1)
    w = np.ascontiguousarray(rows).view(np.uint64)
    return (w[:, 0] & w[:, 1] & w[:, 2] & w[:, 3]) == _ALL_TRUE


_ALL_TRUE = np.uint64(0x0101010101010101)  # eight bools, every one true


#: Lanes ``Lanes.span`` looks at a time for the last active one.
_SPAN_STEP = 1 << 16

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
        first = int(flat.argmax())  # the first true entry (or 0 when none is)
        if not flat[first]:
            return 0, -1
        # the last: backwards a slice at a time from the end (argmax of a reversed view of
        # millions of lanes is slow), where a guard's or a scattered mask's last lane lies
        for stop in range(n, first, -_SPAN_STEP):
            part = flat[max(first, stop - _SPAN_STEP):stop]
            if part.any():
                return first, stop - 1 - int(part[::-1].argmax())
        return first, first

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

    @functools.cached_property
    def scattered(self) -> bool:
        """Whether more than one warp in eight has active and idle lanes both (a branch on
        data, such as a sign): a mask no predictor guesses, for which a select by bits
        (``select_by_bits``) beats ``np.where``'s branch per lane. Only speed depends on it;
        ``blk.branch`` sets it from the warps it found divergent, which it has counted anyway."""
        if self.mask is None:
            return False
        if self.one is not None and self.blocks > 1:
            return self.single().scattered
        mixed = np.count_nonzero(self.row_any & ~self.row_full)
        return mixed * 8 > self.row_any.size

    def keep(self, size: int) -> np.ndarray:
        """(B, T) unsigned integers of ``size`` bytes: all ones on the lanes that run, 0 elsewhere."""
        return self.remember(("keep", size), lambda: _active_ones(self.mask, f"u{size}"))

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
    #: For the mask of an ``else`` (``runtime.else_``): the ``Lanes`` whose mask this one is the
    #: complement of, value for value, until the kernel writes into it.
    complement: "Lanes | None" = None
    #: A mask derived from a branch whose lanes are scattered (``scattered_like``): selects
    #: under it go by bits, worked out from its own values.
    scattered: bool = False

    def __array_finalize__(self, obj):
        self.lanes = None  # a view, a copy or a result: plain values
        self.complement = None
        self.scattered = False

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
        self.complement = None
        self.scattered = False
        self.__dict__.clear()  # what select_by_bits remembered of the values
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


def complement_mask(taken: BranchMask) -> np.ndarray:
    """``~taken``, the lanes of an ``else`` whose ``if`` took ``taken``; it remembers that it is
    the complement of ``taken``'s lanes, so a select under it can use their bits
    (``select_by_bits``). Written into, it forgets, as a ``BranchMask`` does."""
    out = np.logical_not(np.asarray(taken))
    lanes = taken.lanes if isinstance(taken, BranchMask) else None
    if lanes is None or lanes.mask is None:
        return out
    m = out.view(BranchMask)
    m.complement = lanes
    m.flags.writeable = False
    return m


def scattered_like(values: np.ndarray, taken) -> np.ndarray:
    """``values`` (a new (B, T) mask made from the branch mask ``taken``, such as the ``else``
    of a branch nested in another: ``outer & ~taken``), marked ``scattered`` when ``taken``'s
    lanes are, so a select under it goes by bits too. A hint for speed alone: the bits are
    worked out from ``values`` themselves."""
    lanes = taken.lanes if isinstance(taken, BranchMask) else None
    if lanes is None or type(values) is not np.ndarray or values.dtype != bool or values.shape != taken.shape \
            or not lanes.scattered:
        return values
    m = values.view(BranchMask)
    m.scattered = True
    m.flags.writeable = False
    return m


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
#: Lanes a select by bits works on at once (half a megabyte of 32-bit values): its three
#: passes over them stay in the core's cache.
_CHUNK = 1 << 17


def _by_bits_in_chunks(m: np.ndarray, x, y, u) -> np.ndarray:
    """``where(m, x, y)`` for the unsigned views ``x`` and ``y`` (C-ordered arrays of ``m``'s
    shape, or scalars), ``_CHUNK`` lanes at a time: each chunk's keep is made from the mask's
    bytes, then ``y ^ ((x ^ y) & keep)`` (``x & keep`` when ``y`` is zero), about a third
    faster than whole-array passes for millions of lanes."""
    bits = m.reshape(-1).view(np.uint8)
    n = bits.size
    out = np.empty(n, u)
    xs = x.reshape(-1) if isinstance(x, np.ndarray) else None
    ys = y.reshape(-1) if isinstance(y, np.ndarray) else None
    zero = ys is None and not y
    keep = np.empty(min(n, _CHUNK), u)
    for s in range(0, n, _CHUNK):
        e = min(s + _CHUNK, n)
        k, o = keep[:e - s], out[s:e]
        k[...] = bits[s:e]
        np.negative(k, out=k)  # 1 → all ones, 0 → 0
        xc = x if xs is None else xs[s:e]
        if zero:
            np.bitwise_and(xc, k, out=o)
            continue
        yc = y if ys is None else ys[s:e]
        np.bitwise_xor(xc, yc, out=o)
        np.bitwise_and(o, k, out=o)
        np.bitwise_xor(o, yc, out=o)
    return out.reshape(m.shape)


def select_by_bits(m, new, old):
    """``np.where(m, new, old)``, the same values, dtype and shape, made with bit operations
    (``old ^ ((new ^ old) & keep)``, ``keep`` all ones on the lanes of ``m``) when ``m`` is a
    branch's mask (its ``else``, or a mask ``scattered_like`` one) whose lanes are
    ``scattered``: there ``np.where`` pays a mispredicted branch for about every other lane
    (15 ms for 4 M float32 lanes at random, against 3 to 4 ms by bits; on a regular mask it
    is the faster, 2.5 ms). None when that does not apply (other masks, values of other
    types or shapes): the caller uses ``np.where``."""
    if type(m) is not BranchMask:
        return None
    a, b = new, old
    lanes = m.lanes
    if lanes is None and m.complement is not None:
        lanes, a, b = m.complement, old, new  # where(~k, new, old) is where(k, old, new)
    if lanes is not None:
        if lanes.mask is None or lanes.mask.shape != m.shape or not lanes.scattered:
            return None
    elif not m.scattered:
        return None
    dt = getattr(a, "dtype", None)
    if dt is None or getattr(b, "dtype", None) != dt or dt.kind not in "biuf" or dt.itemsize not in _UNSIGNED \
            or not dt.isnative:
        return None
    shape = m.shape
    for v in (a, b):
        if isinstance(v, np.ndarray):
            if v.shape != shape and not (v.ndim == 2 and v.shape[0] == 1 and v.shape[1] == shape[1]):
                return None
        elif not isinstance(v, np.generic):
            return None
    u = _UNSIGNED[dt.itemsize]
    x = np.asarray(a).view(u) if isinstance(a, np.ndarray) else a.view(u)
    y = np.asarray(b).view(u) if isinstance(b, np.ndarray) else b.view(u)
    if m.size >= 2 * _CHUNK and all(isinstance(v, np.generic) or (v.shape == shape and v.flags.c_contiguous)
                                    for v in (x, y)):
        mine = (x, y) if a is new else (y, x)  # m's own lanes choose new
        return _by_bits_in_chunks(np.asarray(m), *mine, u).view(dt)
    if lanes is not None:
        keep = lanes.keep(dt.itemsize)  # remembered: the loads and selects under these lanes share it
    else:
        key = f"_keep_{dt.itemsize}"
        keep = m.__dict__.get(key)
        if keep is None:
            keep = m.__dict__[key] = _active_ones(np.asarray(m), u)
    if isinstance(y, np.generic) and not y:  # old all zero bits (a fresh variable): new & keep
        return np.bitwise_and(x, keep).view(dt)
    t = np.bitwise_xor(x, y)
    t = np.bitwise_and(t, keep, out=t if t.shape == shape else None)
    np.bitwise_xor(t, y, out=t)
    return t.view(dt)
