"""The reference engine: the definition of every counter, one lane at a time.

``simtdocs.launch`` is fast because it runs many blocks at once with numpy. This module
runs the same kernels the slow, obvious way, so that a reader can check what each counter
means and the test suite can check the fast engine against it on random kernels:

* one block at a time (``blk.nblocks == 1``, blocks in linear order, x fastest);
* inside every ``blk`` call, a plain loop over the warps of the block in order and over the
  lanes of each warp in order, with dicts and sets instead of array tricks.

A warp *issues* an instruction when at least one of its lanes is active (``mask`` True;
the missing lanes of a partial last warp are never active). Every method below says what
it counts per issued warp instruction; in short, with the Nsight Compute metric mirrored:

======================= ========================================== ===========================================
counter                 per issued warp instruction                Nsight Compute
======================= ========================================== ===========================================
warp_instructions       1 (``alu(ops)``: ops)                      smsp__inst_executed
active_lanes            its active lanes                           smsp__thread_inst_executed
branches                1 per ``branch``                           smsp__sass_branch_targets
divergent_branches      1 if its active lanes disagree             smsp__sass_branch_targets_threads_divergent
barriers                1 per *block* passing a ``sync``           (BAR instructions, counted per block here)
requests                1 per global load, store or atomic         l1tex__t_requests_pipe_lsu_mem_global_op_*
sectors                 distinct 32-byte sectors of its lanes      l1tex__t_sectors_pipe_lsu_mem_global_op_*
requested_bytes         active lanes × bytes per lane              (bytes the threads asked for)
shared_requests         1 per shared load, store or atomic         smsp__inst_executed_op_shared_*
shared_wavefronts       per phase, most distinct words in one bank l1tex__data_pipe_lsu_wavefronts_mem_shared
shared_ideal_wavefronts per phase, ⌈distinct words / 32⌉           Source view: L1 Wavefronts Shared Ideal
atomics                 1 per atomic                               l1tex__t_requests_…_op_atom / shared_atom
atomic_conflicts        active lanes − distinct elements           (same-address lanes, serialised)
shuffles                1 per ``shfl*``                            SHFL in the instruction mix
votes                   1 per ``ballot``/``any``/``all``           VOTE in the instruction mix
======================= ========================================== ===========================================

``shared_bank_conflicts`` = ``shared_wavefronts`` − ``shared_ideal_wavefronts``
(l1tex__data_bank_conflicts_pipe_lsu_mem_shared). A shared access is served in phases: one
of 32 lanes for up to 4 bytes a lane, two half-warps for 8 bytes, four quarter-warps for 16.

Where the contract (``ENGINE_SPEC``) leaves a choice open, this module chose:

* with ``memcheck`` off, an out-of-bounds lane still issues and is counted (its sector or
  bank from its address), but moves no data: a load gives it 0, a store or atomic is dropped;
* a misaligned access always raises: the hardware itself faults (cudaErrorMisalignedAddress);
* ``blk.exit(mask)`` (a kernel's ``return``) counts nothing; afterwards a barrier waits for
  the threads that did not exit (since Volta: "all non-exited threads in the block"), any
  instruction whose mask names an exited thread raises, and warp operations see exited
  lanes as lanes outside the mask;
* a shared-memory atomic races a plain load or store of its element by another thread in the
  same phase (never another atomic), stricter than compute-sanitizer (``diagnostics``);
  initcheck checks atomics as reads (an atomic starts from the element's value: a shared
  histogram nobody zeroed is an error, not a right answer by luck of zeroed memory);
* ``stats.races`` lists races block by block (the order the blocks run here), then by
  instruction, then by access pair (``diagnostics.RACE_PAIRS``: read-after-write, write-after-read,
  write-after-write, then the pairs with an atomic).
"""

from __future__ import annotations

import numpy as np

from .. import configuration
from ..counters import Stats
from ..devices import H100, Device
from ..diagnostics import TOOLS, LaunchError
from .block import Block
from .memory import Shared, byte_offset

__all__ = ["Block", "Shared", "byte_offset", "launch"]


class _Launch:
    def __init__(self, kernel, grid, block, device, shared_bytes, max_dynamic, tools):
        self.kernel, self.grid, self.block, self.device = kernel, grid, block, device
        self.shared_bytes, self.max_dynamic, self.tools = shared_bytes, max_dynamic, tools
        self.threads = block[0] * block[1] * block[2]
        self.stats = Stats(kernel=kernel, grid=grid, block=block, device=device)


def launch(kernel, grid, block, args=(), device: Device = H100, shared_bytes: int = 0, blocks_per_pass=None,
           tools=TOOLS, max_dynamic_shared_bytes=None) -> Stats:
    """Run ``kernel(blk, *args)`` block after block and return its ``Stats``; the same
    signature as ``simtdocs.launch`` (``blocks_per_pass`` is ignored: blocks run one at a time). The
    launch configuration is checked by the same code as ``simtdocs.launch``, so a bad one
    gets the same words; everything after that is this module's."""
    if not isinstance(args, tuple):
        raise LaunchError(f"args must be a tuple of the kernel's arguments, got {type(args).__name__}: "
                          f"write args=(a,) for one argument (args=(a) is just a)")
    tools = (tools,) if isinstance(tools, str) else tuple(tools)
    for tool in tools:
        if tool not in TOOLS:
            raise LaunchError(f"unknown tool {tool!r}: choose from {', '.join(TOOLS)}")
    block, grid = configuration._dims("block", block), configuration._dims("grid", grid)
    threads = block[0] * block[1] * block[2]
    if threads > device.max_threads_per_block:
        raise LaunchError(
            f"cudaErrorInvalidConfiguration: {threads:,} threads per block "
            f"({block[0]}×{block[1]}×{block[2]}); {device.name} allows {device.max_threads_per_block:,}")
    configuration._check("block", block, device.max_block_dims)
    configuration._check("grid", grid, device.max_grid_dims)
    if not 0 <= shared_bytes <= device.max_shared_per_block:
        raise LaunchError(f"cudaErrorInvalidValue: {shared_bytes:,} bytes of dynamic shared memory per block; "
                          f"{device.name} allows {device.max_shared_per_block:,}")
    configuration._shared_limit(device, shared_bytes, max_dynamic_shared_bytes)
    name = getattr(kernel, "__name__", "kernel")
    L = _Launch(name, grid, block, device, shared_bytes, max_dynamic_shared_bytes, tools)
    read_only = []
    for a in args:
        if isinstance(a, np.ndarray):
            a = a.view()
            a.flags.writeable = False  # writes go through blk.store, which counts and checks them
        read_only.append(a)
    for linear in range(grid[0] * grid[1] * grid[2]):
        try:
            kernel(Block(L, linear), *read_only)
        except ValueError as exc:
            configuration._explain(name, exc)  # a Python if on thread arrays, or a[i] = v on an argument
            raise
    for counters in L.stats.by_site.values():
        L.stats.totals.add(counters)
    return L.stats
