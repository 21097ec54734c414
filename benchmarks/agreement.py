"""The fast engine against the reference engine on N random kernels (the long form of
tests/test_engines_agree.py, without hypothesis).

    python benchmarks/agreement.py               # 3,000 kernels, seeds 0..2999
    python benchmarks/agreement.py -n 500 --seed 10000
    python benchmarks/agreement.py --show 3      # print up to 3 disagreeing kernels in full
    python benchmarks/agreement.py --exits       # with threads that exit before barriers (blk.exit)
    python benchmarks/agreement.py --c -n 3000   # random CUDA C kernels (tests/cuda/c/c_random.py), per mode

Each kernel runs on the reference engine and on the fast engine with 1, 3 and the default
blocks per pass; arrays, counters (totals and per line), race records, every value a blk
call returned, and errors must agree. Prints "N examples, K disagreements" and exits 1 if
K > 0. A disagreeing kernel is printed as runnable source with both engines' results.

``--c``: N random CUDA C kernels in each of c_random's modes: "same" (the C kernel and its
dialect twin on both engines: arrays, counters per line, race records, errors), "c" (C's own
rules, against the per-thread oracle c_oracle, and the engines against each other) and
"c-talk" (C's rules with threads that talk: the engines against each other); each program
is compiled by nvcc too where the CUDA toolkit is installed. Prints the outcomes of each mode
and "N examples, K disagreements"; a disagreeing kernel is printed with the assertion that
failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_engines_agree as agree  # noqa: E402


C_MODES = ("same", "c", "c-talk")


def c_run(n: int, first: int = 0, show: int = 1, modes=C_MODES) -> int:
    """The ``--c`` run: ``n`` programs of each of ``modes`` ("same": C, its dialect twin and both
    engines; "c": C's rules against c_oracle; "c-talk": C's rules with shared memory, barriers,
    shuffles and votes, the engines against each other), every program also compiled by
    ``nvcc`` where the CUDA toolkit is here. Returns the number of disagreeing programs."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "cuda" / "c"))
    import c_random as cr
    import test_c_random as tc

    nvcc = tc.find_nvcc()
    start = time.perf_counter()
    bad, shown, kinds = 0, 0, Counter()
    for mode in modes:
        outcomes, batch = Counter(), []

        def compile_batch():
            nonlocal bad
            if nvcc and batch:
                errors = tc.nvcc_compiles([p for _, p in batch], nvcc)
                outcomes["nvcc ok" if not errors else "nvcc failed"] += len(batch)
                if errors:
                    bad += 1
                    kinds[f"{mode}: nvcc: {errors.splitlines()[0][:100]}"] += 1
                    print(f"--- {mode} seeds {batch[0][0]}..{batch[-1][0]}: nvcc: {errors[:3000]}\n")
            batch.clear()

        for seed in range(first, first + n):
            try:
                if mode == "same":
                    p = cr.program(tc.chooser(seed), **tc.SAME_FLAGS[seed % len(tc.SAME_FLAGS)])
                    outcome = tc.check_same(p, seed % 4, tc.PER_PASS[seed % 3])
                else:
                    p = cr.program(tc.chooser(seed), mode="c", private=mode == "c", exits=seed % 3 == 0)
                    outcome = tc.check_c(p, seed % 4, tc.PER_PASS[seed % 3])
                outcomes[outcome] += 1
                batch.append((seed, p))
            except Exception as exc:  # an assertion, or a refusal or crash of the front end or the oracle
                bad += 1
                outcomes["disagreement"] += 1
                text = str(exc).split("\n--- C")[0]
                kinds[f"{mode}: {type(exc).__name__}: {text[:100]}"] += 1
                if shown < show:
                    shown += 1
                    print(f"--- {mode} seed {seed}: {type(exc).__name__}: {str(exc)[:6000]}\n")
            if len(batch) >= 200:
                compile_batch()
        compile_batch()
        print(f"mode {mode}: {n} programs (seeds {first}..{first + n - 1}): "
              + ", ".join(f"{k} {v}" for k, v in outcomes.most_common()), flush=True)
    for kind, count in kinds.most_common(10):
        print(f"{count:6}  {kind}")
    seconds = time.perf_counter() - start
    print(f"{len(modes) * n} examples, {bad} disagreements ({seconds:.0f} s)")
    return bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3000, help="number of random kernels")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--show", type=int, default=1, help="disagreeing kernels to print in full")
    parser.add_argument("--exits", action="store_true", help="draw early exits too (the feature 'exits')")
    parser.add_argument("--c", action="store_true", help="random CUDA C kernels (tests/cuda/c/c_random.py)")
    parser.add_argument("--c-modes", default=",".join(C_MODES), help="with --c: which of " + ", ".join(C_MODES))
    opts = parser.parse_args()
    if opts.c:
        return 1 if c_run(opts.n, opts.seed, opts.show, tuple(opts.c_modes.split(","))) else 0
    start = time.perf_counter()
    bad, shown, kinds = 0, 0, Counter()
    for seed in range(opts.seed, opts.seed + opts.n):
        program = agree.generate(agree.Chooser(seed=seed), agree.EXITS if opts.exits else agree.ALL)
        found = agree.differences(program)
        if found:
            bad += 1
            kinds.update(f.splitlines()[0].split(": ", 1)[-1][:80] for f in found)
            if shown < opts.show:
                shown += 1
                print(f"--- seed {seed}\n{agree.describe(program, found)}\n")
    seconds = time.perf_counter() - start
    for kind, count in kinds.most_common(10):
        print(f"{count:6}  {kind}")
    print(f"{opts.n} examples, {bad} disagreements ({seconds:.0f} s, seeds {opts.seed}..{opts.seed + opts.n - 1})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
