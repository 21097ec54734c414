"""mkdocs hooks for accessibility and search in the reader's language (issue 15).

- every page: words of the other language carry ``lang`` (``simtdocs.docs.a11y.mark_languages``),
  and the prose's straight quotes are typographic ones (``curly_quotes``, issue 27);
  pages of a non-default language load their own search index;
- after the last language is built: one search index per language.
The code lives in ``simtdocs.docs.a11y``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from mkdocs.plugins import event_priority

from simtdocs.docs.a11y import (
    curly_quotes,
    mark_languages,
    page_language,
    point_search_at_language,
    write_search_indexes,
)

log = logging.getLogger("mkdocs.hooks.a11y")


def _i18n(config):
    return config.plugins.get("i18n")


def _languages(config) -> tuple[str, list[str]]:
    i18n = _i18n(config)
    if i18n is None:
        return config.theme.get("language", "en"), []
    default = i18n.default_language
    return default, [lang for lang in i18n.build_languages if lang != default]


def on_post_page(output, page, config, **kwargs):
    lang = page_language(output)
    output = mark_languages(curly_quotes(output), lang)
    default, others = _languages(config)
    if lang in others and page.url.startswith(f"{lang}/"):
        output = point_search_at_language(output, lang)
    return output


@event_priority(-110)  # after mkdocs-static-i18n (-100) wrote the index of all languages
def on_post_build(config, **kwargs):
    i18n = _i18n(config)
    if i18n is not None and getattr(i18n, "building", False):
        return  # an inner build of one language: the combined index is not written yet
    default, others = _languages(config)
    counts = write_search_indexes(Path(config.site_dir), default, others)
    if counts:
        log.info("search index per language: %s", ", ".join(f"{k} {v} entries" for k, v in counts.items()))
