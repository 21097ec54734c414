"""mkdocs hook: what a page costs a reader on a slow link (issue 14).

- Math is typeset at build time: every ``pymdownx.arithmatex`` formula becomes
  MathJax's SVG output (with the formula as MathML for screen readers) by
  ``hooks/tex2svg.js`` under node, so no math JavaScript reaches the reader.
- Mermaid diagrams are drawn at build time: the page is opened in headless
  Chromium, Material draws each diagram as it would for a reader, and the SVG is
  written into the page inside a declarative shadow root (the same isolation
  Material's own runtime rendering uses; its colours are CSS variables, so one SVG
  serves the light and the dark scheme). The Mermaid script is then dropped from
  the page. Without Chromium or Playwright the page keeps Material's runtime
  rendering, with the script loaded only on that page.
- Figures (SVG inline as data: URIs in the rendered Markdown) become files under
  ``assets/figures/``, named by their content, trimmed, linked with ``loading="lazy"``
  and their width and height, so nothing jumps while they arrive.
- The search index keeps prose and headings: code blocks, formulas, diagrams and
  tables of numbers are marked ``data-search-exclude`` (Material's search plugin
  skips them).

Both renderers cache their output under ``.cache/page-weight/`` keyed by the
source and the renderer's version, so a warm build runs neither node nor Chromium.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import json
import logging
import os
import re
import subprocess
import tempfile
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "page-weight"
TEX2SVG = Path(__file__).with_name("tex2svg.js")
log = logging.getLogger("mkdocs.hooks.page_weight")

# Bump when the rendering below changes, so cached output is not reused.
RENDER_VERSION = "2"  # 2: Chinese in a formula set as one run of text (tex2svg.js)


@functools.lru_cache(maxsize=None)
def _package_version(name: str) -> str:
    try:
        return json.loads((ROOT / "node_modules" / name / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "missing"


def _write(path: Path, text: str) -> None:
    """Write a cache file whole (builds may run side by side, e.g. tests and `mkdocs serve`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


# -- math ---------------------------------------------------------------------

# pymdownx.arithmatex (generic): <span class="arithmatex">\(..\)</span> inline,
# <div class="arithmatex">\[..\]</div> display; the TeX inside is HTML-escaped.
ARITHMATEX = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.S)
DELIMS = {"span": (r"\(", r"\)"), "div": (r"\[", r"\]")}
_math_css: dict[str, str] = {}


def _math_cache(tex: str, display: bool) -> Path:
    return CACHE / "math" / (_key(RENDER_VERSION, _package_version("mathjax"), str(display), tex) + ".html")


def typeset(formulas: list[tuple[str, bool]], where: str) -> list[str]:
    """SVG (``<mjx-container>``) for each ``(tex, display)``; node runs only for formulas not cached."""
    todo = [(tex, disp) for tex, disp in dict.fromkeys(formulas) if not _math_cache(tex, disp).is_file()]
    css_file = CACHE / "math" / f"mathjax-svg-{_package_version('mathjax')}.css"
    if todo or not css_file.is_file():
        if not (ROOT / "node_modules" / "mathjax" / "package.json").is_file():
            raise PluginError("MathJax is missing from node_modules: run `make setup` (it runs `npm ci`).")
        payload = json.dumps([{"tex": t, "display": d} for t, d in todo])
        try:
            proc = subprocess.run(["node", str(TEX2SVG)], input=payload, capture_output=True,
                                  text=True, cwd=ROOT, timeout=300)
        except FileNotFoundError:
            raise PluginError("node is needed to typeset the formulas at build time (apt-get install nodejs)") from None
        if proc.returncode:
            raise PluginError(f"{where}: hooks/tex2svg.js failed:\n{proc.stderr[-2000:]}")
        result = json.loads(proc.stdout)
        errors = [f"  {'$$' if d else '$'}{t}{'$$' if d else '$'}: {r['error']}"
                  for (t, d), r in zip(todo, result["out"]) if "error" in r]
        if errors:
            raise PluginError(f"{where}: TeX error(s) in formulas:\n" + "\n".join(errors))
        for (tex, disp), r in zip(todo, result["out"]):
            _write(_math_cache(tex, disp), r["html"])
        _write(css_file, result["css"])
    _math_css["css"] = css_file.read_text(encoding="utf-8")
    return [_math_cache(tex, disp).read_text(encoding="utf-8") for tex, disp in formulas]


def typeset_page(content: str, where: str) -> str:
    """Replace every arithmatex formula in ``content`` by its SVG."""
    found = []
    for m in ARITHMATEX.finditer(content):
        tag, inner = m.group(1), m.group(2).strip()
        left, right = DELIMS[tag]
        if not (inner.startswith(left) and inner.endswith(right)) or "<" in inner:
            raise PluginError(f"{where}: unexpected math markup {m.group(0)[:120]!r}")
        found.append((html.unescape(inner[len(left):-len(right)]).strip(), tag == "div"))
    if not found:
        return content
    rendered = iter(typeset(found, where))
    return ARITHMATEX.sub(
        lambda m: f'<{m.group(1)} class="arithmatex" data-search-exclude>{next(rendered)}</{m.group(1)}>',
        content,
    )


# -- search index -------------------------------------------------------------

# Code blocks of the pages, and the code cells (input and output) of the notebook pages.
CODE_BLOCK = re.compile(r'<div class="(?:highlight|language-\w+ highlight|jp-Cell jp-CodeCell[^"]*)"[^>]*>')
DIV = re.compile(r"<(/?)div\b[^>]*>")
# Material's search parser compares elements by tag name only, so an excluded <div> stops
# being skipped at the first nested </div>. Excluded blocks are wrapped in an element of
# their own instead, which only its own end tag closes; on_post_page removes the wrapper.
SKIP = "search-exclude"
SKIP_TAGS = re.compile(rf"</?{SKIP}\b[^>]*>")
TABLE = re.compile(r"<table\b[^>]*>.*?</table>", re.S)
CELL = re.compile(r"<td\b[^>]*>(.*?)</td>", re.S)
TAG = re.compile(r"<[^>]+>")
# A number as tables show it: 1,024  3.5  −12%  ×4  1.2e6  128 B  0.93 µs  1/3  (2, 8)
NUMBER = re.compile(r"[\s(]*[-−+~≈×x]?[\d.,/:%()\s]+(?:e[-+]?\d+)?\s*(?:[kKMGT]?i?B|[nµu]?s|ms|%|x|×|-way|way)?[\s)]*")


def numeric_table(table: str) -> bool:
    """True if most body cells of ``table`` are numbers (a computed table, not prose)."""
    cells = [html.unescape(TAG.sub("", c)).strip() for c in CELL.findall(table)]
    cells = [c for c in cells if c and c not in "—-–"]
    if not cells:
        return False
    numbers = sum(1 for c in cells if any(ch.isdigit() for ch in c) and NUMBER.fullmatch(c))
    return numbers * 2 >= len(cells)


def wrap_divs(content: str, start: re.Pattern) -> str:
    """Wrap each ``<div>`` that ``start`` matches, to its balanced ``</div>``, in the SKIP element."""
    out, pos = [], 0
    for m in start.finditer(content):
        if m.start() < pos:
            continue  # inside a block already wrapped
        depth = 0
        for d in DIV.finditer(content, m.start()):
            depth += -1 if d.group(1) else 1
            if depth == 0:
                out += [content[pos:m.start()], f"<{SKIP} data-search-exclude>", content[m.start():d.end()],
                        f"</{SKIP}>"]
                pos = d.end()
                break
    return "".join(out) + content[pos:]


def exclude_from_search(content: str) -> str:
    """Mark code blocks, diagrams and tables of numbers so Material's search index skips them."""
    content = wrap_divs(content, CODE_BLOCK)
    content = content.replace('<pre class="mermaid">', '<pre class="mermaid" data-search-exclude>')

    def table(m):
        t = m.group(0)
        return t.replace("<table", "<table data-search-exclude", 1) if numeric_table(t) else t

    return TABLE.sub(table, content)


# -- figures as files -------------------------------------------------------------

# A figure as simtdocs.docs.display ships it: an SVG inline as a data: URI (self-contained in
# the block cache and in notebooks). On the site each becomes a file, named by its content:
# a figure without text is the same file in both languages and is written once.
DATA_SVG = re.compile(r'<img\b([^>]*?)\ssrc="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"([^>]*?)\s*/?>')
DATA_HREF = re.compile(r'href="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"')
SVG_SIZE = re.compile(r'<svg\b[^>]*?\bwidth="([\d.]+)(pt|px)?"[^>]*?\bheight="([\d.]+)(pt|px)?"')
PROLOG = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*|<metadata>.*?</metadata>\s*", re.S)
LONG_NUMBER = re.compile(r"(?<![\w#.])-?\d+\.\d{3,}")
TRANSFORM = re.compile(r'\btransform="[^"]*"')
TRIM_VERSION = "3"  # part of each figure's name: change it when trim_svg writes something else
# A figure's natural size is its drawn size times this. matplotlib draws at 72 points per inch
# and labels lanes and banks in 6.5 pt: 8.7 CSS px at the drawn size, small on a desktop and
# too small in the lightbox a phone opens (issue 27). Scaled, the page shows the figure at the
# column's width, and the lightbox's full size has its smallest text at 13 px.
FIGURE_ZOOM = 1.5
SVG_ROOT_SIZE = re.compile(r'(<svg\b[^>]*?\bwidth=")([\d.]+)((?:pt|px)?"[^>]*?\bheight=")([\d.]+)((?:pt|px)?")')
FIGURES = "assets/figures"


def _round(m: re.Match) -> str:
    out = f"{float(m.group(0)):.2f}".rstrip("0").rstrip(".")
    return "0" if out == "-0" else out


def trim_svg(svg: str) -> str:
    """Drop the XML prolog and metadata, round coordinates to 0.01 (of a point) and the indentation;
    the natural size is :data:`FIGURE_ZOOM` times the drawn one (the viewBox, what is drawn, is kept).

    Transforms keep every digit: a glyph is drawn at ``scale(0.015625)`` of its outline, and
    0.02 would draw every letter 28% too large (Chinese characters then run into each other)."""
    svg = PROLOG.sub("", svg)
    root = re.search(r"<svg\b[^>]*>", svg)
    if root and "viewBox=" in root.group(0):  # without one, a larger size would only add blank space
        svg = SVG_ROOT_SIZE.sub(lambda m: f"{m.group(1)}{float(m.group(2)) * FIGURE_ZOOM:.2f}{m.group(3)}"
                                f"{float(m.group(4)) * FIGURE_ZOOM:.2f}{m.group(5)}", svg, count=1)
    pieces = TRANSFORM.split(svg)
    kept = TRANSFORM.findall(svg) + [""]
    svg = "".join(LONG_NUMBER.sub(_round, piece) + t for piece, t in zip(pieces, kept))
    return re.sub(r">\s+<", "><", svg)


def svg_size_px(svg: str) -> tuple[int, int] | None:
    m = SVG_SIZE.search(svg)
    if not m:
        return None
    scale = 4 / 3 if (m.group(2) or "px") == "pt" else 1  # CSS: 1pt = 4/3 px
    return round(float(m.group(1)) * scale), round(float(m.group(3)) * scale)


def figures_as_files(content: str, page_url: str, site_dir: Path, where: str) -> str:
    """Write each inline SVG figure to ``assets/figures/<hash>.svg``; the page links it, lazily.
    The link that opens it full size (mkdocs-glightbox wraps each figure in one) points at the
    same file."""
    from mkdocs.utils import get_relative_url

    def file_for(data: str) -> tuple[str, str]:
        key = hashlib.sha256((TRIM_VERSION + data).encode()).hexdigest()[:16]
        cached = CACHE / "figures" / f"{key}.svg"  # trimming is the slow part: once per figure
        if not cached.is_file():
            _write(cached, trim_svg(base64.b64decode(data).decode("utf-8")))
        svg = cached.read_text(encoding="utf-8")
        name = f"{FIGURES}/{key}.svg"
        path = site_dir / name
        if not path.is_file():
            _write(path, svg)
        return name, svg

    def one(m: re.Match) -> str:
        name, svg = file_for(m.group(2))
        size = svg_size_px(svg)
        if size is None:
            raise PluginError(f"{where}: a figure's SVG has no width/height: {svg[:200]!r}")
        rest = re.sub(r'\s(?:loading|decoding|width|height)="[^"]*"', "", m.group(1) + m.group(3))
        return (f'<img src="{get_relative_url(name, page_url)}"{rest} loading="lazy" decoding="async" '
                f'width="{size[0]}" height="{size[1]}">')

    def link(m: re.Match) -> str:
        return f'href="{get_relative_url(file_for(m.group(1))[0], page_url)}"'

    return DATA_HREF.sub(link, DATA_SVG.sub(one, content))


# -- Mermaid --------------------------------------------------------------------

MERMAID_PRE = re.compile(r'<pre class="mermaid"(?: data-search-exclude(?:="")?)?><code>(.*?)</code></pre>', re.S)  # ="": as mkdocs-glightbox re-serialises the page
MERMAID_SCRIPT = re.compile(r'<script [^>]*data-mermaid-runtime[^>]*></script>\s*')
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    # Nothing leaves the machine: Material's CDN fallback for Mermaid would fail at once.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
]
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
_no_browser: list[str] = []


def _mermaid_cache(source: str) -> Path:
    from material import __version__ as material_version

    return CACHE / "mermaid" / (_key(RENDER_VERSION, _package_version("mermaid"), material_version, source) + ".html")


def chromium() -> str | None:
    """Debian's chromium (or the Chrome of a GitHub runner), or only ``SIMTDOCS_CHROMIUM`` if set."""
    named = os.environ.get("SIMTDOCS_CHROMIUM")
    candidates = [named] if named else ["/usr/bin/chromium", "/usr/bin/google-chrome"]
    return next((p for p in candidates if os.access(p, os.X_OK)), None)


_browser: dict = {}


def _launch(exe: str):
    """One Chromium for the whole build (both languages); closed by :func:`close_browser`."""
    if "browser" not in _browser:
        from playwright.sync_api import sync_playwright

        _browser["pw"] = sync_playwright().start()
        _browser["browser"] = _browser["pw"].chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
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
        _no_browser.append("Playwright's Python client is not installed")
        return None
    exe = chromium()
    if exe is None:
        _no_browser.append("Chromium was not found")
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
        raise PluginError(f"{where}: Mermaid diagrams were not drawn in Chromium: {exc}") from None
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
            _write(path, svg)
    svgs = iter(p.read_text(encoding="utf-8") for p in cached)
    output = MERMAID_PRE.sub(
        lambda m: f'<div class="mermaid" data-search-exclude><template shadowrootmode="open">'
                  f"{next(svgs)}</template></div>",
        output,
    )
    return MERMAID_SCRIPT.sub("", output)


# -- mkdocs events ------------------------------------------------------------------


def on_page_content(content, page, config, files, **kwargs):
    where = f"docs/{page.file.src_uri}"
    content = figures_as_files(content, page.url, Path(config["site_dir"]), where)
    return exclude_from_search(typeset_page(content, where))


# mkdocs-glightbox puts its script in <head> without `defer` (it would hold up the first paint
# on a slow link) and starts it from an inline script at the end of <body>: defer the one and
# start the other when the document is parsed, after deferred scripts have run.
GLIGHTBOX_SCRIPT = re.compile(r'<script src="([^"]*glightbox\.min\.js)"></script>')
GLIGHTBOX_INIT = re.compile(r'(<script id="init-glightbox">)(.*?)(</script>)', re.S)


def defer_glightbox(output: str) -> str:
    output = GLIGHTBOX_SCRIPT.sub(r'<script src="\1" defer></script>', output)
    return GLIGHTBOX_INIT.sub(lambda m: f'{m.group(1)}document.addEventListener("DOMContentLoaded", () => {{'
                                        f'{m.group(2).strip()}}});{m.group(3)}', output)


def on_post_page(output, page, config, **kwargs):
    output = defer_glightbox(SKIP_TAGS.sub("", output))
    if "arithmatex" in output and _math_css.get("css") and 'class="arithmatex"' in output:
        css = re.sub(r"\s+", " ", _math_css["css"]).strip()
        output = output.replace("</head>", f'<style id="mathjax-svg">{css}</style></head>', 1)
    page_dir = Path(config["site_dir"]) / page.file.dest_uri
    return prerender_mermaid(output, page_dir.parent, f"docs/{page.file.src_uri}")


@event_priority(-200)  # after mkdocs-static-i18n (-100) has built the other languages
def on_post_build(config, **kwargs):
    i18n = config["plugins"].get("i18n")
    if i18n is not None and getattr(i18n, "building", False):
        return  # a nested per-language build: the browser serves the next language too
    close_browser()
    if _no_browser:
        log.info("Mermaid diagrams are drawn in the reader's browser (%s); install Chromium and "
                 "Playwright to draw them at build time.", _no_browser[0])
        _no_browser.clear()


def on_build_error(error, **kwargs):
    close_browser()
