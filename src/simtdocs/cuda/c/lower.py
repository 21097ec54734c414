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
  the dynamic one, ``T a[N]`` a local array (``= {…}``: its elements, then zeros);
  ``__syncthreads``, atomics, shuffles, votes, ``__popc`` … the dialect's intrinsics;
* ``switch`` is an if/elif chain (a run of cases joined by fall-through is one arm, each
  case's statements guarded by "entered here or earlier"; ``default`` the ``else``);
* structs (``structs.py``): one variable per member (``p.x`` is ``p__x``), array members local
  arrays; a struct argument is a numpy structured scalar, split into its members; vector
  types (``float4``, ``uint4``, ``int2`` …, ``make_*``, ``.x .y .z .w``): a whole vector in
  memory is read or written by ONE access of 8 or 16 bytes per lane (``cuda.vload``/``vstore``:
  ``blk.load(…, width=4)``), ``reinterpret_cast<float4 *>(p)`` a view of ``p`` four elements
  a step; a ``__device__`` function returning one writes it into a local array the caller passes;
* references: ``T &r = a[i]`` names the element (every use of ``r`` reads or writes
  ``a[i]``), ``T &r = x`` the variable; a ``T &`` parameter takes an array and an offset like a
  pointer (a local variable passed to one goes through a one-element local array, copied back);
* ``for (int i = a; i < b; i += c)`` with bounds the same for every thread by their form is
  the dialect's counted loop (``range``): its test is no branch, inside divergent code too;
* ``__half`` arithmetic in half (``arith``), ``half2`` member by member; ``printf`` lines
  printed after each pass in block and thread order; ``__shfl*_sync`` with a ``width``;
  ``tiled_partition<N>`` tiles; ``cg::reduce`` as a ``shfl_xor`` butterfly;
* ``c ? a : b`` on a per-thread ``c`` is ``cuda.select`` (each side run for its own lanes, its
  loads masked: no branch, as nvcc predicates it); ``&&``/``||`` are the dialect's ``and``/``or``
  (a right side that loads is behind a counted branch; ``PREDICATED_SHORT_CIRCUIT`` flips it);
  a condition known at compile time (``blockSize >= 512``) folds as C evaluates it;
* a kernel's array argument read as another type (``reinterpret_cast<const uint4 *>(bytes)``) is
  a numpy view of it, passed as a hidden parameter (same allocation: same addresses);
* ``i++`` inside an expression is a statement before it (not after ``&&``/``||`` or in ``?:``);
  file-scope ``const int N = …;`` and typedefs are names for their values and types.

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
from .structs import HALF2_OPS, Struct, StructArg, vector_types

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
    """A C type: ``scalar`` (dtype), ``ptr`` (to dtype, in ``space``), ``array`` (dtype, shape, space),
    ``struct`` (``struct``: a ``structs.Struct``), ``ref`` (a reference to an element: dtype, space).
    A pointer to or an array of a vector type (``float4 *``) has the vector's member type as
    ``dtype`` and the vector as ``struct``: each vector is ``struct.width`` elements."""

    def __init__(self, kind, dtype=None, shape=None, space="global", struct=None):
        self.kind, self.dtype, self.shape, self.space = kind, (np.dtype(dtype) if dtype is not None else None), shape, space
        self.struct = struct

    def c(self) -> str:
        if self.struct is not None:
            base = self.struct.name
        else:
            base = C_NAMES.get(self.dtype, str(self.dtype)) if self.dtype is not None else "void"
        return base + (" *" if self.kind == "ptr" else "[]" if self.kind == "array" else " &" if self.kind == "ref" else "")

    def __repr__(self):
        return f"CType({self.c()})"


# the markers and types the lowered tree names (its namespace)
NAMESPACE = {
    "_Ctid": I.threadIdx, "_Cbid": I.blockIdx, "_Cbdim": I.blockDim, "_Cgdim": I.gridDim,
    "_Cshared": I.shared.array, "_Clocal": I.local.array, "_Cconst": I.const.array_like,
    **{f"_C{name}": f for name, f in I.functions.items()},
    **{f"_Catomic_{name}": getattr(I.atomic, name) for name in ("add", "sub", "max", "min", "exch", "cas", "and_", "or_",
                                                                 "xor", "inc", "dec")},
    "_Cmin": min, "_Cmax": max, "_Cabs": abs, "range": range,
}
for _dt in C_NAMES:
    NAMESPACE[f"_C{_dt.name}"] = _dt.type
for _m in ("sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "floor", "ceil", "fabs", "pow", "log2", "exp2",
           "atan2", "atan", "asin", "acos", "log10", "erf", "trunc", "fmod", "hypot", "sinh", "cosh", "copysign",
           "log1p", "expm1", "isnan", "isinf", "isfinite"):
    if hasattr(math, _m):
        NAMESPACE[f"_Cmath_{_m}"] = getattr(math, _m)


VECTORS = vector_types(CType)
NAMESPACE["_Cvload"] = I.vload
NAMESPACE["_Cvstore"] = I.vstore
NAMESPACE["_Cprintf"] = I.printf
NAMESPACE["_Cselect"] = I.select
NAMESPACE["_Cbitcast"] = I.bitcast


def dname(dt: np.dtype) -> str:
    return f"_C{np.dtype(dt).name}"


I32, U32, I64, U64 = (np.dtype(t) for t in (np.int32, np.uint32, np.int64, np.uint64))
U8 = np.dtype(np.uint8)
F32, F64, BOOL = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.bool_)
F16 = np.dtype(np.float16)
#: cuda_fp16.h's __half functions: name -> operator (computed in half: one rounding of the exact result)
HALF_OPS = {"__hadd": "+", "__hsub": "-", "__hmul": "*", "__hdiv": "/", "__hadd_rn": "+", "__hsub_rn": "-",
            "__hmul_rn": "*"}
HALF_COMPARES = {"__hlt": "<", "__hle": "<=", "__hgt": ">", "__hge": ">=", "__heq": "==", "__hne": "!="}
#: half2 functions that return one half or float of a half2, or a float2
HALF2_PARTS = {"__low2float": ("x", F32), "__high2float": ("y", F32), "__low2half": ("x", F16),
               "__high2half": ("y", F16)}

BINOPS = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "%": ast.Mod, "<<": ast.LShift,
          ">>": ast.RShift, "&": ast.BitAnd, "|": ast.BitOr, "^": ast.BitXor}
COMPARES = {"<": ast.Lt, "<=": ast.LtE, ">": ast.Gt, ">=": ast.GtE, "==": ast.Eq, "!=": ast.NotEq}
ATOMICS = {"atomicAdd": "add", "atomicSub": "sub", "atomicMax": "max", "atomicMin": "min", "atomicExch": "exch",
           "atomicCAS": "cas", "atomicAdd_block": "add", "atomicAdd_system": "add", "atomicAnd": "and_",
           "atomicOr": "or_", "atomicXor": "xor", "atomicInc": "inc", "atomicDec": "dec"}
ATOMICS.update({f"{k}_{scope}": v for k, v in list(ATOMICS.items()) if "_" not in k for scope in ("block", "system")})
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
#: ``a && b[i]``: True lowers a right side that loads or calls as a predicated select on the left
#: side (``cuda.select(a, b, False)``: one branch for an ``if`` of it, as nvcc often emits); False
#: keeps C's short circuit as the dialect's ``and`` (a second, counted branch around the load),
#: so that C and the dialect count the same kernel alike. ``c ? a : b`` is always the select.
PREDICATED_SHORT_CIRCUIT = False
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
        self.specialization = None  # the arguments an explicit specialization names (`f<int>`)


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
        if name_node is not None and name_node.type == "template_function":
            # an explicit specialization, `template <> __device__ int f<int>(int)`: kept with the
            # primary template's name, chosen for the instance whose arguments it names
            base = text(name_node.child_by_field_name("name"))
            args = name_node.child_by_field_name("arguments")
            info = FunctionInfo(fn, kind, base, template, extern_c)
            info.specialization = [text(a) for a in args.named_children] if args is not None else []
            out.setdefault(base, []).append(info)
            return
        out.setdefault(text(name_node), []).append(FunctionInfo(fn, kind, text(name_node), template, extern_c))

    visit(root)
    return out


def scan_typedefs(root) -> dict:
    """``typedef unsigned int uint;``, ``typedef uint4 data_t;``: name -> the aliased type node
    (typedefs of a struct defined in place are ``scan_structs``')."""
    out = {}

    def visit(node):
        for c in node.children:
            if c.type == "type_definition":
                t = c.child_by_field_name("type")
                d = c.child_by_field_name("declarator")
                if t is not None and d is not None and d.type == "type_identifier" and not (
                        t.type == "struct_specifier" and t.child_by_field_name("body") is not None):
                    out[text(d)] = t
            elif c.type in ("namespace_definition", "linkage_specification", "declaration_list"):
                visit(c.child_by_field_name("body") or c)

    visit(root)
    return out


def scan_structs(root) -> dict:
    """The file's plain struct definitions by name (``struct P {…};``, ``typedef struct {…} P;``);
    a struct with member functions (``SharedMemory<T>``) is not a plain one and is left out."""
    out = {}

    def body_ok(spec):
        body = spec.child_by_field_name("body")
        return body is not None and all(c.type in ("field_declaration", "comment", "{", "}") for c in body.children)

    def visit(node):
        for c in node.children:
            if c.type == "struct_specifier" and body_ok(c) and c.child_by_field_name("name") is not None:
                out[text(c.child_by_field_name("name"))] = c
            elif c.type == "type_definition":
                t = c.child_by_field_name("type")
                d = c.child_by_field_name("declarator")
                if t is not None and t.type == "struct_specifier" and body_ok(t) and d is not None and d.type == "type_identifier":
                    out[text(d)] = t
                    if t.child_by_field_name("name") is not None:
                        out[text(t.child_by_field_name("name"))] = t
            elif c.type == "declaration":
                t = c.child_by_field_name("type")
                if t is not None and t.type == "struct_specifier" and body_ok(t) and t.child_by_field_name("name") is not None:
                    out[text(t.child_by_field_name("name"))] = t
            elif c.type in ("namespace_definition", "linkage_specification", "declaration_list"):
                visit(c.child_by_field_name("body") or c)

    visit(root)
    return out


def scan_struct_templates(root) -> dict:
    """The file's struct templates with member functions (CUDA Samples' ``SharedMemory<T>``):
    name -> [(the arguments an explicit specialization names, or None for the primary
    template; its template parameter names; the struct node)]."""
    out: dict = {}

    def visit(node):
        for c in node.children:
            if c.type == "template_declaration":
                params = c.child_by_field_name("parameters")
                names = [text(p.named_children[-1]) for p in params.named_children
                         if p.type == "type_parameter_declaration"] if params is not None else []
                for k in c.named_children:
                    name = k.child_by_field_name("name") if k.type in ("struct_specifier", "class_specifier") else None
                    if name is None or k.child_by_field_name("body") is None:
                        continue
                    if name.type == "template_type":
                        args = name.child_by_field_name("arguments")
                        out.setdefault(text(name.child_by_field_name("name")), []).append(
                            ([text(a) for a in args.named_children] if args is not None else [], names, k))
                    else:
                        out.setdefault(text(name), []).append((None, names, k))
            elif c.type in ("namespace_definition", "linkage_specification", "declaration_list"):
                visit(c.child_by_field_name("body") or c)

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
        self.local_structs: dict = {}  # struct types defined inside the function
        self.local_typedefs: dict = {}
        self.aliases: dict = {}
        self.param_arrays: list = []  # a kernel's pointer parameters: (python name, CType)
        self.views: dict = {}  # (argument, dtype name) -> the hidden parameter holding its view
        self.view_of: dict = {}  # hidden view -> its argument
        self.virtual: dict = {}  # a shared/local array read as a wider type: the name -> (the array, elements per value)  # a counted loop's variable -> the range's hidden name (read as a cast of it)
        self.leafnames: dict = {}  # struct variable -> {member path: python name}
        self.refs: dict = {}  # reference variable -> (base array, names holding its index)
        self.lazy = 0  # inside the right side of && / || or an arm of ?: (evaluated for some threads only)
        self.pre: list = []  # statements the statement being lowered needs first (vector loads, reference copies)
        self.post: list = []  # and after it (a local variable passed by reference, copied back)

    # -- errors and positions ---------------------------------------------------------------------

    def error(self, node, what) -> CompileError:
        filename, line = self.unit.where(node.start_point.row)  # an -I header's construct: its own file and line
        col = node.start_point.column + 1
        src = self.unit.line(line, filename)
        return CompileError(f"{filename}:{line}:{col}: {self.info.name}: {what} (line {line}: {src})").at(
            site=(filename, line))

    def unsupported(self, node, what=None):
        return self.error(node, f"{what or node.type.replace('_', ' ')} is not supported "
                                f"(`{text(node)[:60]}`)")

    def at(self, pynode, node):
        line = self.unit.where(node.start_point.row)[1]
        for n in ast.walk(pynode):
            if not hasattr(n, "lineno") or getattr(n, "_c", False):
                n.lineno = n.end_lineno = line
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
        if cname in getattr(self.unit, "refused", {}):  # a file-scope variable outside the subset
            raise self.unit.refused[cname]
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
        alias = self.unit.typedefs.get(name) or self.local_typedefs.get(name)
        if alias is not None:
            return self.base_type(node, alias)
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
        if t == "update_expression":
            return self.static_type(node.child_by_field_name("argument"))
        if t == "call_expression" and self.tile_size_call(node) is not None:
            return U32
        if t == "call_expression" and self.functional_cast(node) is not None:
            return self.functional_cast(node)
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
                if py in getattr(self, "scalar_shared", ()):
                    return ct.dtype  # a __shared__ (or __device__) scalar: a value of its type
                return ct.dtype if ct.kind in ("scalar", "ref") else None
            if text(node) in self.targs and isinstance(self.targs[text(node)], int):
                return I32
            if text(node) in self.unit.consts:
                return self.unit.consts[text(node)][0]
            if text(node) == "warpSize":
                return I32
            return None
        if t == "field_expression":
            base = node.child_by_field_name("argument")
            if base.type == "identifier" and text(base) in ("threadIdx", "blockIdx", "blockDim", "gridDim") \
                    and self.lookup(text(base)) is None:
                return U32
            try:
                m = self.member(node)
            except CompileError:
                return None
            return m[2].dtype if m[0] == "leaf" else m[3] if m[0] == "mem" else None
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
            if base.type == "field_expression":
                try:
                    m = self.member(base)
                except CompileError:
                    return None
                return m[2].dtype if m[0] == "array" else None
            return None
        if t == "cast_expression":
            tn = node.child_by_field_name("type")
            if tn.child_by_field_name("declarator") is not None or self.struct_of_type(
                    tn.child_by_field_name("type") or tn.named_children[0]) is not None:
                return None  # a pointer or a struct
            return self.base_type(node, tn.child_by_field_name("type") or tn.named_children[0])
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
        self.return_struct = self.struct_of_type(fn.child_by_field_name("type"))
        self.return_type = None if self.return_struct is not None else self.base_type(fn)
        if self.info.kind == "global" and (self.return_type is not None or self.return_struct is not None):
            raise self.error(fn, "a __global__ function returns void")
        args = []
        body_prefix = []
        moved = moved_names(fn.child_by_field_name("body"))
        for p in decl.child_by_field_name("parameters").named_children:
            if p.type == "variadic_parameter":
                raise self.unsupported(p, "a variadic parameter")
            if p.type not in ("parameter_declaration", "optional_parameter_declaration"):
                raise self.unsupported(p)
            group = self.group_type(p.child_by_field_name("type"))
            if group is not None:  # cg::thread_block cta: the block itself, no value to pass
                d = p.child_by_field_name("declarator")
                while d is not None and d.type == "reference_declarator":
                    d = d.named_children[-1]
                if d is None or d.type != "identifier":
                    raise self.unsupported(p, "this group parameter")
                self.declare(text(d), CType("group", shape=group))
                self.params.append((text(d), CType("group", shape=group)))
                continue
            st = self.struct_of_type(p.child_by_field_name("type"))
            if st is not None:
                args += self.struct_param(p, st, moved, body_prefix)
                continue
            dt = self.base_type(p)
            d = p.child_by_field_name("declarator")
            if d is None:
                if dt is None:
                    continue  # f(void)
                raise self.unsupported(p, "an unnamed parameter")
            kind = "scalar"
            if d.type == "reference_declarator":
                inner = d.named_children[-1]
                if inner.type != "identifier" or dt is None:
                    raise self.unsupported(d, "this reference parameter")
                cname = text(inner)
                if "const" in self.qualifiers(p) or self.info.kind == "global":
                    # a const T &: the value (nothing writes through it); a kernel's: its argument's value
                    ctype = CType("scalar", dt)
                    args.append(ast.arg(self.declare(cname, ctype)))
                    self.params.append((cname, ctype))
                    continue
                ctype = CType("ref", dt, space="any")
                py = self.declare(cname, ctype)
                off = self.fresh(f"{py}__off")
                self.vars[off] = CType("scalar", I64)
                self.refs[py] = (py, [off])
                self.params.append((cname, ctype))
                args += [ast.arg(py), ast.arg(off)]
                continue
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
        if self.return_struct is not None:  # returned through a local array the caller passes
            if self.return_struct.element is None:
                raise self.unsupported(fn, f"a __device__ function returning the struct {self.return_struct.name}")
            self.ret_array = self.fresh("_Cret")
            self.vars[self.ret_array] = CType("array", self.return_struct.element, [self.return_struct.width], "local")
            args.append(ast.arg(self.ret_array))
        self.param_arrays = [(a.arg, self.vars[a.arg]) for a in args if a.arg in self.vars and self.vars[a.arg].kind == "ptr"]
        body = self.compound(fn.child_by_field_name("body"), new_scope=False)
        index = {self.scopes[0].get(c): k for k, (c, _) in enumerate(self.params)}
        self.view_args = []  # (index of the C parameter, dtype): the launch passes these views last
        for (root, dtname), hidden in self.views.items():  # the views the body reads, after the C parameters
            if hidden in self.virtual:
                continue
            args.append(ast.arg(hidden))
            self.view_args.append((index[root], np.dtype(dtname)))
        fdef = ast.FunctionDef(name=self.info.name, args=ast.arguments(posonlyargs=[], args=args, vararg=None,
                               kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
                               body=body_prefix + (body or [ast.Pass()]), decorator_list=[], returns=None,
                               type_params=[])
        self.at(fdef, fn)
        for n in ast.walk(fdef):
            if isinstance(n, (ast.Name, ast.Subscript, ast.Attribute, ast.Tuple)) and not hasattr(n, "ctx"):
                n.ctx = ast.Load()
        return fdef

    def struct_param(self, p, st, moved, body_prefix) -> list:
        """A struct parameter (one argument per member: ``p__x`` …) or a pointer to vectors."""
        d = p.child_by_field_name("declarator")
        if d is None:
            raise self.unsupported(p, "an unnamed parameter")
        if d.type == "reference_declarator":
            if "const" not in self.qualifiers(p) and self.info.kind == "device":
                raise self.unsupported(d, "a reference to a struct (pass it by value or as const &)")
            d = d.named_children[-1]
        if d.type == "pointer_declarator":
            inner = d.child_by_field_name("declarator")
            if inner.type != "identifier":
                raise self.unsupported(d, "a pointer to a pointer")
            if st.element is None:
                raise self.unsupported(p, f"a pointer to the struct {st.name} (only to vector types like float4)")
            cname = text(inner)
            ctype = CType("ptr", st.element, struct=st)
            py = self.declare(cname, ctype)
            self.params.append((cname, ctype))
            out = [ast.arg(py)]
            off = None
            if self.info.kind == "device":
                off = self.fresh(f"{py}__off")
                out.append(ast.arg(off))
            elif cname in moved:
                off = self.fresh(f"{py}__off")
                body_prefix.append(self.at(ast.Assign([ast.Name(off, ast.Store())], self.typed(0, I64)), p))
            self.ptr[py] = (py, off)
            return out
        if d.type != "identifier":
            raise self.unsupported(d, "this parameter")
        if any(ct.kind != "scalar" for _, ct in st.leaves()):
            raise self.unsupported(p, f"a parameter of the struct {st.name}, which has an array member")
        cname = text(d)
        py, leaves = self.declare_struct(cname, st)
        self.params.append((cname, CType("struct", struct=st)))
        return [ast.arg(self.leafnames[py][path]) for path, _ in leaves]

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
        saved = self.pre, self.post
        self.pre, self.post = [], []
        try:
            out = self._stmt(node)
            if self.post and node.type == "return_statement":
                raise self.unsupported(node, "a return whose value passes a local variable by reference")
            return self.pre + out + self.post
        finally:
            self.pre, self.post = saved

    def _stmt(self, node) -> list:
        t = node.type
        if t == "struct_specifier" or (t == "declaration" and node.child_by_field_name("declarator") is None
                                       and node.child_by_field_name("type") is not None
                                       and node.child_by_field_name("type").type == "struct_specifier"):
            self.struct_of_type(node if t == "struct_specifier" else node.child_by_field_name("type"))
            return []
        if t == "compound_statement":
            return self.compound(node)
        if t == "type_definition":  # a typedef inside the function
            tn, d = node.child_by_field_name("type"), node.child_by_field_name("declarator")
            if tn.type == "struct_specifier" and tn.child_by_field_name("body") is not None:
                self.local_structs[text(d)] = self.define_struct(text(d), tn)
            else:
                self.local_typedefs[text(d)] = tn
            return []
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
            cond = self.loop_cond(node.child_by_field_name("condition"))
            self.loops.append(None)
            self.scopes.append({})
            body = self.stmt(node.child_by_field_name("body"))
            self.scopes.pop()
            self.loops.pop()
            return [self.at(ast.While(cond, body or [ast.Pass()], []), node)]
        if t == "do_statement":
            # `do body while (c)` is `while True: body; if !c: break`, and a `continue` in the body
            # goes to the test: the test is copied before it, as a for loop's step is (the test sees
            # only names declared outside the body, so it is lowered first)
            c = node.child_by_field_name("condition")
            test = self.at(ast.If(ast.UnaryOp(ast.Not(), self.loop_cond(c)), [self.at(ast.Break(), c)], []), c)
            self.loops.append([test])
            self.scopes.append({})
            body = self.stmt(node.child_by_field_name("body"))
            self.scopes.pop()
            self.loops.pop()
            return [self.at(ast.While(ast.Constant(True), body + [test], []), node)]
        if t == "break_statement":
            return [self.at(ast.Break(), node)]
        if t == "continue_statement":
            if not self.loops:
                raise self.error(node, "continue outside a loop")
            step = [self.clone(s, node) for s in (self.loops[-1] or [])]
            return step + [self.at(ast.Continue(), node)]
        if t == "return_statement" and getattr(self, "return_struct", None) is not None:
            if not node.named_children:
                raise self.error(node, f"{self.info.name} returns a {self.return_struct.name}")
            pre, values = self.struct_rvalue(node.named_children[0], self.return_struct)
            stores = [self.at(ast.Assign([ast.Subscript(ast.Name(self.ret_array), self.typed(k, I32), ast.Store())],
                                         self.convert(v, None, self.return_struct.element)), node)
                      for k, v in enumerate(values)]
            return pre + stores + [self.at(ast.Return(None), node)]
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
            return self.switch(node)
        if t == "goto_statement" or t == "labeled_statement":
            raise self.unsupported(node, "goto")
        raise self.unsupported(node)

    def switch(self, node) -> list:
        """``switch (e) { case …: … }`` as an if/elif chain on ``e`` (kept in a fresh variable).

        Each run of cases joined by fall-through (a case whose statements do not end in
        ``break``/``return`` runs on into the next) is one arm: its statements run once, each
        case's part for the lanes that entered at that case or an earlier one of the arm, so
        no statement runs twice for one warp. The arm with ``default`` is the ``else``. A
        switch whose cases all end in ``break`` is exactly ``if (e == a) … else if (e == b) …
        else …``: the same branches, counted the same way. A ``break`` that is not the last
        statement of its case (inside an ``if`` of the case) is refused."""
        cond = node.child_by_field_name("condition")
        inner = [c for c in cond.named_children if c.type != "comment"]
        if len(inner) != 1:
            raise self.unsupported(cond, "a declaration in a switch condition")
        value_node = inner[0]
        vt = self.static_type(value_node)
        if vt is None or vt.kind not in "biu":
            vt = I32 if vt is None else vt
            if vt.kind not in "biu":
                raise self.error(value_node, "a switch needs an integer value")
        vt = arith.promote(vt)
        self.scopes.append({})  # one scope for the whole body, as in C
        out = []
        sw = self.fresh("_Csw")
        self.vars[sw] = CType("scalar", vt)
        out.append(self.at(ast.Assign([ast.Name(sw, ast.Store())], self.convert(self.expr(value_node), value_node, vt)),
                           value_node))
        body = node.child_by_field_name("body")
        segments = []  # [labels (list of ints, None for default), statement nodes, case node]
        for c in body.named_children:
            if c.type == "comment":
                continue
            if c.type != "case_statement":
                if not segments:
                    continue  # statements before the first label never run
                segments[-1][1].append(c)
                continue
            value = c.child_by_field_name("value")
            label = None if value is None else self.const_int(value)
            kids = c.named_children[1:] if value is not None else c.named_children
            stmts = [s for s in kids if s.type != "comment"]
            segments.append([[label], stmts, c])
        # a label with no statements of its own joins the next case's labels
        merged = []
        pending = []
        for labels, stmts, c in segments:
            pending += labels
            if stmts or c == segments[-1][2]:
                merged.append([pending, stmts, c])
                pending = []
        seen = set()
        for labels, _, c in merged:
            for v in labels:
                if v in seen:
                    raise self.error(c, f"duplicate case value {'default' if v is None else v}")
                seen.add(v)
        case_values = sorted(v for v in seen if v is not None)

        def last_of(n):  # `case 1: { …; break; }`: the braces' last statement
            while n.type == "compound_statement" and [k for k in n.named_children if k.type != "comment"]:
                n = [k for k in n.named_children if k.type != "comment"][-1]
            return n

        def ends(stmts):
            return bool(stmts) and last_of(stmts[-1]).type in ("break_statement", "return_statement")

        def lower_tail(n):  # a case's last statement, its final break dropped
            if n.type == "break_statement":
                return []
            if n.type != "compound_statement" or last_of(n).type != "break_statement":
                check_breaks(n)
                return self.stmt(n)
            kids = [k for k in n.named_children if k.type != "comment"]
            self.scopes.append({})
            got = []
            for k in kids[:-1]:
                check_breaks(k)
                got += self.stmt(k)
            got += lower_tail(kids[-1])
            self.scopes.pop()
            return got

        def check_breaks(n):
            for k in n.named_children:
                if k.type in ("for_statement", "while_statement", "do_statement", "switch_statement"):
                    continue
                if k.type == "break_statement":
                    raise self.unsupported(k, "a break inside an if of a case (write the case's rest as an else)")
                check_breaks(k)

        arms, cur = [], []
        for seg in merged:
            cur.append(seg)
            if ends(seg[1]):
                arms.append(cur)
                cur = []
        if cur:
            arms.append(cur)

        def is_label(v, labels):
            if None in labels:  # default: none of the switch's other values
                others = [x for x in case_values if x not in labels]
                if not others:
                    return self.at(ast.Constant(True), node)
                return ast.UnaryOp(ast.Not(), is_label(v, others))
            tests = [ast.Compare(ast.Name(sw), [ast.Eq()], [self.typed(x, vt)]) for x in labels]
            return tests[0] if len(tests) == 1 else ast.BoolOp(ast.Or(), tests)

        def arm_body(arm, whole):
            stmts = []
            for k, (labels, seg, c) in enumerate(arm):
                lowered = []
                for j, s in enumerate(seg):
                    if j == len(seg) - 1:
                        lowered += lower_tail(s)
                    elif s.type == "break_statement":
                        raise self.unsupported(s, "a statement after a break (unreachable code) in a case")
                    else:
                        check_breaks(s)
                        lowered += self.stmt(s)
                entered = [v for lab, _, _ in arm[:k + 1] for v in lab]  # lanes that entered here or earlier
                if not lowered:
                    continue
                if set(entered) >= set(whole):
                    stmts += lowered
                else:
                    stmts.append(self.at(ast.If(is_label(sw, entered), lowered, []), c))
            return stmts

        default_arm = next((a for a in arms if any(None in lab for lab, _, _ in a)), None)
        result = arm_body(default_arm, [v for lab, _, _ in default_arm for v in lab]) if default_arm else []
        for arm in reversed([a for a in arms if a is not default_arm]):
            whole = [v for lab, _, _ in arm for v in lab]
            body_stmts = arm_body(arm, whole)
            result = [self.at(ast.If(is_label(sw, whole), body_stmts or [ast.Pass()], result), arm[0][2])]
        self.scopes.pop()
        return out + result

    def clone(self, stmt, node):
        import copy
        s = copy.deepcopy(stmt)
        for n in ast.walk(s):
            for a in ("lineno", "end_lineno", "col_offset", "end_col_offset"):
                if hasattr(n, a):
                    delattr(n, a)
        return self.at(s, node)

    def uniform_names(self, node, loop_var=None) -> bool:
        """Whether expression ``node`` is the same for every thread by its form: literals, template
        and file constants, ``blockDim``/``gridDim``/``warpSize``, ``sizeof``, a tile's ``size()``,
        a kernel's scalar parameters, and arithmetic on them (``loop_var`` excluded)."""
        t = node.type
        if t == "identifier":
            name = text(node)
            if name == loop_var:
                return False
            py = self.lookup(name)
            if py is None:
                return name in ("blockDim", "gridDim", "warpSize") or name in self.targs or name in self.unit.consts
            # a local variable (or a device function's parameter) may differ per thread
            return self.info.kind == "global" and self.scopes[0].get(name) == py and \
                name in {c for c, ct in self.params if ct.kind == "scalar"}
        if t == "call_expression":
            return self.tile_size_call(node) is not None
        if t in ("update_expression", "assignment_expression", "subscript_expression", "pointer_expression"):
            return False
        if t == "field_expression":
            base = node.child_by_field_name("argument")
            return base.type == "identifier" and text(base) in ("blockDim", "gridDim") and self.lookup(text(base)) is None
        if t == "sizeof_expression":
            return True
        return all(self.uniform_names(c, loop_var) for c in node.named_children)

    def counted_loop(self, node):
        """A C ``for`` whose counter takes the same values in every thread: one ``int``/``unsigned``
        counter declared in the init, a ``<``/``<=``/``>``/``>=`` test against a bound, a step
        ``++``/``--``/``+= c``/``-= c`` (or ``*= c``, ``/= c``, ``<<= c``, ``>>= c`` when every value
        is known here), the start, bound and step the same for every thread by their form, and
        nothing in the body assigning the counter or what the bound and step read. Such a loop
        is the dialect's counted loop (``for _ in range(a, b, c)``, or over the known values), whose
        test is no branch wherever it stands (a uniform ``while`` inside divergent code would be
        counted). Returns the loop's form, or None (the loop stays C's while)."""
        init, cond, update = (node.child_by_field_name(f) for f in ("initializer", "condition", "update"))
        if init is None or cond is None or update is None or init.type != "declaration":
            return None
        decls = init.children_by_field_name("declarator")
        if len(decls) != 1 or decls[0].type != "init_declarator":
            return None
        var = decls[0].child_by_field_name("declarator")
        if var.type != "identifier":
            return None
        name = text(var)
        try:
            dt = self.base_type(init)
        except CompileError:
            return None
        if dt is None or dt.kind not in "iu":
            return None
        start = decls[0].child_by_field_name("value")
        if cond.type != "binary_expression" or text(cond.child_by_field_name("left")) != name:
            return None
        op = text(cond.child_by_field_name("operator"))
        bound = cond.child_by_field_name("right")
        if op not in ("<", "<=", ">", ">="):
            return None
        step, how = None, "+"
        if update.type == "update_expression" and text(update.child_by_field_name("argument")) == name:
            how = "+" if "++" in text(update) else "-"
        elif update.type == "assignment_expression" and text(update.child_by_field_name("left")) == name:
            how = text(update.child_by_field_name("operator"))[:-1]
            step = update.child_by_field_name("right")
            if how not in ("+", "-", "*", "/", "<<", ">>"):
                return None
        else:
            return None
        if not all(self.uniform_names(x, name) for x in (start, bound) + ((step,) if step is not None else ())):
            return None
        body = node.child_by_field_name("body")
        changed = moved_names(body)
        used = {text(n) for x in (bound, step) if x is not None for n in _walk(x) if n.type == "identifier"}
        if name in changed or used & changed or any(n.type == "pointer_expression" and text(n.children[0]) == "&"
                                                    and text(n.child_by_field_name("argument")) == name
                                                    for n in _walk(body)):
            return None
        st, bt = self.static_type(start), self.static_type(bound)
        if st is None or bt is None or st.kind not in "iu" or bt.kind not in "iu":
            return None
        a, b, k = self.known(start), self.known(bound), (1 if step is None else self.known(step))
        if how in ("*", "/", "<<", ">>"):  # a geometric counter: its values, when they are known here
            if a is None or b is None or k is None:
                return None
            values, v = [], a
            test = {"<": lambda x: x < b, "<=": lambda x: x <= b, ">": lambda x: x > b, ">=": lambda x: x >= b}[op]
            while test(v) and len(values) <= 64:
                values.append(v)
                nxt = {"*": v * k, "/": int(v / k) if k else v, "<<": v << k, ">>": v >> k}[how]
                if nxt == v:
                    return None  # C would loop forever
                v = nxt
            if len(values) > 64 or any(not (-(2**31) <= x < 2**31) for x in values):
                return None
            return var, dt, ("values", values)
        if k is None or k <= 0:
            return None  # a step whose sign is not known here
        sign = 1 if how == "+" else -1
        if (sign > 0) != (op in ("<", "<=")):
            return None
        if arith.common(dt, bt).kind != "i":  # an unsigned comparison: range's when no value is negative
            if (a is None and st.kind != "u") or (a is not None and a < 0) or \
                    (b is None and bt.kind != "u") or (b is not None and b < 0):
                return None
        return var, dt, ("range", start, bound, op, step, sign)

    def range_for(self, node, form) -> list:
        var, dt, how = form
        self.scopes.append({})
        hidden = self.fresh(f"_C{text(var)}")
        self.vars[hidden] = CType("scalar", I64)
        if how[0] == "values":
            it = ast.Tuple([self.typed(v, I64) for v in how[1]], ast.Load())
        else:
            _, start, bound, op, step, sign = how
            wide = lambda n: self.cast(self.expr(n), I64)  # noqa: E731
            stop = wide(bound)
            if op in ("<=", ">="):
                stop = ast.BinOp(stop, ast.Add() if op == "<=" else ast.Sub(), self.typed(1, I64))
            k = self.typed(1, I64) if step is None else wide(step)
            if sign < 0:
                k = ast.UnaryOp(ast.USub(), k)
            it = ast.Call(ast.Name("range"), [wide(start), stop, k], [])
        py = self.declare(text(var), CType("scalar", dt))
        # every read of i is the loop's value in i's C type (nothing assigns i in the body): an
        # expression of a uniform value, so the dialect keeps it uniform, as its own range loops
        self.aliases[py] = hidden
        self.loops.append([])  # a continue moves on to the next value, as C's step would
        self.scopes.append({})
        body = self.stmt(node.child_by_field_name("body"))
        self.scopes.pop()
        self.loops.pop()
        self.scopes.pop()
        loop = ast.For(ast.Name(hidden, ast.Store()), it, body or [ast.Pass()], [])
        return [self.at(loop, node)]

    def for_(self, node) -> list:
        form = self.counted_loop(node)
        if form is not None:
            return self.range_for(node, form)
        self.scopes.append({})
        out = []
        init = node.child_by_field_name("initializer")
        if init is not None:
            out += self.declaration(init) if init.type == "declaration" else self.expr_stmt(init)
        cond_node = node.child_by_field_name("condition")
        cond = self.loop_cond(cond_node) if cond_node is not None else self.at(ast.Constant(True), node)
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
        tnode = node.child_by_field_name("type")
        if tnode is not None and tnode.type == "template_type" and \
                text(tnode.child_by_field_name("name")) in self.unit.struct_templates:
            return self.template_object_decl(node, tnode)
        st = self.struct_of_type(tnode)
        if st is not None:
            return self.struct_declaration(node, st, quals)
        dt = self.base_type(node)
        out = []
        for d in node.children_by_field_name("declarator"):
            value = None
            if d.type == "init_declarator":
                value = d.child_by_field_name("value")
                d = d.child_by_field_name("declarator")
            kind, dims = "scalar", []
            if d.type == "reference_declarator":
                out += self.reference_decl(node, text(d.named_children[-1]), dt, value)
                continue
            while d.type in ("pointer_declarator", "array_declarator", "reference_declarator"):
                if d.type == "reference_declarator":
                    raise self.unsupported(d, "a reference to a pointer or an array")
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
        if group != "block" and (not group[4:].isdigit() or int(group[4:]) not in (1, 2, 4, 8, 16, 32)):
            raise self.unsupported(node, f"a tile of {group[4:]} threads (tiled_partition<N>, N a power of 2 up to 32)")
        for d in node.children_by_field_name("declarator"):
            if d.type != "init_declarator":
                raise self.error(d, "a group must be initialised (cg::this_thread_block(), cg::tiled_partition<32>(g))")
            value = d.child_by_field_name("value")
            v = " ".join(text(value).split()).replace("cooperative_groups::", "").replace("cg::", "")
            if group == "block" and v != "this_thread_block()":
                raise self.unsupported(value, "this group (only this_thread_block())")
            if group != "block" and not v.replace(" ", "").startswith(f"tiled_partition<{group[4:]}>("):
                raise self.unsupported(value, f"this tile (tiled_partition<{group[4:]}>(block))")
            self.declare(text(d.child_by_field_name("declarator")), CType("group", shape=group))
        return []

    def linear_tid(self):
        tid = lambda a: self.cast(ast.Attribute(ast.Name("_Ctid"), a), U32)  # noqa: E731
        dim = lambda a: self.cast(ast.Attribute(ast.Name("_Cbdim"), a), U32)  # noqa: E731
        return ast.BinOp(tid("x"), ast.Add(), ast.BinOp(ast.BinOp(tid("y"), ast.Add(), ast.BinOp(tid("z"), ast.Mult(),
                         dim("y"))), ast.Mult(), dim("x")))

    def group_call(self, node, group, method, args):
        full = self.typed(0xFFFFFFFF, U32)
        n = 0 if group == "block" else int(group[4:])
        if method == "sync":
            return ast.Call(ast.Name("_Csyncthreads" if group == "block" else "_Csyncwarp"), [], [])
        if method == "thread_rank":
            return self.linear_tid() if group == "block" else ast.BinOp(self.linear_tid(), ast.BitAnd(),
                                                                        self.typed(n - 1, U32))
        if method in ("size", "num_threads"):
            if group == "block":
                dim = lambda a: self.cast(ast.Attribute(ast.Name("_Cbdim"), a), U32)  # noqa: E731
                return ast.BinOp(ast.BinOp(dim("x"), ast.Mult(), dim("y")), ast.Mult(), dim("z"))
            return self.typed(n, U32)
        if group != "block" and method in ("meta_group_rank",):
            return ast.BinOp(self.linear_tid(), ast.RShift(), self.typed(n.bit_length() - 1, U32))
        if group != "block" and method == "meta_group_size":  # the tiles the block was cut into: ceil(size / n)
            dim = lambda a: self.cast(ast.Attribute(ast.Name("_Cbdim"), a), U32)  # noqa: E731
            size = ast.BinOp(ast.BinOp(dim("x"), ast.Mult(), dim("y")), ast.Mult(), dim("z"))
            return ast.BinOp(ast.BinOp(size, ast.Add(), self.typed(n - 1, U32)), ast.RShift(),
                             self.typed(n.bit_length() - 1, U32))
        if group != "block" and method in ("shfl_down", "shfl_up", "shfl_xor", "shfl"):
            name = {"shfl": "shfl_sync", "shfl_down": "shfl_down_sync", "shfl_up": "shfl_up_sync",
                    "shfl_xor": "shfl_xor_sync"}[method]
            return self.shuffle(name, full, self.expr(args[0]), args[1], None if n == 32 else self.typed(n, U32))
        if group == "tile32" and method in ("any", "all", "ballot"):
            return ast.Call(ast.Name(f"_C{method}_sync"), [full, self.truth(args[0])], [])
        raise self.unsupported(node, f"the group method .{method}()")

    def lane(self):
        return ast.BinOp(self.linear_tid(), ast.BitAnd(), self.typed(31, U32))

    def shuffle(self, name, mask, value, arg_node, width):
        """``__shfl*_sync(mask, v, arg[, width])``. With a width below 32 the warp is segments of
        ``width`` lanes (CUDA's definition): ``shfl`` reads lane ``arg % width`` of the caller's
        segment, ``shfl_up``/``shfl_down`` keep the caller's own value where the source would
        leave its segment, ``shfl_xor`` where it would land in a later one. That is one
        ``__shfl_sync`` from a source lane computed here (one shuffle instruction, as on the GPU)."""
        arg = self.expr(arg_node)
        if width is None:
            return ast.Call(ast.Name("_C" + name), [mask, value, arg], [])
        import copy
        lane = self.lane()
        w1 = ast.BinOp(copy.deepcopy(width), ast.Sub(), self.typed(1, U32))
        seg = ast.BinOp(copy.deepcopy(lane), ast.BitAnd(), ast.UnaryOp(ast.Invert(), copy.deepcopy(w1)))  # segment start
        inside = ast.BinOp(copy.deepcopy(lane), ast.BitAnd(), copy.deepcopy(w1))  # lane in its segment
        a = self.cast(arg, U32)
        if name == "shfl_sync":
            src = ast.BinOp(seg, ast.Add(), ast.BinOp(a, ast.BitAnd(), w1))
        elif name == "shfl_down_sync":
            src = ast.IfExp(ast.Compare(ast.BinOp(inside, ast.Add(), a), [ast.Lt()], [copy.deepcopy(width)]),
                            ast.BinOp(copy.deepcopy(lane), ast.Add(), copy.deepcopy(a)), copy.deepcopy(lane))
        elif name == "shfl_up_sync":
            src = ast.IfExp(ast.Compare(inside, [ast.GtE()], [a]),
                            ast.BinOp(copy.deepcopy(lane), ast.Sub(), copy.deepcopy(a)), copy.deepcopy(lane))
        else:
            x = ast.BinOp(copy.deepcopy(lane), ast.BitXor(), a)
            src = ast.IfExp(ast.Compare(x, [ast.Lt()], [ast.BinOp(seg, ast.Add(), copy.deepcopy(width))]),
                            copy.deepcopy(x), copy.deepcopy(lane))
        return ast.Call(ast.Name("_Cshfl_sync"), [mask, value, src], [])

    def cg_reduce(self, node, args):
        """``cg::reduce(tile, v, cg::plus<T>())`` (``less``, ``greater``, ``bit_and``, ``bit_or``,
        ``bit_xor``): a butterfly of ``shfl_xor`` over the tile, every lane getting the result,
        as ``cooperative_groups/reduce.h`` computes it for a type without a hardware reduction."""
        if len(args) != 3 or args[0].type != "identifier":
            raise self.error(node, "cg::reduce takes (tile, value, cg::plus<T>())")
        py = self.lookup(text(args[0]))
        if py is None or self.vars[py].kind != "group" or self.vars[py].shape == "block":
            raise self.unsupported(args[0], "cg::reduce over this group (only a thread_block_tile)")
        n = int(self.vars[py].shape[4:])
        op = args[2]
        fn = op.child_by_field_name("function") if op.type == "call_expression" else None
        name_node = fn.child_by_field_name("name") if fn is not None and fn.type == "qualified_identifier" else fn
        if name_node is None or name_node.type != "template_function":
            raise self.unsupported(op, "this cg::reduce operation (cg::plus<T>(), cg::less<T>(), cg::greater<T>() …)")
        opname = text(name_node.child_by_field_name("name"))
        ops = {"plus": ast.Add, "bit_and": ast.BitAnd, "bit_or": ast.BitOr, "bit_xor": ast.BitXor,
               "less": "_Cmin", "greater": "_Cmax"}
        if opname not in ops:
            raise self.unsupported(op, f"cg::{opname} in cg::reduce")
        tn = name_node.child_by_field_name("arguments").named_children[0]
        dt = self.base_type(tn, tn.child_by_field_name("type") or tn.named_children[0])
        acc = self.fresh("_Cred")
        self.vars[acc] = CType("scalar", dt)
        self.pre.append(self.at(ast.Assign([ast.Name(acc, ast.Store())], self.convert(self.expr(args[1]), args[1], dt)),
                                node))
        off = n // 2
        while off >= 1:
            other = ast.Call(ast.Name("_Cshfl_xor_sync"), [self.typed(0xFFFFFFFF, U32), ast.Name(acc),
                                                             self.typed(off, I32)], [])
            f = ops[opname]
            v = ast.Call(ast.Name(f), [ast.Name(acc), other], []) if isinstance(f, str) else \
                ast.BinOp(ast.Name(acc), f(), other)
            self.pre.append(self.at(ast.Assign([ast.Name(acc, ast.Store())], self.convert(v, None, dt)), node))
            off //= 2
        return ast.Name(acc)

    def array_decl(self, node, cname, dt, dims, quals, value, scalar=False) -> list:
        if "__constant__" in quals:
            raise self.unsupported(node, "a __constant__ array inside a function")
        shared = "__shared__" in quals
        if value is not None and (shared or value.type != "initializer_list"):
            raise self.unsupported(value, "an initializer for a __shared__ array" if shared else "this array initializer")
        if value is not None and None in dims and len(dims) == 1:  # float w[] = {…}: its size from the list
            dims = [len([c for c in value.named_children if c.type != "comment"])]
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
        out = [self.at(ast.Assign([ast.Name(py, ast.Store())], call), node)]
        if value is not None:  # `float s[4] = {0};`: the listed elements, then zeros (C's rule)
            import itertools
            flat = []

            def walk(n, depth):
                items = [c for c in n.named_children if c.type != "comment"]
                if depth < len(dims) - 1:
                    for c in items:
                        if c.type != "initializer_list":
                            raise self.unsupported(c, "a flat initializer for a multi-dimensional array")
                    sub = len(list(itertools.product(*[range(k) for k in dims[depth + 1:]])))
                    for c in items:
                        start = len(flat)
                        walk(c, depth + 1)
                        flat.extend([None] * (start + sub - len(flat)))
                else:
                    flat.extend(items)
            walk(value, 0)
            cells = list(itertools.product(*[range(int(k)) for k in dims]))
            if len(flat) > len(cells):
                raise self.error(value, f"{len(flat)} initializers for an array of {len(cells)}")
            for k, cell in enumerate(cells):
                v = flat[k] if k < len(flat) else None
                idx = ast.Tuple([self.typed(x, I32) for x in cell], ast.Load()) if len(cell) > 1 else self.typed(cell[0], I32)
                val = self.typed(0, dt) if v is None else self.convert(self.expr(v), v, dt)
                out.append(self.at(ast.Assign([ast.Subscript(ast.Name(py), idx, ast.Store())], val), node))
        return out

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
        if fn is not None and fn.type == "field_expression" and self.template_object(fn.child_by_field_name("argument")):
            # `T *s = smem.getPointer();` with `SharedMemory<T> smem;`: the method's extern __shared__ array
            got = self.shared_method(value)
            if got != np.dtype(dt):
                raise self.error(value, f"`{text(value)}` is a {C_NAMES.get(got, got)} *, assigned to a "
                                        f"{CType('ptr', dt).c()}")
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

    def template_object_decl(self, node, tnode) -> list:
        """``SharedMemory<T> smem;``: an object of a struct template with member functions. It
        holds no data; its methods are looked up for its template arguments when called."""
        name = text(tnode.child_by_field_name("name"))
        args = [a for a in tnode.child_by_field_name("arguments").named_children if a.type != "comment"]
        values = []
        for a in args:
            if a.type != "type_descriptor":
                raise self.unsupported(a, f"a value argument of the struct template {name}")
            values.append(self.base_type(a, a.child_by_field_name("type") or a.named_children[0]))
        for d in node.children_by_field_name("declarator"):
            if d.type != "identifier":
                raise self.unsupported(d, f"this declaration of a {text(tnode)}")
            self.declare(text(d), CType("object", shape=(name, tuple(values))))
        return []

    def template_object(self, node):
        """The (struct template, its arguments) of an object variable, else None."""
        if node is None or node.type != "identifier":
            return None
        py = self.lookup(text(node))
        return self.vars[py].shape if py is not None and self.vars[py].kind == "object" else None

    def shared_method(self, call):
        """``smem.getPointer()``: the element type of the ``extern __shared__`` array the method
        returns, in the struct's specialization for the object's arguments (else the primary
        template). Any other member function is refused."""
        fn = call.child_by_field_name("function")
        obj, method = fn.child_by_field_name("argument"), text(fn.child_by_field_name("field"))
        name, values = self.template_object(obj)
        forms = self.unit.struct_templates[name]
        chosen = None
        for given, params, spec in forms:
            if given is not None and len(given) == len(values) and self.unit._names_arguments(
                    given, {f"_{k}": v for k, v in enumerate(values)}):
                chosen = (params, spec)
        if chosen is None:
            chosen = next(((params, spec) for given, params, spec in forms if given is None), None)
        if chosen is None:
            raise self.error(call, f"{name}<{', '.join(C_NAMES.get(v, str(v)) for v in values)}> has no definition here")
        params, spec = chosen
        body = None
        for f in spec.child_by_field_name("body").named_children:
            if f.type != "function_definition":
                continue
            d = f.child_by_field_name("declarator")
            while d is not None and d.type != "function_declarator":
                d = d.child_by_field_name("declarator")
            if d is not None and text(d.child_by_field_name("declarator")) == method:
                body = f.child_by_field_name("body")
        where = f"{name}<{', '.join(C_NAMES.get(v, str(v)) for v in values)}>::{method}()"
        if body is None:
            raise self.error(call, f"{where} is not defined")
        stmts = [c for c in body.named_children if c.type != "comment"]
        ok = len(stmts) == 2 and stmts[0].type == "declaration" and stmts[1].type == "return_statement"
        cast = None  # `return (T *)__smem;`: the extern array read as T
        if ok:
            quals = self.qualifiers(stmts[0])
            d = stmts[0].child_by_field_name("declarator")
            ret = stmts[1].named_children
            if len(ret) == 1 and ret[0].type == "cast_expression":
                cast, ret = ret[0].child_by_field_name("type"), [ret[0].child_by_field_name("value")]
                ok = cast.child_by_field_name("declarator") is not None and \
                    cast.child_by_field_name("declarator").type == "abstract_pointer_declarator"
            ok = ok and "__shared__" in quals and "extern" in quals and d is not None \
                and d.type == "array_declarator" and d.child_by_field_name("size") is None and len(ret) == 1 \
                and ret[0].type == "identifier" and text(ret[0]) == text(d.child_by_field_name("declarator"))
        if not ok:
            raise self.unsupported(call, f"the member function {where} (only one that returns an "
                                         f"`extern __shared__ T s[]`, as SharedMemory<T>::getPointer() does)")
        saved = self.targs
        self.targs = {**self.targs, **{p: v for p, v in zip(params, values)}}
        try:
            return self.base_type(cast, cast.child_by_field_name("type")) if cast is not None else \
                self.base_type(stmts[0])
        finally:
            self.targs = saved

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
                k, w = self.expr(right), self.scale(left)
                if w != 1:  # a float4 * moves 4 floats a step
                    k = ast.BinOp(self.cast(k, I64), ast.Mult(), self.typed(w, I64))
                return base, ast.BinOp(off, ast.Add() if op == "+" else ast.Sub(), k)
            if op == "+" and self.is_pointer(right):
                base, off = self.pointer_value(right)
                k, w = self.expr(left), self.scale(right)
                if w != 1:
                    k = ast.BinOp(self.cast(k, I64), ast.Mult(), self.typed(w, I64))
                return base, ast.BinOp(k, ast.Add(), off)
        cast = self.pointer_cast(node)
        if cast is not None:
            st, dt, inner = cast
            base, off = self.pointer_value(inner)
            have = self.vars[base]
            if have.dtype != dt:
                return self.reinterpret(node, base, off, dt, st)
            return base, off
        if t == "pointer_expression" and text(node.children[0]) == "&" and \
                node.child_by_field_name("argument").type == "field_expression":
            m = self.member(node.child_by_field_name("argument"))
            if m[0] == "mem":
                return m[1], m[2]
            if m[0] == "array":
                return m[1], self.typed(0, I64)
            raise self.unsupported(node, "the address of a variable's member")
        if t == "pointer_expression" and text(node.children[0]) == "&":
            arg = node.child_by_field_name("argument")
            while arg.type == "parenthesized_expression":
                arg = arg.named_children[0]
            if arg.type == "identifier":  # &s of a __shared__/__device__ scalar, &r of a reference
                py = self.lookup(text(arg))
                if py is not None and py in getattr(self, "scalar_shared", ()):
                    return py, self.typed(0, I64)
                if py is not None and self.vars[py].kind == "ref":
                    base, index = self.ref_index(py)
                    if isinstance(index, ast.Tuple):
                        raise self.unsupported(node, "a pointer into a multi-dimensional array")
                    return base, index
            vec = self.vector_element(arg) if arg.type == "subscript_expression" else None
            if vec is not None:
                if isinstance(vec[1], ast.Tuple):
                    raise self.unsupported(node, "a pointer into a multi-dimensional array")
                return vec[0], vec[1]
            if arg.type == "subscript_expression":
                base, index = self.element(arg)
                if isinstance(index, ast.Tuple):
                    raise self.unsupported(node, "a pointer into a multi-dimensional array")
                return base, index
        raise self.unsupported(node, "this pointer expression")

    def reinterpret(self, node, base, off, dt, st):
        """``(uint4 *)d_Data`` on a ``uchar *`` argument: the same memory read as another type.
        The launch passes the argument a second time as a numpy view of that type (a hidden
        parameter: the same allocation, so addresses, sectors and bounds are the argument's),
        and the offset is counted in the new type's elements."""
        root = self.view_of.get(base, base)
        params = {py for py, _ in self.param_arrays}
        ct = self.vars[base]
        if ct.space in ("shared", "local") and base not in self.virtual and ct.dtype.itemsize <= dt.itemsize <= 16 \
                and dt.itemsize % ct.dtype.itemsize == 0:
            # `((uint *)s_Hist)[i] = 0` on a uchar array: each access of the wider type is one access of
            # k elements of the array (width k), its bytes regrouped (bitcast)
            k = dt.itemsize // ct.dtype.itemsize
            key = (base, dt.name)
            if key not in self.views:
                hidden = self.fresh(f"{base}__as_{dt.name}")
                self.views[key] = hidden
                self.vars[hidden] = CType("ptr", dt, space=ct.space)
                self.ptr[hidden] = (hidden, None)
                self.virtual[hidden] = (base, k)
            return self.views[key], (off if k == 1 else ast.BinOp(self.cast(off, I64), ast.FloorDiv(), self.typed(k, I64)))
        if self.info.kind != "global" or root not in params:
            where = "a __shared__ or local array" if self.vars[base].space in ("shared", "local") else \
                "a pointer that is not a kernel argument (inside a __device__ function)"
            raise self.unsupported(node, f"reinterpreting {where} as {st.name if st else C_NAMES.get(dt)} "
                                         f"(only a kernel's array argument can be read as another type)")
        t_size, u_size = self.vars[root].dtype.itemsize, dt.itemsize
        key = (root, dt.name)
        if key not in self.views:
            hidden = self.fresh(f"{root}__as_{dt.name}")
            self.views[key] = hidden
            self.vars[hidden] = CType("ptr", dt, space=self.vars[root].space)
            self.ptr[hidden] = (hidden, None)
            self.view_of[hidden] = root
        hidden = self.views[key]
        b_size = self.vars[base].dtype.itemsize  # the offset is in base's elements (base: root or a view of it)
        if b_size == u_size:
            return hidden, off
        if b_size > u_size:
            return hidden, ast.BinOp(self.cast(off, I64), ast.Mult(), self.typed(b_size // u_size, I64))
        if u_size % b_size:
            raise self.unsupported(node, f"reinterpreting {C_NAMES.get(self.vars[base].dtype)} as {C_NAMES.get(dt)}")
        return hidden, ast.BinOp(self.cast(off, I64), ast.FloorDiv(), self.typed(u_size // b_size, I64))

    def has_offset(self, py) -> bool:
        return self.ptr[py][1] is not None

    def is_pointer(self, node) -> bool:
        if node.type == "parenthesized_expression":
            return self.is_pointer(node.named_children[0])
        if node.type == "identifier":
            py = self.lookup(text(node))
            if py is not None and py in getattr(self, "scalar_shared", ()):
                return False  # `__shared__ unsigned a;` is a value (an array of one underneath)
            return py is not None and self.vars[py].kind in ("ptr",) or (
                py is not None and self.vars[py].kind == "array" and len(self.vars[py].shape or [1]) == 1)
        if node.type == "binary_expression" and text(node.child_by_field_name("operator")) in ("+", "-"):
            return self.is_pointer(node.child_by_field_name("left")) or (
                text(node.child_by_field_name("operator")) == "+" and self.is_pointer(node.child_by_field_name("right")))
        if node.type == "pointer_expression" and text(node.children[0]) == "&":
            return True
        if node.type in ("call_expression", "cast_expression"):
            try:
                return self.pointer_cast(node) is not None
            except CompileError:
                return False
        return False

    # -- structs, vector types and references ----------------------------------------------------

    def struct_of_type(self, tnode):
        """The struct a type node names (a vector type, a struct of the file or of this
        function), else None."""
        if tnode is None:
            return None
        if tnode.type == "struct_specifier":
            name_node = tnode.child_by_field_name("name")
            if tnode.child_by_field_name("body") is not None:
                if name_node is None:
                    raise self.unsupported(tnode, "an unnamed struct type here")
                self.local_structs[text(name_node)] = self.define_struct(text(name_node), tnode)
            if name_node is None:
                return None
            name = text(name_node)
        elif tnode.type == "type_identifier" or tnode.type == "identifier" and (isinstance(
                self.targs.get(text(tnode)), StructArg) or text(tnode) in self.unit.struct_nodes):
            # `sizeof(T)`, `sizeof(RGB32)` parse the type's name as an identifier
            name = text(tnode)
            if isinstance(self.targs.get(name), StructArg):  # template <class T> with T a struct
                name = str(self.targs[name])
            alias = self.unit.typedefs.get(name) or self.local_typedefs.get(name)
            if alias is not None and name not in self.local_structs:
                return self.struct_of_type(alias)
        else:
            return None
        if name in self.local_structs:
            return self.local_structs[name]
        if name in VECTORS:
            return VECTORS[name]
        if name in self.unit.structs:
            return self.unit.structs[name]
        spec = self.unit.struct_nodes.get(name)
        if spec is None:
            return None
        st = self.define_struct(name, spec)
        self.unit.structs[name] = st
        return st

    def define_struct(self, name, spec) -> Struct:
        fields = []
        for f in spec.child_by_field_name("body").named_children:
            if f.type != "field_declaration":
                continue
            sub = self.struct_of_type(f.child_by_field_name("type"))
            dt = None if sub is not None else self.base_type(f)
            for d in f.children_by_field_name("declarator"):
                dims = []
                while d.type == "array_declarator":
                    dims.insert(0, self.const_int(d.child_by_field_name("size")))
                    d = d.child_by_field_name("declarator")
                if d.type != "field_identifier":
                    raise self.unsupported(d, "this struct member (a pointer or a bit field)")
                if sub is not None:
                    if dims:
                        raise self.unsupported(d, "an array of structs inside a struct")
                    fields.append((text(d), CType("struct", struct=sub)))
                elif dims:
                    fields.append((text(d), CType("array", dt, dims, "local")))
                else:
                    fields.append((text(d), CType("scalar", dt)))
        if not fields:
            raise self.unsupported(spec, "an empty struct")
        st = Struct(name, fields, aligned=self.aligned_attribute(spec))
        padding = st.itemsize - Struct(name, fields).itemsize
        if padding:
            # `typedef struct __align__(16) { unsigned r, g, b; } RGB32;`: 16 bytes, the last 4
            # padding; kept as hidden members of the element type, so an array of them has its
            # 16-byte stride and a copy is one 16-byte access per lane, as nvcc makes it
            if st.element is None or padding % st.element.itemsize:
                raise self.unsupported(spec, f"a struct __align__({st.aligned}) wider than its members "
                                             f"when they are not all of one type")
            pads = [(f"__pad{k}", CType("scalar", st.element)) for k in range(padding // st.element.itemsize)]
            st = Struct(name, fields + pads, aligned=st.aligned)
        return st

    def aligned_attribute(self, spec) -> int:
        """The n of ``__attribute__((aligned(n)))`` (``__align__(n)``) on a struct, else 1."""
        n = 1
        for a in spec.named_children:
            if a.type != "attribute_specifier":
                continue
            for call in _walk(a):
                if call.type == "call_expression" and text(call.child_by_field_name("function")) in (
                        "aligned", "__aligned__"):
                    args = [x for x in call.child_by_field_name("arguments").named_children if x.type != "comment"]
                    k = self.const_int(args[0]) if args else 16
                    if k <= 0 or k & (k - 1):
                        raise self.error(call, f"an alignment must be a power of two, not {k}")
                    n = max(n, k)
        return n

    def declare_struct(self, cname, st: Struct) -> tuple[str, list]:
        """A struct variable: its Python name and one variable per member (``p__x``)."""
        py = self.declare(cname, CType("struct", struct=st))
        names = {}
        for path, ct in st.leaves():
            leaf = f"{py}__{'__'.join(path)}"
            self.used.add(leaf)
            self.vars[leaf] = ct
            names[path] = leaf
        self.leafnames[py] = names
        return py, list(st.leaves())

    def struct_declaration(self, node, st: Struct, quals) -> list:
        out = []
        for d in node.children_by_field_name("declarator"):
            value = None
            if d.type == "init_declarator":
                value = d.child_by_field_name("value")
                d = d.child_by_field_name("declarator")
            if d.type == "pointer_declarator":
                out += self.vector_pointer_decl(node, text(d.child_by_field_name("declarator")), st, value)
                continue
            if d.type == "reference_declarator":
                raise self.unsupported(d, "a reference to a struct")
            if d.type == "array_declarator":
                dims = []
                while d.type == "array_declarator":
                    size = d.child_by_field_name("size")
                    dims.insert(0, None if size is None else self.const_int(size))
                    d = d.child_by_field_name("declarator")
                out += self.struct_array_decl(node, text(d), st, dims, quals, value)
                continue
            if d.type != "identifier":
                raise self.unsupported(d, "this declarator")
            if "__shared__" in quals:
                raise self.unsupported(node, "a __shared__ struct variable (declare an array of one)")
            py, leaves = self.declare_struct(text(d), st)
            values = None
            if value is not None:
                pre, values = self.struct_rvalue(value, st)
                out += pre
            for k, (path, ct) in enumerate(leaves):
                leaf = self.leafnames[py][path]
                if ct.kind == "array":
                    call = ast.Call(ast.Name("_Clocal"), [ast.Tuple([ast.Constant(int(n)) for n in ct.shape], ast.Load())
                                                          if len(ct.shape) > 1 else ast.Constant(int(ct.shape[0])),
                                                          ast.Name(dname(ct.dtype))], [])
                    out.append(self.at(ast.Assign([ast.Name(leaf, ast.Store())], call), node))
                    if values is not None:
                        out += self.copy_array(node, leaf, values[k], ct)
                else:
                    v = self.typed(0, ct.dtype) if values is None else values[k]
                    out.append(self.at(ast.Assign([ast.Name(leaf, ast.Store())], v), node))
        return out

    def struct_array_decl(self, node, cname, st, dims, quals, value) -> list:
        """``__shared__ float4 s[64]``, ``int2 pairs[8]``: an array of the member type with a
        last axis of the vector's width (a struct of mixed members is refused)."""
        dt = st.element
        if dt is None:
            raise self.unsupported(node, f"an array of the struct {st.name} (only of vector types like float4)")
        if value is not None:
            raise self.unsupported(value, "an array initializer")
        if None in dims:
            raise self.unsupported(node, "an unsized array of vectors (extern __shared__ float4 s[])")
        shared = "__shared__" in quals
        if "__constant__" in quals:
            raise self.unsupported(node, "a __constant__ array inside a function")
        shape = ast.Tuple([ast.Constant(int(k)) for k in list(dims) + [st.width]], ast.Load())
        py = self.declare(cname, CType("array", dt, dims, "shared" if shared else "local", struct=st))
        call = ast.Call(ast.Name("_Cshared" if shared else "_Clocal"), [shape, ast.Name(dname(dt))], [])
        return [self.at(ast.Assign([ast.Name(py, ast.Store())], call), node)]

    def vector_pointer_decl(self, node, cname, st, value) -> list:
        if st.element is None:
            raise self.unsupported(node, f"a pointer to the struct {st.name} (only to vector types like float4)")
        if value is None:
            raise self.error(node, f"a pointer must be initialised where it is declared ({cname})")
        base, off = self.pointer_value(value)
        got = self.pointee(value)
        if self.vars[base].dtype != st.element or (got is not None and got.name != st.name and got.width != st.width):
            raise self.unsupported(value, f"a {st.name} * to a {self.vars[base].c()} (reinterpreting memory)")
        py = self.declare(cname, CType("ptr", st.element, space=self.vars[base].space, struct=st))
        off_name = self.fresh(f"{py}__off")
        self.ptr[py] = (base, off_name)
        return [self.at(ast.Assign([ast.Name(off_name, ast.Store())], self.convert(off, value, I64)), node)]

    def pointee(self, node):
        """The struct a pointer expression points to (``float4 *p``, ``reinterpret_cast<float4 *>(a)``,
        ``p + k``), else None."""
        t = node.type
        if t == "parenthesized_expression":
            return self.pointee(node.named_children[0])
        if t == "identifier":
            py = self.lookup(text(node))
            return self.vars[py].struct if py is not None and self.vars[py].kind in ("ptr", "array") else None
        if t == "binary_expression" and text(node.child_by_field_name("operator")) in ("+", "-"):
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            return self.pointee(left) if self.is_pointer(left) else self.pointee(right)
        cast = self.pointer_cast(node)
        if cast is not None:
            return cast[0]
        return None

    def pointer_cast(self, node):
        """``reinterpret_cast<T *>(e)`` or ``(T *)e``: (the struct T or None, its dtype, e); None
        when ``node`` is no pointer cast."""
        if node.type == "call_expression":
            fn = node.child_by_field_name("function")
            if fn.type == "template_function" and text(fn.child_by_field_name("name")) in ("reinterpret_cast", "static_cast"):
                tn = fn.child_by_field_name("arguments").named_children[0]
                d = tn.child_by_field_name("declarator")
                if d is None or "*" not in text(d):
                    return None
                args = node.child_by_field_name("arguments").named_children
                return self._cast_target(tn) + (args[0],)
        if node.type == "cast_expression":
            tn = node.child_by_field_name("type")
            d = tn.child_by_field_name("declarator")
            if d is None or "*" not in text(d):
                return None
            return self._cast_target(tn) + (node.child_by_field_name("value"),)
        return None

    def _cast_target(self, tn):
        inner = tn.child_by_field_name("type") or tn.named_children[0]
        st = self.struct_of_type(inner)
        if st is not None:
            if st.element is None:
                raise self.unsupported(tn, f"a pointer to the struct {st.name}")
            return st, st.element
        return None, self.base_type(tn, inner)

    def scale(self, node):
        """Elements of the base array per step of a pointer expression (a vector's width, else 1)."""
        st = self.pointee(node)
        return st.width if st is not None else 1

    def vector_element(self, node):
        """A whole vector in memory (``p[i]``, ``*p``, ``s[i]``, ``reinterpret_cast<float4 *>(a)[i]``):
        (base array, index of its first element, the vector type), else None."""
        t = node.type
        if t == "parenthesized_expression":
            return self.vector_element(node.named_children[0])
        if t == "pointer_expression" and text(node.children[0]) == "*":
            arg = node.child_by_field_name("argument")
            st = self.pointee(arg)
            if st is None:
                return None
            base, off = self.pointer_value(arg)
            return base, off, st
        if t != "subscript_expression":
            return None
        idx = []
        inner = node
        while inner.type == "subscript_expression":
            args = inner.child_by_field_name("indices") or inner.named_children[1]
            got = [c for c in args.named_children] if args.type == "subscript_argument_list" else [args]
            idx.insert(0, got[0])
            inner = inner.child_by_field_name("argument")
        if inner.type == "identifier":
            py = self.lookup(text(inner))
            if py is not None and self.vars[py].kind == "array" and self.vars[py].struct is not None:
                ct = self.vars[py]
                if len(idx) != len(ct.shape):
                    raise self.error(node, f"`{text(inner)}` has {len(ct.shape)} dimensions, indexed with {len(idx)}")
                return py, ast.Tuple([self.expr(i) for i in idx] + [self.typed(0, I32)], ast.Load()), ct.struct
        st = self.pointee(inner)
        if st is None or len(idx) != 1:
            return None
        base, off = self.pointer_value(inner)
        first = ast.BinOp(off, ast.Add(), ast.BinOp(self.cast(self.expr(idx[0]), I64), ast.Mult(), self.typed(st.width, I64)))
        return base, first, st

    @staticmethod
    def shifted(index, k):
        """The index of member ``k`` of the vector whose first element is at ``index``."""
        import copy
        if isinstance(index, ast.Tuple):
            return ast.Tuple([copy.deepcopy(e) for e in index.elts[:-1]] + [ast.Constant(k)], ast.Load())
        return ast.BinOp(copy.deepcopy(index), ast.Add(), ast.Constant(k)) if k else copy.deepcopy(index)

    def struct_of_expr(self, node):
        """The struct type of a struct-valued expression, else None."""
        t = node.type
        if t == "parenthesized_expression":
            return self.struct_of_expr(node.named_children[0])
        if t == "identifier":
            py = self.lookup(text(node))
            return self.vars[py].struct if py is not None and self.vars[py].kind == "struct" else None
        if t in ("subscript_expression", "pointer_expression"):
            v = self.vector_element(node) if (t == "subscript_expression" or text(node.children[0]) == "*") else None
            return v[2] if v is not None else None
        if t == "field_expression":
            m = self.member(node)
            return m[2] if m[0] == "struct" else None
        if t == "binary_expression" and text(node.child_by_field_name("operator")) in ("+", "-", "*", "/"):
            a = self.struct_of_expr(node.child_by_field_name("left"))
            return a if a is VECTORS["__half2"] else None
        if t == "conditional_expression":
            return self.struct_of_expr(node.child_by_field_name("consequence"))
        if t == "call_expression":
            fn = node.child_by_field_name("function")
            if fn.type == "identifier" and text(fn).startswith("make_") and text(fn)[5:] in VECTORS:
                return VECTORS[text(fn)[5:]]
            if fn.type == "identifier" and (text(fn) in HALF2_OPS or text(fn) in (
                    "__float2half2_rn", "__floats2half2_rn", "__halves2half2", "__half2half2", "__lows2half2",
                    "__highs2half2")):
                return VECTORS["__half2"]
            if fn.type == "identifier" and text(fn) == "__half22float2":
                return VECTORS["float2"]
            if fn.type in ("identifier", "template_function"):
                name = text(fn.child_by_field_name("name")) if fn.type == "template_function" else text(fn)
                if name not in ("__ldg",) and any(f.kind == "device" for f in self.unit.functions.get(name, [])):
                    info = next(f for f in self.unit.functions[name] if f.kind == "device")
                    return self.struct_of_type(info.node.child_by_field_name("type"))
            if fn.type == "identifier" and text(fn) == "__ldg":
                a = node.child_by_field_name("arguments").named_children[0]
                if self.pointee(a) is not None:
                    return self.pointee(a)
                if a.type == "pointer_expression" and text(a.children[0]) == "&":
                    return self.struct_of_expr(a.child_by_field_name("argument"))
        return None

    def struct_rvalue(self, node, st: Struct):
        """A struct-valued expression as (statements to run first, one value per member)."""
        t = node.type
        if t == "parenthesized_expression":
            return self.struct_rvalue(node.named_children[0], st)
        members = [ct for _, ct in st.leaves()]
        if t == "initializer_list":
            items = [c for c in node.named_children if c.type != "comment"]
            flat = []

            def walk(items):
                for c in items:
                    if c.type == "initializer_list":
                        walk([k for k in c.named_children if k.type != "comment"])
                    else:
                        flat.append(c)
            walk(items)
            if any(ct.kind != "scalar" for ct in members) or len(flat) > len(members):
                raise self.unsupported(node, f"this initializer for a {st.name}")
            vals = [self.convert(self.expr(c), c, ct.dtype) for c, ct in zip(flat, members)]
            vals += [self.typed(0, ct.dtype) for ct in members[len(flat):]]
            return [], vals
        if t == "argument_list":  # a constructor: `half2 v(0.f, 0.f);`
            args = [a for a in node.named_children if a.type != "comment"]
            if len(args) != len(members) or any(ct.kind != "scalar" for ct in members):
                raise self.error(node, f"a {st.name} is made of {len(members)} values")
            return [], [self.convert(self.expr(a), a, ct.dtype) for a, ct in zip(args, members)]
        got = self.struct_of_expr(node)
        if got is None:
            raise self.error(node, f"`{text(node)[:40]}` is not a {st.name}")
        if got.name != st.name:
            raise self.error(node, f"a {got.name} where a {st.name} is needed")
        if t == "identifier":
            py = self.lookup(text(node))
            return [], [ast.Name(leaf) for _, leaf in self.leafnames[py].items()]
        if t == "field_expression":
            _, (py, path), _ = self.member(node)
            leaves = [leaf for p, leaf in self.leafnames[py].items() if p[:len(path)] == path]
            return [], [ast.Name(leaf) for leaf in leaves]
        if t == "binary_expression":
            pa, va = self.struct_rvalue(node.child_by_field_name("left"), st)
            pb, vb = self.struct_rvalue(node.child_by_field_name("right"), st)
            op = BINOPS[text(node.child_by_field_name("operator"))]
            return pa + pb, [ast.BinOp(a, op(), b) for a, b in zip(va, vb)]  # half with half: a half
        if t == "conditional_expression":
            c = self.truth(node.child_by_field_name("condition"))
            pa, va = self.struct_rvalue(node.child_by_field_name("consequence"), st)
            pb, vb = self.struct_rvalue(node.child_by_field_name("alternative"), st)
            if pa or pb:
                raise self.unsupported(node, "a conditional choosing between vectors in memory")
            import copy
            return [], [ast.IfExp(copy.deepcopy(c), a, b) for a, b in zip(va, vb)]
        if t == "call_expression":
            fn = node.child_by_field_name("function")
            args = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
            fname = text(fn)
            if fname in HALF2_OPS:
                n, op = HALF2_OPS[fname]
                if len(args) != n:
                    raise self.error(node, f"{fname} takes {n} arguments")
                pre, parts = [], []
                for a in args:
                    p, v = self.struct_rvalue(a, st)
                    pre += p
                    parts.append(v)
                if op == "fma":  # exact in double, one rounding to half
                    vals = [self.cast(ast.BinOp(ast.BinOp(self.cast(x, F64), ast.Mult(), self.cast(y, F64)), ast.Add(),
                                                self.cast(z, F64)), F16) for x, y, z in zip(*parts)]
                elif op == "neg":
                    vals = [ast.UnaryOp(ast.USub(), x) for x in parts[0]]
                else:
                    vals = [ast.BinOp(x, BINOPS[op](), y) for x, y in zip(*parts)]
                return pre, vals
            if fname in ("__float2half2_rn", "__half2half2"):
                v = self.convert(self.expr(args[0]), args[0], F16)
                tmp = self.fresh("_Ch")
                self.vars[tmp] = CType("scalar", F16)
                return [self.at(ast.Assign([ast.Name(tmp, ast.Store())], v), node)], [ast.Name(tmp), ast.Name(tmp)]
            if fname in ("__floats2half2_rn", "__halves2half2"):
                return [], [self.convert(self.expr(a), a, F16) for a in args]
            if fname in ("__lows2half2", "__highs2half2"):
                pa, va = self.struct_rvalue(args[0], st)
                pb, vb = self.struct_rvalue(args[1], st)
                k = 0 if fname == "__lows2half2" else 1
                return pa + pb, [va[k], vb[k]]
            if fname == "__half22float2":
                p, v = self.struct_rvalue(args[0], VECTORS["__half2"])
                return p, [self.cast(x, F32) for x in v]
            name = text(fn.child_by_field_name("name")) if fn.type == "template_function" else fname
            if not fname.startswith("make_") and fname != "__ldg" and any(
                    f.kind == "device" for f in self.unit.functions.get(name, [])):
                return self.struct_call(node, st)
            if text(fn) == "__ldg":
                a = args[0]
                target = a.child_by_field_name("argument") if a.type == "pointer_expression" and text(a.children[0]) == "&" \
                    else None
                if target is None:  # __ldg(p + i): the vector at p + i
                    base, off = self.pointer_value(a)
                    return self.vector_load(node, base, off, st)
                return self.struct_rvalue(target, st)
            if len(args) != len(members):
                raise self.error(node, f"{text(fn)} takes {len(members)} arguments")
            return [], [self.convert(self.expr(a), a, ct.dtype) for a, ct in zip(args, members)]
        base, first, _ = self.vector_element(node)
        return self.vector_load(node, base, first, st)

    def vector_load(self, node, base, first, st):
        """One load of a whole vector: a ``width``-element access per lane (``vload``)."""
        ct = self.vars[base]
        if base in self.virtual:  # a uint4 read from a uchar shared array: 16 bytes, regrouped
            real, k = self.virtual[base]
            names = [self.fresh("_Cv") for _ in range(st.width)]
            for n in names:
                self.vars[n] = CType("scalar", st.element)
            raw = ast.Call(ast.Name("_Cvload"), [ast.Name(real), ast.BinOp(self.cast(first, I64), ast.Mult(),
                                                                           self.typed(k, I64)), ast.Constant(k * st.width)], [])
            cast = ast.Call(ast.Name("_Cbitcast"), [ast.Name(dname(st.element)), ast.Name(dname(self.vars[real].dtype)),
                                                    raw], [])
            return ([self.at(ast.Assign([ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())], cast), node)],
                    [ast.Name(n) for n in names])
        names = [self.fresh("_Cv") for _ in range(st.width)]
        for n in names:
            self.vars[n] = CType("scalar", st.element)
        if ct.space == "local" or not self.one_access(st):
            return ([self.at(ast.Assign([ast.Name(n, ast.Store())], ast.Subscript(ast.Name(base), self.shifted(first, k),
                                                                                 ast.Load())), node)
                     for k, n in enumerate(names)], [ast.Name(n) for n in names])
        if ct.space == "const":
            raise self.unsupported(node, "a vector load from __constant__ memory")
        target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
        call = ast.Call(ast.Name("_Cvload"), [ast.Name(base), first, ast.Constant(st.width)], [])
        return [self.at(ast.Assign([target], call), node)], [ast.Name(n) for n in names]

    @staticmethod
    def one_access(st) -> bool:
        """Whether a whole ``st`` moves in one access per lane (1, 2, 4, 8 or 16 bytes: ``float4``,
        ``uint2``, a struct of four chars). A 12-byte ``float3`` or ``struct {uint r, g, b;}`` moves
        member by member, as nvcc's three 4-byte loads do."""
        return st.width * st.element.itemsize in (1, 2, 4, 8, 16)

    def vector_store(self, node, base, first, st, values) -> list:
        ct = self.vars[base]
        if base in self.virtual:
            real, k = self.virtual[base]
            elem = self.vars[real].dtype
            parts = [self.fresh("_Cb") for _ in range(k * st.width)]
            for n in parts:
                self.vars[n] = CType("scalar", elem)
            split = self.at(ast.Assign([ast.Tuple([ast.Name(n, ast.Store()) for n in parts], ast.Store())],
                                       ast.Call(ast.Name("_Cbitcast"), [ast.Name(dname(elem)), ast.Name(dname(st.element))] +
                                                [self.cast(v, st.element) for v in values], [])), node)
            first_real = ast.BinOp(self.cast(first, I64), ast.Mult(), self.typed(k, I64))
            return [split, self.at(ast.Expr(ast.Call(ast.Name("_Cvstore"), [ast.Name(real), first_real,
                                                                           ast.Constant(k * st.width)] +
                                                     [ast.Name(n) for n in parts], [])), node)]
        values = [v if ct.dtype is None else v for v in values]
        if ct.space == "local" or not self.one_access(st) and ct.space != "const":
            return [self.at(ast.Assign([ast.Subscript(ast.Name(base), self.shifted(first, k), ast.Store())], v), node)
                    for k, v in enumerate(values)]
        if ct.space == "const":
            raise self.error(node, "__constant__ memory is read-only in a kernel")
        call = ast.Call(ast.Name("_Cvstore"), [ast.Name(base), first, ast.Constant(st.width)] + list(values), [])
        return [self.at(ast.Expr(call), node)]

    def member(self, node):
        """``a.b`` / ``p->b``: ("leaf", python name, CType) for a scalar member of a variable,
        ("array", python name, CType) for an array member, ("struct", (python name, path), Struct)
        for a nested struct, ("mem", base array, index, dtype) for a member of a vector in memory."""
        arg = node.child_by_field_name("argument")
        op = text(node.child_by_field_name("operator"))
        field = text(node.child_by_field_name("field"))
        while arg.type == "parenthesized_expression":
            arg = arg.named_children[0]
        if op == "->":
            st = self.pointee(arg)
            if st is None:
                raise self.unsupported(node, "-> on this pointer (only a pointer to a vector type)")
            base, off = self.pointer_value(arg)
            return self._mem_member(node, base, off, st, field)
        vec = self.vector_element(arg) if arg.type in ("subscript_expression", "pointer_expression") else None
        if vec is not None:
            return self._mem_member(node, vec[0], vec[1], vec[2], field)
        if arg.type == "identifier":
            py = self.lookup(text(arg))
            if py is None:
                raise self.error(arg, f"`{text(arg)}` is not declared")
            if self.vars[py].kind != "struct":
                raise self.error(node, f"`{text(arg)}` is not a struct")
            return self._var_member(node, py, (), self.vars[py].struct, field)
        if arg.type == "field_expression":
            m = self.member(arg)
            if m[0] == "struct":
                return self._var_member(node, m[1][0], m[1][1], m[2], field)
            raise self.error(node, f"`{text(arg)}` is not a struct")
        raise self.unsupported(node, "a member of this expression")

    def _var_member(self, node, py, path, st, field):
        for name, ct in st.fields:
            if name == field:
                if ct.kind == "struct":
                    return "struct", (py, path + (field,)), ct.struct
                leaf = self.leafnames[py][path + (field,)]
                return ("array" if ct.kind == "array" else "leaf"), leaf, ct
        raise self.error(node, f"{st.name} has no member {field}")

    def _mem_member(self, node, base, first, st, field):
        names = [p[-1] for p, _ in st.leaves()]
        if field not in names:
            raise self.error(node, f"{st.name} has no member {field}")
        return "mem", base, self.shifted(first, names.index(field)), st.element

    def struct_assign(self, node, left, right) -> list:
        """``v = w`` for a struct or a vector: member by member, a vector in memory as one access."""
        st = self.struct_of_expr(left)
        pre, values = self.struct_rvalue(right, st)
        members = [ct for _, ct in st.leaves()]
        vec = self.vector_element(left)
        if vec is not None:
            base, first, _ = vec
            values = [self.cast(v, st.element) if not isinstance(v, ast.Name) or self.vars.get(v.id, None) is None
                      or self.vars[v.id].dtype != st.element else v for v in values]
            return pre + self.vector_store(node, base, first, st, values)
        if left.type == "identifier":
            py = self.lookup(text(left))
            leaves = list(self.leafnames[py].values())
        else:
            _, (py, path), _ = self.member(left)
            leaves = [leaf for p, leaf in self.leafnames[py].items() if p[:len(path)] == path]
        # every value first, then the members: `v = make_float2(v.y, v.x)` swaps
        tmps = []
        for v, ct in zip(values, members):
            if ct.kind == "array":
                tmps.append(None)
                continue
            n = self.fresh("_Cs")
            self.vars[n] = ct
            pre.append(self.at(ast.Assign([ast.Name(n, ast.Store())], v), node))
            tmps.append(n)
        out = pre
        for leaf, n, v, ct in zip(leaves, tmps, values, members):
            if ct.kind == "array":
                if not (isinstance(v, ast.Name) and v.id == leaf):
                    out += self.copy_array(node, leaf, v, ct)
            else:
                out.append(self.at(ast.Assign([ast.Name(leaf, ast.Store())], ast.Name(n)), node))
        return out

    def copy_array(self, node, dst, src, ct) -> list:
        """A struct's array member copied element by element (a struct assignment copies it)."""
        import itertools
        out = []
        for k in itertools.product(*[range(int(n)) for n in ct.shape]):
            idx = ast.Tuple([self.typed(x, I32) for x in k], ast.Load()) if len(k) > 1 else self.typed(k[0], I32)
            out.append(self.at(ast.Assign([ast.Subscript(ast.Name(dst), idx, ast.Store())],
                                          ast.Subscript(ast.Name(src.id), idx, ast.Load())), node))
        return out

    def reference_decl(self, node, cname, dt, value) -> list:
        """``T &r = x``: another name for the variable ``x``, or for the element ``a[i]`` (every
        use of ``r`` reads or writes ``a[i]``, its index computed once, here)."""
        if value is None:
            raise self.error(node, f"a reference must be bound where it is declared ({cname})")
        inner = value
        while inner.type == "parenthesized_expression":
            inner = inner.named_children[0]
        if inner.type == "identifier":
            py = self.lookup(text(inner))
            if py is None:
                raise self.error(inner, f"`{text(inner)}` is not declared")
            if self.vars[py].kind not in ("scalar", "ref"):
                raise self.unsupported(value, "a reference to this")
            self.scopes[-1][cname] = py
            return []
        if inner.type == "field_expression":
            m = self.member(inner)
            if m[0] == "leaf":
                self.scopes[-1][cname] = m[1]
                return []
            if m[0] == "mem":
                return self._bind_element(node, cname, m[1], m[2])
            raise self.unsupported(value, "a reference to this member")
        if inner.type in ("subscript_expression", "pointer_expression"):
            base, index = self.element(inner)
            return self._bind_element(node, cname, base, index)
        raise self.unsupported(value, "a reference to this expression")

    def _bind_element(self, node, cname, base, index) -> list:
        if base in self.virtual:
            raise self.unsupported(node, "a reference into a __shared__ array read as another type")
        out = []
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        names = []
        for p in parts:
            n = self.fresh(f"{cname}__i")
            self.vars[n] = CType("scalar", I64)
            out.append(self.at(ast.Assign([ast.Name(n, ast.Store())], self.cast(p, I64)), node))
            names.append(n)
        py = self.declare(cname, CType("ref", self.vars[base].dtype, space=self.vars[base].space))
        self.refs[py] = (base, names)
        return out

    def ref_index(self, py):
        base, names = self.refs[py]
        return base, (ast.Name(names[0]) if len(names) == 1 else ast.Tuple([ast.Name(n) for n in names], ast.Load()))

    def ref_argument(self, a, ct, fname, cname) -> list:
        """The (array, offset) pair a ``T &`` parameter takes for the argument ``a``: an element of
        an array; a local variable goes through a one-element local array, copied back after the call."""
        inner = a
        while inner.type == "parenthesized_expression":
            inner = inner.named_children[0]
        py = None
        if inner.type == "identifier":
            py = self.lookup(text(inner))
            if py is None:
                raise self.error(inner, f"`{text(inner)}` is not declared")
            if self.vars[py].kind == "ref":
                base, index = self.ref_index(py)
                if isinstance(index, ast.Tuple):
                    raise self.unsupported(a, "passing a reference to an element of a multi-dimensional array")
                return [ast.Name(base), index]
        elif inner.type == "field_expression":
            m = self.member(inner)
            if m[0] == "leaf":
                py = m[1]
            elif m[0] == "mem":
                if isinstance(m[2], ast.Tuple):
                    raise self.unsupported(a, "passing a reference to a member of a vector in a multi-dimensional array")
                return [ast.Name(m[1]), self.cast(m[2], I64)]
        if py is not None and py in getattr(self, "scalar_shared", ()):
            # a __shared__ (or __device__) scalar: the reference is its one element, in its own memory
            if self.vars[py].dtype != ct.dtype:
                raise self.error(a, f"{fname}'s parameter {cname} is a {ct.c()}: `{text(a)}` is a "
                                    f"{C_NAMES.get(self.vars[py].dtype)}")
            return [ast.Name(py), self.typed(0, I64)]
        if py is not None:
            vt = self.vars[py]
            if vt.kind != "scalar" or py in self.aliases:
                raise self.unsupported(a, f"passing `{text(a)}` to the reference parameter {cname}")
            if vt.dtype != ct.dtype:
                raise self.error(a, f"{fname}'s parameter {cname} is a {ct.c()}: `{text(a)}` is a {C_NAMES.get(vt.dtype)}")
            tmp = self.fresh("_Cref")
            self.vars[tmp] = CType("array", ct.dtype, [1], "local")
            self.pre.append(self.at(ast.Assign([ast.Name(tmp, ast.Store())],
                                               ast.Call(ast.Name("_Clocal"), [ast.Constant(1), ast.Name(dname(ct.dtype))],
                                                        [])), a))
            self.pre.append(self.at(ast.Assign([ast.Subscript(ast.Name(tmp), self.typed(0, I32), ast.Store())],
                                               ast.Name(py)), a))
            self.post.append(self.at(ast.Assign([ast.Name(py, ast.Store())],
                                                ast.Subscript(ast.Name(tmp), self.typed(0, I32), ast.Load())), a))
            return [ast.Name(tmp), self.typed(0, I64)]
        if inner.type in ("subscript_expression", "pointer_expression"):
            base, index = self.element(inner)
            if isinstance(index, ast.Tuple):
                raise self.unsupported(a, "passing a reference to an element of a multi-dimensional array")
            if self.vars[base].dtype != ct.dtype:
                raise self.error(a, f"{fname}'s parameter {cname} is a {ct.c()}: `{text(a)}` is a "
                                    f"{C_NAMES.get(self.vars[base].dtype)}")
            return [ast.Name(base), self.cast(index, I64)]
        raise self.unsupported(a, f"passing `{text(a)[:40]}` to the reference parameter {cname}")


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
        if left.type in ("identifier", "field_expression", "subscript_expression", "pointer_expression") \
                and self.struct_of_expr(left) is not None:
            if op != "=" or right is None:
                raise self.unsupported(node, f"the operator {op} on a {self.struct_of_expr(left).name}")
            return self.struct_assign(node, left, right)
        if left.type == "field_expression" and not (left.child_by_field_name("argument").type == "identifier" and
                                                    text(left.child_by_field_name("argument")) in
                                                    ("threadIdx", "blockIdx", "blockDim", "gridDim")):
            m = self.member(left)
            if m[0] == "leaf":
                return self.assign_scalar(node, m[1], m[2], op, right, value)
            if m[0] == "mem":
                return self.store(node, m[1], m[2], op, value, right, self.vars[m[1]])
            raise self.error(left, f"cannot assign to `{text(left)}`")
        if left.type == "identifier":
            py = self.lookup(text(left))
            if py is None:
                raise self.error(left, f"`{text(left)}` is not declared")
            ct = self.vars[py]
            if ct.kind == "ref":
                base, index = self.ref_index(py)
                return self.store(node, base, index, op, value, right, self.vars[base])
            if ct.kind == "ptr":
                return self.move_pointer(node, py, op, right)
            if ct.kind == "array":
                if py in getattr(self, "scalar_shared", ()):
                    return self.store(node, py, self.typed(0, I32), op, value, right, ct)
                raise self.error(left, f"cannot assign to the array `{text(left)}`")
            return self.assign_scalar(node, py, ct, op, right, value)
        if left.type in ("subscript_expression", "pointer_expression", "field_expression"):
            if left.type == "field_expression":
                raise self.unsupported(left, "a struct member")
            if left.type == "pointer_expression" and text(left.children[0]) != "*":
                raise self.unsupported(left)
            base, index = self.element(left)
            return self.store(node, base, index, op, value, right, self.vars[base])
        raise self.unsupported(left, "assigning to this")

    def assign_scalar(self, node, py, ct, op, right, value) -> list:
        """``x = e`` / ``x op= e`` for a scalar variable (or a struct's scalar member)."""
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

    def virtual_load(self, name, index):
        """A value of a wider type read from a narrower shared/local array: one access of k elements."""
        real, k = self.virtual[name]
        dt = self.vars[name].dtype
        if k == 1:
            raw = ast.Subscript(ast.Name(real), index, ast.Load())
        else:
            first = ast.BinOp(self.cast(index, I64), ast.Mult(), self.typed(k, I64))
            raw = ast.Call(ast.Name("_Cvload"), [ast.Name(real), first, ast.Constant(k)], [])
        return ast.Call(ast.Name("_Cbitcast"), [ast.Name(dname(dt)), ast.Name(dname(self.vars[real].dtype)), raw], [])

    def virtual_store(self, node, name, index, v) -> list:
        import copy
        real, k = self.virtual[name]
        elem = self.vars[real].dtype
        if k == 1:
            return [self.at(ast.Assign([ast.Subscript(ast.Name(real), index, ast.Store())],
                                       ast.Call(ast.Name("_Cbitcast"), [ast.Name(dname(elem)),
                                                                        ast.Name(dname(self.vars[name].dtype)), v], [])), node)]
        parts = [self.fresh("_Cb") for _ in range(k)]
        for n in parts:
            self.vars[n] = CType("scalar", elem)
        split = self.at(ast.Assign([ast.Tuple([ast.Name(n, ast.Store()) for n in parts], ast.Store())],
                                   ast.Call(ast.Name("_Cbitcast"), [ast.Name(dname(elem)),
                                                                    ast.Name(dname(self.vars[name].dtype)), v], [])), node)
        first = ast.BinOp(self.cast(copy.deepcopy(index), I64), ast.Mult(), self.typed(k, I64))
        store = self.at(ast.Expr(ast.Call(ast.Name("_Cvstore"), [ast.Name(real), first, ast.Constant(k)] +
                                          [ast.Name(n) for n in parts], [])), node)
        return [split, store]

    def store(self, node, base, index, op, value, right, ct):
        if base in self.virtual:
            import copy
            v = value() if op == "=" else ast.BinOp(self.virtual_load(base, copy.deepcopy(index)), BINOPS[op[:-1]](),
                                                    value())
            return self.virtual_store(node, base, index, self.cast(v, ct.dtype))
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
            st = self.vars[py].struct
            if st is not None:  # a float4 * moves 4 floats a step
                k = ast.BinOp(self.cast(k, I64), ast.Mult(), self.typed(st.width, I64))
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
        known = self.static_type(cnode) if cnode is not None else None
        if known is not None and known == np.dtype(dt):  # (numpy reads None == float64 as true)
            return v
        return self.cast(v, dt)

    def loop_cond(self, node) -> ast.expr:
        n = len(self.pre) + len(self.post)
        c = self.cond(node)
        if len(self.pre) + len(self.post) != n:
            raise self.unsupported(node, "a loop condition that loads a whole vector or passes a variable by reference")
        return c

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
        if node.type == "identifier" and self.is_pointer(node):
            return ast.Constant(True)  # `if (p)`: an argument array is never NULL here
        if node.type == "binary_expression" and text(node.child_by_field_name("operator")) in ("&&", "||"):
            return self.at(self._expr(node), node)
        v = self.expr(node)
        if isinstance(v, (ast.Compare, ast.BoolOp)) or (isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not)):
            return v
        if self.static_type(node) == BOOL:
            return v
        return self.at(ast.Compare(v, [ast.NotEq()], [self.typed(0, I32)]), node)

    def literal(self, node):
        s = text(node).replace("'", "").strip()
        if s[:1] in "+-":  # `-3000000000` as one token: C's minus applied to the literal (a long here)
            v, dt = self._literal(s[1:].strip())
            return (-v if s[0] == "-" else v), dt
        return self._literal(s)

    def _literal(self, s):
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
            if np.dtype(dt).kind == "f":  # 0.75f > 0.5f is no integer constant: C compares floats
                raise self.error(node, "a floating-point constant where an integer constant is needed")
            return int(v)
        if t == "parenthesized_expression":
            return self.const_int(node.named_children[0])
        if t == "identifier" and isinstance(self.targs.get(text(node)), int):
            return self.targs[text(node)]
        if t == "identifier" and self.lookup(text(node)) is None and text(node) in self.unit.consts:
            dt, value = self.unit.consts[text(node)]
            if dt.kind in "biu":
                return self.const_int(value)
        if t in ("true", "false"):
            return int(t == "true")
        if t == "identifier" and text(node) == "warpSize" and self.lookup("warpSize") is None:
            return 32
        if t == "call_expression" and self.tile_size_call(node) is not None:
            return self.tile_size_call(node)
        if t == "binary_expression":
            op = text(node.child_by_field_name("operator"))
            a = self.const_int(node.child_by_field_name("left"))
            if op in ("&&", "||") and (bool(a) if op == "||" else not a):
                return int(bool(a))  # C does not evaluate the right side
            b = self.const_int(node.child_by_field_name("right"))
            ta, tb = (self.static_type(node.child_by_field_name(f)) for f in ("left", "right"))
            if op in ("<", "<=", ">", ">=", "==", "!=") and ta is not None and tb is not None and \
                    ta.kind in "biu" and tb.kind in "biu" and arith.common(ta, tb).kind == "u":
                bits = 8 * arith.common(ta, tb).itemsize  # `-1 < 0u`: both as unsigned, as C compares them
                a, b = a % (1 << bits), b % (1 << bits)
            ops = {"+": a + b, "-": a - b, "*": a * b, "/": int(a / b) if b else 0,
                   "%": int(math.fmod(a, b)) if b else 0, "<<": a << b if b >= 0 else 0, ">>": a >> b if b >= 0 else 0,
                   "&": a & b, "|": a | b, "^": a ^ b, "<": int(a < b), "<=": int(a <= b), ">": int(a > b),
                   ">=": int(a >= b), "==": int(a == b), "!=": int(a != b), "&&": int(bool(a and b)),
                   "||": int(bool(a or b))}
            if op in ops:
                return ops[op]
        if t == "unary_expression":
            op = text(node.child_by_field_name("operator"))
            a = self.const_int(node.child_by_field_name("argument"))
            return {"-": -a, "+": a, "!": int(not a), "~": ~a}[op]
        if t == "conditional_expression":
            c = self.const_int(node.child_by_field_name("condition"))
            return self.const_int(node.child_by_field_name("consequence" if c else "alternative"))
        if t == "cast_expression":
            return self.const_int(node.child_by_field_name("value"))
        if t == "call_expression" and self.functional_cast(node) is not None and \
                self.functional_cast(node).kind in "biu":
            args = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
            return self.const_int(args[0]) if args else 0
        if t == "sizeof_expression":
            return self.sizeof(node)
        raise self.error(node, f"`{text(node)}` must be a constant here")

    def tile_size_call(self, node):
        """``tile.size()`` / ``tile.num_threads()`` of a ``thread_block_tile<N>``: N, else None."""
        fn = node.child_by_field_name("function")
        if fn is None or fn.type != "field_expression" or text(fn.child_by_field_name("field")) not in ("size", "num_threads"):
            return None
        obj = fn.child_by_field_name("argument")
        py = self.lookup(text(obj)) if obj.type == "identifier" else None
        if py is None or self.vars[py].kind != "group" or self.vars[py].shape == "block":
            return None
        return int(self.vars[py].shape[4:])

    def known(self, node):
        """The value of a condition known when the kernel is compiled (a template parameter's
        ``blockSize >= 512``), else None."""
        try:
            return self.const_int(node)
        except CompileError:
            return None

    def sizeof(self, node) -> int:
        tnode = node.child_by_field_name("type")
        if tnode is not None:
            inner_t = tnode.child_by_field_name("type") or tnode.named_children[0]
            d = tnode.child_by_field_name("declarator")
            if d is not None and "*" in text(d):
                return 8  # a pointer
            st = self.struct_of_type(inner_t)
            if st is not None:
                return st.itemsize
            return self.base_type(tnode, inner_t).itemsize
        value = node.child_by_field_name("value")
        inner = value.named_children[0] if value is not None and value.type == "parenthesized_expression" else value
        if inner is not None:
            st = self.struct_of_expr(inner) if inner.type != "identifier" or self.lookup(text(inner)) is not None else \
                (VECTORS.get(text(inner)) or self.unit.structs.get(text(inner)) or self.local_structs.get(text(inner)))
            if st is None and inner.type == "identifier" and text(inner) in self.unit.struct_nodes:
                st = self.struct_of_type(inner)  # never a type_identifier here: look it up by name
            if st is not None:
                return st.itemsize
        if inner is not None and inner.type == "identifier" and self.lookup(text(inner)) is None:
            name = text(inner)
            if name in SCALAR_TYPES:
                return np.dtype(SCALAR_TYPES[name]).itemsize
            if isinstance(self.targs.get(name), np.dtype):
                return self.targs[name].itemsize
            if isinstance(self.targs.get(name), StructArg):
                return self.struct_of_type(inner).itemsize
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
        if node.type in ("parenthesized_expression", "binary_expression", "call_expression", "cast_expression"):
            base, off = self.pointer_value(node)
            if len(idx) != 1:
                raise self.unsupported(node, "this subscript")
            return base, ast.BinOp(off, ast.Add(), self.expr(idx[0]))
        if node.type == "field_expression":
            m = self.member(node)
            if m[0] != "array":
                raise self.error(node, f"`{text(node)}` is not an array")
            py = m[1]
        elif node.type != "identifier":
            raise self.unsupported(node, "indexing this expression")
        else:
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
        if not hasattr(out, "source_text"):
            out.source_text = " ".join(text(node).split())  # what a message about this value quotes
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
            m = self.member(node)
            if m[0] == "leaf":
                return ast.Name(m[1])
            if m[0] == "mem":
                if m[1] in self.virtual:
                    return self.virtual_load(m[1], m[2])
                return ast.Subscript(ast.Name(m[1]), m[2], ast.Load())
            raise self.error(node, f"`{text(node)}` is {'an array' if m[0] == 'array' else 'a struct'}, not a value")
        if t in ("subscript_expression",) or (t == "pointer_expression" and text(node.children[0]) == "*"):
            if self.struct_of_expr(node) is not None:
                raise self.error(node, f"`{text(node)}` is a {self.struct_of_expr(node).name}: use its members "
                                       f"(.x …) or assign it to a {self.struct_of_expr(node).name} variable")
            base, index = self.element(node)
            if base in self.virtual:
                return self.virtual_load(base, index)
            return ast.Subscript(ast.Name(base), index, ast.Load())
        if t == "pointer_expression":
            raise self.unsupported(node, "taking an address here (only `&a[i]` as an atomic's or a pointer's target)")
        if t == "binary_expression":
            op = text(node.child_by_field_name("operator"))
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if op in ("&&", "||"):
                k = self.known(left)
                if k is not None:  # `blockSize >= 512 && tid < 256`: C never evaluates a right side it does not need
                    if bool(k) == (op == "||"):
                        return ast.Constant(bool(k))
                    return self.truth(right)
                first = self.truth(left)
                self.lazy += 1  # the right side runs only for some threads: no side effect may move out of it
                try:
                    second = self.truth(right)
                finally:
                    self.lazy -= 1
                if PREDICATED_SHORT_CIRCUIT and any(
                        n.type in ("subscript_expression", "call_expression", "field_expression") or
                        (n.type == "pointer_expression" and text(n.children[0]) == "*") for n in _walk(right)):
                    # a right side that loads (or calls): predicated on the left side, as nvcc emits
                    # `i > 0 && A[i - 1] > 5` (one branch for the if, the load masked), not a second branch
                    t_, f_ = ast.Constant(True), ast.Constant(False)
                    return ast.Call(ast.Name("_Cselect"), [first, second, f_] if op == "&&" else [first, t_, second], [])
                return ast.BoolOp(ast.And() if op == "&&" else ast.Or(), [first, second])
            if op in COMPARES:
                null = [s for s in (left, right) if s.type == "null" or text(s) in ("0", "nullptr", "NULL")]
                if op in ("==", "!=") and null and (self.is_pointer(left) or self.is_pointer(right)):
                    # an argument array or a pointer into one is never NULL here (a NULL argument is refused)
                    return ast.Constant(op == "!=")
                return ast.Compare(self.expr(left), [COMPARES[op]()], [self.expr(right)])
            if op in BINOPS:
                if self.is_pointer(left) or self.is_pointer(right):
                    if op not in ("+", "-"):
                        raise self.unsupported(node, f"the operator {op} on a pointer or an array")
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
            a_node, b_node = node.child_by_field_name("consequence"), node.child_by_field_name("alternative")
            k = self.known(node.child_by_field_name("condition"))
            if k is not None:  # a template's `blockSize >= 64 ? a : b`: the side C would take
                chosen, other = (a_node, b_node) if k else (b_node, a_node)
                v = self.expr(chosen)
                ta, tb = self.static_type(chosen), self.static_type(other)
                return self.convert(v, chosen, arith.common(ta, tb)) if ta is not None and tb is not None else v
            c = self.truth(node.child_by_field_name("condition"))
            self.lazy += 1
            try:
                a, b = self.expr(a_node), self.expr(b_node)
            finally:
                self.lazy -= 1
            ta, tb = self.static_type(a_node), self.static_type(b_node)
            if ta is not None and tb is not None and ta != tb:
                common = arith.common(ta, tb)
                a, b = self.convert(a, a_node, common), self.convert(b, b_node, common)
            # a per-thread choice is predicated (each side's loads masked by its lanes), not a
            # branch, as nvcc compiles `c ? a[i] : 0`; a uniform one is a plain choice
            return ast.Call(ast.Name("_Cselect"), [c, a, b], [])
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
        if t == "update_expression":
            return self.update_value(node)
        if t == "assignment_expression":
            raise self.unsupported(node, f"`{text(node)}` inside an expression (write it as its own statement)")
        if t == "comma_expression":
            raise self.unsupported(node, "the comma operator")
        if t == "lambda_expression":
            raise self.unsupported(node, "a lambda")
        raise self.unsupported(node)

    def update_value(self, node):
        """``i++`` / ``++i`` inside an expression (``C[k++] = A[i++]``): the increment is a
        statement before this one, the expression reads the old value (``i++``) or the new one."""
        arg = node.child_by_field_name("argument")
        op = "+" if "++" in text(node) else "-"
        prefix = text(node).lstrip().startswith(("++", "--"))
        if self.lazy:
            raise self.unsupported(node, f"`{text(node)}` in a part of an expression only some threads evaluate "
                                         f"(after && or ||, in ?:)")
        while arg.type == "parenthesized_expression":
            arg = arg.named_children[0]
        py = self.lookup(text(arg)) if arg.type == "identifier" else None
        if py is None or self.vars[py].kind not in ("scalar", "ptr"):
            raise self.unsupported(node, f"`{text(node)}` inside an expression (only on a variable)")
        ct = self.vars[py]
        tmp = self.fresh(f"_C{py}")
        if ct.kind == "ptr":
            raise self.unsupported(node, f"`{text(node)}` on a pointer inside an expression (write `p[k]` and `p++;`)")
        self.vars[tmp] = ct
        step = self.assignment(node, arg, op + "=", None)
        if prefix:
            self.pre.extend(step)
            return ast.Name(py)
        self.pre.append(self.at(ast.Assign([ast.Name(tmp, ast.Store())], ast.Name(py)), node))
        self.pre.extend(step)
        return ast.Name(tmp)

    def identifier(self, node):
        name = text(node)
        py = self.lookup(name)
        if py is not None:
            ct = self.vars[py]
            if ct.kind == "array" and py in getattr(self, "scalar_shared", ()):
                return ast.Subscript(ast.Name(py), self.typed(0, I32), ast.Load())
            if ct.kind == "ref":
                base, index = self.ref_index(py)
                return ast.Subscript(ast.Name(base), index, ast.Load())
            if ct.kind == "struct":
                raise self.error(node, f"`{name}` is a {ct.struct.name}: use its members (.x …)")
            if py in self.aliases:
                return self.cast(ast.Name(self.aliases[py]), ct.dtype)
            if ct.kind != "scalar":
                raise self.unsupported(node, f"the array or pointer `{name}` as a value")
            return ast.Name(py)
        if name in self.targs and isinstance(self.targs[name], int):
            return self.typed(self.targs[name], I32)
        if name == "warpSize":
            return self.typed(32, I32)
        if name in self.unit.consts:  # a file-scope `const int N = 256;`
            dt, value = self.unit.consts[name]
            if dt.kind in "biu":
                return self.typed(self.const_int(value), dt)
            v = value.named_children[0] if value.type == "unary_expression" else value
            if v.type == "number_literal":
                x = self.literal(v)[0]
                return self.typed(-x if v is not value else x, dt)
            raise self.unsupported(value, "a file-scope constant of this form")
        raise self.error(node, f"`{name}` is not declared")

    def functional_cast(self, node):
        """The type of a functional cast, ``float(x)``, ``unsigned(x)``, ``T(x)`` (a template's type
        parameter or a typedef of a scalar type), else None."""
        fnode = node.child_by_field_name("function")
        if fnode is None or fnode.type not in ("primitive_type", "identifier", "type_identifier", "sized_type_specifier"):
            return None
        name = " ".join(text(fnode).split())
        if fnode.type != "primitive_type" and (self.lookup(name) is not None or name in self.unit.functions):
            return None
        if not (name in SCALAR_TYPES or isinstance(self.targs.get(name), np.dtype) or name in self.unit.typedefs
                or name in self.local_typedefs or fnode.type in ("primitive_type", "sized_type_specifier")):
            return None
        try:
            return self.base_type(node, fnode)
        except CompileError:
            return None

    def call(self, node):
        fnode = node.child_by_field_name("function")
        args = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
        cast_to = self.functional_cast(node)
        if cast_to is not None:  # `T(x)` is `(T)x`; `T()` is a zero of T
            if len(args) > 1:
                raise self.error(node, f"a functional cast `{text(fnode)}(…)` takes one value")
            return self.typed(0, cast_to) if not args else self.cast(self.expr(args[0]), cast_to)
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
            if q == "reduce":
                return self.cg_reduce(node, args)
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
            raise self.unsupported(node, f"{name} (the engine has atomicAdd, Sub, Max, Min, Exch, CAS, And, Or, Xor, "
                                         f"Inc and Dec)")
        if name in SHUFFLES:
            if len(args) not in (3, 4):
                raise self.error(node, f"{name} takes (mask, value, lane or delta[, width])")
            width = None
            if len(args) == 4:
                try:
                    w = self.const_int(args[3])
                except CompileError:
                    w = None  # a value known at run time (a kernel argument): the same for every thread
                if w is not None and w not in (1, 2, 4, 8, 16, 32):
                    raise self.error(args[3], f"a shuffle's width must be a power of 2 up to 32 (here {w})")
                width = None if w == 32 else self.typed(w, U32) if w is not None else self.cast(self.expr(args[3]), U32)
            return self.shuffle(SHUFFLES[name], self.expr(args[0]), self.expr(args[1]), args[2], width)
        if name in VOTES:
            return ast.Call(ast.Name("_C" + VOTES[name]), [self.expr(args[0]), self.truth(args[1])], [])
        if name == "__activemask":
            return ast.Call(ast.Name("_Cactivemask"), [], [])
        if name in ("__popc", "__popcll", "__clz", "__clzll", "__ffs", "__ffsll", "__brev", "__brevll"):
            f = name[2:].rstrip("l") if name.endswith("ll") else name[2:]
            return self.cast(ast.Call(ast.Name("_C" + f), [self.expr(args[0])], []), I32 if f != "brev" else U32)
        if name in ("__mul24", "__umul24"):
            # the low 24 bits of each operand (sign-extended for __mul24), the low 32 bits of
            # their product (CUDA Math API, integer intrinsics)
            dt = I32 if name == "__mul24" else U32
            a, b = (self.cast(self.expr(x), dt) for x in args)
            if name == "__umul24":
                low = lambda v: self.cast(ast.BinOp(v, ast.BitAnd(), self.typed(0xFFFFFF, U32)), U32)  # noqa: E731
            else:
                low = lambda v: self.cast(ast.BinOp(self.cast(ast.BinOp(v, ast.LShift(), self.typed(8, I32)), I32),  # noqa: E731
                                                    ast.RShift(), self.typed(8, I32)), I32)
            return self.cast(ast.BinOp(low(a), ast.Mult(), low(b)), dt)
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
        if name in HALF_OPS:
            a, b = [self.convert(self.expr(x), x, F16) for x in args]
            return ast.BinOp(a, BINOPS[HALF_OPS[name]](), b)
        if name in HALF_COMPARES:
            a, b = [self.convert(self.expr(x), x, F16) for x in args]
            return ast.Compare(a, [COMPARES[HALF_COMPARES[name]]()], [b])
        if name in ("__hfma", "__hfma_rn"):  # exact in double, one rounding to half
            x, y, z = [self.cast(self.convert(self.expr(a), a, F16), F64) for a in args]
            return self.cast(ast.BinOp(ast.BinOp(x, ast.Mult(), y), ast.Add(), z), F16)
        if name in ("__hneg", "__habs", "__hmax", "__hmin"):
            xs = [self.convert(self.expr(a), a, F16) for a in args]
            if name == "__hneg":
                return ast.UnaryOp(ast.USub(), xs[0])
            return ast.Call(ast.Name({"__habs": "_Cabs", "__hmax": "_Cmax", "__hmin": "_Cmin"}[name]), xs, [])
        if name in ("hsqrt", "hexp", "hlog", "hsin", "hcos", "hfloor", "hceil", "htrunc", "hrsqrt"):
            f = name[1:] if name != "hrsqrt" else "sqrt"
            v = ast.Call(ast.Name(f"_Cmath_{f}"), [self.cast(self.convert(self.expr(args[0]), args[0], F16), F32)], [])
            if name == "hrsqrt":
                v = ast.BinOp(self.typed(1.0, F32), ast.Div(), self.cast(v, F32))
            return self.cast(v, F16)
        if name in ("__int2half_rn", "__uint2half_rn", "__double2half"):
            return self.cast(self.expr(args[0]), F16)
        if name in ("__half2int_rz", "__half2uint_rz"):
            return self.cast(self.expr(args[0]), I32 if "2int" in name else U32)
        if name in HALF2_PARTS:
            member, dt = HALF2_PARTS[name]
            pre, vals = self.struct_rvalue(args[0], VECTORS["__half2"])
            self.pre += pre
            return self.cast(vals["xy".index(member)], dt)
        if name == "printf":
            return self.printf(node, args)
        return self.device_call(node, name, args, None)

    _CONVERSION = None

    def printf(self, node, args):
        """``printf(format, …)``: the format's conversions as Python's ``%`` has them (length
        modifiers dropped; each value converted as C's varargs pass it: ``%d`` an int of the
        modifier's width, ``%u``/``%x``/``%o`` its unsigned bits, ``%f``/``%e``/``%g`` a double)."""
        import re
        fmt_node = args[0] if args else None
        if fmt_node is None or fmt_node.type not in ("string_literal", "concatenated_string"):
            raise self.error(node, "printf needs a string literal as its format")
        parts = [fmt_node] if fmt_node.type == "string_literal" else \
            [c for c in fmt_node.named_children if c.type == "string_literal"]
        raw = "".join(text(p)[1:-1] for p in parts)
        fmt = raw.encode().decode("unicode_escape")
        spec = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfFgGcs%p])")
        out, values, k, pos = [], [], 1, 0
        for m in spec.finditer(fmt):
            out.append(fmt[pos:m.start()].replace("%", "%%"))
            pos = m.end()
            flags, width, prec, length, conv = m.groups()
            if conv == "%":
                out.append("%%")
                continue
            if "*" in (width or "") + (prec or ""):
                raise self.unsupported(fmt_node, "a * width or precision in printf")
            if conv in "sp":
                raise self.unsupported(fmt_node, f"printf's %{conv} (strings and pointers)")
            if k >= len(args):
                raise self.error(node, f"printf's format has more conversions than values ({m.group(0)})")
            a = args[k]
            k += 1
            wide = length in ("ll", "l", "z", "j", "t")
            dt = F64 if conv in "eEfFgG" else U8 if conv == "c" else \
                (U64 if wide else U32) if conv in "ouxX" else (I64 if wide else I32)
            values.append(self.cast(self.expr(a), dt))
            out.append("%" + (flags or "") + (width or "") + ("." + prec if prec is not None else "") +
                       ("d" if conv == "i" else conv))
        out.append(fmt[pos:].replace("%", "%%"))
        if k != len(args):
            raise self.error(node, f"printf is given {len(args) - 1} values for {k - 1} conversions")
        return ast.Call(ast.Name("_Cprintf"), [ast.Constant("".join(out))] + values, [])

    def atomic(self, node, op, args):
        target = args[0]
        if not (target.type == "pointer_expression" and text(target.children[0]) == "&") and not self.is_pointer(target):
            raise self.error(target, "an atomic needs an address: &a[i]")
        if target.type == "pointer_expression" and text(target.children[0]) == "&":
            arg = target.child_by_field_name("argument")
            while arg.type == "parenthesized_expression":  # &(histo[i / 4])
                arg = arg.named_children[0]
            if arg.type == "field_expression":
                base, index = self.pointer_value(target)
                arg = None
            py = self.lookup(text(arg)) if arg is not None and arg.type == "identifier" else None
            if arg is None:
                pass
            elif py is not None and py in getattr(self, "scalar_shared", ()):
                base, index = py, self.typed(0, I32)
            elif py is not None and self.vars[py].kind == "ref":
                base, index = self.ref_index(py)
            else:
                base, index = self.element(arg)
        else:
            base, index = self.pointer_value(target)
        ct = self.vars[base]
        if base in self.virtual:
            raise self.unsupported(target, "an atomic on a __shared__ array read as another type")
        if ct.space not in ("global", "shared", "any"):  # "any": a T & parameter, bound by each caller
            raise self.error(target, "an atomic needs global or shared memory")
        vals = [self.convert(self.expr(a), a, ct.dtype) for a in args[1:]]
        return ast.Call(ast.Name(f"_Catomic_{op}"), [ast.Name(base), index] + vals, [])

    def device_call(self, node, name, args, targs_node, ret_array=None):
        fn = self.unit.device_function(name, targs_node, self, node)
        if fn is None:
            raise self.error(node, f"`{name}` is not a __device__ function of this file (or a built-in the front end knows)")
        lowered = fn.lowering
        out = []
        for a, (cname, ct) in zip(args, lowered.params):
            if ct.kind == "group":
                py = self.lookup(text(a)) if a.type == "identifier" else None
                if py is None or self.vars[py].kind != "group" or self.vars[py].shape != ct.shape:
                    raise self.error(a, f"{name}'s parameter {cname} is a cooperative group ({ct.shape})")
                continue
            if ct.kind == "struct":
                pre, values = self.struct_rvalue(a, ct.struct)
                self.pre += pre
                out += values
                continue
            if ct.kind == "ref":
                out += self.ref_argument(a, ct, name, cname)
                continue
            if ct.kind == "ptr" and ct.struct is not None:
                base, off = self.pointer_value(a)
                got = self.pointee(a)
                if self.vars[base].dtype != ct.dtype or got is None or got.width != ct.struct.width:
                    raise self.error(a, f"{name}'s parameter {cname} is a {ct.c()}, passed `{text(a)[:40]}`")
                out += [ast.Name(base), self.cast(off, I64)]
                continue
            if ct.kind == "ptr":
                base, off = self.pointer_value(a)
                if base in self.virtual:
                    raise self.unsupported(a, "passing a __shared__ array read as another type to a function")
                if self.vars[base].dtype != ct.dtype:
                    raise self.error(a, f"{name}'s parameter {cname} is a {ct.c()}, passed a {self.vars[base].c()}")
                out += [ast.Name(base), self.cast(off, I64)]
            else:
                out.append(self.convert(self.expr(a), a, ct.dtype))
        if len(args) != len(lowered.params):
            raise self.error(node, f"{name} takes {len(lowered.params)} arguments, called with {len(args)}")
        if lowered.return_struct is not None:
            if ret_array is None:
                raise self.error(node, f"{name} returns a {lowered.return_struct.name}: assign it to one")
            out.append(ast.Name(ret_array))
        elif ret_array is not None:
            raise self.error(node, f"{name} does not return a struct")
        ret = ast.Call(ast.Name(fn.pyname), out, [])
        return ret

    def struct_call(self, node, st):
        """A call of a ``__device__`` function returning a struct: it writes the members into a
        local array this passes it (one per call), read back into values here."""
        tmp = self.fresh("_Cr")
        self.vars[tmp] = CType("array", st.element, [st.width], "local")
        self.pre.append(self.at(ast.Assign([ast.Name(tmp, ast.Store())], ast.Call(
            ast.Name("_Clocal"), [ast.Constant(st.width), ast.Name(dname(st.element))], [])), node))
        fnode = node.child_by_field_name("function")
        args = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
        if fnode.type == "template_function":
            call = self.device_call(node, text(fnode.child_by_field_name("name")), args,
                                    fnode.child_by_field_name("arguments"), ret_array=tmp)
        else:
            call = self.device_call(node, text(fnode), args, None, ret_array=tmp)
        self.pre.append(self.at(ast.Expr(call), node))
        names = []
        for k in range(st.width):
            n = self.fresh("_Cv")
            self.vars[n] = CType("scalar", st.element)
            self.pre.append(self.at(ast.Assign([ast.Name(n, ast.Store())],
                                               ast.Subscript(ast.Name(tmp), self.typed(k, I32), ast.Load())), node))
            names.append(n)
        return [], [ast.Name(n) for n in names]
