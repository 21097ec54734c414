"""After a launch, glibc keeps freed memory: a second 16 MB array reuses the first one's pages."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import resource, numpy as np, simtdocs
simtdocs.launch(lambda blk: None, 1, 32)
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
a = np.ones(1 << 22, np.float32); del a          # 16 MB, then free it
before = faults()
b = np.ones(1 << 22, np.float32)                  # the same size again
print(faults() - before)
"""


def page_faults(env_extra: dict) -> int:
    env = {**os.environ, **env_extra}
    env.pop("MALLOC_TRIM_THRESHOLD_", None)
    env.pop("MALLOC_MMAP_THRESHOLD_", None)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_a_launch_makes_freed_memory_reusable():
    tuned, default = page_faults({}), page_faults({"SIMTDOCS_MALLOC": "default"})
    # 16 MB is 4,096 pages of 4 KB (or 8 huge pages): fresh memory faults them all in again.
    assert tuned < 100, tuned
    assert default > tuned, (default, tuned)
