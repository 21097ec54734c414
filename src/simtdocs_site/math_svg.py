"""Formulas typeset at build time: no math JavaScript reaches the reader.

Every ``pymdownx.arithmatex`` formula (generic mode) becomes MathJax's SVG output, with the
formula as MathML for screen readers, by ``tex2svg.js`` (next to this module) under node.
Each formula is cached under ``.cache/page-weight/math/`` keyed by its TeX, display mode,
the MathJax version and :data:`RENDER_VERSION`; node runs only for the new ones. A TeX
error or an undefined macro is a :class:`MathError` naming the page and the formula.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
from pathlib import Path

from . import cache_files

TEX2SVG = Path(__file__).with_name("tex2svg.js")
# Bump when the rendering below changes, so cached output is not reused.
RENDER_VERSION = "2"  # 2: Chinese in a formula set as one run of text (tex2svg.js)

# pymdownx.arithmatex (generic): <span class="arithmatex">\(..\)</span> inline,
# <div class="arithmatex">\[..\]</div> display; the TeX inside is HTML-escaped.
ARITHMATEX = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.S)
DELIMS = {"span": (r"\(", r"\)"), "div": (r"\[", r"\]")}
#: MathJax's stylesheet for its SVG output, once a formula has been typeset (a page with
#: formulas carries it in a <style>).
math_css: dict[str, str] = {}


class MathError(ValueError):
    """A formula that cannot be typeset; the message starts with the page."""


def _math_cache(tex: str, display: bool) -> Path:
    version = cache_files.node_package_version("mathjax")
    return cache_files.CACHE / "math" / (cache_files.key(RENDER_VERSION, version, str(display), tex) + ".html")


def typeset(formulas: list[tuple[str, bool]], where: str) -> list[str]:
    """SVG (``<mjx-container>``) for each ``(tex, display)``; node runs only for formulas not cached."""
    root = cache_files.ROOT
    todo = [(tex, disp) for tex, disp in dict.fromkeys(formulas) if not _math_cache(tex, disp).is_file()]
    css_file = cache_files.CACHE / "math" / f"mathjax-svg-{cache_files.node_package_version('mathjax')}.css"
    if todo or not css_file.is_file():
        if not (root / "node_modules" / "mathjax" / "package.json").is_file():
            raise MathError("MathJax is missing from node_modules: run `make setup` (it runs `npm ci`).")
        payload = json.dumps([{"tex": t, "display": d} for t, d in todo])
        # node finds MathJax in the site's node_modules wherever this package is installed.
        env = dict(os.environ, NODE_PATH=str(root / "node_modules"))
        try:
            proc = subprocess.run(["node", str(TEX2SVG)], input=payload, capture_output=True,
                                  text=True, cwd=root, env=env, timeout=300)
        except FileNotFoundError:
            raise MathError("node is needed to typeset the formulas at build time (apt-get install nodejs)") from None
        if proc.returncode:
            raise MathError(f"{where}: tex2svg.js failed:\n{proc.stderr[-2000:]}")
        result = json.loads(proc.stdout)
        errors = [f"  {'$$' if d else '$'}{t}{'$$' if d else '$'}: {r['error']}"
                  for (t, d), r in zip(todo, result["out"]) if "error" in r]
        if errors:
            raise MathError(f"{where}: TeX error(s) in formulas:\n" + "\n".join(errors))
        for (tex, disp), r in zip(todo, result["out"]):
            cache_files.write(_math_cache(tex, disp), r["html"])
        cache_files.write(css_file, result["css"])
    math_css["css"] = css_file.read_text(encoding="utf-8")
    return [_math_cache(tex, disp).read_text(encoding="utf-8") for tex, disp in formulas]


def typeset_page(content: str, where: str) -> str:
    """Replace every arithmatex formula in ``content`` by its SVG."""
    found = []
    for m in ARITHMATEX.finditer(content):
        tag, inner = m.group(1), m.group(2).strip()
        left, right = DELIMS[tag]
        if not (inner.startswith(left) and inner.endswith(right)) or "<" in inner:
            raise MathError(f"{where}: unexpected math markup {m.group(0)[:120]!r}")
        found.append((html.unescape(inner[len(left):-len(right)]).strip(), tag == "div"))
    if not found:
        return content
    rendered = iter(typeset(found, where))
    return ARITHMATEX.sub(
        lambda m: f'<{m.group(1)} class="arithmatex" data-search-exclude>{next(rendered)}</{m.group(1)}>',
        content,
    )


def add_stylesheet(output: str) -> str:
    """A page with typeset formulas gets MathJax's SVG stylesheet in its ``<head>``."""
    if "arithmatex" in output and math_css.get("css") and 'class="arithmatex"' in output:
        css = re.sub(r"\s+", " ", math_css["css"]).strip()
        output = output.replace("</head>", f'<style id="mathjax-svg">{css}</style></head>', 1)
    return output
