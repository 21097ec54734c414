"""What a code block can put on the page: bilingual text, tables, figures, glued values.

Under the site build a :class:`Recorder` is active: :func:`show` and :func:`glue`
record *objects*, and the build renders them once per language, late, so one run
of the code feeds the Chinese and the English page. Anywhere else (pytest, plain
``python snippets/...``) :func:`show` prints the English Markdown and
:func:`glue` just remembers the value.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import html
import io
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

LANGS = ("zh", "en")
_language = contextvars.ContextVar("simtdocs_language", default="en")
_recorder: contextvars.ContextVar["Recorder | None"] = contextvars.ContextVar(
    "simtdocs_recorder", default=None
)


@contextlib.contextmanager
def language(lang: str):
    """Render in ``lang`` inside the ``with`` block (``str(T)`` follows it)."""
    token = _language.set(lang)
    try:
        yield
    finally:
        _language.reset(token)


class T:
    """A bilingual string. ``str(T)`` is the current render language, English by default."""

    __slots__ = ("zh", "en")

    def __init__(self, zh: str, en: str):
        self.zh, self.en = zh, en

    def pick(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en

    def __str__(self) -> str:
        return self.pick(_language.get())

    def __repr__(self) -> str:
        return f"T({self.zh!r}, {self.en!r})"

    def __eq__(self, other):
        return isinstance(other, T) and (self.zh, self.en) == (other.zh, other.en)

    def __hash__(self):
        return hash((self.zh, self.en))


def text(value: Any, lang: str, fmt: str | None = None) -> str:
    """Format one value for ``lang``: T picks its language, numbers use ``fmt``."""
    if isinstance(value, T):
        return value.pick(lang)
    if fmt:
        return format(value, fmt)
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        return f"{float(value):,.4g}"
    with language(lang):
        return str(value)


@dataclass
class Table:
    """A Markdown table; headers and cells may be :class:`T`.

    ``fmt`` is one format spec per column (or ``None``), e.g. ``[None, ",", ".1%"]``.
    """

    rows: Sequence[Sequence[Any]]
    columns: Sequence[Any]
    fmt: Sequence[str | None] | None = None
    align: str | None = None  # one of l/r/c per column, e.g. "lr"

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
        return self.render(_language.get())

    @classmethod
    def counters(cls, stats, labels=None) -> "Table":
        """The headline counters of a launch (``stats.counters()``) with their names."""
        if labels is None:
            import simtdocs

            labels = simtdocs.LABELS
        rows = []
        for key, value in stats.counters().items():
            zh, en = labels.get(key, (key, key))
            if key.endswith("efficiency"):  # a ratio reads better as a percentage
                value = f"{value:.1%}"
            rows.append((T(zh, en), f"`{key}`", value))
        return cls(rows, [T("计数器", "Counter"), T("键", "Key"), T("值", "Value")], align="llr")


# -- figures -----------------------------------------------------------------

CJK_FONTS = ("WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Noto Sans CJK SC", "Noto Sans CJK JP")
_configured = False


def configure_matplotlib() -> None:
    """SVG that is byte-identical between builds and draws Chinese with a real font.

    Text becomes paths (the reader needs no font), the hash salt fixes the ids and
    the date is dropped at save time. The CJK font must come from the setup
    (``make setup`` installs fonts-wqy-microhei): without it matplotlib would draw
    empty boxes, so we stop with an install hint instead.
    """
    global _configured
    if _configured:
        return
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
    if not found:
        raise RuntimeError(
            "No CJK font for Chinese figure labels. Install one with "
            "`apt-get install fonts-wqy-microhei` (or run `make setup`)."
        )
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
    _configured = True


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


@dataclass
class Figure:
    """A matplotlib figure drawn per language.

    ``draw`` is a function returning a matplotlib figure; it is called once per
    language with ``str(T(...))`` following that language, so labels can be
    written ``ax.set_xlabel(str(T("线程", "thread")))``. A ready figure object
    is accepted too (then both languages get the same picture).
    """

    draw: Callable[[], Any] | Any
    alt: Any = ""
    caption: Any = None
    _svg: dict = field(default_factory=dict, repr=False)

    def svg(self, lang: str) -> bytes:
        if lang not in self._svg:
            configure_matplotlib()
            import matplotlib.pyplot as plt

            with language(lang):
                fig = self.draw() if callable(self.draw) else self.draw
                self._svg[lang] = svg_bytes(fig)
            if callable(self.draw):
                plt.close(fig)
        return self._svg[lang]

    def render(self, lang: str) -> str:
        data = base64.b64encode(self.svg(lang)).decode("ascii")
        alt = html.escape(text(self.alt, lang), quote=True)
        cap = ""
        if self.caption is not None:
            cap = f"<figcaption>{html.escape(text(self.caption, lang))}</figcaption>"
        # One line of HTML: it stays inside admonitions and tabs at any indentation.
        return (
            f'<figure class="simt-figure"><img src="data:image/svg+xml;base64,{data}" '
            f'alt="{alt}">{cap}</figure>'
        )

    def _repr_markdown_(self) -> str:
        return self.render(_language.get())


def render(obj: Any, lang: str) -> str:
    """Markdown for one shown object in ``lang``."""
    if isinstance(obj, (Table, Figure)):
        return obj.render(lang)
    if isinstance(obj, T):
        return obj.pick(lang)
    with language(lang):
        if hasattr(obj, "_repr_markdown_"):
            return obj._repr_markdown_()
        return str(obj)


# -- recording -----------------------------------------------------------------


@dataclass
class Glued:
    value: Any
    fmt: str | None = None

    def render(self, lang: str) -> str:
        return text(self.value, lang, self.fmt)


class Recorder:
    """What one block produced, in order: stdout text and shown objects, plus glue."""

    def __init__(self):
        self.items: list[Any] = []  # str (stdout) or shown objects
        self.glue: dict[str, Glued] = {}

    def write(self, s: str) -> int:  # the block's sys.stdout
        if self.items and isinstance(self.items[-1], str):
            self.items[-1] += s
        else:
            self.items.append(s)
        return len(s)

    def flush(self) -> None:
        pass

    def render(self, lang: str) -> str:
        parts = []
        for item in self.items:
            parts.append(item if isinstance(item, str) else "\n" + render(item, lang) + "\n")
        return "".join(parts).strip("\n")


_glued_outside: dict[str, Glued] = {}


def show(obj: Any) -> None:
    """Put ``obj`` on the page (Table, Figure, T, or anything with ``_repr_markdown_``)."""
    rec = _recorder.get()
    if rec is not None:
        rec.items.append(obj)
    elif _in_notebook():
        from IPython.display import HTML, Markdown, display

        md = render(obj, "en")
        display(HTML(md) if isinstance(obj, Figure) else Markdown(md))
    elif isinstance(obj, Figure):
        # A terminal cannot show SVG: draw it anyway (so a broken figure still fails) and
        # print one line instead of a page of base64.
        size = len(obj.svg("en"))
        print(f"[figure: {text(obj.caption or obj.alt, 'en')} ({size:,} bytes of SVG on the site)]")
        print()
    else:
        print(render(obj, "en"))
        print()


def _in_notebook() -> bool:
    """True in a Jupyter kernel (the executed notebook pages): display rich output there."""
    import sys

    ip = sys.modules.get("IPython")
    shell = ip.get_ipython() if ip is not None and hasattr(ip, "get_ipython") else None
    return shell is not None and shell.__class__.__name__ == "ZMQInteractiveShell"


def glue(name: str, value: Any, fmt: str | None = None) -> None:
    """Make ``value`` available to the page prose as ``{{ name }}``."""
    if not name.isidentifier():
        raise ValueError(f"glue name must be an identifier, got {name!r}")
    if fmt is not None:
        format(value, fmt)  # fail here, in the block, not later in the prose
    g = Glued(value, fmt)
    rec = _recorder.get()
    (rec.glue if rec is not None else _glued_outside)[name] = g


@contextlib.contextmanager
def recording(rec: Recorder):
    token = _recorder.set(rec)
    try:
        with contextlib.redirect_stdout(rec):
            yield rec
    finally:
        _recorder.reset(token)
