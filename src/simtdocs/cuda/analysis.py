"""Which values and branches differ between threads: the divergence analysis.

A value is *uniform* when every thread of the launch holds the same one (a literal, a scalar
argument, ``blockDim``, ``gridDim``, a loop counter over such bounds); it stays a Python
value and a branch on it stays a Python ``if``, as a compiler knows a uniform branch cannot
diverge. A value is *varying* when it may differ between threads: ``threadIdx``,
``blockIdx``, ``laneid``, ``cuda.grid``, anything read from memory or a warp operation, and
any variable assigned under a varying branch or after some threads left a loop or the
function. A branch on a varying value becomes a mask and a counted ``blk.branch``.

The analysis runs to a fixpoint (a variable assigned later in a loop can make the loop's
own condition varying) and records, for every ``if`` and loop, which *masked* exits
(``return``, ``break``, ``continue`` taken by only some threads) can leave it: the compiler
then knows where the current mask must shrink.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import textwrap
import types

import numpy as np

from ..diagnostics import SimulatorError
from . import intrinsics as I

ARRAY_KINDS = ("global", "shared", "local", "const")
VARYING_INTRINSICS = {
    "grid", "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "ballot_sync", "any_sync", "all_sync",
    "activemask", "lanemask_lt", "syncthreads_count", "syncthreads_and", "syncthreads_or",
} | {f"atomic.{a}" for a in I.ATOMICS_SUPPORTED} | {"vload"}
EFFECT_INTRINSICS = VARYING_INTRINSICS - {"grid", "lanemask_lt", "activemask"} | {
    "syncthreads", "syncwarp", "threadfence", "threadfence_block", "threadfence_system", "vstore", "printf"}

UNSUPPORTED = {
    ast.Try: "try/except", ast.Raise: "raise", ast.With: "with", ast.ClassDef: "a class definition",
    ast.FunctionDef: "a nested function (closure)", ast.AsyncFunctionDef: "async def", ast.Lambda: "lambda",
    ast.ListComp: "a list comprehension", ast.SetComp: "a set comprehension", ast.DictComp: "a dict comprehension",
    ast.GeneratorExp: "a generator expression", ast.List: "a list (allocation)", ast.Dict: "a dict (allocation)",
    ast.Set: "a set (allocation)", ast.Yield: "yield", ast.YieldFrom: "yield from", ast.Await: "await",
    ast.Global: "global", ast.Nonlocal: "nonlocal", ast.Delete: "del", ast.Starred: "*unpacking",
    ast.JoinedStr: "an f-string", ast.NamedExpr: "the := operator", ast.AsyncFor: "async for",
    ast.AsyncWith: "async with", ast.Import: "import", ast.ImportFrom: "import",
    ast.Slice: "slicing (a[i:j])", ast.Match: "match",
}


class CompileError(SimulatorError):
    """A kernel uses a construct the per-thread dialect does not compile; says which and where."""


class Static:
    """A device function argument known when the caller is compiled (a function such as
    ``cuda.atomic.add`` or another device function, a dtype): bound into the callee's
    compiled form, as numba specialises on such arguments."""

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, Static) and other.value is self.value

    def __hash__(self):
        return hash(id(self.value))

    def __repr__(self) -> str:
        return f"Static({self.value!r})"


class Source:
    """A Python function's own source, parsed with the line numbers of its file."""

    def __init__(self, func):
        self.func = func
        self.name = func.__name__
        code = func.__code__
        self.filename = code.co_filename
        try:
            text = inspect.getsource(func)
        except (OSError, TypeError):
            raise CompileError(f"{self.name}: its source is not available (a kernel must be defined in a file, "
                               f"a notebook cell, or a string registered with linecache)") from None
        tree = ast.parse(textwrap.dedent(text))
        ast.increment_lineno(tree, code.co_firstlineno - 1)
        defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        if not defs:
            raise CompileError(f"{self.name}: the source of a kernel must be a def")
        self.tree: ast.FunctionDef = defs[0]
        self.tree.decorator_list = []  # @cuda.jit(signature): evaluated by Python already
        Iterations().visit(self.tree)
        split_loop_variables(self.tree)
        self.namespace = dict(func.__globals__)
        if func.__closure__:
            for name, cell in zip(code.co_freevars, func.__closure__):
                try:
                    self.namespace[name] = cell.cell_contents
                except ValueError:
                    pass
        self.closure = set(code.co_freevars)
        from .types import DeviceArray
        for node in ast.walk(self.tree):  # numba freezes the globals a kernel reads, arrays included
            if isinstance(node, ast.Name) and isinstance(self.namespace.get(node.id), np.ndarray) \
                    and not isinstance(self.namespace[node.id], DeviceArray):
                frozen = np.array(self.namespace[node.id], copy=True)
                frozen.flags.writeable = False
                self.namespace[node.id] = frozen

    def line(self, lineno: int) -> str:
        return linecache.getline(self.filename, lineno).strip()

    def error(self, node, what: str) -> CompileError:
        lineno = getattr(node, "lineno", self.tree.lineno)
        return CompileError(f"{self.name} (line {lineno}: {self.line(lineno)}): {what}").at(
            site=(self.filename, lineno))


def split_loop_variables(func: ast.FunctionDef) -> None:
    """A name that is only ever a ``for`` loop's variable, in loops that do not nest, is one
    variable per loop: ``for k in range(3)`` and a later ``for k in range(lane % 4)`` are two
    (each loop binds ``k`` before any read of it, and no read is outside its loop), as C's
    ``for (int k …)`` are and as numba's SSA makes them. Whether a value varies between threads
    is decided per variable (``Analysis``), so without the split the second, per-thread loop
    would make the first loop's ``k`` varying too, and a branch on it counted. The later loops'
    variables are renamed ``k_2``, ``k_3``… (a name the function does not use)."""
    loops: dict[str, list[ast.For]] = {}
    for node in ast.walk(func):
        if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name):
            loops.setdefault(node.target.id, []).append(node)
    used = {n.id for n in ast.walk(func) if isinstance(n, ast.Name)} | {a.arg for a in ast.walk(func)
                                                                        if isinstance(a, ast.arg)}
    for name, fors in loops.items():
        if len(fors) < 2:
            continue
        inside: dict[int, ast.For] = {}
        nested = False
        for loop in fors:
            for part in [loop.target] + loop.body:
                for n in ast.walk(part):
                    if isinstance(n, ast.Name) and n.id == name:
                        nested |= id(n) in inside and n is not loop.target
                        inside[id(n)] = loop
                    if n is not loop and isinstance(n, (ast.For, ast.AsyncFor)) and n in fors:
                        nested = True
        everywhere = [n for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == name]
        if nested or any(id(n) not in inside for n in everywhere):
            continue  # read after a loop, assigned elsewhere, or loops in loops: one variable, as written
        for k, loop in enumerate(fors[1:], start=2):
            new = f"{name}_{k}"
            while new in used:
                new += "_"
            used.add(new)
            for n in everywhere:
                if inside[id(n)] is loop:
                    n.id = new


class Iterations(ast.NodeTransformer):
    """``for v in a``, ``for i, v in enumerate(a)``, ``for x, y in zip(a, b)`` (and nestings of
    them) over arrays or tuples become index loops, as numba lowers them:
    ``for _k in range(len(a)): i, v = _k, a[_k]``. Each ``a[_k]`` is then a load like any
    other. A loop over a literal tuple (``for d in (16, 8, 4)``) stays as it is."""

    counter = 0

    def visit_For(self, node):
        self.generic_visit(node)
        it = node.iter
        if isinstance(it, ast.Tuple) or (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                                         and it.func.id == "range"):
            return node
        if not (isinstance(it, (ast.Name, ast.Attribute)) or
                (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("enumerate", "zip"))):
            return node
        Iterations.counter += 1
        k = f"_k{Iterations.counter}"
        try:
            length, items = self._unfold(it, k)
        except ValueError:
            return node
        rng = ast.Call(ast.Name("range", ast.Load()), [length], [])
        bind = ast.Assign([node.target], items)
        for n in (rng, bind):
            ast.copy_location(n, node)
            ast.fix_missing_locations(n)
            for sub in ast.walk(n):  # one line: the loop's own
                if hasattr(sub, "lineno"):
                    sub.lineno = sub.end_lineno = node.lineno
        node.iter = rng
        node.target = ast.copy_location(ast.Name(k, ast.Store()), node.target)
        node.body = [bind] + node.body
        return node

    def _unfold(self, it, k):
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate" and len(it.args) == 1:
            length, items = self._unfold(it.args[0], k)
            return length, ast.Tuple([ast.Name(k, ast.Load()), items], ast.Load())
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "zip" and it.args:
            parts = [self._unfold(a, k) for a in it.args]
            length = parts[0][0] if len(parts) == 1 else ast.Call(ast.Name("min", ast.Load()), [p[0] for p in parts], [])
            return length, ast.Tuple([p[1] for p in parts], ast.Load())
        if isinstance(it, (ast.Name, ast.Attribute)):
            length = ast.Call(ast.Name("len", ast.Load()), [it], [])
            return length, ast.Subscript(it, ast.Name(k, ast.Load()), ast.Load())
        raise ValueError("not an iteration the dialect unfolds")


def _global_kind(value):
    """An array the kernel names without receiving it: a device array (``cuda.to_device``)
    is global memory, captured by reference; a numpy array is frozen into constant memory."""
    from .types import DeviceArray
    if isinstance(value, DeviceArray):
        return "global"
    return "const" if isinstance(value, np.ndarray) else None


def assigned_names(tree: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in tree.args.args}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


class Scope:
    """One function being compiled for one signature: its locals, the kinds of its arrays,
    what is varying, and what its statements can exit with."""

    def __init__(self, source: Source, param_kinds: dict[str, str], device: bool, specialize):
        self.src = source
        self.tree = source.tree
        self.name = source.name
        self.device = device
        self.specialize = specialize  # (DeviceFunction, kinds, node) -> Specialization
        self.params = [a.arg for a in self.tree.args.args]
        self.statics = {p: k.value for p, k in param_kinds.items() if isinstance(k, Static)}
        self.locals = assigned_names(self.tree) - set(self.statics)
        #: A transposed global array runs as np.transpose(a, p): its indices are reordered by p.
        self.perms: dict[str, tuple] = {p: tuple(int(x) for x in k.split(":")[1].split(","))
                                        for p, k in param_kinds.items() if isinstance(k, str) and k.startswith("global:")}
        self.kinds: dict[str, str] = {p: k.split(":")[0] for p, k in param_kinds.items()
                                      if isinstance(k, str) and k.split(":")[0] in ARRAY_KINDS}
        self.varying: set[str] = {p for p, k in param_kinds.items() if k == "varying"}
        self.exits: dict[int, set] = {}  # id(if/for/while node) -> masked exits that leave it
        self.loop_kind: dict[int, str] = {}  # id(loop) -> "uniform" / "varying"
        self.returns_varying = False
        self.returns_value = False
        self._check_constructs()
        self._array_kinds()
        self._fixpoint()

    # -- names -----------------------------------------------------------------------------------

    def static(self, node):
        """``(True, value)`` when ``node`` names something fixed at compile time (a global, a
        closure variable, a module attribute), else ``(False, None)``."""
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return False, None
            if node.id in self.statics:
                return True, self.statics[node.id]
            ns = self.src.namespace
            if node.id in ns:
                return True, self._device(ns[node.id])
            if hasattr(builtins, node.id):
                return True, getattr(builtins, node.id)
            raise self.src.error(node, f"name {node.id!r} is not defined")
        if isinstance(node, ast.Attribute):
            ok, base = self.static(node.value)
            if not ok:
                return False, None
            if isinstance(base, I.Dim3):  # threadIdx.x: per thread, or per launch (blockDim.x)
                return False, None
            if isinstance(base, I.Unsupported):
                raise self.src.error(node, f"cuda.{base.name} is not supported: {base.why}")
            try:
                return True, self._device(getattr(base, node.attr))
            except AttributeError:
                what = repr(base) if not isinstance(base, types.ModuleType) else base.__name__
                raise self.src.error(node, f"{what} has no attribute {node.attr!r} (or it is not supported here)") from None
        return False, None

    @staticmethod
    def _device(value):
        from .kernel import device_function_of
        if type(value).__module__.startswith("numba"):
            return device_function_of(value) or value
        return value

    def array_kind(self, node) -> str | None:
        """"global", "shared", "local" or "const" when ``node`` is an array, else None."""
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return self.kinds.get(node.id)
            ok, value = self.static(node)
            return _global_kind(value) if ok else None
        if isinstance(node, ast.Attribute):
            ok, value = self.static(node)
            return _global_kind(value) if ok else None
        return None

    def _check_constructs(self):
        args = self.tree.args
        if self.tree.args.defaults:
            raise self.src.error(self.tree, "default parameter values are not supported in a kernel")
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.src.error(self.tree, "*args, **kwargs and keyword-only parameters are not supported in a kernel")
        for node in ast.walk(self.tree):
            if node is self.tree:
                continue
            what = UNSUPPORTED.get(type(node))
            if what:
                raise self.src.error(node, f"{what} is not supported in a kernel")
            if isinstance(node, (ast.For, ast.While)) and node.orelse:
                raise self.src.error(node, "a loop's else clause is not supported in a kernel")

    def _array_kinds(self):
        for _ in range(len(self.locals) + 1):
            changed = False
            for node in ast.walk(self.tree):
                if not isinstance(node, ast.Assign):
                    continue
                if isinstance(node.value, ast.Name) and node.value.id in self.perms:
                    raise self.src.error(node, f"a second name for the transposed array {node.value.id} is not supported")
                kind = self._kind_of_value(node.value)
                if kind is None:
                    continue
                for t in node.targets:
                    if not isinstance(t, ast.Name):
                        raise self.src.error(node, "an array can only be given a plain name")
                    old = self.kinds.get(t.id)
                    if old is not None and old != kind:
                        raise self.src.error(node, f"{t.id} names a {old} array and a {kind} array")
                    if old is None:
                        self.kinds[t.id] = kind
                        changed = True
            if not changed:
                break

    def _kind_of_value(self, value):
        if isinstance(value, ast.Call):
            ok, f = self.static(value.func)
            if ok and isinstance(f, I.Intrinsic):
                return {"shared.array": "shared", "local.array": "local", "const.array_like": "const"}.get(f.name)
            return None
        return self.array_kind(value)

    # -- varying ---------------------------------------------------------------------------------

    def is_varying(self, node) -> bool:
        if isinstance(node, ast.Constant):
            return False
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return node.id in self.varying
            ok, value = self.static(node)
            return value is I.laneid
        if isinstance(node, ast.Attribute):
            ok, value = self.static(node)
            if ok:
                return value is I.laneid
            ok, base = self.static(node.value)
            if ok and isinstance(base, I.Dim3):
                return base in (I.threadIdx, I.blockIdx)
            if self.array_kind(node.value) and node.attr in ("shape", "size", "ndim", "dtype"):
                return False
            return self.is_varying(node.value)
        if isinstance(node, ast.Subscript):
            if self.array_kind(node.value):
                return True
            return self.is_varying(node.value) or self.is_varying(node.slice)
        if isinstance(node, ast.Call):
            return self._call_varying(node)
        return any(self.is_varying(c) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr))

    def _call_varying(self, node: ast.Call) -> bool:
        ok, f = self.static(node.func)
        args = list(node.args) + [k.value for k in node.keywords]
        if ok and isinstance(f, I.Intrinsic):
            if f.name in VARYING_INTRINSICS:
                return True
            if f.name in ("gridsize", "shared.array", "local.array", "const.array_like", "syncthreads", "syncwarp",
                          "threadfence", "threadfence_block", "threadfence_system"):
                return False
            return any(self.is_varying(a) for a in args)
        from .kernel import DeviceFunction  # the device functions a kernel calls
        if ok and isinstance(f, DeviceFunction):
            spec = self.specialize(f, self.call_kinds(node), node)
            return spec.returns_varying or any(self.is_varying(a) for a in args)
        return any(self.is_varying(a) for a in args)

    def call_kinds(self, node: ast.Call) -> tuple:
        if node.keywords:
            raise self.src.error(node, "keyword arguments to a device function are not supported")
        return tuple(self._array_arg(a) or self._static_arg(a) or ("varying" if self.is_varying(a) else "value")
                     for a in node.args)

    def _array_arg(self, node):
        kind = self.array_kind(node)
        if kind == "global" and isinstance(node, ast.Name) and node.id in self.perms:
            return "global:" + ",".join(map(str, self.perms[node.id]))
        return kind

    def _static_arg(self, node):
        if isinstance(node, ast.Constant):
            return None
        ok, value = self.static(node) if isinstance(node, (ast.Name, ast.Attribute)) else (False, None)
        if ok and not isinstance(value, (bool, int, float, complex, str, tuple, np.generic, np.ndarray)):
            return Static(value)
        return None

    def has_effects(self, node) -> bool:
        """Whether evaluating ``node`` touches memory or runs a warp instruction (then a
        short-circuit around it must be a real branch, not a select)."""
        for n in ast.walk(node):
            if isinstance(n, ast.Subscript) and self.array_kind(n.value) in ("global", "shared"):
                return True
            if isinstance(n, ast.Call):
                ok, f = self.static(n.func)
                if ok and isinstance(f, I.Intrinsic) and (f.name in EFFECT_INTRINSICS or f.name.startswith("atomic.")):
                    return True
                from .kernel import DeviceFunction
                if ok and isinstance(f, DeviceFunction):
                    return True
        return False

    # -- the fixpoint ----------------------------------------------------------------------------

    def _fixpoint(self):
        for _ in range(4 * len(self.locals) + 4):
            before = set(self.varying)
            self.returns_varying = False
            self._block(self.tree.body, False, False)
            if self.varying == before:
                return
        raise self.src.error(self.tree, "internal error: the divergence analysis did not settle")

    def _mark_pair(self, target, value, ctxv):
        """``a, b = x, y`` marks ``a`` by ``x`` and ``b`` by ``y``, not both by the pair."""
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            for t, v in zip(target.elts, value.elts):
                self._mark_pair(t, v, ctxv)
        else:
            self._mark(target, ctxv or self.is_varying(value))

    def _mark(self, target, varying: bool):
        if isinstance(target, ast.Name):
            if varying and target.id not in self.kinds:
                self.varying.add(target.id)
        elif isinstance(target, ast.Tuple):
            for t in target.elts:
                self._mark(t, varying)

    def _block(self, stmts, ctxv: bool, rel: bool) -> set:
        """Visit a block; ``ctxv``: some threads of the function may be masked off here;
        ``rel``: some threads of the innermost loop's iteration may be. Returns the masked exits."""
        exits = set()
        for s in stmts:
            e, done = self._stmt(s, ctxv, rel)
            exits |= e
            if done:
                break
            if e:
                ctxv = rel = True
        return exits

    def _stmt(self, s, ctxv, rel) -> tuple[set, bool]:
        if isinstance(s, ast.Assign):
            for t in s.targets:
                self._mark_pair(t, s.value, ctxv)
            return set(), False
        if isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self._mark(s.target, ctxv or self.is_varying(s.value))
            return set(), False
        if isinstance(s, ast.AugAssign):
            if isinstance(s.target, ast.Name):
                self._mark(s.target, ctxv or self.is_varying(s.value) or s.target.id in self.varying)
            return set(), False
        if isinstance(s, ast.If):
            cv = self.is_varying(s.test)
            e = self._block(s.body, ctxv or cv, rel or cv) | self._block(s.orelse, ctxv or cv, rel or cv)
            self.exits[id(s)] = e
            return e, False
        if isinstance(s, (ast.For, ast.While)):
            if isinstance(s, ast.For):
                lv = self._for_varying(s)
                self._mark(s.target, lv)
            else:
                lv = self.is_varying(s.test)
            self.loop_kind[id(s)] = "varying" if lv else "uniform"
            e = self._block(s.body, ctxv or lv, False)
            if e:
                e = self._block(s.body, True, False)
            self.exits[id(s)] = e
            return e & {"ret"}, False
        if isinstance(s, ast.Break):
            return ({"brk"} if rel else set()), True
        if isinstance(s, ast.Continue):
            return ({"cnt"} if rel else set()), True
        if isinstance(s, ast.Return):
            if s.value is not None:
                self.returns_value = True
                if ctxv or self.is_varying(s.value):
                    self.returns_varying = True
            elif ctxv:
                self.returns_varying = True
            return ({"ret"} if ctxv else set()), True
        return set(), False

    def _for_varying(self, s: ast.For) -> bool:
        if isinstance(s.iter, ast.Call):
            ok, f = self.static(s.iter.func)
            if ok and f is range:
                return any(self.is_varying(a) for a in s.iter.args)
        if self.is_varying(s.iter):
            raise self.src.error(s, "a loop over a per-thread sequence is not supported; loop over range(...)")
        return False
