"""Kernel puzzles graded by the simulator.

``PUZZLES`` maps a name to a :class:`Puzzle`, in the order of the lectures: the P2
puzzles (threads and indices, memory, then warp-level ones: shuffles, votes, atomics),
then those of the execution-model lecture. ``TRITON_PUZZLES`` holds the Triton puzzles (P2's
last section): ``@triton.jit`` kernels, launched the Triton way by the same ``check``.
Each has a ``statement`` and a ``hint`` (shown in the reader's language), a ``skeleton``
kernel to edit, a ``solution``, and ``check(kernel)``, which launches the kernel in the
simulator and returns a :class:`Verdict`: ``passed`` and a ``message`` in the lecture's
words ("wrong value at element 37 …", "coalescing 12% where ≥ 90% is asked …").

    from simtdocs.puzzles import PUZZLES
    puzzle = PUZZLES["double"]
    def double(blk, a, out):
        i = blk.bx * blk.bdx + blk.tx
        blk.store(out, i, 2 * blk.load(a, i))
    puzzle.check(double)        # ✓ passed: all 1,024 values right
"""

from __future__ import annotations

from simtdocs.i18n import Listing, _

from . import exec_model, p2_memory, p2_threads, triton_puzzles, warp_level
from .card import ScoreCard
from .core import KINDS, Budget, Case, Coalescing, Divergence, NoBankConflict, Puzzle, Rule
from .verdict import Verdict

PUZZLES: dict[str, Puzzle] = {p.name: p for p in (*p2_threads.PUZZLES, *p2_memory.PUZZLES, *warp_level.PUZZLES,
                                                  *exec_model.PUZZLES)}
#: The Triton puzzles, apart: they have no CUDA C twin and take ``@triton.jit`` kernels.
TRITON_PUZZLES: dict[str, Puzzle] = {p.name: p for p in triton_puzzles.PUZZLES}


def of_lecture(lecture: str) -> list[Puzzle]:
    """The puzzles of one lecture (``"p2"`` or ``"exec_model"``), in order."""
    return [p for p in PUZZLES.values() if p.lecture == lecture]


def table(lecture):
    """A :class:`simtdocs.display.Table` of a lecture's puzzles (``"p2"``), or of the puzzles
    given (``TRITON_PUZZLES.values()``): title, kind, and what ``check`` asks beyond right
    values and a clean run."""
    from simtdocs.display import Table

    puzzles = of_lecture(lecture) if isinstance(lecture, str) else list(lecture)
    rows = [(k, p.title, KINDS[p.kind], Listing([r.describe() for r in p.rules]) if p.rules else "—")
            for k, p in enumerate(puzzles, 1)]
    return Table(rows, columns=["#", _("puzzle"), _("kind"), _("asked besides right values and a clean run")], align="rlll")


__all__ = ["PUZZLES", "TRITON_PUZZLES", "KINDS", "Budget", "Case", "Coalescing", "Divergence", "NoBankConflict",
           "Puzzle", "Rule", "ScoreCard", "Verdict", "of_lecture", "table"]
