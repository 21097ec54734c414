"""CuPy's interface to CUDA C: ``RawModule``, ``RawKernel``, and the kernels they hold.

``RawModule(code=…)`` (or ``path=…``) preprocesses and parses the file once; each kernel is
lowered and compiled when ``get_function`` first asks for it, so a kernel that uses a
construct outside the subset is refused there (naming its C line and column) while the
other kernels of the file still load. ``kernel(grid, block, args, shared_mem=0)`` checks
the arguments against the C signature and runs the launch on the engine, returning its
``Stats``; every counter, race record and sanitizer message names the ``.cu`` file's lines.
"""

from __future__ import annotations

import ast
import hashlib
import linecache
import re

import numpy as np

from ... import model, reference
from ...diagnostics import TOOLS
from ...devices import H100
from ..analysis import CompileError, Source
from ..kernel import DeviceFunction, Kernel
from . import arith
from .lower import (C_NAMES, NAMESPACE, SCALAR_TYPES, VECTORS, CType, Lowering, scan, scan_struct_templates,
                    scan_structs, scan_typedefs, text)
from .parse import parse
from .preprocess import preprocess_rows
from .structs import StructArg

_CACHE: dict[tuple, "Unit"] = {}


class CSource(Source):
    """A lowered C function: what ``analysis.Source`` gives the compiler for a Python one
    (its tree with the ``.cu`` file's lines, its namespace, its file name), with C's arithmetic."""

    rules = arith.C

    def __init__(self, name: str, tree: ast.FunctionDef, namespace: dict, filename: str):
        self.func = None
        self.name = name
        self.tree = tree
        self.namespace = namespace
        self.filename = filename
        self.closure = set()


class CDeviceFunction(DeviceFunction):
    """A ``__device__`` function (one template instance) as the compiler calls it."""

    def __init__(self, source: CSource, lowering: Lowering, pyname: str):
        self.py_func = None
        self.__name__ = source.name
        self.__doc__ = None
        self._source = source
        self._specs = {}
        self.lowering = lowering
        self.pyname = pyname


class CKernel(Kernel):
    """A ``__global__`` function as the engine runs it (``simtdocs.launch`` accepts it)."""

    language = "c"

    def __init__(self, source: CSource, tools=TOOLS, device=H100):
        self.py_func = None
        self.arg_types = None
        self.__name__ = source.name
        self.__qualname__ = source.name
        self.__doc__ = None
        self.__module__ = __name__
        self._source = source
        self._specs = {}
        self._last_signature = None
        self.last_stats = None
        self.tools = tools
        self.device = device

    def _arguments(self, args) -> tuple:
        return tuple(args)  # checked against the C signature by Function.__call__

    def __call__(self, *args):
        """One pass of blocks; its ``printf`` lines are printed after it, in block and thread
        order (passes run in block order, so the launch's lines come out sorted)."""
        blk = args[0] if args else None
        if blk is None or not hasattr(blk, "nthreads"):
            return super().__call__(*args)
        blk.printf_lines = []
        try:
            return super().__call__(*args)
        finally:
            lines, blk.printf_lines = blk.printf_lines, None
            if lines:
                print("".join(line for *_, line in sorted(lines)), end="", flush=True)


class Unit:
    """One preprocessed, parsed ``.cu`` text: its functions, lowered on demand."""

    def __init__(self, code: str, filename: str, options=()):
        self.filename = filename
        self.code = code
        lines = code.splitlines(keepends=True)
        linecache.cache[filename] = (len(code), None, lines, filename)
        #: the preprocessed text, and each of its rows' (file, line): an -I header's text keeps its own lines
        self.text, self.rows = preprocess_rows(code, filename, options)
        self.tree = parse(self.text)
        self.functions = scan(self.tree.root_node)
        self.struct_nodes = scan_structs(self.tree.root_node)
        self.struct_templates = scan_struct_templates(self.tree.root_node)
        self.typedefs = scan_typedefs(self.tree.root_node)
        self.structs: dict = {}  # name -> structs.Struct, defined when a function first names it
        self.namespace = dict(NAMESPACE)
        #: ``__constant__`` and ``__device__`` arrays: name -> (C type, python name); the arrays live in the namespace
        self.globals: dict[str, tuple] = {}
        self.consts: dict[str, tuple] = {}  # file-scope `const T name = value;`: name -> (dtype, value node)
        self._declare_globals()
        self._instances: dict[tuple, object] = {}
        self._busy: set = set()

    def _declare_globals(self):
        """The file's ``__constant__`` and ``__device__`` variables (zeroed, or as initialised). One
        outside the subset is refused only for the kernels that use it (``refused``), as the
        other kernels of a published file must still load."""
        self.refused: dict[str, CompileError] = {}
        for node in self.tree.root_node.children:
            if node.type != "declaration":
                continue
            try:
                self._declare_global(node)
            except CompileError as e:
                for d in node.children_by_field_name("declarator"):
                    name = _declared_name(d)
                    if name is not None:
                        self.refused[name] = e

    def _declare_global(self, node):
        from ..types import DeviceArray
        from .lower import FunctionInfo
        info = FunctionInfo(node, "global-variable", "(file scope)")
        low = Lowering(self, info)
        quals = low.qualifiers(node)
        space = "const" if "__constant__" in quals else "global" if "__device__" in quals or "__managed__" in quals else None
        if space is None:
            if quals & {"const", "constexpr", "static const", "static constexpr"} or "const" in " ".join(quals).split():
                self._file_constant(node, low)
            return
        decls = [d for d in node.children_by_field_name("declarator") if not _is_prototype(d)]
        if not decls:
            return  # `__device__ void put(int, float *);`: a prototype; the definition is scanned
        dt = low.base_type(node)
        for d in decls:
            init = None
            if d.type == "init_declarator":  # `__constant__ float c[] = {…};`, `__device__ unsigned n = 0;`
                init = d.child_by_field_name("value")
                d = d.child_by_field_name("declarator")
            dims = []
            while d.type == "array_declarator":
                size = d.child_by_field_name("size")
                dims.insert(0, None if size is None else low.const_int(size))
                d = d.child_by_field_name("declarator")
            if d.type != "identifier":
                raise low.unsupported(d, "this file-scope declaration")
            name = text(d)
            values = None if init is None else _initial_values(low, init, dt)
            if None in dims:
                if dims.index(None) != 0 or values is None:
                    raise low.unsupported(d, "an array of unknown size")
                inner = int(np.prod(dims[1:])) if len(dims) > 1 else 1
                dims[0] = -(-len(values) // inner)
            shape = tuple(dims) or (1,)
            array = np.zeros(shape, dt)
            if values is not None:
                if len(values) > array.size:
                    raise low.error(init, f"{len(values)} initial values for {name}, which has {array.size} elements")
                array.reshape(-1)[:len(values)] = np.array(values).astype(dt)  # C converts each to the element type
            if space == "global":
                array = array.view(DeviceArray)
            pyname = f"_Cglobal_{name}"
            self.namespace[pyname] = array
            self.globals[name] = (CType("array", dt, list(shape), space), pyname, not dims)

    def _file_constant(self, node, low):
        """``const int BLOCK_SIZE = 256;`` at file scope: a name for its value (an array size, a bound)."""
        try:
            dt = low.base_type(node)
        except CompileError:
            return  # a constant of a type the kernels cannot use: left to the host code
        if dt is None:
            return
        for d in node.children_by_field_name("declarator"):
            if d.type == "init_declarator" and d.child_by_field_name("declarator").type == "identifier":
                self.consts[text(d.child_by_field_name("declarator"))] = (dt, d.child_by_field_name("value"))

    def where(self, row: int) -> tuple[str, int]:
        """The file and line of a row (0-based) of the preprocessed text."""
        return self.rows[row] if 0 <= row < len(self.rows) else (self.filename, row + 1)

    def line(self, lineno: int, filename: str | None = None) -> str:
        return linecache.getline(filename or self.filename, lineno).strip()

    # -- instances ------------------------------------------------------------------------------

    def _pick(self, name, kind_ok, node=None):
        infos = [f for f in self.functions.get(name, []) if kind_ok(f.kind)]
        return infos

    @staticmethod
    def _names_arguments(given: list[str], targs: dict) -> bool:
        """Whether an explicit specialization's arguments (``["int"]``, ``["float", "256"]``) are
        the template arguments ``targs`` of an instance."""
        values = list(targs.values())
        if len(given) != len(values):
            return False
        for g, v in zip(given, values):
            g = " ".join(g.split())
            if isinstance(v, np.dtype):
                if g not in SCALAR_TYPES or np.dtype(SCALAR_TYPES[g]) != v:
                    return False
            elif str(v) != g.rstrip("uUlL"):
                return False
        return True

    def instance(self, name: str, targs: dict, want: str):
        """The lowered function ``name`` for template arguments ``targs``: a CKernel or a CDeviceFunction."""
        infos = self.functions.get(name, [])
        infos = [f for f in infos if (f.kind == "global") == (want == "global")]
        if not infos:
            return None
        primary = [f for f in infos if f.specialization is None]
        info = primary[0] if primary else infos[0]
        special = next((f for f in infos if f.specialization is not None
                        and self._names_arguments(f.specialization, targs)), None)
        key = (name, tuple(sorted((k, str(v)) for k, v in targs.items())), want)
        if key in self._instances:
            return self._instances[key]
        if key in self._busy:
            raise CompileError(f"{self.filename}: {name} calls itself: recursion is not supported in a kernel")
        self._busy.add(key)
        try:
            low = Lowering(self, special or info, {} if special else targs)
            suffix = "".join("_" + re.sub(r"\W", "_", str(v)) for v in targs.values())
            low.pyname = (name + ("__" + suffix.strip("_") if suffix else ""))
            tree = low.function()
            tree.name = low.pyname
            where = self.where((special or info).node.start_point.row)[0]  # a function of an -I header: its file
            source = CSource(name if not targs else low.pyname, tree, self.namespace, where)
            if want == "global":
                obj = CKernel(source)
                obj.lowering = low
            else:
                obj = CDeviceFunction(source, low, f"_Cdev_{low.pyname}")
                self.namespace[obj.pyname] = obj
        finally:
            self._busy.discard(key)
        self._instances[key] = obj
        return obj

    def type_name(self, s: str) -> np.dtype:
        """A template argument's type by its C name: a scalar type, or a typedef of one
        (``typedef unsigned char uint8;`` makes ``testKernel<uint8>`` an instance of unsigned char)."""
        seen = set()
        name = given = " ".join(s.replace("const", "").split())
        while name in self.typedefs and name not in SCALAR_TYPES and name not in seen:
            seen.add(name)
            name = " ".join(text(self.typedefs[name]).replace("const", "").split())
        for n in (given, name):
            n = n[len("struct "):] if n.startswith("struct ") else n
            if n in self.struct_nodes or n in VECTORS:
                return StructArg(n)
        return _type_name(name)

    def template_args(self, info, values: list, node=None) -> dict:
        params = info.template
        if params is None:
            if values:
                raise CompileError(f"{info.name} is not a template")
            return {}
        names = []
        for p in params.named_children:
            if p.type == "type_parameter_declaration":
                names.append(("type", text(p.named_children[-1])))
            elif p.type == "parameter_declaration":
                names.append(("value", text(p.child_by_field_name("declarator"))))
            else:
                raise CompileError(f"{info.name}: the template parameter `{text(p)}` is not supported")
        if len(values) != len(names):
            raise CompileError(f"{info.name} has {len(names)} template parameters, given {len(values)}")
        out = {}
        for (kind, n), v in zip(names, values):
            if kind == "type":
                if not isinstance(v, (np.dtype, StructArg)):
                    v = self.type_name(str(v))
                out[n] = v
            else:
                out[n] = int(v) if not isinstance(v, str) else _int_value(v)
        return out

    def device_function(self, name, targs_node, caller: Lowering, node):
        infos = [f for f in self.functions.get(name, []) if f.kind == "device"]
        if not infos:
            return None
        info = infos[0]
        values = []
        if targs_node is not None:
            for a in targs_node.named_children:
                if a.type == "comment":
                    continue
                arg = " ".join(text(a).split())
                if a.type == "type_descriptor" and isinstance(caller.targs.get(arg), int):
                    # `pick<dir>(x)` in a `template <unsigned dir>`: the grammar reads a lone name as a
                    # type; it is the caller's value parameter, passed on
                    values.append(caller.targs[arg])
                elif a.type == "type_descriptor" and arg in self.consts and caller.lookup(arg) is None \
                        and self.consts[arg][0].kind in "biu":
                    values.append(caller.const_int(self.consts[arg][1]))  # a file-scope `const int N = 4;`
                elif a.type == "type_descriptor":
                    values.append(caller.base_type(a, a.child_by_field_name("type") or a.named_children[0]))
                else:
                    values.append(caller.const_int(a))
        elif info.template is not None:
            values = self._deduce(info, caller, node)
        try:
            targs = self.template_args(info, values)
        except CompileError as e:
            raise caller.error(node, str(e)) from None
        return self.instance(name, targs, "device")

    def _deduce(self, info, caller, node):
        """Template arguments from the call's argument types (``warpReduce(v)`` with a ``T v``)."""
        fn = info.node
        decl = fn.child_by_field_name("declarator")
        while decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        params = decl.child_by_field_name("parameters").named_children
        args = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
        found = {}
        for p, a in zip(params, args):
            tname = " ".join(text(p.child_by_field_name("type")).split())
            is_ptr = p.child_by_field_name("declarator") is not None and p.child_by_field_name("declarator").type == "pointer_declarator"
            if is_ptr:
                base, _ = caller.pointer_value(a)
                found.setdefault(tname, caller.vars[base].dtype)
            else:
                t = caller.static_type(a)
                if t is not None:
                    found.setdefault(tname, t)
        values = []
        for p in info.template.named_children:
            if p.type == "type_parameter_declaration":
                n = text(p.named_children[-1])
                if n not in found:
                    raise caller.error(node, f"cannot deduce the template argument {n} of {info.name}; write {info.name}<...>(...)")
                values.append(found[n])
            else:
                raise caller.error(node, f"write the template arguments of {info.name} explicitly ({info.name}<...>(...))")
        return values


def _declared_name(d) -> str | None:
    """The name a file-scope declarator declares (``n`` of ``*n[4] = …``)."""
    while d is not None and d.type != "identifier":
        d = d.child_by_field_name("declarator") or next((c for c in d.named_children if c.type == "identifier"), None)
    return None if d is None else text(d)


def _initial_values(low, node, dt) -> list:
    """A file-scope variable's initialiser (``{1.0f, -2, …}``, nested lists flattened, or one
    value) as Python numbers; each must be a constant."""
    if node.type == "initializer_list":
        out = []
        for c in node.named_children:
            if c.type != "comment":
                out += _initial_values(low, c, dt)
        return out
    return [_constant(low, node)]


def _constant(low, node):
    t = node.type
    if t == "number_literal":
        return low.literal(node)[0]
    if t == "parenthesized_expression":
        return _constant(low, node.named_children[0])
    if t == "unary_expression" and text(node.child_by_field_name("operator")) in "+-":
        v = _constant(low, node.child_by_field_name("argument"))
        return -v if text(node.child_by_field_name("operator")) == "-" else v
    if t == "char_literal" and len(text(node)) == 3:
        return ord(text(node)[1])
    return low.const_int(node)  # true, false, sizes, integer arithmetic of constants


def _is_prototype(d) -> bool:
    """Whether a file-scope declarator declares a function (``put(int, float *)``, ``*f(int)``)."""
    while d is not None and d.type in ("pointer_declarator", "reference_declarator"):
        d = d.child_by_field_name("declarator") or (d.named_children[-1] if d.named_children else None)
    return d is not None and d.type == "function_declarator"


def _dtype_text(dt: np.dtype) -> str:
    return "[" + ", ".join(f"({n!r}, np.{dt.fields[n][0].name})" if dt.fields[n][0].names is None
                          else f"({n!r}, …)" for n in dt.names) + "]"


def _type_name(s: str) -> np.dtype:
    s = " ".join(s.replace("const", "").split())
    if s in SCALAR_TYPES:
        return np.dtype(SCALAR_TYPES[s])
    raise CompileError(f"the template argument type `{s}` is not supported")


def _int_value(s: str) -> int:
    s = s.strip().rstrip("uUlL")
    if s in ("true", "false"):
        return int(s == "true")
    return int(s, 0)


def _split_args(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Function:
    """A kernel of a module, called as CuPy calls one: ``kernel(grid, block, args, shared_mem=0)``.

    ``args``: numpy arrays for pointers (of the pointer's element type exactly) and numpy
    scalars of the parameter's C type (``np.int32(n)`` for an ``int``). Returns the launch's
    ``Stats`` (also ``last_stats``). ``max_dynamic_shared_size_bytes``: raise it to launch
    with more than 48 KB of dynamic shared memory, as ``cudaFuncSetAttribute`` does.
    """

    language = "c"

    def __init__(self, kernel: CKernel, name: str):
        self.kernel = kernel
        self.name = name
        self.__name__ = kernel.__name__
        self.params = kernel.lowering.params
        self.max_dynamic_shared_size_bytes = 0
        self.last_stats = None
        # compile now: a refusal names its line at get_function, before anything runs
        kinds = []
        for _, t in self.params:
            kinds += ["array"] if t.kind == "ptr" else ["value"] * (t.struct.width if t.kind == "struct" else 1)
        self.views = getattr(kernel.lowering, "view_args", [])
        kinds += ["array"] * len(self.views)
        self.kernel.specialize(tuple(kinds))

    def check(self, args) -> tuple:
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"{self.name}: args must be a tuple of the kernel's arguments")
        if len(args) != len(self.params):
            raise TypeError(f"{self.name} takes {len(self.params)} arguments ({self.signature()}), got {len(args)}")
        out = []
        for a, (cname, t) in zip(args, self.params):
            if t.kind == "struct":
                out += self._struct_argument(a, cname, t.struct)
                continue
            out.append(a)
            if t.kind == "ptr":
                if a is None:
                    raise TypeError(f"{self.name}: parameter {cname} is a {t.c()}: a NULL pointer is not supported "
                                    f"here (the kernel's `{cname} != NULL` is taken as true); pass an array")
                if not isinstance(a, np.ndarray):
                    raise TypeError(f"{self.name}: parameter {cname} is a {t.c()}: pass a numpy array of "
                                    f"{np.dtype(t.dtype).name}, not {type(a).__name__}")
                if t.struct is not None and a.dtype != t.dtype:
                    if a.dtype.names is not None and a.dtype.itemsize == t.struct.itemsize and all(
                            a.dtype.fields[n][0] == t.dtype for n in a.dtype.names):
                        out[-1] = a.view(t.dtype).reshape(-1)  # an array of float4 records: its floats
                        continue
                    raise TypeError(f"{self.name}: parameter {cname} is a {t.c()}: pass a numpy array of "
                                    f"{t.dtype.name}, {t.struct.width} elements per {t.struct.name} "
                                    f"(given {a.dtype}; reinterpret bytes with a.view(np.{t.dtype.name}))")
                if a.dtype != t.dtype:
                    raise TypeError(f"{self.name}: parameter {cname} is a {t.c()}, given an array of {a.dtype}: "
                                    f"convert it (a.astype(np.{t.dtype.name})) or reinterpret its bytes "
                                    f"(a.view(np.{t.dtype.name}))")
            else:
                want = C_NAMES.get(t.dtype, str(t.dtype))
                fix = f"np.{t.dtype.name}({cname})"
                if isinstance(a, np.generic):
                    if a.dtype != t.dtype:
                        raise TypeError(f"{self.name}: parameter {cname} is {want}, given a numpy {a.dtype}: "
                                        f"pass {fix}")
                elif isinstance(a, (bool, int, float)):
                    what = "a Python int (CuPy passes it as a 64-bit long long)" if isinstance(a, int) and not \
                        isinstance(a, bool) else f"a Python {type(a).__name__}"
                    raise TypeError(f"{self.name}: parameter {cname} is {want}, given {what}: pass {fix}")
                else:
                    raise TypeError(f"{self.name}: parameter {cname} is {want}, given {type(a).__name__}: pass {fix}")
        return tuple(out) + self._views(args)

    def _views(self, args) -> tuple:
        """The arguments the kernel reads as another type (``(uint4 *)d_Data``): numpy views of them."""
        out = []
        for k, dt in self.views:
            a, cname = args[k], self.params[k][0]
            if not isinstance(a, np.ndarray) or not a.flags.c_contiguous or a.nbytes % dt.itemsize:
                raise TypeError(f"{self.name}: the kernel reads parameter {cname} as {C_NAMES.get(dt, dt)}: pass a "
                                f"C-contiguous array whose size is a multiple of {dt.itemsize} bytes")
            out.append(a.reshape(-1).view(dt))
        return tuple(out)

    def _struct_argument(self, a, cname, st) -> list:
        """A struct argument (a numpy structured scalar, ``np.array((…), dtype)[()]``) as one value per member."""
        want = st.numpy_dtype()
        if isinstance(a, np.ndarray) and a.shape == () and a.dtype.names is not None:
            a = a[()]
        if not (isinstance(a, np.void) and a.dtype.names is not None):
            raise TypeError(f"{self.name}: parameter {cname} is a struct {st.name}: pass a numpy structured scalar, "
                            f"np.array(({', '.join('…' for _ in st.fields)}), dtype={_dtype_text(want)})[()]")
        if a.dtype.names != want.names or any(a.dtype.fields[n][0] != want.fields[n][0] for n in want.names):
            raise TypeError(f"{self.name}: parameter {cname} is a struct {st.name} {_dtype_text(want)}, given a "
                            f"record of dtype {a.dtype}")
        out = []
        for path, ct in st.leaves():
            v = a
            for name in path:
                v = v[name]
            out.append(ct.dtype.type(v))
        return out

    def signature(self) -> str:
        return ", ".join(f"{t.c()} {n}" for n, t in self.params)

    def __call__(self, grid, block=None, args=None, *more, shared_mem: int = 0, **options):
        if isinstance(grid, (model.Block, reference.Block)):  # run by simtdocs.launch(kernel, …)
            given = ([] if block is None else [block]) + ([] if args is None else [args]) + list(more)
            c_args = list(given)
            if any(t.kind == "struct" for _, t in self.params):  # a struct argument: one value per member
                out = []
                for a, (cname, t) in zip(given, self.params):
                    out += self._struct_argument(a, cname, t.struct) if t.kind == "struct" else [a]
                given = out
            return self.kernel(grid, *given, *self._views(c_args))
        if more or block is None or args is None:
            raise TypeError(f"call a kernel as {self.name}(grid, block, args, shared_mem=0)")
        args = self.check(args)
        limit = self.max_dynamic_shared_size_bytes or None
        try:
            stats = self.kernel.launch(grid, block, args, shared_bytes=int(shared_mem),
                                       max_dynamic_shared_bytes=limit, **options)
        except model.LaunchError as e:
            if "48 KB" in str(e):
                raise model.LaunchError(f"{self.name}: {e} (here: set {self.__name__}.max_dynamic_shared_size_bytes = N "
                                        f"first, as CuPy's RawKernel attribute does)") from None
            raise
        self.last_stats = stats
        return stats

    def as_masks(self) -> str:
        return self.kernel.as_masks()

    def __repr__(self) -> str:
        return f"<simtdocs.cuda RawKernel {self.name}({self.signature()})>"


class RawModule:
    """CuPy's ``RawModule(code=None, path=None, options=(), name_expressions=None)``."""

    def __init__(self, code: str | None = None, path: str | None = None, options=(), backend="nvrtc",
                 translate_cucomplex=False, *, enable_cooperative_groups=False, name_expressions=None, jitify=False):
        if (code is None) == (path is None):
            raise TypeError("RawModule needs exactly one of code= and path=")
        if path is not None:
            with open(path, encoding="utf-8", errors="replace") as f:  # a comment's Latin-1 name: not code
                code = f.read()
            filename = str(path)
        else:
            digest = hashlib.sha1(code.encode()).hexdigest()[:10]
            filename = f"<cuda {digest}>.cu"
        key = (code, tuple(options), filename)
        unit = _CACHE.get(key)
        if unit is None:
            unit = Unit(code, filename, options)
            if not unit.globals:  # compiled kernels are shared by modules of the same text; variables are not
                _CACHE[key] = unit
        self.unit = unit
        self.options = tuple(options)
        self._functions: dict[str, Function] = {}
        for expr in name_expressions or ():
            self.get_function(expr)

    def get_function(self, name: str) -> Function:
        """A kernel by its name, or a template instance by its C++ name (``"reduce4<float,256>"``)."""
        if name in self._functions:
            return self._functions[name]
        m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*(?:<(.*)>)?\s*", name)
        if not m:
            raise CompileError(f"{name!r} is not a kernel name")
        base, targs = m.group(1), m.group(2)
        infos = [f for f in self.unit.functions.get(base, []) if f.kind == "global"]
        if not infos:
            known = sorted(n for n, fs in self.unit.functions.items() if any(f.kind == "global" for f in fs))
            raise CompileError(f"no __global__ function {base!r} in {self.unit.filename} (its kernels: {', '.join(known)})")
        values = _split_args(targs) if targs else []
        if infos[0].template is not None and not values:
            raise CompileError(f"{base} is a template: name an instance, e.g. \"{base}<float,256>\" "
                               f"(name_expressions, as CuPy requires)")
        targ = self.unit.template_args(infos[0], values)
        kernel = self.unit.instance(base, targ, "global")
        fn = self._functions[name] = Function(kernel, name)
        return fn

    def get_global(self, name: str) -> np.ndarray:
        """A ``__constant__`` or ``__device__`` variable as a writable numpy array (CuPy returns a
        memory pointer; write into this array where host code would call ``cudaMemcpyToSymbol``).
        A scalar is an array of one element."""
        if name not in self.unit.globals:
            raise CompileError(f"no __constant__ or __device__ variable {name!r} in {self.unit.filename}")
        return self.unit.namespace[self.unit.globals[name][1]]


class RawKernel(Function):
    """CuPy's ``RawKernel(code, name, options=())``: one kernel of a C source."""

    def __init__(self, code: str, name: str, options=(), backend="nvrtc", translate_cucomplex=False, *,
                 enable_cooperative_groups=False, jitify=False):
        module = RawModule(code=code, options=options)
        fn = module.get_function(name)
        self.__dict__.update(fn.__dict__)
        self.module = module
        self.code = code
