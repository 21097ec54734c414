"""Global memory: loads, stores and atomics on numpy arrays, counted in 32-byte sectors.

A lane's byte address is where its element sits in the array's allocation. Allocations
start 256-byte aligned (as ``cudaMalloc`` promises); a view such as ``a[1:]`` starts where it
starts inside its base array, so its first float is 4 bytes into a sector. An access of
1, 2, 4, 8 or 16 bytes must be aligned to its size, so it always falls in one sector, and a
warp instruction costs the number of distinct sectors its active lanes touch.

Kernel arguments are read-only views: writing ``a[i] = v`` in a kernel fails (the
simulator would not see it); ``store`` and the atomics write through ``writable``.
"""

from __future__ import annotations

import numpy as np

from . import affine, atomics
from . import diagnostics
from .diagnostics import name_in_kernel
from .global_runs import contiguous, contiguous_start, count, sectors_by_class, strided, strided_by_runs
from .indexing import flat_index, per_thread
from .memory import SECTOR_BYTES, distinct_per_warp, sector_of

LANE_BYTES = (1, 2, 4, 8, 16)


def access(blk, site, c, lanes, kind: str, array, index, width: int = 1, value=None, op=None, compare=None):
    """One warp-level global load (``kind="read"``), store (``"write"``) or atomic."""
    if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
        raise diagnostics.not_global_array(array, site)
    itemsize = array.dtype.itemsize
    lane_bytes = itemsize * width
    if lane_bytes not in LANE_BYTES:
        raise ValueError(f"{site}: a thread can move 1, 2, 4, 8 or 16 bytes at once, not {lane_bytes}")
    base = blk._L.byte_offset(array)
    memcheck = "memcheck" in blk._L.tools
    form, inside = affine.address(index, array.shape, blk._geo.extent, (blk.nblocks, blk.nthreads), width)
    if inside and kind == "read" and width == 1 and not any(form.coefs) and base % itemsize == 0:
        # Every lane reads the one element (a filter's tap F[i][j]): one sector a warp, and
        # the value handed to every active lane.
        count(blk, c, lanes, itemsize, lanes.rows)
        value = array.reshape(-1)[form.const]
        if lanes.all:
            return np.full((blk.nblocks, blk.nthreads), value, array.dtype)
        return np.where(lanes.mask, value, array.dtype.type(0))
    if form is not None and kind != "atomic":
        step = affine.contiguous_step(form)
        if step == width or (step == -1 and width == 1):  # contiguous() checks the active lanes' bounds
            run = (form.at(blk._geo.block(blk.first)), step)
        else:
            run = None
            done = NotImplemented
            # Blocks that run none of the access (the threads outside may all be among them,
            # and a pass where whole blocks sit out is counted per run of active blocks).
            if lanes.mask is not None and not lanes.uniform:
                done = strided_by_runs(blk, site, c, lanes, kind, array, form, width, value, base)
            if inside and done is NotImplemented:
                done = strided(blk, site, c, lanes, kind, array, form, width, value, base)
            if done is not NotImplemented:
                return done
    else:  # (an atomic goes lane by lane in any case)
        run = None if isinstance(index, tuple) or kind == "atomic" else contiguous_start(blk, index, width)
    if run is not None and (base + run[0] * itemsize) % lane_bytes == 0 and kind != "atomic":
        done = contiguous(blk, site, c, lanes, kind, array, *run, width, value, base)
        if done is not NotImplemented:
            return done
    if inside and not any(form.coefs):  # one element for every thread (a counter, a lock), inside
        flat, bad = np.broadcast_to(np.int64(form.const), (blk.nblocks, blk.nthreads)), None
    else:
        flat, bad, report = flat_index(name_in_kernel(array, site), array.shape, index, lanes, width, site)
    if bad is not None and memcheck:
        report("__global__", kind, itemsize)
    # The same lanes in every block of the pass, and the same index pattern shifted by whole
    # sectors (blk.tx; the blocks of a 2-D grid walking a matrix): one block is counted, and
    # the pass is that count times the blocks.
    same = blk.nblocks > 1 and lanes.uniform and bad is None and _shifted_copies(flat, base, itemsize)
    once = same and flat.strides[0] == 0  # the very same elements in every block
    one, flat_one = (lanes.single(), flat[:1]) if same else (lanes, flat)
    if base % lane_bytes or width > 1:
        address = base + flat_one * itemsize
        misaligned = one.where(address % lane_bytes != 0, False)
        if misaligned.any():
            b, t = (int(x[0]) for x in np.nonzero(misaligned))
            where = f"access at byte {int(address[b, t])} of the allocation (not a multiple of {lane_bytes})"
            raise diagnostics.misaligned(lane_bytes, where, site, lanes.geo.thread(t), lanes.block_of(b))
    # Every lane on one element (a counter, a lock): one sector and one element per warp.
    one_element = bad is None and flat_one.size > 0 and not any(flat_one.strides)
    copies = blk.nblocks if same else 1
    sectors = None
    if one_element:
        sectors = one.rows * copies
    elif bad is None and form is not None and not same:  # blocks that touch alike counted once
        sectors = sectors_by_class(lanes, form, base, itemsize, np.arange(blk.first, blk.first + blk.nblocks))
    if sectors is None:
        sectors = distinct_per_warp(one.geo.rows(sector_of(flat_one, base, itemsize)), one.row_mask) * copies
    count(blk, c, lanes, lane_bytes, sectors)
    run = lanes if bad is None else lanes.without(bad)  # memcheck off: those lanes move nothing
    mem = array.reshape(-1)
    extra = (width,) if width > 1 else ()
    cols = flat[..., None] + np.arange(width) if width > 1 else flat
    if kind == "read":
        if once:  # every block reads the same elements
            got = run.single().where(mem[one.where(cols[:1], 0)])
            return np.broadcast_to(got, (blk.nblocks,) + got.shape[1:]).copy()
        if run.all:
            return mem[cols]
        # An inactive lane's index may be anything: clipped into the array, its value then cleared.
        return run.cleared(np.take(mem, cols, mode="clip"))
    mem = blk._L.writable(array).reshape(-1)
    values = per_thread(np.asarray(value, dtype=array.dtype), blk.nblocks, blk.nthreads, site, "value", extra)
    if kind == "write":
        if run.all:
            mem[cols.reshape(-1)] = values.reshape(-1)
        else:
            mem[cols[run.mask].reshape(-1)] = values[run.mask].reshape(-1)
        return None
    atomics.count(c, lanes, one.rows * copies if one_element else
                  distinct_per_warp(one.geo.rows(flat_one), one.row_mask) * copies)
    cmp = None
    if op == "cas":
        cmp = per_thread(np.asarray(compare, dtype=mem.dtype), blk.nblocks, blk.nthreads, site, "compare")
    out = np.zeros((blk.nblocks, blk.nthreads), mem.dtype)
    if once:
        t = np.flatnonzero(one.where(np.ones((1, blk.nthreads), bool), False)[0])
        keys = flat[0, t]
        if np.unique(keys).size == keys.size:  # one lane per element in each block
            out[:, t] = atomics.apply_across_blocks(mem, keys, values[:, t], op, None if cmp is None else cmp[:, t])
            return out
    # The active lanes in serial order: a reshape when every lane runs; a few lanes (one a
    # block, a CAS loop's losers) by their (block, thread) pairs; else a boolean pick, which
    # reads every lane but moves many faster.
    where = None if run.all else run.threads if run.count * 8 <= out.size else run.mask

    def pick(a):
        a = np.broadcast_to(a, out.shape)
        return a.reshape(-1) if where is None else a[where]

    if one_element:  # a counter, a lock, a total: nothing to sort by element
        old = atomics.apply_one(mem, int(flat_one.reshape(-1)[0]), pick(values), op, None if cmp is None else pick(cmp))
    else:
        old = atomics.apply(mem, pick(flat), pick(values), op, None if cmp is None else pick(cmp))
    if where is None:
        return old.reshape(out.shape)
    out[where] = old
    return out


def _shifted_copies(flat: np.ndarray, base: int, itemsize: int) -> bool:
    """Whether every block's element indices are block 0's plus one offset per block that
    moves them by whole sectors, so that every block touches as many sectors as block 0."""
    if flat.strides[0] == 0:
        return True
    first = flat[:, :1]
    if not np.array_equal(flat[-1] - first[-1], flat[0] - first[0]):  # a cheap look at one block first
        return False
    if np.any((first - first[0, 0]) * itemsize % SECTOR_BYTES):
        return False
    return bool(((flat - first) == (flat[0] - first[0])).all())
