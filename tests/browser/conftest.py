"""The site as a reader sees it: a real headless Chromium over the built site.

The site is built once per run (``mkdocs build --strict`` into the run's temporary
folder, shared by the xdist workers: ``tests/site_build.py``; or the directory named by
``SIMTDOCS_SITE_DIR`` if it is already built), served on 127.0.0.1 by ``http.server`` in a thread, and opened by one
Chromium for the whole session: Debian's ``chromium-headless-shell`` (or ``chromium``:
``simtdocs_site.chromium``) driven by Playwright's Python client. Playwright cannot download
its own browser here, so ``playwright install`` is never run.

The pages are known from the sources (``site_build.source_pages``: every page and notebook
the build makes, under the Chinese root and under ``en/``), so the test ids name the page and
language and collecting needs no built site.
Each page is opened once at 1280 px (:func:`visit` caches what the browser saw: the DOM
facts, axe-core and the reader's checks in both schemes, the screenshots) and every check
reads that record. Screenshots go to ``build/screenshots/`` (or
``SIMTDOCS_SCREENSHOTS``); the folder is printed at the end of the run.

Without Chromium or Playwright these tests skip and say how to install them.
"""

from __future__ import annotations

import dataclasses
import functools
import html as htmlmod
import http.server
import os
import re
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import pytest
from axe_check import run_axe
from reader_pass import run_reader_checks
from simtdocs_site.chromium import CANDIDATES, chromium, launch
from site_build import built_pages, built_site, first_in_run, make_one_of, once_per_run, screenshots_folder, source_pages

ROOT = Path(__file__).resolve().parents[2]
LANGS = ("zh", "en")  # zh is the default language, at the site root; en under /en/
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
LOCAL_SCHEMES = {"data", "blob", "about"}

INSTALL_HINT = (
    "browser tests need Chromium and Playwright's Python client: "
    "`apt-get install chromium-headless-shell` (as root; `make test` does it) and "
    "`pip install -e '.[test]'` (never `playwright install`, it cannot download here)"
)


# -- what is available ---------------------------------------------------------


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright's Python client is not installed; " + INSTALL_HINT
    if chromium() is None:
        where = os.environ.get("SIMTDOCS_CHROMIUM") or ", ".join(CANDIDATES)
        return f"Chromium not found (looked for {where}); " + INSTALL_HINT
    return None


# -- the built site --------------------------------------------------------------


def fail_build(state: dict):
    """The build log once; later tests only point to it."""
    if state.get("reported"):
        pytest.fail("the site did not build (the first failing browser test shows the log)", pytrace=False)
    state["reported"] = True
    pytest.fail(state["error"], pytrace=False)


@dataclass(frozen=True)
class SitePage:
    lang: str
    path: str  # URL path, e.g. "/p2/" or "/en/p2/"
    file: Path

    @property
    def id(self) -> str:
        return f"{self.lang}:{self.path}"

    @property
    def is_notebook(self) -> bool:
        return "/notebooks/" in self.path

    @property
    def is_home(self) -> bool:
        return self.path in ("/", "/en/")

    @property
    def other(self) -> tuple[str, str]:
        """The same page in the other language: (lang, path)."""
        if self.lang == "en":
            return "zh", self.path[len("/en"):]
        return "en", "/en" + self.path


def discover(site: Path) -> list[SitePage]:
    return [SitePage(lang, path, index) for index, (lang, path) in built_pages(site)]


def pytest_generate_tests(metafunc):
    """Parametrize ``site_page`` by every page the build makes in both languages, known from
    the sources (``site_build.source_pages``) so that collecting waits for no build; the
    ``site_page`` fixture finds the page in the built site."""
    if "site_page" not in metafunc.fixturenames:
        return
    why = missing()
    if why:
        metafunc.parametrize("site_page", [pytest.param(None, marks=pytest.mark.skip(reason=why))],
                             ids=["no-browser"])
        return
    ids = [f"{lang}:{path}" for lang, path in source_pages()]
    metafunc.parametrize("site_page", ids, ids=ids, indirect=True)


# -- fixtures -------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser_ready():
    why = missing()
    if why:
        pytest.skip(why)


@pytest.fixture(scope="session")
def site(request, browser_ready) -> Path:
    state = built_site(request.config)
    if "error" in state:
        fail_build(state)
    return state["dir"]


@pytest.fixture(scope="session")
def site_pages(site) -> list[SitePage]:
    return discover(site)


@pytest.fixture
def site_page(request, site_pages) -> SitePage:
    """The built page the test was collected for (``zh:/p2/``, ``en:/en/p2/`` ...)."""
    page = next((p for p in site_pages if p.id == request.param), None)
    if page is None:
        pytest.fail(f"the built site has no page {request.param} (the sources say it should)", pytrace=False)
    return page


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # the browser closing a connection early is not a test failure


@pytest.fixture(scope="session")
def base_url(site) -> str:
    """The built site on http://127.0.0.1:<free port>."""
    server = _Server(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser(browser_ready):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


@pytest.fixture(scope="session")
def context(browser):
    """One context for the session, so the browser cache is shared between pages."""
    ctx = browser.new_context(
        viewport={"width": 1280, "height": 900},
        color_scheme="light",
        locale="zh-CN",
        reduced_motion="reduce",
    )
    ctx.set_default_timeout(20_000)
    # Material renders each Mermaid diagram into a *closed* shadow root; open it
    # so the test can see the SVG. Nothing else about the page changes.
    ctx.add_init_script(
        "{const attach = Element.prototype.attachShadow;"
        " Element.prototype.attachShadow = function (init) {"
        "   return attach.call(this, Object.assign({}, init, {mode: 'open'})); };}"
    )
    yield ctx
    ctx.close()


SCREENSHOTS_FOLDER = screenshots_folder()
# JPEG, not PNG: a full-page PNG of the longest page (25,000 px) takes 2 s to encode, the
# JPEG 1.2 s at about the same size, and text stays sharp at this quality.
SHOT, SHOT_QUALITY = ".jpg", 85


@pytest.fixture(scope="session")
def screenshots(request, browser_ready) -> Path:
    """Fresh folder for this run's screenshots (printed at the end of the run). Every xdist
    worker writes its pages' shots into it: the first one clears it, and each one rewrites
    the contact sheet as it ends, so the last to end lists them all."""
    if first_in_run(request.config, "screenshots"):
        shutil.rmtree(SCREENSHOTS_FOLDER, ignore_errors=True)
    SCREENSHOTS_FOLDER.mkdir(parents=True, exist_ok=True)
    yield SCREENSHOTS_FOLDER
    write_contact_sheet(SCREENSHOTS_FOLDER)


def write_contact_sheet(folder: Path) -> None:
    """``index.html``: every page's light and dark screenshot side by side."""
    rows = []
    for light in sorted(folder.rglob(f"*-light{SHOT}")):
        dark = light.with_name(light.name.replace(f"-light{SHOT}", f"-dark{SHOT}"))
        rel = light.relative_to(folder).as_posix()
        cells = [f'<td><a href="{rel}"><img src="{rel}" width="420"></a></td>']
        if dark.exists():
            drel = dark.relative_to(folder).as_posix()
            cells.append(f'<td><a href="{drel}"><img src="{drel}" width="420"></a></td>')
        rows.append(f"<tr><th>{htmlmod.escape(rel[:-len('-light' + SHOT)])}</th>{''.join(cells)}</tr>")
    (folder / "index.html").write_text(
        "<!doctype html><meta charset=utf-8><title>simtdocs screenshots</title>"
        "<style>img{vertical-align:top;border:1px solid #ccc}th{text-align:left;vertical-align:top}</style>"
        f"<table>{''.join(rows)}</table>\n",
        encoding="utf-8",
    )


# -- one visit per page -----------------------------------------------------------


@dataclass
class Visit:
    page: SitePage
    url: str
    status: int | None = None
    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    mermaid_sources: int = 0
    mermaid: dict = field(default_factory=dict)
    math: dict = field(default_factory=dict)
    images: list[dict] = field(default_factory=list)
    switcher: dict = field(default_factory=dict)
    inspected: bool = False  # the DOM facts above were gathered
    scheme_before: str | None = None
    scheme_after: str | None = None
    shots: dict[str, Path] = field(default_factory=dict)
    axe: dict[str, dict] = field(default_factory=dict)  # "light"/"dark": axe-core's result
    reader: dict[str, dict] = field(default_factory=dict)  # "light"/"dark": the reader's checks
    problems: list[str] = field(default_factory=list)  # the visit itself went wrong

    def offsite(self) -> list[str]:
        bad = []
        for url in self.requests:
            u = urlparse(url)
            if u.scheme in LOCAL_SCHEMES:
                continue
            if u.scheme in ("http", "https", "ws", "wss") and u.hostname in LOCAL_HOSTS:
                continue
            bad.append(url)
        return bad


def short(url: str, n: int = 100) -> str:
    return url if len(url) <= n else url[:n] + "..."


MERMAID_JS = """() => {
  const hosts = [...document.querySelectorAll('.mermaid')];
  return {
    raw: document.querySelectorAll('pre.mermaid').length,
    hosts: hosts.map(h => {
      const root = h.shadowRoot || h;
      const svg = root.querySelector('svg');
      const box = svg ? svg.getBoundingClientRect() : null;
      const text = svg ? svg.textContent : h.textContent;
      return {
        svg: !!svg,
        width: box ? box.width : 0,
        height: box ? box.height : 0,
        error: !!(svg && (svg.getAttribute('aria-roledescription') === 'error'
                          || /Syntax error in text/.test(text))),
        text: (h.shadowRoot ? '' : h.textContent).slice(0, 80),
      };
    }),
  };
}"""

MATH_JS = r"""() => {
  const out = {blocks: 0, containers: 0, untypeset: [], raw: [], errors: [], stray: []};
  const delims = /\\\(|\\\)|\\\[|\\\]|\$\$/;
  for (const el of document.querySelectorAll('.arithmatex')) {
    out.blocks += 1;
    const mjx = el.querySelectorAll('mjx-container');
    out.containers += mjx.length;
    const copy = el.cloneNode(true);
    copy.querySelectorAll('mjx-container').forEach(m => m.remove());
    const left = copy.textContent.trim();
    if (!mjx.length) out.untypeset.push(el.textContent.trim().slice(0, 80));
    else if (delims.test(left)) out.raw.push(left.slice(0, 80));
    for (const err of el.querySelectorAll('mjx-merror, [data-mjx-error]'))
      out.errors.push((err.getAttribute('data-mjx-error') || '') + ' in ' + err.textContent.slice(0, 60));
  }
  // TeX that never reached arithmatex: in the article's prose, outside code and math.
  const article = document.querySelector('article') || document.body;
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  const tex = /\$\$|\\\(|\\\[|\\(frac|text|times|cdot|sum|mathrm|left|right)\b/;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement.closest('pre, code, .arithmatex, script, style, mjx-container, .jp-Cell-inputWrapper, .highlight')) continue;
    if (tex.test(n.textContent)) out.stray.push(n.textContent.trim().slice(0, 80));
  }
  return out;
}"""

IMAGES_JS = """() => [...document.querySelectorAll('article img')].map(img => ({
  src: img.getAttribute('src') || '',
  alt: (img.getAttribute('alt') || '').trim(),
  complete: img.complete,
  width: img.naturalWidth,
}))"""

SWITCHER_JS = """() => [...document.querySelectorAll('.md-header .md-select a[hreflang]')].map(a => ({
  lang: a.getAttribute('hreflang'), href: a.getAttribute('href'), resolved: a.href,
}))"""

SETTLE_JS = """async () => {
  const until = async (ok, ms) => {
    const end = Date.now() + ms;
    while (!ok() && Date.now() < end) await new Promise(r => setTimeout(r, 100));
  };
  document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; });
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    try { await MathJax.startup.promise; } catch (e) {}
  }
  await until(() => [...document.querySelectorAll('.arithmatex')]
                 .every(e => e.querySelector('mjx-container')), 15000);
  await until(() => !document.querySelector('pre.mermaid')
                 && [...document.querySelectorAll('.mermaid')]
                      .every(h => (h.shadowRoot || h).querySelector('svg')), 15000);
  await until(() => [...document.querySelectorAll('article img')].every(i => i.complete), 15000);
  await document.fonts.ready;
}"""


def screenshot_name(page: SitePage) -> str:
    slug = page.path.strip("/")
    if page.lang == "en":
        slug = slug[len("en"):].strip("/")
    return (slug or "index").replace("/", "__")


class Visitor:
    """Opens each page once per run and remembers what the browser saw: in this process, and
    on disk for the other xdist workers (``once_per_run``), whichever worker opened it."""

    def __init__(self, config, context, base_url: str, screenshots: Path, pages: list[SitePage]):
        self.config = config
        self.context = context
        self.base_url = base_url
        self.screenshots = screenshots
        self.pages = pages
        self.cache: dict[str, Visit] = {}

    def __call__(self, page: SitePage) -> Visit:
        if page.id not in self.cache:
            seen = once_per_run(self.config, f"visit {page.id}", self._job(page),
                                meanwhile=lambda: make_one_of(self.config, self._next_jobs(page)))
            seen.update(page=page, shots={k: Path(v) for k, v in seen["shots"].items()})
            self.cache[page.id] = Visit(**seen)
        return self.cache[page.id]

    def _job(self, page: SitePage):
        return lambda _: dataclasses.asdict(self._visit(page))

    def _next_jobs(self, page: SitePage):
        """While another worker opens ``page``: the pages after it, which this worker's next
        tests will want."""
        i = self.pages.index(page)
        for p in self.pages[i + 1:] + self.pages[:i]:
            yield f"visit {p.id}", self._job(p)

    def _visit(self, sp: SitePage) -> Visit:
        v = Visit(sp, self.base_url + sp.path)
        # A diagram is drawn at build time (<div class="mermaid"> with its SVG in a shadow root)
        # or, without Chromium at build time, left to Material (<pre class="mermaid">).
        v.mermaid_sources = len(re.findall(r'<(?:pre|div) class="mermaid"', sp.file.read_text(encoding="utf-8")))
        tab = self.context.new_page()
        recording = True

        def on_console(msg):
            if recording and msg.type == "error":
                loc = msg.location or {}
                v.console_errors.append(f"{msg.text} [{short(loc.get('url', ''), 80)}]")

        def on_response(resp):
            if recording and resp.status >= 400:
                v.failed_requests.append(f"HTTP {resp.status} {short(resp.url)}")

        def on_failed(req):
            if recording:
                v.failed_requests.append(f"{req.failure} {short(req.url)}")

        tab.on("request", lambda req: recording and v.requests.append(req.url))
        tab.on("console", on_console)
        tab.on("pageerror", lambda exc: recording and v.page_errors.append(str(exc)))
        tab.on("response", on_response)
        tab.on("requestfailed", on_failed)
        try:
            resp = tab.goto(v.url, wait_until="load")
            v.status = resp.status if resp else None
            tab.evaluate(SETTLE_JS)
            v.mermaid = tab.evaluate(MERMAID_JS)
            v.math = tab.evaluate(MATH_JS)
            v.images = tab.evaluate(IMAGES_JS)
            v.switcher = {"links": tab.evaluate(SWITCHER_JS)}
            v.inspected = True
            v.reader["light"] = run_reader_checks(tab, sp.lang, "light")
            v.axe["light"] = run_axe(tab)

            # light, then dark: click the palette toggle as a reader would
            name = screenshot_name(sp)
            folder = self.screenshots / sp.lang
            folder.mkdir(parents=True, exist_ok=True)
            v.scheme_before = tab.evaluate("document.body.getAttribute('data-md-color-scheme')")
            v.shots["light"] = folder / f"{name}-light{SHOT}"
            tab.screenshot(path=str(v.shots["light"]), full_page=True, quality=SHOT_QUALITY)
            toggle = tab.locator("form[data-md-component=palette] label:visible").first
            toggle.click()
            tab.mouse.move(640, 890)  # no tooltip of the toggle in the screenshot
            tab.wait_for_function(
                "before => document.body.getAttribute('data-md-color-scheme') !== before",
                arg=v.scheme_before, timeout=5000,
            )
            v.scheme_after = tab.evaluate("document.body.getAttribute('data-md-color-scheme')")
            tab.evaluate(SETTLE_JS)  # Mermaid redraws for the new scheme
            v.reader["dark"] = run_reader_checks(tab, sp.lang, "dark")
            v.axe["dark"] = run_axe(tab, recoloured=True)
            v.shots["dark"] = folder / f"{name}-dark{SHOT}"
            # a notebook page holds its lecture's code and figures again: its dark scheme is
            # shown by its first screens (a third of the time of its whole length)
            clip = {"x": 0, "y": 0, "width": 1280, "height": 3 * 900} if "/notebooks/" in sp.path else None
            tab.screenshot(path=str(v.shots["dark"]), full_page=True, clip=clip, quality=SHOT_QUALITY)
            # the palette choice is kept in localStorage: reset it for the next page
            tab.evaluate("localStorage.clear()")
            recording = False

            # the language switcher, clicked as a reader would
            other_lang, _ = sp.other
            button = tab.locator(".md-header .md-select").first
            button.hover()
            link = tab.locator(f'.md-header .md-select a[hreflang="{other_lang}"]').first
            with tab.expect_navigation(wait_until="domcontentloaded") as nav:
                link.click()
            landed = nav.value
            v.switcher.update(
                landed=urlparse(tab.url).path,
                status=landed.status if landed else None,
                html_lang=tab.evaluate("document.documentElement.lang"),
            )
        except Exception as exc:  # a check reads what was gathered before this
            v.problems.append(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        finally:
            recording = False
            tab.close()
        return v


@pytest.fixture(scope="session")
def visit(request, context, base_url, screenshots, site_pages) -> Visitor:
    return Visitor(request.config, context, base_url, screenshots, site_pages)


@pytest.fixture
def page_visit(site_page, visit) -> Visit:
    """What the browser saw on this page (opened once per session)."""
    return visit(site_page)
