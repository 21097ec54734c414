"""Memory and counters: how one warp's access turns into sectors and wavefronts.

Both counters look at one warp-level memory instruction at a time, as the hardware does.
The input is one row of 32 lanes per warp (see ``simtdocs.threads``), plus which lanes run.

* global memory moves 32-byte **sectors**: a warp access costs as many sectors as the
  distinct sectors its active lanes touch (``distinct_per_warp`` of the sector numbers);
* shared memory has 32 **banks** of 4-byte words. A warp is served in *phases* (all 32
  lanes for 4-byte accesses, half a warp for 8-byte and a quarter for 16-byte ones, so a
  phase always asks for at most 32 words). A phase takes as many **wavefronts** as the
  largest number of distinct words it asks of one bank; the same word read by many lanes
  is a broadcast and costs nothing extra (``wavefronts``).

Each function is one numpy pass over all warps at once: each row is sorted, 32 values at a
time (as 32-bit keys when the values fit, which they do unless an access spans over 128 GB),
or, for sector numbers too far apart for that, a row walking memory forwards or backwards
is counted from the changes along it. No global sort and no Python loop per warp.
"""

from __future__ import annotations

import numpy as np

from .threads import idle_ones, warp_all, warp_any

BANKS = 32
#: Bytes in one global-memory sector, the unit DRAM and L2 move.
SECTOR_BYTES = 32
_NONE = np.iinfo(np.int64).max  # sorts after every real value: marks a lane that does not run


#: Marks a lane that does not run among values narrowed by ``_narrow``.
_NARROW_NONE = 0xFFFFFFFF


def _narrow(rows: np.ndarray, multiple: int = 1) -> np.ndarray | None:
    """``rows`` moved down by a multiple of ``multiple`` into uint32, when their spread allows
    (nearly always: 4 G sectors is 128 GB); None when it does not. numpy sorts short rows of
    32-bit values six times faster than of 64-bit ones. Moving by a multiple of 32 keeps
    every word in its bank."""
    low = int(rows.min()) // multiple * multiple
    if int(rows.max()) - low >= _NARROW_NONE:
        return None
    # One pass, in uint32 (modulo 2**32, where the difference fits).
    return np.subtract(rows, np.int64(low), dtype=np.uint32, casting="unsafe")


def sector_of(flat: np.ndarray, base: int, itemsize: int) -> np.ndarray:
    """The sector of element ``flat`` of an array whose first byte is byte ``base`` of its
    allocation: ``(base + flat·itemsize) // 32``, by shifts (a division is three times
    slower, and a warp access asks it of every lane)."""
    if base % SECTOR_BYTES == 0 and SECTOR_BYTES % itemsize == 0:
        sectors = flat >> ((SECTOR_BYTES // itemsize).bit_length() - 1)
        return sectors + base // SECTOR_BYTES if base else sectors
    return (base + flat * itemsize) >> (SECTOR_BYTES.bit_length() - 1)


def _distinct_sorted(rows: np.ndarray, active: np.ndarray | None, none=_NONE) -> int:
    """Distinct active values per row, summed, by sorting each row (``none``: a value above
    every real one, which marks the lanes that do not run)."""
    if active is not None:
        if none == _NARROW_NONE and rows.dtype == np.uint32:  # the idle lanes OR-ed to all ones
            rows = rows | idle_ones(active, np.uint32)
        else:
            rows = np.where(active, rows, none)
    ordered = np.sort(rows, axis=1)
    new = ordered[:, 1:] != ordered[:, :-1]
    if active is not None:
        new &= ordered[:, 1:] != none
        return int(np.count_nonzero(new) + np.count_nonzero(ordered[:, 0] != none))
    return int(np.count_nonzero(new) + ordered.shape[0])


def distinct_per_warp(rows: np.ndarray, active: np.ndarray | None = None) -> int:
    """Sum over warps of the number of distinct values among the active lanes.

    ``rows`` is (warps, 32) int64; ``active`` (warps, 32) bool, or None when every lane runs.
    A row that is monotone (lanes walking memory forwards or backwards, the usual case)
    is counted by its runs of equal values: a run counts when one of its lanes is active.
    """
    if active is not None:
        live = warp_any(active)
        if not live.all():  # warps that issue nothing cost nothing: leave them out early
            rows, active = rows[live], active[live]
    if rows.size == 0:
        return 0
    narrow = _narrow(rows)
    if narrow is not None:  # 32-bit values: sorting them is cheaper than the test below
        return _distinct_sorted(narrow, active, _NARROW_NONE)
    step = np.diff(rows, axis=1)
    if (step >= 0).all() or (step <= 0).all():  # every row walks one way (one pass each, no short-axis work)
        monotone = np.ones(rows.shape[0], bool)
    else:
        monotone = (step.min(axis=1) >= 0) | (step.max(axis=1) <= 0)
    total = 0
    if not monotone.all():
        other = ~monotone
        total += _distinct_sorted(rows[other], None if active is None else active[other])
        step, rows = step[monotone], rows[monotone]
        active = None if active is None else active[monotone]
    if rows.size == 0:
        return total
    if active is not None and active.shape[1] % 8 == 0:
        # A full warp's runs all count: only warps with an inactive lane need the mask. A
        # row of 32 bools is four 8-byte words of 0x01 bytes when every lane runs.
        partial = ~warp_all(active)
        if not partial.any():
            active = None
        elif partial.sum() * 4 < partial.size:
            some = step[partial]
            total += _runs_with_an_active_lane(some, active[partial])
            full = int(partial.size - np.count_nonzero(partial))
            return total + full + int(np.count_nonzero(step)) - int(np.count_nonzero(some))
    if active is None:
        return total + rows.shape[0] + int(np.count_nonzero(step))
    return total + _runs_with_an_active_lane(step, active)



def _runs_with_an_active_lane(step: np.ndarray, active: np.ndarray) -> int:
    """Runs of equal values along monotone rows (``step``: their differences) with an active lane."""
    starts = np.ones(active.shape, dtype=bool)
    starts[:, 1:] = step != 0
    run_has_active = np.logical_or.reduceat(active.reshape(-1), np.flatnonzero(starts))
    return int(np.count_nonzero(run_has_active))


def phases(words: np.ndarray, active: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Warp rows of shared-memory words, (warps, 32, k) for k words per lane, cut into phases.

    Returns (warps·k, 32) words and the matching active lanes: one row per phase.
    """
    W, lanes, k = words.shape
    per_phase = lanes // k
    rows = words.reshape(W * k, per_phase * k)
    if active is not None:
        active = np.repeat(active.reshape(W * k, per_phase), k, axis=1)
    return rows, active


def wavefronts(rows: np.ndarray, active: np.ndarray | None = None) -> tuple[int, int]:
    """(wavefronts, ideal wavefronts) of shared-memory phases.

    ``rows`` is (phases, 32) of 4-byte word addresses, ``active`` which slots run (None: all).
    A phase with an active lane takes max over banks of the distinct words in that bank;
    ideally it would take ⌈distinct words / 32⌉, which is 1 since a phase asks for ≤ 32 words.
    """
    if active is not None:
        live = warp_any(active)
        if not live.all():
            rows, active = rows[live], active[live]
        # An inactive slot repeats a word its phase already asks for: it adds nothing.
        rows = np.where(active, rows, rows.min(axis=1, initial=_NONE, where=active)[:, None])
    n = rows.shape[0]
    if n == 0:
        return 0, 0
    narrow = _narrow(rows, BANKS)
    ordered = np.sort(rows if narrow is None else narrow, axis=1)
    # Distinct words less than 32 apart are in 32 different banks: one wavefront.
    spread = ordered[:, -1].astype(np.int64) - ordered[:, 0] >= BANKS
    total = n - int(np.count_nonzero(spread))
    if not spread.any():
        return total, n
    rest = ordered if spread.all() else ordered[spread]
    # The others take as many wavefronts as the most distinct words any one bank holds.
    new = np.empty(rest.shape, dtype=bool)
    new[:, 0] = True
    np.not_equal(rest[:, 1:], rest[:, :-1], out=new[:, 1:])
    row = np.broadcast_to(np.arange(rest.shape[0])[:, None], rest.shape)[new]
    per_bank = np.bincount(row * BANKS + rest[new] % BANKS, minlength=rest.shape[0] * BANKS)
    total += int(per_bank.reshape(-1, BANKS).max(axis=1).sum())
    return total, n
