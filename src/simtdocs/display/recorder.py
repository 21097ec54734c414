"""What a code block can put on the page: labels, tables, figures, glued values.

:func:`show` and :func:`glue` of the reader's API (``from simtdocs.display import show, glue``):
they need numpy, and matplotlib for figures, nothing else.

On the site a :class:`Recorder` is active while a block runs: :func:`show` and
:func:`glue` turn their argument into text for every site language *at once*, from
the values of that moment (a figure's ``draw`` runs once per language), so a later
change to the object cannot change what the page shows. Anywhere else (a plain
``python snippets/...``, pytest) :func:`show` prints the English Markdown and
:func:`glue` just checks and remembers the value.
"""

from __future__ import annotations

import contextlib
import contextvars
import numbers
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from simtdocs.i18n import _plain_str_error, _strict, current_language, language

# Text and tables (text.py) and figures (figures.py) are what show() renders; the recorder
# re-exports what the executor and the notebook runner use of them.
from .figures import Figure, configure_matplotlib, figure, figure_markdown, svg_bytes  # noqa: F401
from .text import TEXT, AuthoringError, Table, plain_number, text  # noqa: F401

LANGS = ("zh", "en")
NAMES = {"zh": "Chinese", "en": "English"}
_recorder: contextvars.ContextVar["Recorder | None"] = contextvars.ContextVar("simtdocs_recorder", default=None)
# Where show() sends objects when the site executes a companion notebook (simtdocs_site.notebook_runner.execute).
_display_sink: contextvars.ContextVar[Callable[[Any], None] | None] = contextvars.ContextVar(
    "simtdocs_display_sink", default=None)


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
        # A terminal cannot show SVG: say what the figure shows instead of drawing it for
        # nobody (the site and the notebooks draw it, and fail there if it is broken).
        print(f"[figure: {text(obj.caption or obj.alt, current_language())} (drawn on the site and in the notebook)]")
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
