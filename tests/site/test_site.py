"""The built site: both languages, no third-party assets, glue, notebooks."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

from site_build import built_pages, source_pages

ROOT = Path(__file__).resolve().parents[2]


def pages(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.html")}


def test_strict_build_succeeds(site):
    assert (site / "index.html").is_file()
    assert (site / "en" / "index.html").is_file()


def test_both_languages_have_the_same_pages(site):
    en = pages(site / "en")
    zh = {p for p in pages(site) if not p.startswith("en/") and p != "404.html"}
    assert zh == en


def test_the_browser_tests_are_collected_for_exactly_the_built_pages(site):
    """The browser tests are parametrised from the sources before the site is built
    (``site_build.source_pages``): the build makes those pages and no other."""
    assert source_pages() == [page for _, page in built_pages(site)]


class AssetURLs(HTMLParser):
    """Every URL the browser would fetch as a page asset."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []
        self._style = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "audio", "video", "source", "embed") and a.get("src"):
            self.urls.append(a["src"])
        if tag == "link" and a.get("href"):
            rel = (a.get("rel") or "").lower()
            if any(r in rel for r in ("stylesheet", "preload", "icon", "modulepreload", "prefetch")):
                self.urls.append(a["href"])
        if tag == "style":
            self._style = True
        if a.get("style"):
            self.urls += re.findall(r"url\(\s*['\"]?([^'\")]+)", a["style"])

    def handle_endtag(self, tag):
        if tag == "style":
            self._style = False

    def handle_data(self, data):
        if self._style:
            self.urls += re.findall(r"url\(\s*['\"]?([^'\")]+)", data)
            self.urls += re.findall(r"@import\s+['\"]([^'\"]+)", data)


def external(url: str) -> bool:
    u = urlparse(url)
    return u.scheme in ("http", "https") or url.startswith("//")


def test_no_asset_from_a_third_party_host(site):
    bad = {}
    for page in site.rglob("*.html"):
        parser = AssetURLs()
        text = page.read_text(encoding="utf-8")
        parser.feed(text)
        urls = [u for u in parser.urls if external(u)]
        # dynamic loads inside inline scripts (import("https://..."), fetch CDNs)
        urls += re.findall(r"import\(\s*['\"](https?://[^'\"]+)", text)
        if urls:
            bad[page.relative_to(site).as_posix()] = urls
    for css in site.rglob("*.css"):
        urls = [u for u in re.findall(r"url\(\s*['\"]?([^'\")]+)", css.read_text(errors="ignore")) if external(u)]
        urls += re.findall(r"@import\s+(?:url\()?['\"]?(https?://[^'\")]+)", css.read_text(errors="ignore"))
        if urls:
            bad[css.relative_to(site).as_posix()] = urls
    assert not bad, bad


def chromium_at_build() -> bool:
    """Whether the page-weight step had a browser to draw the Mermaid diagrams with."""
    return any(os.access(p, os.X_OK) for p in
               ([os.environ["SIMTDOCS_CHROMIUM"]] if os.environ.get("SIMTDOCS_CHROMIUM")
                else ["/usr/bin/chromium", "/usr/bin/google-chrome"]))


def test_math_and_diagrams_reach_the_reader_without_their_scripts(site):
    """The page-weight step typesets formulas and draws Mermaid at build time (issue 14)."""
    home = (site / "index.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script\b[^>]*\bsrc="([^"]+)"', home)
    assert not [s for s in scripts if "mathjax" in s.lower()], scripts
    assert not (site / "assets/vendor/mathjax").exists()
    assert "<mjx-container" in home and "<mjx-assistive-mml" in home and "\\(" not in home
    # Mermaid is still served for the fallback (a build without Chromium draws in the browser)
    assert (site / "assets/vendor/mermaid/mermaid.min.js").stat().st_size > 100_000
    if chromium_at_build():
        assert '<div class="mermaid" data-search-exclude><template shadowrootmode="open"><svg' in home
        assert not [s for s in scripts if "mermaid" in s.lower()], scripts


def glued_coalescing(html: str, before: str) -> str:
    plain = re.sub(r"<[^>]+>", "", html)  # glossary tooltips wrap terms in <abbr>
    m = re.search(re.escape(before) + r"\s*([0-9.,]+%)", plain)
    assert m, before
    return m.group(1)


def test_home_page_shows_the_same_glued_number_in_both_languages(site):
    zh = (site / "index.html").read_text(encoding="utf-8")
    en = (site / "en" / "index.html").read_text(encoding="utf-8")
    assert "{{" not in zh and "{{" not in en
    assert glued_coalescing(zh, "合并效率（coalescing efficiency）是") == glued_coalescing(
        en, "coalescing efficiency is"
    )
    # the counters table, headers per language
    assert "<table" in zh and "计数器" in zh  # <table id=…>: the build numbers tables
    assert "<table" in en and "Counter" in en and "计数器" not in en


def test_language_switcher_lands_on_the_same_page(site):
    zh = (site / "notebooks/home/01_first_launch/index.html").read_text(encoding="utf-8")
    assert 'hreflang="en"' in zh
    m = re.search(r'href="([^"]+)"\s+hreflang="en"', zh)
    assert m and "en/notebooks/home/01_first_launch" in m.group(1)


def test_notebook_pages_in_both_languages_with_download(site):
    built = (site / "index.html").stat().st_mtime  # scripts added while building don't count
    scripts = sorted(p for p in (ROOT / "snippets").glob("*/[0-9]*.py") if p.stat().st_mtime < built)
    assert scripts
    for script in scripts:
        rel = f"notebooks/{script.parent.name}/{script.stem}"
        for prefix in ("", "en/"):
            page = site / prefix / rel / "index.html"
            assert page.is_file(), page
            html = page.read_text(encoding="utf-8")
            assert "jupyter-wrapper" in html  # rendered by mkdocs-jupyter
            assert f"{script.stem}.ipynb" in html and "download" in html
            assert (site / prefix / rel / f"{script.stem}.ipynb").is_file()


def test_search_index_has_chinese_words_segmented(site):
    index = (site / "search" / "search_index.json").read_text(encoding="utf-8")
    assert "\\u200b" in index or "\u200b" in index
    assert "coalescing" in index


def test_mermaid_is_drawn_at_build_time_or_loaded_from_the_site(site):
    for home in (site / "index.html", site / "en" / "index.html"):
        html = home.read_text(encoding="utf-8")
        head = html.split("</head>")[0]
        assert 'class="mermaid"' in html
        if chromium_at_build():
            assert '<template shadowrootmode="open"><svg' in html and "mermaid.min.js" not in html
        else:  # Material draws it in the browser, with the site's Mermaid (deferred, never a CDN)
            assert re.search(r'<script src="[^"]*assets/vendor/mermaid/mermaid\.min\.js" defer', head)
