"""A reader on a slow link: the heaviest pages, served with gzip, in Chromium throttled to
1.6 Mbit/s and 150 ms round trips (the setting of ``benchmarks/page_weight.py``, issue 14).

What is checked is behaviour, not timings (those go to the benchmark and the README):
the page stays within the byte budget, no MathJax or Mermaid script is fetched, nothing
blocks the first paint, and the formulas and diagrams are already in the HTML, so they
show with JavaScript switched off.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("page_weight_bench", ROOT / "benchmarks" / "page_weight.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _bench()


def heaviest(site: Path) -> list[str]:
    """Per language, the largest page with formulas and the largest with a diagram (from the built site)."""
    best: dict[tuple[str, str], tuple[int, str]] = {}
    for lang, path in bench.pages(site):
        if "/notebooks/" in path:
            continue
        text = (site / path.lstrip("/") / "index.html").read_text(encoding="utf-8")
        size = len(text.encode())
        for kind, marker in (("math", 'class="arithmatex"'), ("diagram", 'class="mermaid"')):
            if marker in text and size > best.get((lang, kind), (0, ""))[0]:
                best[(lang, kind)] = (size, path)
    return sorted({path for _, path in best.values()})


@pytest.fixture(scope="module")
def gzip_url(site):
    server, base = bench.serve(site)
    yield base
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def slow_pages(site) -> list[str]:
    found = heaviest(site)
    assert found, "no page with formulas or diagrams in the built site"
    return found


def test_heaviest_pages_fit_the_budget_on_a_slow_link(browser, gzip_url, slow_pages):
    for path in slow_pages:
        m = bench.measure(browser, gzip_url + path)
        assert m["bytes"] <= bench.LIMIT_BYTES, f"{path}: {m['bytes']:,} bytes transferred (budget 1 MB)"
        assert m["fcp_s"] is not None, f"{path}: nothing was painted"
        if m["math_s"] is not None:
            assert m["math_s"] != float("inf"), f"{path}: the formulas were never typeset"


def test_no_math_or_diagram_script_and_nothing_blocks_the_first_paint(site, slow_pages):
    for path in slow_pages:
        text = (site / path.lstrip("/") / "index.html").read_text(encoding="utf-8")
        scripts = re.findall(r"<script\b[^>]*\bsrc=\"([^\"]+)\"[^>]*>", text)
        assert not [s for s in scripts if re.search(r"mathjax|mermaid", s, re.I)], f"{path}: {scripts}"
        before_article = text.split("<article", 1)[0]
        blocking = [tag for tag in re.findall(r"<script\b[^>]*\bsrc=[^>]*>", before_article)
                    if not re.search(r"\b(defer|async)\b", tag)]
        assert not blocking, f"{path}: scripts that block the first paint: {blocking}"


def test_formulas_and_diagrams_show_without_javascript(browser, site, gzip_url, slow_pages):
    """Throttled and with JavaScript off, every formula and diagram is an SVG with a text equivalent."""
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    try:
        for path in slow_pages:
            tab = context.new_page()
            bench.throttle(context, tab)
            tab.goto(gzip_url + path, wait_until="load", timeout=180_000)
            seen = tab.evaluate("""() => ({
              math: [...document.querySelectorAll('.arithmatex')].map(e => ({
                svg: !!e.querySelector('mjx-container > svg'),
                mathml: !!e.querySelector('mjx-assistive-mml math'),
                height: e.getBoundingClientRect().height,
              })),
              diagrams: [...document.querySelectorAll('.mermaid')].map(h => {
                const svg = h.shadowRoot && h.shadowRoot.querySelector('svg');
                const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
                return {svg: !!svg, width: box.width, height: box.height,
                        text: svg ? svg.textContent.trim().length : 0};
              }),
            })""")
            tab.close()
            source = (site / path.lstrip("/") / "index.html").read_text(encoding="utf-8")
            assert len(seen["math"]) == source.count('class="arithmatex"')
            assert len(seen["diagrams"]) == len(re.findall(r'<(?:pre|div) class="mermaid"', source))
            bad_math = [i for i, m in enumerate(seen["math"], 1) if not (m["svg"] and m["mathml"] and m["height"] > 0)]
            assert not bad_math, f"{path}: formulas {bad_math} are not typeset without JavaScript"
            bad = [i for i, d in enumerate(seen["diagrams"], 1)
                   if not d["svg"] or d["width"] < 10 or d["height"] < 10 or not d["text"]]
            assert not bad, f"{path}: diagrams {bad} are not drawn without JavaScript"
    finally:
        context.close()


def test_figures_are_lazy_files_with_size_and_alt(site, slow_pages):
    """Each figure is its own SVG file, loaded lazily, with its size (nothing jumps) and alt text."""
    for path in slow_pages:
        text = (site / path.lstrip("/") / "index.html").read_text(encoding="utf-8")
        article = text.split("<article", 1)[1].split("</article>", 1)[0]
        for img in re.findall(r"<img\b[^>]*>", article):
            attrs = dict(re.findall(r'(\w+)="([^"]*)"', img))
            assert not attrs.get("src", "").startswith("data:"), f"{path}: figure inline: {img[:120]}"
            assert attrs.get("loading") == "lazy", f"{path}: figure not lazy: {img[:160]}"
            assert int(attrs.get("width", 0)) > 0 and int(attrs.get("height", 0)) > 0, f"{path}: no size: {img[:160]}"
            assert attrs.get("alt", "").strip(), f"{path}: figure without alt text: {img[:160]}"
            target = (site / path.lstrip("/") / attrs["src"]).resolve()
            assert target.is_file() and target.read_bytes().lstrip().startswith(b"<svg"), f"{path}: {attrs['src']}"
