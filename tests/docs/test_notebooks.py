"""The companion notebooks are executed by the build itself (no kernel per notebook):
the outputs must be what a Jupyter kernel records."""

from __future__ import annotations

import nbformat
import pytest

from simtdocs.docs import notebooks


def make(tmp_path, *cells):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, str(path))
    return path


def test_outputs_are_recorded_as_a_kernel_records_them(tmp_path):
    src = make(
        tmp_path,
        "from simtdocs.docs import T, Table, show\nprint('hello')\nprint('again')",
        "show(Table([[1, 2]], ['a', T('乙', 'b')]))\nx = 41",
        "x + 1",
        "import pathlib\nprint(pathlib.Path.cwd().name)",
    )
    out = tmp_path / "out.ipynb"
    notebooks.execute(src, out)
    cells = nbformat.read(str(out), as_version=4).cells
    assert [o["output_type"] for o in cells[0].outputs] == ["stream"]
    assert cells[0].outputs[0]["text"] == "hello\nagain\n"
    shown = cells[1].outputs[0]
    assert shown["output_type"] == "display_data" and "| a | b |" in shown["data"]["text/markdown"]
    assert cells[2].outputs[0]["output_type"] == "execute_result"
    assert cells[2].outputs[0]["data"]["text/plain"] == "42"
    assert cells[3].outputs[0]["text"] == tmp_path.name + "\n"  # the notebook's folder, as in a kernel
    assert [c.execution_count for c in cells] == [1, 2, 3, 4]


def test_a_failing_cell_raises(tmp_path):
    with pytest.raises(ZeroDivisionError):
        notebooks.execute(make(tmp_path, "x = 1", "1 / 0"), tmp_path / "out.ipynb")
