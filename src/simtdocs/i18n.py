"""Text in the reader's language: English in the code, other languages in gettext catalogs.

Code carries one string per label, in English: ``_("sectors")``, or with fields,
``_("stride {s}", s=3)``. The result is a :class:`Msg` that stays untranslated until
it is shown: a table, figure or glued value is rendered once per site language from
the same run, each with its language's catalog. The catalogs are standard gettext
files, ``simtdocs/locale/<lang>/LC_MESSAGES/<domain>.po`` (compiled to ``.mo``), one
domain per lecture plus ``simtdocs`` for the library's own words; ``make translations``
extracts the strings with Babel and updates them, and ``tests/test_i18n.py`` fails on a
string without a translation, an entry no code uses, or a ``.mo`` older than its ``.po``.

Outside the site a ``Msg`` reads in English; ``set_language("zh")`` (or the environment
variable ``SIMTDOCS_LANG=zh``) switches a script or notebook to Chinese.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import gettext
import os
import string
from pathlib import Path
from typing import Any

SOURCE_LANGUAGE = "en"
LANGUAGES = ("zh", "en")
LOCALE_DIR = Path(__file__).parent / "locale"
# One catalog per lecture (the folder under snippets/) and one for the library itself.
DOMAINS = ("simtdocs", "home", "p2", "exec_model", "silicon")

_language: contextvars.ContextVar[str | None] = contextvars.ContextVar("simtdocs_language", default=None)
_strict: contextvars.ContextVar[bool] = contextvars.ContextVar("simtdocs_strict_translation", default=False)
# Set while a site block runs: str(Msg) there would put one language on both pages.
_plain_str_error: contextvars.ContextVar[str | None] = contextvars.ContextVar("simtdocs_plain_str", default=None)
_default = os.environ.get("SIMTDOCS_LANG", SOURCE_LANGUAGE)


class MissingTranslation(LookupError):
    """A label has no entry in the catalog of the language being rendered."""


class LabelAsText(TypeError):
    """A label turned into text (``print``, an f-string) where several languages are being
    rendered at once: the text would be one language for all of them."""


def set_language(lang: str) -> None:
    """The language labels read in outside a rendering (a script, a notebook)."""
    global _default
    _check(lang)
    _default = lang


@contextlib.contextmanager
def language(lang: str, *, strict: bool | None = None):
    """Render in ``lang`` inside the ``with`` block. With ``strict`` a label missing from
    the catalog is an error (the site build) instead of falling back to English."""
    _check(lang)
    tokens = [_language.set(lang)]
    if strict is not None:
        tokens.append(_strict.set(strict))
    try:
        yield
    finally:
        for t in tokens:
            t.var.reset(t)


def current_language() -> str:
    return _language.get() or _default


def _check(lang: str) -> None:
    if lang not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, got {lang!r}")


@functools.cache
def catalogs(lang: str) -> tuple[gettext.NullTranslations, ...]:
    """The compiled catalogs of ``lang``, one per domain that has one."""
    return tuple(gettext.translation(d, LOCALE_DIR, [lang], fallback=True) for d in DOMAINS)


def translate(msgid: str, lang: str) -> str:
    """``msgid`` in ``lang``; English (the source) when no catalog has it, unless strict."""
    if lang == SOURCE_LANGUAGE:
        return msgid
    for catalog in catalogs(lang):
        # Look the entry up, not gettext(): a translation may equal its msgid ("GPU").
        found = getattr(catalog, "_catalog", {}).get(msgid)
        if found:
            return found
    if _strict.get():
        raise MissingTranslation(
            f"no {lang} translation of {msgid!r}: run `make translations` and fill its msgstr in "
            f"src/simtdocs/locale/{lang}/LC_MESSAGES/<lecture>.po")
    return msgid


def translate_plural(singular: str, plural: str, n: int, lang: str) -> str:
    """The form of ``singular``/``plural`` for the count ``n`` in ``lang`` (gettext ``ngettext``)."""
    if lang != SOURCE_LANGUAGE:
        for catalog in catalogs(lang):
            if (singular, 0) in getattr(catalog, "_catalog", {}):
                return catalog.ngettext(singular, plural, n)
        if _strict.get():
            raise MissingTranslation(f"no {lang} translation of {singular!r} / {plural!r}: run `make translations`")
    return singular if n == 1 else plural


class Msg:
    """A label written once in English and shown in the reader's language.

    ``_("stride {s}", s=3)`` fills ``{s}`` after translating, so the catalog holds
    ``"stride {s}"`` once for every stride. A field may be another ``Msg``. ``str()``
    gives the language being rendered (inside a figure's ``draw``), else the default
    language (English unless :func:`set_language` said otherwise).
    """

    __slots__ = ("msgid", "plural", "fields")

    def __init__(self, msgid: str, plural: str | None = None, **fields: Any):
        if not isinstance(msgid, str) or not msgid.strip():
            raise TypeError(f"_() takes a non-empty English string, got {msgid!r}")
        for text in (msgid, plural or msgid):
            names = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
            if names != set(fields):
                raise TypeError(f"_({text!r}) has fields {sorted(names)} but was given {sorted(fields)}")
        if plural is not None and "n" not in fields:
            raise TypeError(f"_n({msgid!r}, {plural!r}) needs the count as n=")
        self.msgid, self.plural, self.fields = msgid, plural, fields

    @property
    def en(self) -> str:
        return self.pick(SOURCE_LANGUAGE)

    def pick(self, lang: str) -> str:
        if self.plural is None:
            text = translate(self.msgid, lang)
        else:
            text = translate_plural(self.msgid, self.plural, int(self.fields["n"]), lang)
        if not self.fields:
            return text
        return text.format(**{k: v.pick(lang) if hasattr(v, "pick") else v for k, v in self.fields.items()})

    def __str__(self) -> str:
        if _language.get() is None and _plain_str_error.get():
            raise LabelAsText(f"{self!r} was turned into text (print, f-string or str()) "
                            + _plain_str_error.get())
        return self.pick(current_language())

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.fields.items())
        if self.plural is not None:
            return f"_n({self.msgid!r}, {self.plural!r}{extra})"
        return f"_({self.msgid!r}{extra})"

    def __eq__(self, other):
        return isinstance(other, Msg) and (self.msgid, self.plural, self.fields) == (
            other.msgid, other.plural, other.fields)

    def __hash__(self):
        return hash((self.msgid, self.plural, tuple(sorted(self.fields.items(), key=lambda kv: kv[0]))))


class Listing:
    """Several labels joined the way the language joins a list (``", "`` or ``"、"``);
    usable as a field: ``_("Sectors per load: {loads}.", loads=Listing(items))``."""

    __slots__ = ("items",)

    def __init__(self, items):
        self.items = list(items)

    def pick(self, lang: str) -> str:
        sep = translate(", ", lang)  # TRANSLATORS: the separator between the items of a list
        return sep.join(v.pick(lang) if hasattr(v, "pick") else str(v) for v in self.items)

    def __str__(self) -> str:
        return self.pick(current_language())


def _(msgid: str, **fields: Any) -> Msg:
    """A label in English, translated when shown (see :class:`Msg`)."""
    return Msg(msgid, **fields)


def _n(singular: str, plural: str, **fields: Any) -> Msg:
    """A label whose English form depends on the count ``n``: ``_n("{n} sector", "{n} sectors", n=k)``."""
    return Msg(singular, plural, **fields)
