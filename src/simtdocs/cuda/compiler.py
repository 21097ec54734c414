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
  ``return`` only leaves the function: its threads go on in the caller.

Every generated node carries the line of the reader's node it came from, and the function
is compiled with the reader's file name, so ``blk`` (which names the calling frame's line)
counts, checks and traces every instruction at the reader's own line.
"""

from __future__ import annotations

import ast
import copy

import numpy as np

from . import arithmetic as ar
from . import runtime as rt
from .analysis import Scope
from .expressions import Expressions
from .inference import Types
from .syntax import NONE, E, S, at, is_none, located, name_counts, prune_unused_masks, region_locals, trivial
from .types import dtype as to_dtype

#: What the generated code may call besides blk: bound in its namespace under these names.
HELPERS = {
    "i64": np.int64, "f64": np.float64, "i32": np.int32, "_np": np, "_sel": rt.sel, "_cast": rt.cast, "_as": rt.as_,
    "_else": rt.else_,
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
    "_dynamic_shared": lambda blk, dt, name: blk.shared(
        _dynamic_bytes(blk) // np.dtype(dt).itemsize, dt, name=name, dynamic=True),
    "_narrow": rt.narrow, **ar.HELPERS,  # numba's arithmetic where numpy's differs (_add, _mul, _lt …)
}


def _dynamic_bytes(blk) -> int:
    L = blk._L  # the fast engine's _Launch or the reference engine's
    return int(getattr(L, "dynamic_shared", getattr(L, "shared_bytes", 0)))



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
        at(fn, tree)
        prune_unused_masks(fn)
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
        index = self.index(t.slice, t.value)
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
            self.store_target(ast.Name(t.id, ast.Store()), value, s)
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
                it = at(ast.Call(ast.Name("_urange"), [self.ex(a, bare=True) for a in call.args], []), call)
            else:
                it = self.ex(call)
            self.uniform_loop(s, it, exits)
            return
        if not is_range or call.keywords or not 1 <= len(call.args) <= 3:
            raise self.err(s, "a per-thread loop must be over range(...)")
        args = [self.ex(a) for a in call.args]
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
        if not self.sc.device:  # the threads leave the kernel: barriers stop waiting for them
            self.emit(ast.Expr(self.blk_call("exit", [], s)), s)

    # -- expressions -----------------------------------------------------------------------------
