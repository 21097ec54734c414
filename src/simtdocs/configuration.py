"""The launch configuration: what ``kernel<<<grid, block, shared_bytes>>>`` may ask for.

Everything here is checked before any thread runs, and an invalid launch raises
``LaunchError`` with the CUDA error's name first, as ``cudaGetErrorName`` would print it.
``_Launch`` is what one launch keeps across its passes.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field

import numpy as np

from .arguments import byte_offset, read_only, writable
from .counters import Stats
from .devices import Device
from .diagnostics import LaunchError, SimulatorError, Site
from .shared_memory import STATIC_SHARED_LIMIT
from .threads import geometry


@dataclass
class _Launch:
    """What a launch keeps across its passes: configuration, checks, sites and counters."""

    kernel_name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    device: Device
    dynamic_shared: int
    dynamic_reserved: int  # max_dynamic_shared_bytes when given, else shared_bytes
    shared_limit: int
    shared_limit_reason: str
    tools: frozenset
    stats: Stats
    trace: tuple[int, int] | None = None  # (linear block, warp) whose accesses are recorded
    sites: dict = field(default_factory=dict)
    site_list: list = field(default_factory=list)
    race_log: list = field(default_factory=list)
    _ids: dict = field(default_factory=dict)
    _seq: int = 0
    _placed: dict = field(default_factory=dict)  # id(array) -> [array, byte offset, writable twin]

    def __post_init__(self):
        self.geometry = geometry(self.grid, self.block)

    def site_id(self, site: Site) -> int:
        i = self._ids.get(site)
        if i is None:
            i = self._ids[site] = len(self.site_list)
            self.site_list.append(site)
        return i

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _placement(self, array: np.ndarray) -> list:
        # A loop's accesses ask about the same few arrays again and again; the entry holds the
        # array, so its id cannot be taken by another one while the launch runs.
        hit = self._placed.get(id(array))
        if hit is None or hit[0] is not array:
            if len(self._placed) >= 256:
                self._placed.clear()
            hit = self._placed[id(array)] = [array, None, None]
        return hit

    def argument(self, array):
        """A kernel argument as the kernel sees it (``arguments.read_only``). The caller's
        array is the read-only view's writable twin, so stores need not look for it, and a
        view of an array that owns its memory starts where it does."""
        view = read_only(array)
        if view is not array:
            self._placed[id(view)] = [view, 0 if array.base is None else None, array]
        return view

    def byte_offset(self, array: np.ndarray) -> int:
        """``arguments.byte_offset``, kept for the launch."""
        hit = self._placement(array)
        if hit[1] is None:
            hit[1] = byte_offset(array)
        return hit[1]

    def writable(self, array: np.ndarray) -> np.ndarray:
        """``arguments.writable``, kept for the launch."""
        hit = self._placement(array)
        if hit[2] is None:
            hit[2] = writable(array)
        return hit[2]


def _dims(name: str, dims) -> tuple[int, int, int]:
    if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        dims = (dims,)
    elif isinstance(dims, float):
        raise LaunchError(f"cudaErrorInvalidConfiguration: {name} = {dims!r} is not an integer; "
                          f"write {name}={int(dims)} (or {name}=cdiv(n, threads) for a size that must round up)")
    try:
        dims = tuple(dims)
    except TypeError:
        raise LaunchError(f"cudaErrorInvalidConfiguration: {name} must be an int or a tuple of 1 to 3 ints, "
                          f"got {dims!r}") from None
    if not 1 <= len(dims) <= 3:
        raise LaunchError(f"cudaErrorInvalidConfiguration: {name} must have 1 to 3 dimensions, got {dims}")
    for axis, d in zip("xyz", dims):
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
            raise LaunchError(f"cudaErrorInvalidConfiguration: {name}.{axis} must be an integer, got {d!r}")
        if d <= 0:
            raise LaunchError(f"cudaErrorInvalidConfiguration: {name}.{axis} = {d}; every dimension must be at least 1")
    return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))


def _check(name: str, dims, limits) -> None:
    for axis, d, limit in zip("xyz", dims, limits):
        if d > limit:
            raise LaunchError(f"cudaErrorInvalidConfiguration: {name}.{axis} = {d} exceeds the device limit {limit}")


def _shared_limit(device: Device, shared_bytes: int, max_dynamic) -> tuple[int, str]:
    """Bytes of shared memory a block may use in all, and the rule that sets it."""
    if max_dynamic is None:
        if shared_bytes > STATIC_SHARED_LIMIT:
            raise LaunchError(
                f"cudaErrorInvalidValue: {shared_bytes:,} bytes of dynamic shared memory per block; above "
                f"{STATIC_SHARED_LIMIT:,} (48 KB) a kernel must opt in: launch(..., max_dynamic_shared_bytes=N), "
                f"as cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize, N) does"
            )
        return STATIC_SHARED_LIMIT, f"without max_dynamic_shared_bytes= a block may use {STATIC_SHARED_LIMIT:,}"
    if not 0 <= max_dynamic <= device.max_shared_per_block:
        raise LaunchError(f"cudaErrorInvalidValue: max_dynamic_shared_bytes={max_dynamic:,}; "
                          f"{device.name} allows {device.max_shared_per_block:,}")
    if shared_bytes > max_dynamic:
        raise LaunchError(f"cudaErrorInvalidValue: {shared_bytes:,} bytes of dynamic shared memory per block, "
                          f"more than max_dynamic_shared_bytes={max_dynamic:,}")
    return device.max_shared_per_block, f"{device.name} allows {device.max_shared_per_block:,}"


def _explain(name: str, exc: ValueError) -> None:
    """Turn numpy's words for two kernel mistakes into the simulator's."""
    frames = traceback.extract_tb(exc.__traceback__)
    frame = next((f for f in reversed(frames) if f.name == name), frames[-1])  # the kernel's own line
    if "truth value of an array" in str(exc):
        raise SimulatorError(
            f"{name} (line {frame.lineno}: {frame.line}) branches in Python on an array of threads "
            f"or blocks. Threads take branches with masks (m = cond; blk.load(..., mask=m)) or "
            f"blk.branch(cond); for Python logic per block, launch with blocks_per_pass=1."
        ) from exc
    if "non-broadcastable output operand" in str(exc):
        raise SimulatorError(
            f"{name} (line {frame.lineno}: {frame.line}) updates in place an array that holds one row "
            f"for all blocks of the pass (blk.tx, blk.ty, blk.tz, blk.tid, blk.lane, blk.warp and what is "
            f"built from them alone) with values that differ between blocks. Write it as a new array "
            f"(i = i + blk.bx * blk.bdx), or start from one row per block (i = blk.tx + 0 * blk.bx)."
        ) from exc
    if "read-only" in str(exc):
        raise SimulatorError(
            f"{name} (line {frame.lineno}: {frame.line}) writes to a kernel argument directly. The "
            f"simulator sees memory only through blk: write blk.store(array, index, value) instead."
        ) from exc
