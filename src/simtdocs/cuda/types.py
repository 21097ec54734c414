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


class DeviceArray(np.ndarray):
    """What ``cuda.to_device`` returns: a numpy array with numba's host-copy methods."""

    def copy_to_host(self, ary=None, stream=None):
        if ary is None:
            return np.array(self, copy=True).view(np.ndarray)
        ary[...] = self
        return ary

    def copy_to_device(self, ary, stream=None):
        self[...] = ary

    def is_c_contiguous(self):
        return self.flags.c_contiguous



def dtype(t) -> np.dtype:
    """A numpy dtype from what a kernel names as one: ``np.float32``, ``numba.float32``,
    ``numba.types.int32``, ``"float32"``, ``a.dtype``."""
    if isinstance(t, np.dtype):
        return t
    if isinstance(t, ScalarType):
        return t.dtype
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
    if isinstance(t, type) and issubclass(t, np.generic) or isinstance(t, ScalarType):
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


def type_of(value) -> np.dtype | None:
    """The dtype a kernel argument has in the kernel (an array's element dtype), None for a tuple."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    return None


def constant(value):
    """A global or closure constant the kernel reads, frozen as numba freezes it."""
    return argument(value)


def axes_order(a: np.ndarray):
    """``p`` with ``np.transpose(a, p)`` C-contiguous (``a`` a transpose of a C array, such as
    ``x.T`` or ``np.asfortranarray(x)``), None when ``a`` is C-contiguous or no order makes it so."""
    if a.flags.c_contiguous or a.ndim < 2:
        return None
    p = tuple(int(k) for k in np.argsort([-abs(s) for s in a.strides], kind="stable"))
    return p if np.transpose(a, p).flags.c_contiguous else None


def kind(value) -> str:
    """How a kernel argument enters the compiled form: "array" (global memory), "array:p"
    (a transposed array, run as ``np.transpose(a, p)`` with its indices reordered) or "value"."""
    if isinstance(value, np.ndarray):
        p = axes_order(value)
        return "array" if p is None else "array:" + ",".join(map(str, p))
    if isinstance(value, (bool, int, float, complex, np.generic, tuple)):
        return "value"
    raise TypeError(f"a kernel argument must be a numpy array or a scalar, got {type(value).__name__}")


class ScalarType:
    """numba's scalar types as the dialect names them (``float32``, ``int32``, ``f4`` …).

    In a kernel, ``float32(x)`` is a cast and ``cuda.local.array(n, int32)`` names the dtype;
    ``int32[::1]`` makes an array type for a signature (which ``cuda.jit`` accepts and ignores).
    """

    def __init__(self, name: str, numpy_name: str | None = None):
        self.name = name
        self.dtype = np.dtype(numpy_name or name)

    def __call__(self, *args):
        if args and all(isinstance(a, (ScalarType, ArrayType)) for a in args):
            return ("signature", self, args)  # float64(float64, float64): a device function's signature
        return self.dtype.type(*args)

    def __getitem__(self, key):
        return ArrayType(self, key)

    def __repr__(self) -> str:
        return self.name


class ArrayType:
    def __init__(self, scalar, key):
        self.scalar, self.key = scalar, key

    def __repr__(self) -> str:
        return f"{self.scalar.name}[...]"


class VoidType:
    """``void(int32[:], float32)``: a kernel signature; accepted and ignored."""

    name = "void"

    def __call__(self, *args):
        return ("signature", args)

    def __repr__(self) -> str:
        return "void"


_NAMES = {
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "uint16": "uint16",
    "uint32": "uint32", "uint64": "uint64", "float16": "float16", "float32": "float32", "float64": "float64",
    "complex64": "complex64", "complex128": "complex128", "boolean": "bool", "bool_": "bool", "b1": "bool",
    "intp": "int64", "uintp": "uint64", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64", "u1": "uint8",
    "u2": "uint16", "u4": "uint32", "u8": "uint64", "f2": "float16", "f4": "float32", "f8": "float64",
    "c8": "complex64", "c16": "complex128", "double": "float64", "float_": "float32",
}
SCALARS = {name: ScalarType(name, np_name) for name, np_name in _NAMES.items()}
globals().update(SCALARS)
void = VoidType()


def signature_types(sig) -> list | None:
    """The scalar parameter dtypes of a numba signature (``"void(float32[:], int32)"`` or
    ``void(float32[:], int32)``): a dtype per scalar parameter, None per array; None when
    there is no signature. A launch casts scalar arguments to them, as numba does."""
    if isinstance(sig, str):
        if "(" not in sig:
            return None
        inner = sig[sig.index("(") + 1: sig.rindex(")")]
        parts, depth, cur = [], 0, ""
        for ch in inner:
            if ch in "[(":
                depth += 1
            elif ch in "])":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur.strip():
            parts.append(cur)
        out = []
        for p in parts:
            p = p.strip()
            if "[" in p or not p:
                out.append(None)
                continue
            t = SCALARS.get(p)
            try:
                out.append(t.dtype if t is not None else np.dtype(p))
            except TypeError:
                out.append(None)
        return out
    if isinstance(sig, tuple) and len(sig) >= 2 and sig[0] == "signature":
        return [a.dtype if isinstance(a, ScalarType) else None for a in sig[-1]]
    return None
