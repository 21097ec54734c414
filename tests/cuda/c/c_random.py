"""Random per-thread kernels in CUDA C, each one a tree printed in C (and, where the two
languages mean the same, in the numba dialect too).

Why a tree and not a C printer beside ``cuda_random_kernels``' Python one: that generator's
programs are typed as numba types them (integer arithmetic in int64, float literals float64,
``float32 - int64`` float64, and each SSA version of a variable typed on its own, unified
where control flow joins). Their C twin with the same meaning would need numba's type at
every version of every variable, which is the dialect's inference itself: a checker built on
it would check the compiler against itself. Here each program is one typed tree
(``Program``), drawn from a ``choose(kind, lo, hi)`` stream with the same shape and the same
constructs as ``cuda_random_kernels.Gen`` (per-thread and uniform ``if``/``else if``/``else``,
``&&``/``||`` with loads on the short-circuited side, ``?:``, ``for`` loops with per-thread
and uniform bounds, ``while`` loops, ``break``/``continue``/early ``return``, global loads and
stores (``=`` and ``+=``), shared memory with and without ``__syncthreads``, shuffles,
ballots, global and shared atomics, device functions with an early return, local arrays, the
``if (gid >= k) return;`` guard and barriers after exits), and printed:

* ``mode="same"``: values on which C and numba agree: integers stay small and never negative
  (no ``-``, so no negative ``/`` or ``%``, no 32-bit overflow: every assignment takes
  ``% 1009``), every float is a ``float`` (``np.float32(0.5)`` in the dialect, ``0.5f`` in C,
  ``np.float32(i)`` where C converts an ``int``), and the literals compared are exact in
  float32. The C kernel, the dialect kernel and both engines must agree on every array, every
  counter of every line (C lines mapped to the dialect's lines, ``Program.line_map``), the
  race records and the errors.
* ``mode="c"``: C's own rules where numba's differ, with threads that do not talk (no shared
  memory, barriers, shuffles or votes: a per-thread oracle can give them a meaning): ``int``
  products and sums past 32 bits (operands from ``W``, near ``INT_MAX``), truncating ``/``
  and ``%`` of negatives, ``unsigned`` mixed with ``int`` (``-1 < 0u`` is false) and with
  ``long long`` (signed wins), ``char`` and ``short`` variables and ``int8``/``int16``
  elements promoted to ``int``, conversions that wrap, shifts, ``x * 0.5`` in double beside
  ``x * 0.5f`` in float, decimal literals past ``INT_MAX`` (64-bit). Its meaning is
  ``c_oracle``'s: a per-thread interpreter of the same tree in C's rules, written from the
  C standard, independently of ``simtdocs.cuda.c.arith``. Only C is printed. This mode also
  draws ``do … while``, ``++``/``--`` and every compound assignment (``/=``, ``<<=`` …).
  ``private=False`` adds shared memory, barriers, shuffles and votes over C's types, which no
  per-thread oracle gives a meaning: those programs check the engines against each other.

Where the C front end and the dialect were found to differ, the generator steers around the
difference until it is fixed, each behind a module constant naming the report in
``/tmp/helpers/c-requests.md`` (set it to True to draw the construct again).

Every index is taken modulo its array's size (``(unsigned)(e) % N`` in ``mode="c"``, where
``e`` may be negative), so a kernel is valid unless its control flow makes it invalid (a
shuffle from a lane that left, a barrier that some threads skip): then every run must raise
the same error.
"""

from __future__ import annotations

import itertools
import linecache

import numpy as np

BLOCKS = [(32,), (64,), (48,), (7,), (33,), (16, 4), (8, 8), (128,)]
GRIDS = [(1,), (2,), (3,), (2, 2)]
SLOTS = 4
NA, NB, NH, NW = 97, 61, 7, 16
IMOD = 1009
#: exact in float32: a literal means the same number as a float and as a double
FLOATS = [0.5, 1.0, 2.0, -1.5, 0.25, 0.75]
W_VALUES = [2147483647, -2147483648, 2147483000, -2147483000, 123456789, -987654321, 65536, 46341,
            -46341, 1999999999, -1999999999, 7, 1000000007, -1000000007, 1073741824, 3]
U_VALUES = [4294967295, 4294967294, 2147483648, 2147483649, 3000000000, 65536, 4000000000, 123456789,
            1, 4294967289, 16777217, 99, 3999999999, 65537, 7, 2147483647]
S8_VALUES = [127, -128, 100, 100, -100, 64, -64, 1, 127, 120, -1, 99, 50, -120, 2, 88]
S16_VALUES = [32767, -32768, 30000, -30000, 255, 256, -1, 1, 20000, -20000, 7, 12345, -12345, 32000, 2, 16384]
#: The C front end now lowers ``c ? x : y`` to a select (both arms' loads masked, no branch),
#: as nvcc does, and folds a constant operand of ``||``/``&&`` away (no branch for it); the
#: dialect's ``x if c else y`` with a load in an arm, and its ``and``/``or`` with a constant
#: side, are counted branches (/tmp/helpers/c-requests.md, R6 and R7). Until the two agree,
#: ``mode="same"`` draws no load, call or warp operation in an arm of ``?:`` (the arm is
#: its plain float variable instead) and no constant side of ``&&``/``||`` (``n > 3`` instead).
#: ``mode="c"`` compares C with C and draws them.
SELECT_AND_FOLD_AGREE = False
#: The C front end folds a constant float comparison in a ``?:`` or a side of ``||``/``&&``
#: wrongly (``(0.75f > 0.5f) ? x : y`` is ``y``: /tmp/helpers/c-requests.md, R8); until it is
#: fixed neither mode draws a constant condition there (``n > 3`` instead).
CONSTANT_CONDITIONS_FOLD_RIGHT = False
#: The C front end's ``?:`` select reports an undefined value (a shuffle's missing source) in
#: the arm a lane does not take (/tmp/helpers/c-requests.md, R9); until it is fixed a
#: ``mode="same"`` program has ``?:`` or shuffles, not both (whichever is drawn first).
SELECT_KEEPS_UNDEFINED_PER_LANE = False
#: A ``float`` device function's result assigned to a ``double`` stays a float in the C front
#: end (/tmp/helpers/c-requests.md, R10); until fixed ``clamp(...)`` is assigned to floats only.
DEVICE_RESULT_CONVERTS = False
_counter = itertools.count()


def is_constant(e: E) -> bool:
    """No variable, load, call or warp operation in ``e``."""
    if e.kind in ("name", "load", "call", "shfl", "ballot"):
        return False
    return all(is_constant(x) for x in e.a if isinstance(x, E))


def has_effects(e: E) -> bool:
    """A load, call or warp operation in ``e`` (what a branch would guard)."""
    if e.kind in ("load", "call", "shfl", "ballot"):
        return True
    return any(has_effects(x) for x in e.a if isinstance(x, E))


# -- the tree ------------------------------------------------------------------------------------

class E:
    """An expression: ``kind`` and its parts.

    ``name`` (name,) · ``lit`` (value, ctype) · ``load`` (array, index) · ``bin`` (op, l, r) with
    C's operators (``/`` truncating, ``&&``, ``||``) · ``un`` (op, x) · ``cast`` (ctype, x) ·
    ``cond`` (c, x, y) · ``call`` (function, *args) · ``shfl`` (kind, x, delta) · ``ballot`` (c),
    the popcount of a ballot."""

    __slots__ = ("kind", "a")

    def __init__(self, kind, *a):
        self.kind, self.a = kind, a

    def __repr__(self):
        return c_expr(self)


class S:
    """A statement: ``decl`` (ctype, name, init) · ``array`` (space, ctype, name, size) ·
    ``assign`` (target, op, value) · ``if`` (arms [(cond, body)], orelse | None) · ``for`` (var,
    bound, body, uniform bound) · ``while`` (cond, body) · ``do`` (cond, body) · ``incr`` (target,
    "++" or "--", prefix) · ``break`` · ``continue`` · ``return`` (value | None) ·
    ``sync`` · ``syncwarp`` · ``atomic`` (op, array, index, value) · ``call`` (function, *args)."""

    __slots__ = ("kind", "a")

    def __init__(self, kind, *a):
        self.kind, self.a = kind, a


def name(n):
    return E("name", n)


def lit(v, t=None):
    return E("lit", v, t or ("float" if isinstance(v, float) else "int"))


def bin_(op, l, r):
    return E("bin", op, l, r)


class Program:
    """A random kernel as a tree, and its C (and, in ``mode="same"``, dialect) source.

    ``functions``: ``{name: (return ctype, [(ctype, param)], body)}``, the kernel last;
    ``params``: the kernel's ``[(ctype, name)]``; ``c_source``/``py_source``; ``line_map``:
    the dialect line of each C line that carries a statement."""

    def __init__(self, mode, block, grid, name, functions, params, private):
        self.mode, self.block, self.grid, self.name = mode, block, grid, name
        self.private = private  # no shared memory, barriers, shuffles or votes (c_oracle gives the meaning)
        self.functions, self.params = functions, params
        self.tpb = int(np.prod(block))
        self.c_source, self.py_source, self.line_map = print_program(self)


# -- printing --------------------------------------------------------------------------------------

_PY_OPS = {"/": "//", "&&": "and", "||": "or"}
_PY_NAMES = {"threadIdx.x": "cuda.threadIdx.x", "threadIdx.y": "cuda.threadIdx.y", "blockIdx.x": "cuda.blockIdx.x",
             "blockIdx.y": "cuda.blockIdx.y", "blockDim.x": "cuda.blockDim.x", "gridDim.x": "cuda.gridDim.x"}
_C_ATOMICS = {"add": "atomicAdd", "sub": "atomicSub", "max": "atomicMax", "min": "atomicMin"}
_C_SUFFIX = {"int": "", "unsigned": "u", "long long": "LL", "decimal": ""}


def c_expr(e: E) -> str:
    k, a = e.kind, e.a
    if k == "name":
        return a[0]
    if k == "lit":
        v, t = a
        if t == "float":
            return f"{v!r}f" if v >= 0 else f"(-{-v!r}f)"
        if t == "double":
            return repr(v) if v >= 0 else f"(-{-v!r})"
        if t == "bool":
            return "true" if v else "false"
        return f"{v}{_C_SUFFIX[t]}" if v >= 0 else f"(-{-v}{_C_SUFFIX[t]})"
    if k == "load":
        return f"{a[0]}[{c_expr(a[1])}]"
    if k == "bin":
        return f"({c_expr(a[1])} {a[0]} {c_expr(a[2])})"
    if k == "un":
        return f"({a[0]}{c_expr(a[1])})"
    if k == "cast":
        return f"(({a[0]})({c_expr(a[1])}))"
    if k == "cond":
        return f"({c_expr(a[0])} ? {c_expr(a[1])} : {c_expr(a[2])})"
    if k == "call":
        return f"{a[0]}({', '.join(c_expr(x) for x in a[1:])})"
    if k == "shfl":
        return f"__shfl_{a[0]}_sync(0xFFFFFFFF, {c_expr(a[1])}, {a[2]})"
    if k == "ballot":
        return f"__popc(__ballot_sync(0xFFFFFFFF, {c_expr(a[0])}))"
    raise ValueError(k)


def py_expr(e: E) -> str:
    k, a = e.kind, e.a
    if k == "name":
        return _PY_NAMES.get(a[0], a[0])
    if k == "lit":
        v, t = a
        if t == "float":
            return f"np.float32({v!r})"
        if t == "bool":
            return repr(bool(v))
        return str(v)  # an int (mode="c" prints no dialect: its other literals are not read)
    if k == "load":
        return f"{a[0]}[{py_expr(a[1])}]"
    if k == "bin":
        return f"({py_expr(a[1])} {_PY_OPS.get(a[0], a[0])} {py_expr(a[2])})"
    if k == "un":
        return f"({'not ' if a[0] == '!' else a[0]}{py_expr(a[1])})"
    if k == "cast":
        return f"np.float32({py_expr(a[1])})" if a[0] == "float" else f"<{a[0]}>({py_expr(a[1])})"
    if k == "cond":
        return f"({py_expr(a[1])} if {py_expr(a[0])} else {py_expr(a[2])})"
    if k == "call":
        return f"{a[0]}({', '.join(py_expr(x) for x in a[1:])})"
    if k == "shfl":
        return f"cuda.shfl_{a[0]}_sync(0xFFFFFFFF, {py_expr(a[1])}, {a[2]})"
    if k == "ballot":
        return f"cuda.popc(cuda.ballot_sync(0xFFFFFFFF, {py_expr(a[0])}))"
    raise ValueError(k)


class _Printer:
    def __init__(self, with_python):
        self.c: list[str] = []
        self.py: list[str] = []
        self.with_python = with_python
        self.line_map: dict[int, int] = {}

    def pair(self, indent, c_text, py_text):
        self.c.append("    " * indent + c_text)
        if self.with_python:
            self.py.append("    " * indent + py_text)
            self.line_map[len(self.c)] = len(self.py)

    def c_only(self, indent, text):
        self.c.append("    " * indent + text)

    def py_only(self, indent, text):
        if self.with_python:
            self.py.append("    " * indent + text)

    def body(self, stmts, indent):
        for s in stmts:
            self.stmt(s, indent)

    def stmt(self, s: S, ind):
        k, a = s.kind, s.a
        if k == "decl":
            t, n, init = a
            self.pair(ind, f"{t} {n} = {c_expr(init)};", f"{n} = {py_expr(init)}")
        elif k == "array":
            space, t, n, size = a
            if space == "shared":
                self.pair(ind, f"__shared__ {t} {n}[{size}];", f"{n} = cuda.shared.array({size}, np.float32)")
            else:
                zeros = ", ".join(["0.0f"] * size)  # the dialect's local arrays start at zero
                self.pair(ind, f"{t} {n}[{size}] = {{{zeros}}};", f"{n} = cuda.local.array({size}, np.float32)")
        elif k == "assign":
            t, op, v = a
            self.pair(ind, f"{c_expr(t)} {op} {c_expr(v)};", f"{py_expr(t)} {op} {py_expr(v)}")
        elif k == "if":
            arms, orelse = a
            for i, (cond, body) in enumerate(arms):
                head = "if" if i == 0 else "} else if"
                self.pair(ind, f"{head} ({c_expr(cond)}) {{", f"{'if' if i == 0 else 'elif'} {py_expr(cond)}:")
                self.body(body, ind + 1)
            if orelse is not None:
                self.pair(ind, "} else {", "else:")
                self.body(orelse, ind + 1)
            self.c_only(ind, "}")
        elif k == "for":
            var, bound, body, uniform = a
            # a per-thread bound is evaluated once, as range() evaluates it (C's test runs every
            # trip: its loads would count every trip); a uniform one stays in the test, the form
            # the front end makes the dialect's counted loop of
            init = f"int {var} = 0" if uniform else f"int {var} = 0, {var}_end = {c_expr(bound)}"
            test = c_expr(bound) if uniform else f"{var}_end"
            self.pair(ind, f"for ({init}; {var} < {test}; {var}++) {{", f"for {var} in range({py_expr(bound)}):")
            self.body(body, ind + 1)
            self.c_only(ind, "}")
        elif k == "while":
            cond, body = a
            self.pair(ind, f"while ({c_expr(cond)}) {{", f"while {py_expr(cond)}:")
            self.body(body, ind + 1)
            self.c_only(ind, "}")
        elif k == "do":
            cond, body = a
            self.c_only(ind, "do {")
            self.body(body, ind + 1)
            self.c_only(ind, f"}} while ({c_expr(cond)});")
        elif k == "incr":
            target, op, prefix = a
            self.c_only(ind, f"{op}{c_expr(target)};" if prefix else f"{c_expr(target)}{op};")
        elif k in ("break", "continue"):
            self.pair(ind, f"{k};", k)
        elif k == "return":
            if a[0] is None:
                self.pair(ind, "return;", "return")
            else:
                self.pair(ind, f"return {c_expr(a[0])};", f"return {py_expr(a[0])}")
        elif k == "sync":
            self.pair(ind, "__syncthreads();", "cuda.syncthreads()")
        elif k == "syncwarp":
            self.pair(ind, "__syncwarp();", "cuda.syncwarp()")
        elif k == "atomic":
            op, arr, idx, v = a
            self.pair(ind, f"{_C_ATOMICS[op]}(&{arr}[{c_expr(idx)}], {c_expr(v)});",
                      f"cuda.atomic.{op}({arr}, {py_expr(idx)}, {py_expr(v)})")
        elif k == "call":
            self.pair(ind, f"{c_expr(E('call', *a))};", py_expr(E("call", *a)))
        else:
            raise ValueError(k)


def print_program(p: Program):
    """``(c_source, py_source or None, line_map)``."""
    pr = _Printer(with_python=p.mode == "same")
    pr.c_only(0, f"#define TPB {p.tpb}")
    pr.py_only(0, "import numpy as np")
    pr.py_only(0, "from simtdocs import cuda")
    pr.py_only(0, f"TPB = {p.tpb}")
    for fname, (ret, params, body) in p.functions.items():
        kernel = fname == p.name
        pr.c_only(0, "")
        pr.py_only(0, "")
        pr.py_only(0, "@cuda.jit" if kernel else "@cuda.jit(device=True)")
        cparams = ", ".join(f"{t} {n}" if not t.endswith("*") else f"{t}{n}" for t, n in params)
        head = 'extern "C" __global__' if kernel else "__device__"
        pr.pair(0, f"{head} {ret} {fname}({cparams}) {{", f"def {fname}({', '.join(n for _, n in params)}):")
        pr.body(body, 1)
        pr.c_only(0, "}")
    c = "\n".join(pr.c) + "\n"
    py = "\n".join(pr.py) + "\n" if pr.with_python else None
    return c, py, pr.line_map


# -- generating ------------------------------------------------------------------------------------

class TreeGen:
    """Draws a program from ``choose(kind, lo, hi)`` (``kind`` is ``"int"``: an integer in
    [lo, hi], as ``cuda_random_kernels.Gen`` asks it)."""

    def __init__(self, choose, mode="same", private=None, atomics_mix=False, exits=False):
        assert mode in ("same", "c")
        self.c = choose
        self.mode = mode
        # threads that do not talk: by default in mode "c", which c_oracle gives a meaning
        self.private = (mode == "c") if private is None else private
        self.atomics_mix = atomics_mix and not self.private
        self.exits = exits
        self.ints = ["tid", "gid", "lane"]
        self.floats = ["f0", "f1"]
        self.ivars = ["i0", "i1"]
        if mode == "c":
            self.ivars += ["u0", "c0", "s0", "l0"]
            self.floats += ["d0"]
        self.loop_depth = 0
        self.loops: list[str] = []  # the kinds of the enclosing loops, innermost last
        self.drawn: set[str] = set()  # "select", "shuffle" (SELECT_KEEPS_UNDEFINED_PER_LANE)
        self.size = 0
        self.wvars: set[str] = set()

    def pick(self, seq):
        return seq[self.c("int", 0, len(seq) - 1)]

    def chance(self, pct):
        return self.c("int", 0, 99) < pct

    # indices: always in range, whatever the value
    def index(self, e: E, size) -> E:
        if self.mode == "c":
            return bin_("%", E("cast", "unsigned", e), lit(size, "unsigned"))
        return bin_("%", e, lit(size))

    def load(self, arr, e, size):
        return E("load", arr, self.index(e, size))

    # expressions
    def leaf(self):
        return name(self.pick(self.ints + self.ivars))

    def iexpr(self, depth=0) -> E:
        if self.mode == "c" and self.chance(35):
            return self.c_iexpr(depth)
        k = self.c("int", 0, 8 if depth < 2 else 3)
        if k <= 1:
            return self.leaf()
        if k == 2:
            return lit(self.c("int", 0, 9))
        if k == 3:
            return name("n")
        if k == 4:
            return bin_("+", self.iexpr(depth + 1), self.iexpr(depth + 1))
        if k == 5:
            return bin_("*", self.iexpr(depth + 1), lit(3))
        if k == 6:
            return bin_("%", self.iexpr(depth + 1), lit(self.c("int", 2, 5)))
        if k == 7:
            return bin_("/", self.iexpr(depth + 1), lit(2))
        return self.load("b", self.iexpr(depth + 1), NB)

    def element(self, arr):
        return self.load(arr, self.iexpr(2), NW)

    def divisor(self, depth):
        """Never 0 and never -1 (``INT_MIN / -1`` overflows the quotient itself: a trap on a CPU)."""
        if self.chance(50):
            return lit(self.pick([7, -5, 1000, 3, 2, -7, 65536]))
        return bin_("+", bin_("&", self.iexpr(depth + 1), lit(7)), lit(1))

    def c_iexpr(self, depth) -> E:
        """C's rules where numba's differ (the module's docstring)."""
        k = self.c("int", 0, 16 if depth < 2 else 4)
        if k == 0:
            return self.element(self.pick(["W", "U", "S8", "S16"]))
        if k == 1:
            return self.c_literal()
        if k == 2:
            return E("cast", "int", bin_("*", self.load("a", self.iexpr(depth + 1), NA), lit(100.0)))
        if k == 3:
            return E("un", "-", self.iexpr(depth + 1))
        if k == 4:
            return bin_(self.pick(["<", ">=", "=="]), self.iexpr(depth + 1), self.iexpr(depth + 1))
        if k == 5:
            return bin_("*", self.element("W"), self.iexpr(depth + 1))
        if k == 6:
            return bin_(self.pick(["+", "-"]), self.iexpr(depth + 1), self.iexpr(depth + 1))
        if k == 7:
            return bin_(self.pick(["/", "%"]), self.iexpr(depth + 1), self.divisor(depth))
        if k == 8:
            return bin_(self.pick(["<<", ">>"]), self.iexpr(depth + 1), lit(self.c("int", 0, 31)))
        if k == 9:
            return bin_(self.pick(["&", "|", "^"]), self.iexpr(depth + 1), self.iexpr(depth + 1))
        if k == 10:
            return E("un", "~", self.iexpr(depth + 1))
        if k == 11:
            return E("cast", self.pick(["int", "unsigned", "char", "short", "long long", "unsigned char"]),
                     self.iexpr(depth + 1))
        if k == 12:
            return bin_("*", E("cast", "long long", self.element("W")), self.iexpr(depth + 1))
        if k == 13:
            return bin_(self.pick(["+", "*", "-"]), self.element("U"), self.iexpr(depth + 1))
        if k == 14:
            return bin_("+", self.element("S8"), self.element("S8"))
        if k == 15:
            return E("cond", self.select_cond(depth), self.iexpr(depth + 1), self.iexpr(depth + 1))
        op = self.pick(["/", "%", ">>"])
        return bin_(op, self.element("U"), lit(self.pick([3, 7, 1000, 5] if op != ">>" else [3, 7, 31, 5]), "unsigned"))

    def c_literal(self):
        v, t = self.pick([(2147483647, "int"), (4000000000, "unsigned"), (65535, "int"), (46341, "int"),
                          (3000000000, "decimal"), (255, "unsigned"), (1, "unsigned"), (-2147483647, "int"),
                          (5000000000, "long long")])
        return lit(v, t)

    def flit(self):
        v = self.pick(FLOATS)
        if self.mode == "c" and self.chance(40):
            return lit(v, "double")
        return lit(v)

    def fexpr(self, depth=0) -> E:
        if self.mode == "c" and self.chance(20):
            k = self.c("int", 0, 3)
            if k == 0:
                return bin_("*", self.fexpr(depth + 1), lit(0.5, "double"))  # double, as C types it
            if k == 1:
                return bin_("-", self.fexpr(depth + 1), self.iexpr(depth + 1))  # float, as C types it
            if k == 2:
                return E("cast", self.pick(["float", "double"]), self.iexpr(depth + 1))
            return bin_("/", self.fexpr(depth + 1), self.pick([lit(3.0), lit(7.0, "double")]))
        k = self.c("int", 0, 6 if depth < 2 else 2)
        if k == 0:
            return name(self.pick(self.floats))
        if k == 1:
            return self.load("a", self.iexpr(depth + 1), NA)
        if k == 2:
            return self.flit()
        if k == 3:
            return bin_("+", self.fexpr(depth + 1), self.fexpr(depth + 1))
        if k == 4:
            return bin_("*", self.fexpr(depth + 1), lit(0.5))
        if k == 5:
            c, x, y = self.select_cond(depth), self.fexpr(depth + 1), self.fexpr(depth + 1)
            if self.mode == "same" and not SELECT_AND_FOLD_AGREE:
                x, y = (name(self.floats[i]) if has_effects(v) else v for i, v in enumerate((x, y)))
            if self.mode == "same" and not SELECT_KEEPS_UNDEFINED_PER_LANE:
                if "shuffle" in self.drawn:
                    return x
                self.drawn.add("select")
            return E("cond", c, x, y)
        return bin_("-", self.fexpr(depth + 1), self.to_float(self.iexpr(depth + 1)))

    def to_float(self, e):
        return E("cast", "float", e) if self.mode == "same" else e  # C converts by itself: float - int is float

    def cond(self, depth=0) -> E:
        k = self.c("int", 0, 8 if depth < 2 else 4)
        if k == 0:
            return bin_("<", self.iexpr(depth + 1), self.iexpr(depth + 1))
        if k == 1:
            return bin_("==", bin_("%", self.iexpr(depth + 1), lit(2)), lit(0))
        if k == 2:
            return bin_(">", self.fexpr(depth + 1), lit(0.5))
        if k == 3:
            return self.pick([name("flag"), bin_(">", name("n"), lit(3)), E("un", "!", name("flag"))])
        if k == 4:
            return bin_("<", name("lane"), lit(self.c("int", 0, 33)))
        if k == 5:
            return self.short_circuit("&&", self.cond(depth + 1), self.cond(depth + 1))
        if k == 6:
            return self.short_circuit("||", self.cond(depth + 1),
                                      bin_("<", self.load("a", self.iexpr(depth + 1), NA), lit(0.25)))
        if k == 7:
            return E("un", "!", self.cond(depth + 1))
        return bin_("==", self.iexpr(depth + 1), lit(self.c("int", 0, 3)))

    def short_circuit(self, op, l, r):
        if (self.mode == "same" and not SELECT_AND_FOLD_AGREE) or not CONSTANT_CONDITIONS_FOLD_RIGHT:
            l, r = (bin_(">", name("n"), lit(3)) if is_constant(v) else v for v in (l, r))
        return bin_(op, l, r)

    def select_cond(self, depth):
        c = self.cond(depth + 1)
        if not CONSTANT_CONDITIONS_FOLD_RIGHT and is_constant(c):
            return bin_(">", name("n"), lit(3))
        return c

    # statements
    def block(self, depth, top):
        out = []
        for k in range(self.c("int", 1, 4 if depth else 7)):
            if self.size > 60:
                if k == 0:
                    out.append(self.assign_float(2))
                return out
            out += self.stmt(depth, top)
        return out

    def assign_float(self, depth=0, op="="):
        self.size += 1
        return S("assign", name(self.pick(self.floats)), op, self.fexpr(depth))

    def slot(self, arr="out"):
        return E("load", arr, bin_("+", bin_("*", name("gid"), lit(SLOTS)), lit(self.c("int", 0, SLOTS - 1))))

    def assign_int(self):
        var = self.pick(self.ivars)
        if self.mode == "same" or var == "i0" and self.chance(50):
            return S("assign", name(var), "=", bin_("%", self.iexpr(), lit(IMOD)))
        k = self.c("int", 0, 9)
        if k <= 5:
            return S("assign", name(var), ["=", "=", "+=", "-=", "*=", "^="][k], self.iexpr())
        if k == 6:
            return S("assign", name(var), self.pick(["/=", "%="]), self.divisor(0))
        if k == 7:
            return S("assign", name(var), self.pick(["<<=", ">>="]), lit(self.c("int", 0, 7)))
        return S("incr", name(var), self.pick(["++", "--"]), self.chance(50))

    def shared_read(self):
        var, e = name(self.pick(self.floats)), self.iexpr()
        return S("assign", var, "=", E("load", "sh", bin_("%", E("cast", "unsigned", e) if self.mode == "c" else e,
                                                           name("TPB"))))

    def stmt(self, depth, top) -> list[S]:
        self.size += 1
        k = self.c("int", 0, 20 if depth < 3 else 6)
        if k <= 1:
            self.size -= 1
            return [self.assign_float()]
        if k == 2:
            return [self.assign_int()]
        if k in (3, 4):
            if self.mode == "c" and self.chance(40):
                return [S("assign", self.slot("iout"), "=" if k == 3 else "+=", self.iexpr())]
            return [S("assign", self.slot(), "=" if k == 3 else "+=", self.fexpr())]
        if k == 5:
            self.size -= 1
            return [self.assign_float(op="+=")]
        if k == 6:
            var = self.pick(self.ivars[:2])
            self.size += 1
            return [S("assign", name(var), "+=", self.iexpr()), S("assign", name(var), "%=", lit(IMOD))]
        if k in (7, 8):
            arms = [(self.cond(), self.block(depth + 1, False))]
            if self.chance(30):
                arms.append((self.cond(), self.block(depth + 1, False)))
            orelse = self.block(depth + 1, False) if self.chance(50) else None
            return [S("if", arms, orelse)]
        if k == 9:
            var = f"k{depth}"
            kind = self.c("int", 0, 2)
            # per-thread (lane + e: per-thread whatever e is, so C's loop and the dialect's range
            # are both per-thread ones), a literal, or a kernel argument's (uniform by their form)
            bound = [lambda: bin_("%", bin_("+", name("lane"), self.iexpr()), lit(4)), lambda: lit(3),
                     lambda: bin_("%", name("n"), lit(5))][kind]()
            self.ints.append(var)
            self.loop_depth += 1
            self.loops.append("for")
            body = self.block(depth + 1, False)
            self.loops.pop()
            self.loop_depth -= 1
            self.ints.remove(var)
            return [S("for", var, bound, body, kind != 0)]
        if k == 10 and self.mode == "c" and self.chance(30):  # do { w += 1; ... } while (w < e % 3);
            var = f"w{depth}"
            self.wvars.add(var)
            self.loop_depth += 1
            self.loops.append("do")
            body = [S("assign", name(var), "+=", lit(1))] + self.block(depth + 1, False)
            self.loops.pop()
            self.loop_depth -= 1
            self.size += 1
            test = bin_("<", name(var), bin_("%", self.iexpr(), lit(3)))
            return [S("assign", name(var), "=", lit(0)), S("do", test, body)]
        if k in (10, 20):
            var = f"w{depth}"
            self.wvars.add(var)
            if k == 10:
                cond = bin_("<", name(var), bin_("%", self.iexpr(), lit(3)))
            else:
                cond = bin_("&&", bin_("<", name(var), lit(3)),
                            bin_(">", self.load("a", self.iexpr(), NA), lit(0.25)))
            self.loop_depth += 1
            self.loops.append("while")
            body = [S("assign", name(var), "+=", lit(1))] + self.block(depth + 1, False)
            self.loops.pop()
            self.loop_depth -= 1
            self.size += 1
            return [S("assign", name(var), "=", lit(0)), S("while", cond, body)]
        if k == 11 and self.loop_depth:
            return [S("if", [(self.cond(), [S(self.pick(["break", "continue"]))])], None)]
        if k == 12 and (self.exits or self.chance(30)):
            out = [S("if", [(self.cond(), [S("return", None)])], None)]
            if self.exits and top and not self.private and self.chance(60):  # the barrier after the exit
                out += [S("assign", E("load", "sh", name("tid")), "=", self.fexpr()), S("sync"), self.shared_read()]
            return out
        if k in (13, 14, 15) and self.private:
            self.size -= 1
            return [self.assign_float()]
        if k == 13:
            out = [S("assign", E("load", "sh", name("tid")), "=", self.fexpr())]
            if top or self.chance(10):
                out.append(S("sync"))
            return out + [self.shared_read()]
        if k == 14 and (top or self.chance(20)):
            if self.mode == "same" and not SELECT_KEEPS_UNDEFINED_PER_LANE:
                if "select" in self.drawn:
                    self.size -= 1
                    return [self.assign_float()]
                self.drawn.add("shuffle")
            f = self.pick(self.floats)
            return [S("assign", name(f), "=", E("shfl", self.pick(["down", "up", "xor"]), name(self.pick(self.floats)),
                                                self.c("int", 1, 16)))]
        if k == 15:
            return [S("assign", name(self.pick(self.ivars)), "=", E("ballot", self.cond()))]
        if k == 16 and self.atomics_mix and self.chance(70):
            # a shared histogram's steps: atomics on sh, then (a barrier, sometimes) a plain read
            # of sh or a plain write, as a read-out or a reset would be (float atomicAdd only:
            # CUDA has no float atomicMax)
            out = [S("atomic", "add", "sh", bin_("%", self.iexpr(), name("TPB")), self.fexpr())]
            if top and self.chance(50):
                out.append(S("sync"))
            elif self.chance(20):
                out.append(S("syncwarp"))
            if self.chance(60):
                out.append(self.shared_read())
            else:
                idx = name("tid") if self.chance(50) else self.iexpr()
                out.append(S("assign", E("load", "sh", bin_("%", idx, name("TPB"))), "=", self.fexpr()))
            return out
        if k == 16:
            # the old value depends on the order blocks run in (batched or one at a time), as on
            # a GPU, so it is not used; max and min do not commute with add, so each has its own
            # elements of hist (0-3 add and sub, 4-5 max, 6 min): the final hist is the same for every order
            op = self.pick(["add", "add", "max", "min", "sub"])
            value = lit(1) if op == "add" and self.chance(50) else self.iexpr()
            if self.mode == "c":
                value = E("cast", "int", value)
            index = {"max": bin_("+", lit(4), self.index(self.iexpr(), 2)), "min": lit(6)}.get(
                op, self.index(self.iexpr(), 4))
            return [S("atomic", op, "hist", index, value)]
        if k == 17:
            target = self.pick(self.floats)
            if target == "d0" and not DEVICE_RESULT_CONVERTS:
                target = "f0"
            return [S("assign", name(target), "=",
                      E("call", "clamp", name(self.pick(self.floats)), name(self.pick(self.ivars))))]
        if k == 18:
            self.size += 1
            return [S("assign", self.load("loc", self.iexpr(), 4), "=", self.fexpr()),
                    S("assign", name(self.pick(self.floats)), "+=", self.load("loc", self.iexpr(), 4))]
        if k == 19:
            return [S("call", "bump", name("out"), self.slot().a[1], self.fexpr())]
        self.size -= 1
        return [self.assign_float()]


def _device_functions():
    """``clamp`` and ``bump``, each with an early return, as ``cuda_random_kernels`` has them."""
    f = lit
    clamp = ("float", [("float", "x"), ("int", "k")], [
        S("if", [(bin_(">", name("x"), f(2.0)), [S("return", f(2.0))])], None),
        S("if", [(bin_("==", bin_("%", name("k"), lit(3)), lit(1)),
                  [S("return", bin_("-", name("x"), f(1.0)))])], None),
        S("return", bin_("*", name("x"), f(0.5))),
    ])
    bump = ("void", [("float *", "arr"), ("int", "idx"), ("float", "v")], [
        S("if", [(bin_(">", name("v"), f(1.0)), [S("assign", E("load", "arr", name("idx")), "+=", name("v")),
                                                  S("return", None)])], None),
        S("assign", E("load", "arr", name("idx")), "-=", f(1.0)),
    ])
    return {"clamp": clamp, "bump": bump}


def program(choose, mode="same", private=None, atomics_mix=False, exits=False) -> Program:
    """A random kernel ``name(a, b, out, hist, n, flag)`` (``mode="c"``: also ``iout, W, U, S8,
    S16``); the flags as ``cuda_random_kernels.program`` has them (the module's docstring).
    ``private``: no shared memory, barriers, shuffles or votes; by default in ``mode="c"``
    only (``mode="c", private=False``: C's rules with threads that talk, which no per-thread
    oracle gives a meaning: the engines are checked against each other)."""
    g = TreeGen(choose, mode, private, atomics_mix, exits)
    block = g.pick(BLOCKS)
    grid = g.pick(GRIDS)
    tpb = int(np.prod(block))
    kname = f"c_random_kernel_{next(_counter)}"
    params = [("const float *", "a"), ("const int *", "b"), ("float *", "out"), ("int *", "hist"), ("int", "n"),
              ("bool", "flag")]
    if mode == "c":
        params += [("int *", "iout"), ("const int *", "W"), ("const unsigned *", "U"), ("const char *", "S8"),
                   ("const short *", "S16")]
    blockdim = [name("threadIdx.x"), name("blockDim.x"), name("threadIdx.y")]
    head = [S("array", "shared", "float", "sh", "TPB")] if not g.private else []
    head += [
        S("decl", "int", "tid", bin_("+", blockdim[0], bin_("*", blockdim[1], blockdim[2]))),
        S("decl", "int", "gid", bin_("+", name("tid"), bin_("*", name("TPB"), bin_(
            "+", name("blockIdx.x"), bin_("*", name("gridDim.x"), name("blockIdx.y")))))),
        S("decl", "int", "lane", bin_("%", name("tid"), lit(32))),
        S("decl", "float", "f0", g.load("a", name("gid"), NA)),
        S("decl", "float", "f1", lit(0.0)),
        S("decl", "int", "i0", g.load("b", name("gid"), NB)),
        S("decl", "int", "i1", lit(1)),
    ]
    if mode == "c":
        head += [S("decl", "unsigned", "u0", g.load("U", name("gid"), NW)),
                 S("decl", "char", "c0", g.load("S8", name("tid"), NW)),
                 S("decl", "short", "s0", g.load("S16", name("gid"), NW)),
                 S("decl", "long long", "l0", g.load("W", name("tid"), NW)),
                 S("decl", "double", "d0", lit(0.25, "double"))]
    head.append(S("array", "local", "float", "loc", 4))
    if g.atomics_mix:
        head += [S("assign", E("load", "sh", name("tid")), "=", lit(0.0)), S("sync")]
    body = []
    if exits:  # the guard of a launch whose last block runs past the data
        body.append(S("if", [(bin_(">=", name("gid"), lit(g.c("int", 0, tpb * int(np.prod(grid))))),
                              [S("return", None)])], None))
    body += g.block(0, True)
    total = bin_("+", bin_("+", bin_("+", name("f0"), name("f1")), g.to_float(name("i0"))), g.to_float(name("i1")))
    body.append(S("assign", E("load", "out", bin_("*", name("gid"), lit(SLOTS))), "+=", total))
    if mode == "c":
        itotal = name("i0")
        for v in ("i1", "u0", "c0", "s0", "l0"):
            itotal = bin_("^", itotal, name(v))
        body.append(S("assign", E("load", "iout", bin_("*", name("gid"), lit(SLOTS))), "+=", itotal))
        body.append(S("assign", E("load", "out", bin_("+", bin_("*", name("gid"), lit(SLOTS)), lit(1))), "+=",
                      name("d0")))
    # the while loops' counters, declared once at the top (C needs a declaration; the dialect's
    # ``w0 = 0`` before each loop is the C ``w0 = 0;`` there)
    head += [S("decl", "int", w, lit(0)) for w in sorted(g.wvars)]
    functions = _device_functions()
    functions[kname] = ("void", params, head + body)
    return Program(mode, block, grid, kname, functions, params, g.private)


def load_python(p: Program):
    """The dialect kernel of a ``mode="same"`` program, compiled with a file name linecache knows."""
    filename = f"<{p.name}>"
    linecache.cache[filename] = (len(p.py_source), None, p.py_source.splitlines(True), filename)
    namespace: dict = {"__name__": p.name}
    exec(compile(p.py_source, filename, "exec"), namespace)
    return namespace[p.name]


def load_c(p: Program):
    """The C kernel (``RawModule(code=...).get_function``)."""
    from simtdocs.cuda import RawModule
    return RawModule(code=p.c_source).get_function(p.name)


def arguments(p: Program, seed=0):
    """The C arguments (numpy arrays and numpy scalars of the parameters' C types) and the
    dialect's (the same arrays, ``n`` and ``flag`` as Python values)."""
    rng = np.random.default_rng(seed)
    threads = p.tpb * int(np.prod(p.grid))
    a = rng.random(NA, dtype=np.float32)
    b = rng.integers(0, 9, NB).astype(np.int32)
    out = np.zeros(threads * SLOTS, np.float32)
    hist = np.zeros(NH, np.int32)
    n, flag = int(rng.integers(1, 9)), bool(rng.integers(0, 2))
    c_args = [a, b, out, hist, np.int32(n), np.bool_(flag)]
    if p.mode == "c":
        c_args += [np.zeros(threads * SLOTS, np.int32), np.array(W_VALUES, np.int32),
                   np.array(U_VALUES, np.uint32), np.array(S8_VALUES, np.int8), np.array(S16_VALUES, np.int16)]
    return tuple(c_args), (a, b, out, hist, n, flag)
