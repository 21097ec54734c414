"""pytest-codeblocks silently skips fences whose info string is not exactly `python`:
count what it collects against what the site executes."""

from __future__ import annotations

from pathlib import Path

import subprocess
import sys

from simtdocs_site.fences import find_fences

ROOT = Path(__file__).resolve().parents[2]


def executable_blocks() -> int:
    n = 0
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for f in find_fences(page.read_text(encoding="utf-8").split("\n")):
            if f.info == "python" and not f.cont:
                n += 1
    return n


def test_pytest_codeblocks_collects_every_python_block():
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--codeblocks", "docs/", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    collected = [ln for ln in proc.stdout.splitlines() if ".md::line" in ln]
    assert len(collected) == executable_blocks(), proc.stdout[-3000:]
    assert executable_blocks() > 0
