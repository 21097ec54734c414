"""The reader's pass (issue 27): every page and notebook, in both languages and both colour
schemes, on a 1280 px desktop and a 390 px phone, read for what a reader would stumble on.

One shared Chromium; one page load per (page, language, width); the colour scheme switched
in the same page by emulation; every check of a scheme in one ``page.evaluate``
(``reader_checks.js``). The checks, one test each:

- the language of every paragraph: no English sentence on a Chinese page outside code,
  formulas, titles, quotations and marked terms; no Chinese on an English page but a
  term's name in a ``lang`` span;
- nothing clipped: no content cut or spilling out of its box without a scroll container,
  no page that scrolls sideways, no copy button over the text of a code block;
- figures on a phone: the smallest text of every figure is 9 CSS px or more at 390 px,
  or a tap opens the figure at full size where it is (and the tap is tried);
- figures as drawings: every text of an SVG inside the canvas and inside the cell it is
  drawn on, a legend that promises numbers in the cells has them, captions unique;
- CJK typography: no synthetic italics or bold on Chinese, Chinese in formulas set as one
  run of text in the page's font, no underline in titles, no straight quotes in English prose;
- consistency: tables and figures numbered by section only on pages of numbered sections,
  subsections numbered where sections are, every page's title its own, one spelling.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

WIDTHS = (1280, 390)
SCHEMES = (("light", "default"), ("dark", "slate"))
CHECKS_JS = (Path(__file__).with_name("reader_checks.js")).read_text(encoding="utf-8")

SETTLE_JS = """async () => {
  document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; });
  const end = Date.now() + 10000;
  while ([...document.querySelectorAll('article img')].some(i => !i.complete) && Date.now() < end)
    await new Promise(r => setTimeout(r, 50));
  await document.fonts.ready;
}"""


def listing(items) -> str:
    return "\n  " + "\n  ".join(items) if items else ""


@pytest.fixture(scope="session")
def reader_contexts(browser):
    """One browser context per width (the phone one with touch), shared by every page."""
    made = {
        1280: browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN", reduced_motion="reduce"),
        390: browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                 locale="zh-CN", reduced_motion="reduce"),
    }
    for ctx in made.values():
        ctx.set_default_timeout(20_000)
    yield made
    for ctx in made.values():
        ctx.close()


class ReaderVisits:
    """Each (page, width) loaded once; what the checks found, per scheme."""

    def __init__(self, contexts, base_url):
        self.contexts, self.base_url, self.cache = contexts, base_url, {}

    def __call__(self, page, width: int) -> dict:
        key = (page.id, width)
        if key not in self.cache:
            self.cache[key] = self._visit(page, width)
        return self.cache[key]

    def _visit(self, page, width):
        tab = self.contexts[width].new_page()
        try:
            tab.goto(self.base_url + page.path, wait_until="load")
            tab.evaluate(SETTLE_JS)
            found = {}
            for scheme, material in SCHEMES:
                tab.emulate_media(color_scheme=scheme)
                tab.evaluate(f"document.body.setAttribute('data-md-color-scheme', '{material}')")
                found[scheme] = tab.evaluate(CHECKS_JS, {"lang": page.lang, "width": width,
                                                         "drawings": width == 1280 and scheme == "light"})
            return found
        finally:
            tab.close()

    def findings(self, page, width: int, kind: str) -> list[str]:
        got = self(page, width)
        light = got["light"][kind]
        dark = [f"(dark) {f}" for f in got["dark"][kind] if f not in light]
        return light + dark


@pytest.fixture(scope="session")
def reader(reader_contexts, base_url) -> ReaderVisits:
    return ReaderVisits(reader_contexts, base_url)


def _check(site_page, reader, width, kind, what):
    if isinstance(site_page, str):
        pytest.fail(site_page, pytrace=False)
    found = reader.findings(site_page, width, kind)
    if found:
        pytest.fail(f"{site_page.id} at {width} px: {what}:{listing(found)}", pytrace=False)


def test_every_paragraph_in_the_page_language(site_page, reader):
    _check(site_page, reader, 1280, "language", "text in the other language")


@pytest.mark.parametrize("width", WIDTHS)
def test_nothing_is_clipped(site_page, reader, width):
    _check(site_page, reader, width, "clipped", "content cut off or covered")


def test_figures_can_be_read_on_a_phone(site_page, reader):
    _check(site_page, reader, 390, "phone", "figures too small to read")


def test_figures_are_sound_drawings(site_page, reader):
    _check(site_page, reader, 1280, "drawing", "figures drawn wrong")


def test_captions_are_unique(site_page, reader):
    _check(site_page, reader, 1280, "captions", "captions repeated")


@pytest.mark.parametrize("width", WIDTHS)
def test_cjk_typography(site_page, reader, width):
    _check(site_page, reader, width, "typography", "typography")


def test_one_numbering_rule(site_page, reader):
    _check(site_page, reader, 1280, "numbering", "table or figure numbers")
    _check(site_page, reader, 1280, "headings", "subsection numbers")


def test_page_titles_are_unique(site_pages, reader):
    """A notebook is not titled like its lecture page; no two pages of a language share a title."""
    seen, dup = {}, []
    for p in site_pages:
        title = reader(p, 1280)["light"]["title"]
        key = (p.lang, title)
        if key in seen:
            dup.append(f"{p.id} and {seen[key]}: {title!r}")
        seen.setdefault(key, p.id)
    assert not dup, "pages with the same title:" + listing(dup)


def test_one_english_spelling(site_pages, reader):
    """-ise or -ize, but one of them: "synchronisation" and "synchronization" on one site is a slip."""
    words = {}
    for p in site_pages:
        if p.lang == "en":
            for w in reader(p, 1280)["light"]["words"]:
                words.setdefault(w, p.id)
    both = sorted(f"{w} ({words[w]}) and {w.replace('is', 'iz', 1)} ({words[w.replace('is', 'iz', 1)]})"
                  for w in words if "is" in w and w.replace("is", "iz", 1) in words and w.replace("is", "iz", 1) != w)
    assert not both, "two spellings of one word:" + listing(both)


def test_a_figure_opens_full_size_with_a_tap(site, reader_contexts, base_url):
    """On the phone, tapping a figure opens it in the lightbox, and tapping it there shows it at
    full size: its smallest text 9 px or more. The figure of P2 §5.2, in both languages."""
    for prefix in ("", "/en"):
        tab = reader_contexts[390].new_page()
        try:
            tab.goto(f"{base_url}{prefix}/p2/memory/", wait_until="load")
            tab.evaluate(SETTLE_JS)
            link = tab.locator("article figure a.glightbox").first
            assert link.count(), f"{prefix or '/'}p2/memory/: no figure opens in a lightbox"
            natural = link.evaluate("a => a.querySelector('img').naturalWidth")
            link.scroll_into_view_if_needed()
            link.tap()
            img = tab.locator(".glightbox-container .gslide-image img").first
            img.wait_for(state="visible")
            tab.wait_for_timeout(400)  # the opening animation
            img.tap()
            tab.wait_for_function("() => document.querySelector('.glightbox-container .gslide-image img')"
                                  ".getBoundingClientRect().width >= 0.98 * document.querySelector("
                                  "'.glightbox-container .gslide-image img').naturalWidth", timeout=5000)
            shown = img.evaluate("i => i.getBoundingClientRect().width")
            src = img.get_attribute("src")
            svg = tab.evaluate("async s => await (await fetch(s)).text()", src)
            sizes = [float(s) * 100 for s in re.findall(r"scale\(([\d.]+) -\1\)", svg)]
            vw = float(re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+)', svg).group(1))
            smallest = min(sizes) * shown / vw
            assert shown >= 0.98 * natural > 390, (shown, natural)
            assert smallest >= 9, f"full size, the smallest text is {smallest:.1f} px"
        finally:
            tab.close()
