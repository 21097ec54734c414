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


def _comment_starts(lines: list[str]) -> list[int | None]:
    """For each line, the column of a ``#`` that starts a comment (outside strings), or None."""
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


def find(code: str) -> list[Comment]:
    """The translatable comments of ``code`` (a block or a fragment: nothing is parsed)."""
    lines = code.split("\n")
    found: list[Comment] = []
    for n, (line, col) in enumerate(zip(lines, _comment_starts(lines))):
        if col is None:
            continue
        raw = line[col:]
        words = raw.lstrip("#").strip()
        if not words or NOT_PROSE.match(raw) or CJK.search(raw) or not re.search(r"[A-Za-z]", words):
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


def localize(code: str, lang: str, where: str = "") -> str:
    """``code`` with its comments in ``lang``; the same code, character for character, outside them."""
    if lang == SOURCE_LANGUAGE:
        return code
    entries = catalog(lang)
    lines = code.split("\n")
    for c in reversed(find(code)):
        text = entries.get(c.text)
        if not text:
            raise MissingCommentTranslation(
                f"{where + ': ' if where else ''}the comment {c.text!r} of visible code has no {lang} "
                f"translation: run `make translations` and fill its msgstr in "
                f"src/simtdocs/locale/{lang}/LC_MESSAGES/{DOMAIN}.po")
        if c.trailing:
            line = lines[c.first]
            lines[c.first] = line[:c.column] + "# " + text.replace("\n", " ")
        else:
            pad = lines[c.first][:c.column]
            lines[c.first:c.last + 1] = [f"{pad}# {part}".rstrip() for part in text.split("\n")]
    return "\n".join(lines)


# -- which code is visible ------------------------------------------------------------------


def visible_code() -> list[tuple[str, str]]:
    """``(where, code)`` of every block a Chinese reader sees: the python fences of the
    Chinese pages (includes expanded) and the code cells of the companion notebooks."""
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
            if f.info.split()[0:1] and f.info.split()[0] in LANGUAGES_SHOWN:
                out.append((f"{rel}:{f.start + 1}", expand_snippets(f.code)))
    setup = setup_cell(SOURCE_LANGUAGE, None)
    for script in scripts():
        nb = build_notebook(script, SOURCE_LANGUAGE, "comments", translate_comments=False)
        rel = script.relative_to(root).as_posix()
        for i, cell in enumerate(nb.cells):
            if cell["cell_type"] == "code":
                out.append((f"{rel} (cell {i})", cell["source"].removeprefix(setup)))
    return out


def used() -> dict[str, list[str]]:
    """Every comment msgid of visible code, with where it is."""
    found: dict[str, list[str]] = {}
    for where, code in visible_code():
        for c in find(code):
            found.setdefault(c.text, []).append(where)
    return found


# -- pages: translate what pymdownx highlights -------------------------------------------------


def install() -> None:
    """Translate the comments of every python block pymdownx highlights while a page of
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
        if lang and lang != SOURCE_LANGUAGE and not inline and (language or "").lower() in LANGUAGES_SHOWN:
            src = localize(src, lang)
        return inner(self, src, language, *args, **kwargs)

    highlight.simtdocs_comments = True
    highlight.simtdocs_original = getattr(inner, "simtdocs_original", inner)
    Highlight.highlight = highlight


def po_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
