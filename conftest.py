"""Repository-wide pytest configuration.

pytest-codeblocks runs a fence's raw text, but our pages include their code with
``--8<--`` lines: expand them first, with the same function the site build uses,
so ``pytest --codeblocks docs/`` runs exactly the code the reader sees.
"""

import linecache

from simtdocs.docs import expand_snippets


def _is_python_block(item) -> bool:
    block = getattr(item, "obj", None)
    return type(item).__name__ == "TestBlock" and getattr(block, "syntax", None) == "python"


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        if _is_python_block(item):
            item.obj.code = expand_snippets(item.obj.code)


def pytest_runtest_setup(item):
    # pytest-codeblocks exec()s the block as "<string>": give that name the block's
    # lines, so tracebacks and the simulator's per-line counters show the source.
    if _is_python_block(item):
        code = item.obj.code
        linecache.cache["<string>"] = (len(code), None, code.splitlines(keepends=True), "<string>")
