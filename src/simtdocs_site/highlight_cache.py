"""Code highlighting remembered between the two languages and between builds.

Every code block is on a Chinese and an English page, and most do not change from one
build to the next, yet pymdownx has Pygments highlight each one on every page of every
build: a third of a warm build. :func:`install` wraps ``pymdownx.highlight.Highlight.
highlight`` so that its HTML is kept, in memory and under ``.cache/highlight/``, keyed by
everything it depends on: the code, the language, every argument (the block's number on
the page included, which names its line anchors), the highlighter's settings and the
versions of Pygments and pymdownx. A damaged entry is recomputed; ``make clean`` deletes
them. Relies on that one method's signature; if pymdownx changes it, nothing is cached.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

_memory: dict[str, str] = {}


def _key(self, args: tuple, kwargs: dict) -> str:
    import pygments
    import pymdownx

    settings = sorted((k, repr(v)) for k, v in vars(self).items() if k != "md")
    raw = repr((args, sorted(kwargs.items()), settings, pygments.__version__, pymdownx.__version__))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def install(cache_dir: Path) -> None:
    """Remember pymdownx's highlighted blocks under ``cache_dir`` (idempotent)."""
    try:
        from pymdownx.highlight import Highlight
    except ImportError:
        return
    original = getattr(Highlight.highlight, "simtdocs_original", Highlight.highlight)

    def highlight(self, *args, **kwargs):
        if kwargs.get("inline") or (len(args) > 7 and args[7]):  # inline code: an element, not text
            return original(self, *args, **kwargs)
        key = _key(self, args, kwargs)
        if key in _memory:
            return _memory[key]
        path = cache_dir / key[:2] / f"{key}.html"
        try:
            html = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            html = original(self, *args, **kwargs)
            if isinstance(html, str):
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(".tmp")
                tmp.write_text(html, encoding="utf-8")
                tmp.replace(path)  # whole or absent: a build stopped halfway leaves no half entry
        _memory[key] = html
        return html

    highlight.simtdocs_original = original
    Highlight.highlight = highlight
