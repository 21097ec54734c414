"""The reader-side ``--8<--`` expansion (no Markdown needed) gives exactly what
pymdownx.snippets puts on the page, for every include in the repository."""

from __future__ import annotations

from pathlib import Path

import markdown
import pytest

from simtdocs.docs.snippets import INCLUDE, SnippetError, expand_snippets, expand_with_map

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
