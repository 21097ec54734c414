"""A reader with only a keyboard, on a lecture page of each language.

The page is the lecture with the most tables (found in the built site, not named here); the
walk to a table that scrolls sideways is on the lecture with the widest table (most columns),
in a phone-sized window: at desktop width the tables fit the column (issue 27).
Tab from the top reaches the skip link, the header's search box and the navigation;
the skip link jumps to the content; from there Tab reaches a glossary term (its tooltip
opens), a code block and a table that scrolls sideways (named, with a visible focus
ring, scrolled by the arrow keys); a search typed and chosen with the keyboard lands on
a page of the same language.
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest

pytestmark = pytest.mark.usefixtures("browser_ready")

MAX_TABS = 800  # far more tab stops than any page has before its first table

FOCUSED_JS = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  const cs = getComputedStyle(e);
  const abbr = e.tagName === 'ABBR';
  return {
    tag: e.tagName.toLowerCase(),
    cls: typeof e.className === 'string' ? e.className : '',
    role: e.getAttribute('role'),
    name: e.getAttribute('aria-label') || '',
    text: (e.textContent || '').trim().slice(0, 40),
    in_article: !!e.closest('article'),
    in_nav: !!e.closest('.md-sidebar--primary'),
    scrolls: e.scrollWidth > e.clientWidth + 1,
    outline: cs.outlineStyle === 'none' ? 0 : parseFloat(cs.outlineWidth),
    kind: abbr ? 'term'
        : (e.matches('pre > code') ? 'code'
        : (e.getAttribute('role') === 'region' && e.querySelector('table') ? 'table' : '')),
  };
}"""


def _lectures(site_pages, lang):
    lectures = [p for p in site_pages
                if p.lang == lang and not p.is_home and not p.is_notebook and "glossary" not in p.path]
    assert lectures, f"no {lang} lecture page in the built site"
    return lectures


def lecture_with_most_tables(site_pages, lang):
    return max(_lectures(site_pages, lang), key=lambda p: p.file.read_text(encoding="utf-8").count("<table"))


def lecture_with_widest_table(site_pages, lang):
    """The lecture whose widest table has the most columns (header cells of one row)."""
    def columns(p):
        rows = re.findall(r"<thead>\s*<tr>(.*?)</tr>", p.file.read_text(encoding="utf-8"), re.S)
        return max((r.count("<th") for r in rows), default=0)

    return max(_lectures(site_pages, lang), key=columns)


@pytest.fixture
def tab(context):
    t = context.new_page()
    yield t
    t.close()


def press_until(tab, want, limit):
    """Press Tab until ``want(focused)``; every element focused on the way, in order."""
    walk = []
    for _ in range(limit):
        tab.keyboard.press("Tab")
        f = tab.evaluate(FOCUSED_JS)
        walk.append(f)
        if f and want(f):
            return f, walk
    return None, walk


def walk_summary(walk) -> str:
    kinds = [f"{f['tag']}.{f['cls'].split(' ')[0]}" if f else "body" for f in walk[-8:]]
    return f"{len(walk)} tab presses, last: {kinds}"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_keyboard_reaches_skip_link_search_and_navigation(tab, base_url, site_pages, lang):
    page = lecture_with_most_tables(site_pages, lang)
    tab.goto(base_url + page.path, wait_until="load")

    tab.keyboard.press("Tab")
    first = tab.evaluate(FOCUSED_JS)
    assert first and "md-skip" in first["cls"], f"{page.id}: the first Tab focuses {first}, not the skip link"
    box = tab.locator("a.md-skip").bounding_box()
    assert box and box["height"] > 0 and box["y"] >= 0, f"{page.id}: the focused skip link is not visible: {box}"

    search, walk = press_until(tab, lambda f: "md-search__input" in f["cls"], 30)
    assert search, f"{page.id}: Tab never reached the search box ({walk_summary(walk)})"
    assert search["name"], f"{page.id}: the search box has no accessible name"
    nav, walk = press_until(tab, lambda f: f["in_nav"], 30)
    assert nav, f"{page.id}: Tab never reached the navigation ({walk_summary(walk)})"
    assert nav["outline"] > 0, f"{page.id}: a focused navigation link shows no focus ring: {nav}"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_keyboard_walk_through_a_lecture(tab, base_url, site_pages, lang):
    page = lecture_with_widest_table(site_pages, lang)
    tab.set_viewport_size({"width": 390, "height": 844})  # a phone: a wide table scrolls
    tab.goto(base_url + page.path, wait_until="load")
    tab.keyboard.press("Tab")
    first = tab.evaluate(FOCUSED_JS)
    assert first and "md-skip" in first["cls"], f"{page.id}: the first Tab focuses {first}, not the skip link"
    tab.keyboard.press("Enter")  # the skip link
    # Following a link is queued after the key event, not done within it: wait for it.
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        tab.wait_for_function("() => location.hash !== ''", timeout=5000, polling=50)
    except PlaywrightTimeout:
        pass  # failed below, with the page's address
    assert urlparse(tab.url).fragment, f"{page.id}: the skip link did not jump to the content ({tab.url})"

    seen: dict[str, dict] = {}
    walk = []
    for _ in range(MAX_TABS):
        tab.keyboard.press("Tab")
        f = tab.evaluate(FOCUSED_JS)
        walk.append(f)
        if len(walk) == 1:
            assert f and f["in_article"], f"{page.id}: after the skip link, Tab focuses {f}, not the content"
        if f and f["kind"] and f["kind"] not in seen:
            seen[f["kind"]] = f
            check_focused(tab, page, f)
        # Every kind reached, a table that scrolls among them: whichever came first on the
        # page (a lecture may open with its widest table before any glossary term).
        if {"term", "code", "table"} <= set(seen) and any(w and w["kind"] == "table" and w["scrolls"] for w in walk):
            break
    missing = {"term", "code", "table"} - set(seen)
    assert not missing, f"{page.id}: Tab never reached a {sorted(missing)} ({walk_summary(walk)})"
    table = next((f for f in walk if f and f["kind"] == "table" and f["scrolls"]), None)
    assert table, f"{page.id}: no table that scrolls sideways was reached ({walk_summary(walk)})"


def check_focused(tab, page, f):
    """What the reader must see and hear on a focused term, code block or table."""
    where = f"{page.id}: focused {f['kind']} {f['text']!r}"
    assert f["outline"] >= 1, f"{where} shows no focus ring (outline {f['outline']})"
    if f["kind"] in ("code", "table"):
        assert f["name"], f"{where} has no accessible name"
    if f["kind"] == "table":
        assert re.match(r"(表格|Table) \d+", f["name"]), f"{where} is named {f['name']!r}"
        if f["scrolls"]:
            before = tab.evaluate("document.activeElement.scrollLeft")
            tab.keyboard.press("ArrowRight")
            tab.wait_for_function("x => document.activeElement.scrollLeft > x", arg=before, timeout=3000)
    if f["kind"] == "term":
        # Material's tooltip opens on focus as on hover and describes the term.
        tab.wait_for_function(
            "() => { const id = document.activeElement.getAttribute('aria-describedby');"
            " const tip = id && document.getElementById(id);"
            " return tip && tip.textContent.trim().length > 0 && tip.getBoundingClientRect().height > 0; }",
            timeout=5000,
        )


@pytest.mark.parametrize("lang,term", [("zh", "线程束"), ("en", "occupancy")])
def test_search_by_keyboard_lands_in_the_same_language(tab, base_url, site_pages, lang, term):
    home = "/" if lang == "zh" else "/en/"
    tab.goto(base_url + home, wait_until="load")
    found, walk = press_until(tab, lambda f: "md-search__input" in f["cls"], 30)
    assert found, f"{lang}: Tab never reached the search box ({walk_summary(walk)})"
    for _ in range(4):  # the index may still be loading on a busy machine
        tab.keyboard.press("Control+A")
        tab.keyboard.type(term)
        tab.keyboard.press("End")  # a keyup, as an IME sends: Material searches on keyup
        try:
            tab.wait_for_selector(".md-search-result__item", timeout=10_000)
            break
        except Exception:
            continue
    tab.keyboard.press("ArrowDown")  # Material moves the focus to the first result
    focused = tab.evaluate("document.activeElement && document.activeElement.href")
    assert focused, f"{lang}: ArrowDown in the search box did not focus a result"
    with tab.expect_navigation(wait_until="domcontentloaded"):
        tab.keyboard.press("Enter")
    path = urlparse(tab.url).path
    assert path.startswith("/en/") == (lang == "en"), f"{lang}: the first result leads to {path}, another language"
    assert path in {p.path for p in site_pages}, f"{lang}: the first result leads to {path}, not a page"
