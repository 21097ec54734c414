"""Parsing CUDA C with tree-sitter and the ``tree-sitter-cuda`` grammar (syntax only).

The grammar's wheel carries its compiled grammar, so nothing is fetched at run time. A
syntax error is reported at its line and column.
"""

from __future__ import annotations

from ..analysis import CompileError

_PARSER = None


def parser():
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_cuda
        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))
    return _PARSER


def parse(text: str, filename: str = "<cuda>"):
    tree = parser().parse(text.encode())
    return tree


def first_error(node):
    """The first ERROR or MISSING node under ``node`` (None: the syntax is fine)."""
    if node.type == "ERROR" or node.is_missing:
        return node
    if not node.has_error:
        return None
    for c in node.children:
        e = first_error(c)
        if e is not None:
            return e
    return node
