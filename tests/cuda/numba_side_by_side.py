"""Run numba-style kernel sources in numba's CUDA simulator or in simtdocs.cuda.

A case is Python source that uses ``cuda``, ``np``, ``math`` and numba's scalar types
(``int32``, ``float32`` …) and defines ``run()``, which builds its inputs, launches its
kernels and returns a dict of result arrays. The source is the same for both sides; only
the import differs:

* numba: ``from numba import cuda`` and the types from ``numba`` (``NUMBA_ENABLE_CUDASIM=1``
  set before numba is imported, in a subprocess: ``python numba_side_by_side.py out.pkl``);
* simtdocs: ``from simtdocs import cuda`` and the types from ``simtdocs.cuda``.
"""

from __future__ import annotations

import linecache
import os
import pickle
import sys
import traceback

TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
         "boolean", "void", "intp", "complex64", "complex128", "double", "f4", "f8", "i8")


def namespace(side: str, name: str) -> dict:
    import math

    import numpy as np
    ns = {"np": np, "math": math, "__name__": f"case_{name}"}
    if side == "numba":
        import numba
        from numba import cuda
        ns.update({t: getattr(numba, t) for t in TYPES if hasattr(numba, t)})
        ns["numba"] = numba
        from numba.cuda import types
        ns["types"] = types
    else:
        from simtdocs import cuda
        from simtdocs.cuda import types
        ns.update({t: getattr(cuda, t) for t in TYPES if hasattr(cuda, t)})
        ns["types"] = types
    ns["cuda"] = cuda
    if side == "numba":
        class ClosureCuda:  # reads the global ``cuda``, which the simulator swaps while a kernel runs
            def __getattr__(self, attr):
                return getattr(ns["cuda"], attr)
        ns["closure_cuda"] = ClosureCuda
    else:
        ns["closure_cuda"] = lambda: cuda
    return ns


def run_case(side: str, name: str, source: str):
    filename = f"<numba case {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    ns = namespace(side, name)
    if "numba." in source and "numba" not in ns:  # a CPU @numba.jit function the kernel calls
        import numba
        ns["numba"] = numba
    exec(compile(source, filename, "exec"), ns)
    return ns["run"]()


def main(out_path: str, names: list[str]):
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from numba_cases import CASES
    results = {}
    for name in names or CASES:
        try:
            results[name] = ("ok", run_case("numba", name, CASES[name][1]))
        except Exception:
            results[name] = ("error", traceback.format_exc(limit=3))
    with open(out_path, "wb") as f:
        pickle.dump(results, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
