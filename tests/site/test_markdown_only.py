"""A lecture page built through Python-Markdown alone, no MkDocs: the executor is enough.

The page runs through :class:`simtdocs_site.markdown_extension.ExecuteExtension` with the
Markdown extensions of ``mkdocs.yml`` and a block cache of its own (so its blocks really run,
in worker processes), then is compared with the same page of the built site: the same tables,
cell for cell, the same glued numbers, the same figures (a figure file of the site is named by
the hash of the SVG the block drew).
"""

from __future__ import annotations

import base64
import hashlib
import html as htmlmod
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = "docs/p2/memory.en.md"
SITE_PAGE = "en/p2/memory/index.html"
# What quotes look like on the site (its typography step makes them curly) and in plain Markdown.
QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})


def python_markdown_only(cache: Path) -> str:
    """The page as HTML, built in a fresh interpreter that must not import MkDocs."""
    code = f"""
import sys, markdown
from pymdownx.superfences import fence_code_format
from simtdocs_site.markdown_extension import ExecuteExtension

root = {str(ROOT)!r}
text = open(root + "/" + {PAGE!r}, encoding="utf-8").read()
md = markdown.Markdown(extensions=[
    ExecuteExtension(page={PAGE!r}, lang="en", root=root, cache_dir={str(cache)!r}, workers=2),
    "abbr", "admonition", "attr_list", "md_in_html", "tables", "footnotes", "toc",
    "pymdownx.details", "pymdownx.arithmatex", "pymdownx.highlight", "pymdownx.inlinehilite",
    "pymdownx.superfences", "pymdownx.tabbed", "pymdownx.snippets"],
    extension_configs={{
        "pymdownx.arithmatex": {{"generic": True}},
        "pymdownx.superfences": {{"custom_fences": [
            {{"name": "mermaid", "class": "mermaid", "format": fence_code_format}}]}},
        "pymdownx.tabbed": {{"alternate_style": True}},
        "pymdownx.snippets": {{"base_path": [root], "check_paths": True,
                               "auto_append": ["includes/abbreviations.md", "includes/references.md"]}},
    }})
html = md.convert(text)
assert not [m for m in sys.modules if m == "mkdocs" or m.startswith("mkdocs.")], "MkDocs was imported"
sys.stdout.write(html)
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


def text_of(fragment: str) -> str:
    fragment = re.sub(r"<caption>.*?</caption>", "", fragment, flags=re.S)  # the site's numbering adds these
    return " ".join(htmlmod.unescape(re.sub(r"<[^>]+>", "", fragment)).translate(QUOTES).split())


def tables(html: str) -> list[list[list[str]]]:
    return [[[text_of(c) for c in re.findall(r"<t[hd]\b[^>]*>(.*?)</t[hd]>", row, re.S)]
             for row in re.findall(r"<tr\b[^>]*>(.*?)</tr>", t, re.S)]
            for t in re.findall(r"<table\b[^>]*>.*?</table>", html, re.S)]


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> tuple[str, Path]:
    """The page's HTML, and the block cache its build filled."""
    cache = tmp_path_factory.mktemp("blocks")
    return python_markdown_only(cache), cache


def test_python_markdown_alone_builds_the_page_with_the_sites_tables_and_numbers(plain, site):
    plain, cache = plain
    built = (site / SITE_PAGE).read_text(encoding="utf-8")
    article = built.split("<article", 1)[1].split("</article>", 1)[0]
    assert "{{" not in plain, "glue left unfilled"
    mine, theirs = tables(plain), tables(article)
    assert len(mine) >= 3 and mine == theirs

    # Every glued value is the same text in both (execute_page gives the glue by name).
    from simtdocs_site.executor import execute_page

    result = execute_page((ROOT / PAGE).read_text(encoding="utf-8"), PAGE, ("en",), root=ROOT, workers=0,
                          cache_dir=cache)  # what the build above ran: nothing runs again
    assert len(result.glue) >= 10
    plain_text, site_text = text_of(plain), text_of(article)
    for name, texts in result.glue.items():
        value = texts["en"].translate(QUOTES)
        if re.search(r"[\\{}$]", value):
            continue  # shown inside a formula, typeset differently by the site
        assert value in plain_text and value in site_text, (name, value)

    # The same figures: the site names each figure file by a hash of the SVG the block drew.
    figures = re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', plain)
    assert figures
    from simtdocs_site.figure_files import TRIM_VERSION

    for data in figures:
        name = hashlib.sha256((TRIM_VERSION + data).encode()).hexdigest()[:16]
        assert f"assets/figures/{name}.svg" in built, base64.b64decode(data)[:100]

