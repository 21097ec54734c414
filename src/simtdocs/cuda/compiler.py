"""From a per-thread kernel to its mask form: Python ``ast`` in, Python ``ast`` out.

The output is a function ``name(blk, *params)`` (a device function: ``name(blk, mask,
*params)``) written in the lectures' ``blk`` API, the form a reader would write by hand:

* a varying ``if`` becomes ``t = blk.branch(cond, mask=M)`` and its two sides run one after
  the other under ``t`` and ``M & ~t`` (a uniform ``if`` stays a Python ``if``);
* a loop with per-thread bounds becomes ``while True:`` whose first statement is the
  loop's test as a counted ``blk.branch`` over the lanes still in the loop;
* ``a[i]`` becomes ``blk.load(a, i, mask=M)``, ``a[i] = v`` ``blk.store(a, i, v, mask=M)``;
* an assignment under a mask keeps the other lanes' values: ``x = sel(M, new, x)``;
* ``return``, ``break`` and ``continue`` taken by some lanes add them to an exit set, and
  the mask of what follows drops them (reconvergence at the end of the ``if`` or loop);
  a kernel's ``return`` also tells the block that those threads exited
  (``blk.exit(mask=M)``), so later barriers do not wait for them. A device function's
  ``return`` only leaves the function: its threads go on in the caller;
* a shuffle whose source lane does not take part (inactive, exited, past the end of the
  block) gives an *undefined* value, not an error, as on a GPU: each variable that can hold
  one (found before compiling: assigned from a shuffle, from a device function that
  shuffles, or from such a variable) gets a shadow ``_u_<name>_N`` beside it, ``False``
  while every lane is defined, else an int32 per thread naming the shuffle that made the
  value (``runtime.shfl_plan``, ``runtime.u_or``/``u_sel``). Arithmetic and assignments carry
  it, a defined value assigned clears it, and ``_u_check`` stops the launch where an active
  lane's undefined value is stored, given to an atomic, used as an index or branched on
  (``UndefinedValueError``, naming both lines). A kernel without shuffles gets no shadow, and
  a shuffle of whole warps whose lanes all run runs as before (its plan says so at once).
  Passing an undefined value *into* a device function is reported at the call (the
  function's own stores are not followed); what a device function returns carries its
  shadow back (``u_put``/``u_take``).

Every generated node carries the line of the reader's node it came from, and the function
is compiled with the reader's file name, so ``blk`` (which names the calling frame's line)
counts, checks and traces every instruction at the reader's own line.
"""

from __future__ import annotations

import ast
import copy

import numpy as np

from . import arithmetic as ar
from . import intrinsics as I
from . import runtime as rt
from .analysis import Scope
from .expressions import Expressions
from .inference import Types
from .syntax import NONE, E, S, at, is_none, located, name_counts, prune_unused_masks, region_locals, trivial
from .types import dtype as to_dtype

#: What the generated code may call besides blk: bound in its namespace under these names.
HELPERS = {
    "i64": np.int64, "f64": np.float64, "i32": np.int32, "_np": np, "_sel": rt.sel, "_cast": rt.cast, "_as": rt.as_,
    "_else": rt.else_, "_fork": rt.fork,
    "_and": rt.and_, "_or": rt.or_, "_without": rt.without, "_any": rt.any_, "_truth": rt.truth,
    "_not": rt.not_, "_select": rt.select, "_range_cond": rt.range_cond, "_urange": rt.urange,
    "_int": rt.int_, "_float": rt.float_, "_complex": rt.complex_, "_bool": rt.bool_, "_min": rt.min_, "_max": rt.max_,
    "_round": rt.round_, "_popc": rt.popc, "_brev": rt.brev, "_clz": rt.clz, "_ffs": rt.ffs, "_fma": rt.fma,
    "_cbrt": rt.cbrt, "_lanemask_lt": rt.lanemask_lt, "_activemask": rt.activemask,
    "_shfl_up_source": rt.shfl_up_source, "_shfl_down_source": rt.shfl_down_source,
    "_shfl_xor_source": rt.shfl_xor_source, "_block_reduce": rt.block_reduce, "_Local": rt.Local,
    "_local_load": rt.local_load, "_local_store": rt.local_store, "_const_load": rt.const_load,
    "_print": rt.print_, "_assert": rt.assert_, "_dtype": to_dtype,
    "_shape": lambda a, order=None: tuple(np.int64(a.shape[k]) for k in (order or range(len(a.shape)))),
    "_permute": lambda index, order: tuple(index[k] for k in order),
    "_dynamic_shared": lambda blk, dt, name: _dynamic_shared(blk, dt, name),
    "_narrow": rt.narrow, "_vsplit": rt.vsplit, "_vstack": rt.vstack, "_printf": rt.printf_, "_bitcast": rt.bitcast,
    # undefined values (runtime.py): shadows, shuffle plans, checks
    "_shfl_plan": rt.shfl_plan, "_u_or": rt.u_or, "_u_sel": rt.u_sel, "_u_and": rt.u_and, "_u_or_else": rt.u_or_else,
    "_u_select": rt.u_select, "_u_warp": rt.u_warp, "_u_block": rt.u_block, "_u_check": rt.u_check,
    "_u_put": rt.u_put, "_u_take": rt.u_take, "_u_exch": rt.u_exch,
    **ar.HELPERS,  # numba's arithmetic where numpy's differs (_add, _mul, _lt …)
}


#: Calls an arm of a ``fork`` may make: arithmetic, lane by lane, that raises for no value
#: (numba's and C's operators but ``**``, whose negative integer exponents numpy refuses).
_ARITHMETIC = frozenset(ar.HELPERS) - {"_pow"} | {"i64", "f64", "i32", "_cast", "_as"}
_CONVERSIONS = frozenset(np.dtype(t).name for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                                    np.uint32, np.uint64, np.float16, np.float32, np.float64))


def _merge_of(stmt, mask: str):
    """``(x, V)`` for a merge ``x = _sel(mask, V, x)``, else None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    x, v = stmt.targets[0].id, stmt.value
    if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "_sel" and not v.keywords
            and len(v.args) == 3 and isinstance(v.args[0], ast.Name) and v.args[0].id == mask
            and isinstance(v.args[2], ast.Name) and v.args[2].id == x):
        return None
    return x, v.args[1]


def _lane_arithmetic(node, masks) -> bool:
    """Whether ``node`` is arithmetic each lane does on its own values alone, with no memory
    access, no warp operation and no error for any value (so which values the lanes outside
    the mask hold changes nothing)."""
    for n in ast.walk(node):
        if isinstance(n, (ast.operator, ast.unaryop, ast.cmpop, ast.expr_context, ast.Constant)):
            if isinstance(n, (ast.Pow, ast.Not)):
                return False
        elif isinstance(n, ast.Name):
            if n.id in masks:
                return False
        elif isinstance(n, ast.BinOp):
            pass
        elif isinstance(n, ast.UnaryOp):
            pass
        elif isinstance(n, ast.Compare):
            if len(n.ops) != 1:
                return False
        elif isinstance(n, ast.Attribute):
            if not (isinstance(n.value, ast.Name) and n.value.id == "_np" and n.attr in _CONVERSIONS):
                return False
        elif isinstance(n, ast.Call):
            f = n.func
            if n.keywords or not ((isinstance(f, ast.Name) and f.id in _ARITHMETIC) or isinstance(f, ast.Attribute)):
                return False
        else:
            return False
    return True


def fork(out: list, start: int, split: int, taken: str, other: str, outer: str | None = None) -> None:
    """An ``if``/``else`` whose two sides do nothing but assign the same variables, in the same
    order, from lane arithmetic (``if (v < 0) r = -v; else r = v;``): its merges,
    ``r = _sel(taken, A, r)`` on one side and ``r = _sel(other, B, r)`` on the other
    (``out[start:split]`` and ``out[split + 1:]``, ``out[split]`` making ``other``), become
    ``r = _fork(taken, A, B, r)``, or ``r = _fork(taken, A, B, r, outer)`` inside the mask
    ``outer`` (its arms then made a function by ``arms_by_slices``): one select of A and B
    (and one of ``outer``'s lanes) instead of a select per side (``runtime.fork``). Each lane
    of ``outer`` is on exactly one side, the others keep ``r``, and lane arithmetic reads
    only its own lane: so after the k-th fused assignment every variable holds, on the lanes
    of each side, what that side's k-th assignment left there, and evaluating B before the
    ``if`` side's merge (on values that side has not changed) gives its lanes the same values."""
    body, rest = out[start:split], out[split + 1:]
    if not body or len(body) != len(rest):
        return
    fused = []
    for a, b in zip(body, rest):
        x, y = _merge_of(a, taken), _merge_of(b, other)
        if x is None or y is None or x[0] != y[0] or not _lane_arithmetic(x[1], (taken, other)) \
                or not _lane_arithmetic(y[1], (taken, other)):
            return
        args = [ast.Name(taken, ast.Load()), x[1], y[1], ast.Name(x[0], ast.Load())]
        if outer is not None:
            if not _lane_arithmetic(x[1], (outer,)) or not _lane_arithmetic(y[1], (outer,)):
                return
            args.append(ast.Name(outer, ast.Load()))
        call = ast.Call(ast.Name("_fork", ast.Load()), args, [])
        fused.append(located(ast.Assign([ast.Name(x[0], ast.Store())], call), a))
    out[start:] = fused  # the else's mask goes unused: prune_unused_masks drops it


def arms_by_slices(fn: ast.FunctionDef) -> None:
    """``_fork(m, A, B, x)`` becomes ``_fork(m, lambda v, …: (A, B), (v, …), x)``: the two arms
    as a function of the kernel's variables they read, so ``runtime.fork`` can work them out a
    slice of blocks at a time (each slice's arithmetic stays in the cache; over millions of
    lanes the whole arrays do not)."""
    local = {a.arg for a in fn.args.args} | {
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(getattr(n, "ctx", None), ast.Store)}
    for call in ast.walk(fn):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "_fork"
                and len(call.args) in (4, 5) and not isinstance(call.args[1], ast.Lambda)):
            continue
        taken, a, b, *rest = call.args
        names = sorted({n.id for arm in (a, b) for n in ast.walk(arm) if isinstance(n, ast.Name) and n.id in local})
        arms = ast.Lambda(ast.arguments(posonlyargs=[], args=[ast.arg(x) for x in names], kwonlyargs=[],
                                        kw_defaults=[], defaults=[]), ast.Tuple([a, b], ast.Load()))
        values = ast.Tuple([ast.Name(x, ast.Load()) for x in names], ast.Load())
        call.args = [taken, ast.copy_location(arms, a), ast.copy_location(values, a), *rest]


def _dynamic_bytes(blk) -> int:
    L = blk._L  # the fast engine's _Launch or the reference engine's
    return int(getattr(L, "dynamic_shared", getattr(L, "shared_bytes", 0)))


def _dynamic_shared(blk, dt, name: str):
    """``cuda.shared.array(0, dt)``, ``extern __shared__ T name[]``: every one a kernel and its
    device functions declare is the launch's one dynamic allocation, starting at its first
    byte (CUDA C and numba alike), so two of them are one array (the sanitizers name it by
    the first declared). Two of different element types would read the same bytes as two
    types: refused, naming both."""
    dt = np.dtype(dt)
    arr = getattr(blk, "extern_shared", None)
    if arr is None:
        arr = blk.extern_shared = blk.shared(_dynamic_bytes(blk) // dt.itemsize, dt, name=name, dynamic=True)
    elif arr.dtype != dt:
        raise NotImplementedError(
            f"the dynamic shared arrays {arr.name} ({arr.dtype}) and {name} ({dt}) are the same memory on a GPU, read "
            f"as two types; the simulator holds one type: declare one of them and convert its values")
    return arr



SHUFFLES = ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync")


def _shuffles(fn, seen: set) -> bool:
    """Whether device function ``fn`` (or one it calls) shuffles, so that what it returns can
    be undefined: its calls resolved in its own namespace, as its compiler resolves them."""
    if id(fn) in seen:
        return False
    seen.add(id(fn))
    from .kernel import DeviceFunction, device_function_of
    ns = fn.source.namespace
    for n in ast.walk(fn.source.tree):
        if isinstance(n, ast.Call):
            f = _resolve(n.func, ns)
            f = device_function_of(f) or f
            if isinstance(f, I.Intrinsic) and (f.name in SHUFFLES or f.name == "atomic.exch"):
                return True
            if isinstance(f, DeviceFunction) and _shuffles(f, seen):
                return True
    return False


def _resolve(node, ns):
    """What a called name (``f``, ``cuda.shfl_sync``) names in namespace ``ns`` (None: unknown)."""
    if isinstance(node, ast.Name):
        return ns.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, ns)
        return getattr(base, node.attr, None) if base is not None else None
    return None


class Loop:
    """A loop being compiled: the exit sets its masked ``break``/``continue`` use, made on first use."""

    def __init__(self, node):
        self.node = node
        self.brk: str | None = None
        self.cnt: str | None = None


class Compiler(Expressions):
    """Compiles one ``Scope`` (a function for one signature) to a mask-form ``FunctionDef``."""

    def __init__(self, scope: Scope, types: Types | None = None):
        self.sc = scope
        #: where the types of a variable's values meet and numba gives it one type (inference.py)
        self.types = types
        self.src = scope.src
        self.names = set(scope.locals) | set(HELPERS)
        self.counter = 0
        self.blk = "blk" if "blk" not in scope.locals else "_blk"
        self.out: list = []
        self.M: ast.expr = ast.Name("_mask") if scope.device else NONE
        self.ctxv = False
        self.rel = False
        self.loops: list[Loop] = []
        self.ret: str | None = None  # exit set of lanes that returned
        self.rv: str | None = None  # the value they returned (device functions)
        self.extra: dict[str, object] = {}  # device function specialisations the code calls
        self.cur = scope.tree
        self.nest = 0  # Python-level ifs and loops around the statement being compiled
        self.vnest = 0  # per-thread (masked) ifs and loops around it
        self.defined: set[str] = set(scope.params)  # assigned for every thread before this point
        self.undefined: set[str] = set()  # merged under a mask before any such assignment
        #: Variables that live only inside one masked region (a varying if's side, a per-thread
        #: loop's body), first assigned at its top: name -> that region's mask. Under exactly
        #: that mask no other lane ever reads them, so an assignment needs no merge (and an
        #: index keeps its affine form).
        self.homes: dict[str, str] = {}
        self.uses = name_counts(scope.tree)
        #: Variables that can hold an undefined value in some lane (a shuffle's read of a lane
        #: that does not take part, and what is computed from one): name -> its shadow's name.
        #: Empty for a kernel without shuffles: then nothing below costs anything.
        self.tainted: dict[str, str] = {}
        for name in sorted(self._undefined_names()):
            self.tainted[name] = self.fresh(f"_u_{name}_")
        self.ushadow: dict[int, ast.expr] = {}  # a compiled shuffle or device call -> its result's shadow
        self.holders: list[str] = []  # ``_h = [False]``: a device call's returned shadow
        self.urv: str | None = None  # a device function's returned value's shadow (masked returns)

    # -- small things ----------------------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        while True:
            self.counter += 1
            name = f"{prefix}{self.counter}"
            if name not in self.names:
                self.names.add(name)
                return name

    def emit(self, stmts, origin=None):
        origin = origin or self.cur
        for s in stmts if isinstance(stmts, list) else [stmts]:
            self.out.append(located(s, origin))

    def B(self) -> ast.Name:
        return ast.Name(self.blk)

    def mask_kw(self):
        return [] if is_none(self.M) else [ast.keyword("mask", copy.deepcopy(self.M))]

    def blk_call(self, method: str, args, origin, with_mask=True) -> ast.Call:
        call = ast.Call(ast.Attribute(self.B(), method), list(args), self.mask_kw() if with_mask else [])
        return located(at(call, origin), origin)

    def use(self, name: str):
        """``name`` is read by a masked merge: it needs a value for every thread."""
        if name not in self.defined:
            self.undefined.add(name)

    def err(self, node, what):
        return self.src.error(node, what)

    # -- undefined values: which variables have a shadow, and what each expression's is ----------

    def _undefined_names(self) -> set[str]:
        """The variables some lane of which can hold an undefined value: assigned from a
        shuffle, from a device function that shuffles, or from such a variable (a fixpoint)."""
        tainted: set[str] = set()

        def makes(expr) -> bool:
            return any((isinstance(n, ast.Name) and n.id in tainted)
                       or (isinstance(n, ast.Call) and self.undefined_source(n)) for n in ast.walk(expr))

        pairs = []
        for n in ast.walk(self.sc.tree):
            if isinstance(n, ast.Assign):
                pairs += [(t, n.value) for t in n.targets]
            elif isinstance(n, (ast.AnnAssign, ast.AugAssign)) and n.value is not None:
                pairs.append((n.target, n.value))
        if not any(isinstance(n, ast.Call) and self.undefined_source(n) for _, v in pairs for n in ast.walk(v)):
            return tainted
        changed = True
        while changed:
            changed = False
            for t, v in pairs:
                names = [t.id] if isinstance(t, ast.Name) else (
                    [e.id for e in t.elts if isinstance(e, ast.Name)] if isinstance(t, ast.Tuple) else [])
                new = [x for x in names if x not in tainted and x not in self.sc.kinds]
                if new and makes(v):
                    tainted.update(new)
                    changed = True
        return tainted

    def undefined_source(self, call: ast.Call) -> bool:
        """Whether a call can give an undefined value: a shuffle, or a device function that shuffles."""
        ok, f = self.sc.static(call.func)
        if not ok:
            return False
        if isinstance(f, I.Intrinsic):  # a shuffle, or an exchange's old value of a shared element nobody wrote
            return f.name in SHUFFLES or f.name == "atomic.exch" and bool(call.args) \
                and self.sc.array_kind(call.args[0]) == "shared"
        from .kernel import DeviceFunction
        return isinstance(f, DeviceFunction) and _shuffles(f, set())

    def shadow(self, node):
        """The shadow of the reader's expression ``node`` as a mask-form expression (None: every
        lane is certainly defined, the case of every kernel without shuffles)."""
        if not self.tainted and not self.ushadow:
            return None
        return self._shadow(node)

    def _shadow(self, node):
        if node is None:
            return None
        if isinstance(node, ast.Name):
            return ast.Name(self.tainted[node.id]) if node.id in self.tainted else None
        if isinstance(node, ast.Call):
            if id(node) in self.ushadow:
                return copy.deepcopy(self.ushadow[id(node)])
            ok, f = self.sc.static(node.func)
            if ok and isinstance(f, I.Intrinsic):
                if f.name in ("ballot_sync", "any_sync", "all_sync") and len(node.args) == 2:
                    u = self._shadow(node.args[1])
                    return None if u is None else E("_u_warp(B, M, U)", B=self.blk, M=copy.deepcopy(self.M), U=u)
                if f.name in ("syncthreads_count", "syncthreads_and", "syncthreads_or") and node.args:
                    u = self._shadow(node.args[0])
                    return None if u is None else E("_u_block(B, M, U)", B=self.blk, M=copy.deepcopy(self.M), U=u)
                if f.name.startswith("atomic.") or f.name in SHUFFLES:
                    return None  # an atomic's old value is memory's: defined
                if f.name == "select" and len(node.args) == 3 and not self.sc.has_effects(node.args[0]):
                    return self._chosen_shadow(*node.args)  # C's c ? a : b, as an IfExp
            return self._or([self._shadow(a) for a in node.args] + [self._shadow(k.value) for k in node.keywords])
        if isinstance(node, ast.Subscript):
            if self.sc.array_kind(node.value):
                return None  # a load: its index is checked, the value in memory is defined
            return self._or([self._shadow(node.value), self._shadow(node.slice)])
        if isinstance(node, ast.BoolOp) and len(node.values) == 2 and not self.sc.has_effects(node.values[0]):
            a, b = node.values
            ua, ub = self._shadow(a), self._shadow(b)
            if ub is None:
                return ua
            helper = "_u_and" if isinstance(node.op, ast.And) else "_u_or_else"
            return E(f"{helper}(A, UA, UB)", A=self.ex(a), UA=ua if ua is not None else ast.Constant(False), UB=ub)
        if isinstance(node, ast.IfExp) and not self.sc.has_effects(node.test):
            return self._chosen_shadow(node.test, node.body, node.orelse)
        return self._or([self._shadow(c) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)])

    def _chosen_shadow(self, test, a, b):
        """The shadow of a choice between ``a`` and ``b`` on ``test``: each lane takes the marks
        of the side it chose (and the test's own)."""
        uc, ua, ub = self._shadow(test), self._shadow(a), self._shadow(b)
        if ua is None and ub is None:
            return uc
        f = ast.Constant(False)
        return E("_u_select(C, UC, UA, UB)", C=self.ex(test), UC=uc or f, UA=ua or copy.deepcopy(f),
                 UB=ub or copy.deepcopy(f))

    @staticmethod
    def _or(parts):
        parts = [p for p in parts if p is not None]
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else ast.Call(ast.Name("_u_or"), parts, [])

    def set_shadow(self, name: str, u, merge: bool, origin, mask=None):
        """After ``name`` was assigned (under the current mask, merged when ``merge``), its shadow:
        the value's (``u``; None: defined), which a defined value clears."""
        shadow = self.tainted.get(name)
        if shadow is None:
            return
        u = u if u is not None else ast.Constant(False)
        if merge:
            u = E(f"_u_sel(M, U, {shadow})", M=copy.deepcopy(mask if mask is not None else self.M), U=u)
        self.emit(ast.Assign([ast.Name(shadow, ast.Store())], u), origin)

    def checked(self, value, node, use: str):
        """``value`` (the compiled ``node``), checked on its way to ``use`` (a store, an index, a
        branch …) for lanes of the current mask that hold an undefined value."""
        u = self.shadow(node)
        if u is None:
            return value
        shown = getattr(node, "source_text", None) or ast.unparse(node)  # a front end's own text (C) where it has one
        return at(E(f"_u_check(B, M, V, U, {use!r}, {('`' + shown + '`')!r})", B=self.blk,
                    M=copy.deepcopy(self.M), V=value, U=u), node)

    # -- the function ----------------------------------------------------------------------------

    def compile(self) -> ast.FunctionDef:
        tree = self.sc.tree
        body_out = self.out
        self.block(tree.body)
        prologue = []
        init = sorted(self.undefined)
        if init:  # a per-thread variable first assigned under a mask starts undefined
            prologue.append(located(S(f"{', '.join(init)} = {', '.join(['None'] * len(init))}")[0], tree))
        if self.ret:
            prologue.append(located(S(f"{self.ret} = False")[0], tree))
        if self.rv:
            prologue.append(located(S(f"{self.rv} = None")[0], tree))
        shadows = sorted(self.tainted.values()) + ([self.urv] if self.urv else [])
        if shadows:  # every lane defined to begin with
            prologue.append(located(S(f"{', '.join(shadows)} = {', '.join(['False'] * len(shadows))}")[0], tree))
        for h in self.holders:
            prologue.append(located(S(f"{h} = [False]")[0], tree))
        body = prologue + body_out
        if self.sc.device and self.rv:
            body.append(located(S(f"return _u_put({self.rv}, {self.urv})" if self.urv else f"return {self.rv}")[0], tree))
        if not body:
            body = [located(ast.Pass(), tree)]
        params = [ast.arg(self.blk)] + ([ast.arg("_mask")] if self.sc.device else []) + [
            ast.arg(p) for p in self.sc.params if p not in self.sc.statics]
        fn = ast.FunctionDef(name=tree.name, args=ast.arguments(posonlyargs=[], args=params, kwonlyargs=[], kw_defaults=[],
                                                                  defaults=[]),
                             body=body, decorator_list=[], returns=None, type_params=[])
        at(fn, tree)
        prune_unused_masks(fn)
        arms_by_slices(fn)
        for node in ast.walk(fn):  # nodes built by hand are loads unless said otherwise
            if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Tuple)) and not hasattr(node, "ctx"):
                node.ctx = ast.Load()
        return ast.fix_missing_locations(fn)

    # -- statements ------------------------------------------------------------------------------

    def block(self, stmts) -> None:
        """Compile a block under the current mask; after a statement that let some lanes
        leave, the rest runs under a mask without them."""
        for k, s in enumerate(stmts):
            saved = self.cur
            self.cur = s
            done = self.stmt(s)
            self.cur = saved
            if done:
                return
            exits = self.sc.exits.get(id(s), set()) if isinstance(s, (ast.If, ast.For, ast.While)) else set()
            if isinstance(s, (ast.For, ast.While)):
                exits = exits & {"ret"}
            if exits and self.shrink(exits, s):
                # what follows is a masked region of its own (``if i >= n: return`` and the rest)
                for name in region_locals(stmts[k + 1:], self.uses, self.sc.kinds):
                    self.homes[name] = self.M.id

    def exit_vars(self, exits) -> list[str]:
        names = []
        if "ret" in exits and self.ret:
            names.append(self.ret)
        loop = self.loops[-1] if self.loops else None
        if loop is not None:
            if "brk" in exits and loop.brk:
                names.append(loop.brk)
            if "cnt" in exits and loop.cnt:
                names.append(loop.cnt)
        return names

    def shrink(self, exits, origin) -> bool:
        """The current mask without the lanes that left by ``exits``; False when none can have."""
        names = self.exit_vars(exits)
        if not names:
            return False
        m = self.fresh("_m")
        self.emit(S(f"{m} = _without(M, {', '.join(names)})", M=copy.deepcopy(self.M)), origin)
        self.M = ast.Name(m)
        self.ctxv = self.rel = True
        return True

    def stmt(self, s) -> bool:
        """Compile one statement; True when nothing after it in its block can run."""
        if isinstance(s, ast.Expr):
            v = self.ex(s.value)
            if not isinstance(v, ast.Constant):
                self.emit(ast.Expr(v), s)
            return False
        if isinstance(s, ast.Pass):
            return False
        if isinstance(s, ast.Assign):
            self.assign(s)
            return False
        if isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.assign(at(ast.Assign([s.target], s.value), s))
            return False
        if isinstance(s, ast.AugAssign):
            self.augassign(s)
            return False
        if isinstance(s, ast.If):
            self.if_(s)
            return False
        if isinstance(s, ast.For):
            self.for_(s)
            return False
        if isinstance(s, ast.While):
            self.while_(s)
            return False
        if isinstance(s, ast.Return):
            self.return_(s)
            return True
        if isinstance(s, (ast.Break, ast.Continue)):
            self.break_(s)
            return True
        if isinstance(s, ast.Assert):
            args = [ast.Name(self.blk), copy.deepcopy(self.M), self.ex(s.test)] + ([self.ex(s.msg)] if s.msg else [])
            args[2] = self.checked(args[2], s.test, "assert")
            self.emit(ast.Expr(ast.Call(ast.Name("_assert"), args, [])), s)
            return False
        raise self.err(s, f"{type(s).__name__} is not supported in a kernel")

    # assignments

    def assign(self, s: ast.Assign):
        value_node = s.value
        kind = self.sc._kind_of_value(value_node)
        if kind is not None:
            if self.vnest and not (isinstance(value_node, ast.Call)):
                raise self.err(s, "an array chosen per thread (under a branch taken by only some threads) is not supported")
            v = self.array_value(value_node, s.targets[0].id if isinstance(s.targets[0], ast.Name) else "shared")
            for t in s.targets:
                self.emit(ast.Assign([ast.Name(t.id, ast.Store())], v), s)
            return
        v = self.ex(value_node)
        if len(s.targets) == 1 and self._simple_target(s.targets[0]):
            self.store_target(s.targets[0], v, s, value_node)
            return
        tmp = self.fresh("_v")
        self.emit(ast.Assign([ast.Name(tmp, ast.Store())], v), s)
        for t in s.targets:
            self.store_target(t, ast.Name(tmp), s, value_node)

    def _simple_target(self, t) -> bool:
        return isinstance(t, (ast.Name, ast.Subscript)) or (
            isinstance(t, ast.Tuple) and not self.ctxv and all(isinstance(e, ast.Name) for e in t.elts))

    @staticmethod
    def cast(v, dtype):
        """``v`` cast to ``dtype`` (None: as it is)."""
        return v if dtype is None else E(f"_cast(V, {dtype.name!r})", V=v)

    def casts(self, where: str, node) -> list:
        """``x = _cast(x, T)`` for each variable whose types meet at ``node``: ``where`` is
        "if_casts" (after a uniform ``if``), "loop_casts" (the top of each iteration) or
        "exit_casts" (after a loop); see inference.py."""
        table = getattr(self.types, where).get(id(node)) if self.types is not None else None
        return [located(ast.Assign([ast.Name(name, ast.Store())], self.cast(ast.Name(name), dtype)), node)
                for name, dtype in sorted((table or {}).items())]

    def store_target(self, t, v, s, src=None):
        """``t = v``; ``src`` is the reader's expression of the value (its shadow's source)."""
        if isinstance(t, ast.Name):
            if t.id in self.sc.kinds:
                raise self.err(s, f"{t.id} names an array; it cannot be given a value")
            merge = self.ctxv and not (isinstance(self.M, ast.Name) and self.homes.get(t.id) == self.M.id)
            if merge:
                v = E("_sel(M, V, X)", M=copy.deepcopy(self.M), V=v, X=t.id)
                self.use(t.id)
            elif self.nest == 0:
                self.defined.add(t.id)
            self.emit(ast.Assign([ast.Name(t.id, ast.Store())], v), s)
            self.set_shadow(t.id, None if src is None else self.shadow(src), merge, s)
        elif isinstance(t, ast.Tuple):
            parts = src.elts if isinstance(src, ast.Tuple) and len(src.elts) == len(t.elts) else [src] * len(t.elts)
            if not self.ctxv and all(isinstance(e, ast.Name) for e in t.elts):
                self.emit(ast.Assign([ast.Tuple([ast.Name(e.id, ast.Store()) for e in t.elts], ast.Store())], v), s)
                for e, part in zip(t.elts, parts):
                    self.set_shadow(e.id, None if part is None else self.shadow(part), False, s)
                return
            tmp = v.id if isinstance(v, ast.Name) else None
            if tmp is None:
                tmp = self.fresh("_v")
                self.emit(ast.Assign([ast.Name(tmp, ast.Store())], v), s)
            for k, (e, part) in enumerate(zip(t.elts, parts)):
                self.store_target(e, E(f"T[{k}]", T=tmp), s, part)
        elif isinstance(t, ast.Subscript):
            self.store(t, v, s, src)
        else:
            raise self.err(s, f"assigning to {ast.unparse(t)} is not supported in a kernel")

    def store(self, t: ast.Subscript, v, s, src=None):
        kind = self.sc.array_kind(t.value)
        if kind is None:
            raise self.err(s, f"{ast.unparse(t.value)} is not an array the kernel can write")
        index = self.index(t.slice, t.value)
        if src is not None:
            v = self.checked(v, src, "store")
        if kind in ("global", "shared"):
            call = self.blk_call("store", [copy.deepcopy(t.value), index, v], t)
            self.emit(ast.Expr(call), t)
        elif kind == "local":
            self.emit(ast.Expr(E("_local_store(A, I, V, M)", A=copy.deepcopy(t.value), I=index, V=v,
                                 M=copy.deepcopy(self.M))), t)
        else:
            raise self.err(s, "constant memory is read-only in a kernel")

    def augassign(self, s: ast.AugAssign):
        t = s.target
        if isinstance(t, ast.Name):
            # t itself: its read is the inference's (read_casts); numba's arithmetic (inference.plain_ops)
            value = at(self.arith(s, s.op, self.ex(t), self.ex(s.value)), s)
            self.store_target(ast.Name(t.id, ast.Store()), value, s, at(ast.BinOp(ast.Name(t.id), s.op, s.value), s))
            return
        if isinstance(t, ast.Subscript):
            kind = self.sc.array_kind(t.value)
            if kind is None:
                raise self.err(s, f"{ast.unparse(t.value)} is not an array the kernel can write")
            index = self.index(t.slice, t.value)
            if not trivial(index):
                tmp = self.fresh("_i")
                self.emit(ast.Assign([ast.Name(tmp, ast.Store())], index), s)
                index = ast.Name(tmp)
            old = self.load(t.value, index, kind, t)
            new = at(self.arith(s, s.op, old, self.ex(s.value)), s)  # stored as the array's dtype
            new = self.checked(new, s.value, "store")
            if kind in ("global", "shared"):
                self.emit(ast.Expr(self.blk_call("store", [copy.deepcopy(t.value), copy.deepcopy(index), new], t)), t)
            elif kind == "local":
                self.emit(ast.Expr(E("_local_store(A, I, V, M)", A=copy.deepcopy(t.value), I=copy.deepcopy(index),
                                     V=new, M=copy.deepcopy(self.M))), t)
            else:
                raise self.err(s, "constant memory is read-only in a kernel")
            return
        raise self.err(s, f"{ast.unparse(t)} cannot be updated in a kernel")

    # control flow

    def if_(self, s: ast.If):
        if not self.sc.is_varying(s.test):
            test = self.ex(s.test)
            saved = (self.out, self.M, self.ctxv, self.rel)
            self.nest += 1
            self.out = []
            self.block(s.body)
            body = self.out or [located(ast.Pass(), s)]
            self.out, self.M, self.ctxv, self.rel = saved
            self.out = []
            self.block(s.orelse)
            orelse = self.out
            self.out, self.M, self.ctxv, self.rel = saved
            self.nest -= 1
            self.emit(ast.If(test, body, orelse), s)
            self.emit(self.casts("if_casts", s), s)
            return
        cond = self.checked(self.ex(s.test), s.test, "branch")
        outer = (self.M, self.ctxv, self.rel)
        taken = self.fresh("_m")
        self.emit(ast.Assign([ast.Name(taken, ast.Store())], self.blk_call("branch", [cond], s.test)), s)
        self.M, self.ctxv, self.rel = ast.Name(taken), True, True
        self.vnest += 1
        out, start = self.out, len(self.out)
        self.region(s.body, taken)
        if s.orelse:
            other = self.fresh("_m")
            origin = s.orelse[0]
            split = len(self.out)
            self.emit(S(f"{other} = _else(M, {taken})", M=copy.deepcopy(outer[0])), origin)
            self.M, self.ctxv, self.rel = ast.Name(other), True, True
            self.region(s.orelse, other)
            if (is_none(outer[0]) or isinstance(outer[0], ast.Name)) and self.out is out:
                fork(out, start, split, taken, other, None if is_none(outer[0]) else outer[0].id)
        self.vnest -= 1
        self.M, self.ctxv, self.rel = outer

    def for_(self, s: ast.For):
        call = s.iter
        is_range = False
        if isinstance(call, ast.Call):
            ok, f = self.sc.static(call.func)
            is_range = ok and f is range
        varying = self.sc.loop_kind[id(s)] == "varying"
        exits = self.sc.exits.get(id(s), set())
        if not varying:
            if is_range:
                it = at(ast.Call(ast.Name("_urange"), [self.ex(a, bare=True) for a in call.args], []), call)
            else:
                it = self.ex(call)
            self.uniform_loop(s, it, exits)
            return
        if not is_range or call.keywords or not 1 <= len(call.args) <= 3:
            raise self.err(s, "a per-thread loop must be over range(...)")
        args = [self.checked(self.ex(a), a, "branch") for a in call.args]
        start, stop, step = (E("i64(0)"), args[0], None) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else None)
        k = self.fresh("_i")
        index_type = self.types.index_types.get(id(s)) if self.types is not None else None
        self.emit(ast.Assign([ast.Name(k, ast.Store())], self.cast(start, index_type)), s)
        if not trivial(stop):
            stop_name = self.fresh("_stop")
            self.emit(ast.Assign([ast.Name(stop_name, ast.Store())], stop), s)
            stop = ast.Name(stop_name)
        if step is not None and not trivial(step):
            step_name = self.fresh("_step")
            self.emit(ast.Assign([ast.Name(step_name, ast.Store())], step), s)
            step = ast.Name(step_name)
        if step is None:
            test = E(f"{k} < STOP", STOP=copy.deepcopy(stop))
        elif isinstance(call.args[2], ast.Constant) and isinstance(call.args[2].value, int):
            op = "<" if call.args[2].value > 0 else ">"
            test = E(f"{k} {op} STOP", STOP=copy.deepcopy(stop))
        elif not self.sc.is_varying(call.args[2]):  # a uniform step: its sign picks the test
            test = E(f"{k} < STOP if STEP > 0 else {k} > STOP", STOP=copy.deepcopy(stop), STEP=copy.deepcopy(step))
        else:
            test = E(f"_range_cond({k}, STOP, STEP)", STOP=copy.deepcopy(stop), STEP=copy.deepcopy(step))
        step_expr = E("i64(1)") if step is None else copy.deepcopy(step)

        def head(loop_mask):
            self.emit(ast.Assign([ast.Name(loop_mask, ast.Store())],
                                 self.blk_call("branch", [test], s, with_mask=True)), s)
            self.emit(S(f"if not _any({loop_mask}):\n    break"), s)
            target = s.target
            if not isinstance(target, ast.Name):
                raise self.err(s, "the variable of a per-thread loop must be a plain name")
            if self.uses.get(target.id, 0) == name_counts(s).get(target.id, 0):
                self.emit(S(f"{target.id} = {k}"), s)  # only the loop reads it: no merge
                self.set_shadow(target.id, None, False, s)
            else:
                self.use(target.id)
                self.emit(S(f"{target.id} = _sel({loop_mask}, {k}, {target.id})"), s)
                self.set_shadow(target.id, None, True, s, ast.Name(loop_mask))
            self.emit(ast.Assign([ast.Name(k, ast.Store())], E(f"{k} + STEP", STEP=step_expr)), s)
        self.varying_loop(s, head, exits)

    def while_(self, s: ast.While):
        exits = self.sc.exits.get(id(s), set())
        if self.sc.loop_kind[id(s)] == "uniform":
            saved = self.out
            self.out = []
            test = self.ex(s.test)
            pre = self.out
            self.out = saved
            if pre:
                raise self.err(s, "internal error: a uniform loop test with instructions in it")
            self.uniform_loop(s, None, exits, test=test)
            return

        def head(loop_mask):
            self.M = ast.Name(loop_mask)
            test = self.checked(self.ex(s.test), s.test, "branch")
            self.emit(ast.Assign([ast.Name(loop_mask, ast.Store())], self.blk_call("branch", [test], s.test)), s)
            self.emit(S(f"if not _any({loop_mask}):\n    break"), s)
        self.varying_loop(s, head, exits)

    def uniform_loop(self, s, it, exits, test=None):
        masked = bool(exits)
        loop = Loop(s)
        outer = (self.out, self.M, self.ctxv, self.rel)
        self.out = []
        self.loops.append(loop)
        self.nest += 1
        if masked:
            lm = self.fresh("_m")
            self.M, self.ctxv, self.rel = ast.Name(lm), True, False
        else:
            self.rel = False
        target = s.target if isinstance(s, ast.For) else None
        if target is not None and isinstance(target, ast.Name) and target.id in self.sc.varying:
            # the name is a per-thread value elsewhere: count with a hidden name, then assign
            hidden = self.fresh("_k")
            self.store_target(ast.Name(target.id, ast.Store()), ast.Name(hidden), s)
            target = ast.Name(hidden, ast.Store())
        self.block(s.body)
        self.nest -= 1
        self.loops.pop()
        body = self.out
        if masked:
            names = [n for n in (loop.brk, self.ret if "ret" in exits else None) if n]
            pre = [located(S(f"{lm} = _without(M, {', '.join(names)})" if names else f"{lm} = M", M=copy.deepcopy(outer[1]))[0], s),
                   *[located(x, s) for x in S(f"if not _any({lm}):\n    break")]]
            if loop.cnt:
                pre.append(located(S(f"{loop.cnt} = False")[0], s))
            body = pre + body
        body = self.casts("loop_casts", s) + body
        self.out, self.M, self.ctxv, self.rel = outer
        for n in (loop.brk, loop.cnt):
            if n:
                self.emit(S(f"{n} = False"), s)
        if isinstance(s, ast.For):
            self.emit(ast.For(self.loop_target(target), it, body or [ast.Pass()], []), s)
        else:
            self.emit(ast.While(test, body or [ast.Pass()], []), s)
        self.emit(self.casts("exit_casts", s), s)

    def loop_target(self, target):
        if isinstance(target, ast.Name):
            return ast.Name(target.id, ast.Store())
        if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            return ast.Tuple([ast.Name(e.id, ast.Store()) for e in target.elts], ast.Store())
        raise self.err(target, "a loop variable must be a name")

    def region(self, stmts, mask: str):
        """Compile a masked region's statements, its own variables merge-free (see ``homes``)."""
        saved = dict(self.homes)
        for name in region_locals(stmts, self.uses, self.sc.kinds):
            self.homes[name] = mask
        self.block(stmts)
        self.homes = saved

    def varying_loop(self, s, head, exits):
        loop = Loop(s)
        lm = self.fresh("_l")
        outer = (self.out, self.M, self.ctxv, self.rel)
        self.emit(ast.Assign([ast.Name(lm, ast.Store())], copy.deepcopy(self.M)), s)
        self.out = []
        self.loops.append(loop)
        self.M, self.ctxv, self.rel = ast.Name(lm), True, False
        self.nest += 1
        self.vnest += 1
        self.region(s.body, lm)
        self.vnest -= 1
        self.nest -= 1
        body = self.out
        self.loops.pop()
        # the head, now that we know which exit sets exist
        self.out = []
        names = [n for n in (loop.brk, self.ret if "ret" in exits else None) if n]
        if names:
            self.emit(S(f"{lm} = _without({lm}, {', '.join(names)})"), s)
        self.M = ast.Name(lm)
        head(lm)
        if loop.cnt:
            self.emit(S(f"{loop.cnt} = False"), s)
        head_out = self.out
        self.out, self.M, self.ctxv, self.rel = outer
        for n in (loop.brk, loop.cnt):
            if n:
                self.emit(S(f"{n} = False"), s)
        self.emit(ast.While(ast.Constant(True), self.casts("loop_casts", s) + head_out + body, []), s)
        self.emit(self.casts("exit_casts", s), s)

    def break_(self, s):
        if not self.loops:
            raise self.err(s, "break outside a loop")
        loop = self.loops[-1]
        if not self.rel:
            self.emit(ast.Break() if isinstance(s, ast.Break) else ast.Continue(), s)
            return
        attr = "brk" if isinstance(s, ast.Break) else "cnt"
        name = getattr(loop, attr)
        if name is None:
            name = self.fresh("_brk" if attr == "brk" else "_cnt")
            setattr(loop, attr, name)
        self.emit(S(f"{name} = _or({name}, M)", M=copy.deepcopy(self.M)), s)

    def return_(self, s: ast.Return):
        if s.value is not None and not self.sc.device:
            raise self.err(s, "a kernel returns nothing (numba: the kernel's return type must be void); "
                              "write the result to an array")
        value = None if s.value is None else self.ex(s.value)
        if value is not None and self.types is not None and self.types.cast_returns:
            value = self.cast(value, self.types.returns)
        u = self.shadow(s.value) if value is not None and self.sc.device else None
        if u is not None and self.urv is None:
            self.urv = self.fresh("_urv")
        if not self.ctxv:
            if self.sc.device and value is not None and self.urv:
                value = E("_u_put(V, U)", V=value, U=u if u is not None else ast.Constant(False))
            self.emit(ast.Return(value if self.sc.device else None), s)
            return
        if self.ret is None:
            self.ret = self.fresh("_ret")
        if value is not None and self.sc.device:
            if self.rv is None:
                self.rv = self.fresh("_rv")
                self.defined.add(self.rv)
            self.emit(S(f"{self.rv} = _sel(M, V, {self.rv})", M=copy.deepcopy(self.M), V=value), s)
            if self.urv:
                self.emit(S(f"{self.urv} = _u_sel(M, U, {self.urv})", M=copy.deepcopy(self.M),
                            U=u if u is not None else ast.Constant(False)), s)
        self.emit(S(f"{self.ret} = _or({self.ret}, M)", M=copy.deepcopy(self.M)), s)
        if not self.sc.device:  # the threads leave the kernel: barriers stop waiting for them
            self.emit(ast.Expr(self.blk_call("exit", [], s)), s)

    # -- expressions -----------------------------------------------------------------------------
