"""How long a contributor and CI wait: ``.ci/run`` on a fresh clone, and ``make check`` (issue 37).

    python benchmarks/test_suite.py [--runs 3] [--source .] [--serial]

Each run clones ``--source`` (its committed ``main``, as CI does) into an empty temporary
folder and times ``.ci/run`` there, wall-clock, setup included: the venv, ``pip install``
(from pip's cache as an earlier run left it, as on CI), ``npm ci``, the site build and both
pytest runs. The tests report their own times through ``SIMTDOCS_TEST_TIMES`` (the root
``conftest.py``: wall and CPU seconds per test, set-up included, from whichever xdist worker
ran it). After the last run, ``make check`` is timed twice in that clone (the second is the
contributor's loop as it usually is: the page's blocks cached). ``--serial`` then runs
``make test TEST_WORKERS=0`` there and compares every test's outcome with the parallel run's.

Printed: each run's wall time and the median; CPU seconds per test folder; the ten slowest
tests; ``make check``. Target (README, "For contributors"): median ``.ci/run`` <= 8 min on a
2-core machine, ``make check`` <= 60 s.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_CI_S, TARGET_CHECK_S = 8 * 60, 60


def timed(cmd: list[str], cwd: Path, env: dict, log: Path) -> tuple[float, int]:
    start = time.perf_counter()
    with open(log, "w") as out:
        rc = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    return time.perf_counter() - start, rc


def folder_of(test: str) -> str:
    path = test.split("::")[0]
    parts = path.split("/")
    if parts[0] == "docs":
        return "docs (--codeblocks)"
    return "/".join(parts[:2]) if len(parts) > 2 else "tests/*.py (engine)"


def phases(began: float, ended: float, lines: list[dict]) -> str:
    """Where a run's wall time went: set-up (venv, pip, npm) until pytest starts, collection
    (the site build among it) until the first test, the tests, and the end of the session."""
    events = {(e["event"], e["worker"]): e["at"] for e in lines if "event" in e}
    tests = [t for t in lines if "start" in t]
    start, end = events.get(("session start", "main")), events.get(("session end", "main"))
    if start is None or not tests:
        return "no phases recorded"
    first, last = min(t["start"] for t in tests), max(t["start"] + t["wall"] for t in tests)
    return (f"set-up {start - began:.0f} s, collection {first - start:.0f} s, tests {last - first:.0f} s, "
            f"end of session {(end or last) - last:.0f} s, after pytest {ended - (end or last):.0f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--source", default=str(ROOT), help="repository to clone (default: this one)")
    ap.add_argument("--serial", action="store_true", help="also run the suite in one process and compare")
    args = ap.parse_args()
    print(f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}")
    walls, times = [], []
    with tempfile.TemporaryDirectory(prefix="simtdocs-suite-") as tmp:
        for run in range(args.runs):
            clone = Path(tmp) / f"clone{run}"
            subprocess.run(["git", "clone", "-q", "--branch", "main", args.source, str(clone)], check=True)
            head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True,
                                  text=True).stdout.strip()
            record = Path(tmp) / f"times{run}.jsonl"
            env = {**os.environ, "SIMTDOCS_TEST_TIMES": str(record)}
            began = time.time()
            wall, rc = timed([".ci/run"], clone, env, Path(tmp) / f"ci{run}.log")
            walls.append(wall)
            lines = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
            times = [t for t in lines if "test" in t]
            print(f"run {run + 1}: .ci/run at {head}: {wall / 60:.2f} min, exit {rc}, {len(times)} tests timed; "
                  + phases(began, began + wall, lines))
            if rc:
                print((Path(tmp) / f"ci{run}.log").read_text()[-3000:])
                return rc
            if run + 1 < args.runs:
                subprocess.run(["rm", "-rf", str(clone)])
        median = statistics.median(walls)
        print(f"\n.ci/run median of {len(walls)}: {median / 60:.2f} min "
              f"({'PASS' if median <= TARGET_CI_S else 'FAIL'}: target {TARGET_CI_S // 60} min)")

        by_folder = collections.defaultdict(lambda: [0, 0.0, 0.0])
        for t in times:
            f = by_folder[folder_of(t["test"])]
            f[0] += 1
            f[1] += t["cpu"]
            f[2] += t["wall"]
        print("\n| folder | tests | CPU s | wall s (summed over workers) |\n|---|---:|---:|---:|")
        for name, (n, cpu, wall) in sorted(by_folder.items(), key=lambda kv: -kv[1][2]):
            print(f"| {name} | {n} | {cpu:.0f} | {wall:.0f} |")
        print("\nslowest ten tests (wall s, set-up included):")
        for t in sorted(times, key=lambda t: -t["wall"])[:10]:
            print(f"  {t['wall']:6.1f}  {t['test']}")

        checks = []
        for i in range(2):
            wall, rc = timed(["make", "check"], clone, dict(os.environ), Path(tmp) / f"check{i}.log")
            checks.append(wall)
            print(f"\nmake check ({'first' if i == 0 else 'again'}): {wall:.1f} s, exit {rc} "
                  f"({'PASS' if wall <= TARGET_CHECK_S else 'FAIL'}: target {TARGET_CHECK_S} s)")
            print("  " + (Path(tmp) / f"check{i}.log").read_text().strip().splitlines()[-1])

        if args.serial:
            record = Path(tmp) / "serial.jsonl"
            env = {**os.environ, "SIMTDOCS_TEST_TIMES": str(record)}
            wall, rc = timed(["make", "test", "TEST_WORKERS=0"], clone, env, Path(tmp) / "serial.log")
            serial = {t["test"]: t["outcome"] for t in map(json.loads, record.read_text().splitlines()) if "test" in t}
            parallel = {t["test"]: t["outcome"] for t in times}
            differ = sorted(t for t in set(serial) | set(parallel) if serial.get(t) != parallel.get(t))
            counts = collections.Counter(serial.values())
            print(f"\nserial (-n 0): {wall / 60:.2f} min, exit {rc}, {dict(counts)}; "
                  f"{len(differ)} tests differ from the parallel run")
            for t in differ[:20]:
                print(f"  {t}: parallel {parallel.get(t)}, serial {serial.get(t)}")
            if differ:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
