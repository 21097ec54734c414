"""Wave quantisation: a grid runs in waves of ``SMs × blocks per SM`` blocks."""

from __future__ import annotations

from dataclasses import dataclass

from ..devices import H100, Device


@dataclass(frozen=True)
class Waves:
    """Result of ``waves``."""

    blocks: int
    capacity: int  # blocks in one full wave

    @property
    def waves(self) -> int:
        return -(-self.blocks // self.capacity)

    @property
    def last_wave_blocks(self) -> int:
        return self.blocks - (self.waves - 1) * self.capacity

    @property
    def utilisation(self) -> float:
        """Busy block slots over all slots of all waves: 1.0 when the last wave is full."""
        return self.blocks / (self.waves * self.capacity)


def waves(blocks: int, blocks_per_sm: int = 1, device: Device = H100) -> Waves:
    """How ``blocks`` blocks fill ``device`` when ``blocks_per_sm`` fit on each SM at once."""
    if blocks < 1 or blocks_per_sm < 1:
        raise ValueError("blocks and blocks_per_sm must be at least 1")
    return Waves(blocks, device.sm_count * blocks_per_sm)
