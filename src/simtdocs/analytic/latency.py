"""Latency hiding by Little's law: bytes in flight = bandwidth × latency.

To keep its share of DRAM bandwidth busy, one SM needs ``bandwidth per SM × latency`` bytes
of reads in flight at every moment. Warps supply them: each has some independent requests
outstanding (instruction-level parallelism), each request some bytes (32 lanes × 4 bytes for
a float load, × 16 bytes for a float4 load).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..devices import H100, Device

#: An assumption, not a specification: a typical DRAM load latency under load on recent
#: data-centre GPUs is several hundred nanoseconds.
MEMORY_LATENCY_S = 500e-9


@dataclass(frozen=True)
class LatencyHiding:
    """Result of ``latency_hiding``."""

    warps: int
    requests_per_warp: int
    bytes_per_request: int
    needed_bytes: float  # per SM
    latency_s: float

    @property
    def in_flight_bytes(self) -> int:
        return self.warps * self.requests_per_warp * self.bytes_per_request

    @property
    def fraction(self) -> float:
        """Fraction of the SM's bandwidth share reached (at most 1)."""
        return min(1.0, self.in_flight_bytes / self.needed_bytes)


def latency_hiding(warps: int, requests_per_warp: int = 1, bytes_per_request: int = 128,
                   device: Device = H100, latency_s: float = MEMORY_LATENCY_S) -> LatencyHiding:
    """How much of one SM's DRAM bandwidth ``warps`` resident warps can keep busy."""
    if warps < 0 or requests_per_warp < 0 or bytes_per_request < 0:
        raise ValueError("warps, requests_per_warp and bytes_per_request must be non-negative")
    needed = device.bandwidth_per_sm * latency_s
    return LatencyHiding(warps, requests_per_warp, bytes_per_request, needed, latency_s)
