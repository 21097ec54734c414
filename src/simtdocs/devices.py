"""Devices are data: the few numbers of a GPU that the simulator and the models use.

Every figure below is a published specification; the source is named beside it. What all
NVIDIA GPUs share (32 lanes per warp, 32 banks, 32-byte sectors) is a named constant of the
module that uses it: ``threads.WARP_SIZE``, ``memory.BANKS``, ``memory.SECTOR_BYTES``.
``Device`` is a plain frozen dataclass, so a reader can describe another GPU with
``dataclasses.replace(H100, name=..., sm_count=...)`` or by filling in every field.
"""

from __future__ import annotations

from dataclasses import dataclass

from .threads import WARP_SIZE

KB = 1024

#: Sources for the presets.
#: [CG] NVIDIA CUDA C++ Programming Guide 12.9, "Compute Capabilities", Table 21
#:      (technical specifications per compute capability) and "Features and Technical Specifications".
#: [H100] NVIDIA H100 Tensor Core GPU datasheet (SXM5): 132 SMs, 3.35 TB/s HBM3, 50 MB L2.
#: [4090] NVIDIA Ada GPU Architecture whitepaper (AD102, RTX 4090): 128 SMs, 2.52 GHz boost,
#:        1,008 GB/s GDDR6X, 72 MB L2.
#: [A100] NVIDIA A100 Tensor Core GPU datasheet (SXM4 80 GB): 108 SMs, 2,039 GB/s HBM2e, 40 MB L2.
#: [A100-40] The same datasheet, SXM4 40 GB column: 1,555 GB/s HBM2; and the NVIDIA A100 Tensor Core
#:        GPU Architecture whitepaper: 108 SMs, 1,410 MHz boost clock, 40 MB L2.
#: [V100] NVIDIA Tesla V100 GPU Architecture whitepaper (WP-08608-001), Tesla V100 SXM2: 80 SMs,
#:        64 FP32 cores per SM, 1,530 MHz boost clock, 6,144 KB L2, up to 96 KB shared memory per SM;
#:        NVIDIA Tesla V100 datasheet: 900 GB/s HBM2.
#: [occ] cuda_occupancy.h (CUDA toolkit), cudaOccSMemAllocationGranularity: 256 bytes for compute
#:        capability 7.x, 128 for 8.x.
SOURCES = {
    "CG": "NVIDIA CUDA C++ Programming Guide 12.9, Compute Capabilities (Table 21)",
    "H100": "NVIDIA H100 Tensor Core GPU datasheet (SXM5)",
    "RTX 4090": "NVIDIA Ada GPU Architecture whitepaper (AD102 / GeForce RTX 4090)",
    "A100": "NVIDIA A100 Tensor Core GPU datasheet (SXM4 80 GB)",
    "A100 40GB": "NVIDIA A100 Tensor Core GPU datasheet (SXM4 40 GB) and A100 architecture whitepaper",
    "V100": "NVIDIA Tesla V100 GPU Architecture whitepaper and Tesla V100 datasheet (SXM2)",
}


@dataclass(frozen=True)
class Device:
    """A GPU described by the numbers the simulator and the analytic models need.

    Sizes are in bytes, rates per second, the clock in hertz.
    """

    name: str
    compute_capability: tuple[int, int]
    sm_count: int
    fp32_lanes_per_sm: int
    clock_hz: float
    memory_bandwidth: float  # bytes per second, DRAM (HBM or GDDR)
    l2_bytes: int
    # Limits that decide how many blocks fit on one SM (the occupancy calculator's inputs).
    max_threads_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int = 65536
    max_registers_per_thread: int = 255
    register_allocation_unit: int = 256  # registers are handed out per warp in these units
    sub_partitions_per_sm: int = 4  # one warp scheduler and a quarter of the register file each
    shared_per_sm: int = 228 * KB  # the largest shared-memory carve-out of the unified L1
    max_shared_per_block: int = 227 * KB  # with the opt-in attribute; 48 KB without it
    shared_allocation_unit: int = 128
    reserved_shared_per_block: int = 1 * KB  # the system's share of every block (CC >= 8.0)
    max_threads_per_block: int = 1024
    max_block_dims: tuple[int, int, int] = (1024, 1024, 64)
    max_grid_dims: tuple[int, int, int] = (2**31 - 1, 65535, 65535)

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // WARP_SIZE

    @property
    def schedulers_per_sm(self) -> int:
        return self.sub_partitions_per_sm

    @property
    def fp32_lanes(self) -> int:
        """FP32 lanes on the whole chip (what a datasheet calls CUDA cores)."""
        return self.sm_count * self.fp32_lanes_per_sm

    @property
    def bandwidth_per_sm(self) -> float:
        return self.memory_bandwidth / self.sm_count

    def __str__(self) -> str:
        major, minor = self.compute_capability
        return f"{self.name} (compute capability {major}.{minor})"


H100 = Device(
    name="H100 SXM",
    compute_capability=(9, 0),
    sm_count=132,  # [H100]
    fp32_lanes_per_sm=128,  # [CG]
    clock_hz=1.98e9,  # [H100] max boost clock
    memory_bandwidth=3.35e12,  # [H100]
    l2_bytes=50 * KB * KB,  # [H100]
    max_threads_per_sm=2048,  # [CG]
    max_blocks_per_sm=32,  # [CG]
    shared_per_sm=228 * KB,  # [CG]
    max_shared_per_block=227 * KB,  # [CG]
)

RTX4090 = Device(
    name="GeForce RTX 4090",
    compute_capability=(8, 9),
    sm_count=128,  # [4090]
    fp32_lanes_per_sm=128,  # [CG]
    clock_hz=2.52e9,  # [4090] boost clock
    memory_bandwidth=1.008e12,  # [4090]
    l2_bytes=72 * KB * KB,  # [4090]
    max_threads_per_sm=1536,  # [CG]: 48 warps
    max_blocks_per_sm=24,  # [CG]
    shared_per_sm=100 * KB,  # [CG]
    max_shared_per_block=99 * KB,  # [CG]
)

A100 = Device(
    name="A100 SXM4 80GB",
    compute_capability=(8, 0),
    sm_count=108,  # [A100]
    fp32_lanes_per_sm=64,  # [CG]
    clock_hz=1.41e9,  # [A100] boost clock
    memory_bandwidth=2.039e12,  # [A100]
    l2_bytes=40 * KB * KB,  # [A100]
    max_threads_per_sm=2048,  # [CG]
    max_blocks_per_sm=32,  # [CG]
    shared_per_sm=164 * KB,  # [CG]
    max_shared_per_block=163 * KB,  # [CG]
)

A100_40GB = Device(
    name="A100 SXM4 40GB",
    compute_capability=(8, 0),
    sm_count=108,  # [A100-40]
    fp32_lanes_per_sm=64,  # [CG]
    clock_hz=1.41e9,  # [A100-40] boost clock
    memory_bandwidth=1.555e12,  # [A100-40]
    l2_bytes=40 * KB * KB,  # [A100-40]
    max_threads_per_sm=2048,  # [CG]
    max_blocks_per_sm=32,  # [CG]
    shared_per_sm=164 * KB,  # [CG]
    max_shared_per_block=163 * KB,  # [CG]
)

V100 = Device(
    name="V100 SXM2",
    compute_capability=(7, 0),
    sm_count=80,  # [V100]
    fp32_lanes_per_sm=64,  # [V100]
    clock_hz=1.53e9,  # [V100] boost clock
    memory_bandwidth=900e9,  # [V100] datasheet
    l2_bytes=6 * KB * KB,  # [V100]: 6,144 KB
    max_threads_per_sm=2048,  # [CG]
    max_blocks_per_sm=32,  # [CG]
    shared_per_sm=96 * KB,  # [CG], [V100]
    max_shared_per_block=96 * KB,  # [CG]: with the opt-in attribute
    shared_allocation_unit=256,  # [occ]
    reserved_shared_per_block=0,  # [CG]: the 1 KB system share starts with compute capability 8.0
)

PRESETS = {d.name: d for d in (H100, RTX4090, A100, A100_40GB, V100)}
