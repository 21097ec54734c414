"""Types where values meet, as numba gives them: the mask form's casts at merge points.

numba types a function before it runs, in SSA form: each assignment makes a new version of
a variable with the type of its value (``x = a[i]`` float32, then ``x = x * 0.5`` float64:
two versions, as numpy does too), and where control flow joins (after an ``if``, at the top
of a loop, after a loop, a ``return`` of a device function, the two sides of ``a if c else
b``) the versions that meet are *unified*: float32 with float64 is float64 for every path.
The mask form runs numpy, whose values keep the type of whatever ran. A ``for`` loop no
lane enters would leave ``x`` float32 where numba (and another pass of blocks, in which
some lane entered) has float64; a uniform ``if`` not taken likewise.

``Types`` follows the mask form as the compiler writes it (a varying ``if`` runs both
sides, one after the other; an assignment under a mask merges with the other threads'
values through ``numpy.where``), with each parameter's dtype from the launch. It keeps two
types per variable: numba's, and the dtype of the array that holds the variable for all
threads, which a merge under a mask can make wider (a float32 value assigned over a float64
one for some threads). The compiler then casts where numba unifies (``_cast``: storage
widened to hold the joined type) and converts a read where storage is wider than numba's
type there (``_as``: exact for the threads reading). Straight-line code needs neither.

The type of an expression is not written down rule by rule: the operators and functions
the mask form calls are called on small numpy arrays of the operands' dtypes, so the
inference answers what the compiled code does; integer operators are numba's own
(``arithmetic``: ``int32 + int32`` is int64), and ``plain_ops`` records where numpy's
operator gives the same, so that the compiler keeps it there. Where it cannot tell (a value
it does not model), it casts nothing. ``tests/cuda/test_cuda_inference.py`` holds it against numba's
own compiler (``numba.njit``) on random programs.
"""

from __future__ import annotations

import ast
import math
import operator

import numpy as np

from . import arithmetic as ar
from . import intrinsics as I
from . import runtime as rt
from .syntax import name_counts, region_locals
from .types import constant as types_constant, dtype as to_dtype, is_dtype_like


class _Marker:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


UNKNOWN = _Marker("UNKNOWN")  # a value the inference does not model (absorbs everything it meets)
MIXED = _Marker("MIXED")  # storage that differs between the ways into a point (a uniform while's test)

#: dtypes the engine gives the thread and block indices and the warp operations (simtdocs.model)
INDEX = np.dtype(np.int32)
#: the operators as the compiled form computes them: numba's integer typing (``arithmetic``)
BINOPS = {op: f for op, (_, f, _) in ar.BINARY.items()}
UNARY = {op: f for op, (_, f, _) in ar.UNARY.items()}
WEAK = (int, float, bool, complex)  # Python scalars: numpy gives way to the other operand's type


class Shape:
    """``a.shape``: int64s, as many as ``a`` has axes (which the inference does not track)."""


def _probe(t):
    """A value of type ``t`` for numpy to compute with: two ones of the dtype, or the Python scalar."""
    if isinstance(t, np.dtype):
        return np.ones(2, t)
    return t(1)


def _type_of(value):
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype
    if isinstance(value, tuple):
        return tuple(_type_of(v) for v in value)
    if isinstance(value, WEAK):
        return type(value)
    return UNKNOWN


def same(a, b) -> bool:
    """Whether two types are one (a dtype never equals a Python type here, though numpy says
    ``np.dtype("int64") == int``)."""
    return type(a) is type(b) and a == b


def apply(f, *types):
    """The type of ``f(*values)`` for values of ``types``, by calling ``f`` on probes."""
    if any(t is UNKNOWN or isinstance(t, (tuple, Shape)) for t in types):
        return UNKNOWN
    if any(t is None for t in types):
        return None
    try:
        with np.errstate(all="ignore"):
            return _type_of(f(*(_probe(t) for t in types)))
    except Exception:  # noqa: BLE001 — an operation numpy refuses: the run will say so, not the inference
        return UNKNOWN


def unify(a, b):
    """The type a variable holding values of types ``a`` and ``b`` has (None: nothing yet)."""
    if a is None:
        return b
    if b is None or same(a, b):
        return a
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    if isinstance(a, tuple) or isinstance(b, tuple) or isinstance(a, Shape) or isinstance(b, Shape):
        return UNKNOWN
    # numba's Integer.unify is numpy's promotion: int32 with uint32 is int64, int64 with
    # uint64 float64 (numba/core/types/scalars.py)
    return np.result_type(_strong(a, b), _strong(b, a))


def _strong(t, other):
    """A Python scalar type as a dtype: the other side's when of the same kind (a Python
    int with an int32 stays int32), else numba's default (int64, float64)."""
    if isinstance(t, np.dtype):
        return t
    default = np.dtype({int: np.int64, float: np.float64, bool: np.bool_, complex: np.complex128}[t])
    if isinstance(other, np.dtype) and (other.kind in "iu" if t is int else other.kind == default.kind):
        return other
    return default


class GiveUp(Exception):
    """The inference did not settle: the compiler casts nothing (numpy's types, as before)."""


class Ctx:
    """Where a statement runs in the mask form: under a mask (an assignment merges with the
    other lanes' values, ``numpy.where``) or not; ``rel``: a ``break`` is masked; ``region``
    and ``homes``: the compiler's merge-free variables (``Compiler.homes``)."""

    def __init__(self, masked=False, rel=False, region=None, homes=None):
        self.masked, self.rel, self.region, self.homes = masked, rel, region, homes or {}

    def enter(self, stmts, types: "Types", rel=True):
        """A masked region of its own (a varying ``if``'s side, a per-thread loop's body, what
        follows an exit some lanes took), with its merge-free variables."""
        region = object()
        homes = dict(self.homes)
        for name in types.region_locals(stmts):
            homes[name] = region
        return Ctx(True, rel, region, homes)


class Frame:
    """A loop being followed: the types at its ``break``s and ``continue``s."""

    def __init__(self):
        self.breaks: list[tuple] = []  # (env, Python-level: True for an unmasked break)
        self.continues: list[tuple] = []


class Types:
    """Where a function's variables need a cast, for its parameters' types.

    A variable has two types at each point: the dtype of the array that holds it for every
    thread (its *storage*: an assignment under a mask merges with the other threads' values
    and numpy widens to hold both) and numba's type for the value of the threads running
    there (its *SSA type*). Storage always holds the SSA type exactly; where they differ, a
    read converts (``read_casts``), and where control flow joins, storage is widened to hold
    the joined type (the ``_casts`` tables).

    ``if_casts``, ``loop_casts``, ``exit_casts``: id(node) -> {variable: dtype}, the storage
    casts after a uniform ``if``, at the top of every iteration of a loop, and after a loop;
    ``read_casts``: id(Name node) -> the SSA type that read converts to; ``index_types``:
    id(per-thread range loop) -> its counter's dtype; ``ifexp_casts``: id(uniform ``a if c
    else b``) -> the dtypes its two sides are cast to (None: as it is); ``call_types``:
    id(device call) -> its arguments' types; ``returns``: a device function's return type,
    ``cast_returns``: whether its returns need a cast to it. ``plain_ops``: id(BinOp, UnaryOp,
    single Compare or AugAssign) -> whether numpy's own operator gives numba's type and value
    for every type its operands had (``arithmetic.plain``); the compiler calls numba's
    arithmetic (``_add`` …) where not.
    """

    def __init__(self, scope, param_types: dict):
        self.sc = scope
        #: the source language's arithmetic (numba's for the dialect; ``arithmetic.Rules``)
        self.rules = getattr(scope.src, "rules", ar.NUMBA)
        self.uses = name_counts(scope.tree)
        self._regions: dict[tuple, list] = {}
        self._counts: dict[int, dict] = {}
        self.if_casts: dict[int, dict] = {}
        self.loop_casts: dict[int, dict] = {}
        self.exit_casts: dict[int, dict] = {}
        self.read_casts: dict[int, np.dtype] = {}
        self.index_types: dict[int, np.dtype] = {}
        self.ifexp_casts: dict[int, tuple] = {}
        self.call_types: dict[int, tuple] = {}
        self.plain_ops: dict[int, bool] = {}
        self.returned: dict = {}
        self.frames: list[Frame] = []
        known = {p: UNKNOWN if param_types.get(p) is None else param_types[p] for p in scope.params}
        self.arrays: dict[str, object] = {p: t for p, t in known.items() if p in scope.kinds}
        env = {p: (t, t) for p, t in known.items() if p not in scope.kinds and p not in scope.statics}
        self._block(scope.tree.body, env, Ctx())
        self.returns = None
        for t in self.returned.values():
            self.returns = unify(self.returns, t)
        self.cast_returns = isinstance(self.returns, np.dtype) and len(self.returned) > 1

    def region_locals(self, stmts) -> list[str]:
        """``syntax.region_locals``, remembered: a loop's body is followed until its types settle."""
        key = tuple(map(id, stmts))
        out = self._regions.get(key)
        if out is None:
            out = self._regions[key] = region_locals(stmts, self.uses, self.sc.kinds)
        return out

    def region_counts(self, node) -> dict:
        """``syntax.name_counts`` of a loop, remembered likewise."""
        out = self._counts.get(id(node))
        if out is None:
            out = self._counts[id(node)] = name_counts(node)
        return out

    # -- statements ------------------------------------------------------------------------------
    # An env maps a variable to (storage, SSA type); a block returns (env, falls): the env at
    # its end (None when Python leaves it: an unmasked return, break or continue) and whether
    # numba's control flow falls off its end (not after a return, break or continue, masked or not).

    def _block(self, stmts, env, ctx):
        for k, s in enumerate(stmts):
            env, falls = self._stmt(s, env, ctx)
            if env is None or not falls:
                return env, False
            exits = self.sc.exits.get(id(s), set()) if isinstance(s, (ast.If, ast.For, ast.While)) else set()
            if isinstance(s, (ast.For, ast.While)):
                exits = exits & {"ret"}
            if exits:  # some lanes left: what follows runs under a mask of its own (Compiler.shrink)
                ctx = ctx.enter(stmts[k + 1:], self)
        return env, True

    def _stmt(self, s, env, ctx):
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            if s.value is None:
                return env, True
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if self.sc._kind_of_value(s.value) is not None:
                for t in targets:
                    if isinstance(t, ast.Name):
                        self.arrays[t.id] = self.array_value(s.value)
                return env, True
            value = self.type(s.value, env)
            env = dict(env)
            for t in targets:
                self._assign(t, value, s.value, env, ctx)
            return env, True
        if isinstance(s, ast.AugAssign):
            # a[i] += v: the sum has numba's type, and the store casts it to a's dtype
            value = self._binop(s.op, self.type(s.target, env), self.type(s.value, env), s)
            if isinstance(s.target, ast.Name):
                env = dict(env)
                self._assign(s.target, value, None, env, ctx)
            return env, True
        if isinstance(s, (ast.Expr, ast.Assert)):
            self.type(s.value if isinstance(s, ast.Expr) else s.test, env)
            return env, True
        if isinstance(s, ast.If):
            self.type(s.test, env)
            if self.sc.is_varying(s.test):
                return self._varying_if(s, env, ctx), True
            ends = [self._block(s.body, env, ctx), self._block(s.orelse, env, ctx)]
            merged, casts = self._merge([e for e, _ in ends], [e for e, falls in ends if falls])
            self.if_casts[id(s)] = casts
            return merged, True
        if isinstance(s, (ast.For, ast.While)):
            return self._loop(s, env, ctx), True
        if isinstance(s, ast.Return):
            if s.value is not None:
                t = self.type(s.value, env)
                if t is not None:
                    self.returned[repr(t)] = t
            return (env if ctx.masked else None), False
        if isinstance(s, (ast.Break, ast.Continue)):
            if self.frames:
                frame = self.frames[-1]
                (frame.breaks if isinstance(s, ast.Break) else frame.continues).append((env, not ctx.rel))
            return (None if self.frames and not ctx.rel else env), False
        return env, True

    def _varying_if(self, s, env, ctx):
        """Both sides run one after the other under their masks: storage flows through both;
        the SSA types are the pre-``if`` ones on entry to each side and join after it."""
        body, body_falls = self._block(s.body, env, ctx.enter(s.body, self))
        body = env if body is None else body  # (a masked side never leaves at the Python level)
        start = {name: (S, env[name][1] if name in env else None) for name, (S, _) in body.items()}
        other, other_falls = self._block(s.orelse, start, ctx.enter(s.orelse, self)) if s.orelse else (start, True)
        joined = [e for e, falls in ((body, body_falls), (other, other_falls)) if falls] or [body, other]
        out = {}
        for name, (S, _) in other.items():
            T = None
            for e in joined:
                T = unify(T, e.get(name, (None, None))[1])
            out[name] = (S, T)
        return out

    def _loop(self, s, pre, ctx):
        varying = self.sc.loop_kind.get(id(s)) == "varying"
        exits = self.sc.exits.get(id(s), set())
        if varying:
            body_ctx = ctx.enter(s.body, self, rel=False)
        elif exits:
            body_ctx = Ctx(True, False, object(), ctx.homes)
        else:
            body_ctx = Ctx(ctx.masked, False, ctx.region, ctx.homes)
        bounds = self._range_args(s, pre)
        head = pre
        for _ in range(4 * len(self.sc.locals) + 8):
            frame = Frame()
            self.frames.append(frame)
            top = self._loop_target(s, head, body_ctx, varying, bounds)
            end, falls = self._block(s.body, top, body_ctx)
            self.frames.pop()
            python_continues = [e for e, python in frame.continues if python]
            new, casts = self._merge([pre, end] + python_continues,
                                     [pre] + ([end] if falls else []) + [e for e, _ in frame.continues])
            if _key(new) == _key(head):
                break
            head = new
        else:
            raise GiveUp(f"the types of the loop at line {s.lineno} did not settle")
        if isinstance(s, ast.For) and not varying:  # Python binds the target before the casts at the top
            casts = {k: v for k, v in casts.items() if k not in _names(s.target)}
        self.loop_casts[id(s)] = casts
        if isinstance(s, ast.While) and not varying:
            # ``while test:`` tests before the casts at the top: its reads of a variable whose
            # storage differs between the ways in convert to the SSA type
            self.type(s.test, {k: (MIXED, T) if k in casts else (S, T) for k, (S, T) in head.items()})
        python_breaks = [e for e, python in frame.breaks if python]
        # a per-thread loop leaves from its top, after the casts; a uniform one also after its body
        leaving = [head] if varying else [pre, head, end] + python_continues
        exit_env, exit_casts = self._merge(leaving + python_breaks, [head] + [e for e, _ in frame.breaks])
        self.exit_casts[id(s)] = exit_casts
        return exit_env

    def _range_args(self, s, env):
        """The types of a ``for … in range(…)``'s arguments, read once before the loop."""
        it = s.iter if isinstance(s, ast.For) else None
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            return [self.type(a, env) for a in it.args]
        if it is not None:
            self.type(it, env)
        return None

    def _loop_target(self, s, env, ctx, varying, args):
        """The types at the top of an iteration: the loop's variable assigned (a uniform one is
        bound by Python; one that is a per-thread value elsewhere is merged under the body's mask)."""
        if not isinstance(s, ast.For):
            if varying:
                self.type(s.test, env)  # tested at the top, after the casts
            return env
        env = dict(env)
        bind = ctx if isinstance(s.target, ast.Name) and s.target.id in self.sc.varying else Ctx()
        if args is None:
            self._assign(s.target, UNKNOWN, None, env, bind)
            return env
        if not varying:
            self._assign(s.target, np.dtype(np.int64), None, env, bind)  # runtime.urange
            return env
        start = np.dtype(np.int64) if len(args) == 1 else args[0]
        step = args[2] if len(args) == 3 else np.dtype(np.int64)
        index = unify(start, apply(operator.add, start, step))  # the counter's ``k + step``: numpy's
        if isinstance(index, np.dtype) and not same(index, start):
            self.index_types[id(s)] = index  # range(int32, int64): numba's counter is int64 from the start
        name = s.target.id if isinstance(s.target, ast.Name) else None
        if name is not None:
            only_loop = self.uses.get(name, 0) == self.region_counts(s).get(name, 0)
            self._assign(s.target, index, None, env, Ctx() if only_loop else Ctx(True, False, object(), {}))
        return env

    def _merge(self, storage_envs, joining_envs):
        """Where control flow joins: the SSA types of ``joining_envs`` (the ways numba's
        control flow arrives) unify; the storage must hold that and every storage of
        ``storage_envs`` (the ways the mask form's code arrives). Returns the joined env and
        the casts that widen storage to it (for a variable bound on every way in)."""
        storage_envs = [e for e in storage_envs if e is not None]
        joining_envs = [e for e in joining_envs if e is not None] or storage_envs
        if not storage_envs:
            return None, {}
        merged, casts = {}, {}
        for name in set().union(*storage_envs):
            T = None
            for e in joining_envs:
                T = unify(T, e.get(name, (None, None))[1])
            storages = [e[name][0] for e in storage_envs if name in e]
            S = T
            for x in storages:
                S = unify(S, x)
            merged[name] = (S, T)
            if len(storages) == len(storage_envs) and isinstance(S, np.dtype) and any(not same(x, S) for x in storages):
                casts[name] = S
        return merged, casts

    def _assign(self, target, t, value, env, ctx):
        if isinstance(target, ast.Name):
            name = target.id
            if name in self.sc.kinds or t is None:
                return
            old = env.get(name, (None, None))[0]
            merges = ctx.masked and ctx.homes.get(name) is not ctx.region
            env[name] = (_where(t, old) if merges and old is not None else t, t)
        elif isinstance(target, ast.Tuple):
            n = len(target.elts)
            if isinstance(value, ast.Tuple) and len(value.elts) == n:
                parts = [self.type(v, env) for v in value.elts]
            elif isinstance(t, tuple) and len(t) == n:
                parts = list(t)
            elif isinstance(t, Shape):
                parts = [np.dtype(np.int64)] * n
            else:
                parts = [UNKNOWN if t is not None else None] * n
            for e, p in zip(target.elts, parts):
                self._assign(e, p, None, env, ctx)

    # -- expressions -----------------------------------------------------------------------------

    def type(self, node, env, bare=False):
        """The type of expression ``node`` with variables of types ``env``, as the mask form
        computes it: a dtype, a Python scalar type (a weak scalar, such as ``blockDim.x``), a
        tuple of types, ``UNKNOWN``, or None (a variable not assigned yet)."""
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                return np.dtype(np.bool_)
            if isinstance(v, int):
                return int if bare else np.dtype(np.int64)  # i64(...) unless an index
            if isinstance(v, float):
                return np.dtype(np.float64)
            return complex if isinstance(v, complex) else UNKNOWN
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            return self.type(node.operand, env, bare)
        if isinstance(node, ast.Name):
            if node.id in self.sc.locals:
                return self._read(node, env)
            return self._static(node)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Subscript):
            index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            for i in index:
                self.type(i, env, True)
            if self.sc.array_kind(node.value):
                return self.element(node.value)
            base = self.type(node.value, env)
            if isinstance(base, Shape):
                return np.dtype(np.int64)
            if isinstance(base, tuple) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int) \
                    and -len(base) <= node.slice.value < len(base):
                return base[node.slice.value]
            return UNKNOWN if base is not None else None
        if isinstance(node, ast.Tuple):
            parts = tuple(self.type(e, env) for e in node.elts)
            return None if any(p is None for p in parts) else parts
        if isinstance(node, ast.BinOp):
            return self._binop(node.op, self.type(node.left, env), self.type(node.right, env), node)
        if isinstance(node, ast.UnaryOp):
            t = self.type(node.operand, env)
            if isinstance(node.op, ast.Not):
                return np.dtype(np.bool_)
            self._plain(node, node.op, t)
            return apply(self.rules.unary[type(node.op)], t)
        if isinstance(node, ast.Compare):
            sides = [self.type(x, env, bare=isinstance(x, ast.Constant)) for x in [node.left] + node.comparators]
            if len(node.ops) == 1 and type(node.ops[0]) in BINOPS:
                self._plain(node, node.ops[0], *sides)
            return np.dtype(np.bool_)
        if isinstance(node, ast.BoolOp):
            parts = [self.type(v, env) for v in node.values]
            if self.sc.is_varying(node):
                return np.dtype(np.bool_)  # compiled to & and | of the operands' truth
            return parts[0] if all(same(p, parts[0]) for p in parts) else UNKNOWN
        if isinstance(node, ast.IfExp):
            return self._ifexp(node, env)
        if isinstance(node, ast.Call):
            return self._call(node, env)
        return UNKNOWN

    def _read(self, node, env):
        """A variable's SSA type; where its storage differs, the read converts to it."""
        S, T = env.get(node.id, (None, None))
        if isinstance(T, np.dtype) and not same(S, T) and S is not UNKNOWN:
            self.read_casts[id(node)] = T
        else:
            self.read_casts.pop(id(node), None)
        return T

    def _ifexp(self, node, env):
        self.type(node.test, env)
        a, b = self.type(node.body, env), self.type(node.orelse, env)
        if self.sc.is_varying(node.test):
            return _where(a, b)  # a select, or both sides under masks and a merge: numpy's where
        u = unify(a, b)  # a uniform choice: the compiler casts the side it takes to the unification
        cast = isinstance(u, np.dtype) and not same(a, b)
        self.ifexp_casts[id(node)] = (u if cast and not same(a, u) else None, u if cast and not same(b, u) else None)
        return u

    def _binop(self, op, a, b, node=None):
        if node is not None:
            self._plain(node, op, a, b)
        return apply(self.rules.binops[type(op)], a, b)

    def _plain(self, node, op, *types):
        """Note whether numpy's operator gives numba's answer for these operand types (every
        visit must agree: a loop's body is followed until its types settle)."""
        self.plain_ops[id(node)] = self.plain_ops.get(id(node), True) and self.rules.plain(op, *types)

    def _static(self, node):
        ok, value = self.sc.static(node)
        if value is I.laneid:
            return INDEX
        if value is I.warpsize:
            return int  # compiled as the literal 32
        if isinstance(value, tuple):
            return tuple(_type_of(v) for v in value)
        if isinstance(value, (bool, int, float, np.generic)):
            return _type_of(types_constant(value))  # a global int is frozen as numba freezes it: int64
        return UNKNOWN

    def _attribute(self, node):
        ok, value = self.sc.static(node)
        if ok:
            return self._static(node)
        base_ok, base = self.sc.static(node.value)
        if base_ok and isinstance(base, I.Dim3):
            return INDEX if base in (I.threadIdx, I.blockIdx) else int  # blockDim, gridDim: Python ints
        if self.sc.array_kind(node.value):
            return {"shape": Shape(), "size": np.dtype(np.int64), "ndim": np.dtype(np.int64)}.get(node.attr, UNKNOWN)
        return UNKNOWN

    def element(self, array):
        """The element dtype of an array expression (UNKNOWN when not known)."""
        if isinstance(array, ast.Name) and array.id in self.sc.locals:
            t = self.arrays.get(array.id)
            return t if isinstance(t, np.dtype) else UNKNOWN
        ok, value = self.sc.static(array)
        return value.dtype if ok and isinstance(value, np.ndarray) else UNKNOWN

    def array_value(self, node):
        """The element dtype of ``cuda.shared.array``/``local.array``/``const.array_like`` or an array name."""
        if not isinstance(node, ast.Call):
            return self.element(node)
        ok, f = self.sc.static(node.func)
        if f.name == "const.array_like":
            return self.element(node.args[0]) if node.args else UNKNOWN
        dt = node.args[1] if len(node.args) > 1 else {k.arg: k.value for k in node.keywords}.get("dtype")
        if dt is None:
            return UNKNOWN
        if isinstance(dt, ast.Attribute) and dt.attr == "dtype" and self.sc.array_kind(dt.value):
            return self.element(dt.value)
        ok, value = self.sc.static(dt)
        try:
            return to_dtype(value) if ok else UNKNOWN
        except TypeError:
            return UNKNOWN

    def _call(self, node: ast.Call, env):
        ok, f = self.sc.static(node.func)
        from .kernel import DeviceFunction
        if ok and isinstance(f, DeviceFunction):
            return self._device_return(f, node, env)
        args = [self.element(a) if self.sc.array_kind(a) else self.type(a, env) for a in node.args]
        for k in node.keywords:
            self.type(k.value, env)
        if not ok:
            return UNKNOWN
        if isinstance(f, I.Intrinsic):
            return self._intrinsic(f.name, node, args)
        if node.keywords:
            return UNKNOWN
        if f is len:
            return np.dtype(np.int64)
        helper = BUILTINS.get(f) if _hashable(f) else None
        if helper is not None:
            return apply(helper, *args)
        if getattr(f, "__module__", None) == "math" or (callable(f) and getattr(math, getattr(f, "__name__", ""), None) is f):
            target = rt.MATH.get(f.__name__)
            return apply(target, *args) if target is not None else UNKNOWN
        if is_dtype_like(f):
            return to_dtype(f)
        if isinstance(f, np.ufunc) or getattr(f, "__module__", "").startswith("numpy"):
            return apply(f, *args)
        return UNKNOWN

    def _intrinsic(self, name, node, args):
        pos = node.args
        if name in ("grid", "gridsize"):
            n = pos[0].value if pos and isinstance(pos[0], ast.Constant) else 1
            return np.dtype(np.int64) if n == 1 else (np.dtype(np.int64),) * n
        if name in ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"):
            return args[1] if len(args) == 3 else UNKNOWN
        if name in ("ballot_sync", "activemask", "lanemask_lt"):
            return np.dtype(np.uint32)
        if name in ("any_sync", "all_sync"):
            return np.dtype(np.bool_)
        if name in ("syncthreads_count", "syncthreads_and", "syncthreads_or"):
            return np.dtype(np.int32)  # runtime.block_reduce
        if name in ("popc", "brev", "clz", "ffs", "fma", "cbrt"):
            return apply(getattr(rt, name), *args)
        if name in ("selp", "select") and len(args) == 3:
            return _where(args[1], args[2])
        if name.startswith("atomic.") and args:
            return args[0]  # the old value, of the array's type
        if name == "bitcast" and len(pos) >= 3:
            ok, d = self.sc.static(pos[0])
            ok2, src = self.sc.static(pos[1])
            sizes = [a if isinstance(a, tuple) else (a,) for a in args[2:]]
            flat = [t for group in sizes for t in group]
            if ok and ok2 and is_dtype_like(d) and is_dtype_like(src):
                dt = to_dtype(d)
                m = len(flat) * to_dtype(src).itemsize // dt.itemsize
                return dt if m == 1 else (dt,) * m
            return UNKNOWN
        if name == "vload" and len(pos) == 3 and isinstance(pos[2], ast.Constant) and args:
            return (args[0],) * int(pos[2].value)  # width values of the array's type
        return UNKNOWN

    # -- device functions ------------------------------------------------------------------------

    def _device_return(self, f, node, env):
        """The type a device call returns, its callee typed with these arguments' types."""
        types = []
        for a in node.args:
            t = self.element(a) if self.sc.array_kind(a) else self.type(a, env)
            types.append(t if isinstance(t, np.dtype) or any(t is w for w in WEAK) else None)
        self.call_types[id(node)] = types = tuple(types)
        spec = self.sc.specialize(f, self.sc.call_kinds(node), node, types)
        return spec.return_type if spec.return_type is not None else UNKNOWN


BUILTINS = {int: rt.int_, float: rt.float_, bool: rt.bool_, min: rt.min_, max: rt.max_, round: rt.round_,
            abs: ar.abs_, complex: rt.complex_, pow: ar.pow_}


def _where(a, b):
    """The type of ``numpy.where(mask, a, b)``: a masked assignment's merge, a select."""
    return apply(lambda x, y: np.where(np.ones(2, bool), x, y), a, b)


def _names(target) -> set:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _key(env) -> dict:
    return {k: repr(v) for k, v in env.items()}


def _hashable(f) -> bool:
    try:
        hash(f)
        return True
    except TypeError:
        return False
