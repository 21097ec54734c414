"""Every companion script runs alone, as a reader would run it: in a fresh virtual
environment with nothing but ``pip install simtdocs[figures]`` (numpy and matplotlib),
so a script that needs the site's build tools (markdown, mkdocs, ...) fails here.

The wheel is built once per session and installed into one fresh venv (about 20 s).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPTS = sorted((ROOT / "snippets").rglob("*.py"))
BUILD_TOOLS = ("markdown", "mkdocs", "pymdownx", "pytest", "pytest_codeblocks", "jupytext", "jieba")


@pytest.fixture(scope="session")
def reader_python(tmp_path_factory) -> Path:
    """The python of a fresh venv with only ``simtdocs[figures]`` installed."""
    tmp = tmp_path_factory.mktemp("reader")
    run = dict(capture_output=True, text=True, timeout=900)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "wheel"),
                           str(ROOT)], cwd=tmp, **run)
    assert proc.returncode == 0, proc.stderr[-3000:]
    wheel = next((tmp / "wheel").glob("simtdocs-*.whl"))
    proc = subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], **run)
    assert proc.returncode == 0, proc.stderr[-3000:]
    python = tmp / "venv" / "bin" / "python"
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", f"{wheel}[figures]"], cwd=tmp, **run)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return python


def reader_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "MPLBACKEND": "Agg"}


def test_the_reader_venv_has_no_build_tools(reader_python):
    code = "import importlib.util as u; print([m for m in %r if u.find_spec(m)])" % (BUILD_TOOLS,)
    proc = subprocess.run([str(reader_python), "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env=reader_env(), timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr
    where = subprocess.run([str(reader_python), "-c", "import simtdocs; print(simtdocs.__file__)"], cwd=ROOT,
                           capture_output=True, text=True, env=reader_env(), timeout=120).stdout
    assert "site-packages" in where  # the installed wheel, not the working tree


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_snippet_script_runs(script, reader_python):
    proc = subprocess.run(
        [str(reader_python), str(script.relative_to(ROOT))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=reader_env(),
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
