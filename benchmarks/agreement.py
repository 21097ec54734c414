"""The fast engine against the reference engine on N random kernels (the long form of
tests/test_engines_agree.py, without hypothesis).

    python benchmarks/agreement.py               # 3,000 kernels, seeds 0..2999
    python benchmarks/agreement.py -n 500 --seed 10000
    python benchmarks/agreement.py --show 3      # print up to 3 disagreeing kernels in full
    python benchmarks/agreement.py --exits       # with threads that exit before barriers (blk.exit)

Each kernel runs on the reference engine and on the fast engine with 1, 3 and the default
blocks per pass; arrays, counters (totals and per line), race records, every value a blk
call returned, and errors must agree. Prints "N examples, K disagreements" and exits 1 if
K > 0. A disagreeing kernel is printed as runnable source with both engines' results.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_engines_agree as agree  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3000, help="number of random kernels")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--show", type=int, default=1, help="disagreeing kernels to print in full")
    parser.add_argument("--exits", action="store_true", help="draw early exits too (the feature 'exits')")
    opts = parser.parse_args()
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
