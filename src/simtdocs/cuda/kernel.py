"""Kernels and device functions: compile once per signature, launch on the engine.

``@cuda.jit`` makes a ``Kernel``. ``kernel[grid, block](*args)`` (or ``[grid, block, stream,
shared_bytes]``) runs ``simtdocs.launch`` and returns its ``Stats``, also kept as
``kernel.last_stats``; ``simtdocs.launch(kernel, grid, block, args=...)`` and
``simtdocs.reference.launch`` run it too, since a ``Kernel`` called with a ``blk`` runs its
mask form. The mask form is compiled once per *signature*, which arguments are arrays and
which are scalars and their dtypes (as numba compiles once per argument types), and cached.

``@cuda.jit(device=True)`` makes a ``DeviceFunction``: compiled once per signature of its
call (which arguments are arrays, per-thread values or uniform values, and their types) into
a function ``f(blk, mask, *args)`` that the caller's mask form calls with its current mask.
Its instructions are counted at its own source lines.
"""

from __future__ import annotations

import ast

import numpy as np

from .. import model, reference
from ..counters import Stats
from ..devices import H100
from ..diagnostics import TOOLS, MemcheckError, in_language
from . import types as ctypes
from .analysis import CompileError, Scope, Source
from .compiler import HELPERS, Compiler
from .inference import GiveUp, Types


class Specialization:
    """One signature: its analysis (what it returns, its types) and, compiled on first use,
    the mask-form function and its AST.

    ``types``: each parameter's dtype (an array's element dtype), None where not known; with
    them, variables get numba's types where control flow joins (``inference.Types``). A
    device function specialised only to learn whether it returns a per-thread value is never
    compiled."""

    def __init__(self, source: Source, kinds: dict, device: bool, stack: tuple, types: tuple | None = None):
        self.source = source
        self.stack = stack
        self.scope = Scope(source, kinds, device, self._specialize)
        self.returns_varying = self.scope.returns_varying
        self.returns_value = self.scope.returns_value
        self.typing = None
        if types is not None:
            try:
                self.typing = Types(self.scope, dict(zip(self.scope.params, types)))
            except (CompileError, GiveUp):  # the compiler reports the error at the reader's line;
                self.typing = None  # types that did not settle: numpy's own, as without the inference
        self.return_type = self.typing.returns if self.typing is not None else None
        self._function = None

    @property
    def function(self):
        if self._function is None:
            self._compile()
        return self._function

    @property
    def tree(self) -> ast.FunctionDef:
        if self._function is None:
            self._compile()
        return self._tree

    @property
    def extra(self) -> dict:
        if self._function is None:
            self._compile()
        return self._extra

    def _compile(self):
        scope, source = self.scope, self.source
        compiler = Compiler(scope, self.typing)
        tree = compiler.compile()
        namespace = {}
        for name, value in source.namespace.items():
            namespace[name] = ctypes.constant(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
        namespace.update(HELPERS)
        rules = getattr(source, "rules", None)  # a front end's arithmetic (C's); the dialect's is in HELPERS
        if rules is not None:
            namespace.update(rules.helpers)
        namespace.update(scope.statics)
        namespace.update({k: (v.function if isinstance(v, Specialization) else v) for k, v in compiler.extra.items()})
        module = ast.Module(body=[tree], type_ignores=[])
        exec(compile(module, source.filename, "exec"), namespace)
        self._tree, self._extra = tree, compiler.extra
        self._function = namespace[tree.name]
        self._function.__name__ = source.name

    def _specialize(self, fn, kinds, node, types=None):
        if fn.source is self.source or any(s is fn.source for s in self.stack):
            raise self.source.error(node, f"recursion ({fn.__name__} calls itself) is not supported in a kernel")
        return fn.specialize(kinds, self.stack + (self.source,), node, types)


_FROM_DISPATCHER: dict[int, "DeviceFunction"] = {}


def device_function_of(value):
    """A numba ``@jit`` function called from a kernel, as numba.cuda allows: its Python
    function compiled as a device function (None when ``value`` is not one)."""
    py_func = getattr(value, "py_func", None)
    if py_func is None or not callable(py_func) or not type(value).__module__.startswith("numba"):
        return None
    fn = _FROM_DISPATCHER.get(id(value))
    if fn is None:
        fn = _FROM_DISPATCHER[id(value)] = DeviceFunction(py_func)
        fn._dispatcher = value  # keeps the id valid
    return fn


class DeviceFunction:
    """``@cuda.jit(device=True)``: a function kernels call, compiled with each caller."""

    def __init__(self, func):
        self.py_func = func
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self._source = None
        self._specs: dict[tuple, Specialization] = {}

    @property
    def source(self) -> Source:
        if self._source is None:
            self._source = Source(self.py_func)
        return self._source

    def specialize(self, kinds: tuple, stack=(), node=None, types: tuple | None = None) -> Specialization:
        spec = self._specs.get((kinds, types))
        if spec is None:
            params = [a.arg for a in self.source.tree.args.args]
            if len(params) != len(kinds):
                raise CompileError(f"{self.__name__} takes {len(params)} arguments, called with {len(kinds)}")
            spec = self._specs[kinds, types] = Specialization(self.source, dict(zip(params, kinds)), True, stack, types)
        return spec

    def __call__(self, *args):
        raise RuntimeError(f"{self.__name__} is a device function: call it from a @cuda.jit kernel")

    def __repr__(self) -> str:
        return f"<device function {self.__name__}>"


class Stream:
    """``cuda.stream()``: launches finish when they return, so a stream orders nothing."""

    def synchronize(self):
        pass

    def auto_synchronize(self):
        import contextlib
        return contextlib.nullcontext(self)


class Kernel:
    """``@cuda.jit``: launch with ``kernel[grid, block](*args)``; returns the launch's ``Stats``."""

    #: the language its errors' advice is worded in (diagnostics.in_language)
    language = "numba"

    def __init__(self, func, tools=TOOLS, device=H100, signature=None):
        self.py_func = func
        self.arg_types = ctypes.signature_types(signature)
        self.__name__ = func.__name__
        self.__qualname__ = getattr(func, "__qualname__", func.__name__)
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__
        self._source = None
        self._specs: dict[tuple, Specialization] = {}
        self._last_signature = None
        self.last_stats: Stats | None = None
        self.tools = tools
        self.device = device

    @property
    def source(self) -> Source:
        if self._source is None:
            self._source = Source(self.py_func)
        return self._source

    def specialize(self, kinds: tuple, types: tuple | None = None) -> Specialization:
        """The compiled form for arguments of these kinds ("array", "array:p", "value") and
        dtypes (None: not known, as for ``as_masks()`` before any launch)."""
        spec = self._specs.get((kinds, types))
        if spec is None:
            params = [a.arg for a in self.source.tree.args.args]
            if len(params) != len(kinds):
                raise TypeError(f"{self.__name__} takes {len(params)} arguments, got {len(kinds)}")
            named = {p: ("global" + k[5:] if k.startswith("array") else k) for p, k in zip(params, kinds)}
            spec = self._specs[kinds, types] = Specialization(self.source, named, False, (), types)
        self._last_signature = kinds, types
        return spec

    def __call__(self, *args):
        """Called by ``simtdocs.launch`` (or the reference engine) with a ``blk`` first: run
        the mask form for this pass of blocks."""
        if not args or not _is_block(args[0]):
            raise TypeError(f"{self.__name__} is a kernel: launch it with {self.__name__}[grid, block](...) "
                            f"or simtdocs.launch({self.__name__}, grid, block, args=(...))")
        blk, rest = args[0], self._arguments(args[1:])
        kinds = tuple(ctypes.kind(a) for a in rest)
        types = tuple(ctypes.type_of(a) for a in rest)
        if any(k.startswith("array:") for k in kinds):
            # a transposed array runs as the C-contiguous view of the same memory (addresses kept)
            rest = tuple(np.transpose(a, tuple(int(x) for x in k[6:].split(","))) if k.startswith("array:") else a
                         for a, k in zip(rest, kinds))
        spec = self.specialize(kinds, types)
        blk.tracks_undefined = True  # the compiled form follows undefined values (an atomicExch's old one)
        with np.errstate(all="ignore"):
            try:
                spec.function(blk, *rest)
            except MemcheckError as exc:
                raise in_language(exc, self.language)  # the engine's advice is worded for blk

    def _arguments(self, args) -> tuple:
        """Arguments as numba types them: Python ints int64, floats float64, and a scalar
        the signature declares (``uint32``) cast to that type."""
        out = []
        for k, a in enumerate(args):
            a = ctypes.argument(a)
            t = self.arg_types[k] if self.arg_types and k < len(self.arg_types) else None
            if t is not None and not isinstance(a, np.ndarray):
                a = np.array(a).astype(t)[()]
            out.append(a)
        return tuple(out)

    def __getitem__(self, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise ValueError("launch a kernel as kernel[grid, block](...) or kernel[grid, block, stream, shared_bytes](...)")
        grid, block = config[0], config[1]
        shared_bytes = int(config[3]) if len(config) == 4 else 0
        return Launch(self, grid, block, shared_bytes)

    def forall(self, ntasks: int, tpb: int = 0, stream=None, sharedmem: int = 0) -> "Launch":
        """``kernel.forall(n)(*args)``: enough blocks of ``tpb`` threads (256 by default; numba
        asks the occupancy calculator) to cover ``n`` tasks."""
        tpb = int(tpb) or 256
        return Launch(self, max(1, -(-int(ntasks) // tpb)), tpb, int(sharedmem))

    def launch(self, grid, block, args=(), **options) -> Stats:
        """``simtdocs.launch`` with this kernel (``tools=``, ``trace=``, ``device=``, … as there)."""
        options.setdefault("tools", self.tools)
        options.setdefault("device", self.device)
        # The engine addresses C-contiguous arrays; numba takes any strides. A transpose runs
        # in place (see __call__); another strided argument (a slice with a step) runs as a
        # C-contiguous copy, copied back.
        copies = [(a, np.ascontiguousarray(a)) if isinstance(a, np.ndarray) and not a.flags.c_contiguous
                  and ctypes.axes_order(a) is None else None for a in args]
        run_args = tuple(c[1] if c else a for a, c in zip(args, copies))
        stats = model.launch(self, grid, block, args=run_args, **options)
        for c in copies:
            if c and c[0].flags.writeable:
                c[0][...] = c[1]
        self.last_stats = stats
        return stats

    def as_masks(self, *args) -> str:
        """The compiled mask form as Python source, each line marked with the reader's line
        it comes from. ``args`` (arrays or scalars, as for a launch) choose the signature;
        without them, the last launch's, or else: a parameter the kernel indexes is an array."""
        if args:
            args = self._arguments(args)
            kinds, types = tuple(ctypes.kind(a) for a in args), tuple(ctypes.type_of(a) for a in args)
        elif self._last_signature is not None:
            kinds, types = self._last_signature
        else:
            kinds, types = self._guess_kinds(), None
        spec = self.specialize(kinds, types)
        return render(spec)

    def _guess_kinds(self) -> tuple:
        tree = self.source.tree
        indexed = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
                indexed.add(node.value.id)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in ("shape", "size", "ndim"):
                indexed.add(node.value.id)
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name):
                f = node.func
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) and f.value.attr == "atomic":
                    indexed.add(node.args[0].id)
        return tuple("array" if a.arg in indexed else "value" for a in tree.args.args)

    def __repr__(self) -> str:
        return f"<simtdocs.cuda kernel {self.__name__}>"


class Launch:
    """``kernel[grid, block]``: call it with the kernel's arguments."""

    def __init__(self, kernel: Kernel, grid, block, shared_bytes: int):
        self.kernel, self.grid, self.block, self.shared_bytes = kernel, grid, block, shared_bytes

    def __call__(self, *args) -> Stats:
        return self.kernel.launch(self.grid, self.block, args, shared_bytes=self.shared_bytes)


def _is_block(x) -> bool:
    return isinstance(x, (model.Block, reference.Block))


def render(spec: Specialization) -> str:
    """The mask form as source, with the reader's line number and line beside the first
    generated line of each."""
    src = spec.source
    lines: list[tuple[str, int | None]] = []

    def header(node, text):
        lines.append((text, getattr(node, "lineno", None)))

    def walk(stmts, indent):
        for s in stmts:
            pad = "    " * indent
            if isinstance(s, ast.If):
                header(s, f"{pad}if {ast.unparse(s.test)}:")
                walk(s.body, indent + 1)
                if s.orelse:
                    lines.append((f"{pad}else:", None))
                    walk(s.orelse, indent + 1)
            elif isinstance(s, ast.For):
                header(s, f"{pad}for {ast.unparse(s.target)} in {ast.unparse(s.iter)}:")
                walk(s.body, indent + 1)
            elif isinstance(s, ast.While):
                header(s, f"{pad}while {ast.unparse(s.test)}:")
                walk(s.body, indent + 1)
            else:
                for k, text in enumerate(ast.unparse(s).splitlines()):
                    lines.append((pad + text, s.lineno if k == 0 else None))

    tree = spec.tree
    header(tree, f"def {tree.name}({', '.join(a.arg for a in tree.args.args)}):")
    walk(tree.body, 1)
    width = min(max(len(t) for t, _ in lines) + 2, 100)
    out, last = [], None
    for text, lineno in lines:
        if lineno is not None and lineno != last:
            out.append(f"{text.ljust(width)}# {lineno}: {src.line(lineno)}")
            last = lineno
        else:
            out.append(text)
    text = "\n".join(out) + "\n"
    for name, callee in spec.extra.items():
        if isinstance(callee, Specialization):
            text += f"\n# {name}: the device function {callee.source.name}, for this call\n" + render(callee)
    return text
