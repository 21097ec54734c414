"""Numbered figures and tables, cross-references by label, marked output and reading time.

The code is ``simtdocs.docs.numbering``; this file only connects it to mkdocs. It runs after
the build glue (``hooks/site_hooks.py``), on the page it produced.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from mkdocs.exceptions import PluginError

from simtdocs.docs import numbering

_labels: dict[tuple[str, str], dict[str, str]] = {}  # (language, page url) -> {label: "Figure 5.2"}


def _lang(page, config) -> str:
    return getattr(page.file, "locale", None) or config["theme"]["language"] or "en"


def _lecture(page) -> bool:
    src = page.file.src_uri
    return src.endswith(".md") and not src.startswith(("index", "glossary"))


def on_page_markdown(markdown, page, config, files, **kwargs):
    if not page.file.src_uri.endswith(".md"):
        return markdown
    source = Path(page.file.abs_src_path).read_text("utf-8")
    return numbering.mark_output(source, markdown, _lang(page, config))


def on_page_content(html, page, config, files, **kwargs):
    if not page.file.src_uri.endswith(".md"):
        return html
    lang = _lang(page, config)
    try:
        html, labels = numbering.number(html, lang)
    except ValueError as exc:
        raise PluginError(f"docs/{page.file.src_uri}: {exc}") from None
    _labels[(lang, page.url)] = labels
    if _lecture(page):
        en = numbering.english_source(page.file.abs_src_path)
        if en is not None:
            minutes = numbering.reading_minutes(en)
            html = html.replace("</h1>", "</h1>\n" + numbering.reading_time_html(minutes, lang), 1)
    return html


def on_post_page(output, page, config, **kwargs):
    """Fill empty links to labels, on this page or another (all pages are rendered by now)."""
    if not page.file.src_uri.endswith(".md"):
        return output
    lang = _lang(page, config)

    def resolve(href: str):
        path, _, label = href.partition("#")
        if not path:
            url = page.url
        else:
            base = page.url if page.url.endswith("/") else posixpath.dirname(page.url) + "/"
            url = posixpath.normpath(posixpath.join(base, path)).lstrip("./") + "/"
            url = "" if url in ("/", "./") else url
        return _labels.get((lang, url), {}).get(label)

    try:
        return numbering.fill_refs(output, resolve)
    except ValueError as exc:
        raise PluginError(f"docs/{page.file.src_uri}: {exc}") from None
