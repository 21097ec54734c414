"""Material's search box, typed into as a reader would, in both languages.

The right page for a term is a page of the reader's language whose article
actually contains the term. A lecture page (not the home page, not an executed
notebook) is required among the top results when one contains the term; until
the lectures exist, the home page is.
"""

from __future__ import annotations

import html as htmlmod
import re
from urllib.parse import urljoin, urlparse

import pytest

TERMS = [  # (language, term, ASCII test id)
    ("zh", "合并访存", "zh-coalesced-access"),
    ("zh", "线程束", "zh-warp"),
    ("zh", "占用率", "zh-occupancy"),
    ("en", "coalescing", "en-coalescing"),
    ("en", "warp", "en-warp"),
    ("en", "occupancy", "en-occupancy"),
]
PARAMS = [pytest.param((lang, term), id=tid) for lang, term, tid in TERMS]
TOP = 5  # result pages a reader sees without scrolling

RESULTS_JS = """() => ({
  meta: (document.querySelector('.md-search-result__meta') || {}).textContent || '',
  items: [...document.querySelectorAll('.md-search-result__list > .md-search-result__item')]
           .map(li => [...li.querySelectorAll('a')].map(a => a.href)),
})"""


def article_text(file) -> str:
    page = file.read_text(encoding="utf-8")
    m = re.search(r"<article\b[^>]*>(.*?)</article>", page, re.S)
    text = re.sub(r"<[^>]+>", " ", m.group(1) if m else "")
    return htmlmod.unescape(text)


def contains(text: str, term: str) -> bool:
    if term.isascii():
        return re.search(r"\b" + re.escape(term), text, re.I) is not None
    return term in text


_searches: dict[tuple[str, str], dict] = {}


def search(context, base_url, lang, term) -> dict:
    """Type ``term`` into the search box of the home page in ``lang``; the results in order."""
    if (lang, term) in _searches:
        return _searches[(lang, term)]
    tab = context.new_page()
    try:
        tab.goto(base_url + ("/" if lang == "zh" else "/en/"), wait_until="load")
        box = tab.locator("input.md-search__input")
        box.click()
        # On a loaded machine the search worker may still be indexing when the first
        # keystrokes arrive and the query is dropped ("Type to start searching"): type
        # the term again until results show, for up to about 40 s.
        for _ in range(4):
            box.fill("")
            box.type(term)
            # Chinese is typed as inserted text, without the keyup Material searches on
            # (an IME sends one): press End so the query is sent.
            box.press("End")
            try:
                tab.wait_for_selector(".md-search-result__item", timeout=10_000)
                tab.wait_for_timeout(300)  # let the list settle
                break
            except Exception:
                continue  # nothing yet: the test reports the meta line if it stays so
        found = tab.evaluate(RESULTS_JS)
    finally:
        tab.close()
    pages = []
    for links in found["items"]:
        if links:
            path = urlparse(links[0]).path
            if path not in pages:
                pages.append(path)
    found["pages"] = pages
    found["links"] = [urlparse(href).path for links in found["items"] for href in links]
    _searches[(lang, term)] = found
    return found


@pytest.fixture
def searched(request, context, base_url, site_pages):
    lang, term = request.param
    return lang, term, search(context, base_url, lang, term)


pytestmark = pytest.mark.usefixtures("browser_ready")


@pytest.mark.parametrize("searched", PARAMS, indirect=True)
def test_search_finds_a_page_that_contains_the_term(searched, site_pages):
    lang, term, found = searched
    own = [p for p in site_pages if p.lang == lang]
    having = [p for p in own if contains(article_text(p.file), term)]
    lectures = [p for p in having if not p.is_home and not p.is_notebook]
    expected = lectures or [p for p in having if p.is_home] or having
    top = found["pages"][:TOP]
    if not expected:
        pytest.fail(
            f"no {lang} page contains {term!r}, so search cannot find it "
            f"(the search box shows {found['meta'].strip()!r}; top results {top})",
            pytrace=False,
        )
    if not any(p.path in top for p in expected):
        pytest.fail(
            f"searching {term!r} on the {lang} site: the top results {top} "
            f"({found['meta'].strip()!r}) include none of the pages containing it: "
            f"{[p.path for p in expected]}",
            pytrace=False,
        )


@pytest.mark.parametrize("searched", PARAMS, indirect=True)
def test_search_results_link_to_pages_that_exist(searched, site_pages):
    lang, term, found = searched
    paths = {p.path for p in site_pages}
    dead = sorted({link for link in found["links"] if link not in paths})
    if dead:
        pytest.fail(f"searching {term!r} on the {lang} site lists links to no page: {dead} "
                    f"(top results {found['pages'][:TOP]})", pytrace=False)


# -- the reader's language (issue 15) ----------------------------------------------

# (site language, query, anchor of the term's glossary entry): each term in both languages.
DEFINED = [
    ("zh", "合并访存", "coalescing"), ("en", "coalescing", "coalescing"),
    ("zh", "线程束", "warp"), ("en", "warp", "warp"),
    ("zh", "占用率", "occupancy"), ("en", "occupancy", "occupancy"),
]
CROSS = [  # a query in the other language still finds this site's glossary entry
    ("en", "合并访存", "coalescing"), ("en", "线程束", "warp"), ("en", "占用率", "occupancy"),
    ("zh", "coalescing", "coalescing"), ("zh", "warp", "warp"), ("zh", "occupancy", "occupancy"),
]


def _target(href: str) -> str:
    u = urlparse(href)
    return u.path + ("#" + u.fragment if u.fragment else "")


def glossary_page(site_pages, lang):
    pages = [p for p in site_pages if p.lang == lang and p.path.rstrip("/").endswith("glossary")]
    assert pages, f"the {lang} site has no glossary page"
    return pages[0]


def explained_in(site_pages, lang, anchor) -> list[str]:
    """The lecture sections the glossary entry ``anchor`` points to (its last paragraph
    of links, 'Explained in' / '详见'), as site paths with fragments."""
    page = glossary_page(site_pages, lang)
    text = page.file.read_text(encoding="utf-8")
    m = re.search(rf'<h3 id="{re.escape(anchor)}".*?(?=<h[23] )', text, re.S)
    assert m, f"{page.id} has no entry #{anchor}"
    paragraphs = re.findall(r"<p>(.*?)</p>", m.group(0), re.S)
    hrefs = re.findall(r'<a href="([^"]+)"', paragraphs[-1]) if paragraphs else []
    base = "http://site" + page.path
    return [_target(urljoin(base, h)) for h in hrefs if not h.startswith(("http:", "https:"))]


def in_language(path: str, lang: str) -> bool:
    return path.startswith("/en/") == (lang == "en")


@pytest.mark.parametrize("searched", PARAMS + [pytest.param((lang, q), id=f"{lang}-cross-{a}") for lang, q, a in CROSS],
                         indirect=True)
def test_search_results_stay_in_the_site_language(searched):
    lang, term, found = searched
    other = sorted({link for link in found["links"] if not in_language(link, lang)})
    if not found["links"]:
        pytest.fail(f"searching {term!r} on the {lang} site found nothing ({found['meta'].strip()!r})",
                    pytrace=False)
    if other:
        pytest.fail(f"searching {term!r} on the {lang} site lists pages of the other language: {other}",
                    pytrace=False)


@pytest.mark.parametrize("searched,anchor", [pytest.param((lang, q), a, id=f"{lang}-{a}") for lang, q, a in DEFINED],
                         indirect=["searched"])
def test_first_result_is_the_section_that_explains_the_term(searched, anchor, site_pages):
    lang, term, found = searched
    sections = explained_in(site_pages, lang, anchor)
    assert sections, f"the {lang} glossary entry #{anchor} links to no lecture section"
    first = [_target(h) for h in (found["items"][0] if found["items"] else [])]
    top = next((t for t in first if "#" in t), first[0] if first else None)
    if top not in sections:
        pytest.fail(f"searching {term!r} on the {lang} site: the first result is {top} "
                    f"(then {first[1:4]}), not a section the glossary names for it: {sections}",
                    pytrace=False)


@pytest.mark.parametrize("searched,anchor", [pytest.param((lang, q), a, id=f"{lang}-cross-{a}") for lang, q, a in CROSS],
                         indirect=["searched"])
def test_query_in_either_language_finds_this_sites_glossary(searched, anchor, site_pages):
    lang, term, found = searched
    entry = glossary_page(site_pages, lang).path + "#" + anchor
    targets = [_target(h) for links in found["items"] for h in links]
    if entry not in targets:
        pytest.fail(f"searching {term!r} on the {lang} site does not list the glossary entry {entry} "
                    f"(results: {found['pages'][:TOP]})", pytrace=False)
