"""Property: every puzzle's check() returns a Verdict for any kernel built from a few blk
operations, including kernels that touch no global memory, no shared memory, or nothing;
a sanitizer error, a race or a rule is a verdict, never an exception from the grader."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simtdocs.puzzles import PUZZLES, Verdict

OPS = ("load", "store", "shared_load", "shared_store", "sync", "syncwarp", "shfl", "ballot", "branch", "alu",
       "atomic", "shared_atomic", "masked_store")
op = st.tuples(st.sampled_from(OPS), st.integers(0, 7), st.integers(0, 5), st.integers(0, 3))


def make_kernel(program, before=None):
    """A kernel that runs ``program``: (operation, which array, which index, which mask), after
    ``before`` (a puzzle's solution, so that the verdict gets as far as the puzzle's rules)."""

    def random_kernel(blk, *args):
        if before is not None:
            before(blk, *args)
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        if any(name.startswith("shared") for name, *_ in program):
            tile = blk.shared(64, np.float32, name="tile")
        i = blk.bx * blk.bdx + blk.tid
        v = np.zeros((1, 1), np.float32) + 0 * i
        indices = (i, i + 1, 2 * i, blk.lane, 0 * i, blk.tid)
        masks = (None, i % 2 == 0, blk.lane < 16, blk.tid < 64)
        for name, which, index, m in program:
            a = arrays[which % len(arrays)] if arrays else None
            k, mask = indices[index], masks[m]
            if name == "load" and a is not None:
                v = v + blk.load(a, k % a.size, mask=mask)
            elif name in ("store", "masked_store") and a is not None:
                blk.store(a, k % a.size, (v % 7).astype(a.dtype), mask=mask if name == "masked_store" else None)
            elif name == "shared_load":
                v = v + blk.load(tile, k % 64, mask=mask)
            elif name == "shared_store":
                blk.store(tile, k % 64, v, mask=mask)
            elif name == "sync":
                blk.sync()
            elif name == "syncwarp":
                blk.syncwarp()
            elif name == "shfl":
                v = blk.shfl_down(v, 1 + index)
            elif name == "ballot":
                v = v + (blk.ballot(v > 0) & 1)
            elif name == "branch":
                blk.branch(k % 3 == 0, mask=mask)
            elif name == "alu":
                blk.alu(1 + index, mask=mask)
            elif name == "atomic" and a is not None and a.dtype.kind in "fi":
                blk.atomic_add(a, k % a.size, (v % 3).astype(a.dtype), mask=mask)
            elif name == "shared_atomic":
                blk.atomic_add(tile, k % 64, v, mask=mask)

    return random_kernel


def test_kernels_that_do_nothing_get_a_verdict_from_every_puzzle():
    def nothing(blk, *args):
        pass

    def shared_only(blk, *args):
        t = blk.shared(32, np.float32, name="t")
        blk.store(t, blk.lane, 1.0 + 0 * blk.lane)

    for kernel in (nothing, shared_only):
        for puzzle in PUZZLES.values():
            verdict = puzzle.check(kernel)
            assert isinstance(verdict, Verdict) and not verdict.passed, puzzle.name
            assert verdict.message.en and verdict.message.pick("zh")


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(op, min_size=1, max_size=5), st.booleans())
def test_random_kernels_get_a_verdict_from_every_puzzle(program, after_the_solution):
    for puzzle in PUZZLES.values():
        kernel = make_kernel(program, puzzle.solution if after_the_solution else None)
        verdict = puzzle.check(kernel)
        assert isinstance(verdict, Verdict), puzzle.name
        assert verdict.message.en and verdict.message.pick("zh")
        verdict.render("zh"), verdict.render("en")


RULES = {type(rule): rule for puzzle in PUZZLES.values() for rule in puzzle.rules}


@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(op, min_size=0, max_size=4))
def test_every_rule_judges_any_kernel_that_runs(program):
    """Each kind of rule, on the counters of a random kernel that ran (whatever memory it touched),
    gives a judgement and a message in both languages; so does the score card."""
    from simtdocs import launch
    from simtdocs.diagnostics import SimulatorError
    from simtdocs.puzzles.card import ScoreCard
    from simtdocs.puzzles.verdict import Lines

    kernel = make_kernel(program)
    for puzzle in PUZZLES.values():
        try:
            stats = launch(kernel, puzzle.grid, puzzle.block, args=puzzle.inputs().args, trace=(0, 0))
        except SimulatorError:
            continue
        reference = puzzle.reference()
        for rule in [*RULES.values(), *puzzle.rules]:
            ok, msg, _site = rule.judge(stats, Lines(kernel), reference)
            assert ok in (True, False) and msg.en and msg.pick("zh")
        ScoreCard.of(puzzle, stats, reference).render("zh")
