"""A slow, obviously-right reference for the simulator's counters: one Python loop per
warp and per lane, sets instead of sorting tricks. Tests compare the simulator with it on
random access patterns."""

from __future__ import annotations

import numpy as np


def warps_of(active: np.ndarray):
    """Yield (block, warp, [threads]) for every warp with an active thread."""
    blocks, threads = active.shape
    for b in range(blocks):
        for w in range(0, threads, 32):
            lanes = [t for t in range(w, min(w + 32, threads)) if active[b, t]]
            if lanes:
                yield b, w // 32, lanes


def global_counters(index: np.ndarray, active: np.ndarray, itemsize: int, width: int = 1) -> dict:
    requests = sectors = requested = lanes_total = 0
    for b, _, lanes in warps_of(active):
        requests += 1
        touched = set()
        for t in lanes:
            first = int(index[b, t]) * itemsize
            for byte in range(first, first + itemsize * width):
                touched.add(byte // 32)
        sectors += len(touched)
        requested += len(lanes) * itemsize * width
        lanes_total += len(lanes)
    return {"requests": requests, "sectors": sectors, "requested_bytes": requested, "active_lanes": lanes_total}


def shared_wavefronts(index: np.ndarray, active: np.ndarray, itemsize: int) -> tuple[int, int]:
    """(wavefronts, requests): 8-byte lanes are served by half warps, 16-byte by quarter warps."""
    wavefronts = requests = 0
    per_phase = 32 // max(1, itemsize // 4)
    for b, w, lanes in warps_of(active):
        requests += 1
        for phase in range(0, 32, per_phase):
            banks: dict[int, set] = {}
            for t in lanes:
                if phase <= t - 32 * w < phase + per_phase:
                    first = int(index[b, t]) * itemsize
                    for word in range(first // 4, (first + itemsize - 1) // 4 + 1):
                        banks.setdefault(word % 32, set()).add(word)
            if banks:
                wavefronts += max(len(words) for words in banks.values())
    return wavefronts, requests


def races(ops, blocks: int, threads: int):
    """Replay shared-memory ops [("w"|"r"|"sync", index (B,T) or None, active (B,T) or None)]
    and return the sorted list of (op number, block, kind) hazards: one per op, block and kind.
    Warps take their turn in order, so a warp's write races with an earlier warp's write."""
    found = set()
    writers = [dict() for _ in range(blocks)]
    readers = [dict() for _ in range(blocks)]
    for k, (op, index, active) in enumerate(ops):
        if op == "sync":
            writers = [dict() for _ in range(blocks)]
            readers = [dict() for _ in range(blocks)]
            continue
        for b in range(blocks):
            for w in range(0, threads, 32):
                lanes = [t for t in range(w, min(w + 32, threads)) if active[b, t]]
                for t in lanes:
                    e = int(index[b, t])
                    if op == "r" and writers[b].get(e, set()) - {w // 32}:
                        found.add((k, b, "read-after-write"))
                    if op == "w" and readers[b].get(e, set()) - {w // 32}:
                        found.add((k, b, "write-after-read"))
                    if op == "w" and writers[b].get(e, set()) - {w // 32}:
                        found.add((k, b, "write-after-write"))
                for t in lanes:
                    (readers if op == "r" else writers)[b].setdefault(int(index[b, t]), set()).add(w // 32)
    return sorted(found)
