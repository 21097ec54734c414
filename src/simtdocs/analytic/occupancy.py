"""Theoretical occupancy, step by step as ``cudaOccMaxActiveBlocksPerMultiprocessor`` does it.

Four resources cap the blocks that can live on one SM at the same time; the smallest cap
wins and names the limiter:

1. warps: ``max warps per SM // warps per block``;
2. blocks: the per-compute-capability block limit;
3. registers: handed out per warp in 256-register units, and counted per SM sub-partition
   (each of the 4 schedulers owns a quarter of the register file);
4. shared memory: per block, rounded up to the 128-byte allocation unit after adding the
   1 KB the system reserves for every block.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..devices import H100, Device
from ..shared_memory import STATIC_SHARED_LIMIT
from ..threads import WARP_SIZE


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@dataclass(frozen=True)
class Occupancy:
    """Result of ``occupancy``: blocks and warps per SM, the ratio, and what limits it."""

    device: Device
    threads_per_block: int
    registers_per_thread: int
    shared_bytes_per_block: int
    warps_per_block: int
    limits: dict  # {"warps": n, "blocks": n, "registers": n, "shared memory": n}
    registers_per_warp: int  # after rounding up to the allocation unit
    shared_per_block_allocated: int  # after reservation and rounding

    @property
    def blocks_per_sm(self) -> int:
        return min(self.limits.values())

    @property
    def warps_per_sm(self) -> int:
        return self.blocks_per_sm * self.warps_per_block

    @property
    def occupancy(self) -> float:
        return self.warps_per_sm / self.device.max_warps_per_sm

    @property
    def limiters(self) -> list[str]:
        """Every resource whose cap equals the result (there can be a tie)."""
        return [k for k, v in self.limits.items() if v == self.blocks_per_sm]


def occupancy(threads_per_block: int, registers_per_thread: int = 32, shared_bytes_per_block: int = 0,
              device: Device = H100, *, static_shared_bytes: int = 0) -> Occupancy:
    """Blocks per SM, warps per SM and occupancy of a kernel on ``device``.

    ``shared_bytes_per_block`` is static plus dynamic shared memory, as the kernel asks for it;
    as in ``launch``, more than 48 KB per block is possible only as dynamic shared memory with
    the opt-in attribute (which the calculator assumes), and ``static_shared_bytes``, the
    static part, may not exceed 48 KB. Raises ``ValueError`` for a block the device cannot
    run at all.
    """

    if not 0 <= static_shared_bytes <= min(STATIC_SHARED_LIMIT, shared_bytes_per_block):
        raise ValueError(
            f"static_shared_bytes = {static_shared_bytes:,}: static __shared__ memory is at most "
            f"{STATIC_SHARED_LIMIT:,} (48 KB) per block and part of shared_bytes_per_block ({shared_bytes_per_block:,}); "
            f"a larger tile must be dynamic"
        )
    if not 1 <= threads_per_block <= device.max_threads_per_block:
        raise ValueError(f"threads_per_block = {threads_per_block}: must be 1 to {device.max_threads_per_block}")
    if not 0 <= registers_per_thread <= device.max_registers_per_thread:
        raise ValueError(f"registers_per_thread = {registers_per_thread}: must be 0 to {device.max_registers_per_thread}")
    if not 0 <= shared_bytes_per_block <= device.max_shared_per_block:
        raise ValueError(
            f"shared_bytes_per_block = {shared_bytes_per_block:,}: {device.name} allows at most {device.max_shared_per_block:,}"
        )
    warps_per_block = -(-threads_per_block // WARP_SIZE)

    by_warps = device.max_warps_per_sm // warps_per_block
    by_blocks = device.max_blocks_per_sm

    regs_per_warp = _round_up(registers_per_thread * WARP_SIZE, device.register_allocation_unit)
    if regs_per_warp == 0:
        by_registers = by_blocks
    else:
        parts = device.sub_partitions_per_sm
        # The launch check assumes a block's warps are spread over all sub-partitions at once.
        if regs_per_warp * _round_up(warps_per_block, parts) > device.registers_per_sm:
            by_registers = 0
        else:
            warps_per_part = (device.registers_per_sm // parts) // regs_per_warp
            by_registers = warps_per_part * parts // warps_per_block

    smem = _round_up(shared_bytes_per_block + device.reserved_shared_per_block, device.shared_allocation_unit)
    by_shared = device.shared_per_sm // smem if smem else by_blocks

    limits = {"warps": by_warps, "blocks": by_blocks, "registers": by_registers, "shared memory": by_shared}
    return Occupancy(device, threads_per_block, registers_per_thread, shared_bytes_per_block,
                     warps_per_block, limits, regs_per_warp, smem)
