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
  the mask of what follows drops them (reconvergence at the end of the ``if`` or loop).

Every generated node carries the line of the reader's node it came from, and the function
is compiled with the reader's file name, so ``blk`` (which names the calling frame's line)
counts, checks and traces every instruction at the reader's own line.
"""

from __future__ import annotations

import ast
import copy
import linecache
import math

import numpy as np

from . import intrinsics as I
from . import runtime as rt
from .analysis import ARRAY_KINDS, Scope, Source, Static
from .types import constant, is_dtype_like, dtype as to_dtype

#: What the generated code may call besides blk: bound in its namespace under these names.
HELPERS = {
    "i64": np.int64, "f64": np.float64, "i32": np.int32, "_np": np, "_sel": rt.sel, "_else": rt.else_,
    "_and": rt.and_, "_or": rt.or_, "_without": rt.without, "_any": rt.any_, "_truth": rt.truth,
    "_not": rt.not_, "_select": rt.select, "_range_cond": rt.range_cond, "_urange": rt.urange,
    "_int": rt.int_, "_float": rt.float_, "_bool": rt.bool_, "_min": rt.min_, "_max": rt.max_,
    "_round": rt.round_, "_popc": rt.popc, "_brev": rt.brev, "_clz": rt.clz, "_ffs": rt.ffs, "_fma": rt.fma,
    "_cbrt": rt.cbrt, "_lanemask_lt": rt.lanemask_lt, "_activemask": rt.activemask,
    "_shfl_up_source": rt.shfl_up_source, "_shfl_down_source": rt.shfl_down_source,
    "_shfl_xor_source": rt.shfl_xor_source, "_block_reduce": rt.block_reduce, "_Local": rt.Local,
    "_local_load": rt.local_load, "_local_store": rt.local_store, "_const_load": rt.const_load,
    "_print": rt.print_, "_assert": rt.assert_, "_dtype": to_dtype, "_shape": lambda a: tuple(np.int64(s) for s in a.shape),
    "_dynamic_shared": lambda blk, dt, name: blk.shared(
        _dynamic_bytes(blk) // np.dtype(dt).itemsize, dt, name=name, dynamic=True),
}


def _dynamic_bytes(blk) -> int:
    L = blk._L  # the fast engine's _Launch or the reference engine's
    return int(getattr(L, "dynamic_shared", getattr(L, "shared_bytes", 0)))


MATH_NAMES = {name: f for name, f in rt.MATH.items()}
NONE = ast.Constant(None)


def _strip(node):
    for n in ast.walk(node):
        for a in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(n, a):
                try:
                    delattr(n, a)
                except AttributeError:
                    pass
    return node


def E(template: str, **subs) -> ast.expr:
    """One expression parsed from ``template`` with the names in ``subs`` replaced by an
    AST node, a name (str) or None; positions left empty for ``located`` to fill."""
    tree = _strip(ast.parse(template, mode="eval"))
    body = S_sub(tree.body, subs)
    return body


def S(template: str, **subs) -> list:
    """Statements from a template (see ``E``)."""
    tree = _strip(ast.parse(template))
    return [S_sub(s, subs) for s in tree.body]


def S_sub(node, subs):
    class Sub(ast.NodeTransformer):
        def visit_Name(self, n):
            if n.id in subs:
                v = subs[n.id]
                if v is None:
                    return ast.Constant(None)
                if isinstance(v, str):
                    return ast.Name(v, n.ctx)
                if isinstance(v, ast.AST):
                    return v
                return ast.Constant(v)
            return n
    return Sub().visit(node)


def _at(node, origin):
    """``node`` at the first line of ``origin`` (a statement may span lines; Python names a
    method call's line by the end of ``blk.method``, so generated nodes must not)."""
    if hasattr(origin, "lineno"):
        one_line = getattr(origin, "end_lineno", origin.lineno) == origin.lineno
        node.lineno = node.end_lineno = origin.lineno
        node.col_offset = getattr(origin, "col_offset", 0)
        node.end_col_offset = getattr(origin, "end_col_offset", node.col_offset) if one_line else node.col_offset
    return node


def located(node, origin):
    """``node`` at ``origin``'s first line, its parts without a position at their parent's."""
    if not hasattr(node, "lineno") and hasattr(origin, "lineno"):
        _at(node, origin)
    return ast.fix_missing_locations(node)


class Loop:
    def __init__(self, node, masked: bool):
        self.node = node
        self.masked = masked  # some lanes may leave by break/continue/return: bookkeeping needed
        self.brk: str | None = None
        self.cnt: str | None = None


class Compiler:
    """Compiles one ``Scope`` (a function for one signature) to a mask-form ``FunctionDef``."""

    def __init__(self, scope: Scope):
        self.sc = scope
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
        self.uses = _name_counts(scope.tree)

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
        return [] if _is_none(self.M) else [ast.keyword("mask", copy.deepcopy(self.M))]

    def blk_call(self, method: str, args, origin, with_mask=True) -> ast.Call:
        call = ast.Call(ast.Attribute(self.B(), method), list(args), self.mask_kw() if with_mask else [])
        return located(_at(call, origin), origin)

    def use(self, name: str):
        """``name`` is read by a masked merge: it needs a value for every thread."""
        if name not in self.defined:
            self.undefined.add(name)

    def err(self, node, what):
        return self.src.error(node, what)

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
        body = prologue + body_out
        if self.sc.device and self.rv:
            body.append(located(S(f"return {self.rv}")[0], tree))
        if not body:
            body = [located(ast.Pass(), tree)]
        params = [ast.arg(self.blk)] + ([ast.arg("_mask")] if self.sc.device else []) + [
            ast.arg(p) for p in self.sc.params if p not in self.sc.statics]
        fn = ast.FunctionDef(name=tree.name, args=ast.arguments(posonlyargs=[], args=params, kwonlyargs=[], kw_defaults=[],
                                                                  defaults=[]),
                             body=body, decorator_list=[], returns=None, type_params=[])
        _at(fn, tree)
        _prune_unused_masks(fn)
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
            if exits:
                self.shrink(exits, s)
                # what follows is a masked region of its own (``if i >= n: return`` and the rest)
                for name in _region_locals(stmts[k + 1:], self.uses, self.sc.kinds):
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

    def shrink(self, exits, origin):
        names = self.exit_vars(exits)
        if not names:
            return
        m = self.fresh("_m")
        self.emit(S(f"{m} = _without(M, {', '.join(names)})", M=copy.deepcopy(self.M)), origin)
        self.M = ast.Name(m)
        self.ctxv = self.rel = True

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
                self.assign(_at(ast.Assign([s.target], s.value), s))
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
            self.store_target(s.targets[0], v, s)
            return
        tmp = self.fresh("_v")
        self.emit(ast.Assign([ast.Name(tmp, ast.Store())], v), s)
        for t in s.targets:
            self.store_target(t, ast.Name(tmp), s)

    def _simple_target(self, t) -> bool:
        return isinstance(t, (ast.Name, ast.Subscript)) or (
            isinstance(t, ast.Tuple) and not self.ctxv and all(isinstance(e, ast.Name) for e in t.elts))

    def store_target(self, t, v, s):
        if isinstance(t, ast.Name):
            if t.id in self.sc.kinds:
                raise self.err(s, f"{t.id} names an array; it cannot be given a value")
            if self.ctxv and not (isinstance(self.M, ast.Name) and self.homes.get(t.id) == self.M.id):
                v = E("_sel(M, V, X)", M=copy.deepcopy(self.M), V=v, X=t.id)
                self.use(t.id)
            elif self.nest == 0:
                self.defined.add(t.id)
            self.emit(ast.Assign([ast.Name(t.id, ast.Store())], v), s)
        elif isinstance(t, ast.Tuple):
            if not self.ctxv and all(isinstance(e, ast.Name) for e in t.elts):
                self.emit(ast.Assign([ast.Tuple([ast.Name(e.id, ast.Store()) for e in t.elts], ast.Store())], v), s)
                return
            tmp = v.id if isinstance(v, ast.Name) else None
            if tmp is None:
                tmp = self.fresh("_v")
                self.emit(ast.Assign([ast.Name(tmp, ast.Store())], v), s)
            for k, e in enumerate(t.elts):
                self.store_target(e, E(f"T[{k}]", T=tmp), s)
        elif isinstance(t, ast.Subscript):
            self.store(t, v, s)
        else:
            raise self.err(s, f"assigning to {ast.unparse(t)} is not supported in a kernel")

    def store(self, t: ast.Subscript, v, s):
        kind = self.sc.array_kind(t.value)
        if kind is None:
            raise self.err(s, f"{ast.unparse(t.value)} is not an array the kernel can write")
        index = self.index(t.slice)
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
            value = _at(ast.BinOp(ast.Name(t.id), s.op, s.value), s)
            self.store_target(ast.Name(t.id, ast.Store()), self.ex(value), s)
            return
        if isinstance(t, ast.Subscript):
            kind = self.sc.array_kind(t.value)
            if kind is None:
                raise self.err(s, f"{ast.unparse(t.value)} is not an array the kernel can write")
            index = self.index(t.slice)
            if not _trivial(index):
                tmp = self.fresh("_i")
                self.emit(ast.Assign([ast.Name(tmp, ast.Store())], index), s)
                index = ast.Name(tmp)
            old = self.load(t.value, index, kind, t)
            new = _at(ast.BinOp(old, s.op, self.ex(s.value)), s)
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
            return
        cond = self.ex(s.test)
        outer = (self.M, self.ctxv, self.rel)
        taken = self.fresh("_m")
        self.emit(ast.Assign([ast.Name(taken, ast.Store())], self.blk_call("branch", [cond], s.test)), s)
        self.M, self.ctxv, self.rel = ast.Name(taken), True, True
        self.vnest += 1
        self.region(s.body, taken)
        if s.orelse:
            other = self.fresh("_m")
            origin = s.orelse[0]
            self.emit(S(f"{other} = _else(M, {taken})", M=copy.deepcopy(outer[0])), origin)
            self.M, self.ctxv, self.rel = ast.Name(other), True, True
            self.region(s.orelse, other)
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
                it = _at(ast.Call(ast.Name("_urange"), [self.ex(a, bare=True) for a in call.args], []), call)
            else:
                it = self.ex(call)
            self.uniform_loop(s, it, exits)
            return
        if not is_range or call.keywords or not 1 <= len(call.args) <= 3:
            raise self.err(s, "a per-thread loop must be over range(...)")
        args = [self.ex(a) for a in call.args]
        start, stop, step = (E("i64(0)"), args[0], None) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else None)
        k = self.fresh("_i")
        self.emit(ast.Assign([ast.Name(k, ast.Store())], start), s)
        if not _trivial(stop):
            stop_name = self.fresh("_stop")
            self.emit(ast.Assign([ast.Name(stop_name, ast.Store())], stop), s)
            stop = ast.Name(stop_name)
        if step is not None and not _trivial(step):
            step_name = self.fresh("_step")
            self.emit(ast.Assign([ast.Name(step_name, ast.Store())], step), s)
            step = ast.Name(step_name)
        if step is None:
            test = E(f"{k} < STOP", STOP=copy.deepcopy(stop))
        elif isinstance(call.args[2], ast.Constant) and isinstance(call.args[2].value, int):
            op = "<" if call.args[2].value > 0 else ">"
            test = E(f"{k} {op} STOP", STOP=copy.deepcopy(stop))
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
            if self.uses.get(target.id, 0) == _name_counts(s).get(target.id, 0):
                self.emit(S(f"{target.id} = {k}"), s)  # only the loop reads it: no merge
            else:
                self.use(target.id)
                self.emit(S(f"{target.id} = _sel({loop_mask}, {k}, {target.id})"), s)
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
            test = self.ex(s.test)
            self.emit(ast.Assign([ast.Name(loop_mask, ast.Store())], self.blk_call("branch", [test], s.test)), s)
            self.emit(S(f"if not _any({loop_mask}):\n    break"), s)
        self.varying_loop(s, head, exits)

    def uniform_loop(self, s, it, exits, test=None):
        masked = bool(exits)
        loop = Loop(s, masked)
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
        self.out, self.M, self.ctxv, self.rel = outer
        for n in (loop.brk, loop.cnt):
            if n:
                self.emit(S(f"{n} = False"), s)
        if isinstance(s, ast.For):
            self.emit(ast.For(self.loop_target(target), it, body or [ast.Pass()], []), s)
        else:
            self.emit(ast.While(test, body or [ast.Pass()], []), s)

    def loop_target(self, target):
        if isinstance(target, ast.Name):
            return ast.Name(target.id, ast.Store())
        if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            return ast.Tuple([ast.Name(e.id, ast.Store()) for e in target.elts], ast.Store())
        raise self.err(target, "a loop variable must be a name")

    def region(self, stmts, mask: str):
        """Compile a masked region's statements, its own variables merge-free (see ``homes``)."""
        saved = dict(self.homes)
        for name in _region_locals(stmts, self.uses, self.sc.kinds):
            self.homes[name] = mask
        self.block(stmts)
        self.homes = saved

    def varying_loop(self, s, head, exits):
        loop = Loop(s, True)
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
        self.emit(ast.While(ast.Constant(True), head_out + body, []), s)

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
        value = None if s.value is None else self.ex(s.value)
        if not self.ctxv:
            self.emit(ast.Return(value if self.sc.device else None), s)
            return
        if self.ret is None:
            self.ret = self.fresh("_ret")
        if value is not None and self.sc.device:
            if self.rv is None:
                self.rv = self.fresh("_rv")
                self.defined.add(self.rv)
            self.emit(S(f"{self.rv} = _sel(M, V, {self.rv})", M=copy.deepcopy(self.M), V=value), s)
        self.emit(S(f"{self.ret} = _or({self.ret}, M)", M=copy.deepcopy(self.M)), s)

    # -- expressions -----------------------------------------------------------------------------

    def ex(self, node, bare: bool = False):
        """The mask form of expression ``node`` under the current mask; branches it needs
        (a short-circuit around a load) are emitted before the statement."""
        out = self._ex(node, bare)
        if not hasattr(out, "lineno"):
            _at(out, node)
        return ast.fix_missing_locations(out)

    def _ex(self, node, bare):
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool) or v is None or isinstance(v, str):
                return ast.Constant(v)
            if isinstance(v, int):
                return ast.Constant(v) if bare else _at(E(f"i64({v})"), node)
            if isinstance(v, float):
                return _at(E(f"f64({v!r})"), node)
            if isinstance(v, complex):
                return ast.Constant(v)
            raise self.err(node, f"the constant {v!r} is not supported in a kernel")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
                and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
            return self._ex(_at(ast.Constant(-node.operand.value), node), bare)
        if isinstance(node, ast.Name):
            if node.id in self.sc.locals:
                return ast.Name(node.id)
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
                return self.load(node.value, self.index(node.slice), kind, node)
            return ast.Subscript(self.ex(node.value), self.ex(node.slice, bare=True))
        if isinstance(node, ast.Tuple):
            return ast.Tuple([self.ex(e) for e in node.elts])
        if isinstance(node, ast.BinOp):
            return ast.BinOp(self.ex(node.left), node.op, self.ex(node.right))
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                if self.sc.is_varying(node.operand):
                    return E("_not(X)", X=self.ex(node.operand))
                return ast.UnaryOp(ast.Not(), self.ex(node.operand))
            return ast.UnaryOp(node.op, self.ex(node.operand))
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.BoolOp):
            return self.boolop(node)
        if isinstance(node, ast.IfExp):
            return self.ifexp(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise self.err(node, f"{type(node).__name__} is not supported in a kernel")

    def static_value(self, node, value=None):
        if value is None:
            ok, value = self.sc.static(node)
        if value is I.laneid:
            return E("B.lane", B=self.blk)
        if value is I.warpsize:
            return ast.Constant(32)
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

    def index(self, sl):
        if isinstance(sl, ast.Slice) or (isinstance(sl, ast.Tuple) and any(isinstance(e, ast.Slice) for e in sl.elts)):
            raise self.err(sl, "slicing (a[i:j]) is not supported in a kernel")
        if isinstance(sl, ast.Tuple):
            return _at(ast.Tuple([self.ex(e, bare=True) for e in sl.elts]), sl)
        return self.ex(sl, bare=True)

    def load(self, base, index, kind, node):
        if kind in ("global", "shared"):
            return self.blk_call("load", [copy.deepcopy(base), index], node)
        if kind == "local":
            return E("_local_load(A, I, M)", A=copy.deepcopy(base), I=index, M=copy.deepcopy(self.M))
        return E("_const_load(A, I, M)", A=copy.deepcopy(base), I=index, M=copy.deepcopy(self.M))

    def compare(self, node: ast.Compare):
        def side(x):
            return self.ex(x, bare=isinstance(x, ast.Constant) and isinstance(x.value, int))
        if len(node.ops) == 1:
            if isinstance(node.ops[0], (ast.In, ast.NotIn, ast.Is, ast.IsNot)) and self.sc.is_varying(node):
                raise self.err(node, "in / is on per-thread values is not supported in a kernel")
            return ast.Compare(side(node.left), node.ops, [side(node.comparators[0])])
        parts = []
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            parts.append(_at(ast.Compare(left, [op], [right]), node))
            left = right
        return self.boolop(_at(ast.BoolOp(ast.And(), parts), node))

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
        right = rest[0] if len(rest) == 1 else _at(ast.BoolOp(node.op, rest), node)
        a = self._bool(self.ex(first), first)
        if not self.sc.has_effects(right):
            b = self._bool(self.ex(right), right)
            return ast.BinOp(a, ast.BitAnd() if is_and else ast.BitOr(), b)
        # the right side reads memory or calls: a real branch decides which lanes evaluate it
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
            return ast.IfExp(self.ex(node.test), self.ex(node.body), self.ex(node.orelse))
        test = self.ex(node.test)
        if not (self.sc.has_effects(node.body) or self.sc.has_effects(node.orelse)):
            return E("_select(C, A, B)", C=test, A=self.ex(node.body), B=self.ex(node.orelse))
        taken, other = self.fresh("_m"), self.fresh("_m")
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
            return ast.Call(ast.Name("_print"), [ast.Name(self.blk), copy.deepcopy(self.M)] + args, [])
        builtin = {int: "_int", float: "_float", bool: "_bool", min: "_min", max: "_max", round: "_round",
                   abs: "abs", len: None, pow: None}
        if f in builtin:
            if f is len:
                return E("i64(len(A))", A=args[0])
            if f is pow:
                return ast.BinOp(args[0], ast.Pow(), args[1])
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
        spec = self.sc.specialize(f, kinds, node)
        name = self.fresh(f"_{f.__name__}_")
        self.extra[name] = spec
        args = [copy.deepcopy(a) if k in ARRAY_KINDS else self.ex(a) for a, k in zip(node.args, kinds)
                if not isinstance(k, Static)]
        call = ast.Call(ast.Name(name), [ast.Name(self.blk), copy.deepcopy(self.M)] + args, [])
        return _at(call, node)

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
            value = self.ex(pos[1])
            arg = pos[2]
            if name == "shfl_sync":
                return self.blk_call("shfl", [value, self.ex(arg, bare=True)], node)
            short = name.split("_")[1]
            if not self.sc.is_varying(arg):
                return self.blk_call(f"shfl_{short}", [value, self.ex(arg, bare=True)], node)
            src = E(f"_shfl_{short}_source(B, D)", B=self.blk, D=self.ex(arg))
            return self.blk_call("shfl", [value, src], node)
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
        if name.startswith("atomic."):
            op = name.split(".")[1]
            if op not in I.ATOMICS_SUPPORTED:
                raise self.err(node, f"cuda.atomic.{op} is not supported (the engine has add, sub, max, min, "
                                     f"exch, cas and compare_and_swap)")
            array = pos[0]
            kind = self.sc.array_kind(array)
            if kind not in ("global", "shared"):
                raise self.err(node, f"cuda.atomic.{op} needs a global or shared array")
            arr = copy.deepcopy(array)
            if op == "compare_and_swap":
                return self.blk_call("atomic_cas", [arr, ast.Constant(0), self.ex(pos[1]), self.ex(pos[2])], node)
            index = self.index(pos[1])
            if op == "cas":
                return self.blk_call("atomic_cas", [arr, index, self.ex(pos[2]), self.ex(pos[3])], node)
            value = self.ex(pos[2])
            if op == "sub":
                value = ast.UnaryOp(ast.USub(), value)
                op = "add"
            return self.blk_call(f"atomic_{op}", [arr, index, value], node)
        raise self.err(node, f"cuda.{name} is not supported in a kernel")

    def _stmt_call(self, call, node):
        self.emit(ast.Expr(call), node)
        return ast.Constant(None)


def _prune_unused_masks(fn: ast.FunctionDef) -> None:
    """Drop ``_mN = …`` assignments nothing reads (the mask after a block's last exit)."""
    while True:
        loads = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and not isinstance(getattr(n, "ctx", None), ast.Store)}
        removed = False
        for node in ast.walk(fn):
            for field in ("body", "orelse"):
                stmts = getattr(node, field, None)
                if not isinstance(stmts, list):
                    continue
                keep = [st for st in stmts if not (
                    isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                    and st.targets[0].id.startswith("_m") and st.targets[0].id[2:].isdigit()
                    and st.targets[0].id not in loads)]
                if len(keep) != len(stmts):
                    setattr(node, field, keep or [ast.Pass()])
                    removed = True
        if not removed:
            return


def _name_counts(node) -> dict:
    counts: dict[str, int] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _region_locals(stmts, uses: dict, kinds: dict) -> list[str]:
    """Names that occur only in ``stmts`` and whose first occurrence there is a top-level
    ``name = value`` (value not reading it): every read follows an assignment in the region."""
    inside: dict[str, int] = {}
    for st in stmts:
        for name, k in _name_counts(st).items():
            inside[name] = inside.get(name, 0) + k
    out = []
    for name, k in inside.items():
        if k != uses.get(name, 0) or name in kinds:
            continue
        for st in stmts:
            if name not in _name_counts(st):
                continue
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
                    and st.targets[0].id == name and name not in _name_counts(st.value):
                out.append(name)
            break
    return out


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _trivial(node) -> bool:
    return isinstance(node, (ast.Name, ast.Constant)) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("i64", "f64")
        and all(isinstance(a, ast.Constant) for a in node.args))
