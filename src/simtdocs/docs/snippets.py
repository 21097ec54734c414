"""Expand ``--8<--`` snippet lines exactly as the site does.

The build, pytest-codeblocks (through ``conftest.py``) and the error messages all
go through :func:`expand_snippets`, so "the code that ran" and "the code the
reader sees" are produced by one function: pymdownx.snippets itself.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import markdown

SNIPPET_LINE = re.compile(r"^\s*-{1,}8<-{1,}\s+[\"']?([^\"'\s]+)[\"']?\s*$")
SECTION_MARK = re.compile(r"^\s*#?\s*-{1,}8<-{1,}\s*\[(?:start|end):[-\w]+\]\s*$")


@lru_cache(maxsize=1)
def repo_root() -> Path:
    """The folder holding ``mkdocs.yml``: snippet paths are relative to it."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "mkdocs.yml").is_file():
            return parent
    return Path.cwd()


def _preprocessor():
    # A fresh Markdown instance per call keeps the preprocessor's state
    # (seen files, recursion guard) from leaking between blocks.
    md = markdown.Markdown(
        extensions=["pymdownx.snippets"],
        extension_configs={
            "pymdownx.snippets": {
                "base_path": [str(repo_root())],
                "check_paths": True,
            }
        },
    )
    return md.preprocessors["snippet"]


def expand_snippets(code: str) -> str:
    """Return ``code`` with every ``--8<--`` line replaced by what it includes."""
    if "8<" not in code:
        return code
    lines = code.split("\n")
    out = _preprocessor().run(lines)
    return "\n".join(out)


def expand_with_map(code: str, origin: tuple[str, int]) -> tuple[str, list[tuple[str, int]]]:
    """Expand ``code`` and say where every resulting line came from.

    ``origin`` is ``(page, line of the first code line)``. The result maps line
    ``i`` (0-based) of the expanded code to ``(path, line)`` so a traceback can
    point at the page or at the snippet file the reader can open.
    """
    page, first = origin
    expanded: list[str] = []
    where: list[tuple[str, int]] = []
    for k, line in enumerate(code.split("\n")):
        m = SNIPPET_LINE.match(line)
        if not m:
            expanded.append(line)
            where.append((page, first + k))
            continue
        piece = expand_snippets(line).split("\n")
        expanded.extend(piece)
        where.extend(_locate(m.group(1), piece, (page, first + k)))
    return "\n".join(expanded), where


def _locate(target: str, piece: list[str], fallback: tuple[str, int]) -> list[tuple[str, int]]:
    """Find each included line in its file (in order), for error messages only."""
    name, _, section = target.partition(":")
    path = repo_root() / name
    try:
        src = path.read_text(encoding="utf-8").split("\n")
    except OSError:
        return [fallback] * len(piece)
    start = 0
    if section and not section[0].isdigit():
        for i, s in enumerate(src):
            if re.search(rf"\[start:{re.escape(section)}\]", s):
                start = i + 1
                break
    elif section and section.split(":")[0].isdigit():
        start = max(int(section.split(":")[0]) - 1, 0)
    out, j = [], start
    for line in piece:
        k = j
        while k < len(src) and (src[k].strip() != line.strip() or SECTION_MARK.match(src[k])):
            k += 1
        if k < len(src):
            out.append((name, k + 1))
            j = k + 1
        else:
            out.append(fallback)
    return out
