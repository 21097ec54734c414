"""simtdocs: a GPU on paper.

Write a kernel the way CUDA does (one function, many threads), ``launch`` it over a grid
of blocks, and read the events that decide performance on a real GPU: sectors per
request, shared-memory wavefronts, SIMT efficiency, divergent branches, races.

The parts, one module each:

* ``simtdocs.model``: the programming model (``launch``, ``cdiv``, the ``blk`` a kernel sees)
* ``simtdocs.threads``: warps as rows of 32 lanes, and the masks of active lanes
* ``simtdocs.affine``: thread indices that carry their form ``c + a·bx + b·tx …``, as a
  compiler knows them, so an access of a known shape is counted and moved without a scan
* ``simtdocs.global_memory`` and ``simtdocs.shared_memory``: what one warp access touches,
  and the hazards between warps (``simtdocs.global_runs``: addresses of a known shape;
  ``simtdocs.arguments``: where an array sits in its allocation); ``simtdocs.atomics``, ``simtdocs.warp_ops`` (shuffles,
  votes) and ``simtdocs.control`` (branches, barriers)
* ``simtdocs.memory``: sectors and bank wavefronts of one warp access
* ``simtdocs.counters``: the counters a launch returns, and a time estimate
* ``simtdocs.allocator``: glibc keeps freed memory, so a large launch's arrays are not
  fresh pages every time (``SIMTDOCS_MALLOC=default`` to opt out)
* ``simtdocs.trace`` and ``simtdocs.pictures``: one warp's accesses lane by lane
  (``launch(..., trace=(block, warp))``) and their picture (``draw_access``)
* ``simtdocs.diagnostics``: sanitizer-style errors and race records
* ``simtdocs.devices``: GPUs as data (H100, RTX 4090, A100)
* ``simtdocs.analytic``: occupancy, Little's law, waves, Amdahl/Gustafson, launch overhead
* ``simtdocs.reference``: the same model one lane at a time, the definition of every counter
* ``simtdocs.puzzles``: kernel puzzles and the checker that grades them in the lecture's words
* ``simtdocs.i18n``: labels written in English, shown in the reader's language (gettext)
* ``simtdocs.lectures``: the tables and figures of each lecture; ``simtdocs.display``: what a
  page block uses (``show``, ``glue``, ``Table``, ``Figure``); ``simtdocs.snippets``: the
  ``--8<--`` includes of companion scripts. The site build is the package ``simtdocs_site``.
"""

from .analytic import (
    amdahl,
    decode_step,
    gustafson,
    latency_hiding,
    launch_overhead,
    occupancy,
    waves,
)
from .counters import LABELS, Counters, Stats, TimeEstimate
from .devices import A100, H100, PRESETS, RTX4090, Device
from .diagnostics import (
    InitcheckError,
    LaunchError,
    MemcheckError,
    Race,
    SimulatorError,
    SynccheckError,
)
from .model import Block, Shared, cdiv, launch
from .pictures import access_alt, access_caption, draw_access
from .trace import AccessRecord

__all__ = [
    "A100", "AccessRecord", "H100", "LABELS", "PRESETS", "RTX4090", "Block", "Counters", "Device",
    "InitcheckError", "LaunchError", "MemcheckError", "Race", "Shared", "SimulatorError",
    "Stats", "SynccheckError", "TimeEstimate", "access_alt", "access_caption", "amdahl", "cdiv", "decode_step", "draw_access", "gustafson",
    "latency_hiding", "launch", "launch_overhead", "occupancy", "waves",
]
