"""The mask form's syntax trees: templates, positions, and what a tree says about names.

``E``/``S`` parse a template and put nodes in place of its names; ``located`` gives a
generated node the *first line* of the reader's node it comes from (Python names a method
call's line by the end of ``blk.method``, so a generated node must not span lines), and
its parts without a position their parent's. The rest reads trees: which names occur where,
which masks nothing reads.
"""

from __future__ import annotations

import ast

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


def at(node, origin):
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
        at(node, origin)
    return ast.fix_missing_locations(node)


def prune_unused_masks(fn: ast.FunctionDef) -> None:
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


def name_counts(node) -> dict:
    counts: dict[str, int] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def region_locals(stmts, uses: dict, kinds: dict) -> list[str]:
    """Names that occur only in ``stmts`` and whose first occurrence there is a top-level
    ``name = value`` (value not reading it): every read follows an assignment in the region."""
    inside: dict[str, int] = {}
    for st in stmts:
        for name, k in name_counts(st).items():
            inside[name] = inside.get(name, 0) + k
    out = []
    for name, k in inside.items():
        if k != uses.get(name, 0) or name in kinds:
            continue
        for st in stmts:
            if name not in name_counts(st):
                continue
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
                    and st.targets[0].id == name and name not in name_counts(st.value):
                out.append(name)
            break
    return out


def is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def trivial(node) -> bool:
    return isinstance(node, (ast.Name, ast.Constant)) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("i64", "f64")
        and all(isinstance(a, ast.Constant) for a in node.args))
