"""Triton kernels on paper: ``from simtdocs import triton``, ``from simtdocs.triton import language as tl``.

``@triton.jit`` functions run as block programs on the engine: ``kernel[grid](*args, BLOCK=…,
num_warps=4)`` launches one block of ``num_warps * 32`` threads per program instance and
returns the launch's ``Stats`` (with ``stats.dots``: the FLOPs and MMA instructions of each
``tl.dot`` line, which the engine's counters have no field for). Only memcheck runs by
default (``tools=``): a Triton kernel manages no shared memory of its own, and the
compiler's scratch that reductions and dots use here is race-free by construction. The
layout and what is counted are stated in ``simtdocs.triton.language``. Tensors are numpy
arrays or anything with ``__array__`` or DLPack (torch CPU tensors); results are written
back into them. A strided view (``b.T``, a column slice) is passed as Triton passes it, a
pointer to its first element, the kernel doing the strides the host hands it (``_flat``).
``@triton.autotune`` runs its first config (or ``config=``: an index or a ``Config``);
Python's ``min``/``max`` in a kernel are ``tl.minimum``/``tl.maximum`` on tensors, as
Triton's code generator makes them. Integer arguments divisible by 16 are specialised as
Triton's JIT does (their divisibility decides vector widths), except those named in
``do_not_specialize``.

Program instances run batched, as the engine batches blocks (``blocks_per_pass``, default
the engine's choice): the kernel's source is rewritten so that control flow on program
ids and loaded scalars (``if pid == 0``, ``return``, loops whose bounds differ between
programs, as in causal attention) runs per program (``simtdocs.triton._rewrite``). No
counter depends on the batching; ``blocks_per_pass=1`` runs one program per pass.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from .. import model
from ..devices import H100
from . import _rewrite, language
from .language import TritonError, cdiv, next_power_of_2  # noqa: F401

__all__ = ["Config", "JITFunction", "autotune", "cdiv", "heuristics", "jit", "language", "next_power_of_2"]


def _as_array(a):
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "__dlpack__") and not hasattr(a, "__array__"):
        return np.from_dlpack(a)
    if hasattr(a, "__dlpack__"):
        try:
            return np.from_dlpack(a)
        except (TypeError, RuntimeError, BufferError):
            pass
    if hasattr(a, "__array__"):
        return np.asarray(a)
    return None


def _flat(arr, kernel, name):
    """The memory a Triton pointer argument points into, as a flat array starting at the
    array's first element: Triton receives ``data_ptr()`` and the kernel does the strides
    (``x.stride(0)``), so a strided view (``b.T``, ``x[:, ::2]``, a column slice) is the span of
    its parent's memory from its first element to its last, the gaps included (memory of the
    same allocation on a GPU too). Stores go to that memory, so the caller's view sees them."""
    if arr.flags.c_contiguous:
        return arr.reshape(-1)
    if arr.size == 0:
        return arr.reshape(-1)
    item = arr.itemsize
    if any(s < 0 for s in arr.strides) or any(s % item for s in arr.strides):
        raise NotImplementedError(f"{kernel}: argument {name!r} has negative or non-element strides "
                                  f"{arr.strides}; pass np.ascontiguousarray(...) of it")
    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.c_contiguous:
        raise NotImplementedError(f"{kernel}: argument {name!r} is a view into memory numpy does not hold "
                                  "contiguously; pass np.ascontiguousarray(...) of it")
    start = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    extent = (1 + sum((n - 1) * (s // item) for n, s in zip(arr.shape, arr.strides))) * item
    return root.reshape(-1).view(np.uint8)[start:start + extent].view(arr.dtype)


class JITFunction:
    def __init__(self, fn, do_not_specialize=(), **_):
        self.fn = fn
        names = list(inspect.signature(fn).parameters)
        # arguments Triton does not specialise (by name or position): no divisibility known
        self.do_not_specialize = {names[d] if isinstance(d, int) else d for d in do_not_specialize}
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        functools.update_wrapper(self, fn)
        self._kernel = self._helper = None

    def _compiled(self, as_kernel):
        """The function rewritten for batches of programs (compiled once, on first use)."""
        if as_kernel:
            if self._kernel is None:
                self._kernel = _rewrite.compile_batched(self.fn, True, language.RUNTIME)
            return self._kernel
        if self._helper is None:
            self._helper = _rewrite.compile_batched(self.fn, False, language.RUNTIME)
        return self._helper

    def __call__(self, *args, **kwargs):  # a @jit function called from a kernel
        if getattr(language._ctx, "batch", None) is None:
            return self.fn(*args, **kwargs)
        return self._compiled(False)(*args, **kwargs)

    @staticmethod
    def layout(shape, num_warps=4, dtype=language.float32):
        """Which thread holds which element: ``(thread, register)`` arrays of ``shape``
        (``simtdocs.triton.language.layout``)."""
        return language.layout(shape, num_warps, dtype)

    def __getitem__(self, grid):
        return lambda *args, **kw: self.run(*args, grid=grid, **kw)

    def run(self, *args, grid, num_warps=4, num_stages=3, device=H100, trace=None, tools=None,
            blocks_per_pass=None, **kw):
        bound_names = self.arg_names[:len(args)]
        meta = dict(zip(bound_names, args))
        for k in ("num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid", "stream"):
            kw.pop(k, None)
        meta.update(kw)
        params = self.signature.parameters
        for name, value in (("num_warps", num_warps), ("num_stages", num_stages)):
            if name in params:  # a kernel may take them as constexpr parameters (the softmax tutorial)
                meta.setdefault(name, value)
        var_kw = next((n for n, p in params.items() if p.kind is inspect.Parameter.VAR_KEYWORD), None)
        extra_meta = {k: v for k, v in meta.items() if k not in params}
        if extra_meta and var_kw is None:
            raise TypeError(f"{self.__name__}: unexpected argument(s) {', '.join(extra_meta)}")
        params = {n: p for n, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
        for name, p in params.items():
            if name not in meta and p.default is not inspect.Parameter.empty:
                meta[name] = p.default
        missing = [n for n in params if n not in meta]
        if missing:
            raise TypeError(f"{self.__name__}: missing argument(s) {', '.join(missing)}")
        g = grid(meta) if callable(grid) else grid
        g = tuple(int(x) for x in (g if isinstance(g, (tuple, list)) else (g,)))
        g = g + (1,) * (3 - len(g))
        # array arguments: flat views the engine reads and writes
        arrays, names = [], []
        for name in params:
            arr = _as_array(meta[name]) if not isinstance(meta[name], (int, float, bool, str, type(None))) else None
            if arr is not None:
                arrays.append(_flat(arr, self.__name__, name))
                names.append(name)
        fn = self._compiled(True)
        grid3 = g
        call0 = {}
        for name in params:
            v = meta[name]
            ann = params[name].annotation
            is_const = ann is language.constexpr or (isinstance(ann, str) and "constexpr" in ann)
            if name in names:
                continue
            if is_const or not isinstance(v, (int, float, bool, np.integer, np.floating)) or isinstance(v, bool):
                call0[name] = v
            elif isinstance(v, (int, np.integer)):
                # Triton specialises an integer argument divisible by 16 (its alignment is known)
                call0[name] = language.tensor(np.array([v], np.int32 if -2**31 <= v < 2**31 else np.int64),
                                              16 if v % 16 == 0 and name not in self.do_not_specialize else 1)
            else:
                call0[name] = language.tensor(np.array([v], np.float32))
        call0.update(extra_meta)
        zero = np.zeros(1, np.int64)

        def kernel(blk, *flat):
            language._ctx.batch = language._Batch(blk, grid3)
            call = dict(call0)
            for name, arr in zip(names, flat):
                call[name] = language.pointer(arr, zero, name)
            try:
                with np.errstate(all="ignore"):  # Triton's float math does not raise; programs that sit out a
                    fn(**call)                   # loop or branch compute on values nobody stores
            finally:
                language._ctx.batch = None

        kernel.__name__ = self.__name__
        # A Triton kernel manages no shared memory of its own: the compiler's scratch (reductions,
        # dot operands) is race-free by construction, so only memcheck runs unless asked.
        extra = {"tools": ("memcheck",) if tools is None else tools}
        stats = model.launch(kernel, g, int(num_warps) * 32, args=tuple(arrays), device=device,
                             blocks_per_pass=blocks_per_pass, trace=trace, **extra)
        if "dots" not in stats.__dict__:
            stats.dots = {}
        return stats


def jit(fn=None, **kw):
    if fn is None:
        return lambda f: JITFunction(f, **kw)
    return JITFunction(fn, **kw)


class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None, **_):
        self.kwargs = dict(kwargs)
        self.num_warps, self.num_stages = num_warps, num_stages
        self.pre_hook = pre_hook

    def all_kwargs(self):
        return {**self.kwargs, "num_warps": self.num_warps, "num_stages": self.num_stages}


class Autotuned:
    """``@triton.autotune``: runs the first config, or ``config=i`` (an index or a Config)."""

    def __init__(self, fn, configs, **_):
        self.fn, self.configs = fn, list(configs)
        self.__name__ = getattr(fn, "__name__", "kernel")

    def __getitem__(self, grid):
        def run(*args, config=0, **kw):
            c = config if isinstance(config, Config) else self.configs[config]
            return self.fn[grid](*args, **{**c.all_kwargs(), **kw})
        return run

    def __call__(self, *a, **k):
        return self.fn(*a, **k)


def autotune(configs, key=(), **kw):
    return lambda fn: Autotuned(fn, configs, **kw)


class Heuristics:
    def __init__(self, fn, values):
        self.fn, self.values = fn, values
        self.__name__ = getattr(fn, "__name__", "kernel")

    def __getitem__(self, grid):
        def run(*args, **kw):
            inner = self.fn.fn if isinstance(self.fn, JITFunction) else None
            names = list(inspect.signature(inner).parameters) if inner else []
            meta = {**dict(zip(names, args)), **kw}
            for k, f in self.values.items():
                kw.setdefault(k, f(meta))
            return self.fn[grid](*args, **kw)
        return run

    def __call__(self, *a, **k):
        return self.fn(*a, **k)


def heuristics(values):
    return lambda fn: Heuristics(fn, values)
