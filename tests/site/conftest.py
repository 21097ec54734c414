"""Fixtures of the site tests; the strict build itself is shared (tests/site_build.py)."""

import pytest

from site_build import run_mkdocs


@pytest.fixture(scope="session")
def mkdocs():
    """``mkdocs(*args, cwd=...)`` runs mkdocs in a subprocess."""
    return run_mkdocs
