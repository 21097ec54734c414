"""Accessibility of every page (WCAG 2.1 AA), in the light and the dark scheme.

axe-core runs in each page the browser tests open (``conftest.Visitor``: every rule in the
light scheme; after the palette toggle switched to dark, the colour rules on the page and
every rule on its redrawn diagrams, ``axe_check.RUN_JS``), so this adds no page load. The
colour rules read code blocks once per language and scheme instead of on every page: one
block of each kind with every token class the site uses, shown beside a real block of that
kind (``axe_check.code_palette``). Any serious or critical violation fails.

The language markup is checked on the built HTML with Python's own HTML parser,
independently of the hook that adds it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from axe_check import code_palette, describe, run_axe, serious


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violation(page_visit, scheme):
    v = page_visit
    result = v.axe.get(scheme)
    if result is None:
        pytest.fail(f"{v.page.id}: axe-core did not run in the {scheme} scheme "
                    f"(the visit stopped before: {v.problems})", pytrace=False)
    _fail_on(result, f"{v.page.id} ({scheme})")


def _fail_on(result: dict, where: str) -> None:
    """Fail on axe-core's error or its serious and critical violations, naming ``where``."""
    if "error" in result:
        pytest.fail(f"{where}: {result['error']}", pytrace=False)
    bad = serious(result)
    if bad:
        lines = "\n  ".join(describe(bad))
        pytest.fail(f"{where}: axe-core {result['version']} finds {sum(len(b['nodes']) for b in bad)} "
                    f"serious/critical problems:\n  {lines}", pytrace=False)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_code_colours_have_contrast_in_both_schemes(lang, site_pages, context, base_url):
    palette = code_palette([p.file for p in site_pages if p.lang == lang])
    assert {"language-python highlight", "language-cuda highlight", "highlight-ipynb hl-python"} <= set(palette)
    by_page: dict = {}
    for kind, (file, html) in palette.items():
        by_page.setdefault(file, []).append((kind, html))
    for file, blocks in by_page.items():
        page = next(p for p in site_pages if p.file == file)
        tab = context.new_page()
        try:
            tab.goto(base_url + page.path, wait_until="load")
            for kind, html in blocks:  # beside the page's first block of its kind: the same ancestors
                placed = tab.evaluate("""([selector, html]) => {
                  const real = document.querySelector(selector + ':not([data-palette])');
                  if (real) real.insertAdjacentHTML('afterend', html);
                  return !!real; }""", ["div." + kind.replace(" ", "."), html])
                assert placed, f"{page.id}: no block of kind {kind!r}"
            _fail_on(run_axe(tab, code=True), f"{page.id} (light): code colours")
            before = tab.evaluate("document.body.getAttribute('data-md-color-scheme')")
            tab.locator("form[data-md-component=palette] label:visible").first.click()
            tab.wait_for_function("b => document.body.getAttribute('data-md-color-scheme') !== b", arg=before,
                                  timeout=5000)
            _fail_on(run_axe(tab, code=True), f"{page.id} (dark): code colours")
        finally:
            tab.evaluate("localStorage.clear()")
            tab.close()


PROBE = """<!doctype html><html lang="en"><head><title>axe probe</title></head><body><main>
<h1>Probe</h1>
<p id="faint" style="color:#ccc;background:#fff">Faint prose outside any code block.</p>
<div class="highlight"><pre><code><span id="faint-token" style="color:#ddd;background:#fff">faint_token = 1</span>
<img id="no-alt" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></code></pre></div>
<div class="highlight" data-palette><pre><code><span id="faint-palette" style="color:#ddd;background:#fff">x = 2</span></code></pre></div>
</main></body></html>"""


def test_the_axe_check_reads_colours_outside_code_and_every_other_rule_inside(context):
    """What ``axe_check.RUN_JS`` leaves to the palette and what it still reads: on a page with
    faint text outside code, faint tokens in code blocks and an image without alt text inside
    one, the page's runs (light, and dark after a scheme change) report the faint prose and
    the image and no token; the palette's run reports the palette block's token."""
    tab = context.new_page()
    try:
        tab.set_content(PROBE)
        found = {mode: {(v["id"], n["target"]) for v in run_axe(tab, **kw)["violations"] for n in v["nodes"]}
                 for mode, kw in (("light", {}), ("dark", {"recoloured": True}), ("code", {"code": True}))}
    finally:
        tab.close()
    assert found["light"] == {("color-contrast", "#faint"), ("image-alt", "#no-alt")}
    assert found["dark"] == {("color-contrast", "#faint")}
    assert found["code"] == {("color-contrast", "#faint-palette")}


# -- language of parts (WCAG 3.1.2) -------------------------------------------------

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LATIN_WORD = re.compile(r"(?<![A-Za-z])[A-Za-z]{2,}(?![A-Za-z])")
NOT_PROSE = {"script", "style", "pre", "code", "kbd", "samp", "svg", "math", "textarea",
             "template", "mjx-container", "title", "head", "option", "select"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Text(HTMLParser):
    """Text of the ``<body>`` outside code and math, each piece with its nearest ``lang``."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, str | None, bool]] = []  # (tag, lang, skipped)
        self.pieces: list[tuple[str, str | None]] = []
        self.page_lang: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.page_lang = a.get("lang")
        if tag in VOID:
            return
        classes = set((a.get("class") or "").split())
        parent_lang = self.stack[-1][1] if self.stack else self.page_lang
        parent_skip = self.stack[-1][2] if self.stack else False
        skip = parent_skip or tag in NOT_PROSE or bool(classes & {"arithmatex", "highlight", "highlight-ipynb", "md-search"})
        self.stack.append((tag, a.get("lang", parent_lang), skip))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        if self.stack and not self.stack[-1][2] and data.strip():
            self.pieces.append((data, self.stack[-1][1]))


def unmarked(page) -> list[str]:
    """Words of the other language whose nearest ``lang`` is still the page's own."""
    parser = _Text()
    parser.feed(page.file.read_text(encoding="utf-8"))
    words = []
    for text, lang in parser.pieces:
        lang = (lang or "")[:2]
        if lang == "zh":
            words += LATIN_WORD.findall(text)
        elif lang == "en":
            words += HAN.findall(text)
    return words


def test_every_page_declares_its_language(site_pages):
    wrong = []
    for page in site_pages:
        m = re.search(r'<html\b[^>]*\blang="([^"]+)"', page.file.read_text(encoding="utf-8"))
        if not m or not m.group(1).startswith(page.lang):
            wrong.append(f"{page.id}: <html lang={m.group(1) if m else None!r}>")
    assert not wrong, "\n".join(wrong)


def test_words_of_the_other_language_carry_lang(site_pages):
    """English terms in Chinese prose and Chinese in English prose are marked, so a
    screen reader reads them with the right voice."""
    bad = []
    for page in site_pages:
        words = unmarked(page)
        if words:
            bad.append(f"{page.id}: {len(words)} words without lang, e.g. {sorted(set(words))[:8]}")
    assert not bad, "\n".join(bad)
