"""Control flow of a batch of programs: the kernel's ``for``/``while``/``if``/``return``
rewritten so that one Python run executes every program of a batch.

A batch holds the programs of one engine pass; a value that differs between them (a
program id, a bound computed from it, a loaded value) is a per-program tensor. Triton
lets control flow depend on such scalars, so the kernel's source is rewritten, as
Triton's own code generator walks it, before it runs:

- ``for i in range(a, b, c)`` (and ``tl.range``): iteration ``k`` runs for the programs
  whose own ``a + k·c`` is still inside their own bound; the others sit it out (their
  loads and stores are masked off, so no warp of theirs issues anything), and the
  variables the body assigns keep, for them, the value they had. ``tl.static_range``
  and loops over Python sequences stay Python loops.
- ``while cond:`` likewise, the condition narrowing the programs that continue.
- ``if cond:`` with a condition that all running programs agree on is a Python ``if``;
  otherwise both sides run, each for its own programs, and the variables either side
  assigns are merged program by program (``where(cond, then, else)``).
- ``return`` in the kernel ends the programs that reach it; the others go on.

``break`` and ``continue`` are refused (Triton refuses them too), naming the line.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap

import numpy as np

RT = "__simtdocs_rt"
_ids = itertools.count()


class _Undefined:
    """A variable one side of a branch (or a loop body) assigns and the other never had."""

    def __repr__(self):
        return "<undefined>"


UNDEFINED = _Undefined()


def _assigned(body) -> list[str]:
    """Names bound by the statements of ``body`` (not inside nested functions)."""
    names: list[str] = []

    def add(n):
        if n not in names and not n.startswith("__"):
            names.append(n)

    class V(ast.NodeVisitor):
        def visit_Name(self, node):
            if isinstance(node.ctx, ast.Store):
                add(node.id)

        def visit_FunctionDef(self, node):
            add(node.name)

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_Lambda(self, node):
            pass

        def visit_ListComp(self, node):
            pass

        visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    for stmt in body:
        V().visit(stmt)
    return names


def _rt(attr):
    return ast.Attribute(ast.Name(RT, ast.Load()), attr, ast.Load())


def _call(func, *args):
    return ast.Call(func, list(args), [])


def _names_tuple(names, ctx):
    return ast.Tuple([ast.Name(n, ctx()) for n in names], ctx())


def _is_range(node) -> str | None:
    """'range' for ``range(...)``/``tl.range(...)``, 'static' for ``tl.static_range``, else None."""
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    if name == "static_range":
        return "static"
    if name == "range":
        return "range"
    return None


class _Rewriter(ast.NodeTransformer):
    def __init__(self, filename, is_kernel, shadowed=frozenset()):
        self.filename = filename
        self.is_kernel = is_kernel
        self.shadowed = shadowed  # names the kernel's own scope or module binds (Triton looks there first)
        self.divergent_depth = 0  # >0: inside the both-sides copy of an if, or a divergent loop

    def visit_Call(self, node):
        # Python's min/max: Triton's code generator makes them tl.minimum/tl.maximum on tensors
        # (``builtin_namespace``), unless the kernel's scope or module defines the name itself
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("min", "max") and f.id not in self.shadowed:
            node.func = ast.copy_location(_rt(f"builtin_{f.id}"), f)
        return node

    def _err(self, node, what):
        from .language import TritonError
        raise TritonError(f"{self.filename}:{node.lineno}:{node.col_offset + 1}: {what} is not supported "
                          f"by simtdocs.triton (nor by Triton)")

    # nested functions keep Python's meaning
    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

    def visit_Break(self, node):
        self._err(node, "break")

    def visit_Continue(self, node):
        self._err(node, "continue")

    def visit_Return(self, node):
        if self.is_kernel and (node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None)):
            # ``return``: the programs that reach it end; Python returns once none is left.
            new = ast.If(_call(_rt("exit")), [ast.Return(None)], [])
            return ast.copy_location(new, node)
        if self.divergent_depth:
            new = ast.Expr(_call(_rt("divergent_return")))
            return ast.copy_location(new, node)
        return node

    def _body(self, stmts):
        out = []
        for s in stmts:
            r = self.visit(s)
            if r is None:
                continue
            out.extend(r if isinstance(r, list) else [r])
        return out or [ast.Pass()]

    def _test(self, node):
        """A branch or loop condition: ``and``/``or``/``not`` become per-program logic."""
        if isinstance(node, ast.BoolOp):
            fn = "and_" if isinstance(node.op, ast.And) else "or_"
            args = [self._test(node.values[0])] + [ast.Lambda(ast.arguments([], [], None, [], [], None, []),
                                                              self._test(v)) for v in node.values[1:]]
            return ast.copy_location(_call(_rt(fn), *args), node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return ast.copy_location(_call(_rt("not_"), self._test(node.operand)), node)
        return self.visit(node)

    def visit_For(self, node):
        kind = _is_range(node.iter)
        if kind != "range" or node.orelse:
            if node.orelse:
                self._err(node, "for … else")
            node.iter = self.visit(node.iter)
            node.body = self._body(node.body)
            return node
        it = f"__loop{next(_ids)}"
        call = self.visit(node.iter)
        loop = ast.Call(_rt("loop"), list(call.args), list(call.keywords))
        names = _assigned(node.body) + [n for n in _assigned([ast.Assign([node.target], ast.Constant(0))])]
        self.divergent_depth += 1
        body = self._body(node.body)
        self.divergent_depth -= 1
        if names:
            save = ast.Expr(_call(ast.Attribute(ast.Name(it, ast.Load()), "save", ast.Load()),
                                  _call(ast.Name("locals", ast.Load()))))
            merge = ast.Assign([_names_tuple(names, ast.Store)],
                               _call(ast.Attribute(ast.Name(it, ast.Load()), "merge", ast.Load()),
                                     _call(ast.Name("locals", ast.Load())),
                                     ast.Tuple([ast.Constant(n) for n in names], ast.Load())))
            body = [save] + body + [merge]
        new = ast.For(node.target, ast.NamedExpr(ast.Name(it, ast.Store()), loop), body, [])
        ast.copy_location(new, node)
        return ast.fix_missing_locations(new)

    def visit_While(self, node):
        if node.orelse:
            self._err(node, "while … else")
        it = f"__while{next(_ids)}"
        names = _assigned(node.body)
        self.divergent_depth += 1
        body = self._body(node.body)
        self.divergent_depth -= 1
        if names:
            save = ast.Expr(_call(ast.Attribute(ast.Name(it, ast.Load()), "save", ast.Load()),
                                  _call(ast.Name("locals", ast.Load()))))
            merge = ast.Assign([_names_tuple(names, ast.Store)],
                               _call(ast.Attribute(ast.Name(it, ast.Load()), "merge", ast.Load()),
                                     _call(ast.Name("locals", ast.Load())),
                                     ast.Tuple([ast.Constant(n) for n in names], ast.Load())))
            body = [save] + body + [merge]
        init = ast.Assign([ast.Name(it, ast.Store())], _call(_rt("while_")))
        test = _call(ast.Attribute(ast.Name(it, ast.Load()), "test", ast.Load()), self._test(node.test))
        loop = ast.While(test, body, [])
        out = [ast.copy_location(init, node), ast.copy_location(loop, node)]
        return [ast.fix_missing_locations(s) for s in out]

    def visit_If(self, node):
        b = f"__branch{next(_ids)}"
        test = self._test(node.test)
        names = _assigned(node.body + node.orelse)
        # the uniform copy: a plain Python if
        import copy
        uni = ast.If(ast.Attribute(ast.Name(b, ast.Load()), "value", ast.Load()),
                     self._body(copy.deepcopy(node.body)),
                     self._body(copy.deepcopy(node.orelse)) if node.orelse else [])
        # the divergent copy: both sides, each for its own programs, then merged
        self.divergent_depth += 1
        then = self._body(copy.deepcopy(node.body))
        other = self._body(copy.deepcopy(node.orelse)) if node.orelse else []
        self.divergent_depth -= 1

        def m(name, *args):
            return _call(ast.Attribute(ast.Name(b, ast.Load()), name, ast.Load()), *args)

        loc = _call(ast.Name("locals", ast.Load()))
        names_c = ast.Tuple([ast.Constant(n) for n in names], ast.Load())
        div = [ast.Expr(m("save", loc, names_c)),
               ast.If(m("then"), then, [])]
        if names:
            div.append(ast.Expr(m("mid", _call(ast.Name("locals", ast.Load())))))
            div.append(ast.Assign([_names_tuple(names, ast.Store)], m("restore")))
        div.append(ast.If(m("else_"), other or [ast.Pass()], []))
        if names:
            div.append(ast.Assign([_names_tuple(names, ast.Store)], m("merge", _call(ast.Name("locals", ast.Load())))))
        else:
            div.append(ast.Expr(m("merge", _call(ast.Name("locals", ast.Load())))))
        init = ast.Assign([ast.Name(b, ast.Store())], _call(_rt("branch"), test))
        top = ast.If(ast.Attribute(ast.Name(b, ast.Load()), "uniform", ast.Load()), [uni], div)
        out = [ast.copy_location(init, node), ast.copy_location(top, node)]
        for s in out:
            ast.fix_missing_locations(s)
            for sub in ast.walk(s):
                if not hasattr(sub, "lineno"):
                    ast.copy_location(sub, node)
        return out


def compile_batched(fn, is_kernel: bool, runtime):
    """``fn`` rewritten for batches of programs (see the module's docstring), with the
    reader's file name and line numbers, so counters and errors name the reader's lines."""
    lines, first = inspect.getsourcelines(fn)
    src = textwrap.dedent("".join(lines))
    tree = ast.parse(src)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise TypeError(f"{fn.__name__}: @triton.jit needs a def")
    fdef.decorator_list = []
    ast.increment_lineno(tree, first - 1)
    filename = fn.__code__.co_filename
    shadowed = set(fn.__globals__) | set(fn.__code__.co_varnames) | set(fn.__code__.co_freevars)
    fdef.body = _Rewriter(filename, is_kernel, frozenset(shadowed))._body(fdef.body)
    new = fdef
    free = list(fn.__code__.co_freevars)
    maker = ast.FunctionDef(
        name="__simtdocs_make",
        args=ast.arguments([], [ast.arg(RT)] + [ast.arg(n) for n in free], None, [], [], None, []),
        body=[new, ast.Return(ast.Name(fdef.name, ast.Load()))], decorator_list=[], returns=None)
    ast.copy_location(maker, fdef)
    module = ast.Module([maker], [])
    ast.fix_missing_locations(module)
    code = compile(module, filename, "exec")
    ns: dict = {}
    exec(code, fn.__globals__, ns)
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    out = ns["__simtdocs_make"](runtime, *cells)
    out.__defaults__ = fn.__defaults__
    out.__kwdefaults__ = fn.__kwdefaults__
    return out


# -- the runtime the rewritten code calls -----------------------------------------------------

def merge_values(cond, a, b):
    """Per program: ``a`` where ``cond`` (a (B,) bool array), else ``b``."""
    from .language import pointer, tensor
    if a is UNDEFINED:
        return b
    if b is UNDEFINED or a is b:
        return a
    if isinstance(a, pointer) or isinstance(b, pointer):
        if not (isinstance(a, pointer) and isinstance(b, pointer)) or a.base is not b.base:
            from .language import _unsupported
            _unsupported("a variable that is a pointer into different arrays in different programs")
        sv = _select(cond, a.s, b.s)
        if a.blk is b.blk or (a.blk.shape == b.blk.shape and np.array_equal(a.blk, b.blk)):
            return pointer(a.base, a.blk, a.name, sv, min(a.div, b.div), a.opaque or b.opaque)
        return pointer(a.base, _select(cond, a.offset, b.offset), a.name, None, min(a.div, b.div),
                       a.opaque or b.opaque)
    if isinstance(a, tensor) or isinstance(b, tensor):
        av = a.v if isinstance(a, tensor) else np.asarray(a)[None]
        bv = b.v if isinstance(b, tensor) else np.asarray(b)[None]
        if av.dtype != bv.dtype:
            dt = np.result_type(av, bv)
            av, bv = av.astype(dt), bv.astype(dt)
        import math
        from .language import _div_of, _opaque
        return tensor(_select(cond, av, bv), math.gcd(_div_of(a), _div_of(b)), _opaque(a) or _opaque(b))
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(merge_values(cond, x, y) for x, y in zip(a, b))
    try:
        if a == b:
            return a
    except Exception:  # noqa: BLE001
        pass
    if isinstance(a, (int, float, bool, np.number)) and isinstance(b, (int, float, bool, np.number)):
        return tensor(_select(cond, np.asarray(a)[None], np.asarray(b)[None]))
    from .language import _unsupported
    _unsupported(f"a {type(a).__name__} whose value differs between the programs of a batch")


def _select(cond, av, bv):
    nd = max(av.ndim, bv.ndim)
    av = av.reshape(av.shape[:1] + (1,) * (nd - av.ndim) + av.shape[1:])
    bv = bv.reshape(bv.shape[:1] + (1,) * (nd - bv.ndim) + bv.shape[1:])
    c = cond.reshape((-1,) + (1,) * (nd - 1))
    return np.where(c, av, bv)
