"""Figures drawn per language: matplotlib set up for byte-identical SVG with a CJK font."""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass
from typing import Any, Callable

from simtdocs.i18n import Msg, current_language, language

from .text import TEXT, AuthoringError, text


CJK_FONTS = ("WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Noto Sans CJK SC", "Noto Sans CJK JP")
_configured: list[str] | None = None  # the CJK fonts found, once configured


def configure_matplotlib(lang: str | None = None) -> None:
    """SVG that is byte-identical between builds and draws Chinese with a real font.

    Text becomes paths (the reader needs no font), the hash salt fixes the ids and
    the date is dropped at save time. Chinese labels need a CJK font from the setup
    (``make setup`` installs fonts-wqy-microhei): without it matplotlib would draw
    empty boxes, so drawing in Chinese (``lang``, else the current language) stops
    with an install hint instead. English figures draw without one (a fresh notebook
    service has none).
    """
    global _configured
    if _configured is None:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import font_manager

        def find():
            names = {f.name for f in font_manager.fontManager.ttflist}
            return [n for n in CJK_FONTS if n in names]

        found = find()
        if not found:  # the font may have been installed after matplotlib cached its list
            font_manager._load_fontmanager(try_read_cache=False)
            found = find()
        matplotlib.rcParams.update(
            {
                "svg.fonttype": "path",
                "svg.hashsalt": "simtdocs",
                # The CJK font first: it also has Latin glyphs, and per-glyph
                # fallback does not reach text converted to SVG paths.
                "font.family": "sans-serif",
                "font.sans-serif": [*found, "DejaVu Sans"],
                "axes.unicode_minus": False,
            }
        )
        _configured = found
    if not _configured and (lang or current_language()) == "zh":
        raise RuntimeError(
            "No CJK font for Chinese figure labels. Install one with "
            "`apt-get install fonts-wqy-microhei` (or run `make setup`)."
        )


def figure(*args, **kwargs):
    """``matplotlib.pyplot.subplots`` after :func:`configure_matplotlib`."""
    configure_matplotlib()
    import matplotlib.pyplot as plt

    return plt.subplots(*args, **kwargs)


def svg_bytes(fig) -> bytes:
    configure_matplotlib()
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buf.getvalue()


def figure_markdown(svg: bytes, alt: str, caption: str | None) -> str:
    """The page's Markdown for one drawn figure (the one place that decides how a figure ships)."""
    data = base64.b64encode(svg).decode("ascii")
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    # One line of HTML: it stays inside admonitions and tabs at any indentation.
    return (
        f'<figure class="simt-figure"><img src="data:image/svg+xml;base64,{data}" '
        f'alt="{html.escape(alt, quote=True)}">{cap}</figure>'
    )


def _label(value: Any, what: str):
    if not isinstance(value, Msg):
        raise AuthoringError(f"Figure {what} must be _(\"English text\") (translated by the catalog), got {value!r}")
    return value


@dataclass
class Figure:
    """A matplotlib figure drawn per language.

    ``draw`` is a function returning a matplotlib figure; it is called once per
    language with ``str(_(...))`` following that language, so labels can be
    written ``ax.set_xlabel(str(_("thread")))``. A ready figure object
    is accepted too (then both languages get the same picture). ``alt`` (what the
    figure shows, for readers who cannot see it) is required in both languages.
    """

    draw: Callable[[], Any] | Any
    alt: Any = None
    caption: Any = None

    def __post_init__(self):
        _label(self.alt, "alt text")
        if self.caption is not None and not isinstance(self.caption, (*TEXT, str)):
            raise AuthoringError(f"Figure caption must be _(\"English text\") or text, got {self.caption!r}")

    def svg(self, lang: str) -> bytes:
        """Draw now, in ``lang`` (every call draws: the figure shows the values of this moment)."""
        configure_matplotlib(lang)
        import matplotlib.pyplot as plt

        with language(lang):
            fig = self.draw() if callable(self.draw) else self.draw
            if not hasattr(fig, "savefig"):
                raise AuthoringError(f"Figure: draw() must return a matplotlib figure, got {fig!r}")
            data = svg_bytes(fig)
        if callable(self.draw):
            plt.close(fig)
        return data

    def render(self, lang: str) -> str:
        caption = None if self.caption is None else text(self.caption, lang)
        return figure_markdown(self.svg(lang), text(self.alt, lang), caption)

    def _repr_markdown_(self) -> str:
        return self.render(current_language())
