"""The strict site build, once per test session, shared by tests/site and tests/browser.

The browser tests need it while collecting (their pages are parametrised from the built
site), so it is cached on the pytest config rather than in a fixture.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE_KEY = pytest.StashKey[dict]()


def run_mkdocs(*args: str, cwd: Path = ROOT, timeout: int = 1800) -> subprocess.CompletedProcess:
    """``mkdocs *args`` in a subprocess, output captured."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _say(config, line: str) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)


def built_site(config) -> dict:
    """Build the site once per session: ``{"dir": Path}`` or ``{"error": str}``."""
    state = config.stash.get(SITE_KEY, None)
    if state is not None:
        return state
    given = os.environ.get("SIMTDOCS_SITE_DIR")
    if given:
        state = {"dir": Path(given).resolve()}
        if not (state["dir"] / "index.html").is_file():
            state = {"error": f"SIMTDOCS_SITE_DIR={given} has no index.html"}
    else:
        out = Path(tempfile.mkdtemp(prefix="simtdocs-browser-site-"))
        _say(config, f"building the site once for the session (mkdocs build --strict -d {out}) ...")
        proc = run_mkdocs("build", "--strict", "-d", str(out))
        if proc.returncode == 0:
            state = {"dir": out, "tmp": True}
        else:
            log = "\n".join(
                line if len(line) < 400 else line[:400] + " ..."
                for line in (proc.stdout + proc.stderr).splitlines()
                if "ERROR" in line or "WARNING" in line or "Error" in line
            )
            state = {"error": "mkdocs build --strict failed (browser tests need the site):\n" + log[-4000:]}
            shutil.rmtree(out, ignore_errors=True)
    config.stash[SITE_KEY] = state
    return state
