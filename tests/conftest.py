"""Shared fixtures. This folder is on sys.path, so tests import ``kernels`` and
``site_build`` from it."""

from pathlib import Path

import pytest

from site_build import built_site


@pytest.fixture(scope="session")
def site(request) -> Path:
    """The strictly built site (built once per session, also used by the browser tests)."""
    state = built_site(request.config)
    assert "error" not in state, state["error"]
    return state["dir"]
