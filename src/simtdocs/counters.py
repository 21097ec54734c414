"""Counters: what a launch measured, in Nsight Compute's words.

``Counters`` is a bag of event counts that adds up; a launch keeps one for the whole
kernel and one per kernel source line. ``Stats`` is what ``launch`` returns: the totals,
the per-line breakdown, the race records and a time estimate from a stated model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .devices import Device
from .i18n import _
from .diagnostics import Race, Site
from .memory import SECTOR_BYTES

#: Names of the headline counters, for tables in the lectures (translated by the catalog).
LABELS = {
    "blocks": _("blocks"),
    "warps": _("warps"),
    "warp_instructions": _("warp instructions"),
    "simt_efficiency": _("SIMT efficiency"),
    "divergent_branches": _("divergent branches"),
    "requests": _("global requests"),
    "sectors": _("sectors"),
    "requested_bytes": _("bytes requested"),
    "coalescing_efficiency": _("coalescing efficiency"),
    "shared_requests": _("shared requests"),
    "shared_wavefronts": _("shared wavefronts"),
    "barriers": _("barriers"),
    "races": _("races"),
}

#: Assumptions of the time estimate. They are a model, not a measurement.
WARP_INSTRUCTIONS_PER_SCHEDULER_PER_CYCLE = 1  # each warp scheduler issues one instruction a cycle
EXTRA_ISSUE_CYCLES_PER_EXTRA_WAVEFRONT = 1  # a bank conflict replays the access once per extra wavefront


@dataclass
class Counters:
    """Event counts of a kernel, or of one of its source lines.

    Every count is per *warp instruction*: an instruction executed by a warp with at least
    one active lane. The Nsight Compute metric each one mirrors is named beside it.
    """

    warp_instructions: int = 0  # smsp__inst_executed
    active_lanes: int = 0  # smsp__thread_inst_executed (summed over warp instructions)
    branches: int = 0  # smsp__sass_branch_targets
    divergent_branches: int = 0  # smsp__sass_branch_targets_threads_divergent
    barriers: int = 0  # one per block per __syncthreads() (smsp__inst_executed_op_bar, per block)
    requests: int = 0  # global loads, stores, atomics (l1tex__t_requests_pipe_lsu_mem_global)
    sectors: int = 0  # l1tex__t_sectors_pipe_lsu_mem_global
    requested_bytes: int = 0  # bytes the active lanes asked for
    atomics: int = 0  # warp-level atomic instructions, global and shared
    atomic_conflicts: int = 0  # lanes of a warp atomic that hit an element another lane of it hits
    shared_requests: int = 0  # shared loads, stores, atomics (smsp__inst_executed_op_shared_ld/st)
    shared_wavefronts: int = 0  # l1tex__data_pipe_lsu_wavefronts_mem_shared
    shared_ideal_wavefronts: int = 0  # the fewest wavefronts the same accesses could take
    shuffles: int = 0  # warp shuffle instructions (__shfl_*_sync)
    votes: int = 0  # warp vote instructions (__ballot_sync, __any_sync, __all_sync)

    def add(self, other: "Counters") -> None:
        mine = self.__dict__  # the fields, and nothing else: once per source line of a launch
        for name, value in other.__dict__.items():
            mine[name] += value

    @property
    def simt_efficiency(self) -> float:
        """Active lanes per warp instruction, over 32 (Nsight: 'avg. threads executed')."""
        return self.active_lanes / (32 * self.warp_instructions) if self.warp_instructions else 1.0

    @property
    def coalescing_efficiency(self) -> float:
        """Bytes the threads asked for over bytes the sectors moved."""
        return self.requested_bytes / (32 * self.sectors) if self.sectors else 1.0

    @property
    def bytes_moved(self) -> int:
        return 32 * self.sectors

    @property
    def sectors_per_request(self) -> float:
        return self.sectors / self.requests if self.requests else 0.0

    @property
    def shared_bank_conflicts(self) -> int:
        """Wavefronts beyond the ideal: Nsight's l1tex__data_bank_conflicts_pipe_lsu_mem_shared."""
        return self.shared_wavefronts - self.shared_ideal_wavefronts

    @property
    def shared_ways(self) -> float:
        """Wavefronts over ideal wavefronts: 1.0 means no bank conflict, 32.0 a 32-way one."""
        return self.shared_wavefronts / self.shared_ideal_wavefronts if self.shared_ideal_wavefronts else 0.0

    @property
    def branch_efficiency(self) -> float:
        return 1 - self.divergent_branches / self.branches if self.branches else 1.0


@dataclass(frozen=True)
class TimeEstimate:
    """A kernel's time under a two-line model: the larger of DRAM time and issue time.

    ``dram_s`` = sectors × 32 B / memory bandwidth (every sector comes from DRAM: no cache).
    ``issue_s`` = issue cycles / (SMs × schedulers × instructions per cycle × clock), where
    issue cycles = warp instructions + one extra cycle per bank conflict (a wavefront beyond the
    ideal), and the
    work is spread evenly over all SMs. Latency, caches and launch overhead are left out.
    """

    dram_s: float
    issue_s: float

    @property
    def seconds(self) -> float:
        return max(self.dram_s, self.issue_s)

    @property
    def bound(self) -> str:
        return "memory" if self.dram_s >= self.issue_s else "issue"


@dataclass
class LineCounters:
    """The counters of one kernel source line."""

    site: Site
    counters: Counters


@dataclass
class Stats:
    """What ``launch`` returns: the counters of one kernel launch.

    The headline counters are attributes (``stats.sectors``, ``stats.simt_efficiency``…);
    ``stats.lines`` breaks them down by kernel source line; ``stats.races`` lists the
    shared-memory hazards found (one record per block and access pair; ``stats.hazards``
    the racing accesses they count); ``stats.trace`` the traced warp's accesses, if any.
    """

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    device: Device
    totals: Counters = field(default_factory=Counters)
    by_site: dict = field(default_factory=dict)
    races: list[Race] = field(default_factory=list)
    #: With ``launch(..., trace=(block, warp))``: that warp's memory instructions, in order
    #: (``simtdocs.trace.AccessRecord``); None without ``trace``.
    trace: list | None = None

    def __getattr__(self, name):
        # The totals' counters read as the launch's own: stats.sectors, stats.simt_efficiency…
        if name.startswith("_") or name in ("totals",):
            raise AttributeError(name)
        return getattr(self.totals, name)

    @property
    def hazards(self) -> int:
        """What compute-sanitizer's racecheck would count: the racing element accesses of
        every race record (``Race.hazards``; see ``simtdocs.diagnostics``, *Hazard count*)."""
        return sum(r.hazards for r in self.races)

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def warps(self) -> int:
        """Warps launched: blocks × ⌈threads per block / 32⌉."""
        return self.blocks * -(-self.threads_per_block // 32)

    @property
    def lines(self) -> list[LineCounters]:
        """Counters per kernel source line, in source order."""
        return [LineCounters(site, c) for site, c in sorted(self.by_site.items(), key=lambda kv: (kv[0].filename, kv[0].lineno))]

    def counters(self) -> dict:
        """The headline counters, in the order of ``LABELS``."""
        out = {}
        for key in LABELS:
            value = getattr(self, key)
            out[key] = len(value) if key == "races" else value
        return out

    def estimate_time(self) -> TimeEstimate:
        """Estimated kernel time on ``self.device`` (see ``TimeEstimate`` for the model)."""
        d = self.device
        t = self.totals
        dram = t.sectors * SECTOR_BYTES / d.memory_bandwidth
        cycles = t.warp_instructions + EXTRA_ISSUE_CYCLES_PER_EXTRA_WAVEFRONT * t.shared_bank_conflicts
        rate = d.sm_count * d.schedulers_per_sm * WARP_INSTRUCTIONS_PER_SCHEDULER_PER_CYCLE * d.clock_hz
        return TimeEstimate(dram_s=dram, issue_s=cycles / rate)

    def __repr__(self) -> str:
        t = self.totals
        parts = [
            f"{self.kernel}<<<{self.grid}, {self.block}>>> on {self.device.name}",
            f"  warp instructions {t.warp_instructions:,}, SIMT efficiency {t.simt_efficiency:.1%}, "
            f"divergent branches {t.divergent_branches:,}",
            f"  global: {t.requests:,} requests, {t.sectors:,} sectors, {t.sectors_per_request:.2f} sectors/request, "
            f"coalescing {t.coalescing_efficiency:.1%}",
        ]
        if t.shared_requests:
            parts.append(f"  shared: {t.shared_requests:,} requests, {t.shared_wavefronts:,} wavefronts ({t.shared_ways:.2f}-way on average)")
        if t.barriers:
            parts.append(f"  barriers {t.barriers:,}")
        if self.races:
            hazards = f"{self.hazards:,} hazard" + ("" if self.hazards == 1 else "s")
            parts.append(f"  races {len(self.races):,} ({hazards}), first: {self.races[0]}")
        return "\n".join(parts)
