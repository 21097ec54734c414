"""Time every companion script of the lectures against the 1-second target (issue 2).

    python benchmarks/companion_scripts.py                # every snippets/**/*.py
    python benchmarks/companion_scripts.py snippets/p2    # the scripts under some paths
    python benchmarks/companion_scripts.py --repeat 1

For each script, two times, best of ``--repeat``:

* **wall**: ``python path`` in a fresh interpreter from the repository root, as a reader
  runs it (interpreter start-up and imports included). The target applies to this one.
* **body**: the script alone, run with ``runpy`` in a fresh interpreter that has already
  imported numpy, simtdocs, simtdocs.display and (if installed) matplotlib.pyplot: what the
  script's own work costs once the imports are paid.

It also prints the fixed cost every script pays (``python -c "import simtdocs,
simtdocs.display"``, and the same with matplotlib.pyplot for the scripts that draw). Like
bench.py it is a benchmark: a script over the target prints MISS, and the exit code is 0
unless a script fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 1.0

PRELOAD = """
import json, runpy, sys, time
import numpy, simtdocs, simtdocs.display
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot
except ImportError:
    pass
sys.argv = [sys.argv[1]]
t0 = time.perf_counter()
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as e:
    if e.code not in (None, 0):
        raise
body = time.perf_counter() - t0
sys.stdout.flush()
sys.stderr.write("\\n__BODY__" + json.dumps(body) + "\\n")
"""


def env() -> dict:
    return {**os.environ, "MPLBACKEND": "Agg"}


def wall(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env())
    return time.perf_counter() - t0, proc


def body(script: str) -> float:
    proc = subprocess.run([sys.executable, "-c", PRELOAD, script], cwd=ROOT, capture_output=True, text=True, env=env())
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    marker = proc.stderr.rsplit("__BODY__", 1)[1]
    return json.loads(marker.splitlines()[0])


def scripts(paths: list[str]) -> list[Path]:
    roots = [ROOT / p for p in paths] if paths else [ROOT / "snippets"]
    found = []
    for r in roots:
        found += [r] if r.is_file() else sorted(r.rglob("*.py"))
    return sorted(set(found))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("paths", nargs="*", help="scripts or folders, relative to the repository root (default: snippets/)")
    p.add_argument("--repeat", type=int, default=3, help="runs per script, best kept (default 3)")
    args = p.parse_args(argv)
    found = scripts(args.paths)
    print(f"companion scripts: {len(found)}; target: each under {TARGET_S:g} s (wall); best of {args.repeat}")
    base = min(wall([sys.executable, "-c", "import simtdocs, simtdocs.display"])[0] for _ in range(args.repeat))
    print(f"fixed cost, python -c 'import simtdocs, simtdocs.display': {base:.2f} s")
    code = "import simtdocs, simtdocs.display, matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot"
    mpl, proc = wall([sys.executable, "-c", code])
    if proc.returncode == 0:
        mpl = min([mpl] + [wall([sys.executable, "-c", code])[0] for _ in range(args.repeat - 1)])
        print(f"fixed cost with matplotlib.pyplot too (scripts that draw):  {mpl:.2f} s")
    print()
    rows, failed, missed = [], 0, 0
    for path in found:
        rel = path.relative_to(ROOT).as_posix()
        walls = []
        for _ in range(args.repeat):
            t, proc = wall([sys.executable, rel])
            if proc.returncode != 0:
                break
            walls.append(t)
        if proc.returncode != 0:
            failed += 1
            rows.append((rel, "FAILED", "-", "FAIL"))
            print(f"{rel} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
            continue
        b = min(body(rel) for _ in range(args.repeat))
        ok = min(walls) < TARGET_S
        missed += not ok
        rows.append((rel, f"{min(walls):.2f}", f"{b:.2f}", "PASS" if ok else "MISS"))
    w = max([len(r[0]) for r in rows] + [6])
    print(f"{'script':<{w}}  {'wall s':>7}  {'body s':>7}  target")
    print(f"{'-' * w}  {'-' * 7}  {'-' * 7}  ------")
    for rel, ws, bs, verdict in rows:
        print(f"{rel:<{w}}  {ws:>7}  {bs:>7}  {verdict}")
    print()
    print(f"{len(found) - failed - missed} PASS, {missed} MISS, {failed} failed (wall time < {TARGET_S:g} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
