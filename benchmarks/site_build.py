"""How long the author waits: a cold, a warm and a one-snippet site build (issue 11).

    python benchmarks/site_build.py [--runs 1] [--workers N] [--lenient] [--head]

The build runs on a snapshot of the working tree (tracked and untracked files, not
ignored ones) in a temporary folder, so edits made meanwhile do not disturb it:

- cold: no ``.cache/`` at all (blocks, notebooks, search index all computed);
- warm: the same build again, nothing changed;
- one snippet: a comment line added inside the ``transpose_table`` section of
  ``snippets/p2/02_memory_coalescing.py`` (the block that includes it, in both languages,
  the blocks of its ``cont`` chain and that companion notebook run again; the search
  entries of the changed pages are recomputed).

Each build is ``mkdocs build --strict`` in a subprocess, both languages; the time is
wall-clock for the whole command, as the author sees it.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EDITED = "snippets/p2/02_memory_coalescing.py"
SECTION = "transpose_glue"  # a section the memory page includes


def snapshot(dest: Path, head: bool) -> None:
    if head:  # the last commit only
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        (dest / "node_modules").symlink_to(ROOT / "node_modules")
        return
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    (dest / "node_modules").symlink_to(ROOT / "node_modules")


def build(where: Path, strict: bool, env: dict) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(where / "site")] + (["--strict"] if strict else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=where, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-8:])
        return dt, cpu, f"FAILED ({proc.returncode}): {tail}"
    return dt, cpu, "ok"


def edit_snippet(where: Path, n: int) -> None:
    path = where / EDITED
    lines = path.read_text(encoding="utf-8").split("\n")
    at = next(i for i, ln in enumerate(lines) if re.search(rf"--8<-- \[start:{SECTION}\]", ln))
    lines.insert(at + 1, f"# benchmark edit {n}")
    path.write_text("\n".join(lines), encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1, help="repeat warm and one-snippet builds")
    ap.add_argument("--workers", type=int, default=None, help="SIMTDOCS_BUILD_WORKERS (default: cores)")
    ap.add_argument("--lenient", action="store_true", help="build without --strict")
    ap.add_argument("--head", action="store_true", help="build the last commit, not the working tree")
    args = ap.parse_args()
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    if args.workers is not None:
        env["SIMTDOCS_BUILD_WORKERS"] = str(args.workers)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"site build, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"commit {commit}{' + uncommitted changes' if dirty and not args.head else ''}, load {os.getloadavg()[0]:.1f}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="simtdocs-bench-") as tmp:
        where = Path(tmp)
        snapshot(where, args.head)
        env["PYTHONPATH"] = str(where / "src")  # the snapshot's simulator, not the live one
        rows.append(("cold (no .cache)",) + build(where, not args.lenient, env))
        for r in range(args.runs):
            rows.append(("warm (nothing changed)",) + build(where, not args.lenient, env))
        for r in range(args.runs):
            edit_snippet(where, r)
            rows.append((f"one snippet edited ({EDITED}:{SECTION})",) + build(where, not args.lenient, env))
    width = max(len(r[0]) for r in rows)
    print(f"  {'build':<{width}}  {'wall':>8}  {'CPU':>8}")
    for name, dt, cpu, status in rows:
        print(f"  {name:<{width}}  {dt:6.1f} s  {cpu:6.1f} s  {status}")
    print(f"  load after: {os.getloadavg()[0]:.1f}. Wall time is what the author waits; CPU is user+sys of the")
    print("  build and its worker processes: on a busy machine it moves much less than wall.")
    return 0 if all(r[-1] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
