"""The reader's pass (issue 27): every page and notebook, in both languages and both colour
schemes, on a 1280 px desktop and a 390 px phone, read for what a reader would stumble on.

One shared Chromium; one page load per (page, language, width), at 1280 px the page's one
visit that axe-core also reads (``conftest.Visitor``); the colour scheme switched in the same
page (Material's palette toggle clicked, at 390 px with ``prefers-color-scheme`` emulated too:
the page keeps the toggle's scheme otherwise, and the checks verify which scheme they ran in);
every check of a scheme in one ``page.evaluate``
(``reader_checks.js``: all of them in the light scheme, in the dark one those a scheme could
change); each figure file drawn and read once (``drawing_checks.js``). The checks, one test each:

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
from reader_pass import SCHEMES, run_reader_checks
from site_build import make_one_of, once_per_run

WIDTHS = (1280, 390)
DESKTOP = 1280  # the width of conftest.Visitor's visit, which runs the checks there
DRAWING_JS = Path(__file__).with_name("drawing_checks.js").read_text(encoding="utf-8")

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
    """The phone's browser context (with touch), shared by every page."""
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                              locale="zh-CN", reduced_motion="reduce")
    ctx.set_default_timeout(20_000)
    yield {390: ctx}
    ctx.close()


class ReaderVisits:
    """What the checks found on each (page, width), per scheme. At 1280 px they ran in the
    page's one visit (``conftest.Visitor``); at 390 px each page is loaded once per run,
    whichever xdist worker loads it (shared on disk, ``once_per_run``)."""

    def __init__(self, config, contexts, base_url, pages, visit):
        self.config, self.contexts, self.base_url, self.pages, self.visit = config, contexts, base_url, pages, visit
        self.cache = {}

    def __call__(self, page, width: int) -> dict:
        if width == DESKTOP:
            v = self.visit(page)
            if set(v.reader) != {"light", "dark"}:
                pytest.fail(f"{page.id}: the reader's checks did not run in both schemes "
                            f"(the visit stopped before: {v.problems})", pytrace=False)
            return v.reader
        key = (page.id, width)
        if key not in self.cache:
            self.cache[key] = once_per_run(self.config, f"reader {page.id} {width}", self._job(page, width),
                                           meanwhile=lambda: make_one_of(self.config, self._next_jobs(page, width)))
        return self.cache[key]

    def _job(self, page, width):
        return lambda _: self._visit(page, width)

    def _next_jobs(self, page, width):
        """While another worker loads (page, width): the next pages, which this worker's next
        tests will want."""
        i = self.pages.index(page)
        for p in self.pages[i + 1:] + self.pages[:i]:
            yield f"reader {p.id} {width}", self._job(p, width)

    def _visit(self, page, width):
        tab = self.contexts[width].new_page()
        try:
            tab.goto(self.base_url + page.path, wait_until="load")
            tab.evaluate(SETTLE_JS)
            found = {}
            for scheme, material in SCHEMES:
                tab.emulate_media(color_scheme=scheme)
                if tab.evaluate("document.body.getAttribute('data-md-color-scheme')") != material:
                    # Material keeps the scheme of its palette toggle: switch it the reader's way
                    tab.locator("form[data-md-component=palette] label:visible").first.click()
                    tab.wait_for_function(f"document.body.getAttribute('data-md-color-scheme') === '{material}'",
                                          timeout=5000)
                found[scheme] = run_reader_checks(tab, page.lang, scheme)
            return found
        finally:
            try:
                tab.evaluate("localStorage.clear()")  # the toggle's choice is kept: the next page opens light
            finally:
                tab.close()

    def findings(self, page, width: int, kind: str) -> list[str]:
        got = self(page, width)
        light = got["light"][kind]
        dark = [f"(dark) {f}" for f in got["dark"].get(kind, []) if f not in light]
        return light + dark

    def drawings(self, pages) -> dict[str, list[str]]:
        """What drawing_checks.js finds in each figure file of the site, each file read once."""
        if not hasattr(self, "_drawings"):
            self._drawings = once_per_run(self.config, "reader-drawings", lambda _: self._draw(pages))
        return self._drawings

    def _draw(self, pages) -> dict[str, list[str]]:
        figures = {}
        for p in pages:
            for f in self(p, 1280)["light"]["figures"]:
                figures.setdefault(f["src"], f)
        tab = self.visit.context.new_page()  # the desktop context
        try:
            tab.goto(self.base_url + "/", wait_until="load")
            return tab.evaluate(DRAWING_JS, list(figures.values()))
        finally:
            tab.close()


@pytest.fixture(scope="session")
def reader(request, reader_contexts, base_url, site_pages, visit) -> ReaderVisits:
    return ReaderVisits(request.config, reader_contexts, base_url, site_pages, visit)


def _check(site_page, reader, width, kind, what):
    found = reader.findings(site_page, width, kind)
    if found:
        pytest.fail(f"{site_page.id} at {width} px: {what}:{listing(found)}", pytrace=False)


def test_every_paragraph_in_the_page_language(site_page, reader):
    _check(site_page, reader, 1280, "language", "text in the other language")


@pytest.mark.parametrize("width", WIDTHS)
def test_nothing_is_clipped(site_page, reader, width):
    _check(site_page, reader, width, "clipped", "content cut off or covered")


@pytest.mark.parametrize("width", WIDTHS)
def test_c_code_has_a_copy_button_and_stays_on_the_page(site_page, reader, width):
    """Every ```cuda fence the page was built with is there, with Material's copy button, the
    title of a host-code fence shown, and its block inside the screen (long lines scroll in it)."""
    html = site_page.file.read_text(encoding="utf-8")
    built = html.count('class="language-cuda highlight"')
    titled = len(re.findall(r'class="language-cuda highlight"><span class="filename">', html))
    got = reader(site_page, width)["light"]["c_code"]
    found = [f"{len(got)} C blocks in the browser, {built} in the built page"] if len(got) != built else []
    found += [f"no copy button on the C block {b['text']!r}" for b in got if not b["copy"]]
    found += [f"the C block {b['text']!r} spans {b['left']}..{b['right']} px of a {width} px screen"
              for b in got if b["left"] < 0 or b["right"] > width]
    if sum(1 for b in got if b["title"]) != titled:
        found.append(f"{titled} host-code titles built, {sum(1 for b in got if b['title'])} shown")
    if found:
        pytest.fail(f"{site_page.id} at {width} px:{listing(found)}", pytrace=False)


def test_figures_can_be_read_on_a_phone(site_page, reader):
    _check(site_page, reader, 390, "phone", "figures too small to read")


def test_figures_are_sound_drawings(site_page, site_pages, reader):
    drawn = reader.drawings(site_pages)
    found = [f for fig in reader(site_page, 1280)["light"]["figures"] for f in drawn.get(fig["src"], [])]
    if found:
        pytest.fail(f"{site_page.id}: figures drawn wrong:{listing(found)}", pytrace=False)


def test_captions_are_unique(site_page, reader):
    _check(site_page, reader, 1280, "captions", "captions repeated")


@pytest.mark.parametrize("width", WIDTHS)
def test_cjk_typography(site_page, reader, width):
    _check(site_page, reader, width, "typography", "typography")


def test_one_numbering_rule(site_page, reader):
    found = reader.findings(site_page, 1280, "numbering") + reader.findings(site_page, 1280, "headings")
    if found:
        pytest.fail(f"{site_page.id}: numbering:{listing(found)}", pytrace=False)


def test_page_titles_are_unique(site_pages, reader):
    """A notebook is not titled like its lecture page; no two pages of a language share a title."""
    seen, dup = {}, []
    for p in site_pages:
        title = reader(p, 1280)["light"]["title"]
        key = (p.lang, title)
        if key in seen:
            dup.append(f"{p.id} and {seen[key]}: {title!r}")
        seen.setdefault(key, p.id)
    if dup:
        pytest.fail("pages with the same title:" + listing(dup), pytrace=False)


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
    """On the phone, a tap on a figure opens it in the lightbox, and spreading two fingers there
    enlarges it past its full size, where its smallest text is 9 px or more (the figure of P2
    §5.1, in both languages). The touches are Chromium's own (CDP), as a phone sends them."""
    for prefix in ("", "/en"):
        tab = reader_contexts[390].new_page()
        try:
            tab.goto(f"{base_url}{prefix}/p2/memory/", wait_until="load")
            tab.evaluate(SETTLE_JS)
            link = tab.locator("article figure a.glightbox").first
            assert link.count(), f"{prefix or '/'}p2/memory/: no figure opens in a lightbox"
            link.scroll_into_view_if_needed()
            link.tap()
            img = tab.locator(".glightbox-container .gslide-image img").first
            img.wait_for(state="visible")
            tab.wait_for_timeout(500)  # the opening transition
            natural = img.evaluate("i => i.naturalWidth")
            box = img.bounding_box()
            assert box["width"] <= 390 < natural, (box, natural)  # opened at the screen's width
            cdp = tab.context.new_cdp_session(tab)
            cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

            def touch(kind, spread):
                points = [] if spread is None else [{"x": cx - spread, "y": cy, "id": 0},
                                                    {"x": cx + spread, "y": cy, "id": 1}]
                cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

            touch("touchStart", 20)
            for k in range(1, 11):
                touch("touchMove", 20 + 8 * k)
                tab.wait_for_timeout(16)
            touch("touchEnd", None)
            tab.wait_for_timeout(200)
            shown = img.bounding_box()["width"]
            svg = tab.evaluate("async s => await (await fetch(s)).text()", img.get_attribute("src"))
            sizes = [float(v) * 100 for v in re.findall(r"scale\(([\d.]+) -\1\)", svg)]
            view = float(re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+)', svg).group(1))
            assert shown >= natural, f"pinched to {shown:.0f} px, its full size is {natural} px"
            assert min(sizes) * shown / view >= 9, f"the smallest text is {min(sizes) * shown / view:.1f} px"
        finally:
            tab.close()
