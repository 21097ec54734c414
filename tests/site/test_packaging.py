"""The two distributions of the repository, built as wheels and opened.

``simtdocs`` (the root pyproject.toml) is what a reader installs to run a notebook: the
simulator and the display API, its compiled catalogs, and no build code. ``simtdocs-site``
(src/simtdocs_site/pyproject.toml) is the site build and registers the MkDocs plugin.
Each is built by ``pip wheel`` from a copy of its sources in a temporary folder (a stale
``build/lib`` of an earlier build cannot slip into the wheel); the simtdocs wheel once for the
run, shared with the reader's venv of ``test_scripts``.
"""

from __future__ import annotations

import ast
import shutil
import zipfile
from pathlib import Path

import pytest
from site_build import IGNORE, build_wheel

ROOT = Path(__file__).resolve().parents[2]
BUILD_TOOLS = ("mkdocs", "pymdownx", "playwright", "material", "markdown", "simtdocs_site")


def wheel(project: Path, tmp: Path) -> zipfile.ZipFile:
    return zipfile.ZipFile(build_wheel(project, tmp / "dist"))


def imported_modules(source: str) -> set[str]:
    """Every module a Python file imports, at any depth (inside functions too), by ``ast``."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


@pytest.fixture(scope="module")
def simtdocs_wheel(simtdocs_wheel_file) -> zipfile.ZipFile:
    return zipfile.ZipFile(simtdocs_wheel_file)


def test_the_simtdocs_wheel_has_no_build_code(simtdocs_wheel):
    modules = [n for n in simtdocs_wheel.namelist() if n.endswith(".py")]
    assert "simtdocs/model.py" in modules and "simtdocs/display/__init__.py" in modules
    assert not [n for n in simtdocs_wheel.namelist() if n.startswith(("simtdocs_site", "simtdocs/docs/"))]
    bad = {}
    for name in modules:
        uses = {m for m in imported_modules(simtdocs_wheel.read(name).decode("utf-8"))
                if m.split(".")[0] in BUILD_TOOLS}
        if uses:
            bad[name] = sorted(uses)
    assert not bad, f"modules of the simtdocs wheel import build tools: {bad}"


def test_the_simtdocs_wheel_carries_the_compiled_catalogs(simtdocs_wheel):
    names = set(simtdocs_wheel.namelist())
    catalogs = sorted((ROOT / "src").glob("simtdocs/locale/*/LC_MESSAGES/*.po"))
    assert len(catalogs) >= 6
    for po in catalogs:
        mo = po.with_suffix(".mo").relative_to(ROOT / "src").as_posix()
        assert mo in names, f"{mo} is missing from the wheel"


def test_the_site_wheel_registers_the_plugin(tmp_path):
    project = tmp_path / "simtdocs_site"
    shutil.copytree(ROOT / "src" / "simtdocs_site", project, ignore=IGNORE)
    whl = wheel(project, tmp_path)
    names = set(whl.namelist())
    assert {"simtdocs_site/plugin.py", "simtdocs_site/executor.py", "simtdocs_site/tex2svg.js"} <= names
    assert not [n for n in names if n.startswith("simtdocs/")]
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "[mkdocs.plugins]\nsimtdocs = simtdocs_site.plugin:SimtdocsPlugin" in whl.read(entry_points).decode()


def test_no_module_name_is_used_by_both_packages():
    def names(package: str) -> set[str]:
        return {p.stem for p in (ROOT / "src" / package).rglob("*.py") if p.stem != "__init__"}

    assert not names("simtdocs") & names("simtdocs_site")
    assert not (ROOT / "src" / "simtdocs" / "docs").exists()


def test_every_module_of_the_site_package_is_short():
    long = {p.name: n for p in (ROOT / "src" / "simtdocs_site").glob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 300}
    assert not long, long


def test_mkdocs_yml_runs_the_plugin_not_hooks():
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "\nhooks:" not in text and "\n  - simtdocs:" in text
