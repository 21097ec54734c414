"""Every companion script runs alone, as a reader would run it: in a fresh virtual
environment with nothing but ``pip install simtdocs[figures]`` (numpy and matplotlib),
so a script that needs the site's build tools (markdown, mkdocs, ...) fails here.

The wheel is built once per run (tests/site/conftest.py, shared with the packaging tests)
and installed into one fresh venv (about 20 s).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from site_build import once_per_run

ROOT = Path(__file__).resolve().parents[2]

SCRIPTS = sorted((ROOT / "snippets").rglob("*.py"))
BUILD_TOOLS = ("markdown", "mkdocs", "pymdownx", "pytest", "pytest_codeblocks", "jupytext", "jieba")


@pytest.fixture(scope="session")
def reader_python(request, simtdocs_wheel_file) -> Path:
    """The python of a fresh venv with only ``simtdocs[figures]`` installed, made once for the
    run (every xdist worker runs its scripts in the same venv)."""
    def make(folder: Path) -> dict:
        folder.mkdir(parents=True, exist_ok=True)
        run = dict(capture_output=True, text=True, timeout=900)
        proc = subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], **run)
        if proc.returncode:
            return {"error": proc.stderr[-3000:]}
        python = folder / "venv" / "bin" / "python"
        proc = subprocess.run([str(python), "-m", "pip", "install", "-q", f"{simtdocs_wheel_file}[figures]"],
                              cwd=folder, **run)
        return {"error": proc.stderr[-3000:]} if proc.returncode else {"python": str(python)}

    made = once_per_run(request.config, "reader-venv", make)
    assert "error" not in made, made["error"]
    return Path(made["python"])


def reader_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "MPLBACKEND": "Agg"}


def test_the_reader_venv_has_no_build_tools(reader_python):
    code = "import importlib.util as u; print([m for m in %r if u.find_spec(m)])" % (BUILD_TOOLS,)
    proc = subprocess.run([str(reader_python), "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env=reader_env(), timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr
    where = subprocess.run([str(reader_python), "-c", "import simtdocs; print(simtdocs.__file__)"], cwd=ROOT,
                           capture_output=True, text=True, env=reader_env(), timeout=120).stdout
    assert "site-packages" in where  # the installed wheel, not the working tree


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_snippet_script_runs(script, reader_python):
    proc = subprocess.run(
        [str(reader_python), str(script.relative_to(ROOT))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=reader_env(),
    )
    assert proc.returncode == 0, proc.stderr[-4000:]


# -- a downloaded notebook, in the same fresh venv ------------------------------------------

NOTEBOOK_RUNNER = ("nbclient>=0.10", "ipykernel>=6")
RUN_NOTEBOOK = """
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

path = Path(sys.argv[1])
nb = nbformat.read(str(path), as_version=4)
NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
nbformat.write(nb, str(path))
"""


@pytest.fixture(scope="session")
def notebook_runner(request, reader_python) -> Path:
    """nbclient and ipykernel for the reader's python, installed once for the run into a folder
    of their own (put on PYTHONPATH only to run a notebook): the scripts above still see
    nothing but ``simtdocs[figures]``."""
    def make(target: Path) -> dict:
        proc = subprocess.run([str(reader_python), "-m", "pip", "install", "-q", "--target", str(target),
                               *NOTEBOOK_RUNNER], capture_output=True, text=True, timeout=900, env=reader_env())
        return {"error": proc.stderr[-3000:]} if proc.returncode else {"target": str(target)}

    made = once_per_run(request.config, "notebook-runner", make)
    assert "error" not in made, made["error"]
    return Path(made["target"])


@pytest.mark.parametrize(("script", "lang", "shown"), [
    pytest.param("home/01_first_launch.py", "zh", "| 计数器 | 键 | 值 |", id="first_launch-zh"),
    pytest.param("home/01_first_launch.py", "en", "| Counter | Key | Value |", id="first_launch-en"),
    # its lecture code comes from four other scripts, written into the notebook
    pytest.param("p2/06_exercises.py", "en", None, id="exercises-en"),
    # figures: a script run in a terminal does not draw them, a notebook does (Chinese labels too)
    pytest.param("p2/08_access_pictures.py", "zh", None, id="access_pictures-zh"),
])
def test_a_downloaded_notebook_runs_in_a_fresh_venv(script, lang, shown, reader_python, notebook_runner, tmp_path):
    """The notebook the site offers for download, run top to bottom by a Jupyter kernel of
    the reader's venv, away from the repository: its setup cell finds simtdocs installed."""
    from simtdocs_site import notebooks

    path = notebooks.write_notebook(ROOT / "snippets" / script, tmp_path / Path(script).with_suffix(".ipynb").name,
                                    "test", lang, "https://github.com/o/r")
    home = tmp_path / "home"
    env = {**reader_env(), "PYTHONPATH": str(notebook_runner), "HOME": str(home),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "IPYTHONDIR": str(home / "ipython")}
    proc = subprocess.run([str(reader_python), "-c", RUN_NOTEBOOK, str(path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    import nbformat

    cells = [c for c in nbformat.read(str(path), as_version=4).cells if c.cell_type == "code"]
    assert [c.execution_count for c in cells] == list(range(1, len(cells) + 1))
    errors = [o for c in cells for o in c.outputs if o["output_type"] == "error"]
    assert errors == []
    markdown = [o["data"]["text/markdown"] for c in cells for o in c.outputs if "text/markdown" in o.get("data", {})]
    if shown is not None:
        assert [m.split("\n")[0] for m in markdown] == [shown]
    if "pictures" in script:
        rich = [v for c in cells for o in c.outputs for k, v in o.get("data", {}).items() if k != "text/plain"]
        assert len([r for r in rich if "data:image/svg+xml;base64," in r]) >= 4  # one per access drawn


def test_the_wheel_carries_the_compiled_catalogs(reader_python, simtdocs_wheel_file):
    """Chinese labels reach a reader who installs the wheel: its .mo catalogs are in it."""
    import zipfile

    from simtdocs import i18n

    names = set(zipfile.ZipFile(simtdocs_wheel_file).namelist())
    assert {f"simtdocs/locale/zh/LC_MESSAGES/{d}.mo" for d in i18n.DOMAINS} <= names
    proc = subprocess.run([str(reader_python), "-c", "import simtdocs; print(simtdocs.LABELS['sectors'])"],
                          cwd=reader_python.parents[2], capture_output=True, text=True, timeout=120,
                          env={**reader_env(), "SIMTDOCS_LANG": "zh"})
    assert proc.stdout == "sector 数\n", proc.stderr
