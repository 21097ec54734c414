"""Memory and counters: how one warp's access turns into sectors and wavefronts.

Both counters look at one warp-level memory instruction at a time, as the hardware does:

* global memory moves 32-byte **sectors**; a warp access costs as many sectors as the
  distinct sectors its active lanes touch (``count_sectors``);
* shared memory has 32 **banks** of 4-byte words; a warp access takes as many
  **wavefronts** as the largest number of distinct words it asks of any single bank.
  The same word read by many lanes is a broadcast and costs nothing extra
  (``count_wavefronts``).

The arrays here hold one row per warp access and one column per lane (or per 4-byte
word a lane touches); ``active`` is ``None`` when every lane of every row is active.
They are plain numpy passes over all warps at once: no Python loop per warp.
"""

from __future__ import annotations

import numpy as np


def count_sectors(sectors: np.ndarray, active: np.ndarray | None) -> int:
    """Sum over rows (warp accesses) of the number of distinct sector ids in the row.

    ``sectors`` has shape (rows, lanes) and non-negative ids; rows with no active lane
    cost nothing.
    """
    if sectors.size == 0:
        return 0
    if active is None:
        step = np.diff(sectors, axis=1)
        # The common warp walks memory forwards: then every rise is a new sector.
        if (step >= 0).all():
            return sectors.shape[0] + int(np.count_nonzero(step))
        ordered = np.sort(sectors, axis=1)
        return sectors.shape[0] + int(np.count_nonzero(np.diff(ordered, axis=1)))
    full = active.all(axis=1)
    total = 0
    if full.any():
        total += count_sectors(sectors[full], None)
    partial = ~full & active.any(axis=1)
    if partial.any():
        # Inactive lanes become -1, sort to the front and are not counted.
        ids = np.where(active[partial], sectors[partial], -1)
        ordered = np.sort(ids, axis=1)
        new = (ordered[:, 1:] != ordered[:, :-1]) & (ordered[:, 1:] >= 0)
        total += int(np.count_nonzero(new)) + int(np.count_nonzero(ordered[:, 0] >= 0))
    return total


def count_wavefronts(words: np.ndarray, active: np.ndarray | None, banks: int = 32) -> tuple[int, int]:
    """Shared-memory wavefronts of a batch of warp accesses.

    ``words`` has shape (rows, columns): the 4-byte word addresses each row touches.
    Returns ``(wavefronts, requests)``: the sum over rows of the largest number of distinct
    words falling in one bank, and the number of rows with at least one active column.
    """
    if words.size == 0:
        return 0, 0
    ids = words if active is None else np.where(active, words, -1)
    ordered = np.sort(ids, axis=1)
    live = ordered[:, -1] >= 0
    lowest = np.where(ordered >= 0, ordered, np.iinfo(ordered.dtype).max).min(axis=1) if active is not None else ordered[:, 0]
    # Distinct words less than one bank-width apart all sit in different banks: one wavefront.
    # That is the usual access (consecutive words, or a broadcast), so only the rest is counted.
    spread = live & (ordered[:, -1] - lowest >= banks)
    ways = live.astype(np.int64)
    if spread.any():
        ways[spread] = _max_words_per_bank(ordered[spread], banks)
    return int(ways.sum()), int(np.count_nonzero(live))


def _max_words_per_bank(ordered: np.ndarray, banks: int) -> np.ndarray:
    """Per row of sorted word ids (-1 = inactive): the most distinct words in one bank."""
    new = np.empty(ordered.shape, dtype=bool)
    new[:, 0] = True
    np.not_equal(ordered[:, 1:], ordered[:, :-1], out=new[:, 1:])
    new &= ordered >= 0
    rows = np.arange(ordered.shape[0])[:, None] * banks
    slot = np.where(new, rows + ordered % banks, ordered.shape[0] * banks)  # the last slot collects the rest
    per_bank = np.bincount(slot.reshape(-1), minlength=ordered.shape[0] * banks + 1)[:-1]
    return per_bank.reshape(ordered.shape[0], banks).max(axis=1)


def to_warps(values: np.ndarray, active: np.ndarray | None, threads: int, fill=0):
    """Reshape per-thread arrays (blocks, threads[, k]) into warp rows (blocks*warps, 32*k).

    A last warp with fewer than 32 threads is padded with inactive lanes, so ``active``
    is returned as an array whenever padding was needed.
    """
    blocks = values.shape[0]
    extra = values.shape[2:]
    k = int(np.prod(extra)) if extra else 1
    warps = -(-threads // 32)
    if threads % 32 == 0:
        rows = values.reshape(blocks * warps, 32 * k)
        if active is None:
            return rows, None
        if k > 1:
            active = np.repeat(active, k, axis=1)
        return rows, active.reshape(blocks * warps, 32 * k)
    padded = np.full((blocks, warps * 32) + extra, fill, dtype=values.dtype)
    padded[:, :threads] = values
    mask = np.zeros((blocks, warps * 32), dtype=bool)
    mask[:, :threads] = True if active is None else active
    if k > 1:
        mask = np.repeat(mask, k, axis=1)
    return padded.reshape(blocks * warps, 32 * k), mask.reshape(blocks * warps, 32 * k)
