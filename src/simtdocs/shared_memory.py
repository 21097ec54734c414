"""Shared memory: per-block arrays, bank wavefronts, and the hazards racecheck reports.

Each block has its own copy of every ``__shared__`` array. Besides the data the simulator
keeps, per element and per barrier phase, a bit per warp that read it and a bit per warp
that wrote it, and the source line of its latest read and latest write: enough to name
both lines of a race, as compute-sanitizer's racecheck does. A barrier clears the phase.
"""

from __future__ import annotations

import numpy as np

from . import affine, atomics, diagnostics, racecheck
from .diagnostics import LaunchError, index_text
from .global_memory import LANE_BYTES
from .indexing import as_slice, flat_index, one_row, per_thread
from .threads import Lanes
from .memory import distinct_per_warp, phases, wavefronts

#: Static ``__shared__`` per block that nvcc accepts; more must be dynamic and opted in.
STATIC_SHARED_LIMIT = 48 * 1024


class Shared:
    """A ``__shared__`` array: one copy per block, read and written with ``blk.load/store``.

    The bookkeeping tables (who read and wrote each element this phase, from which line,
    and whether it was ever written) are kept per *row*: blocks that have done exactly the
    same things to the array so far share one row. While every access has the same index
    and the same lanes in every block, which is how tiles are indexed (by ``tx``, ``ty``),
    there is one row for the whole pass. A guard that leaves some blocks out entirely (the
    extra blocks of a grid rounded up, a boundary guard) splits the rows in two, not into
    one per block; only an access that differs in other ways gives every block its own.
    """

    TABLES = ("writers", "readers", "last_write", "last_read", "lane_write", "read_warp", "read_lanes", "owner",
              "updaters", "last_atomic", "atomic_warp", "atomic_lanes", "written", "_stamp")
    #: Beyond this many rows, every block gets its own (the rows would cost more than they save).
    MAX_ROWS = 64

    def __init__(self, name: str, shape: tuple[int, ...], dtype, blocks: int, dynamic: bool = False):
        self.name, self.shape, self.dtype, self.dynamic = name, shape, np.dtype(dtype), dynamic
        size = int(np.prod(shape))
        self.data = np.zeros((blocks, size), self.dtype)
        self.row_of = None  # the table row of each block of the pass; None: one row for all
        self.writers = np.zeros(size, np.uint32)  # a bit per warp, this barrier phase
        self.readers = np.zeros(size, np.uint32)
        self.last_write = np.full(size, -1, np.int32)  # site id of the latest write
        self.last_read = np.full(size, -1, np.int32)
        # Inside a warp, until a syncwarp orders them: warp·32 + lane of the latest write (-1:
        # none), the one warp that read the element (-1: none, racecheck.MANY_WARPS: several) and its
        # reading lanes, a bit each.
        self.lane_write = np.full(size, -1, np.int16)
        self.read_warp = np.full(size, -1, np.int16)
        self.read_lanes = np.zeros(size, np.uint32)
        # The one thread that touched an element this phase, while there is one (racecheck).
        self.owner = np.full(size, racecheck.UNTOUCHED, np.int32)
        self.owned = False  # whether any element may be owned
        self.written_this_phase = False  # whether any write was logged since the last barrier
        # Atomics, as reads are kept: a bit per warp, the site of the latest, the one warp
        # (or racecheck.MANY_WARPS) and its lanes, until a syncwarp orders them.
        self.updaters = np.zeros(size, np.uint32)
        self.last_atomic = np.full(size, -1, np.int32)
        self.atomic_warp = np.full(size, -1, np.int16)
        self.atomic_lanes = np.zeros(size, np.uint32)
        self.atomics_this_phase = False  # whether any atomic was logged since the last barrier
        self.plain_this_phase = False  # whether any plain load or store was logged since then
        # Atomics with nothing plain before them in this phase: logged only if something
        # plain (or a syncwarp, or a barrier of some blocks) comes before the next barrier.
        self.pending_atomics = []
        self.line_slots, self.slot_lines = {}, np.full(racecheck.SLOT + 1, -1, np.int32)  # owners' lines
        self.written = np.zeros(size, bool)  # for initcheck: ever written by the block
        # Every element of every block written by the last barrier (initcheck has nothing left
        # to find): counted at barriers, not at every access; once true it stays true.
        self.all_written = False
        self._split = None  # (kinds, row_of, rows) of the last split
        self._stamp = np.zeros(size, np.int64)  # scratch: finds repeated elements

    @property
    def size(self) -> int:
        return self.data.shape[1]

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def uniform(self) -> bool:
        """One row of tables describes every block of the pass."""
        return self.row_of is None

    def _regroup(self, rows: np.ndarray, row_of) -> None:
        """New tables: row k a copy of old row ``rows[k]``; ``row_of`` maps blocks to the new rows."""
        for name in self.TABLES:
            table = getattr(self, name)
            setattr(self, name, table.reshape(-1, self.size)[rows].reshape(-1))
        self.row_of = row_of

    def per_block(self) -> None:
        """Give every block of the pass its own row of tables (a copy of its row)."""
        B = self.data.shape[0]
        if self.row_of is None or self.writers.size // self.size != B or (self.row_of != np.arange(B)).any():
            self._regroup(np.zeros(B, np.int64) if self.row_of is None else self.row_of, np.arange(B))

    def split(self, kind: np.ndarray | None):
        """Rows for an access that treats blocks by ``kind`` (per block: 0 runs none of it,
        1, 2, … a way of running it; None: every block the same way): blocks that shared a
        row and are of one kind keep sharing one. Returns ``{kind: [(row, blocks), …]}``
        for the kinds that run it, or None when that would take more than ``MAX_ROWS``
        rows (the caller then goes per block)."""
        B = self.data.shape[0]
        if self.row_of is None and kind is None:
            return {1: [(0, np.arange(B))]}
        memo = self._split  # a loop's accesses ask again with the same kinds
        if memo is not None and memo[0] is kind and memo[1] is self.row_of:
            return memo[2]
        asked = kind
        old = np.zeros(B, np.int64) if self.row_of is None else self.row_of
        kind = np.ones(B, np.int64) if kind is None else kind.astype(np.int64)
        span = int(kind.max()) + 1
        kinds, row_of = np.unique(old * span + kind, return_inverse=True)
        if kinds.size > self.MAX_ROWS:
            return None
        rows_now = 1 if self.row_of is None else self.writers.size // self.size
        if not (kinds.size == rows_now and (kinds // span == np.arange(rows_now)).all()):  # else: rows as they are
            self._regroup(kinds // span, None if kinds.size == 1 else row_of.astype(np.int64).reshape(-1))
        rows = np.zeros(B, np.int64) if self.row_of is None else self.row_of
        out = {}
        for r, k in enumerate(kinds % span):
            if k:
                out.setdefault(int(k), []).append((r, np.flatnonzero(rows == r)))
        self._split = (asked, self.row_of, out)
        return out

    def new_phase(self, blocks=None) -> None:
        """Forget who touched what in the ``blocks`` (all by default) that passed a barrier."""
        rows = None
        if blocks is not None and not blocks.all():
            racecheck.flush_atomics(self)  # the blocks that did not pass keep theirs
            found = self.split(blocks)
            if found is None:
                self.per_block()
                rows = np.flatnonzero(blocks)
            else:
                rows = np.array([r for r, _ in found.get(1, [])], np.int64)
        tables = [(self.writers, 0), (self.readers, 0), (self.last_write, -1), (self.last_read, -1),
                  (self.lane_write, -1), (self.read_warp, -1), (self.read_lanes, 0), (self.owner, racecheck.UNTOUCHED)]
        if self.atomics_this_phase:
            tables += [(self.updaters, 0), (self.last_atomic, -1), (self.atomic_warp, -1), (self.atomic_lanes, 0)]
        for table, empty in tables:
            if rows is None:
                table[:] = empty
            else:
                table.reshape(-1, self.size)[rows] = empty
        if rows is None:
            self.owned = False
            self.written_this_phase = self.atomics_this_phase = self.plain_this_phase = False
            self.pending_atomics = []
        elif self.written_this_phase:  # the blocks that did not pass keep their tables: any write left?
            rest = np.ones(self.writers.size // self.size, bool)
            rest[rows] = False
            owner = self.owner.reshape(-1, self.size)[rest]
            self.written_this_phase = bool(self.writers.reshape(-1, self.size)[rest].any()
                                           or (self.lane_write.reshape(-1, self.size)[rest] >= 0).any()
                                           or (owner[owner >= 0] & racecheck.WROTE).any())
        if not self.all_written:
            self.all_written = bool(self.written.all())

    def syncwarp(self, passed: np.ndarray) -> None:
        """The lanes that passed a ``__syncwarp``: ``passed`` (blocks, warps) holds a bit per
        lane (one row for every block when the tables are shared). What those lanes did is
        now ordered before whatever their warp does next."""
        racecheck.flush_atomics(self)
        if self.owned:  # a syncwarp changes what an owned element's tables would say
            racecheck.materialize(self)
        if passed.shape[0] > 1:
            self.per_block()
        size = self.size
        if passed.shape[0] == 1:  # the same lanes in every block: every row alike
            block = np.zeros(self.lane_write.size, np.int64)
        else:
            block = np.arange(self.lane_write.size) // size
        code = self.lane_write.astype(np.int64)
        wrote = np.flatnonzero(code >= 0)
        if wrote.size:
            w, lane = code[wrote] >> 5, code[wrote] & 31
            done = (passed[block[wrote], w] >> lane.astype(np.uint32)) & 1 == 1
            self.lane_write[wrote[done]] = -1
        for warps, lanes in ((self.read_warp, self.read_lanes), (self.atomic_warp, self.atomic_lanes)):
            read = np.flatnonzero(warps >= 0)
            if read.size:
                left = lanes[read] & ~passed[block[read], warps[read]]
                lanes[read] = left
                warps[read[left == 0]] = -1

    def __repr__(self) -> str:
        kind = "dynamic " if self.dynamic else ""
        return f"Shared({self.name!r}, {kind}{self.shape}, {self.dtype})"


def allocate(blk, shape, dtype, name: str, dynamic: bool) -> Shared:
    """``__shared__ T name[shape]`` (``extern __shared__`` when ``dynamic``), with the device's limits."""
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    arr = Shared(name, shape, dtype, blk.nblocks, dynamic)
    L = blk._L
    if dynamic:
        blk._dynamic_bytes += arr.nbytes
        if blk._dynamic_bytes > L.dynamic_shared:
            raise LaunchError(
                f"cudaErrorInvalidValue: {L.kernel_name}'s dynamic shared arrays need {blk._dynamic_bytes:,} bytes "
                f"per block, but the launch gave shared_bytes={L.dynamic_shared:,}"
            )
    else:
        blk._static_bytes += arr.nbytes
        if blk._static_bytes > STATIC_SHARED_LIMIT:
            raise LaunchError(
                f"{L.kernel_name} declares {blk._static_bytes:,} bytes of static __shared__ memory per block; "
                f"nvcc accepts at most {STATIC_SHARED_LIMIT:,} (48 KB). Make the large array dynamic: "
                f"blk.shared(..., dynamic=True) with launch(shared_bytes=..., max_dynamic_shared_bytes=...)"
            )
    # With the opt-in, CUDA checks static + the attribute's N; without it, static + shared_bytes.
    total = blk._static_bytes + L.dynamic_reserved
    if total > L.shared_limit:
        raise LaunchError(
            f"cudaErrorInvalidValue: {L.kernel_name} uses {total:,} bytes of shared memory per block "
            f"({blk._static_bytes:,} static + {L.dynamic_reserved:,} dynamic); {L.shared_limit_reason}"
        )
    blk._shared.append(arr)
    return arr


def _patterns(index, lanes):
    """The ways the blocks of the pass run this access, when its index is the same in every
    block: ``[(lanes of one block, its blocks), …]`` (blocks None: all of them), one entry
    per distinct mask row (blocks that run none of it are left out: a guard such as
    ``x > 0`` leaves block 0 one way and the others another). None when the index differs
    between blocks or the masks take more than ``threads.MAX_PATTERNS`` ways."""
    parts = index if isinstance(index, tuple) else (index,)
    if not all(np.ndim(i) < 2 or np.shape(i)[0] == 1 for i in parts):
        return None
    return lanes.patterns or None


def access(blk, site, c, lanes, kind: str, arr: Shared, index, width: int = 1, value=None, op=None, compare=None):
    """One warp-level shared load (``kind="read"``), store (``"write"``) or atomic."""
    itemsize = arr.dtype.itemsize
    lane_bytes = itemsize * width
    if lane_bytes not in LANE_BYTES:
        raise ValueError(f"{site}: a thread can move 1, 2, 4, 8 or 16 bytes at once, not {lane_bytes}")
    tools = blk._L.tools
    B = blk.nblocks
    wavefronts_left = False
    if arr.pending_atomics and kind != "atomic":  # a plain access: the atomics before it now count
        racecheck.flush_atomics(arr)
    # An index whose form names no block index and keeps every thread inside the array
    # (``s[ty][tx + j]``) is one row, checked by its form: its elements are the form's.
    form, inside = affine.address(index, arr.shape, blk._geo.extent, (B, blk.nthreads), width)
    if form is not None and inside and not any(form.coefs[:3]):
        formed = form.const + blk._geo.thread_offsets(*form.coefs[3:])
        patterns = lanes.patterns
    else:
        form = formed = None
        # An access with the same index in every block is counted for one block of each way
        # its blocks are masked, times the blocks masked that way.
        index = tuple(map(one_row, index)) if isinstance(index, tuple) else one_row(index)
        patterns = _patterns(index, lanes)
    if patterns is None or len(patterns) == 0:
        patterns = None
        one = lanes
        if formed is not None:
            flat, bad = np.broadcast_to(formed, (B, blk.nthreads)), None
        else:
            flat, bad, report = flat_index(arr.name, arr.shape, index, one, width, site)
        if bad is not None and "memcheck" in tools:
            report("__shared__", kind, itemsize)
        _check_alignment(arr, site, one, flat, width, lane_bytes)
        # An atomic of 4-byte words in many blocks sorts each block's lanes by element
        # (``_atomic_per_block``): its wavefronts are read off that sort, not sorted again.
        wavefronts_left = kind == "atomic" and B > 1 and lane_bytes == 4 and bad is None
        if not wavefronts_left:
            _count_wavefronts(blk, c, one, flat, itemsize, lane_bytes, 1)
    else:
        found = []
        for one, blocks in patterns:
            if formed is not None:
                found.append((one, blocks, formed, None, None))
            else:
                found.append((one, blocks) + flat_index(arr.name, arr.shape, index, one, width, site))
        if "memcheck" in tools:  # the lowest block with a lane out of bounds reports it
            for one, blocks, flat, bad, report in sorted(found, key=lambda f: f[0].first):
                if bad is not None:
                    report("__shared__", kind, itemsize)
        for one, blocks, flat, bad, report in sorted(found, key=lambda f: f[0].first):
            _check_alignment(arr, site, one, flat, width, lane_bytes)
        for one, blocks, flat, bad, report in found:
            _count_wavefronts(blk, c, one, flat, itemsize, lane_bytes, B if blocks is None else blocks.size)
    c.shared_requests += blk._issue(c, lanes)
    if patterns is not None and kind != "atomic":
        ways = None
        if patterns[0][1] is not None:
            ways = lanes.remember("ways", lambda: _ways(patterns, B))
        rows = arr.split(ways)
        if rows is not None:
            everyone = ways is None
            many_ways = len(found) > 2 and all(f[3] is None for f in found)
            if kind == "read" and not everyone and width == 1 and many_ways:
                # One index masked many ways (a 3-D stencil's faces, edges and corners): the
                # checks way by way, then one gather for every block, the idle lanes cleared.
                for k, (one, blocks, flat, bad, _) in enumerate(found, start=1):
                    _by_rows(blk, site, kind, arr, rows[k], one, flat, bad, width, value, lane_bytes, blocks, move=False)
                return lanes.cleared(np.take(arr.data, found[0][2][0], axis=1, mode="clip"))
            # Every block alike: the one move makes the result itself. Blocks that run it
            # with every lane (a padded grid's inner blocks) are written whole: only the others
            # need zeros.
            whole = kind == "read" and not everyone and len(found) == 1 and found[0][3] is None and \
                found[0][0].mask is None  # (Lanes.patterns gives a block that runs every lane no mask)
            out = None
            if kind == "read" and not everyone:
                out = (np.empty if whole else np.zeros)((B, blk.nthreads) + ((width,) if width > 1 else ()), arr.dtype)
            for k, (one, blocks, flat, bad, _) in enumerate(found, start=1):
                got = _by_rows(blk, site, kind, arr, rows[k], one, flat, bad, width, value, lane_bytes,
                               None if everyone else blocks, out, form=form)
                if everyone:
                    return got
            if whole:
                for a, b in lanes.idle_runs:
                    out[a:b] = 0
            return out
    if patterns is not None:  # per block after all: every lane's index
        if len(found) == 1 and found[0][1] is None:  # the same in every block
            flat = np.broadcast_to(found[0][2], (B, blk.nthreads))
            bad = None if found[0][3] is None else np.broadcast_to(found[0][3], (B, blk.nthreads))
        else:
            flat, bad, _ = flat_index(arr.name, arr.shape, index, lanes, width, site)
    return _per_block(blk, site, c, lanes, kind, arr, flat, bad, width, value, op, compare, lane_bytes,
                      wavefronts_left)


def _check_alignment(arr, site, one, flat, width, lane_bytes):
    if width > 1 and one.where(flat % width).any():
        b, t = (int(x[0]) for x in np.nonzero(one.where(flat % width != 0, False)))
        where = f"__shared__ access at element {int(flat[b, t])} of {arr.name} (not a multiple of {width})"
        raise diagnostics.misaligned(lane_bytes, where, site, one.geo.thread(t), one.block_of(b))


def _count_wavefronts(blk, c, one, flat, itemsize, lane_bytes, times):
    """Wavefronts of the lanes ``one`` (a block, or the pass), ``times`` blocks alike.

    Moving every lane by the same whole number of words moves each word to another bank,
    all by the same amount: which words share a bank does not change, nor the count. So a
    read-modify-write (``s[i] = s[i] + 1``) and a filter's taps (``s[ty][tx + j]``, one
    ``j`` after another) take the count of the access before them under the same lanes
    (kept with a copy of its index, which the kernel may change in place in between)."""
    memo = blk._wavefronts_memo
    if memo is not None and memo[0] is one and memo[1] == (itemsize, lane_bytes) and _shifted(flat, memo[2], itemsize):
        done, ideal = memo[3]
    else:
        k = max(1, lane_bytes // 4)  # 4-byte words per lane
        word = flat * itemsize // 4
        words = word[..., None] + np.arange(k) if k > 1 else word[..., None]
        done, ideal = wavefronts(*phases(one.geo.rows(words), one.row_mask))
        blk._wavefronts_memo = (one, (itemsize, lane_bytes), np.array(flat), (done, ideal))
    c.shared_wavefronts += done * times
    c.shared_ideal_wavefronts += ideal * times


def _shifted(flat: np.ndarray, before: np.ndarray, itemsize: int) -> bool:
    """Whether ``flat`` is ``before`` moved by one whole number of 4-byte words."""
    if flat.shape != before.shape or flat.size == 0:
        return False
    d = flat.flat[0] - before.flat[0]
    return d * itemsize % 4 == 0 and np.array_equal(flat - d, before)


def _lane_plan(blk, run, flat, width: int, form):
    """What ``_by_rows`` works out from one block's index and lanes: the elements the lanes
    reach (in lane order), their threads, warps and lanes, and the elements and lanes as
    slices or a ``_Grid`` where they are runs (numpy moves data by slices far faster).

    A formed index under the same lanes as an earlier access with the same coefficients
    (a filter's taps ``s[ty][tx + j]``, one ``j`` after another) is that access's plan moved
    by the difference of the constants: every element moves by it, nothing else changes."""
    memo = blk._lane_plans
    key = None if form is None else (form.coefs, width)
    if key is not None:
        hit = memo.get(key)
        if hit is not None and hit[0] is run:
            d = form.const - hit[1]
            elements, thread, warp, lane, cols, lanes_at = hit[2]
            if isinstance(cols, slice):
                cols = slice(cols.start + d, cols.stop + d, cols.step)
            elif isinstance(cols, _Grid):
                cols = _Grid(cols.start + d, cols.rows, cols.row_step, cols.cols, cols.step)
            else:
                cols = cols + d
            return elements + d, thread, warp, lane, cols, lanes_at
    _, t = run.threads
    elements = flat[0, t]
    thread = t
    if width > 1:
        elements = (elements[:, None] + np.arange(width)).reshape(-1)
        thread = np.repeat(t, width)
    cols, lanes_at = as_slice(elements), as_slice(t)
    if width == 1 and isinstance(cols, np.ndarray):
        cols = _Grid.of(cols) or cols
    plan = (elements, thread, thread // 32, thread % 32, cols, lanes_at)
    if key is not None:
        for a in plan[:4]:  # handed to every access that hits
            a.flags.writeable = False
        if len(memo) >= 64:
            memo.clear()
        memo[key] = (run, form.const, plan)
    return plan


def _by_rows(blk, site, kind, arr: Shared, rows, one, flat, bad, width, value, lane_bytes, active=None, out=None,
             move=True, form=None):
    """The access for blocks that share rows of tables (``rows``: ``[(row, blocks), …]``),
    all with the same lanes ``one`` and the same ``flat`` index (of one block): the checks
    once per row, then the data of every block that runs it in one move (none when not
    ``move``). ``active``: the blocks of the pass these are (None: all); a load fills their
    part of ``out``. ``form``: the index's form, when it has one (then ``flat`` is its)."""
    tools = blk._L.tools
    B, T = blk.nblocks, blk.nthreads
    run = one if bad is None else one.without(bad)
    plan = _lane_plan(blk, run, flat, width, form)
    elements, thread, warp, lane, cols, lanes_at = plan
    extra = (width,) if width > 1 else ()
    for r, blocks in rows:
        key = r * arr.size + elements
        if kind == "read" and "initcheck" in tools:
            _check_written(arr, site, Lanes(one.geo, blk.first + int(blocks[0]), 1, run.mask), key, width, lane_bytes)
        if "racecheck" in tools and not racecheck.owned_access(blk, arr, site, kind, key, thread):
            racecheck.hazards(blk, arr, site, kind, key, warp, lane, blocks)
        if kind == "write":
            arr.written[key] = True
    if not move:
        return None
    # The blocks' rows of data move a run of consecutive blocks at a time, by slices (numpy
    # copies rows far faster than elements); blocks scattered over the pass are copied
    # out and back as whole rows.
    if active is None:
        spans = [(0, B)]
    else:  # the pattern's lanes go with its blocks
        spans = one.remember("spans", lambda: _spans(active))
    scattered = spans is None
    holes = None
    if scattered:
        data, spans = arr.data[active], [(0, active.size)]
    else:
        data = arr.data
        if len(spans) > 1:
            # A few blocks between the runs (the last column of a padded grid): move the
            # whole range at once and put those blocks' rows back.
            holes = one.remember("holes", lambda: _holes(active))
            if holes.size * 4 <= spans[-1][1] - spans[0][0]:
                spans = [(spans[0][0], spans[-1][1])]
            else:
                holes = None
    if kind == "read":
        if out is None and not (active is None and run.all):
            out = np.zeros((B, T) + extra, arr.dtype)
        into = out[active] if scattered else out
        kept = None if holes is None else into[holes]
        lo, hi = spans[0][0], spans[-1][1]  # one gather from the first run to the last
        if isinstance(cols, slice) and into is not None:  # a view of the data: straight into the result
            for a, b in spans:
                into[a:b, lanes_at] = data[a:b, cols].reshape((b - a, -1) + extra)
            got = None
        elif (into is not None and len(spans) == 1 and isinstance(lanes_at, slice) and lanes_at == slice(0, T, 1)
              and not extra and isinstance(cols, (np.ndarray, _Grid))):  # every lane of a run of blocks: gathered in place
            rows = into[lo:hi]
            if isinstance(cols, _Grid):
                np.copyto(rows.reshape(hi - lo, cols.rows, cols.cols), cols.view(data[lo:hi]))
            else:
                np.take(data[lo:hi], cols, axis=1, out=rows)
            got = None
        elif isinstance(cols, slice):
            got = data[lo:hi, cols].copy()  # a slice is a view: the value must not change with memory
        elif isinstance(cols, _Grid):
            got = cols.view(data[lo:hi]).copy()
        else:
            got = np.take(data[lo:hi], cols, axis=1)
        if into is None:
            return got.reshape((hi - lo, -1) + extra)
        if got is not None:
            got = got.reshape((hi - lo, -1) + extra)
            for a, b in spans:
                into[a:b, lanes_at] = got[a - lo:b - lo]
        if holes is not None:
            into[holes] = kept
        if scattered:
            out[active] = into
        return out
    values = per_thread(np.asarray(value, dtype=arr.dtype), B, T, site, "value", extra)
    if scattered:
        values = values[active]
    if holes is not None:
        kept = data[holes]
    if isinstance(cols, _Grid):
        for a, b in spans:
            cols.view(data[a:b])[...] = values[a:b, lanes_at].reshape(b - a, cols.rows, cols.cols)
    else:
        cols, inverse = _as_gather(elements, cols)
        for a, b in spans:
            new = values[a:b, lanes_at].reshape(b - a, -1)
            # repeated elements: the later lane's value stays, as numpy leaves it
            data[a:b, cols] = new if inverse is None else np.take(new, inverse, axis=1)
    if holes is not None:
        data[holes] = kept
    if scattered:
        arr.data[active] = data
    return None


def _atomic_per_block(blk, c, lanes, run, arr: Shared, flat, value, op, compare, site, tables_too, checked=True,
                      wavefronts_left=False):
    """An atomic on every block's own copy: each block's lanes sorted by element
    (``atomics.PerBlock``; idle lanes left out), which is far faster than one sort of every
    running lane of the pass, and from which the instruction's conflicts (and, when
    ``wavefronts_left``, its wavefronts: ``access`` left them for this sort) are read off
    without sorting each warp again. Not ``checked`` by racecheck yet: it remembers those
    sorted lanes (``racecheck.atomic``)."""
    B, T = blk.nblocks, blk.nthreads
    values = per_thread(np.asarray(value, dtype=arr.dtype), B, T, site, "value")
    cmp = None if op != "cas" else per_thread(np.asarray(compare, dtype=arr.dtype), B, T, site, "compare")
    found = atomics.PerBlock(flat, arr.size, run.mask)
    if not checked:
        racecheck.atomic(blk, arr, site, lambda: (found.keys(), found.lanes()), T)
    old = atomics.apply_per_block(arr.data.reshape(-1), found, values, op, cmp)
    if tables_too:
        arr.written[found.keys()] = True
    if run is lanes and wavefronts_left:  # the same lanes: the sort has both counts
        distinct, done = found.counters()
        c.shared_wavefronts += done
        c.shared_ideal_wavefronts += lanes.rows
    elif run is lanes:
        distinct = found.distinct_per_warp()
    else:
        distinct = distinct_per_warp(lanes.geo.rows(flat), lanes.row_mask)
    atomics.count(c, lanes, distinct)
    return old.reshape(B, T)


def _holes(active: np.ndarray) -> np.ndarray:
    """The blocks between the first and the last of ``active`` (ascending) that are not in it."""
    missing = np.ones(int(active[-1]) - int(active[0]) + 1, bool)
    missing[active - active[0]] = False
    return int(active[0]) + np.flatnonzero(missing)


def _ways(patterns, B: int) -> np.ndarray:
    """Per block of the pass, which of the ``patterns`` runs it (1, 2, …; 0: none)."""
    ways = np.zeros(B, np.int64)
    for k, (_, blocks) in enumerate(patterns, start=1):
        ways[blocks] = k
    return ways


#: More runs of consecutive blocks than this, and the blocks' rows are copied out and back.
MAX_SPANS = 64


def _spans(active: np.ndarray) -> list[tuple[int, int]] | None:
    """The blocks ``active`` (ascending) as runs ``[(first, stop), …]``; None beyond ``MAX_SPANS``."""
    cut = np.flatnonzero(np.diff(active) != 1) + 1
    if cut.size >= MAX_SPANS:
        return None
    edges = np.concatenate([[0], cut, [active.size]])
    return [(int(active[i]), int(active[j - 1]) + 1) for i, j in zip(edges[:-1], edges[1:])]


def _as_gather(elements: np.ndarray, cols):
    """``(cols, inverse)`` for storing lane values at ``elements``: numpy scatters along a row
    slowly, so a permutation of a run of elements (a transposed tile) becomes the slice of
    that run and the gather ``inverse`` of the lanes' values; else ``(cols, None)``."""
    if isinstance(cols, slice) or elements.size == 0:
        return cols, None
    lo, n = int(elements.min()), elements.size
    if int(elements.max()) - lo + 1 == n and np.bincount(elements - lo, minlength=n).max() == 1:
        inverse = np.empty(n, np.int64)
        inverse[elements - lo] = np.arange(n)
        return slice(lo, lo + n), inverse
    return cols, None


def _per_block(blk, site, c, lanes, kind, arr: Shared, flat, bad, width, value, op, compare, lane_bytes,
               wavefronts_left=False):
    """The access with a row of tables for every block, lane by lane over the pass
    (``wavefronts_left``: an atomic whose wavefronts ``access`` left to be counted here)."""
    tools = blk._L.tools
    B = blk.nblocks
    # An atomic leaves the race tables alone and, once every element is written, initcheck's
    # too: it does not need tables per block.
    tables_too = not (kind == "atomic" and arr.uniform and arr.written.all())
    if tables_too:
        arr.per_block()
    flat = np.broadcast_to(flat, (B, blk.nthreads))
    bad = None if bad is None else np.broadcast_to(bad, (B, blk.nthreads))
    run = lanes if bad is None else lanes.without(bad)
    if kind == "atomic" and tables_too and "initcheck" in tools and not arr.all_written:
        # an atomic reads the element's old value: one no thread of the block wrote is undefined
        # (a shared histogram nobody zeroed)
        b, t = run.threads
        if op == "exch" and getattr(blk, "tracks_undefined", False):
            # a compiled kernel's exchange: its new value does not read the old one, and the old
            # one it returns is an undefined value the compiler follows (in the blk API, where it
            # becomes the reader's own array, it stays an initcheck error)
            _unwritten_old(blk, arr, b, t, b * arr.size + flat[b, t])
        else:
            _check_written(arr, site, run, b * arr.size + flat[b, t], 1, lane_bytes, atomic=True)
    if kind == "atomic" and "racecheck" in tools and arr.plain_this_phase:
        # something plain before it in this phase: checked now, its lanes in serial order
        b, t = run.threads
        arr.per_block()
        key = b * arr.size + flat[b, t]
        racecheck.hazards(blk, arr, site, "atomic", key, t // 32, t % 32)
        checked = True
    else:
        checked = "racecheck" not in tools
    if kind == "atomic" and B > 1:
        return _atomic_per_block(blk, c, lanes, run, arr, flat, value, op, compare, site, tables_too, checked,
                                 wavefronts_left)
    if run.all:  # every lane of every block: the lanes in serial order are a reshape
        b, t = np.arange(B)[:, None], np.arange(blk.nthreads, dtype=np.int32)[None, :]
        key = (b * arr.size + flat).reshape(-1)
        thread = np.broadcast_to(t, (B, blk.nthreads)).reshape(-1)
    else:
        b, t = run.threads
        key = b * arr.size + flat[b, t]
        thread = t.astype(np.int32)
    if width > 1:
        key = (key[:, None] + np.arange(width)).reshape(-1)
        thread = np.repeat(thread, width)
    extra = (width,) if width > 1 else ()
    data = arr.data.reshape(-1)
    if kind == "read":
        if "initcheck" in tools and not arr.all_written:
            _check_written(arr, site, run, key, width, lane_bytes)
        if "racecheck" in tools and not racecheck.owned_access(blk, arr, site, "read", key, thread):
            racecheck.hazards(blk, arr, site, "read", key, thread // 32, thread % 32)
        if run.all:
            return data[key].reshape((B, blk.nthreads) + extra)
        out = np.zeros((B, blk.nthreads) + extra, arr.dtype)
        out[b, t] = data[key].reshape((-1,) + extra)
        return out
    values = per_thread(np.asarray(value, dtype=arr.dtype), B, blk.nthreads, site, "value", extra)
    if kind == "write":
        if "racecheck" in tools and not racecheck.owned_access(blk, arr, site, "write", key, thread):
            racecheck.hazards(blk, arr, site, "write", key, thread // 32, thread % 32)
        data[key] = np.broadcast_to(values, (B, blk.nthreads) + extra).reshape(-1) if run.all \
            else values[b, t].reshape(-1)
        if not arr.all_written:
            arr.written[key] = True
        return None
    cmp = None
    if op == "cas":
        cmp = per_thread(np.asarray(compare, dtype=arr.dtype), B, blk.nthreads, site, "compare")[b, t]
    if not checked:  # nothing plain before it in this phase: remembered, in case
        racecheck.atomic(blk, arr, site, lambda: (key, thread), blk.nthreads)
    if run.all:  # b and t broadcast: the lanes' values are the arrays themselves, in order
        old = atomics.apply(data, key, np.broadcast_to(values, flat.shape).reshape(-1), op,
                            None if cmp is None else cmp.reshape(-1))
    else:
        old = atomics.apply(data, key, values[b, t], op, cmp)
    if tables_too:
        arr.written[key] = True
    atomics.count(c, lanes, distinct_per_warp(lanes.geo.rows(flat), lanes.row_mask))
    if run.all:
        return old.reshape(B, blk.nthreads)
    out = np.zeros((B, blk.nthreads), arr.dtype)
    out[b, t] = old
    return out


class _Grid:
    """Elements ``start + i·row_step + j·step`` (i < rows, j < cols), in that order: a tile's rows
    as lanes ``s[ty][tx + k]`` reach them. Rows do not overlap, so no element comes twice."""

    __slots__ = ("start", "rows", "row_step", "cols", "step")

    def __init__(self, start: int, rows: int, row_step: int, cols: int, step: int):
        self.start, self.rows, self.row_step, self.cols, self.step = start, rows, row_step, cols, step

    @classmethod
    def of(cls, index: np.ndarray) -> "_Grid | None":
        """``index`` (not one run: ``as_slice`` tried) as a grid of runs, else None."""
        step = int(index[1]) - int(index[0]) if index.size > 2 else 0
        if step <= 0:
            return None
        breaks = np.flatnonzero(np.diff(index) != step)
        cols = int(breaks[0]) + 1 if breaks.size else 0
        if cols < 2 or index.size % cols:
            return None
        rows = index.size // cols
        row_step = int(index[cols]) - int(index[0])
        if row_step <= (cols - 1) * step:
            return None
        start = int(index[0])
        expect = start + row_step * np.arange(rows)[:, None] + step * np.arange(cols)
        return cls(start, rows, row_step, cols, step) if np.array_equal(index.reshape(rows, cols), expect) else None

    def view(self, data: np.ndarray) -> np.ndarray:
        """These elements of every row of ``data`` (a C-contiguous (blocks, elements) array) as a
        (blocks, rows, cols) view of its memory."""
        size = data.itemsize
        return np.ndarray((data.shape[0], self.rows, self.cols), data.dtype, buffer=data, offset=self.start * size,
                          strides=(data.strides[0], self.row_step * size, self.step * size))


def _unwritten_old(blk, arr: Shared, b, t, key) -> None:
    """An ``atomicExch`` under initcheck: ``blk.undefined_old`` (blocks, threads) marks the lanes
    whose old value no thread of the block wrote (the first lane of each element, in serial
    order; a later one gets the value the earlier stored). The per-thread compiler turns it
    into an undefined value (``cuda.runtime.u_exch``), an error only where it is used."""
    unwritten = ~arr.written[key]
    if unwritten.any():
        first = np.zeros(key.size, bool)
        first[np.unique(key, return_index=True)[1]] = True
        out = np.zeros((blk.nblocks, blk.nthreads), bool)
        out[b[unwritten & first], t[unwritten & first]] = True
        blk.undefined_old = out


def _check_written(arr: Shared, site, run, key, width: int, lane_bytes: int, atomic: bool = False):
    """initcheck: the first of the elements ``key`` (``width`` per lane of ``run``, in serial
    order) that no thread of its block wrote is an error; ``atomic``: an atomic's, which
    starts from the element's value."""
    unwritten = ~arr.written[key]
    if not unwritten.any():
        return
    first = int(np.argmax(unwritten))
    b, t = (int(x[first // width]) for x in run.threads)
    element = arr.name + index_text(int(key[first]) % arr.size, arr.shape)
    raise diagnostics.uninitialized(lane_bytes, site, run.geo.thread(t), run.block_of(b), element, atomic)
