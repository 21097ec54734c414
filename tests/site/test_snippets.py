"""The reader-side ``--8<--`` expansion (no Markdown needed) gives exactly what
pymdownx.snippets puts on the page, for every include in the repository."""

from __future__ import annotations

import math
from pathlib import Path

import markdown
import pytest

from simtdocs.snippets import INCLUDE, SnippetError, definitions, expand_snippets, expand_with_map

ROOT = Path(__file__).resolve().parents[2]


def includes() -> list[str]:
    found = set()
    for path in [*(ROOT / "docs").rglob("*.md"), *(ROOT / "snippets").rglob("*.py")]:
        for line in path.read_text(encoding="utf-8").split("\n"):
            if INCLUDE.match(line.strip()):
                found.add(line.strip())
    return sorted(found)


def pymdownx(code: str) -> str:
    md = markdown.Markdown(extensions=["pymdownx.snippets"],
                           extension_configs={"pymdownx.snippets": {"base_path": [str(ROOT)], "check_paths": True}})
    return "\n".join(md.preprocessors["snippet"].run(code.split("\n")))


def test_there_are_includes_to_compare():
    assert len(includes()) > 10


@pytest.mark.parametrize("line", includes())
def test_same_text_as_pymdownx_snippets(line):
    assert expand_snippets(line, ROOT) == pymdownx(line)
    assert expand_snippets("    " + line, ROOT) == pymdownx("    " + line)  # indentation carried


def test_each_line_knows_its_file_and_line(tmp_path):
    (tmp_path / "s.py").write_text("x = 0\n# --8<-- [start:a]\ny = 1\nz = 2\n# --8<-- [end:a]\n", encoding="utf-8")
    code, where = expand_with_map('a = 1\n--8<-- "s.py:a"\nb = 2', ("docs/p.md", 10), tmp_path)
    assert code == "a = 1\ny = 1\nz = 2\nb = 2"
    assert where == [("docs/p.md", 10, 10), ("s.py", 3, 11), ("s.py", 4, 11), ("docs/p.md", 12, 12)]
    with pytest.raises(SnippetError, match="section 'b' not found"):
        expand_snippets('--8<-- "s.py:b"', tmp_path)
    with pytest.raises(SnippetError, match="'t.py' not found"):
        expand_snippets('--8<-- "t.py"', tmp_path)


EXPERIMENT = """\
import math
# --8<-- [start:demo]
import math as m

SIDE, NAME = 4, "tile"
SIZES: tuple = (1, 2)


def area(x):
    return x * SIDE


@staticmethod
def decorated():
    return NAME


class Box:
    pass


ran = []                      # a literal: arrives, and is still empty below
data = list(range(SIDE))      # computed by a call: the experiment's, skipped
result = area(3)
ran.append(result)
for s in SIZES:
    print("launch", s)
print(f"area {result}")
if __name__ == "simtdocs_definitions":
    ran.append("if")
# --8<-- [end:demo]
"""


def test_definitions_keep_only_what_defines(tmp_path, capsys):
    (tmp_path / "script.py").write_text(EXPERIMENT, encoding="utf-8")
    ns = definitions("script.py:demo", base=tmp_path)
    assert capsys.readouterr().out == ""  # nothing the section prints was run
    defined = {k: v for k, v in ns.items() if not k.startswith("__")}
    assert sorted(defined) == ["Box", "NAME", "SIDE", "SIZES", "area", "decorated", "m", "ran"]
    assert (ns["SIDE"], ns["NAME"], ns["SIZES"], ns["ran"]) == (4, "tile", (1, 2), [])
    assert ns["area"](3) == 12 and ns["m"] is math
    # Each definition keeps the snippet file and its line there (line 9: `def area(x):`).
    assert (ns["area"].__code__.co_filename, ns["area"].__code__.co_firstlineno) == (str(tmp_path / "script.py"), 9)
    assert ns["decorated"].__func__.__code__.co_firstlineno == 13  # the decorator's line


def test_definitions_of_a_lecture_section_that_launches_and_prints(capsys):
    """The `unchecked` section of P2 code 01 defines its kernel, then launches it past the end
    of the arrays and prints the memcheck report: only the kernel and `n, threads` arrive."""
    script = "snippets/p2/01_cuda_programming_model.py"
    ns = definitions(f"{script}:setup", f"{script}:unchecked")
    assert capsys.readouterr().out == ""
    assert {"vector_add_unchecked", "n", "threads", "np", "launch"} <= set(ns)
    assert {"a", "b", "c", "err"}.isdisjoint(ns)  # the arrays the launch needs were never made
    assert (ns["n"], ns["threads"]) == (1000, 256)
    code = ns["vector_add_unchecked"].__code__
    lines = (ROOT / script).read_text(encoding="utf-8").split("\n")
    assert code.co_filename == str(ROOT / script)
    assert lines[code.co_firstlineno - 1] == "def vector_add_unchecked(blk, a, b, c, n):"
    with pytest.raises(SnippetError, match="section 'nope' not found"):
        definitions(f"{script}:nope")
