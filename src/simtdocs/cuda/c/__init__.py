"""CUDA C kernels on the simulator: a C front end onto the per-thread compiler.

``from simtdocs.cuda import RawKernel, RawModule`` (CuPy's interface). The C source is
preprocessed (``preprocess``, pcpp), parsed (``parse``, tree-sitter-cuda) and lowered
(``lower``) into the same tree the numba dialect compiles, with the ``.cu`` file's line
numbers and C's arithmetic (``arith``); ``module`` holds the CuPy-shaped objects.
"""

from .module import RawKernel, RawModule

__all__ = ["RawKernel", "RawModule"]
