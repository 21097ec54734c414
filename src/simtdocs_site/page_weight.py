"""The page-weight step: what a page costs a reader on a slow link (issue 14).

Each page's HTML, as the Markdown became it (:func:`page_content`):

- figures become files (:mod:`.figure_files`);
- formulas are typeset to SVG (:mod:`.math_svg`);
- code blocks, diagrams and tables of numbers are left out of the search index
  (:mod:`.search_exclusion`).

Each finished page (:func:`finished_page`): the search wrappers are removed, the lightbox's
script no longer holds up the first paint (:func:`defer_glightbox`), a page with formulas
gets MathJax's stylesheet, and its Mermaid diagrams are drawn in Chromium (:mod:`.diagrams`).
:func:`close` ends the browser when the build is done. Nothing here imports MkDocs: errors
are :class:`PageWeightError` (the MkDocs plugin reports them as its own).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from . import diagrams, figure_files, math_svg, search_exclusion

#: What the steps below raise for a page that cannot be built as written.
PageWeightError = (math_svg.MathError, figure_files.FigureError, diagrams.DiagramError)


def page_content(content: str, page_url: str, site_dir: Path, where: str) -> str:
    """A page's HTML (``where`` names its source) with figures as files, formulas as SVG,
    and what search should skip marked."""
    content = figure_files.figures_as_files(content, page_url, site_dir, where)
    return search_exclusion.exclude_from_search(math_svg.typeset_page(content, where))


# mkdocs-glightbox puts its script in <head> without `defer` (it would hold up the first paint
# on a slow link) and starts it from an inline script at the end of <body>: defer the one and
# start the other when the document is parsed, after deferred scripts have run.
GLIGHTBOX_SCRIPT = re.compile(r'<script src="([^"]*glightbox\.min\.js)"></script>')
GLIGHTBOX_INIT = re.compile(r'(<script id="init-glightbox">)(.*?)(</script>)', re.S)


def defer_glightbox(output: str) -> str:
    output = GLIGHTBOX_SCRIPT.sub(r'<script src="\1" defer></script>', output)
    return GLIGHTBOX_INIT.sub(lambda m: f'{m.group(1)}document.addEventListener("DOMContentLoaded", () => {{'
                                        f'{m.group(2).strip()}}});{m.group(3)}', output)


def finished_page(output: str, page_dir: Path, where: str) -> str:
    """The finished page (its file will be in ``page_dir``) with its diagrams drawn."""
    output = defer_glightbox(search_exclusion.unwrap(output))
    output = math_svg.add_stylesheet(output)
    return diagrams.prerender_mermaid(output, page_dir, where)


def close(say: Callable[[str], None] | None = None) -> None:
    """End the build's browser; ``say`` hears why diagrams were left to the reader's browser."""
    diagrams.close_browser()
    if diagrams.no_browser:
        if say is not None:
            say(f"Mermaid diagrams are drawn in the reader's browser ({diagrams.no_browser[0]}); install "
                "Chromium and Playwright to draw them at build time.")
        diagrams.no_browser.clear()
