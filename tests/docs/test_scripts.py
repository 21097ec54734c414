"""Every companion script runs alone, as a reader would run it."""

from __future__ import annotations

from pathlib import Path

import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPTS = sorted((ROOT / "snippets").rglob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_snippet_script_runs(script):
    proc = subprocess.run(
        [sys.executable, str(script.relative_to(ROOT))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={"MPLBACKEND": "Agg", **__import__("os").environ},
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
