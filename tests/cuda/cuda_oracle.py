"""An independent meaning for per-thread kernels: run the kernel's own Python function once
per thread, in order, with ``cuda`` replaced by the indices of that thread.

This is what numba's simulator does (without its threads), so it only gives a meaning to
kernels whose threads do not talk to each other: no shared memory, barriers, shuffles or
votes. It checks the *compiler* (that masks, merges, loops, exits and device calls mean
what the Python means); the engine is checked against ``simtdocs.reference`` elsewhere.
"""

from __future__ import annotations

import math
import types

import numpy as np

from simtdocs import cuda as sc


class _Dim:
    def __init__(self, x, y, z):
        self.x, self.y, self.z = x, y, z


class FakeCuda:
    """What ``cuda`` means inside one thread."""

    def __init__(self, grid, block):
        self.blockDim, self.gridDim = _Dim(*block), _Dim(*grid)
        self.warpsize = 32
        self.atomic = types.SimpleNamespace(add=self._add, max=self._max, min=self._min, exch=self._exch,
                                            sub=self._sub)
        self.local = types.SimpleNamespace(array=lambda shape, dtype: np.zeros(shape, sc.types.dtype(dtype)))
        self.const = types.SimpleNamespace(array_like=lambda a: a)
        self.shared = types.SimpleNamespace(array=lambda shape, dtype: np.zeros(shape, sc.types.dtype(dtype)))

    def at(self, block, thread):
        self.blockIdx, self.threadIdx = _Dim(*block), _Dim(*thread)
        bx, by = self.blockDim.x, self.blockDim.y
        self.laneid = (thread[0] + bx * (thread[1] + by * thread[2])) % 32

    def grid(self, n):
        out = tuple(b * d + t for b, d, t in zip((self.blockIdx.x, self.blockIdx.y, self.blockIdx.z),
                                                 (self.blockDim.x, self.blockDim.y, self.blockDim.z),
                                                 (self.threadIdx.x, self.threadIdx.y, self.threadIdx.z)))[:n]
        return out[0] if n == 1 else out

    def gridsize(self, n):
        out = (self.gridDim.x * self.blockDim.x, self.gridDim.y * self.blockDim.y, self.gridDim.z * self.blockDim.z)[:n]
        return out[0] if n == 1 else out

    @staticmethod
    def popc(x):
        return bin(int(x) & 0xFFFFFFFFFFFFFFFF).count("1")

    def syncthreads(self):
        pass

    @staticmethod
    def _add(a, i, v):
        old = a[i]
        a[i] += v
        return old

    @staticmethod
    def _sub(a, i, v):
        old = a[i]
        a[i] -= v
        return old

    @staticmethod
    def _max(a, i, v):
        old = a[i]
        a[i] = max(old, v)
        return old

    @staticmethod
    def _min(a, i, v):
        old = a[i]
        a[i] = min(old, v)
        return old

    @staticmethod
    def _exch(a, i, v):
        old = a[i]
        a[i] = v
        return old


def _plain(fn, fake, cache):
    """``fn``'s Python function with ``cuda`` (and the device functions it calls) rebound."""
    if fn in cache:
        return cache[fn]
    py = fn.py_func if hasattr(fn, "py_func") else fn
    g = dict(py.__globals__)
    g["cuda"] = fake
    g["math"] = math
    out = cache[fn] = types.FunctionType(py.__code__, g, py.__name__, py.__defaults__, py.__closure__)
    for name, value in list(g.items()):
        if isinstance(value, sc.DeviceFunction):
            g[name] = _plain(value, fake, cache)
    return out


def launch(kernel, grid, block, args):
    """Run ``kernel`` thread by thread (blocks in order, threads x fastest) on ``args`` in place."""
    grid = tuple(grid) + (1,) * (3 - len(grid))
    block = tuple(block) + (1,) * (3 - len(block))
    fake = FakeCuda(grid, block)
    f = _plain(kernel, fake, {})
    with np.errstate(all="ignore"):
        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    for tz in range(block[2]):
                        for ty in range(block[1]):
                            for tx in range(block[0]):
                                fake.at((bx, by, bz), (tx, ty, tz))
                                f(*args)
