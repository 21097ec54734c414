"""Fixtures of the site tests; the strict build itself is shared (tests/site_build.py)."""

import shutil
from pathlib import Path

import pytest

from site_build import IGNORE, ROOT, build_wheel, once_per_run, run_mkdocs


@pytest.fixture(scope="session")
def mkdocs():
    """``mkdocs(*args, cwd=...)`` runs mkdocs in a subprocess."""
    return run_mkdocs


def _simtdocs_wheel(folder: Path) -> dict:
    # From a copy of its sources: a stale build/lib of an earlier build cannot slip into the wheel.
    project = folder / "simtdocs"
    shutil.copytree(ROOT / "src" / "simtdocs", project / "src" / "simtdocs", ignore=IGNORE)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, project / name)
    return {"wheel": str(build_wheel(project, folder / "dist"))}


@pytest.fixture(scope="session")
def simtdocs_wheel_file(request) -> Path:
    """The ``simtdocs`` wheel a reader installs, built once for the run (every xdist worker
    reads the same file): the packaging tests open it, the reader's venv installs it."""
    return Path(once_per_run(request.config, "simtdocs-wheel", _simtdocs_wheel)["wheel"])
