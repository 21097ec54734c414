"""What a code block can put on the page: bilingual text, tables, figures, glued values.

This is the reader's API (``from simtdocs.docs import show, glue, _, Table, Figure``):
it needs numpy, and matplotlib for figures, nothing else.

On the site a :class:`Recorder` is active while a block runs: :func:`show` and
:func:`glue` turn their argument into text for every site language *at once*, from
the values of that moment (a figure's ``draw`` runs once per language), so a later
change to the object cannot change what the page shows. Anywhere else (a plain
``python snippets/...``, pytest) :func:`show` prints the English Markdown and
:func:`glue` just checks and remembers the value.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import html
import io
import math
import numbers
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from simtdocs.i18n import Listing, Msg, _, current_language, language
from simtdocs.i18n import _plain_str_error, _strict

LANGS = ("zh", "en")
NAMES = {"zh": "Chinese", "en": "English"}
_recorder: contextvars.ContextVar["Recorder | None"] = contextvars.ContextVar("simtdocs_recorder", default=None)
# Where show() sends objects when the site executes a companion notebook (notebooks.execute).
_display_sink: contextvars.ContextVar[Callable[[Any], None] | None] = contextvars.ContextVar(
    "simtdocs_display_sink", default=None)


class AuthoringError(Exception):
    """A display object or glue was used in a way that would put a wrong page on the site."""


TEXT = (Msg, Listing)  # what reads differently per language


def plain_number(x: float, digits: int = 4) -> str:
    """``digits`` significant digits, thousands separated, never in scientific notation."""
    if not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    decimals = max(digits - 1 - math.floor(math.log10(abs(x))), 0)
    s = f"{x:,.{decimals}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def text(value: Any, lang: str, fmt: str | None = None) -> str:
    """Format one value for ``lang``: a label (``_()``) is translated, numbers use ``fmt``.

    Without ``fmt`` an integer gets thousands separators and a float four
    significant digits (``12345.6`` -> ``12,346``, ``0.0123456`` -> ``0.01235``).
    """
    if isinstance(value, TEXT):
        return value.pick(lang)
    if fmt:
        return format(value, fmt)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        return plain_number(float(value))
    with language(lang):
        return str(value)


@dataclass
class Table:
    """A Markdown table; headers and cells may be labels (``_("…")``), shown per language.

    ``fmt`` is one format spec per column (or ``None``), e.g. ``[None, ",", ".1%"]``;
    ``align`` one of ``l``/``r``/``c`` per column, e.g. ``"lrr"``. Every row must
    have one cell per column.
    """

    rows: Sequence[Sequence[Any]]
    columns: Sequence[Any]
    fmt: Sequence[str | None] | None = None
    align: str | None = None

    def __post_init__(self):
        n = len(self.columns)
        if n == 0:
            raise AuthoringError("Table needs at least one column")
        self.rows = [list(r) for r in self.rows]
        for i, r in enumerate(self.rows):
            if len(r) != n:
                raise AuthoringError(f"Table row {i} has {len(r)} cells for {n} columns: {r!r}")
        if self.fmt is not None:
            if len(self.fmt) != n:
                raise AuthoringError(f"Table fmt has {len(self.fmt)} entries for {n} columns: {self.fmt!r}")
            for i, f in enumerate(self.fmt):
                for r in self.rows:
                    if f and not isinstance(r[i], TEXT):
                        format(r[i], f)  # a bad spec fails here, in the block
        if self.align is not None and (len(self.align) != n or set(self.align) - set("lrc")):
            raise AuthoringError(f"Table align must be one of l/r/c per column ({n}), got {self.align!r}")

    def render(self, lang: str) -> str:
        fmts = list(self.fmt or [None] * len(self.columns))

        def cell(v, f):
            return text(v, lang, f).replace("|", r"\|").replace("\n", " ")

        head = "| " + " | ".join(cell(c, None) for c in self.columns) + " |"
        align = self.align or "l" + "r" * (len(self.columns) - 1)
        rule = "|" + "|".join({"l": ":--", "r": "--:", "c": ":-:"}[a] for a in align) + "|"
        body = ["| " + " | ".join(cell(v, f) for v, f in zip(r, fmts)) + " |" for r in self.rows]
        return "\n".join([head, rule, *body])

    def _repr_markdown_(self) -> str:
        return self.render(current_language())

    @classmethod
    def counters(cls, stats, labels=None) -> "Table":
        """The headline counters of a launch (``stats.counters()``) with their names."""
        if labels is None:
            import simtdocs

            labels = simtdocs.LABELS
        rows = []
        for key, value in stats.counters().items():
            if key.endswith("efficiency"):  # a ratio reads better as a percentage
                value = f"{value:.1%}"
            rows.append((labels.get(key, key), f"`{key}`", value))
        return cls(rows, [_("Counter"), _("Key"), _("Value")], align="llr")


# -- figures -----------------------------------------------------------------

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


def render(obj: Any, lang: str) -> str:
    """Markdown for one shown object in ``lang``; raises for objects it cannot show faithfully."""
    if isinstance(obj, (Table, Figure)):
        return obj.render(lang)
    if isinstance(obj, TEXT):
        return obj.pick(lang)
    if isinstance(obj, str):
        return obj
    if isinstance(obj, numbers.Number):
        return text(obj, lang)
    if type(obj).__module__ == "numpy" and type(obj).__name__ == "ndarray":
        import numpy as np

        body = np.array2string(obj, separator=", ", threshold=200)
        return f"```text\n{body}\n```"
    with language(lang):
        if hasattr(obj, "_repr_markdown_"):
            return str(obj._repr_markdown_())
        if hasattr(obj, "_repr_html_"):
            return str(obj._repr_html_())
    raise AuthoringError(
        f"show() cannot put a {type(obj).__name__} on the page (it would print as {object.__repr__(obj)!r}): "
        "show a Table, Figure, label _(...), str, number, numpy array, or an object with _repr_markdown_/_repr_html_"
    )


# -- recording ------------------------------------------------------------------


@dataclass
class Glued:
    """A glued value, already rendered per language; ``line`` is where glue() was called.

    ``value`` is the object itself, for tests that run a script in-process; the site's
    cache keeps only the text.
    """

    text: dict[str, str]
    line: tuple[str, int] | None = None
    value: Any = None

    def render(self, lang: str) -> str:
        return self.text[lang]


class Recorder:
    """What one block produced, in order: printed chunks and shown objects, plus glue.

    Shown objects and glued values are rendered for every language when they are
    recorded; nothing of the block's namespace is kept.
    """

    def __init__(self, langs: Sequence[str] = LANGS):
        self.langs = tuple(langs)
        self.items: list[str | dict[str, str]] = []  # str: printed text; dict: lang -> Markdown
        self.glue: dict[str, Glued] = {}

    def write(self, s: str) -> int:  # the block's sys.stdout
        if self.items and isinstance(self.items[-1], str):
            self.items[-1] += s
        else:
            self.items.append(s)
        return len(s)

    def flush(self) -> None:
        pass

    def show(self, obj: Any) -> None:
        out = {}
        for lang in self.langs:
            try:
                out[lang] = render(obj, lang)
            except Exception as exc:
                exc.add_note(f"(while rendering the {NAMES.get(lang, lang)} version of the shown object)")
                raise
        self.items.append(out)

    def add_glue(self, name: str, value: Any, fmt: str | None, line) -> None:
        if name in self.glue:
            raise AuthoringError(f"glue({name!r}) twice in one block: a page shows one value per name")
        self.glue[name] = Glued({lang: text(value, lang, fmt) for lang in self.langs}, line, value)

    def output(self, lang: str) -> list[tuple[str, str]]:
        """``("print", text)`` and ``("show", markdown)`` items for ``lang``."""
        return [("print", i) if isinstance(i, str) else ("show", i[lang]) for i in self.items]


_glued_outside: dict[str, Any] = {}


def show(obj: Any) -> None:
    """Put ``obj`` on the page: a Table, Figure, label ``_(...)``, str, number, numpy array, or
    an object with ``_repr_markdown_``/``_repr_html_``."""
    rec = _recorder.get()
    sink = _display_sink.get()
    if rec is not None:
        rec.show(obj)
    elif sink is not None:
        sink(obj)
    elif _in_notebook():
        from IPython.display import HTML, Markdown, display

        md = render(obj, current_language())
        display(HTML(md) if isinstance(obj, Figure) else Markdown(md))
    elif isinstance(obj, Figure):
        # A terminal cannot show SVG: draw it anyway (so a broken figure still fails) and
        # print one line instead of a page of base64.
        lang = current_language()
        size = len(obj.svg(lang))
        print(f"[figure: {text(obj.caption or obj.alt, lang)} ({size:,} bytes of SVG on the site)]")
        print()
    else:
        print(render(obj, current_language()))
        print()


def _in_notebook() -> bool:
    """True in a Jupyter kernel (the executed notebook pages, Colab's shell is a subclass):
    display rich output there."""
    ip = sys.modules.get("IPython")
    shell = ip.get_ipython() if ip is not None and hasattr(ip, "get_ipython") else None
    return shell is not None and any(c.__name__ == "ZMQInteractiveShell" for c in type(shell).__mro__)


def glue(name: str, value: Any, fmt: str | None = None) -> None:
    """Make ``value`` available to the page prose as ``{{ name }}``.

    ``fmt`` is a format spec (``","``, ``".1%"``); without it integers get thousands
    separators and floats four significant digits.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"glue name must be an identifier, got {name!r}")
    if fmt is not None:
        format(value, fmt)  # fail here, in the block, not later in the prose
    rec = _recorder.get()
    if rec is not None:
        caller = sys._getframe(1)
        rec.add_glue(name, value, fmt, (caller.f_code.co_filename, caller.f_lineno))
    else:
        text(value, "en", fmt)
        _glued_outside[name] = value


@contextlib.contextmanager
def recording(rec: Recorder):
    """Make ``rec`` receive the block's show(), glue() and printed text."""
    tokens = [_recorder.set(rec), _strict.set(True), _plain_str_error.set(
        "while the block ran: the same text would appear on the Chinese and the English page. "
        "Use show(_(...)) for a line of text, glue(name, _(...)) for the prose, or a Table cell.")]
    try:
        with contextlib.redirect_stdout(rec):
            yield rec
    finally:
        for t in reversed(tokens):
            t.var.reset(t)
