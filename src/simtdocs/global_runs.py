"""Global accesses whose addresses have a known shape, counted and moved without looking
at every lane: one run of lanes (``i = bx·bdx + tx``, or backwards), found from the index's
end points or its affine form, and any other affine index, moved through a strided view.
``global_memory.access`` tries these first and falls back to lane-by-lane work."""

from __future__ import annotations

import functools

import numpy as np

from . import affine
from .indexing import few_threads, per_thread
from .memory import SECTOR_BYTES, distinct_per_warp, sector_of
from .threads import WARP_SIZE, Lanes, runs_of


def whole_sectors_apart(form, itemsize: int) -> bool:
    """Whether an affine index moves by whole sectors from each block to the next (on every
    axis of the grid): then every block whose lanes run alike touches as many sectors."""
    return all(k * itemsize % SECTOR_BYTES == 0 for k in form.coefs[:3])


def count(blk, c, lanes, lane_bytes: int, sectors: int) -> None:
    """The counters of one global load, store or atomic: its warp instructions and requests,
    the sectors it touches (worked out by the caller's path) and the bytes asked for."""
    c.sectors += sectors
    c.requests += blk._issue(c, lanes)
    c.requested_bytes += lanes.count * lane_bytes


def contiguous_start(blk, index, width: int):
    """``(s, step)`` if thread t of the pass (block-major) accesses element ``s + step·t``,
    with ``step`` = ``width`` (forwards) or -1 (backwards, scalar accesses); else None.

    Nearly every 1-D kernel (``i = bx·bdx + tx``, or ``n - 1 - i`` to reverse) has this
    shape; it makes the bounds check, the sectors and the data movement a matter of end
    points. Remembered per index array, which a kernel usually passes to several accesses;
    a kernel may update its index in place (``i += stride``), so a hit counts only when the
    values are still the ones remembered.
    """
    memo = blk._contiguous_memo
    if memo is not None and memo[0] is index and memo[1] == width and np.array_equal(memo[3], index):
        return memo[2]
    found = None
    n = blk.nblocks * blk.nthreads
    if (isinstance(index, np.ndarray) and index.shape == (blk.nblocks, blk.nthreads)
            and index.dtype.kind in "iu" and index.flags.c_contiguous):
        flat = index.reshape(-1)
        s0 = int(flat[0])
        for step in (width, -1) if width == 1 else (width,):
            if int(flat[-1]) == s0 + step * (n - 1):
                probe = flat[::97].astype(np.int64)
                if np.array_equal(probe, s0 + step * np.arange(0, n, 97, dtype=np.int64)):
                    expected = np.arange(s0, s0 + step * n, step, dtype=flat.dtype)
                    if expected.size == n and np.array_equal(flat, expected):
                        found = (s0, step)
                break
    blk._contiguous_memo = (index, width, found, np.array(index, copy=True))
    return found


def _runs_with_an_active_lane(rows: np.ndarray, run: int) -> int:
    """How many runs of ``run`` consecutive lanes (1 to 32) have an active one. The mask's
    bytes are read as one integer per run (a bool is one byte), which is much faster than
    ``any`` along a short axis."""
    flat = np.ascontiguousarray(rows).reshape(-1)
    if run <= 8:
        return int(np.count_nonzero(flat.view(f"u{run}")))
    words = flat.view(np.uint64).reshape(-1, run // 8)
    return int(np.count_nonzero(np.bitwise_or.reduce(words, axis=1)))


def _contiguous_sectors(blk, lanes, origin: int, stride: int, lane_bytes: int) -> int:
    """Sectors of an access where thread g of the pass (block-major) starts at byte
    ``origin + stride·g``, by end points instead of lane by lane where it can."""
    geo = lanes.geo
    lowest = origin if stride > 0 else origin + (WARP_SIZE - 1) * stride  # of the pass's first warp
    if lanes.mask is None and not geo.ragged:
        # Consecutive warps are 32·stride bytes apart, whole sectors: each touches as many
        # sectors as the first.
        reach = abs(stride) * (WARP_SIZE - 1) + lane_bytes - 1
        return blk.nblocks * geo.warps * ((lowest + reach) // SECTOR_BYTES - lowest // SECTOR_BYTES + 1)
    if (lanes.mask is not None and not geo.ragged and lowest % SECTOR_BYTES == 0
            and (blk.nthreads * lane_bytes) % SECTOR_BYTES == 0):
        # Every warp starts on a sector, so each run of 32 / lane_bytes lanes fills one
        # sector: a warp's sectors are its runs with an active lane, whatever the mask.
        return _runs_with_an_active_lane(lanes.row_mask, SECTOR_BYTES // lane_bytes)
    if lanes.uniform and blk.nblocks > 1 and (stride * blk.nthreads) % SECTOR_BYTES == 0:
        # The same lanes in every block, and blocks whole sectors apart (a halo of the first
        # few threads of each block): every block touches as many sectors as the first.
        step = (stride, stride * geo.bdx, stride * geo.bdx * geo.bdy)  # bytes per tx, ty, tz
        return _block_sectors(geo, lanes.single(), origin, step, 1) * blk.nblocks
    # Every full warp from its first and last lane; the others lane by lane.
    first = (np.arange(blk.nblocks)[:, None] * blk.nthreads + WARP_SIZE * np.arange(geo.warps)).reshape(-1)
    last = np.minimum(first + WARP_SIZE, (first // blk.nthreads + 1) * blk.nthreads) - 1
    full = lanes.row_full
    sel = (first, last) if full is None else (first[full], last[full])
    a, b = (origin + stride * g for g in sel)
    low, high = np.minimum(a, b), np.maximum(a, b)
    sectors = int((((high + lane_bytes - 1) // SECTOR_BYTES) - low // SECTOR_BYTES + 1).sum())
    if full is not None:
        partial = lanes.row_any & ~full
        if partial.any():
            addr = origin + stride * (first[partial][:, None] + np.arange(WARP_SIZE))
            sectors += distinct_per_warp(addr // SECTOR_BYTES, lanes.row_mask[partial])
    return sectors


def _lane_memory(mem, start: int, step: int, width: int, g0: int, g1: int):
    """The memory of lanes g0..g1-1 of an access ``start + step·g``, in lane order."""
    if step > 0:
        return mem[start + g0 * width:start + g1 * width]
    return mem[start - g1 + 1:start - g0 + 1][::-1]


def contiguous(blk, site, c, lanes, kind, array, start, step, width, value, base):
    """Load or store for an index ``start + step·t``: bounds, sectors and data by end points."""
    n = blk.nblocks * blk.nthreads
    mem = array.reshape(-1)
    if lanes.mask is None and step == width == 1 and 0 <= start and start + n <= mem.size:
        # The usual (every lane, one element each, in order, inside: y[i] = a * x[i]): a slice.
        itemsize = array.dtype.itemsize
        count(blk, c, lanes, itemsize, _contiguous_sectors(blk, lanes, base + start * itemsize, itemsize, itemsize))
        if kind == "read":
            return mem[start:start + n].reshape(blk.nblocks, blk.nthreads).copy()
        values = per_thread(np.asarray(value, dtype=array.dtype), blk.nblocks, blk.nthreads, site, "value")
        blk._L.writable(array).reshape(-1)[start:start + n] = values.reshape(-1)
        return None
    lo, hi = lanes.span
    if hi >= lo:
        ends = (start + step * lo, start + step * hi)
        if min(ends) < 0 or max(ends) + width > mem.size:
            return NotImplemented  # out of bounds: the general path reports it
    itemsize = array.dtype.itemsize
    lane_bytes = itemsize * width
    count(blk, c, lanes, lane_bytes, _contiguous_sectors(blk, lanes, base + start * itemsize, step * itemsize, lane_bytes))
    shape = (blk.nblocks, blk.nthreads) + ((width,) if width > 1 else ())
    # Lanes past either end are inactive (checked above): move only the lanes inside.
    if step > 0:
        g0, g1 = max(0, -(start // width)), min(n, (mem.size - start) // width)
    else:
        g0, g1 = max(0, start - mem.size + 1), min(n, start + 1)
    # The active lanes as one run lo..hi (every lane between them active: a ragged tail, a
    # guard like i < n) are moved by slices alone; other masks pick their lanes.
    dense = lanes.all or hi < lo or lanes.count == hi - lo + 1
    few = None if dense or width > 1 or step < 0 else few_threads(lanes, 2)
    if isinstance(few, slice):
        # The same few lanes of every block (a halo's first threads): one strided view of
        # exactly their elements, each inside the array as the span's ends are.
        T, size = blk.nthreads, array.dtype.itemsize
        view = np.ndarray((blk.nblocks, len(range(T)[few])), array.dtype,
                          buffer=mem if kind == "read" else blk._L.writable(array).reshape(-1),
                          offset=(start + few.start * step) * size, strides=(T * step * size, few.step * step * size))
        if kind == "read":
            out = np.zeros(shape, array.dtype)
            out[:, few] = view
            return out
        view[...] = per_thread(np.asarray(value, dtype=array.dtype), blk.nblocks, T, site, "value")[:, few]
        return None
    if dense and not lanes.all:
        g0, g1 = max(g0, lo), min(g1, hi + 1)
    g1 = max(g0, g1)
    if kind == "read":
        if dense and (g0, g1) == (0, n):
            return _lane_memory(mem, start, step, width, g0, g1).reshape(shape).copy()
        out = np.empty((n * width,), array.dtype)  # zeros on the lanes outside g0..g1, not a memset of all
        out[:g0 * width] = 0
        out[g1 * width:] = 0
        out[g0 * width:g1 * width] = _lane_memory(mem, start, step, width, g0, g1)
        return out.reshape(shape) if dense else lanes.where(out.reshape(shape))
    values = per_thread(np.asarray(value, dtype=array.dtype), blk.nblocks, blk.nthreads, site, "value",
                        shape[2:]).reshape(n * width)
    target = _lane_memory(blk._L.writable(array).reshape(-1), start, step, width, g0, g1)
    if dense:
        target[:] = values[g0 * width:g1 * width]
    else:
        keep = lanes.mask.reshape(-1)[g0:g1]
        np.copyto(target, values[g0 * width:g1 * width], where=np.repeat(keep, width) if width > 1 else keep)
    return None


def _aligned(form, base: int, itemsize: int, lane_bytes: int) -> bool:
    """Whether every thread's access of ``lane_bytes`` at element ``form`` starts on a multiple
    of ``lane_bytes`` (always, for one element a lane whose array starts on one)."""
    if (base + form.const * itemsize) % lane_bytes:
        return False
    return lane_bytes == itemsize or not any(k * itemsize % lane_bytes for k in form.coefs)


def strided(blk, site, c, lanes, kind, array, form, width, value, base, box=None, into=None):
    """Load or store for an index with an affine form that is not one run: every thread is
    inside the array (the form says so), the data moves through a strided view, and blocks
    that touch alike are counted once (``sectors_by_class``). ``box`` = (view, linear block
    ids): a box of blocks the caller cut out of the pass (``blk`` then stands for those
    blocks)."""
    itemsize = array.dtype.itemsize
    lane_bytes = itemsize * width
    if not _aligned(form, base, itemsize, lane_bytes):
        return NotImplemented  # some lane may be misaligned: the general path finds which
    mem = array.reshape(-1) if kind == "read" else blk._L.writable(array).reshape(-1)
    view = affine.strided_view(mem, form, blk.first, blk.nblocks, width) if box is None else box[0]
    if view is None:
        return NotImplemented  # not a box of blocks
    geo = lanes.geo
    lane = None  # the one thread of every block that stores, when that is all that stores
    if kind == "write" and not affine.one_to_one(view):
        if not (lanes.uniform and lanes.mask is not None and lanes.count == blk.nblocks):
            return NotImplemented  # two lanes may store to one element: the general path orders them
        lane = int(np.argmax(lanes.one[0]))  # ``if (tid == 0) out[blockIdx.x] = …``
        x, y, z = geo.thread(lane)
        view = view[(Ellipsis, z, y, x) + ((slice(None),) if width > 1 else ())]
        if not affine.one_to_one(view):
            return NotImplemented
    k = form.coefs
    if lane is not None:
        sectors = blk.nblocks  # one lane of one warp per block, and an aligned lane is in one sector
    else:
        ids = np.arange(blk.first, blk.first + blk.nblocks, dtype=np.int64) if box is None else box[1]  # not blk.bx
        sectors = sectors_by_class(lanes, form, base, itemsize, ids)
        if sectors is None:
            gx, gy = geo.grid[0], geo.grid[1]
            ids = ids[:, None]
            block_part = k[0] * (ids % gx) + k[1] * (ids // gx % gy) + k[2] * (ids // (gx * gy))
            thread_part = form.const + geo.thread_offsets(k[3], k[4], k[5])
            rows = geo.rows(sector_of(block_part + thread_part, base, itemsize))
            sectors = distinct_per_warp(rows, lanes.row_mask)
    count(blk, c, lanes, lane_bytes, sectors)
    shape = (blk.nblocks, blk.nthreads) + ((width,) if width > 1 else ())
    if kind == "read":
        if into is not None and lanes.all:  # straight into the caller's array (a box of its blocks)
            _copy(into, view, view)
            return into
        out = np.empty(shape, array.dtype)
        _copy(out.reshape(view.shape), view, view)
        return lanes.cleared(out)
    if box is not None and lane is None and np.shape(value) == view.shape:
        values = value  # the caller's values for the box, shaped as the view already
    else:
        values = per_thread(np.asarray(value, dtype=array.dtype), blk.nblocks, blk.nthreads, site, "value", shape[2:])
    if lane is not None:
        view[...] = values[:, lane].reshape(view.shape)
    elif lanes.all:
        _copy(view, values if values.shape == view.shape else np.ascontiguousarray(values).reshape(view.shape), view)
    else:
        keep = lanes.mask.reshape(view.shape[:len(view.shape) - len(shape) + 2])
        np.copyto(view, values.reshape(view.shape), where=keep[..., None] if width > 1 else keep)
    return None


#: Beyond this many classes of blocks, an affine access's sectors are counted lane by lane.
MAX_CLASSES = 64


def sectors_by_class(lanes, form, base: int, itemsize: int, ids: np.ndarray) -> int | None:
    """Sectors of an affine access by the blocks ``ids``, counted once per class of blocks
    that touch alike: the same lanes (one way of the mask, ``Lanes.patterns``) and the same
    byte offset of their first thread's element inside its sector (a block 6 floats on from
    the last, as a tile with a halo steps, cycles through 4 such offsets). None when there
    are more than ``MAX_CLASSES`` classes."""
    ways = lanes.patterns
    if not ways:
        return None
    geo, k = lanes.geo, form.coefs
    if whole_sectors_apart(form, itemsize):  # one offset for every block: a class per way
        origin = base + form.at(geo.block(int(ids[0]))) * itemsize
        return sum(_block_sectors(geo, one, origin, k[3:], itemsize) * (ids.size if blocks is None else blocks.size)
                   for one, blocks in ways)
    gx, gy = geo.grid[0], geo.grid[1]
    origin = base + (form.const + k[0] * (ids % gx) + k[1] * (ids // gx % gy) + k[2] * (ids // (gx * gy))) * itemsize
    classes = []
    for one, blocks in ways:
        offset = origin % SECTOR_BYTES if blocks is None else origin[blocks] % SECTOR_BYTES
        found, first, count = np.unique(offset, return_index=True, return_counts=True)
        classes += [(one, int(origin[f if blocks is None else blocks[f]]), int(n)) for f, n in zip(first, count)]
        if len(classes) > MAX_CLASSES:
            return None
    return sum(_block_sectors(geo, one, at, k[3:], itemsize) * n for one, at, n in classes)


def _block_sectors(geo, one, origin: int, coefs, itemsize: int) -> int:
    """Sectors of one block's lanes ``one`` at bytes ``origin + itemsize·(coefs · threadIdx)``.
    Moving ``origin`` by whole sectors changes nothing, so with every lane active the count
    is kept per geometry for each offset inside a sector (a loop's accesses ask again)."""
    def count():
        rows = geo.rows(sector_of(geo.thread_offsets(*coefs), origin, itemsize))
        return distinct_per_warp(rows, one.row_mask)
    if one.row_mask is not None:
        return count()
    memo = geo.__dict__.setdefault("_block_sectors", {})
    key = (tuple(coefs), itemsize, origin % SECTOR_BYTES)
    if key not in memo:
        if len(memo) >= 256:
            memo.clear()
        memo[key] = count()
    return memo[key]


def _copy(target: np.ndarray, source: np.ndarray, memory: np.ndarray) -> None:
    """``target[...] = source`` for two arrays of one shape, one of them (``memory``) a strided
    view of memory and the other in thread order. Copied in the order the elements sit in
    memory (the largest stride outermost), and with the innermost axis folded into one item
    of that many bytes when it is a run of adjacent elements on both sides (a row of
    threadIdx.x): numpy then moves whole rows instead of one element at a time."""
    order = list(_memory_order(memory.strides))
    if target.ndim > 1 and target.size and all(a.strides[-1] == a.itemsize for a in (target, source)):
        item = np.dtype(f"V{target.itemsize * target.shape[-1]}")

        def fold(a):
            return np.lib.stride_tricks.as_strided(a[(0,) * (a.ndim - 1)].view(item), a.shape[:-1], a.strides[:-1],
                                                   writeable=a.flags.writeable)
        target, source = fold(target), fold(source)
        order.remove(len(order) - 1)
    target.transpose(order)[...] = source.transpose(order)


@functools.lru_cache(maxsize=256)
def _memory_order(strides: tuple[int, ...]) -> tuple[int, ...]:
    """The axes from the largest stride to the smallest (stable): a loop copies through views
    of the same strides step after step."""
    return tuple(sorted(range(len(strides)), key=lambda a: -abs(strides[a])))


class _Blocks:
    """``blocks`` blocks of a pass from linear id ``first`` on, as ``strided`` sees a pass."""

    def __init__(self, blk, first: int, blocks: int):
        self.first, self.nblocks, self.nthreads = first, blocks, blk.nthreads
        self._issue, self._L = blk._issue, blk._L


def strided_by_runs(blk, site, c, lanes, kind, array, form, width, value, base):
    """``strided`` for a pass where some blocks run none of the access (a guard such as
    ``if (row < n && col < n)`` on a grid rounded up to whole blocks) and every thread of the
    blocks that do run it is inside the array: each run of consecutive active blocks moves
    through its own strided view, and a block with no active lane costs nothing."""
    geo = lanes.geo
    itemsize = array.dtype.itemsize
    lane_bytes = itemsize * width
    k = form.coefs
    plan = lanes.remember(("runs", k, width), lambda: _runs_plan(blk, lanes, k, width))
    if plan is None or not _aligned(form, base, itemsize, lane_bytes):
        return NotImplemented  # scattered blocks (the general path is as good), or misaligned lanes
    runs, (lo, hi), box = plan
    # Every check first: nothing is counted or moved unless every run can go this way.
    mem = array.reshape(-1) if kind == "read" else blk._L.writable(array).reshape(-1)
    if runs and (lo + form.const < 0 or hi + form.const + width > mem.size):
        return NotImplemented
    shape = (blk.nblocks, blk.nthreads) + ((width,) if width > 1 else ())
    # A read fills the rows of the blocks that run it; the idle blocks' rows are cleared
    # last (zeroing a whole fresh array costs about as much as filling it).
    out = np.empty(shape, array.dtype) if kind == "read" else None
    if kind == "write":
        value = per_thread(np.asarray(value, dtype=array.dtype), blk.nblocks, blk.nthreads, site, "value", shape[2:])
    if box is not None:
        done = _one_box(blk, site, c, kind, array, form, width, value, base, mem, out, box)
        if done is not NotImplemented:
            return done
    views = []
    for *_, axes in runs:
        view = None if axes is None else affine.view(mem, form.at(axes[0]), axes[1], axes[2])
        if view is None or (kind == "write" and not affine.one_to_one(view)):
            return NotImplemented
        views.append(view)
    for (a, b, part, ids, _), view in zip(runs, views):
        into = None if kind != "read" else out[a:b].reshape(view.shape)
        got = strided(_Blocks(blk, blk.first + a, b - a), site, c, part, kind, array, form, width,
                      None if value is None else value[a:b], base, box=(view, ids), into=into)
        if kind == "read" and got is not into:
            out[a:b] = got
    if not runs:
        count(blk, c, lanes, lane_bytes, 0)
    if kind == "read":  # the idle blocks between the runs
        for a, b in lanes.idle_runs:
            out[a:b] = 0
    return out


def _runs_plan(blk, lanes, k, width):
    """What ``strided_by_runs`` works out from the lanes and the index's coefficients ``k``
    alone, which a loop's access asks for again at every step: each run of consecutive active
    blocks (its place in the pass, its lanes, its blocks' linear ids and the axes of its
    strided view, None when it is not a box of blocks), the extremes of the index's
    block-and-thread part over them, and the box they fill (``_active_box``, with the axes of
    its view) when there is one. None beyond 256 runs."""
    geo = lanes.geo
    active = lanes.block_any
    spans = runs_of(active)
    if len(spans) > 256:
        return None
    if not spans:
        return [], (0, 0), None
    # The block part's extremes over the active blocks, and the thread part's from its
    # coefficients: each index runs 0 .. extent - 1.
    ids = blk.first + np.flatnonzero(active)
    gx, gy = geo.grid[0], geo.grid[1]
    running = k[0] * (ids % gx) + k[1] * (ids // gx % gy) + k[2] * (ids // (gx * gy))
    reach = [kj * (n - 1) for kj, n in zip(k[3:], (geo.bdx, geo.bdy, geo.bdz))]
    ends = (int(running.min()) + sum(min(r, 0) for r in reach), int(running.max()) + sum(max(r, 0) for r in reach))
    runs = []
    for a, b in spans:
        mask = lanes.mask[a:b]
        runs.append((a, b, Lanes(geo, blk.first + a, b - a, None if mask.all() else mask),  # whole blocks: counted as one
                     np.arange(blk.first + a, blk.first + b, dtype=np.int64),
                     affine.view_axes(k, geo.extent, blk.first + a, b - a, width)))
    box = _active_box(blk, lanes, active) if geo.grid[1] * geo.grid[2] > 1 else None  # a 2-D or 3-D grid
    if box is not None:  # and the axes of its view, as ``affine.view`` takes them
        z, y, x = box[1]
        wide = (width,) if width > 1 else ()
        box += ((z.stop - z.start, y.stop - y.start, x.stop - x.start, geo.bdz, geo.bdy, geo.bdx) + wide,
                (k[2], k[1], k[0], k[5], k[4], k[3]) + ((1,) if wide else ()))
    return runs, ends, box


def _one_box(blk, site, c, kind, array, form, width, value, base, mem, out, box):
    """``strided_by_runs`` when the pass is whole rows of a 2-D grid (whole planes of a 3-D
    one) and its active blocks are one box of them (as a guard on every axis leaves them on a
    padded grid): one view for the box instead of one per run of blocks. ``box``: from
    ``_active_box``, with the view's shape and steps."""
    corner, inside, pass_shape, ids, at, part, idle, shape, steps = box
    view = affine.view(mem, form.at(corner), shape, steps)
    if kind == "write" and not affine.one_to_one(view):
        return NotImplemented
    into = None
    if kind == "read":  # the box's part of ``out``, shaped as the view
        into = out.reshape(pass_shape + view.shape[3:])[inside]
    else:  # and of the values: a view of them, not a copy
        value = value.reshape(pass_shape + value.shape[1:])[inside].reshape(view.shape)
    got = strided(_Blocks(blk, int(ids[0]), ids.size), site, c, part, kind, array, form, width,
                  value, base, box=(view, ids), into=into)
    if got is NotImplemented:
        return NotImplemented
    if kind == "read":
        if got is not into:
            out[at] = got
        blocks = out.reshape(pass_shape + out.shape[1:])
        for around in idle:  # the blocks outside the box ran none of it
            blocks[around] = 0
    return out


def _active_box(blk, lanes, active):
    """The box of blocks that run an access, when the pass is whole rows of a 2-D grid or
    whole planes of a 3-D one and those blocks fill a box of it: ``(corner, box, pass shape,
    ids, at, lanes, idle)``: the box's first block's ``blockIdx``, the box in the pass's
    (planes, rows, columns) as slices, the blocks' linear ids and places in the pass, their
    lanes, and the slices of the idle blocks around the box (a slab on each side that has
    one). None otherwise."""
    geo = lanes.geo
    gdx, gdy, gdz = geo.grid
    B = blk.nblocks
    if gdz == 1 and blk.first % gdx == 0 and B % gdx == 0 and B // gdx >= 2:
        pass_shape, origin = (1, B // gdx, gdx), (0, blk.first // gdx)  # (plane, row) of the pass's first block
    elif gdz > 1 and blk.first % (gdx * gdy) == 0 and B % (gdx * gdy) == 0:
        pass_shape, origin = (B // (gdx * gdy), gdy, gdx), (blk.first // (gdx * gdy), 0)
    else:
        return None
    grid = active.reshape(pass_shape)
    ends = []
    for axis in range(3):
        used = np.flatnonzero(grid.any(axis=tuple(a for a in range(3) if a != axis)))
        if used.size == 0 or used[-1] - used[0] + 1 != used.size:
            return None
        ends += [int(used[0]), int(used[-1]) + 1]
    z0, z1, y0, y1, x0, x1 = ends
    if not grid[z0:z1, y0:y1, x0:x1].all():
        return None
    planes, rows, cols = np.ix_(np.arange(z0, z1), np.arange(y0, y1), np.arange(x0, x1))
    at = ((planes * pass_shape[1] + rows) * gdx + cols).reshape(-1).astype(np.int64)
    ids = blk.first + at
    corner = (x0, origin[1] + y0, origin[0] + z0)
    box_mask = lanes.mask[at]
    idle = []
    for axis, (lo, hi, n) in enumerate(((z0, z1, pass_shape[0]), (y0, y1, pass_shape[1]), (x0, x1, pass_shape[2]))):
        within = (slice(z0, z1), slice(y0, y1))[:axis]  # inside the box on the axes before
        idle += [within + (slice(0, lo),)] if lo else []
        idle += [within + (slice(hi, n),)] if hi < n else []
    return corner, (slice(z0, z1), slice(y0, y1), slice(x0, x1)), pass_shape, ids, at, \
        Lanes(geo, int(ids[0]), ids.size, None if box_mask.all() else box_mask), idle
