"""Fresh memory costs a large launch more than its arithmetic.

A launch of a few million threads makes and drops dozens of arrays of 16 to 32 MB (index
arrays, loaded values, masks). By default glibc hands such memory back to the operating
system as soon as it is free, so the next launch's arrays are fresh pages that the kernel
zeroes on first touch: on the benchmark machine that was a third of a 4 M-thread launch
(``benchmarks/shapes.py``). So at the first ``launch`` simtdocs asks glibc to serve blocks
up to 32 MB from its heap and to keep up to 512 MB of freed heap for reuse. The process
may then hold that much more memory than it uses; set ``SIMTDOCS_MALLOC=default`` to leave
the allocator alone. Elsewhere than glibc (macOS, musl) nothing happens.
"""

from __future__ import annotations

import ctypes
import os
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # from glibc's <malloc.h>
HEAP_UP_TO = 32 << 20  # glibc's largest mmap threshold
KEEP_FREED = 512 << 20

_done = False


def keep_freed_memory() -> bool:
    """Tune glibc once per process (see the module docstring); whether it was tuned."""
    global _done
    if _done:
        return True
    _done = True
    if not sys.platform.startswith("linux") or os.environ.get("SIMTDOCS_MALLOC") == "default":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, HEAP_UP_TO)) and bool(libc.mallopt(M_TRIM_THRESHOLD, KEEP_FREED))
    except (OSError, AttributeError):
        return False
