"""CUDA C into the dialect's tree: one ``ast.FunctionDef`` per ``__global__``/``__device__`` function.

The tree is what ``analysis.Source`` makes of a Python kernel, with the ``.cu`` file's line
and column numbers, so the divergence analysis, the inference, the compiler and every
message downstream work on it unchanged. What C has and the dialect lacks is lowered here:

* declared types: ``int x = e`` is ``x = int32(e)`` (a cast only where the value's type is
  not already the variable's), ``x += e`` is ``x = int32(x + e)``; literals are typed
  (``1`` an ``int``, ``1u`` ``unsigned``, ``1.0f`` ``float``, ``1.0`` ``double``);
  ``threadIdx.x`` and friends are ``unsigned int``; the operators are C's (``arith.C``);
* pointers as array + offset: ``float *p = a + k`` makes ``p`` a name for ``a`` and an
  offset ``p__off``; ``p[i]`` is ``a[p__off + i]``, ``*p`` ``a[p__off]``, ``p += k`` moves
  the offset; a device function's pointer parameter takes the array and the offset;
* ``for (init; cond; step)`` is ``init; while cond: body; step``, the step copied before
  every ``continue`` of the loop; ``do body while (c)`` is ``while True: body; if !c: break``;
* block scopes: a declaration that shadows or reuses a name gets a fresh Python name;
* ``__shared__ T s[N][M]`` is ``cuda.shared.array((N, M), T)``, ``extern __shared__ T s[]``
  the dynamic one, ``T a[N]`` a local array; ``__syncthreads``, atomics, shuffles, votes,
  ``__popc`` … the dialect's intrinsics.

Host code (a function without ``__global__``/``__device__``, ``main``) is skipped. A
construct outside the subset is a ``CompileError`` naming the C line, column and construct,
raised when the kernel that reaches it is compiled.
"""

from __future__ import annotations

import ast
import keyword
import math

import numpy as np

from .. import intrinsics as I
from ..analysis import CompileError
from . import arith

# -- C types ---------------------------------------------------------------------------------------

SCALAR_TYPES = {
    "int": np.int32, "signed": np.int32, "signed int": np.int32, "unsigned": np.uint32, "unsigned int": np.uint32,
    "long": np.int64, "long int": np.int64, "unsigned long": np.uint64, "long long": np.int64,
    "long long int": np.int64, "unsigned long long": np.uint64, "unsigned long long int": np.uint64,
    "short": np.int16, "short int": np.int16, "unsigned short": np.uint16, "unsigned short int": np.uint16,
    "char": np.int8, "signed char": np.int8, "unsigned char": np.uint8, "bool": np.bool_, "float": np.float32,
    "double": np.float64, "size_t": np.uint64, "ptrdiff_t": np.int64, "uint": np.uint32, "uint32_t": np.uint32,
    "int32_t": np.int32, "int64_t": np.int64, "uint64_t": np.uint64, "uint8_t": np.uint8, "int8_t": np.int8,
    "uint16_t": np.uint16, "int16_t": np.int16, "__half": np.float16, "half": np.float16, "uchar": np.uint8,
    "ushort": np.uint16, "ulong": np.uint64,
}
C_NAMES = {np.dtype(np.int32): "int", np.dtype(np.uint32): "unsigned int", np.dtype(np.int64): "long long",
           np.dtype(np.uint64): "unsigned long long", np.dtype(np.int16): "short", np.dtype(np.uint16): "unsigned short",
           np.dtype(np.int8): "char", np.dtype(np.uint8): "unsigned char", np.dtype(np.bool_): "bool",
           np.dtype(np.float32): "float", np.dtype(np.float64): "double", np.dtype(np.float16): "__half"}


class CType:
    """A C type: ``scalar`` (dtype), ``ptr`` (to dtype, in ``space``), ``array`` (dtype, shape, space), ``void``."""

    def __init__(self, kind, dtype=None, shape=None, space="global"):
        self.kind, self.dtype, self.shape, self.space = kind, (np.dtype(dtype) if dtype is not None else None), shape, space

    def c(self) -> str:
        base = C_NAMES.get(self.dtype, str(self.dtype)) if self.dtype is not None else "void"
        return base + (" *" if self.kind == "ptr" else "[]" if self.kind == "array" else "")

    def __repr__(self):
        return f"CType({self.c()})"


# the markers and types the lowered tree names (its namespace)
NAMESPACE = {
    "_Ctid": I.threadIdx, "_Cbid": I.blockIdx, "_Cbdim": I.blockDim, "_Cgdim": I.gridDim,
    "_Cshared": I.shared.array, "_Clocal": I.local.array, "_Cconst": I.const.array_like,
    **{f"_C{name}": f for name, f in I.functions.items()},
    **{f"_Catomic_{name}": getattr(I.atomic, name) for name in ("add", "sub", "max", "min", "exch", "cas")},
    "_Cmin": min, "_Cmax": max, "_Cabs": abs,
}
for _dt in C_NAMES:
    NAMESPACE[f"_C{_dt.name}"] = _dt.type
for _m in ("sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "floor", "ceil", "fabs", "pow", "log2", "exp2",
           "atan2", "atan", "asin", "acos", "log10", "erf", "trunc", "fmod", "hypot", "sinh", "cosh", "copysign",
           "log1p", "expm1", "isnan", "isinf", "isfinite"):
    if hasattr(math, _m):
        NAMESPACE[f"_Cmath_{_m}"] = getattr(math, _m)


def dname(dt: np.dtype) -> str:
    return f"_C{np.dtype(dt).name}"


I32, U32, I64, U64 = (np.dtype(t) for t in (np.int32, np.uint32, np.int64, np.uint64))
F32, F64, BOOL = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.bool_)

BINOPS = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "%": ast.Mod, "<<": ast.LShift,
          ">>": ast.RShift, "&": ast.BitAnd, "|": ast.BitOr, "^": ast.BitXor}
COMPARES = {"<": ast.Lt, "<=": ast.LtE, ">": ast.Gt, ">=": ast.GtE, "==": ast.Eq, "!=": ast.NotEq}
ATOMICS = {"atomicAdd": "add", "atomicSub": "sub", "atomicMax": "max", "atomicMin": "min", "atomicExch": "exch",
           "atomicCAS": "cas", "atomicAdd_block": "add", "atomicAdd_system": "add"}
SHUFFLES = {"__shfl_sync": "shfl_sync", "__shfl_down_sync": "shfl_down_sync", "__shfl_up_sync": "shfl_up_sync",
            "__shfl_xor_sync": "shfl_xor_sync"}
VOTES = {"__ballot_sync": "ballot_sync", "__any_sync": "any_sync", "__all_sync": "all_sync"}
#: C math functions -> (math function, the float type the f-suffixed name returns)
MATH = {}
for _m in ("sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "floor", "ceil", "fabs", "pow", "log2", "exp2", "atan2",
           "atan", "asin", "acos", "log10", "erf", "trunc", "fmod", "hypot", "sinh", "cosh", "copysign", "log1p",
           "expm1"):
    MATH[_m] = (_m, None)
    MATH[_m + "f"] = (_m, F32)
    MATH["__" + _m + "f"] = (_m, F32)
MATH["__fsqrt_rn"] = ("sqrt", F32)
PYTHON_RESERVED = set(keyword.kwlist) | {"blk", "i64", "f64", "i32", "print", "range", "len", "int", "float", "bool",
                                        "min", "max", "abs", "round", "pow", "complex", "math", "np"}


class Unsupported(CompileError):
    pass


def text(node) -> str:
    return node.text.decode()


class FunctionInfo:
    """A ``__global__`` or ``__device__`` function of the file, found by a first scan."""

    def __init__(self, node, kind, name, template=None, extern_c=False):
        self.node, self.kind, self.name, self.template, self.extern_c = node, kind, name, template, extern_c


def scan(root) -> dict[str, list[FunctionInfo]]:
    """The file's device-side functions by name (templates kept with their parameter lists)."""
    out: dict[str, list[FunctionInfo]] = {}

    def visit(node, template=None, extern_c=False):
        for c in node.children:
            if c.type == "linkage_specification":
                visit(c, None, True)
            elif c.type == "declaration_list":
                visit(c, template, extern_c)
            elif c.type == "template_declaration":
                params = c.child_by_field_name("parameters")
                visit_one(c, params, extern_c)
            elif c.type == "function_definition":
                add(c, template, extern_c)
            elif c.type == "namespace_definition":
                body = c.child_by_field_name("body")
                if body is not None:
                    visit(body, None, extern_c)

    def visit_one(tnode, params, extern_c):
        for c in tnode.children:
            if c.type == "function_definition":
                add(c, params, extern_c)

    def add(fn, template, extern_c):
        quals = {text(c) for c in fn.children if c.type in ("__global__", "__device__", "__host__")} | {
            text(c) for c in fn.children if c.type in ("storage_class_specifier", "type_qualifier", "attribute_specifier",
                                                       "ms_declspec_modifier")}
        head = fn.text.decode().split("(")[0]
        kind = "global" if "__global__" in quals or "__global__" in head else \
            "device" if "__device__" in quals or "__device__" in head else None
        if kind is None:
            return  # host code: skipped
        decl = fn.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        if decl is None:
            return
        name_node = decl.child_by_field_name("declarator")
        out.setdefault(text(name_node), []).append(FunctionInfo(fn, kind, text(name_node), template, extern_c))

    visit(root)
    return out


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def moved_names(body) -> set:
    """The names a function assigns to (``p += k``, ``p = q``, ``p++``): a pointer parameter
    among them needs an offset."""
    out = set()
    stack = [body]
    while stack:
        n = stack.pop()
        if n.type in ("assignment_expression", "update_expression"):
            target = n.child_by_field_name("left") or n.child_by_field_name("argument")
            if target is not None and target.type == "identifier":
                out.add(text(target))
        stack.extend(n.children)
    return out


class Lowering:
    """One C function (one template instance) lowered to a FunctionDef."""

    def __init__(self, unit, info: FunctionInfo, targs: dict | None = None):
        self.unit = unit  # module.Unit: the file (source text, filename, functions, device function objects)
        self.info = info
        self.targs = targs or {}  # template parameter -> np.dtype or int
        self.scopes: list[dict[str, str]] = [{}]
        self.vars: dict[str, CType] = {}  # python name -> C type
        self.ptr: dict[str, tuple] = {}  # pointer python name -> (base python name, offset name or None)
        self.used: set[str] = set()
        self.loops: list[list] = []  # the step statements of the enclosing for loops (None: a while)
        self.params: list[tuple[str, CType]] = []  # (C name, type) for the launch's checks
        self.dynamic = None
        self.counter = 0

    # -- errors and positions ---------------------------------------------------------------------

    def error(self, node, what) -> CompileError:
        line, col = node.start_point.row + 1, node.start_point.column + 1
        src = self.unit.line(line)
        return CompileError(f"{self.unit.filename}:{line}:{col}: {self.info.name}: {what} (line {line}: {src})").at(
            site=(self.unit.filename, line))

    def unsupported(self, node, what=None):
        return self.error(node, f"{what or node.type.replace('_', ' ')} is not supported "
                                f"(`{text(node)[:60]}`)")

    @staticmethod
    def at(pynode, node):
        for n in ast.walk(pynode):
            if not hasattr(n, "lineno") or getattr(n, "_c", False):
                n.lineno = n.end_lineno = node.start_point.row + 1
                n.col_offset = node.start_point.column
                n.end_col_offset = node.start_point.column + 1 if node.start_point.row != node.end_point.row \
                    else node.end_point.column
        return pynode

    # -- names ------------------------------------------------------------------------------------

    def declare(self, cname: str, ctype: CType) -> str:
        py = cname
        if py in PYTHON_RESERVED or py.startswith("_C") or py in self.used or py in self.unit.functions:
            k = 2
            while f"{cname}_{k}" in self.used:
                k += 1
            py = f"{cname}_{k}"
        self.used.add(py)
        self.scopes[-1][cname] = py
        self.vars[py] = ctype
        return py

    def lookup(self, cname):
        for s in reversed(self.scopes):
            if cname in s:
                return s[cname]
        g = self.unit.globals.get(cname)
        if g is not None:  # a __constant__ or __device__ variable of the file
            ctype, pyname, scalar = g
            self.vars[pyname] = ctype
            if scalar:
                self.scalar_shared = getattr(self, "scalar_shared", set()) | {pyname}
            return pyname
        return None

    def fresh(self, prefix):
        self.counter += 1
        name = f"{prefix}__{self.counter}"
        self.used.add(name)
        return name

    # -- types ------------------------------------------------------------------------------------

    def base_type(self, node, decl=None):
        """The dtype of a declaration's type node (None: void)."""
        t = node.child_by_field_name("type") if decl is None else decl
        if t is None:
            raise self.unsupported(node, "a declaration without a type")
        name = " ".join(text(t).split())
        if t.type == "template_type" or t.type == "qualified_identifier":
            raise self.unsupported(t, "this type")
        if name == "void":
            return None
        if name in self.targs and isinstance(self.targs[name], np.dtype):
            return self.targs[name]
        if name in SCALAR_TYPES:
            return np.dtype(SCALAR_TYPES[name])
        if t.type == "sized_type_specifier":
            words = name.replace("signed ", "").split() if name != "signed" else ["int"]
            key = " ".join(w for w in name.split())
            if key in SCALAR_TYPES:
                return np.dtype(SCALAR_TYPES[key])
        raise self.error(t, f"the type `{name}` is not supported")

    def qualifiers(self, node) -> set:
        out = set()
        for c in node.children:
            if c.type in ("type_qualifier", "storage_class_specifier", "attribute_specifier", "attribute_declaration"):
                out.add(" ".join(text(c).split()))
            elif c.type in ("__shared__", "__constant__", "__device__", "__managed__"):
                out.add(c.type)
        return out

    def static_type(self, node):
        """The C type of an expression where it is known here (dtype), else None."""
        t = node.type
        if t == "number_literal":
            return self.literal(node)[1]
        if t in ("true", "false"):
            return BOOL
        if t == "char_literal":
            return np.dtype(np.int8)
        if t == "identifier":
            py = self.lookup(text(node))
            if py is not None:
                ct = self.vars[py]
                return ct.dtype if ct.kind == "scalar" else None
            if text(node) in self.targs and isinstance(self.targs[text(node)], int):
                return I32
            if text(node) == "warpSize":
                return I32
            return None
        if t == "field_expression":
            base = node.child_by_field_name("argument")
            if base.type == "identifier" and text(base) in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
                return U32
            return None
        if t == "parenthesized_expression":
            return self.static_type(node.named_children[0])
        if t == "subscript_expression" or (t == "pointer_expression" and text(node.children[0]) == "*"):
            base = node.child_by_field_name("argument")
            while base.type == "subscript_expression":
                base = base.child_by_field_name("argument")
            if base.type == "identifier":
                py = self.lookup(text(base))
                if py is not None and self.vars[py].kind in ("ptr", "array"):
                    return self.vars[py].dtype
            return None
        if t == "cast_expression":
            return self.base_type(node, node.child_by_field_name("type").child_by_field_name("type") or
                                  node.child_by_field_name("type").named_children[0]) if True else None
        if t == "binary_expression":
            op = text(node.child_by_field_name("operator"))
            if op in COMPARES or op in ("&&", "||"):
                return BOOL
            a = self.static_type(node.child_by_field_name("left"))
            b = self.static_type(node.child_by_field_name("right"))
            if a is None or b is None:
                return None
            if op in ("<<", ">>"):
                return arith.promote(a)
            return arith.common(a, b)
        if t == "unary_expression":
            op = text(node.child_by_field_name("operator"))
            a = self.static_type(node.child_by_field_name("argument"))
            if op == "!":
                return BOOL
            return arith.promote(a) if a is not None else None
        return None

    # -- the function -----------------------------------------------------------------------------

    def function(self) -> ast.FunctionDef:
        fn = self.info.node
        from .parse import first_error
        bad = first_error(fn)
        if bad is not None:
            raise self.error(bad, f"a syntax error (or C++ the grammar does not parse) at `{text(bad)[:40]}`")
        for n in _walk(fn):
            if n.type == "lambda_expression":
                raise self.unsupported(n, "a lambda")
        decl = fn.child_by_field_name("declarator")
        while decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        self.return_type = self.base_type(fn)
        if self.info.kind == "global" and self.return_type is not None:
            raise self.error(fn, "a __global__ function returns void")
        args = []
        body_prefix = []
        moved = moved_names(fn.child_by_field_name("body"))
        for p in decl.child_by_field_name("parameters").named_children:
            if p.type == "variadic_parameter":
                raise self.unsupported(p, "a variadic parameter")
            if p.type not in ("parameter_declaration", "optional_parameter_declaration"):
                raise self.unsupported(p)
            dt = self.base_type(p)
            d = p.child_by_field_name("declarator")
            if d is None:
                if dt is None:
                    continue  # f(void)
                raise self.unsupported(p, "an unnamed parameter")
            kind = "scalar"
            while d.type in ("pointer_declarator", "array_declarator", "reference_declarator"):
                if d.type == "reference_declarator":
                    raise self.unsupported(d, "a reference parameter")
                if kind != "scalar":
                    raise self.unsupported(d, "a pointer to a pointer")
                kind = "ptr"
                d = d.child_by_field_name("declarator") or d.named_children[-1]
            if d.type != "identifier":
                raise self.unsupported(d, "this parameter")
            cname = text(d)
            if kind == "ptr" and dt is None:
                raise self.unsupported(p, "a void * parameter")
            ctype = CType(kind, dt)
            py = self.declare(cname, ctype)
            self.params.append((cname, ctype))
            args.append(ast.arg(py))
            if kind == "ptr":
                off = None
                if self.info.kind == "device":
                    off = self.fresh(f"{py}__off")
                    args.append(ast.arg(off))
                elif cname in moved:  # a kernel's pointer parameter that moves (p += k): an offset from 0
                    off = self.fresh(f"{py}__off")
                    body_prefix.append(self.at(ast.Assign([ast.Name(off, ast.Store())], self.typed(0, I64)), fn))
                self.ptr[py] = (py, off)
        body = self.compound(fn.child_by_field_name("body"), new_scope=False)
        fdef = ast.FunctionDef(name=self.info.name, args=ast.arguments(posonlyargs=[], args=args, vararg=None,
                               kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
                               body=body_prefix + (body or [ast.Pass()]), decorator_list=[], returns=None,
                               type_params=[])
        self.at(fdef, fn)
        for n in ast.walk(fdef):
            if isinstance(n, (ast.Name, ast.Subscript, ast.Attribute, ast.Tuple)) and not hasattr(n, "ctx"):
                n.ctx = ast.Load()
        return fdef

    @property
    def moved_params(self):
        if not hasattr(self, "_moved"):
            self._moved = set()
        return self._moved

    # -- statements -------------------------------------------------------------------------------

    def compound(self, node, new_scope=True) -> list:
        if new_scope:
            self.scopes.append({})
        out = []
        for c in node.named_children:
            out += self.stmt(c)
        if new_scope:
            self.scopes.pop()
        return out

    def stmt(self, node) -> list:
        t = node.type
        if t == "compound_statement":
            return self.compound(node)
        if t == "declaration":
            return self.declaration(node)
        if t == "expression_statement":
            if not node.named_children:
                return []
            return self.expr_stmt(node.named_children[0])
        if t == "if_statement":
            cond = self.cond(node.child_by_field_name("condition"))
            self.scopes.append({})
            body = self.stmt(node.child_by_field_name("consequence")) or [ast.Pass()]
            self.scopes.pop()
            alt = node.child_by_field_name("alternative")
            orelse = []
            if alt is not None:
                inner = alt.named_children[0] if alt.type == "else_clause" else alt
                self.scopes.append({})
                orelse = self.stmt(inner)
                self.scopes.pop()
            return [self.at(ast.If(cond, body, orelse), node)]
        if t == "for_statement":
            return self.for_(node)
        if t == "while_statement":
            cond = self.cond(node.child_by_field_name("condition"))
            self.loops.append(None)
            self.scopes.append({})
            body = self.stmt(node.child_by_field_name("body"))
            self.scopes.pop()
            self.loops.pop()
            return [self.at(ast.While(cond, body or [ast.Pass()], []), node)]
        if t == "do_statement":
            self.loops.append("do")
            self.scopes.append({})
            body = self.stmt(node.child_by_field_name("body"))
            self.scopes.pop()
            self.loops.pop()
            c = node.child_by_field_name("condition")
            test = self.at(ast.If(ast.UnaryOp(ast.Not(), self.cond(c)), [self.at(ast.Break(), c)], []), c)
            return [self.at(ast.While(ast.Constant(True), body + [test], []), node)]
        if t == "break_statement":
            return [self.at(ast.Break(), node)]
        if t == "continue_statement":
            if not self.loops:
                raise self.error(node, "continue outside a loop")
            if self.loops[-1] == "do":
                raise self.unsupported(node, "continue in a do-while loop")
            step = [self.clone(s, node) for s in (self.loops[-1] or [])]
            return step + [self.at(ast.Continue(), node)]
        if t == "return_statement":
            if node.named_children:
                v = self.expr(node.named_children[0])
                if self.return_type is not None:
                    v = self.convert(v, node.named_children[0], self.return_type)
                return [self.at(ast.Return(v), node)]
            return [self.at(ast.Return(None), node)]
        if t in ("comment", "preproc_call", "preproc_def", "preproc_function_def", "empty_statement", "pragma"):
            return []
        if t == ";":
            return []
        if t == "switch_statement":
            raise self.unsupported(node, "switch (write it as if/else)")
        if t == "goto_statement" or t == "labeled_statement":
            raise self.unsupported(node, "goto")
        raise self.unsupported(node)

    def clone(self, stmt, node):
        import copy
        s = copy.deepcopy(stmt)
        for n in ast.walk(s):
            for a in ("lineno", "end_lineno", "col_offset", "end_col_offset"):
                if hasattr(n, a):
                    delattr(n, a)
        return self.at(s, node)

    def for_(self, node) -> list:
        self.scopes.append({})
        out = []
        init = node.child_by_field_name("initializer")
        if init is not None:
            out += self.declaration(init) if init.type == "declaration" else self.expr_stmt(init)
        cond_node = node.child_by_field_name("condition")
        cond = self.cond(cond_node) if cond_node is not None else self.at(ast.Constant(True), node)
        update = node.child_by_field_name("update")
        step = []
        if update is not None:
            step = self.expr_stmt(update)
        self.loops.append(step)
        self.scopes.append({})
        body = self.stmt(node.child_by_field_name("body"))
        self.scopes.pop()
        self.loops.pop()
        out.append(self.at(ast.While(cond, body + [self.clone(s, update) for s in step] or [ast.Pass()], []), node))
        self.scopes.pop()
        return out

    def declaration(self, node) -> list:
        quals = self.qualifiers(node)
        group = self.group_type(node.child_by_field_name("type"))
        if group is not None:
            return self.group_decl(node, group)
        dt = self.base_type(node)
        out = []
        for d in node.children_by_field_name("declarator"):
            value = None
            if d.type == "init_declarator":
                value = d.child_by_field_name("value")
                d = d.child_by_field_name("declarator")
            kind, dims = "scalar", []
            while d.type in ("pointer_declarator", "array_declarator", "reference_declarator"):
                if d.type == "reference_declarator":
                    raise self.unsupported(d, "a reference")
                if d.type == "pointer_declarator":
                    if kind != "scalar":
                        raise self.unsupported(d, "a pointer to a pointer or an array of pointers")
                    kind = "ptr"
                else:
                    kind = "array"
                    size = d.child_by_field_name("size")
                    dims.insert(0, None if size is None else self.const_int(size))
                d = d.child_by_field_name("declarator")
            if d.type != "identifier":
                raise self.unsupported(d, "this declarator")
            cname = text(d)
            if dt is None:
                raise self.unsupported(node, "a void variable")
            if kind == "array":
                out += self.array_decl(node, cname, dt, dims, quals, value)
            elif kind == "ptr":
                out += self.pointer_decl(node, cname, dt, value, quals)
            else:
                if "__shared__" in quals:
                    out += self.array_decl(node, cname, dt, [1], quals, value, scalar=True)
                    continue
                py_value = self.convert(self.expr(value), value, dt) if value is not None and value.type != "initializer_list" \
                    else self.typed(0, dt)
                if value is not None and value.type == "initializer_list":
                    raise self.unsupported(value, "an initializer list for a scalar")
                py = self.declare(cname, CType("scalar", dt))
                out.append(self.at(ast.Assign([ast.Name(py, ast.Store())], py_value), node))
        return out

    # -- cooperative groups: the block and its 32-thread tiles ------------------------------------

    def group_type(self, tnode):
        if tnode is None:
            return None
        name = " ".join(text(tnode).split()).replace("cooperative_groups::", "").replace("cg::", "")
        if name in ("thread_block", "thread_group"):
            return "block"
        if name.startswith("__cgtile"):
            return "tile" + name[len("__cgtile"):]
        if name in ("grid_group", "coalesced_group", "multi_grid_group", "cluster_group"):
            raise self.unsupported(tnode, f"the cooperative group {name} (grid.sync, coalesced_threads)")
        return None

    def group_decl(self, node, group) -> list:
        if group != "block" and group != "tile32":
            raise self.unsupported(node, f"a tile of {group[4:]} threads (only tiled_partition<32>)")
        for d in node.children_by_field_name("declarator"):
            if d.type != "init_declarator":
                raise self.error(d, "a group must be initialised (cg::this_thread_block(), cg::tiled_partition<32>(g))")
            value = d.child_by_field_name("value")
            v = " ".join(text(value).split()).replace("cooperative_groups::", "").replace("cg::", "")
            if group == "block" and v != "this_thread_block()":
                raise self.unsupported(value, "this group (only this_thread_block())")
            if group == "tile32" and not v.replace(" ", "").startswith("tiled_partition<32>("):
                raise self.unsupported(value, "this tile (only tiled_partition<32>(block))")
            self.declare(text(d.child_by_field_name("declarator")), CType("group", shape=group))
        return []

    def linear_tid(self):
        tid = lambda a: self.cast(ast.Attribute(ast.Name("_Ctid"), a), U32)  # noqa: E731
        dim = lambda a: self.cast(ast.Attribute(ast.Name("_Cbdim"), a), U32)  # noqa: E731
        return ast.BinOp(tid("x"), ast.Add(), ast.BinOp(ast.BinOp(tid("y"), ast.Add(), ast.BinOp(tid("z"), ast.Mult(),
                         dim("y"))), ast.Mult(), dim("x")))

    def group_call(self, node, group, method, args):
        full = self.typed(0xFFFFFFFF, U32)
        if method == "sync":
            return ast.Call(ast.Name("_Csyncthreads" if group == "block" else "_Csyncwarp"), [], [])
        if method == "thread_rank":
            return self.linear_tid() if group == "block" else ast.BinOp(self.linear_tid(), ast.BitAnd(), self.typed(31, U32))
        if method in ("size", "num_threads"):
            if group == "block":
                dim = lambda a: self.cast(ast.Attribute(ast.Name("_Cbdim"), a), U32)  # noqa: E731
                return ast.BinOp(ast.BinOp(dim("x"), ast.Mult(), dim("y")), ast.Mult(), dim("z"))
            return self.typed(32, U32)
        if group == "tile32" and method in ("meta_group_rank",):
            return ast.BinOp(self.linear_tid(), ast.RShift(), self.typed(5, U32))
        if group == "tile32" and method in ("shfl_down", "shfl_up", "shfl_xor", "shfl"):
            name = {"shfl": "shfl_sync", "shfl_down": "shfl_down_sync", "shfl_up": "shfl_up_sync",
                    "shfl_xor": "shfl_xor_sync"}[method]
            return ast.Call(ast.Name("_C" + name), [full, self.expr(args[0]), self.expr(args[1])], [])
        if group == "tile32" and method in ("any", "all", "ballot"):
            return ast.Call(ast.Name(f"_C{method}_sync"), [full, self.truth(args[0])], [])
        raise self.unsupported(node, f"the group method .{method}()")

    def array_decl(self, node, cname, dt, dims, quals, value, scalar=False) -> list:
        if "__constant__" in quals:
            raise self.unsupported(node, "a __constant__ array inside a function")
        shared = "__shared__" in quals
        if value is not None:
            raise self.unsupported(value, "an array initializer")
        if None in dims:
            if not (shared and "extern" in quals and dims == [None]):
                raise self.error(node, "an array without a size must be `extern __shared__ T name[]`")
            shape = ast.Constant(0)
            self.dynamic = cname
        else:
            shape = ast.Tuple([ast.Constant(int(k)) for k in dims], ast.Load()) if len(dims) > 1 else ast.Constant(int(dims[0]))
        py = self.declare(cname, CType("array", dt, dims, "shared" if shared else "local"))
        if scalar:
            self.vars[py] = CType("array", dt, [1], "shared")
            self.scalar_shared = getattr(self, "scalar_shared", set()) | {py}
        f = "_Cshared" if shared else "_Clocal"
        call = ast.Call(ast.Name(f), [shape, ast.Name(dname(dt))], [])
        return [self.at(ast.Assign([ast.Name(py, ast.Store())], call), node)]

    def pointer_decl(self, node, cname, dt, value, quals) -> list:
        if value is None:
            raise self.error(node, f"a pointer must be initialised where it is declared ({cname})")
        fn = value.child_by_field_name("function") if value.type == "call_expression" else None
        if fn is not None and fn.type == "template_function" and text(fn.child_by_field_name("name")) == "SharedMemory":
            # CUDA Samples' idiom: a struct whose operator T*() is an extern __shared__ array
            py = self.declare(cname, CType("array", dt, [None], "shared"))
            self.dynamic = cname
            call = ast.Call(ast.Name("_Cshared"), [ast.Constant(0), ast.Name(dname(dt))], [])
            return [self.at(ast.Assign([ast.Name(py, ast.Store())], call), node)]
        base, off = self.pointer_value(value)
        bt = self.vars[base]
        if bt.dtype != np.dtype(dt):
            raise self.unsupported(value, f"a {CType('ptr', dt).c()} to a {bt.c()} (reinterpreting memory)")
        py = self.declare(cname, CType("ptr", dt, space=bt.space))
        off_name = self.fresh(f"{py}__off")
        self.ptr[py] = (base, off_name)
        return [self.at(ast.Assign([ast.Name(off_name, ast.Store())], self.convert(off, value, I64)), node)]

    def pointer_value(self, node):
        """A pointer expression as (base array python name, offset expression)."""
        t = node.type
        if t == "parenthesized_expression":
            return self.pointer_value(node.named_children[0])
        if t == "identifier":
            py = self.lookup(text(node))
            if py is None:
                raise self.error(node, f"`{text(node)}` is not declared")
            ct = self.vars[py]
            if ct.kind == "array":
                if len(ct.shape or [1]) != 1:
                    raise self.unsupported(node, "a pointer into a multi-dimensional array")
                return py, self.typed(0, I64)
            if ct.kind != "ptr":
                raise self.error(node, f"`{text(node)}` is not a pointer")
            base, off = self.ptr[py]
            return base, (ast.Name(off) if off is not None else self.typed(0, I64))
        if t == "binary_expression" and text(node.child_by_field_name("operator")) in ("+", "-"):
            op = text(node.child_by_field_name("operator"))
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if self.is_pointer(left):
                base, off = self.pointer_value(left)
                k = self.expr(right)
                return base, ast.BinOp(off, ast.Add() if op == "+" else ast.Sub(), k)
            if op == "+" and self.is_pointer(right):
                base, off = self.pointer_value(right)
                return base, ast.BinOp(self.expr(left), ast.Add(), off)
        if t == "pointer_expression" and text(node.children[0]) == "&":
            arg = node.child_by_field_name("argument")
            if arg.type == "subscript_expression":
                base, index = self.element(arg)
                if isinstance(index, ast.Tuple):
                    raise self.unsupported(node, "a pointer into a multi-dimensional array")
                return base, index
        if t == "cast_expression":
            raise self.unsupported(node, "a pointer cast (reinterpret_cast, vector loads)")
        raise self.unsupported(node, "this pointer expression")

    def has_offset(self, py) -> bool:
        return self.ptr[py][1] is not None

    def is_pointer(self, node) -> bool:
        if node.type == "parenthesized_expression":
            return self.is_pointer(node.named_children[0])
        if node.type == "identifier":
            py = self.lookup(text(node))
            return py is not None and self.vars[py].kind in ("ptr",) or (
                py is not None and self.vars[py].kind == "array" and len(self.vars[py].shape or [1]) == 1)
        if node.type == "binary_expression" and text(node.child_by_field_name("operator")) in ("+", "-"):
            return self.is_pointer(node.child_by_field_name("left")) or (
                text(node.child_by_field_name("operator")) == "+" and self.is_pointer(node.child_by_field_name("right")))
        if node.type == "pointer_expression" and text(node.children[0]) == "&":
            return True
        return False

    # -- expression statements: assignments and updates -------------------------------------------

    def expr_stmt(self, node) -> list:
        t = node.type
        if t == "comma_expression":
            return self.expr_stmt(node.child_by_field_name("left")) + self.expr_stmt(node.child_by_field_name("right"))
        if t == "parenthesized_expression":
            return self.expr_stmt(node.named_children[0])
        if t == "assignment_expression":
            return self.assignment(node, node.child_by_field_name("left"), text(node.child_by_field_name("operator")),
                                   node.child_by_field_name("right"))
        if t == "update_expression":
            op = "+=" if "++" in text(node) else "-="
            return self.assignment(node, node.child_by_field_name("argument"), op, None)
        if t == "call_expression":
            v = self.expr(node)
            return [self.at(ast.Expr(v), node)]
        # an expression evaluated for nothing (a load nobody uses): keep it, as C would (dead code)
        return [self.at(ast.Expr(self.expr(node)), node)]

    def assignment(self, node, left, op, right) -> list:
        if right is not None and right.type == "assignment_expression":  # a = b = e: b = e first, then a = b
            inner = right.child_by_field_name("left")
            if inner.type != "identifier":
                raise self.unsupported(right, "a chained assignment through an array element")
            return self.expr_stmt(right) + self.assignment(node, left, op, inner)
        if right is None:
            value = lambda: self.typed(1, I32)  # noqa: E731
        else:
            value = lambda: self.expr(right)  # noqa: E731
        if left.type == "parenthesized_expression":
            left = left.named_children[0]
        if left.type == "identifier":
            py = self.lookup(text(left))
            if py is None:
                raise self.error(left, f"`{text(left)}` is not declared")
            ct = self.vars[py]
            if ct.kind == "ptr":
                return self.move_pointer(node, py, op, right)
            if ct.kind == "array":
                if py in getattr(self, "scalar_shared", ()):
                    return self.store(node, py, self.typed(0, I32), op, value, right, ct)
                raise self.error(left, f"cannot assign to the array `{text(left)}`")
            if op == "=":
                v = self.convert(value(), right, ct.dtype)
            else:
                bop = BINOPS[op[:-1]]
                v = ast.BinOp(ast.Name(py), bop(), value())
                rt = self.static_type(right) if right is not None else I32
                result = None if rt is None else arith.promote(ct.dtype) if op in ("<<=", ">>=") \
                    else arith.common(ct.dtype, rt)
                if result != ct.dtype:  # the sum's type is not the variable's: C converts it back
                    v = self.cast(v, ct.dtype)
            return [self.at(ast.Assign([ast.Name(py, ast.Store())], v), node)]
        if left.type in ("subscript_expression", "pointer_expression", "field_expression"):
            if left.type == "field_expression":
                raise self.unsupported(left, "a struct member")
            if left.type == "pointer_expression" and text(left.children[0]) != "*":
                raise self.unsupported(left)
            base, index = self.element(left)
            return self.store(node, base, index, op, value, right, self.vars[base])
        raise self.unsupported(left, "assigning to this")

    def store(self, node, base, index, op, value, right, ct):
        target = ast.Subscript(ast.Name(base), index, ast.Store())
        if op == "=":
            v = value()
            if ct.dtype is not None and self.static_type(right) is not None and \
                    self.static_type(right).kind != ct.dtype.kind and ct.dtype.kind == "f":
                v = self.cast(v, ct.dtype)
            return [self.at(ast.Assign([target], v), node)]
        return [self.at(ast.AugAssign(target, BINOPS[op[:-1]](), value()), node)]

    def move_pointer(self, node, py, op, right):
        base, off = self.ptr[py]
        if off is None:
            raise self.error(node, "internal error: a moving pointer without an offset")
        if op in ("+=", "-="):
            k = self.typed(1, I64) if right is None else self.expr(right)
            v = self.cast(ast.BinOp(ast.Name(off), ast.Add() if op == "+=" else ast.Sub(), k), I64)
            return [self.at(ast.Assign([ast.Name(off, ast.Store())], v), node)]
        if op == "=":
            nbase, noff = self.pointer_value(right)
            if nbase != base:
                raise self.unsupported(node, f"a pointer that points into two arrays ({base}, {nbase})")
            return [self.at(ast.Assign([ast.Name(off, ast.Store())], self.cast(noff, I64)), node)]
        raise self.unsupported(node, f"the pointer operation {op}")

    # -- expressions ------------------------------------------------------------------------------

    def typed(self, value, dt) -> ast.expr:
        """A literal of C type ``dt``: a name bound to the numpy scalar in the namespace (no call at run time)."""
        dt = np.dtype(dt)
        v = dt.type(value) if dt.kind != "u" or value >= 0 else np.array(value).astype(dt)[()]
        name = f"_Ck_{dt.name}_{str(value).replace('-', 'm').replace('.', 'p').replace('+', '')}"
        if not name.isidentifier():
            name = f"_Ck_{dt.name}_{abs(hash((dt.name, repr(value))))}"
        self.unit.namespace[name] = v
        return ast.Name(name)

    def cast(self, v, dt) -> ast.expr:
        return ast.Call(ast.Name(dname(dt)), [v], [])

    def convert(self, v, cnode, dt) -> ast.expr:
        """``v`` (the lowered ``cnode``) as a value of type ``dt`` (no cast when it is one already)."""
        if cnode is not None and self.static_type(cnode) == np.dtype(dt):
            return v
        return self.cast(v, dt)

    def cond(self, node) -> ast.expr:
        """A C condition as a truth value."""
        if node.type in ("condition_clause", "parenthesized_expression"):
            inner = [c for c in node.named_children if c.type != "comment"]
            if len(inner) != 1:
                raise self.unsupported(node, "a declaration in a condition")
            node = inner[0]
        return self.truth(node)

    def truth(self, node) -> ast.expr:
        if node.type == "parenthesized_expression":
            return self.truth(node.named_children[0])
        v = self.expr(node)
        if isinstance(v, (ast.Compare, ast.BoolOp)) or (isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not)):
            return v
        if self.static_type(node) == BOOL:
            return v
        return self.at(ast.Compare(v, [ast.NotEq()], [self.typed(0, I32)]), node)

    def literal(self, node):
        s = text(node).replace("'", "")
        low = s.lower()
        is_hex = low.startswith("0x")
        if not is_hex and ("." in low or "e" in low or low.endswith("f")):
            if low.endswith("f"):
                return float(s[:-1]), F32
            return float(s.rstrip("lL")), F64
        digits = low.rstrip("ul")
        suffix = low[len(digits):]
        v = int(digits, 16) if is_hex else int(digits, 8) if digits.startswith("0") and len(digits) > 1 else int(digits)
        unsigned, longs = "u" in suffix, suffix.count("l")
        if unsigned:
            dt = U32 if v < 2**32 and not longs else U64
        elif longs:
            dt = I64
        elif v < 2**31:
            dt = I32
        elif (is_hex or digits.startswith("0")) and v < 2**32:
            dt = U32
        elif v < 2**63:
            dt = I64
        else:
            dt = U64
        return v, dt

    def const_int(self, node) -> int:
        """A constant integer expression (an array size, a template argument)."""
        t = node.type
        if t == "number_literal":
            v, dt = self.literal(node)
            return int(v)
        if t == "parenthesized_expression":
            return self.const_int(node.named_children[0])
        if t == "identifier" and isinstance(self.targs.get(text(node)), int):
            return self.targs[text(node)]
        if t == "binary_expression":
            a, b = self.const_int(node.child_by_field_name("left")), self.const_int(node.child_by_field_name("right"))
            op = text(node.child_by_field_name("operator"))
            return {"+": a + b, "-": a - b, "*": a * b, "/": int(a / b) if b else 0, "%": a % b if b else 0,
                    "<<": a << b, ">>": a >> b, "&": a & b, "|": a | b}[op]
        if t == "sizeof_expression":
            return self.sizeof(node)
        raise self.error(node, f"`{text(node)}` must be a constant here")

    def sizeof(self, node) -> int:
        tnode = node.child_by_field_name("type")
        if tnode is not None:
            return self.base_type(tnode, tnode.child_by_field_name("type") or tnode.named_children[0]).itemsize
        value = node.child_by_field_name("value")
        inner = value.named_children[0] if value is not None and value.type == "parenthesized_expression" else value
        if inner is not None and inner.type == "identifier" and self.lookup(text(inner)) is None:
            name = text(inner)
            if name in SCALAR_TYPES:
                return np.dtype(SCALAR_TYPES[name]).itemsize
            if isinstance(self.targs.get(name), np.dtype):
                return self.targs[name].itemsize
        dt = self.static_type(value)
        if dt is None:
            raise self.unsupported(node, "sizeof of this expression")
        return dt.itemsize

    def element(self, node):
        """``a[i]``, ``a[i][j]``, ``*p``, ``p[i]``: (the array's python name, the index expression)."""
        if node.type == "pointer_expression":
            base, off = self.pointer_value(node.child_by_field_name("argument"))
            return base, off
        idx = []
        while node.type == "subscript_expression":
            args = node.child_by_field_name("indices") or node.named_children[1]
            inner = [c for c in args.named_children] if args.type == "subscript_argument_list" else [args]
            if len(inner) != 1:
                raise self.unsupported(node, "this subscript")
            idx.insert(0, inner[0])
            node = node.child_by_field_name("argument")
        if node.type == "parenthesized_expression" or node.type == "binary_expression":
            base, off = self.pointer_value(node)
            if len(idx) != 1:
                raise self.unsupported(node, "this subscript")
            return base, ast.BinOp(off, ast.Add(), self.expr(idx[0]))
        if node.type != "identifier":
            raise self.unsupported(node, "indexing this expression")
        py = self.lookup(text(node))
        if py is None:
            raise self.error(node, f"`{text(node)}` is not declared")
        ct = self.vars[py]
        if ct.kind == "array":
            if len(idx) != len(ct.shape):
                raise self.error(node, f"`{text(node)}` has {len(ct.shape)} dimensions, indexed with {len(idx)}")
            parts = [self.expr(i) for i in idx]
            return py, parts[0] if len(parts) == 1 else ast.Tuple(parts, ast.Load())
        if ct.kind == "ptr":
            if len(idx) != 1:
                raise self.unsupported(node, "a multi-dimensional index of a pointer")
            base, off = self.ptr[py]
            i = self.expr(idx[0])
            if off is not None and self.has_offset(py):
                i = ast.BinOp(ast.Name(off), ast.Add(), i)
            return base, i
        raise self.error(node, f"`{text(node)}` is not an array or a pointer")

    def expr(self, node) -> ast.expr:
        out = self._expr(node)
        return self.at(out, node)

    def _expr(self, node):
        t = node.type
        if t == "number_literal":
            v, dt = self.literal(node)
            return self.typed(v, dt)
        if t in ("true", "false"):
            return ast.Constant(t == "true")
        if t == "char_literal":
            return self.typed(ord(text(node)[1:-1].encode().decode("unicode_escape")), np.dtype(np.int8))
        if t == "parenthesized_expression":
            return self.expr(node.named_children[0])
        if t == "identifier":
            return self.identifier(node)
        if t == "field_expression":
            base = node.child_by_field_name("argument")
            field = text(node.child_by_field_name("field"))
            dims = {"threadIdx": "_Ctid", "blockIdx": "_Cbid", "blockDim": "_Cbdim", "gridDim": "_Cgdim"}
            if base.type == "identifier" and text(base) in dims and self.lookup(text(base)) is None:
                if field not in ("x", "y", "z"):
                    raise self.error(node, f"{text(base)} has .x, .y and .z")
                return self.cast(ast.Attribute(ast.Name(dims[text(base)]), field), U32)
            raise self.unsupported(node, "a struct member")
        if t in ("subscript_expression",) or (t == "pointer_expression" and text(node.children[0]) == "*"):
            base, index = self.element(node)
            return ast.Subscript(ast.Name(base), index, ast.Load())
        if t == "pointer_expression":
            raise self.unsupported(node, "taking an address here (only `&a[i]` as an atomic's or a pointer's target)")
        if t == "binary_expression":
            op = text(node.child_by_field_name("operator"))
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if op in ("&&", "||"):
                return ast.BoolOp(ast.And() if op == "&&" else ast.Or(), [self.truth(left), self.truth(right)])
            if op in COMPARES:
                return ast.Compare(self.expr(left), [COMPARES[op]()], [self.expr(right)])
            if op in BINOPS:
                if self.is_pointer(left) or self.is_pointer(right):
                    raise self.unsupported(node, "pointer arithmetic in an expression (declare `T *p = a + k;`)")
                return ast.BinOp(self.expr(left), BINOPS[op](), self.expr(right))
            raise self.unsupported(node, f"the operator {op}")
        if t == "unary_expression":
            op = text(node.child_by_field_name("operator"))
            arg = node.child_by_field_name("argument")
            if op == "!":
                return ast.UnaryOp(ast.Not(), self.truth(arg))
            if op == "-" and arg.type == "number_literal":
                v, dt = self.literal(arg)
                if dt.kind == "i" or dt.kind == "f":
                    return self.typed(-v, dt)
            return ast.UnaryOp({"-": ast.USub, "+": ast.UAdd, "~": ast.Invert}[op](), self.expr(arg))
        if t == "conditional_expression":
            c = self.truth(node.child_by_field_name("condition"))
            a_node, b_node = node.child_by_field_name("consequence"), node.child_by_field_name("alternative")
            a, b = self.expr(a_node), self.expr(b_node)
            ta, tb = self.static_type(a_node), self.static_type(b_node)
            if ta is not None and tb is not None and ta != tb:
                common = arith.common(ta, tb)
                a, b = self.convert(a, a_node, common), self.convert(b, b_node, common)
            return ast.IfExp(c, a, b)
        if t == "cast_expression":
            tn = node.child_by_field_name("type")
            inner = tn.child_by_field_name("type") or tn.named_children[0]
            if tn.child_by_field_name("declarator") is not None:
                raise self.unsupported(node, "a pointer cast")
            dt = self.base_type(tn, inner)
            if dt is None:
                return self.expr(node.child_by_field_name("value"))
            return self.cast(self.expr(node.child_by_field_name("value")), dt)
        if t == "sizeof_expression":
            return self.typed(self.sizeof(node), U64)
        if t == "call_expression":
            return self.call(node)
        if t == "update_expression" or t == "assignment_expression":
            raise self.unsupported(node, f"`{text(node)}` inside an expression (write it as its own statement)")
        if t == "comma_expression":
            raise self.unsupported(node, "the comma operator")
        if t == "lambda_expression":
            raise self.unsupported(node, "a lambda")
        raise self.unsupported(node)

    def identifier(self, node):
        name = text(node)
        py = self.lookup(name)
        if py is not None:
            ct = self.vars[py]
            if ct.kind == "array" and py in getattr(self, "scalar_shared", ()):
                return ast.Subscript(ast.Name(py), self.typed(0, I32), ast.Load())
            if ct.kind != "scalar":
                raise self.unsupported(node, f"the array or pointer `{name}` as a value")
            return ast.Name(py)
        if name in self.targs and isinstance(self.targs[name], int):
            return self.typed(self.targs[name], I32)
        if name == "warpSize":
            return self.typed(32, I32)
        raise self.error(node, f"`{name}` is not declared")

    def call(self, node):
        fnode = node.child_by_field_name("function")
        args = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
        if fnode.type == "template_function":
            fname = text(fnode.child_by_field_name("name"))
            targs = fnode.child_by_field_name("arguments")
            if fname in ("static_cast", "reinterpret_cast"):
                tn = targs.named_children[0]
                if fname == "reinterpret_cast" or tn.child_by_field_name("declarator") is not None:
                    raise self.unsupported(node, "a pointer cast (reinterpret_cast)")
                dt = self.base_type(tn, tn.child_by_field_name("type") or tn.named_children[0])
                return self.cast(self.expr(args[0]), dt)
            return self.device_call(node, fname, args, targs)
        if fnode.type == "qualified_identifier":
            q = " ".join(text(fnode).split()).replace("cooperative_groups::", "").replace("cg::", "")
            if q == "sync" and len(args) == 1 and args[0].type == "identifier":
                py = self.lookup(text(args[0]))
                if py is not None and self.vars[py].kind == "group":
                    return self.group_call(node, self.vars[py].shape, "sync", [])
            raise self.unsupported(node, f"the call `{text(fnode)}`")
        if fnode.type == "field_expression":
            obj = fnode.child_by_field_name("argument")
            py = self.lookup(text(obj)) if obj.type == "identifier" else None
            if py is not None and self.vars[py].kind == "group":
                return self.group_call(node, self.vars[py].shape, text(fnode.child_by_field_name("field")), args)
            raise self.unsupported(node, f"the method call `{text(fnode)}`")
        if fnode.type != "identifier":
            raise self.unsupported(node, "calling this expression")
        name = text(fnode)
        if name in ("__syncthreads", "__syncwarp", "__threadfence", "__threadfence_block", "__threadfence_system"):
            py = {"__syncthreads": "_Csyncthreads", "__syncwarp": "_Csyncwarp", "__threadfence": "_Cthreadfence",
                  "__threadfence_block": "_Cthreadfence_block", "__threadfence_system": "_Cthreadfence_system"}[name]
            return ast.Call(ast.Name(py), [], [])
        if name in ("__syncthreads_count", "__syncthreads_and", "__syncthreads_or"):
            return ast.Call(ast.Name("_C" + name[2:]), [self.truth(args[0])], [])
        if name in ATOMICS:
            return self.atomic(node, ATOMICS[name], args)
        if name.startswith("atomic"):
            raise self.unsupported(node, f"{name} (the engine has atomicAdd, Sub, Max, Min, Exch and CAS)")
        if name in SHUFFLES:
            if len(args) == 4:
                w = self.const_int(args[3])
                if w != 32:
                    raise self.unsupported(args[3], "a shuffle width other than 32")
            if len(args) not in (3, 4):
                raise self.error(node, f"{name} takes (mask, value, lane or delta[, width])")
            return ast.Call(ast.Name("_C" + SHUFFLES[name]), [self.expr(args[0]), self.expr(args[1]),
                                                               self.expr(args[2])], [])
        if name in VOTES:
            return ast.Call(ast.Name("_C" + VOTES[name]), [self.expr(args[0]), self.truth(args[1])], [])
        if name == "__activemask":
            return ast.Call(ast.Name("_Cactivemask"), [], [])
        if name in ("__popc", "__popcll", "__clz", "__clzll", "__ffs", "__ffsll", "__brev", "__brevll"):
            f = name[2:].rstrip("l") if name.endswith("ll") else name[2:]
            return self.cast(ast.Call(ast.Name("_C" + f), [self.expr(args[0])], []), I32 if f != "brev" else U32)
        if name in ("fmaf", "fma", "__fmaf_rn"):
            dt = F32 if name != "fma" else F64
            return self.cast(ast.Call(ast.Name("_Cfma"), [self.cast(self.expr(a), dt) for a in args], []), dt)
        if name in ("min", "max", "umin", "umax", "fminf", "fmaxf", "fmin", "fmax", "llmin", "llmax"):
            f = "_Cmin" if "min" in name else "_Cmax"
            a, b = args
            ta, tb = self.static_type(a), self.static_type(b)
            dt = F32 if name.endswith("f") else F64 if name.startswith("fm") else U32 if name.startswith("u") else \
                arith.common(ta, tb) if ta is not None and tb is not None else None
            x, y = self.expr(a), self.expr(b)
            if dt is not None:
                x, y = self.convert(x, a, dt), self.convert(y, b, dt)
            return ast.Call(ast.Name(f), [x, y], [])
        if name in ("abs", "fabsf", "fabs", "llabs", "labs"):
            dt = F32 if name == "fabsf" else None
            v = self.expr(args[0])
            return ast.Call(ast.Name("_Cabs"), [self.cast(v, dt) if dt is not None else v], [])
        if name in ("__fdividef", "fdividef", "__fdiv_rn"):
            return ast.BinOp(self.cast(self.expr(args[0]), F32), ast.Div(), self.cast(self.expr(args[1]), F32))
        if name in ("rsqrtf", "rsqrt"):
            dt = F32 if name.endswith("f") else F64
            return ast.BinOp(self.typed(1.0, dt), ast.Div(),
                             self.cast(ast.Call(ast.Name("_Cmath_sqrt"), [self.cast(self.expr(args[0]), dt)], []), dt))
        if name in ("__float2int_rz", "__float2int_rd", "__float2uint_rz", "__int2float_rn", "__uint2float_rn",
                    "__half2float", "__float2half", "__float2half_rn", "__ldg"):
            if name == "__ldg":
                base, index = self.element(args[0]) if args[0].type == "pointer_expression" and text(args[0].children[0]) == "&" \
                    else (None, None)
                if base is None:
                    base, index = self.pointer_value(args[0])
                return ast.Subscript(ast.Name(base), index, ast.Load())
            dt = {"__float2int_rz": I32, "__float2uint_rz": U32, "__int2float_rn": F32, "__uint2float_rn": F32,
                  "__half2float": F32, "__float2half": np.dtype(np.float16), "__float2half_rn": np.dtype(np.float16),
                  "__float2int_rd": I32}[name]
            v = self.expr(args[0])
            if name == "__float2int_rd":
                v = ast.Call(ast.Name("_Cmath_floor"), [v], [])
            return self.cast(v, dt)
        if name in MATH:
            fname, dt = MATH[name]
            if f"_Cmath_{fname}" not in NAMESPACE:
                raise self.unsupported(node, f"the math function {name}")
            xs = [self.expr(a) for a in args]
            if dt is not None:
                xs = [self.cast(x, dt) for x in xs]
            call = ast.Call(ast.Name(f"_Cmath_{fname}"), xs, [])
            return self.cast(call, dt) if dt is not None else call
        if name == "printf":
            raise self.unsupported(node, "printf (not yet)")
        return self.device_call(node, name, args, None)

    def atomic(self, node, op, args):
        target = args[0]
        if not (target.type == "pointer_expression" and text(target.children[0]) == "&") and not self.is_pointer(target):
            raise self.error(target, "an atomic needs an address: &a[i]")
        if target.type == "pointer_expression" and text(target.children[0]) == "&":
            arg = target.child_by_field_name("argument")
            py = self.lookup(text(arg)) if arg.type == "identifier" else None
            if py is not None and py in getattr(self, "scalar_shared", ()):
                base, index = py, self.typed(0, I32)
            else:
                base, index = self.element(arg)
        else:
            base, index = self.pointer_value(target)
        ct = self.vars[base]
        if ct.space not in ("global", "shared"):
            raise self.error(target, "an atomic needs global or shared memory")
        vals = [self.convert(self.expr(a), a, ct.dtype) for a in args[1:]]
        return ast.Call(ast.Name(f"_Catomic_{op}"), [ast.Name(base), index] + vals, [])

    def device_call(self, node, name, args, targs_node):
        fn = self.unit.device_function(name, targs_node, self, node)
        if fn is None:
            raise self.error(node, f"`{name}` is not a __device__ function of this file (or a built-in the front end knows)")
        lowered = fn.lowering
        out = []
        for a, (cname, ct) in zip(args, lowered.params):
            if ct.kind == "ptr":
                base, off = self.pointer_value(a)
                if self.vars[base].dtype != ct.dtype:
                    raise self.error(a, f"{name}'s parameter {cname} is a {ct.c()}, passed a {self.vars[base].c()}")
                out += [ast.Name(base), self.cast(off, I64)]
            else:
                out.append(self.convert(self.expr(a), a, ct.dtype))
        if len(args) != len(lowered.params):
            raise self.error(node, f"{name} takes {len(lowered.params)} arguments, called with {len(args)}")
        ret = ast.Call(ast.Name(fn.pyname), out, [])
        return ret
