"""Every page of the built site, in both languages, as headless Chromium shows it.

Each test is parametrized by page (``zh:/p2/``, ``en:/en/p2/`` ...); the page is
opened once per session and every check reads what the browser saw then.
"""

from __future__ import annotations

import pytest


def listing(items) -> str:
    return "\n  " + "\n  ".join(items) if items else ""


def check(ok, message: str) -> None:
    """Fail with just the message: the page and what the browser saw."""
    if not ok:
        pytest.fail(message, pytrace=False)


def no_visit_problem(v) -> None:
    check(not v.problems, f"{v.page.id}: the browser visit went wrong:{listing(v.problems)}")


def test_page_loads_cleanly_and_only_from_localhost(page_visit):
    v = page_visit
    check(v.status == 200, f"{v.url} answered {v.status}")
    found = (
        [f"request to another host: {u}" for u in v.offsite()]
        + [f"uncaught exception: {e}" for e in v.page_errors]
        + [f"failed request: {r}" for r in v.failed_requests]
        + [f"console error: {c}" for c in v.console_errors]
    )
    check(not found, f"{v.page.id}:{listing(found)}")
    no_visit_problem(v)


def test_every_mermaid_block_became_an_svg(page_visit):
    v = page_visit
    m = v.mermaid
    check(v.inspected, f"{v.page.id}: page not inspected: {v.problems}")
    check(m["raw"] == 0, f"{v.page.id}: {m['raw']} Mermaid block(s) left as text")
    check(len(m["hosts"]) == v.mermaid_sources,
          f"{v.page.id}: {v.mermaid_sources} Mermaid block(s) in the HTML, {len(m['hosts'])} rendered")
    bad = []
    for i, h in enumerate(m["hosts"], 1):
        if not h["svg"]:
            bad.append(f"diagram {i}: no SVG, text {h['text']!r}")
        elif h["error"]:
            bad.append(f"diagram {i}: Mermaid drew its syntax-error diagram")
        elif h["width"] < 10 or h["height"] < 10:
            bad.append(f"diagram {i}: SVG is {h['width']:.0f}x{h['height']:.0f} px")
    check(not bad, f"{v.page.id}: Mermaid diagrams not drawn:{listing(bad)}")


def test_every_formula_is_typeset(page_visit):
    v = page_visit
    m = v.math
    check(v.inspected, f"{v.page.id}: page not inspected: {v.problems}")
    check(not m["untypeset"], f"{v.page.id}: formulas MathJax did not typeset:{listing(m['untypeset'])}")
    check(m["containers"] >= m["blocks"],
          f"{v.page.id}: {m['blocks']} formulas but {m['containers']} MathJax outputs")
    check(not m["raw"], f"{v.page.id}: raw TeX delimiters left next to typeset math:{listing(m['raw'])}")
    check(not m["errors"], f"{v.page.id}: TeX errors (MathJax merror):{listing(m['errors'])}")
    check(not m["stray"], f"{v.page.id}: TeX in the prose that never reached MathJax:{listing(m['stray'])}")


def test_every_figure_loaded_and_has_alt_text(page_visit):
    v = page_visit
    check(v.inspected, f"{v.page.id}: page not inspected: {v.problems}")
    bad = []
    for i, img in enumerate(v.images, 1):
        src = img["src"][:60] + ("..." if len(img["src"]) > 60 else "")
        if not img["complete"] or img["width"] <= 0:
            bad.append(f"image {i} did not load (naturalWidth {img['width']}): {src}")
        if not img["alt"]:
            bad.append(f"image {i} has no alt text: {src}")
    check(not bad, f"{v.page.id}:{listing(bad)}")


def test_language_switcher_lands_on_the_same_page(page_visit, site_pages):
    v = page_visit
    other_lang, other_path = v.page.other
    links = {link["lang"]: link for link in v.switcher.get("links", [])}
    check(other_lang in links, f"{v.page.id}: no language switcher link to {other_lang}: {links} {v.problems}")
    check(other_path in {p.path for p in site_pages}, f"{v.page.id}: the site has no {other_path}")
    href_path = "/" + links[other_lang]["resolved"].split("://", 1)[1].split("/", 1)[1].split("#")[0]
    check(href_path == other_path,
          f"{v.page.id}: switcher href {links[other_lang]['href']!r} points to {href_path}, not {other_path}")
    check("landed" in v.switcher, f"{v.page.id}: clicking the switcher failed: {v.problems}")
    check(v.switcher["landed"] == other_path,
          f"{v.page.id}: clicking '{other_lang}' landed on {v.switcher['landed']}, not {other_path}")
    check(v.switcher["status"] == 200, f"{v.page.id}: {other_path} answered {v.switcher['status']}")
    check((v.switcher["html_lang"] or "").startswith(other_lang),
          f"{v.page.id}: {other_path} says <html lang={v.switcher['html_lang']!r}>, not {other_lang}")


def test_light_and_dark_screenshots(page_visit):
    v = page_visit
    no_visit_problem(v)
    check(v.scheme_before == "default", f"{v.page.id}: opened in scheme {v.scheme_before!r}, not light")
    check(v.scheme_after == "slate", f"{v.page.id}: the toggle gave scheme {v.scheme_after!r}, not dark")
    for mode in ("light", "dark"):
        shot = v.shots.get(mode)
        check(shot and shot.is_file() and shot.stat().st_size > 5_000, f"{v.page.id}: no {mode} screenshot")
