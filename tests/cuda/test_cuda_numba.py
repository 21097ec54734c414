"""Outside kernels, side by side: numba-cuda's own kernels in numba's CUDA simulator and in
simtdocs.cuda, with only the import changed, must give identical results.

The cases are in ``numba_cases.py`` (each names the numba-cuda file it comes from). numba's
side runs in a subprocess with ``NUMBA_ENABLE_CUDASIM=1``, once per run, and its results are
kept in ``.cache/numba-simulator/``, named by what they depend on: the two files that define
and run the cases and the versions of numba, numpy and Python (nothing of simtdocs). A
contributor's next run reads them there; a fresh clone, as on CI, runs numba's side again.
"""

import hashlib
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import numba_cases
from numba_side_by_side import run_case
from site_build import once_per_run

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
pytest.importorskip("numba.cuda")


@pytest.fixture(scope="session")
def numba_results(request):
    """numba's side of every case: from the cache, or run once for the whole run (whichever
    xdist worker asks first runs it; the others read its pickle: ``site_build.once_per_run``)."""
    import numba

    depends_on = b"".join((HERE / name).read_bytes() for name in ("numba_side_by_side.py", "numba_cases.py"))
    versions = f"numba {numba.__version__} numpy {np.__version__} python {sys.version}".encode()
    cached = ROOT / ".cache" / "numba-simulator" / (hashlib.sha256(depends_on + versions).hexdigest()[:20] + ".pkl")

    def run(_folder: Path) -> dict:
        cached.parent.mkdir(parents=True, exist_ok=True)
        part = cached.with_suffix(f".{os.getpid()}.part")
        env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
        subprocess.run([sys.executable, str(HERE / "numba_side_by_side.py"), str(part)], check=True, env=env,
                       cwd=HERE, timeout=300)
        part.replace(cached)  # whole or not at all, for a run that reads it at the same time
        return {}

    if not cached.is_file():
        once_per_run(request.config, "numba-simulator", run)
    with open(cached, "rb") as f:
        return pickle.load(f)


@pytest.mark.parametrize("name", sorted(numba_cases.CASES))
def test_same_results_as_numbas_simulator(name, numba_results):
    origin, source = numba_cases.CASES[name]
    status, theirs = numba_results[name]
    assert status == "ok", f"numba's simulator failed on {name} ({origin}):\n{theirs}"
    ours = run_case("simtdocs", name, source)
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        a, b = np.asarray(ours[key]), np.asarray(theirs[key])
        assert a.dtype == b.dtype and a.shape == b.shape, (key, a.dtype, b.dtype, a.shape, b.shape)
        rtol = numba_cases.TOLERANCE.get(name)
        if rtol is None:
            assert np.array_equal(a, b, equal_nan=True), (key, a, b)
        else:  # libm against numpy's ufuncs: the last bit may differ (see numba_cases.TOLERANCE)
            np.testing.assert_allclose(a, b, rtol=rtol, atol=0, err_msg=key)


@pytest.mark.parametrize("name", sorted(numba_cases.GPU_ONLY))
def test_what_numba_does_on_a_gpu(name):
    """Where numba's simulator departs from numba (globals read live instead of frozen at
    compile time; float32 arithmetic where numba types a literal float64), simtdocs.cuda
    gives what numba gives."""
    origin, source, expected = numba_cases.GPU_ONLY[name]
    ours = run_case("simtdocs", name, source)
    for key, value in expected.items():
        np.testing.assert_allclose(ours[key], np.asarray(value, dtype=ours[key].dtype), rtol=1e-15)  # to the last bit


@pytest.mark.parametrize("name", sorted(numba_cases.DIAGNOSED))
def test_what_the_sanitizer_reports(name):
    """A numba test kernel that reads shared memory nobody wrote: numba's simulator returns
    its zeros; simtdocs.cuda raises the initcheck error at the reader's line."""
    import simtdocs
    origin, source, error = numba_cases.DIAGNOSED[name]
    with pytest.raises(simtdocs.SimulatorError) as info:
        run_case("simtdocs", name, source)
    assert type(info.value).__name__ == error
    assert "A[i] = sdata[i]" in str(info.value)
