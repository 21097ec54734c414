"""Every input the prose states is glued: no page types a number its code uses, and changing a
glued parameter in a companion script changes every mention of it, in both languages."""

import os
import re
import shutil
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest

from simtdocs_site.numbers import check, check_page
from simtdocs.snippets import repo_root

ROOT = repo_root()


def test_no_page_types_a_number_its_code_uses():
    assert [str(f) for f in check()] == []


def test_the_check_finds_a_typed_input_and_passes_glued_labels_and_constants():
    page = textwrap.dedent("""\
        # A page { #a-page }

        ```python
        n = 1000
        threads = 256
        glue("n", n)
        ```

        Take $n = 1000$ with {{ n }} elements and 256 threads, 32 lanes to a warp,
        as §256 and exercise 1000 say; `a[1000]` is past the end.
        """)
    found = [(f.line, f.number) for f in check_page(page, "a.md")]
    assert found == [(9, "1000"), (9, "256"), (10, "1000")]


# (companion script, its line, the changed line, [(built page, text before, text after), ...]);
# texts are the page's visible text (tags dropped). P2_MODEL is the page of P2's §3.
CHANGES = [
    ("snippets/home/01_first_launch.py", "n = 1000  # elements", "n = 700  # elements", [
        ("en/index.html", "covering 1,000 elements", "covering 700 elements"),
        ("index.html", "256 个线程，共 4 个线程块，覆盖 1,000 个元素", "256 个线程，共 3 个线程块，覆盖 700 个元素"),
        ("en/index.html", "256 threads per block, 4 blocks", "256 threads per block, 3 blocks"),
    ]),
    ("snippets/p2/01_cuda_programming_model.py", "M, N = 100, 70", "M, N = 100, 71", [
        ("en/P2_MODEL", "= 70, 16×16 blocks", "= 71, 16×16 blocks"),
        ("P2_MODEL", "= 70，块为 16×16", "= 71，块为 16×16"),
    ]),
    ("snippets/p2/01_cuda_programming_model.py", "n, threads = 1000, 256", "n, threads = 900, 256", [
        ("en/P2_MODEL", "= 1,000 with 256 threads per block", "= 900 with 256 threads per block"),
        ("en/P2_MODEL", "read a[1000] to a[1023]", "read a[900] to a[1023]"),
        ("P2_MODEL", "会去读 a[1000] 到 a[1023]", "会去读 a[900] 到 a[1023]"),
    ]),
    # the block size of a C launch: the warp its `if` splits moves (and its Chinese twin)
    ("snippets/p2/01_cuda_programming_model.py", "st = vector_add_c((cdiv(n, 256),), (256,),",
     "st = vector_add_c((cdiv(n, 128),), (128,),", [
        ("en/P2_MODEL", "of warp 7 in the last block", "of warp 3 in the last block"),
        ("P2_MODEL", "第 7 号 warp", "第 3 号 warp"),
    ]),
    ("snippets/exec_model/01_occupancy.py", "EX_THREADS, EX_REGS = 256, 64", "EX_THREADS, EX_REGS = 256, 72", [
        ("en/exec-model/index.html", "For a kernel with 64 registers per thread", "For a kernel with 72 registers per thread"),
        ("exec-model/index.html", "对每线程 64 个寄存器", "对每线程 72 个寄存器"),
    ]),
]


class _Text(HTMLParser):
    """The visible text of a page: tags dropped, entities decoded."""

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


def text_of_html(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return re.sub(r"\s+", " ", "".join(parser.parts))


def text_of(path: Path) -> str:
    return text_of_html(path.read_text("utf-8"))


def p2_model_page(site: Path) -> str:
    """The built page (zh) that holds P2's §3, wherever the chapter split put it."""
    for page in sorted(site.rglob("index.html")):
        rel = page.relative_to(site).as_posix()
        if not rel.startswith(("en/", "notebooks/")) and 'id="grids-2d"' in page.read_text("utf-8"):
            return rel
    raise AssertionError("no built page has the #grids-2d section")


# The pages that mention the changed parameters (each with its twin in the other language).
CHANGED_PAGES = ("docs/index.md", "docs/p2/programming-model.md", "docs/exec-model.md")


@pytest.fixture(scope="module")
def changed_site(tmp_path_factory):
    """The pages of CHANGED_PAGES in both languages, run and rendered as the strict build runs
    them (the same executor, glue and block cache), from a copy of the repository with CHANGES
    applied to its scripts: ``{built page path: visible text}``. The whole site's strict build
    is the ``site`` fixture's; this one needs only the pages that show the changed numbers."""
    import markdown

    from simtdocs_site.executor import check_pages, site_for

    root = tmp_path_factory.mktemp("changed")
    for part in ("docs", "snippets", "includes", "src"):
        shutil.copytree(ROOT / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    cache = root / ".cache" / "blocks"
    if (ROOT / ".cache" / "blocks").is_dir():  # unchanged blocks are cache hits: a faster run
        shutil.copytree(ROOT / ".cache" / "blocks", cache)
    for script, old, new, _ in CHANGES:
        path = root / script
        text = path.read_text("utf-8")
        assert text.count(old) == 1, f"{script} no longer has {old!r}: update CHANGES"
        path.write_text(text.replace(old, new), "utf-8")
    assert check_pages([str(root / p) for p in CHANGED_PAGES], root=root, cache_dir=cache) == []
    site = site_for(root, cache)
    texts = {}
    for page in CHANGED_PAGES:
        stem = page[len("docs/"):-len(".md")]
        built = "index.html" if stem == "index" else f"{stem.removesuffix('/index')}/index.html"
        for lang, name, prefix in (("zh", page, ""), ("en", page.replace(".md", ".en.md"), "en/")):
            html = markdown.markdown(site.render(name, lang), extensions=["tables", "attr_list", "md_in_html"])
            texts[prefix + built] = re.sub(r"\s+", " ", text_of_html(html))
    return texts


def test_changing_glued_parameters_changes_every_mention(site, changed_site):
    model = p2_model_page(site)
    for *_, expected in CHANGES:
        for page, before, after in expected:
            page = page.replace("P2_MODEL", model)
            old, new = text_of(site / page), changed_site[page]
            assert before in old, (page, before)
            assert after in new, (page, after)
            assert before not in new, (page, before)
