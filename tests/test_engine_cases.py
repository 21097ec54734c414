"""Every hand-derived case of test_reference.py, run again on the fast engine.

The reference engine defines the counters; these are the same exact numbers (2 wavefronts
for a conflict-free float64 tile, 32 sectors for an int16 gather, 5 for ``a[1:]``, a
write-after-write record naming both lines…) required of ``simtdocs.launch``.
"""

import pytest

import simtdocs
import test_reference as cases
from test_reference import *  # noqa: F401,F403  (collected again here, with the fixture below)


@pytest.fixture(autouse=True)
def fast_engine(monkeypatch):
    monkeypatch.setattr(cases, "launch", simtdocs.launch)


# The reference runs one block per pass; the fast engine's geometry has its own test in test_model.py.
del test_thread_and_block_indices_are_x_fastest  # noqa: F821
