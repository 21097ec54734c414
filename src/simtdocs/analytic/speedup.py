"""Speed-up laws, and the launch overhead of a decode step.

Amdahl: a fixed task with serial fraction ``s`` on ``n`` workers speeds up
``1 / (s + (1 - s) / n)``. Gustafson: a task grown to keep ``n`` workers busy for the same
time does ``s + (1 - s) n`` times the work. Launch overhead is Amdahl's serial part in
inference: the CPU issues kernels one by one.
"""

from __future__ import annotations

from dataclasses import dataclass


def amdahl(s: float, n: float) -> float:
    """Speed-up of a fixed-size task whose fraction ``s`` is serial, on ``n`` workers."""
    if not 0 <= s <= 1 or n < 1:
        raise ValueError("need 0 <= s <= 1 and n >= 1")
    return 1 / (s + (1 - s) / n)


def gustafson(s: float, n: float) -> float:
    """Scaled speed-up when the parallel part grows with ``n`` and the serial time stays."""
    if not 0 <= s <= 1 or n < 1:
        raise ValueError("need 0 <= s <= 1 and n >= 1")
    return s + (1 - s) * n


@dataclass(frozen=True)
class LaunchOverhead:
    """Result of ``launch_overhead``: the time of a sequence of kernel launches."""

    kernels: int
    gpu_s: float
    overhead_s: float  # per launch

    @property
    def launch_s(self) -> float:
        return self.kernels * self.overhead_s

    @property
    def serial_s(self) -> float:
        """CPU launches and GPU work one after another: the upper bound."""
        return self.gpu_s + self.launch_s

    @property
    def overlapped_s(self) -> float:
        """Launches queued ahead and overlapped with the GPU: the lower bound."""
        return max(self.gpu_s, self.launch_s)

    @property
    def overhead_share(self) -> float:
        """Share of the serial time spent launching."""
        return self.launch_s / self.serial_s


def launch_overhead(kernels: int, gpu_s: float, overhead_s: float) -> LaunchOverhead:
    """Time of ``kernels`` launches doing ``gpu_s`` of GPU work at ``overhead_s`` each."""
    if kernels < 0 or gpu_s < 0 or overhead_s < 0:
        raise ValueError("kernels, gpu_s and overhead_s must be non-negative")
    return LaunchOverhead(kernels, gpu_s, overhead_s)


def decode_step(layers: int, kernels_per_layer: int, extra_kernels: int, gpu_s: float,
                overhead_s: float) -> LaunchOverhead:
    """One decode step of a transformer: ``layers × kernels_per_layer + extra_kernels`` launches."""
    return launch_overhead(layers * kernels_per_layer + extra_kernels, gpu_s, overhead_s)
