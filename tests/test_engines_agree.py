"""The fast engine against the reference engine on random kernels.

A random kernel is real Python source, generated from a random list of operations (global
and shared loads and stores of every dtype, width, index dtype, stride, gather, view and
mask; branches, alu, syncs, syncwarp, the four shuffles, votes and atomics, and, with the
feature ``atomic_mix``, shared atomics mixed with plain accesses of the same elements, and, with
the feature ``exits``, threads that exit (``blk.exit``) before later barriers; and what readers
write: masks narrowed in place with ``&=``, ``|=``, ``^=``, index variables moved in place
with ``+=``, ``-=`` and slice assignment between two loads) over a random block shape (from
a list, or any 1-D, 2-D or 3-D shape of up to 256 threads) and grid. Its index arrays are tables indexed by ``[linear block id, tid]``,
so the kernel is the same whether blocks run one at a time or in batches. Every value a
``blk`` call returns is recorded per block through a side channel, so results are
compared without adding instructions.

Both engines must agree exactly on the arrays, every counter (totals and per source
line), the race records (sites included), every returned value, and, for an invalid
kernel, the exception (its type; with one block per pass also its first line).

``SIMTDOCS_LONG=1`` runs the long form (thousands of examples); ``benchmarks/agreement.py``
runs N examples outside pytest.
"""

from __future__ import annotations

import itertools
import linecache
import os
import random
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simtdocs
from simtdocs import reference
from simtdocs.diagnostics import TOOLS

INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
DTYPES = INTS + [np.float16, np.float32, np.float64]
BLOCKS = [(32,), (64,), (1,), (7,), (33,), (100,), (130,), (16, 16), (8, 4), (32, 2), (5, 7), (4, 3, 5), (2, 2, 8),
          (3, 3, 3), (32, 8), (1024,)]
GRIDS = [(1,), (2,), (3,), (4,), (2, 2), (1, 2, 2), (3, 1, 1), (7,), (2, 3)]
OPS = ["gload", "gload", "gstore", "gstore", "sload", "sload", "sstore", "sstore", "branch", "alu", "sync",
       "syncwarp", "shuffle", "shuffle", "vote", "atomic", "atomic", "inplace", "narrow", "moved_index"]
ALL = frozenset(OPS) | {"errors", "views", "wide", "tools", "dynamic", "index_dtypes", "tuple", "affine"}
#: Coefficients of affine indices, in units of the access width (see ``Builder.affine``).
COEFS = [0, 0, 1, 1, -1, 2, 3, 8, 32, 33, -32]


class Chooser:
    """Random choices, from hypothesis (``draw``) or from ``random.Random`` (benchmarks)."""

    def __init__(self, draw=None, seed=0):
        self.draw = draw
        self.random = random.Random(seed)
        self.rng = np.random.default_rng(self.integers(0, 2**32 - 1))

    def integers(self, lo, hi):
        return self.draw(st.integers(lo, hi)) if self.draw else self.random.randint(lo, hi)

    def choice(self, seq):
        return seq[self.integers(0, len(seq) - 1)]

    def chance(self, percent):
        return self.integers(0, 99) < percent


@dataclass
class Program:
    source: str
    block: tuple
    grid: tuple
    tables: list
    arrays: list  # (name, base 1-D array, offset in elements, shape)
    tools: tuple = TOOLS
    shared_bytes: int = 0
    filename: str = ""
    risks: frozenset = frozenset()

    def kernel(self):
        linecache.cache[self.filename] = (len(self.source), None, self.source.splitlines(True), self.filename)
        scope = {"np": np}
        exec(compile(self.source, self.filename, "exec"), scope)
        return scope["kernel"]

    def fresh_args(self):
        bases = [base.copy() for _, base, _, _ in self.arrays]
        views = [b[k:k + int(np.prod(shape))].reshape(shape) for b, (_, _, k, shape) in zip(bases, self.arrays)]
        return bases, views


class Recorder:
    """Side channel: every value a blk call returned, per (op number, linear block)."""

    def __init__(self):
        self.values = {}

    def __call__(self, n, lin, value):
        lin = np.asarray(lin).reshape(-1)
        value = np.asarray(value)
        rows = np.broadcast_to(value, (lin.size,) + value.shape[1:]) if value.ndim else np.broadcast_to(value, lin.shape)
        for i, b in enumerate(lin):
            self.values[(n, int(b))] = np.array(rows[i])


@dataclass
class Builder:
    c: Chooser
    block: tuple
    grid: tuple
    features: frozenset
    lines: list = field(default_factory=list)
    tables: list = field(default_factory=list)
    arrays: list = field(default_factory=list)
    inputs: list = field(default_factory=list)  # (name, dtype, shape, offset)
    outputs: list = field(default_factory=list)  # (name, dtype, shape, offset, region)
    shared: list = field(default_factory=list)  # (name, dtype, shape)
    regs: list = field(default_factory=list)  # (name, width, kind)
    masks: list = field(default_factory=list)
    count: itertools.count = field(default_factory=itertools.count)
    shared_bytes: int = 0
    tools: set = field(default_factory=lambda: {"memcheck", "racecheck", "synccheck", "initcheck"})
    risks: set = field(default_factory=set)  # kinds of invalid operation put in on purpose
    alive: np.ndarray | None = None  # (blocks, threads): the threads that have not exited (feature "exits")
    alive_expr: str = "None"  # the same as a table expression

    def __post_init__(self):
        self.T = int(np.prod(self.block))
        self.nb = int(np.prod(self.grid))
        self.tid = np.arange(self.T)
        self.rng = self.c.rng

    # -- pieces of source ---------------------------------------------------------------------

    def emit(self, text):
        self.lines.append("    " + text)

    def table(self, values, dtype=None):
        """A per-thread table as an expression: ``T[k][lin, tid]`` (one row per block), or
        ``T[k][tid]`` (shape (1, threads)) when every block has the same row, as an index
        built from ``blk.tx`` alone would be."""
        values = np.asarray(values)
        values = values.astype(dtype) if dtype is not None else values
        if (values == values[:1]).all() and self.c.chance(70):
            self.tables.append(np.ascontiguousarray(values[0]))
            return f"T[{len(self.tables) - 1}][tid]"
        self.tables.append(values)
        return f"T[{len(self.tables) - 1}][lin, tid]"

    def has(self, feature):
        return feature in self.features

    def error(self, percent, kind):
        """Whether to make this operation invalid (of ``kind``) on purpose."""
        if self.has("errors") and self.c.chance(percent):
            self.risks.add(kind)
            return True
        return False

    def index_dtype(self, lo, hi):
        if not self.has("index_dtypes"):
            return np.int64
        fits = [d for d in INTS if np.iinfo(d).min <= lo and hi <= np.iinfo(d).max]
        return self.c.choice(fits)

    # -- masks and values ---------------------------------------------------------------------

    def mask_array(self):
        """A concrete (blocks, threads) mask, or None for all threads."""
        kind = self.c.choice(["none", "none", "random", "prefix", "warps", "blocks", "empty"])
        if kind == "none":
            return None
        if kind == "random":
            p = self.c.choice([0.2, 0.5, 0.9])
            if self.c.chance(50):
                return np.broadcast_to(self.rng.random(self.T) < p, (self.nb, self.T))
            return self.rng.random((self.nb, self.T)) < p
        if kind == "prefix":
            return np.broadcast_to(self.tid < self.c.integers(0, self.T), (self.nb, self.T))
        if kind == "warps":
            keep = self.rng.random(-(-self.T // 32)) < 0.5
            return np.broadcast_to(keep[self.tid // 32], (self.nb, self.T))
        if kind == "blocks":
            keep = self.rng.random(self.nb) < 0.5
            return np.broadcast_to(keep[:, None], (self.nb, self.T))
        return np.zeros((self.nb, self.T), bool)

    def mask(self):
        """A mask expression; once threads have exited (``op_exit``), without them."""
        m = self._mask()
        if self.alive is None:
            return m
        return self.alive_expr if m == "None" else f"({self.alive_expr}) & ({m})"

    def _mask(self):
        if self.masks and self.c.chance(25):
            return self.c.choice(self.masks)
        if self.c.chance(8):  # one value per block, shape (blocks, 1)
            return f"lin % {self.c.integers(1, 3)} == {self.c.integers(0, 1)}"
        if self.c.chance(8):  # one value per thread, shape (1, threads)
            return f"blk.lane < {self.c.integers(0, 33)}"
        m = self.mask_array()
        return "None" if m is None else self.table(m)

    def living(self, m):
        """The concrete (blocks, threads) mask ``m`` without the threads that exited."""
        return m if self.alive is None else m & self.alive

    def value(self, dtype, width):
        """An expression of one value per thread (width > 1: a trailing axis of width)."""
        usable = [(n, w) for n, w, kind in self.regs if kind == "num" and w in (1, width)]
        if usable and self.c.chance(60):
            name, w = self.c.choice(usable)
            return name if w == width else f"{name}[..., None]"
        if width == 1 and self.c.chance(10):  # arithmetic on the indices, shapes (B, 1) and (1, T)
            return f"lin * {self.c.integers(0, 9)} + blk.warp"
        shape = (self.nb, self.T) + ((width,) if width > 1 else ())
        return self.table(self.rng.integers(0, 20, shape), self.c.choice([dtype, np.float64, np.int64]))

    def record(self, expr, width=1, kind="num"):
        n = next(self.count)
        name = f"r{n}"
        self.emit(f"{name} = {expr}")
        self.emit(f"R({n}, lin, {name})")
        self.regs.append((name, width, kind))
        return name

    # -- addresses ----------------------------------------------------------------------------

    def index(self, shape, itemsize, width, offset=0, region=None, shared=False):
        """Index expression (flat or tuple) of element indices valid for ``width``, per block
        inside ``region`` (elements per block) if given. ``shared``: of a shared array, whose
        affine indices usually name no block index."""
        size = int(np.prod(shape))
        n = self.nb * self.T
        self.taps = None
        if self.has("affine") and self.c.chance(30):
            expr = self.affine(shape, width, offset, region, shared)
            if expr is not None:
                return expr
        if self.c.chance(25):  # one thread after the other across blocks: i = start + width·(lin·bdx + tid)
            if region:
                start, fits = 0, region == width * self.T and offset % width == 0
            else:
                start = self.c.integers(0, 8) * width - offset % width
                fits = 0 <= start and start + width * n <= size
            if fits:
                order = np.arange(n).reshape(self.nb, self.T)
                if self.c.chance(40):  # backwards, within each block or across all of them
                    order = (order // self.T * self.T + self.T - 1 - order % self.T) if region or self.c.chance(50) \
                        else n - 1 - order
                flat = start + width * order
                return self.table(flat, self.index_dtype(int(flat.min()), int(flat.max())))
        rows = []
        uniform = region is None and self.c.chance(50)  # the same addresses in every block
        for b in range(self.nb):
            if uniform and rows:
                rows.append(rows[0])
                continue
            lo, hi = (b * region, (b + 1) * region) if region else (0, size)
            cands = np.arange(lo, hi - width + 1)
            cands = cands[(offset + cands) % width == 0]
            if cands.size == 0:
                return None
            pattern = self.c.choice(["linear", "gather", "broadcast", "reverse", "stride"])
            k = cands.size
            if pattern == "linear":
                pick = (self.c.integers(0, k - 1) + self.tid) % k
            elif pattern == "stride":
                pick = (self.c.integers(0, k - 1) + self.c.choice([2, 3, 4, 8, 16, 17, 32, 33]) * self.tid) % k
            elif pattern == "gather":
                pick = self.rng.integers(0, k, self.T)
            elif pattern == "broadcast":
                per_warp = self.rng.integers(0, k, -(-self.T // 32))
                pick = np.full(self.T, per_warp[0]) if self.c.chance(50) else per_warp[self.tid // 32]
            else:
                pick = (k - 1 - self.tid) % k
            rows.append(cands[pick])
        flat = np.stack(rows)
        # One thread past the end (or before the start): an error, or with memcheck off a
        # lane that is counted but moves no data.
        if ("memcheck" not in self.tools and self.c.chance(30)) or self.error(1, "bounds"):
            b, t = self.rng.integers(0, self.nb), self.rng.integers(0, self.T)
            past, before = size + (-(offset + size)) % width, -width + (-offset) % width  # aligned
            flat[b, t] = past if self.c.chance(70) else before
        if self.error(1, "float index"):
            return f"{self.table(flat, np.float64)}"
        if len(shape) == 2 and self.has("tuple") and self.c.chance(50) and flat.min() >= 0:
            r, col = np.divmod(flat, shape[1])
            return (f"({self.table(r, self.index_dtype(r.min(), r.max()))}, "
                    f"{self.table(col, self.index_dtype(col.min(), col.max()))})")
        return self.table(flat, self.index_dtype(int(flat.min()), int(flat.max())))

    def affine(self, shape, width, offset, region, shared=False):
        """An index computed from ``blk.tx``… and ``blk.bx``… by ``+`` and ``*`` (the simulator
        follows its form), sometimes written into afterwards (which must drop the form). Leaves
        ``self.taps``: the shifts of its last part that stay inside the array (a filter's taps),
        when the index was not written into."""
        size = int(np.prod(shape))
        tuple_index = len(shape) == 2 and width == 1 and region is None and self.c.chance(40)
        lin = np.arange(self.nb)
        gx, gy = self.grid[0], (self.grid + (1, 1))[1]
        bdx, bdy = self.block[0], (self.block + (1, 1))[1]
        variables = [(lin % gx)[:, None], (lin // gx % gy)[:, None], (lin // (gx * gy))[:, None],
                     (self.tid % bdx)[None], (self.tid // bdx % bdy)[None], (self.tid // (bdx * bdy))[None]]
        names = ["blk.bx", "blk.by", "blk.bz", "blk.tx", "blk.ty", "blk.tz"]

        def one(limit, step):  # an expression with values in [0, limit - step], multiples of step
            coefs = [self.c.choice(COEFS) * step for _ in names]
            if shared and self.c.chance(60):  # the same elements in every block (s[ty][tx + j])
                coefs[:3] = [0, 0, 0]
            if self.c.chance(8):  # one element for every thread (a filter's tap F[i][j], a counter)
                coefs = [0] * 6
            values = sum(k * v for k, v in zip(coefs, variables)) + np.zeros((self.nb, self.T), np.int64)
            const = -int(values.min()) + step * self.c.integers(0, 3)
            if region is not None:  # block b stays inside its own region of the array
                coefs[:3] = [region, region * gx, region * gx * gy]
                values = sum(k * v for k, v in zip(coefs, variables)) + np.zeros((self.nb, self.T), np.int64)
                const = -int((values - lin[:, None] * region).min())
                if (values - lin[:, None] * region).max() + const > region - step:
                    return None  # the threads would reach into other blocks' regions: order-dependent
            values = values + const
            if values.max() > limit - step and not self.error(3, "bounds"):
                return None
            text = " + ".join([str(const)] + [f"{k} * {name}" for k, name in zip(coefs, names) if k])
            if not any(coefs):  # per thread all the same, as readers write it (0 * i + f_row)
                text += f" + 0 * {self.c.choice(names)}"
            return text, values

        if tuple_index:
            parts = [one(shape[0], 1), one(shape[1], 1)]
        else:
            parts = [one(size, width)]
            if parts[0] is not None and (offset + parts[0][1].min()) % width:
                return None
        if any(p is None for p in parts):
            return None
        exprs = []
        written = False
        for text, values in parts:
            name = f"a{next(self.count)}"
            self.emit(f"{name} = {text}")
            if self.c.chance(20) and "blk.t" in text:  # a write into the index: its form must go
                self.emit(f"{name}[..., :1] = {name}[..., -1:]")
                written = True
            elif self.c.chance(10) and values.max() + width <= (size if len(parts) == 1 else shape[len(exprs)]) - width:
                self.emit(f"{name} += {width if len(parts) == 1 else 1}")
                written = True
            exprs.append(name)
        if not written:
            values, limit = parts[-1][1], (shape[1] if tuple_index else size)
            step = 1 if tuple_index else width
            self.taps = (exprs, [d for d in range(-3 * step, 3 * step + 1, step)
                                 if d and values.min() + d >= 0 and values.max() + d <= limit - step])
        return f"({exprs[0]}, {exprs[1]})" if tuple_index else exprs[0]

    def width(self, itemsize, shape=None):
        widths = [w for w in (1, 2, 4) if itemsize * w in (1, 2, 4, 8, 16)]
        if not self.has("wide"):
            return 1
        return self.c.choice(widths)

    # -- declarations -------------------------------------------------------------------------

    def declare(self):
        n_in = self.c.integers(1, 2)
        n_out = self.c.integers(1, 2)
        for i in range(n_in + n_out):
            dtype = np.dtype(self.c.choice(DTYPES))
            out = i >= n_in
            offset = self.c.integers(0, 5) if self.has("views") and self.c.chance(40) else 0
            if out:
                # Some regions are exactly width × threads, so i = lin·bdx·w + w·tid is contiguous.
                region = self.c.choice([1, 2, 4]) * self.T if self.T % 4 == 0 and self.c.chance(40) else self.c.integers(2, 40) * 4
                shape = (self.nb * region,)
            else:
                region = None
                shape = self.c.choice([(self.c.integers(1, 600),), (4 * self.nb * self.T + self.c.integers(0, 9),),
                                       (self.c.integers(1, 20), self.c.integers(1, 40))])
            size = int(np.prod(shape))
            base = self.rng.integers(0, 50, size + offset + self.c.integers(0, 3)).astype(dtype)
            name = f"{'o' if out else 'g'}{i}"
            self.arrays.append((name, base, offset, shape))
            (self.outputs if out else self.inputs).append((name, dtype, shape, offset, region))
        for i in range(self.c.integers(0, 2)):
            dtype = np.dtype(self.c.choice(DTYPES))
            size = self.c.integers(1, min(8 * self.T, 400))
            shape = (size,)
            if self.c.chance(30):
                cols = self.c.choice([c for c in (1, 2, 4, 8, 16, 17, 32, 33) if c <= size] or [1])
                shape = (max(1, size // cols), cols)
            dynamic = self.has("dynamic") and self.c.chance(20)
            name = f"s{i}"
            args = f"{shape}, np.{dtype.name}, name={name!r}" + (", dynamic=True" if dynamic else "")
            if dynamic:
                self.shared_bytes += int(np.prod(shape)) * dtype.itemsize
            self.emit(f"{name} = blk.shared({args})")
            self.shared.append((name, dtype, shape))
            size = int(np.prod(shape))
            if not self.error(8, "initcheck"):
                self.emit(f"for f in range(0, {size}, blk.nthreads):")
                self.emit(f"    blk.store({name}, f + tid, 1, mask=f + tid < {size})")
                if self.c.chance(85):
                    self.emit("blk.sync()")
        if self.has("tools") and self.c.chance(20):
            self.tools.discard(self.c.choice(sorted(self.tools)))

    # -- operations ---------------------------------------------------------------------------

    def op(self):
        if self.has("exits") and self.c.chance(15):  # (a draw only with the feature: old programs unchanged)
            return self.op_exit()
        if self.has("atomic_mix") and self.c.chance(40):  # (a draw only with the feature: old programs unchanged)
            return self.op_atomic_mix()
        kind = self.c.choice([o for o in OPS if o in self.features])
        getattr(self, "op_" + kind)()

    def op_atomic_mix(self):
        """Shared atomics and plain loads and stores of the same elements, as a histogram
        does them (update, read out, zero), sometimes with a ``syncwarp`` or a barrier (of
        every block or of some) between, sometimes with none: racecheck's atomic pairs."""
        usable = [(n, d, s) for n, d, s in self.shared if d.itemsize in (1, 2, 4, 8)]
        if not usable:
            return self.op_atomic()
        name, dtype, shape = self.c.choice(usable)
        idx = self.index(shape, dtype.itemsize, 1, shared=True)
        if idx is None:
            return
        other = self.index(shape, dtype.itemsize, 1, shared=True) if self.c.chance(40) else idx
        for _ in range(self.c.integers(2, 5)):
            step = self.c.choice(["atomic", "atomic", "load", "load", "store", "syncwarp", "sync"])
            at = idx if self.c.chance(70) else (other or idx)
            mask = self.mask()
            if step == "atomic":
                kind = self.c.choice(["add", "add", "max", "exch", "cas"])
                value = self.table(self.rng.integers(0, 5, (self.nb, self.T)), dtype)
                if kind == "cas":
                    compare = self.table(self.rng.integers(0, 3, (self.nb, self.T)), dtype)
                    self.record(f"blk.atomic_cas({name}, {at}, {compare}, {value}, mask={mask})")
                else:
                    self.record(f"blk.atomic_{kind}({name}, {at}, {value}, mask={mask})")
            elif step == "load":
                self.record(f"blk.load({name}, {at}, mask={mask})")
            elif step == "store":
                self.emit(f"blk.store({name}, {at}, {self.value(dtype, 1)}, mask={mask})")
            elif step == "syncwarp":
                self.op_syncwarp()
            else:
                self.op_sync()

    def op_gload(self):
        name, dtype, shape, offset, region = self.c.choice(self.inputs + self.outputs)
        w = self.width(dtype.itemsize, shape)
        idx = self.index(shape, dtype.itemsize, w, offset, region)
        if idx is None:
            return
        self.record(f"blk.load({name}, {idx}, mask={self.mask()}, width={w})", w)

    def op_gstore(self):
        name, dtype, shape, offset, region = self.c.choice(self.outputs)
        w = self.width(dtype.itemsize)
        idx = self.index(shape, dtype.itemsize, w, offset, region)
        if idx is not None:
            self.emit(f"blk.store({name}, {idx}, {self.value(dtype, w)}, mask={self.mask()}, width={w})")

    def op_sload(self):
        if self.shared:
            name, dtype, shape = self.c.choice(self.shared)
            w = self.width(dtype.itemsize, shape)
            idx = self.index(shape, dtype.itemsize, w, shared=True)
            if idx is not None:
                mask = self.mask()
                self.record(f"blk.load({name}, {idx}, mask={mask}, width={w})", w)
                if self.taps and self.taps[1] and self.c.chance(50):  # more taps of a filter, the same lanes
                    exprs, shifts = self.taps
                    for d in [self.c.choice(shifts) for _ in range(self.c.integers(1, 3))]:
                        tap = f"({exprs[0]}, {exprs[1]} + {d})" if len(exprs) == 2 else f"{exprs[0]} + {d}"
                        self.record(f"blk.load({name}, {tap}, mask={mask}, width={w})", w)

    def op_sstore(self):
        if self.shared:
            name, dtype, shape = self.c.choice(self.shared)
            w = self.width(dtype.itemsize, shape)
            idx = self.index(shape, dtype.itemsize, w, shared=True)
            if idx is not None:
                self.emit(f"blk.store({name}, {idx}, {self.value(dtype, w)}, mask={self.mask()}, width={w})")

    def op_branch(self):
        nums = [n for n, w, kind in self.regs if kind == "num" and w == 1]
        if nums and self.c.chance(50):
            cond = f"{self.c.choice(nums)} > {self.c.integers(0, 20)}"
        else:  # now and then one no thread takes (a loop's last test) or every thread does
            cond = self.table(self.rng.random((self.nb, self.T)) < self.c.choice([0.5, 0.5, 0.5, 0.0, 1.0]))
        name = self.record(f"blk.branch({cond}, mask={self.mask()})", 1, "bool")
        self.masks.append(name)

    def op_inplace(self):
        """``v += 1`` on a value a blk call returned: it is the kernel's own array."""
        nums = [n for n, w, kind in self.regs if kind == "num"]
        if nums:
            self.emit(f"{self.c.choice(nums)} += 1")

    def op_narrow(self):
        """A mask narrowed (or widened) in place, ``m &= cond``, then used again: the kernel's
        own array, which must be read afresh by every instruction after the change."""
        if not self.masks:
            return self.op_branch()
        name = self.c.choice(self.masks)
        how = self.c.choice(["&=", "&=", "|=", "^="])
        cond = self.table(self.rng.random((self.nb, self.T)) < self.c.choice([0.3, 0.7, 1.0]))
        self.emit(f"{name} {how} {cond}")
        self.emit(f"R({next(self.count)}, lin, {name})")
        if self.c.chance(60):
            self.masks.append(name)  # the next instructions likely take it
            getattr(self, "op_" + self.c.choice([o for o in ("gload", "gstore", "sload", "sstore", "atomic", "vote")
                                                  if o in self.features] or ["alu"]))()

    def op_moved_index(self):
        """An index the kernel keeps in a variable and moves in place between two loads
        (``j += d``, ``j -= d``, ``j[:] = …``, ``j[..., :1] = …``), as a loop over a table does."""
        targets = [(n, d, s, o) for n, d, s, o, _ in self.inputs if len(s) == 1]
        targets += [(n, d, s, 0) for n, d, s in self.shared if len(s) == 1]
        if not targets:
            return
        name, dtype, (size,), _ = self.c.choice(targets)
        if size < 2:
            return
        if self.c.chance(50) and self.nb * self.T < size:  # one run over the pass: the contiguous path
            start = self.c.integers(0, size - self.nb * self.T)
            values = start + np.arange(self.nb * self.T).reshape(self.nb, self.T)
        else:
            values = self.rng.integers(0, size, (self.nb, self.T))
        if any(s == name for s, _, _ in self.shared):  # a shared index is the same in every block
            values = np.broadcast_to(values[:1] % size, values.shape)
        var = f"j{next(self.count)}"
        dt = self.c.choice([np.int32, np.int64, np.intp])
        self.emit(f"{var} = np.array({self.table(values)} + 0 * lin, dtype=np.{np.dtype(dt).name})")
        mask = self.mask()
        self.record(f"blk.load({name}, {var}, mask={mask})")
        move = self.c.choice(["add", "sub", "assign", "first"])
        if move in ("add", "sub"):
            lo, hi = int(values.min()), int(values.max())
            d = self.c.integers(-lo, size - 1 - hi)
            self.emit(f"{var} {'+=' if move == 'add' else '-='} {d if move == 'add' else -d}")
        elif move == "assign":
            self.emit(f"{var}[:] = {self.table(self.rng.integers(0, size, (self.nb, self.T)))}")
        else:
            self.emit(f"{var}[..., :1] = {var}[..., -1:]")
        self.record(f"blk.load({name}, {var}, mask={mask if self.c.chance(70) else self.mask()})")

    def op_alu(self):
        self.emit(f"blk.alu({self.c.integers(1, 3)}, mask={self.mask()})")

    def op_sync(self):
        """A barrier of every (non-exited) thread, of some blocks, of none, or (an error
        unless synccheck is off) of part of a block's non-exited threads."""
        kind = self.c.choice(["all", "all", "blocks", "nobody", "part"])
        if kind == "all":
            self.emit("blk.sync()" if self.alive is None else f"blk.sync(mask={self.alive_expr})")
        elif kind == "blocks":
            blocks = np.broadcast_to(self.rng.random((self.nb, 1)) < 0.5, (self.nb, self.T))
            self.emit(f"blk.sync(mask={self.table(self.living(blocks))})")
        elif kind == "nobody":
            self.emit(f"blk.sync(mask={self.table(np.zeros((self.nb, self.T), bool))})")
        elif "synccheck" not in self.tools or self.error(30, "synccheck"):
            self.emit(f"blk.sync(mask={self.table(self.living(self.rng.random((self.nb, self.T)) < 0.5))})")

    def op_exit(self):
        """``if (…) return;``: threads exit (``blk.exit``), by a guard on the global thread
        index (the tail of the last blocks), by whole warps, by whole blocks, at random, none
        or all, sometimes through the counted branch that tests the guard, as the dialect
        compiles it; every later mask leaves them out (``mask``), and a barrier often comes
        right after (the guard before a tile's ``__syncthreads()``). Now and then, on
        purpose, a thread that already exited returns again: an error in both engines."""
        shape = (self.nb, self.T)
        alive = np.ones(shape, bool) if self.alive is None else self.alive
        kind = self.c.choice(["tail", "tail", "tail", "random", "warps", "blocks", "none", "all"])
        n = self.c.integers(0, self.nb * self.T)
        if kind == "tail":
            gone = np.arange(self.nb)[:, None] * self.T + self.tid >= n
        elif kind == "random":
            gone = self.rng.random(shape) < self.c.choice([0.1, 0.5])
        elif kind == "warps":
            gone = np.broadcast_to((self.rng.random(-(-self.T // 32)) < 0.4)[self.tid // 32], shape)
        elif kind == "blocks":
            gone = np.broadcast_to(self.rng.random((self.nb, 1)) < 0.5, shape)
        else:
            gone = np.full(shape, kind == "all")
        gone = gone & alive
        if (~alive).any() and self.error(3, "exited"):
            b, t = (int(x[0]) for x in np.nonzero(~alive))
            gone[b, t] = True
        elif kind == "tail" and self.c.chance(50):
            guard = self.record(f"blk.branch(lin * {self.T} + tid >= {n}, mask={self.alive_expr})", 1, "bool")
            self.emit(f"blk.exit(mask={guard})")
            gone = None
        if gone is not None:
            self.emit(f"blk.exit(mask={self.table(gone)})")
        else:
            gone = (np.arange(self.nb)[:, None] * self.T + self.tid >= n) & alive
        self.alive = alive & ~gone
        self.alive_expr = self.table(self.alive)
        if self.c.chance(40):
            self.op_sync()

    def op_syncwarp(self):
        self.emit(f"blk.syncwarp(mask={self.mask()})")

    def op_shuffle(self):
        kind = self.c.choice(["shfl_down", "shfl_up", "shfl_xor", "shfl"])
        lane = self.tid % 32
        if kind == "shfl":
            src_table = self.rng.integers(-40, 70, (self.nb, self.T))
            src = src_table % 32
            amount = self.table(src_table, self.index_dtype(-40, 70)) if self.c.chance(70) else None
            if amount is None:
                k = self.c.integers(0, 40)
                src, amount = np.full((self.nb, self.T), k % 32), str(k)
        else:
            k = self.c.integers(0, 33) if kind != "shfl_xor" else self.c.integers(0, 40)
            amount = str(k)
            s = {"shfl_down": lane + k, "shfl_up": lane - k, "shfl_xor": lane ^ k}[kind]
            src = np.broadcast_to(s, (self.nb, self.T))
        m = self.mask_array()
        active = np.ones((self.nb, self.T), bool) if m is None else m.copy()
        if self.alive is not None:
            active &= self.alive
            m = active  # (not None: exited threads must be left out)
        if not self.error(6, "shuffle"):
            changed = True
            while changed:  # drop lanes whose source lane is inside the warp but not active
                changed = False
                for b in range(self.nb):
                    for t in range(self.T):
                        s = int(src[b, t])
                        if active[b, t] and 0 <= s < 32:
                            u = t - t % 32 + s
                            if u >= self.T or not active[b, u]:
                                active[b, t] = False
                                changed = True
        mask = "None" if active.all() and m is None else self.table(active)
        values = [(n, w, k) for n, w, k in self.regs if k in ("num", "bool")]
        if values and self.c.chance(60):
            v, w, of = self.c.choice(values)
        else:
            w, of = 1, "num"
            v = self.table(self.rng.integers(0, 100, (self.nb, self.T)), self.c.choice(DTYPES))
        self.record(f"blk.{kind}({v}, {amount}, mask={mask})", w, of)

    def op_vote(self):
        kind = self.c.choice(["ballot", "any", "all"])
        pred = self.table(self.rng.random((self.nb, self.T)) < self.c.choice([0.1, 0.5, 0.95]))
        self.record(f"blk.{kind}({pred}, mask={self.mask()})", 1, "bits" if kind == "ballot" else "bool")

    def op_atomic(self):
        targets = [(n, d, s, 0, None) for n, d, s in self.shared] + self.outputs
        name, dtype, shape, offset, region = self.c.choice(targets)
        if dtype.itemsize not in (1, 2, 4, 8):
            return
        idx = self.index(shape, dtype.itemsize, 1, offset, region)
        if idx is None:
            return
        kind = self.c.choice(["add", "add", "max", "min", "exch", "cas"])
        value = self.rng.integers(0, 5, (self.nb, self.T))
        if dtype.kind == "f" and self.c.chance(50):  # fractions: the sum's rounding depends on the order
            value = value + self.rng.random((self.nb, self.T))
        value = self.table(value, dtype)
        if kind == "cas":
            compare = self.table(self.rng.integers(0, 3, (self.nb, self.T)), dtype)
            self.record(f"blk.atomic_cas({name}, {idx}, {compare}, {value}, mask={self.mask()})")
        else:
            self.record(f"blk.atomic_{kind}({name}, {idx}, {value}, mask={self.mask()})")

    def program(self, n):
        head = [f"def kernel(blk, T, R, {', '.join(name for name, *_ in self.arrays)}):",
                "    lin = blk.bx + blk.gdx * (blk.by + blk.gdy * blk.bz)",
                "    tid = blk.tid",
                "    for k, v in enumerate((blk.tx, blk.ty, blk.tz, blk.tid, blk.lane, blk.warp, blk.bx, blk.by, blk.bz)):",
                "        R(-1 - k, lin, v)",
                "    R(-10, lin, np.array([[blk.bdx, blk.bdy, blk.bdz, blk.gdx, blk.gdy, blk.gdz, blk.nthreads]]))"]
        # Every value again at the end: a returned array must not change when memory does.
        tail = [f"    R({1000 + int(name[1:])}, lin, {name})" for name, _, _ in self.regs]
        source = "\n".join(head + self.lines + tail) + "\n"
        tools = tuple(t for t in ("memcheck", "racecheck", "synccheck", "initcheck") if t in self.tools)
        return Program(source, self.block, self.grid, self.tables, self.arrays, tools, self.shared_bytes,
                       f"<random kernel {n}>", frozenset(self.risks))


_serial = itertools.count()


def block_shape(c: Chooser) -> tuple:
    """A block from the list, or (a third of the time) any shape of up to 256 threads in 1-D,
    2-D or 3-D, as a reader sizes blocks to the data rather than to warps."""
    if c.chance(67):
        return c.choice(BLOCKS)
    dims = c.integers(1, 3)
    x = c.integers(1, 70)
    y = c.integers(1, max(1, 256 // x)) if dims > 1 else 1
    z = c.integers(1, max(1, min(8, 256 // (x * y)))) if dims > 2 else 1
    return (x, y, z)[:dims]


def generate(c: Chooser, features=ALL) -> Program:
    """A random kernel: declarations, then 1 to 10 operations."""
    b = Builder(c, block_shape(c), c.choice(GRIDS), frozenset(features))
    b.declare()
    for _ in range(c.integers(1, 10)):
        b.op()
    return b.program(next(_serial))


# -- running and comparing ----------------------------------------------------------------------

def run(engine, p: Program, **kw):
    """Everything observable of one launch, or the exception it raised."""
    bases, views = p.fresh_args()
    rec = Recorder()
    try:
        stats = engine(p.kernel(), p.grid, p.block, args=(p.tables, rec, *views), tools=p.tools,
                       shared_bytes=p.shared_bytes, **kw)
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return {"error": (type(exc), str(exc).splitlines()[0] if str(exc) else "")}
    races = [(r.kind, r.block, r.warp, r.other_warp, r.lane, r.other_lane, r.array, r.address, r.index, r.site,
              r.other_site, r.atomic, r.other_atomic, r.hazards, r.across_warps) for r in stats.races]
    return {"arrays": bases, "totals": stats.totals, "by_site": dict(stats.by_site), "races": races,
            "values": rec.values}


def differences(p: Program, strict_messages=True) -> list[str]:
    """What differs between the reference and the fast engine at batching 1, 3 and default."""
    ref = run(reference.launch, p)
    found = []
    for per_pass in (1, 3, None):
        fast = run(simtdocs.launch, p, blocks_per_pass=per_pass)
        tag = f"blocks_per_pass={per_pass}"
        if "error" in ref or "error" in fast:
            r, f = ref.get("error"), fast.get("error")
            # Batched, blocks meet their errors in another order: with two kinds of error in
            # the kernel, another block's other error may come first.
            lenient = per_pass != 1 and len(p.risks) > 1
            if r is None or f is None or (r[0] is not f[0] and not lenient):
                found.append(f"{tag}: reference {r or 'ran'}, fast {f or 'ran'}")
            elif per_pass == 1 and strict_messages and r[1] != f[1]:
                found.append(f"{tag}: messages differ:\n  reference: {r[1]}\n  fast:      {f[1]}")
            continue
        for i, (a, b) in enumerate(zip(ref["arrays"], fast["arrays"])):
            if a.tobytes() != b.tobytes():
                found.append(f"{tag}: array {p.arrays[i][0]}: reference {a.tolist()}, fast {b.tolist()}")
        if ref["totals"] != fast["totals"]:
            found.append(f"{tag}: totals\n  reference {ref['totals']}\n  fast      {fast['totals']}")
        for site in sorted(set(ref["by_site"]) | set(fast["by_site"]), key=lambda s: s.lineno):
            a, b = ref["by_site"].get(site), fast["by_site"].get(site)
            if a != b:
                found.append(f"{tag}: line {site.lineno} ({site.source})\n  reference {a}\n  fast      {b}")
        if ref["races"] != fast["races"]:
            found.append(f"{tag}: races\n  reference {ref['races']}\n  fast      {fast['races']}")
        if ref["values"].keys() != fast["values"].keys():
            found.append(f"{tag}: recorded values {sorted(ref['values'])} vs {sorted(fast['values'])}")
        for key in sorted(ref["values"].keys() & fast["values"].keys()):
            a, b = ref["values"][key], fast["values"][key]
            if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
                found.append(f"{tag}: value r{key[0]} of block {key[1]}: reference {a.dtype}{a.tolist()}, "
                             f"fast {b.dtype}{b.tolist()}")
    return found


def describe(p: Program, found) -> str:
    return (f"launch grid={p.grid} block={p.block} tools={p.tools} shared_bytes={p.shared_bytes}\n"
            f"arrays: {[(n, str(b.dtype), k, s) for n, b, k, s in p.arrays]}\n{p.source}\n" + "\n".join(found))


@st.composite
def programs(draw, features=ALL):
    return generate(Chooser(draw), features)


def check(p: Program):
    found = differences(p)
    assert not found, describe(p, found)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_engines_agree_on_random_kernels(p):
    check(p)


@pytest.mark.skipif(not os.environ.get("SIMTDOCS_LONG"), reason="long form: set SIMTDOCS_LONG=1")
@settings(max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_engines_agree_on_random_kernels_long(p):
    check(p)


#: Every operation, and threads that exit (``blk.exit``, ``Builder.op_exit``) before later
#: barriers, warp operations and memory instructions that leave them out.
EXITS = ALL | {"exits"}


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(EXITS))
def test_engines_agree_on_early_exits(p):
    check(p)


@pytest.mark.skipif(not os.environ.get("SIMTDOCS_LONG"), reason="long form: set SIMTDOCS_LONG=1")
@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(EXITS))
def test_engines_agree_on_early_exits_long(p):
    check(p)


#: Kernels built mostly of shared-memory work, with atomics mixed into plain loads and stores
#: of the same elements (``Builder.op_atomic_mix``).
ATOMIC_MIX = frozenset({"sload", "sstore", "atomic", "sync", "syncwarp", "branch", "narrow", "alu", "atomic_mix",
                        "tools", "affine", "errors"})


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(ATOMIC_MIX))
def test_engines_agree_on_atomics_mixed_with_plain_shared_accesses(p):
    check(p)


@pytest.mark.skipif(not os.environ.get("SIMTDOCS_LONG"), reason="long form: set SIMTDOCS_LONG=1")
@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(ATOMIC_MIX))
def test_engines_agree_on_atomics_mixed_with_plain_shared_accesses_long(p):
    check(p)


# -- invalid launches and kernels, side by side -------------------------------------------------

def _static(nbytes, dynamic=0):
    def kernel(blk):
        blk.shared(nbytes // 4, np.float32, name="big")
        if dynamic:
            blk.shared(dynamic // 4, np.float32, name="dyn", dynamic=True)
    return kernel


def _body(line):
    """A kernel(blk, a, A) whose one line is ``line``."""
    scope = {"np": np}
    source = f"def kernel(blk, a, A):\n    {line}\n"
    filename = f"<invalid kernel {abs(hash(line))}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), scope)
    return scope["kernel"]


A1, A2 = np.zeros(64, np.float32), np.zeros((10, 20), np.float32)
INVALID = [
    (_body("pass"), dict(grid=2.0, block=32, args=(A1, A2))),
    (_body("pass"), dict(grid=(1, 2, 3, 4), block=32, args=(A1, A2))),
    (_body("pass"), dict(grid=1, block=(32, 33), args=(A1, A2))),
    (_body("pass"), dict(grid=1, block=32, args=A1)),
    (_body("pass"), dict(grid=1, block=32, args=(A1, A2), tools=("memchek",))),
    (_body("pass"), dict(grid=1, block=32, args=(A1, A2), shared_bytes=64 * 1024)),
    (_static(64 * 1024), dict(grid=1, block=32)),
    (_static(1024, 2048), dict(grid=1, block=32, shared_bytes=1024)),
    (_static(16 * 1024, 40 * 1024), dict(grid=1, block=32, shared_bytes=40 * 1024)),
    (_static(40 * 1024), dict(grid=1, block=32, max_dynamic_shared_bytes=200 * 1024)),
    (_body("a[blk.tx] = 1.0"), dict(grid=1, block=32, args=(A1, A2))),
    (_body("if blk.tx < 3: pass"), dict(grid=1, block=32, args=(A1, A2))),
    (_body("blk.load(a, np.arange(7))"), dict(grid=1, block=32, args=(A1, A2))),
    (_body("blk.load(a, blk.tx, mask=np.ones(7, bool))"), dict(grid=1, block=32, args=(A1, A2))),
    (_body("blk.load(a, blk.tx, mask=blk.tx)"), dict(grid=1, block=32, args=(A1, A2))),
    (_body("blk.store(a, blk.tx, np.ones(5))"), dict(grid=1, block=32, args=(A1, A2))),
    (_body("blk.load(a, blk.tx * 1.5)"), dict(grid=1, block=32, args=(A1, A2))),
    (_body("blk.load(a, blk.tx, width=3)"), dict(grid=1, block=32, args=(A1, A2))),
    (_body("blk.load(A, blk.tx)"), dict(grid=1, block=32, args=(A1, A2[:, ::2]))),
    (_body("blk.load(A, (blk.tx,))"), dict(grid=1, block=32, args=(A1, A2))),
    (_body("blk.load(A, (blk.tx % 10, blk.tx + 1))"), dict(grid=1, block=32, args=(A1, A2))),
    (_body("blk.load(A, (blk.tx % 10, 4 * (blk.tx % 5)), width=4)"), dict(grid=1, block=32, args=(A1, A2[:, 1:]))),
    (_body("blk.atomic_add(a, blk.tx + 40, 1)"), dict(grid=1, block=32, args=(A1, A2))),
    (_body("blk.shfl_up(blk.tx, 1, mask=blk.tx != 3)"), dict(grid=2, block=32, args=(A1, A2))),
    (_body("blk.shfl(blk.tx, 0, mask=blk.tx > 0)"), dict(grid=1, block=40, args=(A1, A2))),
    (_body("blk.sync(mask=blk.tx < 9)"), dict(grid=1, block=40, args=(A1, A2))),
    (_body("blk.load(blk.shared(4, name='s'), blk.tx % 4)"), dict(grid=1, block=32, args=(A1, A2))),
    (_body("blk.store(blk.shared(4, name='s'), blk.tx, 1.0)"), dict(grid=1, block=32, args=(A1, A2))),
    (_body("blk.load(blk.shared(64, np.float64, name='s'), 2 * blk.tx + 1, width=2)"), dict(grid=1, block=32, args=(A1, A2))),
]


@pytest.mark.parametrize("kernel, kw", INVALID, ids=[f"{i}" for i in range(len(INVALID))])
def test_invalid_launches_and_kernels_fail_alike(kernel, kw):
    errors = []
    for engine, extra in ((reference.launch, {}), (simtdocs.launch, {}), (simtdocs.launch, {"blocks_per_pass": 1})):
        with pytest.raises(Exception) as info:
            engine(kernel, **kw, **extra)
        errors.append((type(info.value), str(info.value).splitlines()[0]))
    assert errors[0] == errors[1] == errors[2]


# -- the lectures' kernels, side by side ----------------------------------------------------------

def _lecture_cases():
    """The lectures' kernels (from the companion scripts, through ``kernels``) and the test-only ones."""
    import kernels as k

    def f32(n):  # the same small integers on every call: exact sums, the same inputs for each engine
        return np.random.default_rng(n).integers(0, 9, n).astype(np.float32)

    def zeros(n):
        return np.zeros(n, np.float32)

    N, T = 64, 256  # T: the reductions' sdata has 256 words
    lane = np.arange(32)
    return {
        "vector_add": (k.vector_add, 4, 256, lambda: (f32(1000), f32(1000), zeros(1000), 1000)),
        "vector_add ragged block": (k.vector_add, 11, 100, lambda: (f32(1000), f32(1000), zeros(1000), 1000)),
        "bias_add": (k.bias_add, (5, 7), (16, 16), lambda: (f32(100 * 70), f32(100), 100, 70)),
        "bias_add_swapped": (k.bias_add_swapped, (7, 5), (16, 16), lambda: (f32(100 * 70), f32(100), 100, 70)),
        "scale": (k.scale, 3, 128, lambda: (f32(1000), zeros(1000), np.float32(3), 1000)),
        "pattern_kernel stride 3": (k.pattern_kernel, 2, 32, lambda: (f32(200), 3 * lane)),
        "pattern_kernel float4": (k.pattern_kernel, 1, 32, lambda: (f32(128), 4 * lane, 4)),
        "copy": (k.copy, (2, 2), (32, 8), lambda: (f32(N * N), zeros(N * N), N)),
        "transpose_naive": (k.transpose_naive, (2, 2), (32, 8), lambda: (f32(N * N), zeros(N * N), N)),
        "transpose_tiled": (k.transpose_tiled, (2, 2), (32, 8), lambda: (f32(N * N), zeros(N * N), N, 0)),
        "transpose_tiled padded": (k.transpose_tiled, (2, 2), (32, 8), lambda: (f32(N * N), zeros(N * N), N, 1)),
        "transpose_tiled no sync": (k.transpose_tiled, (2, 2), (32, 8), lambda: (f32(N * N), zeros(N * N), N, 1, False)),
        "transpose_tiled_sync_every_row": (k.transpose_tiled_sync_every_row, (2, 2), (32, 8),
                                           lambda: (f32(N * N), zeros(N * N), N, 1)),
        "bank_kernel": (k.bank_kernel, 1, 32, lambda: (33,)),
        "bank_kernel 64": (k.bank_kernel, 1, 32, lambda: (64,)),
        "reverse": (k.reverse, 1, 256, lambda: (f32(256), True)),
        "reverse no sync": (k.reverse, 1, 256, lambda: (f32(256), False)),
        "reduce_v1": (k.reduce_v1, 4, T, lambda: (f32(4 * T), zeros(4))),
        "reduce_v2": (k.reduce_v2, 4, T, lambda: (f32(4 * T), zeros(4))),
        "reduce_v3": (k.reduce_v3, 4, T, lambda: (f32(4 * T), zeros(4))),
        "reduce_v4": (k.reduce_v4, 4, T, lambda: (f32(8 * T), zeros(4))),
        "reduce_v5": (k.reduce_v5, 4, T, lambda: (f32(8 * T), zeros(4))),
        "shuffle_steps": (k.shuffle_steps, 1, 32, lambda: (f32(32), zeros(6 * 32))),
    }


LECTURE = _lecture_cases()


@pytest.mark.parametrize("name", list(LECTURE))
def test_lecture_kernels_agree(name):
    kernel, grid, block, make_args = LECTURE[name]
    results = []
    for engine, extra in ((reference.launch, {}), (simtdocs.launch, {}), (simtdocs.launch, {"blocks_per_pass": 3})):
        args = make_args()
        stats = engine(kernel, grid, block, args=args, **extra)
        arrays = [a.tobytes() for a in args if isinstance(a, np.ndarray)]
        races = [(r.kind, r.block, r.warp, r.other_warp, r.array, r.address, r.index, r.site, r.other_site,
                  r.atomic, r.other_atomic, r.hazards, r.across_warps) for r in stats.races]
        results.append((arrays, stats.totals, dict(stats.by_site), races))
    assert results[0] == results[1] == results[2]


def test_loaded_values_do_not_change_when_memory_does():
    def k(blk, a, out):
        s = blk.shared(4, np.int32, name="s")
        blk.store(s, blk.tx, blk.tx)
        v = blk.load(s, blk.tx)
        w = blk.load(a, blk.bx * 4 + blk.tx)
        blk.store(s, blk.tx, 9)  # same warp: no race, and v keeps what it read
        blk.store(a, blk.bx * 4 + blk.tx, 9 + 0 * blk.tx)
        blk.store(out, blk.bx * 8 + blk.tx, v)
        blk.store(out, blk.bx * 8 + 4 + blk.tx, w)

    for engine in (reference.launch, simtdocs.launch):
        a, out = np.arange(8, dtype=np.int32), np.zeros(16, np.int32)
        engine(k, 2, 4, args=(a, out))
        assert out.tolist() == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7], engine.__module__
