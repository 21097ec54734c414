"""Expressions in the mask form: values, loads, conditions, calls and intrinsics.

``Expressions`` is the half of the compiler that turns one reader expression into one
mask-form expression under the current mask ``self.M``: ``a[i]`` into
``blk.load(a, i, mask=M)``, ``cuda.threadIdx.x`` into ``blk.tx``, ``cuda.shfl_down_sync(…)``
into ``blk.shfl_down(…)``, a literal into ``i64(…)``/``f64(…)`` (numba's types). A short-circuit
or a conditional expression whose other side reads memory or calls emits its branch
before the statement (``self.emit``). The statements are ``compiler.Compiler``'s.
"""

from __future__ import annotations

import ast
import copy
import math

import numpy as np

from . import arithmetic as ar
from . import intrinsics as I
from . import runtime as rt
from .analysis import ARRAY_KINDS, Static
from .syntax import E, S, at
from .types import dtype as to_dtype, is_dtype_like


class Expressions:
    """The expression half of ``Compiler`` (a mixin: it uses the compiler's state)."""

    def ex(self, node, bare: bool = False):
        """The mask form of expression ``node`` under the current mask; branches it needs
        (a short-circuit around a load) are emitted before the statement."""
        out = self._ex(node, bare)
        if not hasattr(out, "lineno"):
            at(out, node)
        return ast.fix_missing_locations(out)

    def _ex(self, node, bare):
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool) or v is None or isinstance(v, str):
                return ast.Constant(v)
            if isinstance(v, int):
                return ast.Constant(v) if bare else at(E(f"i64({v})"), node)
            if isinstance(v, float):
                return at(E(f"f64({v!r})"), node)
            if isinstance(v, complex):
                return ast.Constant(v)
            raise self.err(node, f"the constant {v!r} is not supported in a kernel")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
                and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
            return self._ex(at(ast.Constant(-node.operand.value), node), bare)
        if isinstance(node, ast.Name):
            if node.id in self.sc.locals:
                # numba's type for this read, where the array holding the variable is wider (inference.py)
                dtype = self.types.read_casts.get(id(node)) if self.types is not None else None
                return ast.Name(node.id) if dtype is None else E(f"_as(X, {dtype.name!r})", X=node.id)
            return self.static_value(node)
        if isinstance(node, ast.Attribute):
            ok, value = self.sc.static(node)
            if ok:
                return self.static_value(node, value)
            base_ok, base = self.sc.static(node.value)
            if base_ok and isinstance(base, I.Dim3):
                return self.dim3(base, node)
            kind = self.sc.array_kind(node.value)
            if kind:
                if node.attr == "shape":
                    perm = self._perm(node.value)
                    if perm:
                        inv = [perm.index(k) for k in range(len(perm))]
                        return E(f"_shape(A, {tuple(inv)!r})", A=copy.deepcopy(node.value))
                    return E("_shape(A)", A=copy.deepcopy(node.value))
                if node.attr in ("size", "ndim"):
                    return E(f"i64(A.{node.attr})", A=copy.deepcopy(node.value))
                if node.attr == "dtype":
                    return ast.Attribute(copy.deepcopy(node.value), "dtype")
                raise self.err(node, f"the array attribute .{node.attr} is not supported in a kernel")
            return ast.Attribute(self.ex(node.value), node.attr)
        if isinstance(node, ast.Subscript):
            kind = self.sc.array_kind(node.value)
            if kind:
                return self.load(node.value, self.index(node.slice, node.value), kind, node)
            return ast.Subscript(self.ex(node.value), self.ex(node.slice, bare=True))
        if isinstance(node, ast.Tuple):
            return ast.Tuple([self.ex(e) for e in node.elts])
        if isinstance(node, ast.BinOp):
            return self.arith(node, node.op, self.ex(node.left), self.ex(node.right))
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                if self.sc.is_varying(node.operand):
                    return E("_not(X)", X=self.ex(node.operand))
                return ast.UnaryOp(ast.Not(), self.ex(node.operand))
            return self.arith(node, node.op, self.ex(node.operand))
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.BoolOp):
            return self.boolop(node)
        if isinstance(node, ast.IfExp):
            return self.ifexp(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise self.err(node, f"{type(node).__name__} is not supported in a kernel")

    def arith(self, node, op, *operands):
        """``a op b`` (or ``op a``) with numba's types: numpy's operator where the inference
        found that it gives numba's answer (float arithmetic, int64 with int64: the form a
        reader writes by hand), else numba's (``_add(a, b)``: ``int32 + int32`` is int64;
        ``arithmetic``). Without the inference (types that did not settle), numba's."""
        if self.types is not None and self.types.plain_ops.get(id(node), False):
            if len(operands) == 1:
                return ast.UnaryOp(op, operands[0])
            if isinstance(op, ast.cmpop):
                return ast.Compare(operands[0], [op], [operands[1]])
            return ast.BinOp(operands[0], op, operands[1])
        name = (ar.UNARY if len(operands) == 1 else ar.BINARY)[type(op)][0]
        return ast.Call(ast.Name(name), list(operands), [])

    def static_value(self, node, value=None):
        if value is None:
            ok, value = self.sc.static(node)
        if value is I.laneid:
            return E("B.lane", B=self.blk)
        if value is I.warpsize:
            return ast.Constant(32)
        if isinstance(node, ast.Attribute) and isinstance(value, (int, float)) and not isinstance(value, bool):
            return E(f"{'i64' if isinstance(value, int) else 'f64'}(X)", X=copy.deepcopy(node))  # math.pi: float64
        if isinstance(value, (bool, int, float, complex, np.generic, np.ndarray, str, tuple)) or value is None:
            return copy.deepcopy(node) if isinstance(node, (ast.Name, ast.Attribute)) else node
        if is_dtype_like(value) or isinstance(value, np.dtype):
            return copy.deepcopy(node)
        raise self.err(node, f"{ast.unparse(node)} ({type(value).__name__}) cannot be used as a value in a kernel")

    def dim3(self, base: I.Dim3, node: ast.Attribute):
        if node.attr not in ("x", "y", "z"):
            raise self.err(node, f"cuda.{base.name} has .x, .y and .z, not .{node.attr}")
        attr = {"threadIdx": "t", "blockIdx": "b", "blockDim": "bd", "gridDim": "gd"}[base.name] + node.attr
        return ast.Attribute(ast.Name(self.blk), attr)

    def _perm(self, base):
        return self.sc.perms.get(base.id) if isinstance(base, ast.Name) else None

    def index(self, sl, base=None):
        """The index of ``base[sl]``, its axes reordered when ``base`` is a transposed array."""
        out = self._index(sl)
        perm = None if base is None else self._perm(base)
        if perm:
            if isinstance(out, ast.Tuple) and len(out.elts) == len(perm):
                out = at(ast.Tuple([out.elts[k] for k in perm]), sl)
            else:
                out = E(f"_permute(I, {perm!r})", I=out)
        return self.checked(out, sl, "index")

    def _index(self, sl):
        if isinstance(sl, ast.Slice) or (isinstance(sl, ast.Tuple) and any(isinstance(e, ast.Slice) for e in sl.elts)):
            raise self.err(sl, "slicing (a[i:j]) is not supported in a kernel")
        if isinstance(sl, ast.Tuple):
            return at(ast.Tuple([self.ex(e, bare=True) for e in sl.elts]), sl)
        return self.ex(sl, bare=True)

    def load(self, base, index, kind, node):
        if kind in ("global", "shared"):
            # the engine hands a kernel an int8 or int16 as C promotes it (an int32); numba keeps
            # the array's type (an int8, widened only by arithmetic)
            load = self.blk_call("load", [copy.deepcopy(base), index], node)
            if self.types is None:
                return E("_narrow(V, A)", V=load, A=copy.deepcopy(base))
            dtype = self.types.element(base)
            if isinstance(dtype, np.dtype) and dtype.kind in "iu" and dtype.itemsize < 4:
                return E(f"_as(V, {dtype.name!r})", V=load)
            return load
        if kind == "local":
            return E("_local_load(A, I, M)", A=copy.deepcopy(base), I=index, M=copy.deepcopy(self.M))
        return E("_const_load(A, I, M)", A=copy.deepcopy(base), I=index, M=copy.deepcopy(self.M))

    def compare(self, node: ast.Compare):
        def side(x):
            return self.ex(x, bare=isinstance(x, ast.Constant) and isinstance(x.value, int))
        if len(node.ops) == 1:
            if isinstance(node.ops[0], (ast.In, ast.NotIn, ast.Is, ast.IsNot)) and self.sc.is_varying(node):
                raise self.err(node, "in / is on per-thread values is not supported in a kernel")
            if type(node.ops[0]) in ar.BINARY:
                return self.arith(node, node.ops[0], side(node.left), side(node.comparators[0]))
            return ast.Compare(side(node.left), node.ops, [side(node.comparators[0])])
        parts = []
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            parts.append(at(ast.Compare(left, [op], [right]), node))
            left = right
        return self.boolop(at(ast.BoolOp(ast.And(), parts), node))

    def _bool(self, x, node):
        """A compiled operand as a bool per thread."""
        if isinstance(node, (ast.Compare, ast.BoolOp)) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
            return x
        return E("_truth(X)", X=x)

    def boolop(self, node: ast.BoolOp):
        if not self.sc.is_varying(node):
            return ast.BoolOp(node.op, [self.ex(v) for v in node.values])
        is_and = isinstance(node.op, ast.And)
        first, rest = node.values[0], node.values[1:]
        right = rest[0] if len(rest) == 1 else at(ast.BoolOp(node.op, rest), node)
        a = self._bool(self.ex(first), first)
        if not self.sc.has_effects(right):
            b = self._bool(self.ex(right), right)
            return ast.BinOp(a, ast.BitAnd() if is_and else ast.BitOr(), b)
        # the right side reads memory or calls: a real branch decides which lanes evaluate it
        a = self.checked(a, first, "branch")
        taken = self.fresh("_m")
        self.emit(ast.Assign([ast.Name(taken, ast.Store())], self.blk_call("branch", [a], first)), first)
        outer = self.M
        if is_and:
            self.M = ast.Name(taken)
            b = self._bool(self.ex(right), right)
            self.M = outer
            return E(f"_sel({taken}, B, False)", B=b)
        other = self.fresh("_m")
        self.emit(S(f"{other} = _else(M, {taken})", M=copy.deepcopy(outer)), first)
        self.M = ast.Name(other)
        b = self._bool(self.ex(right), right)
        self.M = outer
        return E(f"_sel({other}, B, {taken})", B=b)

    def ifexp(self, node: ast.IfExp):
        if not self.sc.is_varying(node.test):
            # a uniform choice: numba gives both sides one type, so the value does not hang on the side taken
            a, b = self.types.ifexp_casts.get(id(node), (None, None)) if self.types is not None else (None, None)
            return ast.IfExp(self.ex(node.test), self.cast(self.ex(node.body), a), self.cast(self.ex(node.orelse), b))
        test = self.ex(node.test)
        if not (self.sc.has_effects(node.body) or self.sc.has_effects(node.orelse)):
            return E("_select(C, A, B)", C=test, A=self.ex(node.body), B=self.ex(node.orelse))
        taken, other = self.fresh("_m"), self.fresh("_m")
        test = self.checked(test, node.test, "branch")
        self.emit(ast.Assign([ast.Name(taken, ast.Store())], self.blk_call("branch", [test], node.test)), node)
        self.emit(S(f"{other} = _else(M, {taken})", M=copy.deepcopy(self.M)), node)
        outer = self.M
        self.M = ast.Name(taken)
        a = self.ex(node.body)
        self.M = ast.Name(other)
        b = self.ex(node.orelse)
        self.M = outer
        return E(f"_sel({taken}, A, B)", A=a, B=b)

    # calls

    def call(self, node: ast.Call):
        ok, f = self.sc.static(node.func)
        if not ok:
            raise self.err(node, f"calling {ast.unparse(node.func)} is not supported in a kernel "
                                 f"(only device functions, cuda.*, math.* and numpy functions)")
        from .kernel import DeviceFunction, Kernel
        if isinstance(f, I.Unsupported):
            raise self.err(node, f"cuda.{f.name} is not supported: {f.why}")
        if isinstance(f, I.Intrinsic):
            return self.intrinsic(f, node)
        if isinstance(f, DeviceFunction):
            return self.device_call(f, node)
        if isinstance(f, Kernel):
            raise self.err(node, "launching a kernel from a kernel (dynamic parallelism) is not supported")
        args = [self.ex(a) for a in node.args]
        if node.keywords and f not in (round,) and not getattr(f, "__module__", "").startswith("numpy"):
            raise self.err(node, f"keyword arguments to {ast.unparse(node.func)} are not supported in a kernel")
        if f is range:
            raise self.err(node, "range(...) can only be the sequence of a for loop")
        if f is print:
            if node.keywords:
                raise self.err(node, "print's keyword arguments are not supported in a kernel")
            args = [self.checked(x, a, "print") for x, a in zip(args, node.args)]
            return ast.Call(ast.Name("_print"), [ast.Name(self.blk), copy.deepcopy(self.M)] + args, [])
        builtin = {int: "_int", float: "_float", bool: "_bool", min: "_min", max: "_max", round: "_round",
                   abs: "_abs", len: None, pow: "_pow", complex: "_complex"}
        if f in builtin:
            if f is len:
                perm = self._perm(node.args[0]) if node.args else None
                if perm:
                    return E(f"i64(A.shape[{perm.index(0)}])", A=args[0])
                return E("i64(len(A))", A=args[0])
            return ast.Call(ast.Name(builtin[f]), args, [])
        if getattr(f, "__module__", None) == "math" or (callable(f) and getattr(math, getattr(f, "__name__", ""), None) is f):
            name = f.__name__
            if name not in rt.MATH:
                raise self.err(node, f"math.{name} is not supported in a kernel")
            target = rt.MATH[name]
            if isinstance(target, np.ufunc):
                return ast.Call(ast.Attribute(ast.Name("_np"), target.__name__), args, [])
            helper = f"_math_{name}"
            self.extra[helper] = target
            return ast.Call(ast.Name(helper), args, [])
        if is_dtype_like(f):
            return ast.Call(ast.Attribute(ast.Name("_np"), to_dtype(f).name), args, [])
        if isinstance(f, np.ufunc) or getattr(f, "__module__", "").startswith("numpy"):
            kws = [ast.keyword(k.arg, self.ex(k.value)) for k in node.keywords]
            return ast.Call(copy.deepcopy(node.func), args, kws)
        raise self.err(node, f"{ast.unparse(node.func)} is a Python function, not a device function: "
                             f"decorate it with @cuda.jit(device=True)")

    def device_call(self, f, node):
        kinds = self.sc.call_kinds(node)
        spec = self.sc.specialize(f, kinds, node, self.types.call_types.get(id(node)) if self.types is not None else None)
        name = self.fresh(f"_{f.__name__}_")
        self.extra[name] = spec
        args = [copy.deepcopy(a) if k in ARRAY_KINDS else self.checked(self.ex(a), a, "call")
                for a, k in zip(node.args, kinds) if not isinstance(k, Static)]
        call = at(ast.Call(ast.Name(name), [ast.Name(self.blk), copy.deepcopy(self.M)] + args, []), node)
        if self.undefined_source(node):  # what it returns can be undefined: its shadow comes back too
            holder = self.fresh("_h")
            self.holders.append(holder)
            self.ushadow[id(node)] = E(f"{holder}[0]")
            call = at(E(f"_u_take({holder}, C)", C=call), node)
        return call

    def array_value(self, node, name):
        """The value of ``cuda.shared.array``/``local.array``/``const.array_like``, or an array name."""
        if not isinstance(node, ast.Call):
            return copy.deepcopy(node)
        ok, f = self.sc.static(node.func)
        args = {k.arg: k.value for k in node.keywords}
        pos = list(node.args)
        if f.name in ("shared.array", "local.array"):
            shape = pos[0] if pos else args.get("shape")
            dt = pos[1] if len(pos) > 1 else args.get("dtype")
            if shape is None or dt is None:
                raise self.err(node, f"cuda.{f.name} needs a shape and a dtype")
            if self.sc.is_varying(shape):
                raise self.err(node, "the shape of a shared or local array must be the same for every thread")
            shape_x = self.ex(shape, bare=True)
            dtype_x = E("_dtype(D)", D=self.ex(dt))
            if f.name == "local.array":
                return E("_Local(B, S, D)", B=self.blk, S=shape_x, D=dtype_x)
            if isinstance(shape, ast.Constant) and shape.value == 0 or (
                    isinstance(shape, ast.Tuple) and len(shape.elts) == 1 and isinstance(shape.elts[0], ast.Constant)
                    and shape.elts[0].value == 0):
                return E(f"_dynamic_shared(B, D, {name!r})", B=self.blk, D=dtype_x)
            return ast.Call(ast.Attribute(ast.Name(self.blk), "shared"), [shape_x, dtype_x],
                            [ast.keyword("name", ast.Constant(name))])
        if f.name == "const.array_like":
            return self.ex(pos[0]) if not isinstance(pos[0], ast.Name) else copy.deepcopy(pos[0])
        raise self.err(node, f"cuda.{f.name} does not make an array")

    def intrinsic(self, f: I.Intrinsic, node: ast.Call):
        name = f.name
        pos = list(node.args)
        kw = {k.arg: k.value for k in node.keywords}
        if name in ("shared.array", "local.array", "const.array_like"):
            raise self.err(node, f"cuda.{name} must be assigned to a name: x = cuda.{name}(...)")
        if name == "grid" or name == "gridsize":
            n = pos[0] if pos else kw.get("ndim")
            if not (isinstance(n, ast.Constant) and n.value in (1, 2, 3)):
                raise self.err(node, f"cuda.{name}(n) needs n = 1, 2 or 3 written as a literal")
            axes = "xyz"[: n.value]
            if name == "grid":
                parts = [E(f"B.b{a} * i64(B.bd{a}) + B.t{a}", B=self.blk) for a in axes]
            else:
                parts = [E(f"i64(B.gd{a} * B.bd{a})", B=self.blk) for a in axes]
            return parts[0] if len(parts) == 1 else ast.Tuple(parts)
        if name == "syncthreads":
            self.emit(ast.Expr(self.blk_call("sync", [], node)), node)
            return ast.Constant(None)
        if name in ("syncthreads_count", "syncthreads_and", "syncthreads_or"):
            pred = self.ex(pos[0])
            self.emit(ast.Expr(self.blk_call("sync", [], node)), node)
            return E(f"_block_reduce(B, P, M, {name.split('_')[1]!r})", B=self.blk, P=pred, M=copy.deepcopy(self.M))
        if name == "syncwarp":
            return self._stmt_call(self.blk_call("syncwarp", [], node), node)
        if name.startswith("threadfence"):
            return ast.Constant(None)
        if name in ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"):
            if len(pos) != 3:
                raise self.err(node, f"cuda.{name}(mask, value, {'src_lane' if name == 'shfl_sync' else 'delta'}) takes three arguments")
            return self.shuffle(name, pos[1], pos[2], node)
        if name in ("ballot_sync", "any_sync", "all_sync"):
            if len(pos) != 2:
                raise self.err(node, f"cuda.{name}(mask, predicate) takes two arguments")
            method = {"ballot_sync": "ballot", "any_sync": "any", "all_sync": "all"}[name]
            return self.blk_call(method, [self.ex(pos[1])], node)
        if name == "activemask":
            return E("_activemask(B, M)", B=self.blk, M=copy.deepcopy(self.M))
        if name == "lanemask_lt":
            return E("_lanemask_lt(B)", B=self.blk)
        if name in ("popc", "brev", "clz", "ffs", "fma", "cbrt"):
            return ast.Call(ast.Name(f"_{name}"), [self.ex(a) for a in pos], [])
        if name == "selp":
            return E("_select(C, A, B)", C=self.ex(pos[0]), A=self.ex(pos[1]), B=self.ex(pos[2]))
        if name in ("vload", "vstore"):
            return self.vector_access(name, pos, node)
        if name == "select":
            return self.predicated_select(pos, node)
        if name == "bitcast":
            return ast.Call(ast.Name("_bitcast"), [self.ex(pos[0])] + [self.ex(a) for a in pos[1:]], [])
        if name == "printf":
            if not pos or not (isinstance(pos[0], ast.Constant) and isinstance(pos[0].value, str)):
                raise self.err(node, "printf needs its format as a string literal")
            values = [self.checked(self.ex(a), a, "print") for a in pos[1:]]
            return self._stmt_call(ast.Call(ast.Name("_printf"), [ast.Name(self.blk), copy.deepcopy(self.M),
                                                                  ast.Constant(pos[0].value)] + values, []), node)
        if name.startswith("atomic."):
            op = name.split(".")[1]
            if op not in I.ATOMICS_SUPPORTED:
                raise self.err(node, f"cuda.atomic.{op} is not supported (the engine has add, sub, max, min, "
                                     f"exch, cas, compare_and_swap, and_, or_, xor, inc and dec)")
            array = pos[0]
            kind = self.sc.array_kind(array)
            if kind not in ("global", "shared"):
                raise self.err(node, f"cuda.atomic.{op} needs a global or shared array")
            arr = copy.deepcopy(array)
            if op == "compare_and_swap":
                return self.blk_call("atomic_cas", [arr, ast.Constant(0), self.checked(self.ex(pos[1]), pos[1], "atomic"),
                                                    self.checked(self.ex(pos[2]), pos[2], "atomic")], node)
            index = self.index(pos[1], array)
            if op == "cas":
                return self.blk_call("atomic_cas", [arr, index, self.checked(self.ex(pos[2]), pos[2], "atomic"),
                                                    self.checked(self.ex(pos[3]), pos[3], "atomic")], node)
            value = self.checked(self.ex(pos[2]), pos[2], "atomic")
            if op == "sub":
                value = ast.UnaryOp(ast.USub(), value)
                op = "add"
            call = self.blk_call(f"atomic_{op.rstrip('_')}", [arr, index, value], node)
            if op == "exch" and kind == "shared":  # its old value can be one nobody wrote: undefined (runtime.u_exch)
                from . import runtime as rt
                holder = self.fresh("_h")
                self.holders.append(holder)
                self.ushadow[id(node)] = E(f"{holder}[0]")
                where = rt.origin(self.src.filename, getattr(node, "lineno", 0), "atomicExch")
                call = at(E(f"_u_exch({holder}, C, B, {where})", C=call, B=self.blk), node)
            return call
        raise self.err(node, f"cuda.{name} is not supported in a kernel")

    def predicated_select(self, pos, node):
        """``select(c, a, b)`` (C's ``?:``): ``a`` evaluated under the lanes where ``c`` holds,
        ``b`` under the others (their loads masked: no lane reads what it does not choose),
        merged per lane; no branch instruction, as the compiler's predicated code has none."""
        if len(pos) != 3:
            raise self.err(node, "select(c, a, b) takes three arguments")
        test, a_node, b_node = pos
        if not self.sc.is_varying(test):
            return ast.IfExp(self.ex(test), self.ex(a_node), self.ex(b_node))
        c = self.ex(test)
        if not (self.sc.has_effects(a_node) or self.sc.has_effects(b_node)):
            return E("_select(C, A, B)", C=c, A=self.ex(a_node), B=self.ex(b_node))
        c = self.checked(c, test, "branch")
        taken, other = self.fresh("_m"), self.fresh("_m")
        self.emit(S(f"{taken} = _and(M, C)", M=copy.deepcopy(self.M), C=c), node)
        self.emit(S(f"{other} = _else(M, {taken})", M=copy.deepcopy(self.M)), node)
        outer = self.M
        self.M = ast.Name(taken)
        a = self.ex(a_node)
        self.M = ast.Name(other)
        b = self.ex(b_node)
        self.M = outer
        return E(f"_sel({taken}, A, B)", A=a, B=b)

    def vector_access(self, name, pos, node):
        """``vload(a, i, w)``: one load of ``w`` consecutive elements per lane (``blk.load(…,
        width=w)``, counted as one 4·w-byte access), as a tuple of ``w`` values;
        ``vstore(a, i, w, v0, …)`` the store. ``i`` is the first element (a tuple for a
        multi-dimensional array: the elements run along its last axis)."""
        if len(pos) < 3 or not (isinstance(pos[2], ast.Constant) and isinstance(pos[2].value, int)):
            raise self.err(node, f"cuda.{name}(array, first, width, …) needs the width as a literal")
        width = pos[2].value
        array = pos[0]
        kind = self.sc.array_kind(array)
        if kind not in ("global", "shared"):
            raise self.err(node, f"cuda.{name} needs a global or shared array")
        index = self.index(pos[1], array)
        call = self.blk_call("load" if name == "vload" else "store", [copy.deepcopy(array), index], node)
        if name == "vload":
            call.keywords.append(ast.keyword("width", ast.Constant(width)))
            return E(f"_vsplit(V, {width})", V=call)
        if len(pos) != 3 + width:
            raise self.err(node, f"cuda.vstore of width {width} needs {width} values")
        values = [self.checked(self.ex(v), v, "store") for v in pos[3:]]
        call.args.append(ast.Call(ast.Name("_vstack"), values, []))
        call.keywords.append(ast.keyword("width", ast.Constant(width)))
        return self._stmt_call(call, node)

    def shuffle(self, name: str, value_node, arg_node, node):
        """``cuda.shfl*_sync(mask, value, arg)``. A source lane that does not take part (inactive,
        exited, past the end of the block) gives an undefined value, not an error: a plan worked
        out first (``runtime.shfl_plan``) says whether any lane can read one; when none can (every
        lane of a full block takes part: the lectures' reductions) the shuffle runs as written,
        else it runs with those lanes reading their own value, and its result's shadow marks
        them. The mask form keeps the ``blk`` call in the kernel's own frame (its line is the
        reader's). The membermask argument is not evaluated: the lanes that take part are the
        ones running the instruction, as ``__activemask()`` would name them."""
        from . import runtime as rt
        short = name.split("_")[1]
        kind = "shfl" if name == "shfl_sync" else f"shfl_{short}"
        value = self.ex(value_node)
        varying = name != "shfl_sync" and self.sc.is_varying(arg_node)
        arg = self.ex(arg_node, bare=not varying)
        instruction = {"shfl": "__shfl_sync", "shfl_up": "__shfl_up_sync", "shfl_down": "__shfl_down_sync",
                       "shfl_xor": "__shfl_xor_sync"}[kind]
        where = rt.origin(self.src.filename, getattr(node, "lineno", 0), instruction)
        plan = self.fresh("_p")
        f = ast.Constant(False)
        uv, ua = self.shadow(value_node), self.shadow(arg_node)
        self.emit(ast.Assign([ast.Name(plan, ast.Store())],
                             E(f"_shfl_plan(B, M, {kind!r}, A, UV, UA, {where})", B=self.blk, M=copy.deepcopy(self.M),
                               A=arg, UV=uv or f, UA=ua or copy.deepcopy(f))), node)
        if varying:
            plain = self.blk_call("shfl", [value, E(f"_shfl_{short}_source(B, P[1])", B=self.blk, P=plan)], node)
        else:
            plain = self.blk_call(kind, [value, E(f"{plan}[1]")], node)
        other = self.blk_call("shfl", [copy.deepcopy(value), E(f"{plan}[2]")], node)
        self.ushadow[id(node)] = E(f"{plan}[3]")
        return at(ast.IfExp(E(f"{plan}[0]"), plain, other), node)

    def _stmt_call(self, call, node):
        self.emit(ast.Expr(call), node)
        return ast.Constant(None)
