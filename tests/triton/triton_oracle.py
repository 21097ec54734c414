"""Run a kernel under Triton's own interpreter (TRITON_INTERPRET=1) on numpy arrays.

The interpreter expects torch-like tensors; ``Wrapped`` gives it the few methods it calls
(triton 3.9.0), with one ``triton.language`` dtype object per dtype (a fresh dtype
object per array makes the interpreter mistake arrays for one another)."""

import importlib
import os
import sys

import numpy as np


def load_triton():
    """The real triton with its interpreter on, or None when it is not installed."""
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        triton = importlib.import_module("triton")
        tl = importlib.import_module("triton.language")
    except ImportError:
        return None, None
    if not hasattr(triton, "jit") or "simtdocs" in getattr(triton, "__file__", ""):
        return None, None
    return triton, tl


class _Storage:
    def __init__(self, arr):
        self.arr = arr

    def data_ptr(self):
        return self.arr.ctypes.data

    def cpu(self):
        return self

    def copy_(self, other):
        pass  # the interpreter works on the same memory


class _Device:
    type = "cpu"
    index = None

    def __str__(self):
        return "cpu"


class Wrapped:
    def __init__(self, arr, tl):
        self.arr = arr
        self.dtype = {np.dtype(np.float32): tl.float32, np.dtype(np.float16): tl.float16,
                      np.dtype(np.float64): tl.float64, np.dtype(np.int32): tl.int32,
                      np.dtype(np.int64): tl.int64, np.dtype(np.int8): tl.int8,
                      np.dtype(np.uint8): tl.uint8, np.dtype(bool): tl.int1}[arr.dtype]
        self.device = _Device()
        self.shape = arr.shape

    def data_ptr(self):
        return self.arr.ctypes.data

    def untyped_storage(self):
        return _Storage(self.arr)

    def new_empty(self, *a, **k):
        return Wrapped(self.arr, _TL)

    def set_(self, storage, offset, size, stride):
        return self

    def storage_offset(self):
        return 0

    def size(self, *a):
        return self.arr.shape

    def stride(self, *a):
        s = tuple(x // self.arr.itemsize for x in self.arr.strides)
        return s[a[0]] if a else s

    def element_size(self):
        return self.arr.itemsize

    def cpu(self):
        return self

    def copy_(self, other):
        pass


_TL = None


def run(kernel, grid, *args, **kw):
    global _TL
    _, tl = load_triton()
    _TL = tl
    wrapped = [Wrapped(a, tl) if isinstance(a, np.ndarray) else a for a in args]
    kernel[grid](*wrapped, **kw)


def twin_module(path, name):
    """The module at ``path`` with its two simtdocs imports replaced by Triton's own:
    the same kernels, line for line, for Triton's interpreter. None without triton."""
    import types
    triton, _ = load_triton()
    if triton is None:
        return None
    text = open(path).read()
    text = text.replace("from simtdocs import triton\n", "import triton\n")
    text = text.replace("from simtdocs.triton import language as tl\n", "import triton.language as tl\n")
    mod = types.ModuleType(name)
    mod.__file__ = path
    sys.modules[name] = mod
    exec(compile(text, path, "exec"), mod.__dict__)
    return mod
