"""The C on the pages is the code that runs (issue 40): every ```cuda fence of the site is an
include of a ``.cu`` file under ``snippets/``, the same fences in both languages; a fence of
host code (a ``<<<…>>>`` launch) is titled as code the page does not run; every ``__global__``
function of those files compiles with the C front end, and each is launched by a page block."""

from __future__ import annotations

import re

import pytest

from simtdocs.cuda import RawModule
from simtdocs.snippets import INCLUDE, SECTION_MARK, TARGET, expand_snippets, repo_root
from simtdocs_site.fences import find_fences

ROOT = repo_root()
PAGES = sorted((ROOT / "docs").rglob("*.md"))
CU_FILES = sorted((ROOT / "snippets").rglob("*.cu"))
HOST_TITLES = {"en": "Host code: shown, not run on this page", "zh": "主机端代码：只供阅读，本页不运行"}


def c_fences(page):
    lines = page.read_text(encoding="utf-8").split("\n")
    return [f for f in find_fences(lines) if f.info.split()[:1] == ["cuda"]]


def test_every_c_fence_includes_a_cu_file_and_host_code_says_so():
    found = 0
    for page in PAGES:
        lang = "en" if page.name.endswith(".en.md") else "zh"
        for f in c_fences(page):
            where = f"{page.relative_to(ROOT)}:{f.start + 1}"
            lines = [ln for ln in f.code.split("\n") if ln.strip()]
            assert lines and all(INCLUDE.match(ln) for ln in lines), f"{where}: C typed into the page"
            for ln in lines:
                target = TARGET.match(INCLUDE.match(ln)["target"])["path"]
                assert target.startswith("snippets/") and target.endswith(".cu"), where
            shown = expand_snippets(f.code)
            host = "<<<" in shown or "__global__" not in shown
            title = re.search(r'title="([^"]*)"', f.info)
            assert bool(title) == host, f"{where}: {'host code needs' if host else 'a kernel has'} a title"
            if host:
                assert title[1] == HOST_TITLES[lang], where
            found += 1
    assert found >= 20  # the lectures' C, in both languages


def test_both_languages_show_the_same_c():
    for page in PAGES:
        if page.name.endswith(".en.md"):
            continue
        twin = page.with_name(page.name[:-3] + ".en.md")
        if twin.is_file():
            assert [f.code for f in c_fences(page)] == [f.code for f in c_fences(twin)], page.name


@pytest.mark.parametrize("cu", CU_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_kernel_of_a_cu_file_compiles_and_a_page_block_launches_it(cu):
    rel = cu.relative_to(ROOT).as_posix()
    text = cu.read_text(encoding="utf-8")
    assert not any(SECTION_MARK.match(ln) and "//" not in ln for ln in text.split("\n"))
    module = RawModule(path=rel)
    kernels = re.findall(r"__global__\s+void\s+(\w+)", text)
    assert kernels, rel
    for name in kernels:
        module.get_function(name)  # a construct outside the subset is a CompileError here
    scripts = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "snippets").rglob("*.py"))
    assert f'RawModule(path="{rel}")' in scripts, f"no companion script compiles {rel}"
    for name in kernels:
        assert f'"{name}"' in scripts, f"{rel}: no companion script launches {name}"


@pytest.mark.parametrize("script", ["snippets/p2/01_cuda_programming_model.py", "snippets/exec_model/04_silu_and_mul.py"])
def test_a_notebook_compiles_its_c_from_a_string_as_a_cupy_user_would(script):
    """The downloaded notebook holds the C it compiles (``NAME_CU = r\"\"\"…\"\"\"``, then
    ``RawModule(code=NAME_CU)``), so it runs away from the repository; on a Chinese notebook
    the C's comments are Chinese, the C itself unchanged."""
    from simtdocs_site.comments import c_strings
    from simtdocs_site.notebooks import build_notebook

    cells = {lang: "\n".join(c["source"] for c in build_notebook(ROOT / script, lang, "test").cells
                             if c["cell_type"] == "code") for lang in ("en", "zh")}
    for lang, code in cells.items():
        assert 'RawModule(path="snippets/' not in code and "RawModule(code=" in code, lang
    (name, en), = c_strings(cells["en"])
    (_, zh), = c_strings(cells["zh"])
    path = next(p for p in CU_FILES if p.stem.upper() + "_CU" == name)
    shown = "\n".join(ln for ln in path.read_text(encoding="utf-8").split("\n") if not SECTION_MARK.match(ln))
    assert en.strip() == shown.strip()
    strip = lambda c: [k for k in (ln.split("//")[0].rstrip() for ln in c.split("\n")) if k]  # noqa: E731
    assert strip(zh) == strip(en) and zh != en  # the same C, its comments in Chinese
    module = RawModule(code=zh)
    for kernel in re.findall(r"__global__\s+void\s+(\w+)", zh):
        module.get_function(kernel)
