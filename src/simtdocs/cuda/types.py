"""Types as numba gives them: literals and scalar arguments, and dtypes from numba or numpy.

numba types an int literal or a Python int argument as int64 and a float as float64, and
keeps the dtype of an array's elements; ``threadIdx``/``blockIdx``/``blockDim``/``laneid``
are int32 and ``cuda.grid``/``cuda.gridsize`` int64. Numpy 2 treats a Python scalar as
"weak" (``float32_array * 2.0`` stays float32), so the compiled form writes literals as
``i64(1)`` and ``f64(0.5)``: then numpy promotes the way numba does
(``float32 * float64 -> float64``, ``int32 + int64 -> int64``).
"""

from __future__ import annotations

import numpy as np


def dtype(t) -> np.dtype:
    """A numpy dtype from what a kernel names as one: ``np.float32``, ``numba.float32``,
    ``numba.types.int32``, ``"float32"``, ``a.dtype``."""
    if isinstance(t, np.dtype):
        return t
    if isinstance(t, type) and issubclass(t, np.generic):
        return np.dtype(t)
    if isinstance(t, str):
        return np.dtype(t)
    if t is float:
        return np.dtype(np.float64)
    if t is int:
        return np.dtype(np.int64)
    if t is bool:
        return np.dtype(np.bool_)
    name = getattr(t, "name", None) or str(t)  # numba types: float32, int64, boolean, uint8 …
    name = {"boolean": "bool", "intp": "int64", "uintp": "uint64"}.get(name, name)
    try:
        return np.dtype(name)
    except TypeError:
        raise TypeError(f"{t!r} is not a dtype a kernel can use") from None


def is_dtype_like(t) -> bool:
    """Whether ``t`` names a scalar type (then calling it in a kernel is a cast)."""
    if isinstance(t, type) and issubclass(t, np.generic):
        return True
    module = type(t).__module__ or ""
    if module.startswith("numba.core.types") or module.startswith("numba.types"):
        try:
            dtype(t)
            return True
        except TypeError:
            return False
    return False


def argument(value):
    """A kernel argument as numba types it: Python ints int64, floats float64."""
    if isinstance(value, bool) or isinstance(value, np.generic):
        return value
    if isinstance(value, int):
        return np.int64(value)
    if isinstance(value, float):
        return np.float64(value)
    if isinstance(value, complex):
        return np.complex128(value)
    if isinstance(value, tuple):
        return tuple(argument(v) for v in value)
    return value


def constant(value):
    """A global or closure constant the kernel reads, frozen as numba freezes it."""
    return argument(value)


def kind(value) -> str:
    """How a kernel argument enters the compiled form: "array" (global memory) or "value"."""
    if isinstance(value, np.ndarray):
        return "array"
    if isinstance(value, (bool, int, float, complex, np.generic, tuple)):
        return "value"
    raise TypeError(f"a kernel argument must be a numpy array or a scalar, got {type(value).__name__}")
