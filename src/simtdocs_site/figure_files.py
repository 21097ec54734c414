"""Figures as files: each figure a page shows is a lazily loaded SVG file under ``assets/figures/``.

A block's figure reaches the page as an SVG inline in a ``data:`` URI (self-contained in the
block cache and in notebooks). On the site each becomes a file named by its content (a figure
without text is one file for both languages), trimmed (:func:`trim_svg`), linked with
``loading="lazy"`` and its width and height so nothing jumps while it arrives.
"""

from __future__ import annotations

import base64
import hashlib
import posixpath
import re
from pathlib import Path

from . import cache_files


class FigureError(ValueError):
    """A figure that cannot be shipped as a file; the message starts with the page."""


# A figure as simtdocs.display ships it (an <img> whose src is an SVG data: URI), and the
# link mkdocs-glightbox wraps around it.
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



def relative_url(url: str, page_url: str) -> str:
    """``url`` (a path in the site) relative to the page at ``page_url``, as MkDocs'
    ``get_relative_url`` makes it (a last part with a dot is a file, not a folder)."""
    def parts(path: str) -> list[str]:
        path = posixpath.normpath("/" + path)[1:]
        return path.split("/") if path else []

    folder, _, last = page_url.rpartition("/")
    here, there = parts(folder if "." in last else page_url), parts(url)
    common = 0
    for a, b in zip(here, there):
        if a != b:
            break
        common += 1
    rel = "/".join([".."] * (len(here) - common) + there[common:]) or "."
    return rel + "/" if url.endswith("/") else rel


def figures_as_files(content: str, page_url: str, site_dir: Path, where: str) -> str:
    """Write each inline SVG figure to ``assets/figures/<hash>.svg``; the page links it, lazily.
    The link that opens it full size (mkdocs-glightbox wraps each figure in one) points at the
    same file."""

    def file_for(data: str) -> tuple[str, str]:
        key = hashlib.sha256((TRIM_VERSION + data).encode()).hexdigest()[:16]
        cached = cache_files.CACHE / "figures" / f"{key}.svg"  # trimming is the slow part: once per figure
        if not cached.is_file():
            cache_files.write(cached, trim_svg(base64.b64decode(data).decode("utf-8")))
        svg = cached.read_text(encoding="utf-8")
        name = f"{FIGURES}/{key}.svg"
        path = site_dir / name
        if not path.is_file():
            cache_files.write(path, svg)
        return name, svg

    def one(m: re.Match) -> str:
        name, svg = file_for(m.group(2))
        size = svg_size_px(svg)
        if size is None:
            raise FigureError(f"{where}: a figure's SVG has no width/height: {svg[:200]!r}")
        rest = re.sub(r'\s(?:loading|decoding|width|height)="[^"]*"', "", m.group(1) + m.group(3))
        return (f'<img src="{relative_url(name, page_url)}"{rest} loading="lazy" decoding="async" '
                f'width="{size[0]}" height="{size[1]}">')

    def link(m: re.Match) -> str:
        return f'href="{relative_url(file_for(m.group(1))[0], page_url)}"'

    return DATA_HREF.sub(link, DATA_SVG.sub(one, content))

