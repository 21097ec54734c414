"""Kernels written the CUDA way: numba.cuda's per-thread dialect, compiled onto the engine.

Write a kernel as for numba.cuda, change only the import, and it runs on the simulator
with every counter, check and per-line report::

    from simtdocs import cuda          # instead of: from numba import cuda

    @cuda.jit
    def vector_add(a, b, c, n):
        i = cuda.grid(1)
        if i < n:                      # a divergent branch is counted at this line
            c[i] = a[i] + b[i]

    stats = vector_add[cdiv(n, 256), 256](a, b, c, n)   # the launch's Stats (also vector_add.last_stats)
    print(vector_add.as_masks())       # what the warp executes: the kernel in the blk API

The kernel is compiled once per signature (which arguments are arrays) from its Python
source (``ast``) into the mask form a reader would write with ``blk`` by hand
(``simtdocs.cuda.compiler``): a branch on a per-thread value becomes
``t = blk.branch(cond, mask=m)`` and both sides run under masks, a loop with per-thread
bounds runs while any lane is in it with its test counted as a branch per trip, ``a[i]``
becomes ``blk.load(a, i, mask=m)``. Which values differ between threads is decided by a
divergence analysis (``simtdocs.cuda.analysis``); a branch on a uniform value (a scalar
argument, a literal, ``blockDim``) stays a Python ``if`` and is not counted, as a compiler
knows it cannot diverge. The generated code keeps the reader's file and line numbers, so
``stats.by_site``, races, sanitizer errors and ``trace=`` name the reader's lines.

``simtdocs.launch(kernel, grid, block, args=...)`` (with ``tools=``, ``trace=``, …) and
``simtdocs.reference.launch`` accept a compiled kernel too; so does
``kernel.launch(grid, block, args, **options)``.

Supported: ``cuda.jit`` (with or without a signature: its scalar types cast the launch's
arguments, ``uint32`` stays 32-bit; array types are not checked), ``cuda.jit(device=True)``,
numba ``@jit`` functions called from a kernel, device-function arguments known at compile
time (``cuda.atomic.add``, another device function, a dtype), bound in as numba specialises
on them; ``kernel[grid, block]``, ``kernel[grid, block, stream, shared_bytes]``,
``kernel.forall(n)``; ``threadIdx/blockIdx/blockDim/gridDim .x/.y/.z``, ``grid``,
``gridsize``, ``laneid``, ``warpsize``; ``if/elif/else``, ``a if c else b``,
``and/or/not``, ``for … in range(…)`` (bounds per thread or uniform), ``for`` over a
tuple or an array, with ``enumerate`` and ``zip`` (an index loop whose reads are loads),
``while``, ``break``, ``continue``, ``return`` anywhere (a device function
returns a value per thread); ``a[i]``, ``a[i, j]``, ``a[idx]`` with a tuple ``idx``,
``a[i] = v``, ``a[i] += v``, ``.shape``, ``.size``, ``.ndim``, ``len``; ``cuda.shared.array``
(shape 0: dynamic), ``cuda.local.array``, ``cuda.const.array_like``, global numpy and
device arrays a kernel names; ``syncthreads`` (and ``_count/_and/_or``), ``syncwarp``,
``shfl_sync``, ``shfl_up_sync``, ``shfl_down_sync``, ``shfl_xor_sync`` (delta per thread or
uniform), ``ballot_sync``, ``any_sync``, ``all_sync``, ``activemask``, ``lanemask_lt``,
``popc``, ``brev``, ``clz``, ``ffs``, ``fma``, ``cbrt``, ``selp``,
``atomic.add/sub/max/min/exch/cas/compare_and_swap``, ``threadfence*``; ``math.*``, numpy
functions and casts (``float32(x)``, ``np.float32(x)``), ``int/float/bool/abs/min/max/
round/len/pow``; numba's type names (``float32``, ``int32[::1]``, ``void(…)``, ``f4`` …) from
``simtdocs.cuda`` or ``simtdocs.cuda.types``; ``to_device``, ``device_array(_like)``,
``copy_to_host``, ``stream``, ``synchronize``; ``print`` (one line per active thread,
blocks and threads in order); ``assert`` (checked, as numba checks it with ``debug=True``;
without it numba ignores asserts).

Differences from numba.cuda, all of them known:

* **Execution.** Threads run as the engine runs them: a warp instruction at a time over
  every block of a pass, lanes of a warp in step; not one Python thread per CUDA thread
  as in numba's simulator. A barrier that only part of a block's running threads reach is
  the synccheck error, as compute-sanitizer reports it; a kernel's ``return`` is a thread
  exit (``blk.exit``), and barriers after it wait only for the threads that did not
  return, as since Volta (``if i >= n: return`` before ``cuda.syncthreads()`` runs). A
  device function's ``return`` leaves the function, not the kernel.
* **Counting.** Arithmetic is not counted as instructions (as in the ``blk`` API, where
  ``blk.alu`` declares it); branches, loads, stores, atomics, barriers, shuffles and votes
  are. A branch on a uniform value is not counted. A short-circuit ``and``/``or`` or a
  conditional expression is a branch of its own only when its conditional side reads
  memory or calls a function; otherwise it is a select (no branch). ``threadfence*`` is
  not counted. Device functions are called, not inlined, so their instructions are counted
  at the device function's own lines.
* **Globals** a kernel reads are frozen when it is first compiled for a signature, as numba
  does on a GPU (numba's simulator reads them live); a device array (``to_device``) is
  captured by reference.
* **Types** follow numba's: int literals and Python int arguments are int64, float literals
  and arguments float64, ``threadIdx``/``blockIdx``/``blockDim``/``laneid`` int32,
  ``grid``/``gridsize`` and ``range`` counters int64, and numpy's promotion of those dtypes
  is numba's (``float32 * 2.0`` is float64 before a store casts it back). Where control
  flow joins (after an ``if``, at the top of a loop and after it, over a device function's
  returns, the two sides of ``a if c else b``) a variable has one type, as numba's compiler
  gives it: a float32 that meets a float64 is float64 on every path, whether or not any
  thread took the path that brought the float64 (``kernel.as_masks()`` shows these casts:
  ``_cast``, and ``_as`` where a masked assignment left the array wider than the value; see
  ``simtdocs.cuda.inference``). numba's
  simulator, by contrast, computes ``float32 * 2.0`` in float32 (numpy 2 treats the literal
  as weak), so a long float chain can differ from it in the last bit.
* **Integers** are numba's, not numpy's (``simtdocs.cuda.arithmetic``): arithmetic on
  integers narrower than 64 bits is int64 (uint64 when both are unsigned), so
  ``int32 + int32`` at 2**31 - 1 is 4,294,967,294 and ``uint32 * uint32`` a uint64; a signed
  with an unsigned integer is int64; ``/`` is float64, ``//`` and ``%`` floor; a load from an
  int8 array is an int8 (the ``blk`` API's load promotes it to int32, as C does), widened by
  arithmetic (``int8 + int8`` is 200, not -56); where an int64 and a uint64 meet (``min``, a
  variable after an ``if``) the type is float64; a store converts to the array's dtype.
  ``as_masks()`` shows ``_add(a, b)`` and the like where numpy's operator would differ, and
  the operator itself elsewhere. numba's signed ``+ - *`` past int64 are undefined (LLVM
  ``nsw``); here they wrap. ``blockDim``/``gridDim``/``warpsize`` are Python ints in the mask
  form (numba: int32); in arithmetic both widen to int64 alike.
* **Undefined values.** A shuffle from a lane that does not take part (inactive, exited,
  past the end of the block) gives an undefined value, as on a GPU (numba's simulator has
  no such lanes to read). The compiler keeps a shadow beside each variable that can hold
  one; storing it, giving it to an atomic, indexing with it, branching on it or passing it
  to a device function raises ``UndefinedValueError``, naming the line that made it and the
  line that used it; unused, it is silent. The ``mask`` argument of shuffles and votes is
  not evaluated: the lanes taking part are the ones running.
* **Memory.** The engine addresses C-contiguous arrays. A transposed argument (``a.T``,
  Fortran order) runs in place as the C-contiguous view of its memory with its indices
  reordered, so its addresses and sectors are the real ones (a memcheck message names the
  view's axes); any other strided argument (a slice with a step) runs as a C-contiguous
  copy, copied back after the launch, with the copy's addresses. A negative index is out of bounds (a
  memcheck error), as in CUDA C; numba wraps it around. Slicing an array inside a kernel is not supported. Local arrays are zero-filled
  (numba leaves them undefined) and not counted as memory traffic; constant arrays
  (``const.array_like``, and global numpy arrays a kernel names, which numba freezes into
  constant memory) are read through the constant cache, not counted as global traffic,
  and checked for bounds. Only one dynamic shared array per kernel (numba lets several
  alias the same memory).
* **Atomics** ``and_``, ``or_``, ``xor``, ``inc``, ``dec``, ``nanmax``, ``nanmin`` are not
  supported (the engine has add, max, min, exch, cas; ``sub`` is an add of the negation).
* **Warp operations.** The ``mask`` argument of ``syncwarp``/``shfl_*_sync``/votes is not
  checked; the lanes that take part are those the control flow lets through (a shuffle
  from a lane that does not take part is an error, as the engine defines it).
  ``eq_sync`` and ``match_any_sync``/``match_all_sync`` are not supported.
* **Not supported** (a ``CompileError`` naming the line and the construct): recursion,
  ``try/except``, ``raise``, ``with``, classes, ``lambda``, nested functions,
  lists, dicts, sets, comprehensions, keyword arguments to ``print``, f-strings, slices, ``*args``, keyword
  arguments to device functions, a loop's ``else``, cooperative groups (``cuda.cg``),
  dynamic parallelism, ``cuda.fp16``, records, ``cuda.random``, events (a launch's stream
  argument is accepted and ignored), array methods (``a.reshape``, ``a.sum``), an array
  chosen per thread (``x = a if i < n else b`` with arrays).
* A ``for`` loop's counter after a per-thread loop holds its last value in the loop (as in
  Python); a variable assigned only under a branch is 0 for the other threads.
"""

from __future__ import annotations

import numpy as np

from . import intrinsics as _I
from .analysis import CompileError
from .intrinsics import atomic, blockDim, blockIdx, cg, const, gridDim, laneid, local, shared, threadIdx, warpsize
from .kernel import DeviceFunction, Kernel, Stream
from .types import DeviceArray

globals().update(_I.functions)  # grid, gridsize, syncthreads, shfl_sync, … as markers
from .types import SCALARS as _SCALARS, void  # noqa: E402  numba's type names: float32, int32, f4 …

globals().update(_SCALARS)


def jit(func_or_sig=None, device: bool = False, **options):
    """``@cuda.jit``, ``@cuda.jit(device=True)``, ``@cuda.jit("void(float32[:])")``.

    numba's options (``debug``, ``lineinfo``, ``fastmath``, ``cache``, ``opt``, …) are
    accepted and ignored, and so is a signature: the kernel is compiled per signature at
    its first launch.
    """
    signature = None if callable(func_or_sig) and not isinstance(func_or_sig, (str, list, tuple)) else func_or_sig
    if isinstance(signature, list):
        signature = signature[0] if signature else None

    def wrap(func):
        return DeviceFunction(func) if device else Kernel(func, signature=signature)
    if signature is None and func_or_sig is not None:
        return wrap(func_or_sig)
    return wrap


def to_device(ary, stream=None, copy: bool = True, to=None):
    """A copy of ``ary`` the kernel can read and write (numba: a device array)."""
    if to is not None:
        to[...] = ary
        return to
    return np.array(ary, copy=True, order="C").view(DeviceArray)


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=None):
    return np.zeros(shape, dtype=np.dtype(dtype) if not hasattr(dtype, "name") else np.dtype(str(dtype))).view(DeviceArray)


def device_array_like(ary, stream=None):
    return np.zeros_like(np.asarray(ary), order="C").view(DeviceArray)


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    return np.zeros(shape, dtype=dtype)


def mapped_array(shape, dtype=np.float64, strides=None, order="C", stream=None, portable=False, wc=False):
    return device_array(shape, dtype)


def stream():
    return Stream()


def synchronize():
    """Kernels finish when their launch returns; nothing to wait for."""


def is_available() -> bool:
    return True


def __getattr__(name):
    """``RawKernel``, ``RawModule``: the CUDA C front end (``simtdocs.cuda.c``), loaded on first use."""
    if name in ("RawKernel", "RawModule"):
        from . import c
        return getattr(c, name)
    raise AttributeError(f"module 'simtdocs.cuda' has no attribute {name!r}")


__all__ = [
    "RawKernel", "RawModule", "CompileError", "DeviceArray", "DeviceFunction", "Kernel", "atomic", "blockDim", "blockIdx", "cg", "const",
    "device_array", "device_array_like", "gridDim", "is_available", "jit", "laneid", "local", "mapped_array",
    "pinned_array", "shared", "stream", "synchronize", "threadIdx", "to_device", "void", "warpsize", *_I.FUNCTIONS, *_SCALARS,
]
