"""The team's CUDA C is valid CUDA: every kernel source in the tests compiles with the real
compiler (skipped, not failed, where the CUDA toolkit is absent). The C the pages show
(``snippets/**/*.cu``) goes through ``nvcc -arch=sm_90 -c``, the whole compile; the tests' own
sources through ``nvcc -arch=sm_90 -ptx``: the same front end (cudafe++ parses and checks the
whole file, host code included) and the same device compiler (cicc, to sm_90 PTX), without
ptxas's assembly and gcc's host compile, which take two thirds of ``-c``'s time here (1.2 s a
file against 0.4 s) and check nothing a kernel's validity depends on.

The sources: every module-level string of a ``tests/cuda/c/*.py`` file that holds a
``__global__`` function (the ``RawModule`` texts the tests run) and every ``.cu`` file
under ``tests/`` and ``snippets/``. A source that compiled is remembered by the hash of its
text, the options and nvcc's version (pytest's cache), so an unchanged source is not
compiled again on the next run.
"""

from __future__ import annotations

import ast
import glob
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
OPTIONS = ("-arch=sm_90", "-std=c++17")


def find_nvcc() -> str | None:
    """``nvcc`` on PATH, else the newest /usr/local/cuda*/bin/nvcc."""
    found = shutil.which("nvcc")
    if found:
        return found
    for d in sorted(glob.glob("/usr/local/cuda*/bin"), reverse=True):
        if os.access(os.path.join(d, "nvcc"), os.X_OK):
            return os.path.join(d, "nvcc")
    return None


def sources() -> list[tuple[str, str]]:
    """(name, CUDA C text) of every kernel source the tests hold."""
    out = []
    for path in sorted((ROOT / "tests" / "cuda" / "c").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and \
                    isinstance(node.value.value, str) and "__global__" in node.value.value:
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        out.append((f"{path.name}:{t.id}", node.value.value))
    for base in ("tests", "snippets"):
        for path in sorted((ROOT / base).rglob("*.cu")):
            out.append((str(path.relative_to(ROOT)), path.read_text()))
    return out


SOURCES = sources()
NVCC = find_nvcc()


@pytest.fixture(scope="module")
def nvcc_version():
    if NVCC is None:
        pytest.skip("nvcc (the CUDA toolkit) is not installed here")
    return subprocess.run([NVCC, "--version"], capture_output=True, text=True, check=True).stdout


def test_the_sources_are_found():
    names = [n for n, _ in SOURCES]
    assert any(n.startswith("test_c_features.py:") for n in names)
    assert any(n.startswith("c_twins.py:") for n in names)


@pytest.mark.parametrize("name,code", SOURCES, ids=[n for n, _ in SOURCES])
def test_nvcc_compiles(name, code, nvcc_version, tmp_path, request):
    key = hashlib.sha256("\0".join((code, " ".join(OPTIONS), nvcc_version)).encode()).hexdigest()
    cache = request.config.cache
    if cache is not None and cache.get(f"simtdocs/nvcc/{key}", False):
        return  # this very text compiled before with these options and this nvcc
    src = tmp_path / "kernel.cu"
    src.write_text(code)
    includes = []
    if not name.endswith(".py") and ":" not in name:  # a .cu file: its own folder for its #include "…"
        includes = ["-I", str((ROOT / name).parent)]
    stage = ["-c", "-o", str(tmp_path / "kernel.o")] if name.startswith("snippets/") else \
        ["-ptx", "-o", str(tmp_path / "kernel.ptx")]
    run = subprocess.run([NVCC, *OPTIONS, *includes, *stage, str(src)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"nvcc rejects {name}:\n{run.stderr[-4000:]}"
    if cache is not None:
        cache.set(f"simtdocs/nvcc/{key}", True)
