"""The code a reader sees is the experiment, in the page's language (issue 16).

- In the built site, code outside folded blocks (``??? note``, i.e. ``<details>``) carries
  no bilingual ``T("…", "…")`` pair, and no code on an English page has a Chinese character.
- The visible python blocks of each page, copied alone and in order into a fresh ``python``,
  run. ``pytest --codeblocks docs/`` already runs every block, folded ones included, through
  the site's runner; this runs only what a reader sees without unfolding anything, in a plain
  subprocess (no Recorder, no glue), with the same chains (``cont``) and skip markers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from simtdocs_site.executor import page_chains
from simtdocs.snippets import expand_snippets

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

T_PAIR = re.compile(r"(?<![\w.])T\(")  # a call of the old bilingual pair T("中文", "English")
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


def _page_id(md: Path) -> str:
    return md.relative_to(DOCS).as_posix()


def _html_of(page: str) -> Path:
    """docs/p2/memory.en.md -> en/p2/memory/index.html (mkdocs-static-i18n's layout)."""
    en = page.endswith(".en.md")
    stem = Path(page[: -len(".en.md")] if en else page[: -len(".md")])
    rel = stem.parent / "index.html" if stem.name == "index" else stem / "index.html"
    return Path("en") / rel if en else rel


def _notebook_pages() -> list[str]:
    """notebooks/<lecture>/<script>, and its English page with ``.en``."""
    out = []
    for script in sorted((ROOT / "snippets").glob("*/[0-9]*.py")):
        out += [f"notebooks/{script.parent.name}/{script.stem}", f"notebooks/{script.parent.name}/{script.stem}.en"]
    return out


def _notebook_html(page: str) -> Path:
    en = page.endswith(".en")
    stem = page[: -len(".en")] if en else page
    return Path("en" if en else ".") / stem / "index.html"


SOURCE_PAGES = sorted(_page_id(p) for p in DOCS.rglob("*.md"))
BUILT_PAGES = [(p, _html_of(p)) for p in SOURCE_PAGES] + [(p, _notebook_html(p)) for p in _notebook_pages()]


class CodeBlocks(HTMLParser):
    """The text of every ``<pre>`` and inline ``<code>``, with whether a closed ``<details>`` holds it."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.folded: list[bool] = []  # one entry per open <details>: is it closed (folded)?
        self.pre = 0
        self.code = 0
        self.blocks: list[tuple[bool, str]] = []  # (folded, text) of each <pre>
        self.inline: list[str] = []  # text of each <code> outside <pre>

    def handle_starttag(self, tag, attrs):
        if tag == "details":
            self.folded.append("open" not in dict(attrs))
        elif tag == "pre":
            if self.pre == 0:
                self.blocks.append((any(self.folded), ""))
            self.pre += 1
        elif tag == "code":
            if self.pre == 0 and self.code == 0:
                self.inline.append("")
            self.code += 1

    def handle_endtag(self, tag):
        if tag == "details" and self.folded:
            self.folded.pop()
        elif tag == "pre" and self.pre:
            self.pre -= 1
        elif tag == "code" and self.code:
            self.code -= 1

    def handle_data(self, data):
        if self.pre:
            folded, text = self.blocks[-1]
            self.blocks[-1] = (folded, text + data)
        elif self.code:
            self.inline[-1] += data


def _code_of(html_file: Path) -> CodeBlocks:
    parser = CodeBlocks()
    parser.feed(html_file.read_text(encoding="utf-8"))
    return parser


def _excerpt(text: str, match: re.Match) -> str:
    return text[max(match.start() - 40, 0): match.end() + 60].replace("\n", "⏎")


def test_the_parser_tells_folded_from_visible_code():
    parser = CodeBlocks()
    parser.feed('<pre><code>T("甲", "a")</code></pre><details class="note"><summary>How</summary>'
                '<pre><code>x = T("乙", "b")</code></pre></details><details open><pre>shown</pre></details>'
                '<p>see <code>中文</code></p>')
    assert parser.blocks == [(False, 'T("甲", "a")'), (True, 'x = T("乙", "b")'), (False, "shown")]
    assert parser.inline == ["中文"]


@pytest.mark.parametrize("page", [p for p, _html in BUILT_PAGES])
def test_visible_code_has_no_bilingual_pairs_and_english_code_no_chinese(page, site):
    html_file = site / dict(BUILT_PAGES)[page]
    if not html_file.is_file():
        pytest.skip(f"{page} is not built (not in the nav)")
    code = _code_of(html_file)
    pairs = [f"{_excerpt(text, m)}" for folded, text in code.blocks if not folded for m in T_PAIR.finditer(text)]
    assert pairs == [], f"{page}: T(…, …) pairs in visible code"
    english = page.endswith((".en.md", ".en"))
    if english:
        chinese = [_excerpt(text, m) for _f, text in code.blocks for m in CJK.finditer(text)]
        chinese += [text for text in code.inline if CJK.search(text)]
        assert chinese == [], f"{page}: Chinese characters in code on the English page"


# -- the visible blocks alone run ---------------------------------------------------------

FOLD = re.compile(r"\?\?\?(?!\+)\s")  # a collapsed admonition (pymdownx.details); ???+ starts open


def is_folded(lines: list[str], fence) -> bool:
    """Is the fence inside a collapsed ``???`` admonition (at any depth)?"""
    indent = len(fence.indent)
    for line in reversed(lines[: fence.start]):
        if indent == 0:
            return False
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        if depth < indent:
            if FOLD.match(line.lstrip()):
                return True
            indent = depth
    return False


def visible_chains(page: str) -> list[tuple[int, str]]:
    """(page line, code) of each chain of visible python blocks that runs, ``--8<--`` expanded."""
    text = (DOCS / page).read_text(encoding="utf-8")
    lines = text.split("\n")
    out = []
    for chain in page_chains(text, f"docs/{page}"):
        if chain.syntax != "python" or not chain.run:
            continue
        shown = [f for f in chain.fences if not is_folded(lines, f)]
        if shown:
            out.append((shown[0].start + 1, "\n".join(expand_snippets(f.code, ROOT) for f in shown)))
    return out


def test_folded_blocks_are_found():
    lines = ["```python", "a = 1", "```", "", '??? note "How"', "    <!--pytest-codeblocks:cont-->",
             "    ```python", "    b = 2", "    ```", "", '???+ note "Open"', "    ```python", "    c = 3", "    ```",
             "", "!!! tip", '    ??? success "Answer"', "        ```python", "        d = 4", "        ```"]

    class F:  # what find_fences gives: the opening line and its indentation
        def __init__(self, start, indent):
            self.start, self.indent = start, indent

    assert [is_folded(lines, F(i, " " * n)) for i, n in [(0, 0), (6, 4), (11, 4), (17, 8)]] == [False, True, False, True]


_ran: dict[str, subprocess.CompletedProcess] = {}


def _run(code: str) -> subprocess.CompletedProcess:
    """``code`` saved as a script and run by a fresh python at the repository root (where a
    reader of the repository runs it; a script, since a ``@cuda.jit`` kernel is compiled
    from its source, which python keeps for a file and not for standard input)."""
    if code not in _ran:
        import tempfile

        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SIMTDOCS_LANG")}
        with tempfile.TemporaryDirectory() as folder:
            script = Path(folder) / "copied_from_the_page.py"
            script.write_text(code, encoding="utf-8")
            _ran[code] = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True,
                                        env={**env, "MPLBACKEND": "Agg"}, timeout=600)
    return _ran[code]


CODE_PAGES = [p for p in SOURCE_PAGES if "```python" in (DOCS / p).read_text(encoding="utf-8")]


@pytest.mark.parametrize("page", CODE_PAGES)
def test_visible_blocks_alone_run_in_a_fresh_python(page):
    failed = []
    for line, code in visible_chains(page):
        proc = _run(code)
        if proc.returncode != 0:
            failed.append(f"docs/{page}:{line}: {proc.stderr.strip().splitlines()[-1]}\n{proc.stderr[-1500:]}")
    assert failed == [], "\n\n".join(failed)
