"""Memory and counters: how one warp's access turns into sectors and wavefronts.

Both counters look at one warp-level memory instruction at a time, as the hardware does:

* global memory moves 32-byte **sectors**; a warp access costs as many sectors as the
  distinct sectors its active lanes touch (``count_sectors``);
* shared memory has 32 **banks** of 4-byte words; a warp access takes as many
  **wavefronts** as the largest number of distinct words it asks of any single bank.
  The same word read by many lanes is a broadcast and costs nothing extra
  (``count_wavefronts``).

Both take the active lanes of one instruction over a whole batch of blocks as a flat
array in (block, thread) order, plus ``starts``: the index of the first lane of each warp.
They are plain numpy passes over all warps at once: no Python loop per warp.
"""

from __future__ import annotations

import numpy as np


def _row_of_lane(starts: np.ndarray, n: int) -> np.ndarray:
    return np.repeat(np.arange(starts.size), np.diff(starts, append=n))


def count_sectors(sectors: np.ndarray, starts: np.ndarray) -> int:
    """Sum over warps of the number of distinct sectors its lanes touch.

    ``sectors`` holds one non-negative sector id per active lane; the lanes of warp ``w``
    are ``sectors[starts[w]:starts[w + 1]]``.
    """
    n = sectors.size
    if n == 0:
        return 0
    step = np.diff(sectors)
    step[starts[1:] - 1] = 0  # a new warp is not a new sector of the previous one
    # The common warp walks memory forwards: then every rise is a new sector.
    if (step >= 0).all():
        return starts.size + int(np.count_nonzero(step))
    row = _row_of_lane(starts, n).astype(np.int64)
    return int(np.unique(row * (int(sectors.max()) + 1) + sectors).size)


def count_wavefronts(words: np.ndarray, starts: np.ndarray, banks: int = 32) -> int:
    """Sum over warps of the largest number of distinct words that fall in one bank.

    ``words`` holds the 4-byte word address of each active lane (shape (lanes,), or
    (lanes, k) when a lane moves k words); ``starts`` as in ``count_sectors``.
    """
    if words.size == 0:
        return 0
    k = 1 if words.ndim == 1 else words.shape[1]
    flat = words.reshape(-1)
    full = flat.size == starts.size * 32 * k  # every warp has all 32 lanes: a matrix
    if full:
        rows = flat.reshape(starts.size, 32 * k)
        lowest, highest = rows.min(axis=1), rows.max(axis=1)
    else:
        lowest = np.minimum.reduceat(flat, starts * k)
        highest = np.maximum.reduceat(flat, starts * k)
    # Distinct words less than one bank-width apart all sit in different banks: one
    # wavefront. That is the usual access (consecutive words, or a broadcast), so only
    # the other warps are counted word by word.
    spread = highest - lowest >= banks
    total = int(starts.size - np.count_nonzero(spread))
    if not spread.any():
        return total
    if full:
        rest = rows[spread]
        if k == 1:
            # A warp whose lanes step through words with a constant stride s hits
            # gcd(s, 32) words in every bank it touches: the textbook case, no sort needed.
            step = np.diff(rest, axis=1)
            even = (step == step[:, :1]).all(axis=1)
            total += int(np.gcd(step[even, 0], banks).sum())
            rest = rest[~even]
            if rest.size == 0:
                return total
        ordered = np.sort(rest, axis=1)
        new = np.empty(ordered.shape, dtype=bool)
        new[:, 0] = True
        np.not_equal(ordered[:, 1:], ordered[:, :-1], out=new[:, 1:])
        row = np.broadcast_to(np.arange(ordered.shape[0])[:, None], ordered.shape)[new]
        bank = ordered[new] % banks
        n_rows = ordered.shape[0]
    else:
        row = _row_of_lane(starts * k, flat.size)
        pick = spread[row]
        row, w = row[pick].astype(np.int64), flat[pick].astype(np.int64)
        base = int(w.max()) + 1
        pairs = np.unique(row * base + w)  # each distinct word of each warp once
        row, bank = pairs // base, pairs % base % banks
        n_rows = starts.size
    per_bank = np.bincount(row * banks + bank, minlength=n_rows * banks)
    return total + int(per_bank.reshape(n_rows, banks).max(axis=1).sum())
