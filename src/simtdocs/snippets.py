"""Expand ``--8<--`` snippet lines the way pymdownx.snippets does, without Markdown.

The pages include their code from ``snippets/`` with pymdownx.snippets; the code that
runs (on the site, under ``pytest --codeblocks``, in a companion script such as
``snippets/p2/06_exercises.py``) is expanded here. This module needs only the
standard library, so a reader's laptop can run the scripts with numpy alone.
``tests/site/test_snippets.py`` checks that this expansion and pymdownx.snippets
give the same text for every include in the repository.

Supported, as in pymdownx.snippets with ``check_paths: true``: ``--8<-- "file"``,
``--8<-- "file:section"`` (between ``--8<-- [start:section]`` and
``--8<-- [end:section]``), ``--8<-- "file:3:8"`` (lines 3 to 8), nested includes,
the indentation of the include line, and ``;--8<--`` to escape.

``definitions(*includes)`` loads what a companion script's sections define (its kernels,
their imports and constants) without running the section's experiment: the tests and the
benchmarks import the lecture kernels through it, so they exist once, in ``snippets/``.
"""

from __future__ import annotations

import ast
import linecache
import re
from functools import lru_cache
from pathlib import Path

INCLUDE = re.compile(r"""^(?P<space>[ \t]*)(?P<escape>;*)-{1,}8<-{1,}[ \t]+(?P<q>["'])(?P<target>.+?)(?P=q)\r?$""")
SECTION_MARK = re.compile(
    r"^(?P<pre>.*?)(?<!;)(?!(?<=-)-)(?P<escape>;*)-{1,}8<-{1,}[ \t]+"
    r"\[[ \t]*(?P<type>start|end)[ \t]*:[ \t]*(?P<name>[a-z][-_0-9a-z]*)[ \t]*\](?P<post>.*?)$",
    re.I,
)
TARGET = re.compile(r"(?i)^(?P<path>.*?)(?::(?P<start>\d*)(?::(?P<end>\d*))?|:(?P<section>[a-z][-_0-9a-z]*))?$")

# Kept for callers that look for include lines without expanding them.
SNIPPET_LINE = INCLUDE


class SnippetError(ValueError):
    """An include names a file or section that does not exist."""


@lru_cache(maxsize=1)
def repo_root() -> Path:
    """The folder holding ``mkdocs.yml`` (snippet paths are relative to it), else the cwd."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "mkdocs.yml").is_file():
            return parent
    return Path.cwd()


def _read(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return text.split("\n") if text else []


def _select(lines: list[str], start: str | None, end: str | None, section: str | None, name: str):
    """(line, 1-based line number in the file) for the requested part of a file."""
    numbered = list(zip(lines, range(1, len(lines) + 1)))
    if section:
        out, inside, found = [], False, False
        for line, n in numbered:
            m = SECTION_MARK.match(line)
            if m and m.group("escape"):
                line = m.group("pre") + m.group("escape")[1:] + line[m.end("escape"):]
            elif m and m.group("name") == section:
                if m.group("type") == "start":
                    inside = found = True
                    continue
                break
            elif m and inside:
                continue
            if inside:
                out.append((line, n))
        if not found:
            raise SnippetError(f"snippet section '{section}' not found in {name}")
        return out, True
    if start is not None or end is not None:
        s = max(int(start) - 1, 0) if start else 0
        e = int(end) if end else len(lines)
        return numbered[s:e], False
    return numbered, False


def _expand(lines, base: Path, origin, seen: tuple, is_section: bool):
    """Expanded lines, each with the (file, line) it comes from."""
    out = []
    for line, where in zip(lines, origin):
        m = INCLUDE.match(line)
        if m and m.group("escape"):
            out.append((line.replace(";", "", 1), where))
            continue
        if not m:
            if not is_section:
                s = SECTION_MARK.match(line)
                if s and not s.group("escape"):
                    continue  # a section marker is notation, not code
                if s:
                    line = s.group("pre") + s.group("escape")[1:] + line[s.end("escape"):]
            out.append((line, where))
            continue
        t = TARGET.match(m.group("target").strip())
        name = t.group("path").strip()
        path = base / name
        if not path.is_file():
            raise SnippetError(f"snippet '{name}' not found (paths are relative to {base})")
        if path.resolve() in seen:
            continue  # pymdownx.snippets skips an include of a file that is being included
        picked, sect = _select(_read(path), t.group("start"), t.group("end"), t.group("section"), name)
        inner = _expand([p for p, _ in picked], base, [(name, n) for _, n in picked],
                        seen + (path.resolve(),), sect)
        space = m.group("space")
        out.extend((space + text, w) for text, w in inner)
    return out


def expand_with_map(code: str, origin: tuple[str, int], base: Path | None = None):
    """Expand ``code``; also say where each resulting line came from.

    ``origin`` is ``(page, line of the first code line)``. Returns the expanded code
    and a list mapping line ``i`` (0-based) of it to ``(path, line, page line)``, so an
    error can point at the snippet file the reader can open and at the include line.
    """
    page, first = origin
    out_text, out_where = [], []
    for k, line in enumerate(code.split("\n")):  # line by line: each include keeps its page line
        here = (page, first + k)
        for t, w in _expand([line], base or repo_root(), [here], (), False):
            out_text.append(t)
            out_where.append((*w, first + k))
    return "\n".join(out_text), out_where


def expand_snippets(code: str, base: Path | None = None) -> str:
    """Return ``code`` with every ``--8<-- "file[:section]"`` line replaced by what it includes."""
    if "8<" not in code:
        return code
    return expand_with_map(code, ("<code>", 1), base)[0]


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _names_only(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(_names_only(t) for t in target.elts)


def _defines(stmt: ast.stmt) -> bool:
    """Whether a top-level statement only defines: an import, a def or class, or a name
    bound to a literal (``TILE, ROWS = 32, 8``). Anything else (a launch, a loop, a print,
    ``show(...)``, an assignment computed by a call) is the experiment, and is skipped."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    if isinstance(stmt, ast.Assign):
        return all(_names_only(t) for t in stmt.targets) and _is_literal(stmt.value)
    if isinstance(stmt, ast.AnnAssign):
        return isinstance(stmt.target, ast.Name) and stmt.value is not None and _is_literal(stmt.value)
    return False


def definitions(*includes: str, base: Path | None = None) -> dict:
    """What the sections ``includes`` define, as a namespace: ``definitions("snippets/p2/03_….py:reverse")``.

    Each include is the target of a ``--8<--`` line (``"file:section"``, ``"file"``, ``"file:3:8"``);
    they are expanded as a page would expand them, one after the other, and of the result
    only the statements that define are executed: imports, ``def`` and ``class`` statements,
    and names bound to literals. Every other top-level statement is skipped, so a section that
    also launches its kernel and prints the outcome gives its kernel and runs nothing.

    Each statement is compiled with the snippet file it comes from and its line there, so a
    traceback, or the simulator quoting a kernel line, points at the companion script.
    """
    base = base or repo_root()
    code, where = expand_with_map("\n".join(f'--8<-- "{i}"' for i in includes), ("<definitions>", 1), base)
    namespace: dict = {"__name__": "simtdocs_definitions"}
    for stmt in ast.parse(code, "<definitions>").body:
        if not _defines(stmt):
            continue
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
        origin = [where[i - 1][:2] for i in range(first, stmt.end_lineno + 1)]
        (name, line), files = origin[0], {f for f, _n in origin}
        if len(files) == 1 and [n for _f, n in origin] == list(range(line, line + len(origin))):
            filename = str(base / name)
            ast.increment_lineno(stmt, line - first)
        else:  # a statement spread over several includes: name the expanded code instead
            filename = "<definitions>"
            linecache.cache[filename] = (len(code), None, [ln + "\n" for ln in code.split("\n")], filename)
        module = ast.Module(body=[stmt], type_ignores=[])
        exec(compile(module, filename, "exec"), namespace)
    return namespace
