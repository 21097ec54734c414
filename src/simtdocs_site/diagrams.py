"""Mermaid diagrams drawn at build time, in headless Chromium.

The page is opened as built, Material draws each diagram as it would in the reader's
browser, and the SVG goes into the page inside a declarative shadow root (the isolation
Material's own runtime rendering uses; its colours are CSS variables, so one SVG serves the
light and the dark scheme); the Mermaid script is then dropped from the page. Without
Chromium or Playwright the page keeps Material's runtime rendering, with the script loaded
only on that page. Each page's drawings are cached under ``.cache/page-weight/mermaid/``.
"""

from __future__ import annotations

import html
import os
import re
import tempfile
from pathlib import Path

from . import cache_files
from .chromium import chromium, launch

# Bump when the drawing below changes, so cached output is not reused.
RENDER_VERSION = "2"
# The self-hosted Mermaid the page falls back to when the build has no browser:
# (package folder under node_modules, file, where the site serves it).
VENDOR = [
    ("mermaid/dist", "mermaid.min.js", "assets/vendor/mermaid/mermaid.min.js"),
]


class DiagramError(RuntimeError):
    """Chromium did not draw a page's diagrams; the message starts with the page."""


MERMAID_PRE = re.compile(r'<pre class="mermaid"(?: data-search-exclude(?:="")?)?><code>(.*?)</code></pre>', re.S)  # ="": as mkdocs-glightbox re-serialises the page
MERMAID_SCRIPT = re.compile(r'<script [^>]*data-mermaid-runtime[^>]*></script>\s*')
# Material renders each diagram into a closed shadow root; open it so the SVG can be read.
OPEN_SHADOW = (
    "{const attach = Element.prototype.attachShadow;"
    " Element.prototype.attachShadow = function (init) {"
    "   return attach.call(this, Object.assign({}, init, {mode: 'open'})); };}"
)
DIAGRAMS_JS = """n => {
  const hosts = [...document.querySelectorAll('div.mermaid')];
  if (document.querySelector('pre.mermaid') || hosts.length < n) return null;
  const svgs = hosts.map(h => h.shadowRoot && h.shadowRoot.querySelector('svg') ? h.shadowRoot.innerHTML : null);
  return svgs.every(s => s) ? svgs : null;
}"""
#: Why diagrams were left to the reader's browser in this build (empty: all drawn here).
no_browser: list[str] = []


def _mermaid_cache(source: str) -> Path:
    from material import __version__ as material_version

    return cache_files.CACHE / "mermaid" / (cache_files.key(RENDER_VERSION, cache_files.node_package_version("mermaid"),
                                                             material_version, source) + ".html")


_browser: dict = {}


def _launch(exe: str):
    """One Chromium for the whole build (both languages); closed by :func:`close_browser`."""
    if "browser" not in _browser:
        from playwright.sync_api import sync_playwright

        _browser["pw"] = sync_playwright().start()
        _browser["browser"] = launch(_browser["pw"], exe)
    return _browser["browser"]


def close_browser() -> None:
    browser, pw = _browser.pop("browser", None), _browser.pop("pw", None)
    if browser is not None:
        browser.close()
    if pw is not None:
        pw.stop()


def draw_diagrams(output: str, page_dir: Path, count: int, where: str) -> list[str] | None:
    """The shadow-root content Material draws for each diagram of this page, or None without a browser."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        no_browser.append("Playwright's Python client is not installed")
        return None
    exe = chromium()
    if exe is None:
        no_browser.append("Chromium was not found")
        return None
    # The page as built, next to where it will live, so its relative asset URLs resolve.
    page_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".html", prefix=".mermaid-", dir=page_dir,
                                     delete=False, encoding="utf-8") as f:
        f.write(output)
    try:
        ctx = _launch(exe).new_context(color_scheme="light")
        try:
            ctx.add_init_script(OPEN_SHADOW)
            tab = ctx.new_page()
            tab.goto(Path(f.name).as_uri(), wait_until="load")
            return tab.wait_for_function(DIAGRAMS_JS, arg=count, timeout=60_000).json_value()
        finally:
            ctx.close()
    except Exception as exc:
        close_browser()
        raise DiagramError(f"{where}: Mermaid diagrams were not drawn in Chromium: {exc}") from None
    finally:
        os.unlink(f.name)


def prerender_mermaid(output: str, page_dir: Path, where: str) -> str:
    """Put each diagram's SVG into the page and drop the Mermaid script (no-op without a browser)."""
    sources = [html.unescape(s) for s in MERMAID_PRE.findall(output)]
    if not sources:
        return output
    cached = [_mermaid_cache(s) for s in sources]
    if not all(p.is_file() for p in cached):
        drawn = draw_diagrams(output, page_dir, len(sources), where)
        if drawn is None:
            return output  # Material draws them in the reader's browser
        for path, svg in zip(cached, drawn):
            cache_files.write(path, svg)
    svgs = iter(p.read_text(encoding="utf-8") for p in cached)
    output = MERMAID_PRE.sub(
        lambda m: f'<div class="mermaid" data-search-exclude><template shadowrootmode="open">'
                  f"{next(svgs)}</template></div>",
        output,
    )
    return MERMAID_SCRIPT.sub("", output)
