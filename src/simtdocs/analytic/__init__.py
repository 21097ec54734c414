"""Analytic models: plain functions of a few numbers, each returning a small result object.

* ``occupancy``: resident blocks and warps per SM, and what limits them
* ``latency_hiding``: Little's law for DRAM bandwidth
* ``waves``: how a grid fills the SMs, wave after wave
* ``amdahl``, ``gustafson``, ``launch_overhead``, ``decode_step``: speed-up laws and the
  cost of launching many small kernels
"""

from .latency import LatencyHiding, latency_hiding
from .occupancy import Occupancy, occupancy
from .speedup import LaunchOverhead, amdahl, decode_step, gustafson, launch_overhead
from .waves import Waves, waves

__all__ = [
    "LatencyHiding", "LaunchOverhead", "Occupancy", "Waves", "amdahl", "decode_step",
    "gustafson", "latency_hiding", "launch_overhead", "occupancy", "waves",
]
