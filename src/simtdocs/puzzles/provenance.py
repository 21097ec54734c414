"""Where an out-of-bounds index came from: the narrow integers behind it.

An index loaded from an ``int8`` array (or from ``uint8``, ``int16``, ``uint16``) holds what
the array could hold: 200 stored as ``int8`` is already -56 when the kernel reads it, and
C's promotion to ``int`` (or numba's to ``int64``) keeps the -56. Arithmetic on it, or a
conversion to a narrow type (``np.int8(i)`` in the per-thread dialect, ``.astype(np.int8)``
in the ``blk`` API), wraps the same way. The index the sanitizer then reports is a plain
int32 or int64, and nothing in the report says where it went wrong.

:func:`narrow_sources` finds it from the kernel's own source: which narrow sources the
indices of the failing line depend on, through the kernel's assignments (``j = idx[i] +
100`` and then ``a[j]``). It is a may-analysis over names, blind to control flow: a
variable depends on everything any of its assignments depends on. A load's value depends
on the array it comes from, not on its index (``a[idx[i]]`` with ``a`` float32 is not
narrow). It reads the per-thread dialect (``@cuda.jit``: subscripts of narrow arguments,
``np.int8(…)``-style conversions), the ``blk`` API (``blk.load`` and the atomics of narrow
arguments, ``.astype`` to a narrow type), arrays the kernel declares narrow in shared or
local memory, and CUDA C (``RawKernel``: the dialect's tree the C front end lowered it to,
whose nodes carry the C's own lines; its narrow arrays, and its conversions to a narrow
type, written or implied: ``signed char j = idx[i] + 100;``).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass

import numpy as np

#: The integer types narrower than C's ``int`` (and than numba's integer arithmetic).
NARROW = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16))
_NARROW_NAMES = {dt.name: dt for dt in NARROW}
#: ``blk`` calls whose value comes from the array they are given first.
_FROM_ARRAY = {"load", "atomic_add", "atomic_sub", "atomic_max", "atomic_min", "atomic_exch", "atomic_cas",
               "atomic_and", "atomic_or", "atomic_xor", "atomic_inc", "atomic_dec"}
#: ``blk`` calls that access memory: their second argument (``index=``) is an index.
_ACCESSES = _FROM_ARRAY | {"store"}


@dataclass(frozen=True)
class Narrow:
    """One narrow source: ``array`` (an argument's name) whose elements are ``dtype``, or a
    conversion to ``dtype`` (``array`` None), written ``text`` on line ``line`` (counted in
    the kernel's file)."""

    dtype: np.dtype
    array: str | None = None
    text: str = ""
    line: int = 0

    @property
    def bounds(self) -> tuple[int, int]:
        info = np.iinfo(self.dtype)
        return int(info.min), int(info.max)


def narrow_sources(kernel, args, lineno: int) -> list[Narrow]:
    """The narrow sources the indices on line ``lineno`` (of the kernel's file) depend on,
    arrays first, each once; ``args`` are the launch's arguments, in the kernel's order.
    Empty when the source cannot be read or nothing narrow is behind them."""
    lowered = _lowered_c(kernel)
    if lowered is not None:  # CUDA C: the dialect's tree it was lowered to, on the C's own lines
        node, source, start, dialect = lowered, None, 1, True
    else:
        func = getattr(kernel, "py_func", kernel)
        dialect = func is not kernel
        try:
            lines, start = inspect.getsourcelines(func)
            source = textwrap.dedent("".join(lines))
            tree = ast.parse(source)
        except (OSError, TypeError, SyntaxError):
            return []
        node = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
        if node is None:
            return []
    names = [a.arg for a in node.args.args]
    if not dialect:
        names = names[1:]  # blk
    narrow = {name: np.asarray(arg).dtype for name, arg in zip(names, args)
              if isinstance(arg, np.ndarray) and arg.dtype in NARROW}
    found = _Taint(narrow, dialect, source, start - 1, None if dialect else (node.args.args[0].arg
                                                                              if node.args.args else None))
    found.run(node)
    line = lineno - (start - 1)  # in the parsed source
    out: list[Narrow] = []
    for index in found.indices(node, line):
        for src in sorted(found.of(index), key=lambda s: (s.array is None, s.line, s.text)):
            if src not in out:
                out.append(src)
    return out


def _lowered_c(kernel):
    """A ``RawKernel``'s function as the C front end lowered it (``ast.FunctionDef``, its nodes on
    the C file's lines), or None for any other kernel."""
    tree = getattr(getattr(getattr(kernel, "kernel", None), "source", None), "tree", None)
    return tree if isinstance(tree, ast.FunctionDef) else None


class _Taint:
    """Which narrow sources each variable of a kernel may hold a value of."""

    def __init__(self, narrow: dict, dialect: bool, source: str, offset: int, blk: str | None):
        self.narrow, self.dialect, self.source, self.offset, self.blk = narrow, dialect, source, offset, blk
        self.names: dict[str, frozenset] = {}

    def run(self, func: ast.AST) -> None:
        """Every assignment, again and again until nothing changes (a loop's variable feeds itself).
        An array the kernel declares narrow (``cuda.shared.array(n, np.int8)``, ``blk.shared(n,
        np.uint8)``, ``cuda.local.array``) is a narrow array like an argument."""
        assignments = []
        for n in ast.walk(func):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                dtype = self._declared(n.value)
                if dtype is not None:
                    self.narrow[n.targets[0].id] = dtype
            if isinstance(n, ast.Assign):
                assignments += [(t, n.value, False) for t in n.targets]
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and n.value is not None:
                assignments.append((n.target, n.value, isinstance(n, ast.AugAssign)))
            elif isinstance(n, ast.For):
                assignments.append((n.target, n.iter, False))
            elif isinstance(n, ast.NamedExpr):
                assignments.append((n.target, n.value, False))
        changed = True
        while changed:
            changed = False
            for target, value, aug in assignments:
                got = self.of(value) | (self.of(target) if aug else frozenset())
                for name in _target_names(target):
                    if not got <= self.names.get(name, frozenset()):
                        self.names[name] = self.names.get(name, frozenset()) | got
                        changed = True

    def _declared(self, node: ast.AST):
        """The narrow dtype of an array ``node`` declares (shared or local memory), or None."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return None
        f = node.func
        declares = (f.attr == "array" and isinstance(f.value, ast.Attribute) and f.value.attr in ("shared", "local")) \
            or (f.attr == "shared" and isinstance(f.value, ast.Name) and f.value.id == self.blk)
        if not declares:
            return None
        dtype = _keyword(node, "dtype") or (node.args[1] if len(node.args) > 1 else None)
        return None if dtype is None else _narrow_type(dtype)

    def _conversion(self, node: ast.AST, dtype) -> frozenset:
        # lowered C has no Python text to name: its verdict names the C type and the line
        text = "" if self.source is None else ast.get_source_segment(self.source, node) or ""
        return frozenset({Narrow(dtype, None, text, node.lineno + self.offset)})

    def of(self, node: ast.AST | None) -> frozenset:
        """The narrow sources the value of ``node`` may come from."""
        if node is None:
            return frozenset()
        if isinstance(node, ast.Name):
            return self.names.get(node.id, frozenset())
        if isinstance(node, ast.Subscript):  # an element: its array's, not its index's
            if isinstance(node.value, ast.Name) and node.value.id in self.narrow:
                return frozenset({Narrow(self.narrow[node.value.id], node.value.id)})
            return self.of(node.value) if not self.dialect else frozenset()
        if isinstance(node, ast.Call):
            f = node.func
            dtype = _narrow_type(f) if self.source is not None else _c_conversion(f)
            if dtype is not None and node.args:  # np.int8(x), int8(x)
                if _fits(node.args[0], dtype):  # np.int8(2): nothing wraps
                    return frozenset()
                return self._conversion(node, dtype) | self.of(node.args[0])
            if isinstance(f, ast.Attribute):
                if f.attr == "astype" and node.args:
                    dtype = _narrow_type(node.args[0])
                    if dtype is not None:
                        return self._conversion(node, dtype) | self.of(f.value)
                    return self.of(f.value)
                if self.blk is not None and isinstance(f.value, ast.Name) and f.value.id == self.blk:
                    if f.attr in _FROM_ARRAY:
                        array = node.args[0] if node.args else _keyword(node, "array")
                        if isinstance(array, ast.Name) and array.id in self.narrow:
                            return frozenset({Narrow(self.narrow[array.id], array.id)})
                        return frozenset()
                if self.dialect and _cuda_atomic(f):
                    array = node.args[0] if node.args else None  # cuda.atomic.add(arr, …): the old element
                    if isinstance(array, ast.Name) and array.id in self.narrow:
                        return frozenset({Narrow(self.narrow[array.id], array.id)})
                    return frozenset()
            parts = [self.of(a) for a in node.args] + [self.of(k.value) for k in node.keywords]
            return frozenset().union(*parts) if parts else frozenset()
        if isinstance(node, (ast.Constant, ast.Lambda)):
            return frozenset()
        parts = [self.of(child) for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr)]
        return frozenset().union(*parts) if parts else frozenset()

    def indices(self, func: ast.AST, line: int) -> list[ast.AST]:
        """The index expressions of the memory accesses written on ``line`` of the parsed source."""
        out = []
        for n in ast.walk(func):
            if not (getattr(n, "lineno", None) is not None and n.lineno <= line <= (n.end_lineno or n.lineno)):
                continue
            if self.dialect and isinstance(n, ast.Subscript):
                out.append(n.slice)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                f = n.func
                if self.blk is not None and isinstance(f.value, ast.Name) and f.value.id == self.blk \
                        and f.attr in _ACCESSES:
                    index = n.args[1] if len(n.args) > 1 else _keyword(n, "index")
                    if index is not None:
                        out.append(index)
                elif self.dialect and _cuda_atomic(f) and len(n.args) > 1:  # cuda.atomic.add(arr, index, value)
                    out.append(n.args[1])
        return out


def _cuda_atomic(f: ast.Attribute) -> bool:
    """``cuda.atomic.add`` and its kin: a method of something called ``atomic``."""
    return isinstance(f.value, ast.Attribute) and f.value.attr == "atomic" or (
        isinstance(f.value, ast.Name) and f.value.id == "atomic")


def _fits(node: ast.AST, dtype) -> bool:
    """Whether ``node`` is a whole-number constant ``dtype`` holds."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        value = -value if isinstance(value, int) and not isinstance(value, bool) else None
    else:
        value = node.value if isinstance(node, ast.Constant) else None
    if not isinstance(value, int) or isinstance(value, bool):
        return False
    info = np.iinfo(dtype)
    return info.min <= value <= info.max


def _keyword(call: ast.Call, name: str):
    return next((k.value for k in call.keywords if k.arg == name), None)


def _narrow_type(node: ast.AST):
    """The narrow dtype ``node`` names (``np.int8``, ``numpy.uint8``, ``int8``, ``"int16"``), or None."""
    if isinstance(node, ast.Attribute):
        return _NARROW_NAMES.get(node.attr)
    if isinstance(node, ast.Name):
        return _NARROW_NAMES.get(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _NARROW_NAMES.get(node.value)
    return None


def _c_conversion(node: ast.AST):
    """The narrow dtype a lowered C conversion converts to (``_Cint8(x)``: a ``signed char``), or None."""
    return _NARROW_NAMES.get(node.id[2:]) if isinstance(node, ast.Name) and node.id.startswith("_C") else None


def _target_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in _target_names(t)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []  # a subscript or attribute: an element of an array, not a variable
