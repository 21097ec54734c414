"""Repository-wide pytest configuration.

pytest-codeblocks runs a fence's raw text, but our pages include their code with
``--8<--`` lines: expand them first, with the same function the site build uses,
so ``pytest --codeblocks docs/`` runs exactly the code the reader sees.
"""

from simtdocs.docs import expand_snippets


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        block = getattr(item, "obj", None)
        if type(item).__name__ == "TestBlock" and getattr(block, "syntax", None) == "python":
            block.code = expand_snippets(block.code)
