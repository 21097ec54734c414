"""The comments of the code a reader sees, in the page's language (issue 27).

The code is written once, with English comments, and runs unchanged in both languages.
What a Chinese reader *sees* of it (a page's python blocks, the companion notebooks' code
cells, the puzzle skeletons) has its comments translated when it is rendered, from the
gettext catalog ``simtdocs/locale/zh/LC_MESSAGES/comments.po``: the msgid is the English
comment (consecutive full-line comments at one indentation are one msgid, their lines
joined by spaces), the msgstr its Chinese (a ``\\n`` in it breaks the comment into lines).
A comment without an entry fails the build, like a label without one.

``make translations`` collects the comments of every visible block into that catalog
(:func:`visible_code` says which), and ``tests/test_i18n.py`` fails on one left empty.
Nothing here touches what runs: the site runs the page's code, and :func:`localize` is
applied only to the text that is shown (:func:`install` wraps pymdownx's highlighter for
pages; :mod:`simtdocs_site.notebooks` applies it to a Chinese notebook's cells).
"""

from __future__ import annotations

import contextvars
import functools
import gettext
import re
from dataclasses import dataclass
from pathlib import Path

from simtdocs.i18n import LOCALE_DIR, SOURCE_LANGUAGE

DOMAIN = "comments"
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
# Comments that are notation, not prose: include and section markers, cell markers, tool
# directives, a shebang.
NOT_PROSE = re.compile(r"^#(!|\s*%%|.*-{1,}8<-{1,}\s*(\[|[\"'])|\s*(noqa|type:|pragma|fmt:)\b)")
LANGUAGES_SHOWN = {"python", "py", "python3", "ipython3", "pycon"}
# The C a page shows (``.cu`` files under snippets/): its ``//`` comments are translated the
# same way, from the same catalog. A ``/* */`` comment is refused there: one kind of comment,
# so every one of them is found.
C_LANGUAGES = {"cuda", "c", "cpp", "c++"}
C_NOT_PROSE = re.compile(r"^//\s*(-{1,}8<-{1,}\s*\[|clang-format|NOLINT)")


# The C a notebook compiles from a string (``simtdocs_site.notebooks.inline_c``): its comments
# are C's, inside a Python string.
C_STRING = re.compile(r'^(?P<name>[A-Z_][A-Z0-9_]*_CU) = r"""\n(?P<code>.*?)"""$', re.M | re.S)


def c_strings(source: str) -> list[tuple[str, str]]:
    """``(name, C code)`` of each ``NAME_CU = r\"\"\"...\"\"\"`` string of a notebook cell."""
    return [(m["name"], m["code"]) for m in C_STRING.finditer(source)]


def marker_of(language: str | None) -> str | None:
    """The comment marker of a fence's language (``#`` or ``//``), None for one not translated."""
    language = (language or "").lower()
    return "#" if language in LANGUAGES_SHOWN else "//" if language in C_LANGUAGES else None

# The language of the page being rendered (set by the MkDocs plugin around each page).
page_language: contextvars.ContextVar[str | None] = contextvars.ContextVar("simtdocs_page_language", default=None)


class MissingCommentTranslation(LookupError):
    """A comment of visible code has no entry in the page language's catalog."""


@dataclass
class Comment:
    """A comment: full-line ones span ``first..last`` (0-based lines), a trailing one a line's end."""

    text: str  # the msgid: the comment's words, lines joined by spaces
    first: int
    last: int
    column: int
    trailing: bool


def _comment_starts(lines: list[str], marker: str = "#") -> list[int | None]:
    """For each line, the column of a ``#`` (or C's ``//``) that starts a comment (outside
    strings and, in C, character literals), or None."""
    if marker == "//":
        return [_c_comment_start(line) for line in lines]
    out: list[int | None] = []
    triple: str | None = None
    for line in lines:
        found, i, quote = None, 0, None
        while i < len(line):
            if triple:
                if line.startswith("\\", i):
                    i += 2
                    continue
                if line.startswith(triple, i):
                    i += 3
                    triple = None
                    continue
                i += 1
                continue
            if quote:
                if line[i] == "\\":
                    i += 2
                    continue
                if line[i] == quote:
                    quote = None
                i += 1
                continue
            ch = line[i]
            if ch == "#":
                found = i
                break
            if ch in "'\"":
                if line.startswith(ch * 3, i):
                    triple = ch * 3
                    i += 3
                    continue
                quote = ch
            i += 1
        out.append(found)
    return out


def _c_comment_start(line: str) -> int | None:
    """The column of the ``//`` that starts a C comment on ``line``, or None."""
    i, quote = 0, None
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif line.startswith("//", i):
            return i
        elif line.startswith("/*", i):
            raise ValueError(f"a /* */ comment in shown C ({line.strip()!r}): write it with // so it is translated")
        i += 1
    return None


def find(code: str, marker: str = "#") -> list[Comment]:
    """The translatable comments of ``code`` (a block or a fragment: nothing is parsed);
    ``marker`` is ``#`` for Python, ``//`` for C."""
    lines = code.split("\n")
    found: list[Comment] = []
    not_prose = NOT_PROSE if marker == "#" else C_NOT_PROSE
    for n, (line, col) in enumerate(zip(lines, _comment_starts(lines, marker))):
        if col is None:
            continue
        raw = line[col:]
        words = raw[len(marker):].lstrip(marker[0]).strip()
        if not words or not_prose.match(raw) or CJK.search(raw) or not re.search(r"[A-Za-z]", words):
            continue
        trailing = bool(line[:col].strip())
        prev = found[-1] if found else None
        if (not trailing and prev and not prev.trailing and prev.last == n - 1 and prev.column == col):
            prev.text += " " + words
            prev.last = n
        else:
            found.append(Comment(words, n, n, col, trailing))
    return found


@functools.cache
def catalog(lang: str) -> dict[str, str]:
    path = LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"
    if not path.is_file():
        return {}
    with path.open("rb") as f:
        return dict(gettext.GNUTranslations(f)._catalog)  # noqa: SLF001 - the entries, msgid == msgstr allowed


def localize(code: str, lang: str, where: str = "", marker: str = "#") -> str:
    """``code`` with its comments in ``lang``; the same code, character for character, outside
    them. ``marker``: ``#`` (Python) or ``//`` (C)."""
    if lang == SOURCE_LANGUAGE:
        return code
    entries = catalog(lang)
    lines = code.split("\n")
    try:
        found = find(code, marker)
    except ValueError as exc:
        raise MissingCommentTranslation(f"{where + ': ' if where else ''}{exc}") from None
    for c in reversed(found):
        text = entries.get(c.text)
        if not text:
            raise MissingCommentTranslation(
                f"{where + ': ' if where else ''}the comment {c.text!r} of visible code has no {lang} "
                f"translation: run `make translations` and fill its msgstr in "
                f"src/simtdocs/locale/{lang}/LC_MESSAGES/{DOMAIN}.po")
        if c.trailing:
            line = lines[c.first]
            lines[c.first] = line[:c.column] + f"{marker} " + text.replace("\n", " ")
        else:
            pad = lines[c.first][:c.column]
            lines[c.first:c.last + 1] = [f"{pad}{marker} {part}".rstrip() for part in text.split("\n")]
    return "\n".join(lines)


# -- which code is visible ------------------------------------------------------------------


def visible_code() -> list[tuple[str, str]]:
    """``(where, code, marker)`` of every block a Chinese reader sees: the python and C fences
    of the Chinese pages (includes expanded) and the code cells of the companion notebooks
    (the C they compile from a string included)."""
    from .fences import find_fences
    from .notebooks import build_notebook, scripts, setup_cell
    from simtdocs.snippets import expand_snippets, repo_root

    root = repo_root()
    out = []
    for page in sorted((root / "docs").rglob("*.md")):
        if page.name.endswith(".en.md"):
            continue
        rel = page.relative_to(root).as_posix()
        for f in find_fences(page.read_text(encoding="utf-8").split("\n")):
            marker = marker_of(f.info.split()[0] if f.info.split() else None)
            if marker:
                out.append((f"{rel}:{f.start + 1}", expand_snippets(f.code), marker))
    setup = setup_cell(SOURCE_LANGUAGE, None)
    for script in scripts():
        nb = build_notebook(script, SOURCE_LANGUAGE, "comments", translate_comments=False)
        rel = script.relative_to(root).as_posix()
        for i, cell in enumerate(nb.cells):
            if cell["cell_type"] == "code":
                out.append((f"{rel} (cell {i})", cell["source"].removeprefix(setup), "#"))
                out.extend((f"{rel} (cell {i}, {cu})", text, "//") for cu, text in c_strings(cell["source"]))
    return out


def used() -> dict[str, list[str]]:
    """Every comment msgid of visible code, with where it is."""
    found: dict[str, list[str]] = {}
    for where, code, marker in visible_code():
        for c in find(code, marker):
            found.setdefault(c.text, []).append(where)
    return found


# -- pages: translate what pymdownx highlights -------------------------------------------------


def install() -> None:
    """Translate the comments of every python and C block pymdownx highlights while a page of
    another language than English renders (:data:`page_language`); idempotent. Installed
    after :mod:`highlight_cache`, so the cache keeps the translated block."""
    try:
        from pymdownx.highlight import Highlight
    except ImportError:
        return
    if getattr(Highlight.highlight, "simtdocs_comments", False):
        return
    inner = Highlight.highlight

    def highlight(self, src, language, *args, **kwargs):
        lang = page_language.get()
        inline = kwargs.get("inline") or (len(args) > 5 and args[5])
        marker = marker_of(language)
        if lang and lang != SOURCE_LANGUAGE and not inline and marker:
            src = localize(src, lang, marker=marker)
        return inner(self, src, language, *args, **kwargs)

    highlight.simtdocs_comments = True
    highlight.simtdocs_original = getattr(inner, "simtdocs_original", inner)
    Highlight.highlight = highlight


def po_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
