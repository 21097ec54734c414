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

It knows only what the suite's kernels use; anything else raises ``NotImplementedError``.
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
            raise NotImplementedError("vector loads")
        data, at = self._where(array, index, mask)
        if mask is None:
            got = data[at]
            return got.reshape(self._shape).copy() if isinstance(at[0], slice) else got
        out = np.zeros(self._shape, data.dtype)
        out[np.broadcast_to(mask, self._shape)] = data[at]
        return out

    def store(self, array, index, value, mask=None, width=1):
        if width != 1:
            raise NotImplementedError("vector stores")
        data, at = self._where(array, index, mask)
        v = np.broadcast_to(np.asarray(value, data.dtype), self._shape)
        v = v if mask is None else v[np.broadcast_to(mask, self._shape)]
        data[at] = v.reshape(-1) if isinstance(at[0], slice) else v

    def atomic_add(self, array, index, value, mask=None):
        data, at = self._where(array, index, mask)
        v = np.broadcast_to(np.asarray(value, data.dtype), self._shape)
        np.add.at(data, at, v if mask is None else v[np.broadcast_to(mask, self._shape)])

    def branch(self, cond, mask=None):
        cond = np.broadcast_to(cond, self._shape)
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
