"""Fixtures of the kernel zoo: ``both`` and ``fast`` (see ``zoo_engines``, which the test
modules also import for ``expect`` and ``rng``)."""

import pytest

from zoo_engines import run_both, run_fast


@pytest.fixture
def both():
    """``both(kernel, grid, block, args, **launch_kw)``: reference and fast engines, compared."""
    return run_both


@pytest.fixture
def fast():
    """``fast(kernel, grid, block, args, **launch_kw)``: the fast engine alone."""
    return run_fast
