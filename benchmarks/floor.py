"""The floor of the shape suite: the same kernel, run by plain numpy that counts nothing.

``run(kernel, grid, block, args)`` calls the kernel function itself with a block object
that has the simulator's thread arrays (``bx``, ``tx``, …, the same shapes and dtypes)
and moves data with numpy fancy indexing: loads, stores, shared memory per block, atomics
with ``np.add.at``. It keeps no counters, checks no bounds, records no races, computes no
old values for atomics and treats barriers and branches as the masks they are. An index
that is a run of consecutive elements moves its data by a slice, as a careful numpy
programmer would. So it does exactly the kernel's arithmetic and data movement and
nothing else: what a simulator cannot avoid paying, and the baseline the suite's ratios
are taken against.

It knows only what the suite's kernels (and ``zoo.py``'s, from ``tests/zoo``) use: vector
loads and stores (``width``), narrow integers loaded as ``int32`` (C's promotion, as the
simulator does), shuffles and votes as gathers and reductions along the lanes of a warp,
``atomic_max``/``min`` as ``np.maximum.at``/``np.minimum.at``, ``atomic_exch`` as a plain
store (the last lane wins) and ``atomic_cas`` as a Python loop over its active lanes in order
(it is sequential by nature); only the CAS returns old values. Anything else raises
``NotImplementedError``.
"""

from __future__ import annotations

import numpy as np

from simtdocs.model import THREADS_PER_PASS  # as many threads at once as the simulator


def _as_slice(index: np.ndarray):
    """``index`` as a slice when it is a run of consecutive elements (cheaper to move data by)."""
    flat = index.reshape(-1)
    if flat.size and int(flat[-1]) - int(flat[0]) == flat.size - 1:
        if np.array_equal(flat, np.arange(flat[0], flat[0] + flat.size, dtype=flat.dtype)):
            return slice(int(flat[0]), int(flat[0]) + flat.size)
    return index


def _promoted(values):
    """Narrow integers loaded as ``int32``, as C (and the simulator) computes with them."""
    if values.dtype.kind in "iu" and values.dtype.itemsize < 4:
        return values.astype(np.int32)
    return values


class SharedArray:
    """One array per block: ``data[b]`` is block b's copy."""

    def __init__(self, nblocks: int, shape, dtype):
        self.data = np.zeros((nblocks,) + (shape if isinstance(shape, tuple) else (shape,)), dtype)


class NumpyBlock:
    def __init__(self, grid, block, first: int, count: int):
        self.bdx, self.bdy, self.bdz = block
        self.gdx, self.gdy, self.gdz = grid
        self.nthreads = block[0] * block[1] * block[2]
        self.nblocks = count
        ids = np.arange(first, first + count, dtype=np.int32)[:, None]
        self.bx, self.by, self.bz = ids % self.gdx, (ids // self.gdx) % self.gdy, ids // (self.gdx * self.gdy)
        tid = np.arange(self.nthreads, dtype=np.int32)[None, :]
        self.tid, self.tx = tid, tid % self.bdx
        self.ty, self.tz = (tid // self.bdx) % self.bdy, tid // (self.bdx * self.bdy)
        self.lane, self.warp = tid % 32, tid // 32
        self._shape = (count, self.nthreads)
        self._rows = np.broadcast_to(np.arange(count)[:, None], self._shape)

    def _where(self, array, index, mask):
        """The array to index and the index tuple of the active threads (in row order)."""
        parts = [np.broadcast_to(p, self._shape) for p in (index if isinstance(index, tuple) else (index,))]
        rows = self._rows
        if mask is not None:
            m = np.broadcast_to(mask, self._shape)
            parts, rows = [p[m] for p in parts], rows[m]
        if isinstance(array, SharedArray):
            return array.data, (rows, *parts)
        if len(parts) > 1:
            return array, tuple(parts)
        return array.reshape(-1), (_as_slice(parts[0]),)

    def shared(self, shape, dtype=np.float32, name="shared", dynamic=False):
        return SharedArray(self.nblocks, shape, dtype)

    def load(self, array, index, mask=None, width=1):
        if width != 1:
            return _promoted(self._vector_load(array, index, mask, width))
        data, at = self._where(array, index, mask)
        if mask is None:
            got = data[at]
            return _promoted(got.reshape(self._shape).copy() if isinstance(at[0], slice) else got)
        out = np.zeros(self._shape, data.dtype)
        out[np.broadcast_to(mask, self._shape)] = data[at]
        return _promoted(out)

    def _vector_index(self, index, width):
        return np.broadcast_to(index, self._shape)[..., None] + np.arange(width)

    def _vector_load(self, array, index, mask, width):
        data = array.data if isinstance(array, SharedArray) else array.reshape(-1)
        at = self._vector_index(index, width)
        if isinstance(array, SharedArray):
            rows = np.broadcast_to(self._rows[..., None], at.shape)
            got = data[rows, at] if mask is None else np.where(np.broadcast_to(mask, self._shape)[..., None],
                                                                data[rows, np.where(np.broadcast_to(mask, self._shape)[..., None], at, 0)], 0)
            return got
        if mask is None:
            return data[at]
        m = np.broadcast_to(mask, self._shape)
        out = np.zeros(self._shape + (width,), data.dtype)
        out[m] = data[at[m]]
        return out

    def _vector_store(self, array, index, value, mask, width):
        data = array.data if isinstance(array, SharedArray) else array.reshape(-1)
        at = self._vector_index(index, width)
        v = np.broadcast_to(np.asarray(value, data.dtype), self._shape + (width,))
        m = np.broadcast_to(True if mask is None else mask, self._shape)
        if isinstance(array, SharedArray):
            rows = np.broadcast_to(self._rows[..., None], at.shape)
            data[rows[m], at[m]] = v[m]
        else:
            data[at[m]] = v[m]

    def store(self, array, index, value, mask=None, width=1):
        if width != 1:
            return self._vector_store(array, index, value, mask, width)
        data, at = self._where(array, index, mask)
        v = np.broadcast_to(np.asarray(value, data.dtype), self._shape)
        v = v if mask is None else v[np.broadcast_to(mask, self._shape)]
        data[at] = v.reshape(-1) if isinstance(at[0], slice) else v

    def atomic_add(self, array, index, value, mask=None):
        data, at = self._where(array, index, mask)
        v = np.broadcast_to(np.asarray(value, data.dtype), self._shape)
        np.add.at(data, at, v if mask is None else v[np.broadcast_to(mask, self._shape)])

    def atomic_max(self, array, index, value, mask=None):
        data, at = self._where(array, index, mask)
        v = np.broadcast_to(np.asarray(value, data.dtype), self._shape)
        np.maximum.at(data, at, v if mask is None else v[np.broadcast_to(mask, self._shape)])

    def atomic_min(self, array, index, value, mask=None):
        data, at = self._where(array, index, mask)
        v = np.broadcast_to(np.asarray(value, data.dtype), self._shape)
        np.minimum.at(data, at, v if mask is None else v[np.broadcast_to(mask, self._shape)])

    def atomic_exch(self, array, index, value, mask=None):
        self.store(array, index, value, mask)  # the last lane in order wins, as numpy assigns

    def atomic_cas(self, array, index, compare, value, mask=None):
        """Sequential by nature: a Python loop over the active lanes in order."""
        data, at = self._where(array, index, mask)
        m = None if mask is None else np.broadcast_to(mask, self._shape)
        cmp_, val = (np.broadcast_to(np.asarray(x, data.dtype), self._shape) for x in (compare, value))
        cmp_, val = (x.reshape(-1) if m is None else x[m] for x in (cmp_, val))
        flat = tuple(np.arange(a.start, a.stop) if isinstance(a, slice) else a.reshape(-1) for a in at)
        old = np.empty(cmp_.shape, data.dtype)
        for k, where in enumerate(zip(*flat)):
            old[k] = o = data[where]
            if o == cmp_[k]:
                data[where] = val[k]
        out = np.zeros(self._shape, data.dtype)
        if m is None:
            return old.reshape(self._shape)
        out[m] = old
        return out

    def _shuffle(self, value, source_lane, mask):
        """Lane l reads ``value`` of lane ``source_lane`` of its warp; a source outside the
        warp's width keeps its own value, and so does an inactive lane."""
        v = np.broadcast_to(value, self._shape + np.shape(value)[2:])
        own = np.arange(self.nthreads)
        src_lane = np.broadcast_to(source_lane, (1, self.nthreads) if np.ndim(source_lane) < 2 else self._shape)
        inside = (src_lane >= 0) & (src_lane < 32)
        src = np.where(inside, own - own % 32 + src_lane, own)
        src = np.where(src < self.nthreads, src, own)
        if src.shape[0] == 1:
            out = np.take(v, src[0], axis=1)
        else:
            idx = src.reshape(src.shape + (1,) * (v.ndim - 2))
            out = np.take_along_axis(v, np.broadcast_to(idx, src.shape + v.shape[2:]), axis=1)
        if mask is None:
            return out
        return np.where(np.broadcast_to(mask, self._shape).reshape(self._shape + (1,) * (v.ndim - 2)), out, v)

    def shfl_down(self, value, delta, mask=None):
        return self._shuffle(value, self.lane + int(delta), mask)

    def shfl_up(self, value, delta, mask=None):
        return self._shuffle(value, self.lane - int(delta), mask)

    def shfl_xor(self, value, lane_mask, mask=None):
        return self._shuffle(value, self.lane ^ int(lane_mask), mask)

    def shfl(self, value, src_lane, mask=None):
        return self._shuffle(value, np.asarray(src_lane) % 32, mask)

    def _vote(self, pred, mask, how):
        p = np.broadcast_to(np.asarray(pred, bool), self._shape)
        m = None if mask is None else np.broadcast_to(mask, self._shape)
        pad = -self.nthreads % 32
        rows = lambda x, fill: np.pad(x, ((0, 0), (0, pad)), constant_values=fill).reshape(self.nblocks, -1, 32)  # noqa: E731
        if how == "all":
            yes = ~rows(~p if m is None else ~p & m, False).any(axis=2)
        else:
            yes = rows(p if m is None else p & m, False).any(axis=2)
        out = np.repeat(yes, 32, axis=1)[:, :self.nthreads]
        return out if m is None else out & m

    def any(self, pred, mask=None):
        return self._vote(pred, mask, "any")

    def all(self, pred, mask=None):
        return self._vote(pred, mask, "all")

    def syncwarp(self, mask=None):
        pass

    def branch(self, cond, mask=None):
        cond = np.asarray(cond)
        if cond.shape != self._shape:  # a writable mask: kernels narrow it in place (live &= …)
            cond = np.broadcast_to(cond, self._shape).copy()
        return cond if mask is None else cond & mask

    def sync(self, mask=None):
        pass  # every block's threads run each statement together: the barrier is implicit

    def alu(self, ops=1, mask=None):
        pass


def run(kernel, grid, block, args=()):
    """``kernel(blk, *args)`` over the grid, in passes of blocks like ``simtdocs.launch``."""
    grid = tuple(grid) + (1,) * (3 - len(grid)) if isinstance(grid, tuple) else (grid, 1, 1)
    block = tuple(block) + (1,) * (3 - len(block)) if isinstance(block, tuple) else (block, 1, 1)
    total = grid[0] * grid[1] * grid[2]
    per_pass = max(1, THREADS_PER_PASS // (block[0] * block[1] * block[2]))
    for first in range(0, total, per_pass):
        kernel(NumpyBlock(grid, block, first, min(per_pass, total - first)), *args)
