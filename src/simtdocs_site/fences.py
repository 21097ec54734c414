"""Which ```python fences of a page run, and in which namespace (chains of ``cont`` blocks).

The decision is pytest-codeblocks' own parser's (``pytest_codeblocks.main.extract_from_buffer``),
so the site and ``pytest --codeblocks`` agree by construction:

- a fence whose info string is exactly ``python`` runs, in a fresh namespace with
  ``__name__ == "__main__"`` and the repository root as working directory;
- ``<!--pytest-codeblocks:cont-->`` appends a fence to the previous fence's block
  (whatever that block is: a skipped block's continuation is skipped too);
- ``<!--pytest.mark.skip(...)-->``, ``skipif(condition, ...)`` and
  ``pytest-codeblocks:importorskip(module)`` skip as pytest would; ``xfail`` is
  refused (a page shows what its code computed, not an expected failure).
"""

from __future__ import annotations

import io
import re
import sys
from dataclasses import dataclass


GLUE_REF = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")


class BlockError(Exception):
    """A page cannot be built as written; the message starts with ``docs/<page>.md:<line>``."""


# -- which fences run ------------------------------------------------------------------

MARKER = re.compile(r"<!--[-\s]*(pytest-codeblocks:.*|pytest\.mark\..*)-->")


@dataclass
class Fence:
    start: int  # 0-based index of the opening fence line
    end: int  # 0-based index of the closing fence line
    indent: str
    info: str
    code: str
    cont: bool = False
    expected_output: bool = False


def find_fences(lines: list[str]) -> list[Fence]:
    """Backtick fences where pytest-codeblocks sees them, with their cont markers."""
    out: list[Fence] = []
    cont = expected = False
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        m = MARKER.fullmatch(stripped)
        if m and m.group(1).startswith("pytest-codeblocks:"):
            kw = m.group(1).split(":", 1)[1].strip("- ")
            cont = cont or kw == "cont"
            expected = expected or kw.startswith("expected-output")
        ls = lines[i].lstrip()
        if ls.startswith("```"):
            n = len(ls) - len(ls.lstrip("`"))
            indent = lines[i][: len(lines[i]) - len(ls)]
            j, body = i + 1, []
            while j < len(lines) and lines[j].lstrip()[:n] != "`" * n:
                line = lines[j]
                body.append(line[min(len(indent), len(line) - len(line.lstrip())):])
                j += 1
            out.append(Fence(i, j, indent, ls.strip()[n:], "".join(b + "\n" for b in body), cont, expected))
            cont = expected = False
            i = j + 1
            continue
        i += 1
    return out


@dataclass
class Chain:
    """One pytest-codeblocks block: a fence and the fences continued from it."""

    fences: list[Fence]
    syntax: str
    run: bool
    why_not: str = ""
    block: object = None  # pytest-codeblocks' CodeBlock


def _skip_reason(block, page: str) -> str:
    """Why pytest would skip this block ('' if it runs), evaluated as pytest does."""
    import pytest

    if block.importorskip:
        try:
            __import__(block.importorskip)
        except ImportError:
            return f"importorskip({block.importorskip})"
    for text in block.marks:
        try:
            mark = eval(text, {"sys": sys, "pytest": pytest}).mark  # noqa: S307 - pytest-codeblocks does the same
        except Exception as exc:  # noqa: BLE001
            raise BlockError(f"{page}:{block.lineno}: bad marker <!--{text}-->: {exc}") from None
        if mark.name == "skip":
            return "skip"
        if mark.name == "skipif":
            conds = mark.args or (mark.kwargs.get("condition"),)
            for c in conds:
                if isinstance(c, str):  # pytest cannot evaluate it for a code block either
                    raise BlockError(f"{page}:{block.lineno}: skipif with a string condition fails under "
                                     "pytest-codeblocks; write the condition as a Python expression")
                if c:
                    return "skipif"
        if mark.name == "xfail":
            raise BlockError(
                f"{page}:{block.lineno}: pytest.mark.xfail is not allowed on a page: a page shows what its "
                "code computed; catch the exception in the block and show() it instead"
            )
    return ""


def page_chains(markdown: str, page: str) -> list[Chain]:
    """The page's blocks as pytest-codeblocks collects them, with the fences each one spans."""
    from pytest_codeblocks.main import extract_from_buffer

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # skip/skipif spelled the old way
        try:
            blocks = extract_from_buffer(io.StringIO(markdown))
        except RuntimeError as exc:
            lines = markdown.split("\n")
            first = next((i + 1 for i, ln in enumerate(lines) if "pytest-codeblocks:cont" in ln), 1)
            where = first if "cont" in str(exc) else 1
            raise BlockError(f"{page}:{where}: pytest-codeblocks cannot read this page: {exc}") from None
    fences = [f for f in find_fences(markdown.split("\n")) if not f.expected_output]
    chains: list[Chain] = []
    it = iter(blocks)
    for f in fences:
        if f.cont and chains:
            chains[-1].fences.append(f)
            continue
        block = next(it, None)
        if block is None or block.lineno != f.start + 1:
            raise BlockError(f"{page}:{f.start + 1}: this fence is read differently by pytest-codeblocks")
        reason = _skip_reason(block, page) if block.syntax == "python" else "not python"
        chains.append(Chain([f], block.syntax, not reason, reason, block))
    def solid(code: str) -> list[str]:  # pytest-codeblocks drops blank lines of indented fences
        return [ln for ln in code.split("\n") if ln.strip()]

    for c in chains:
        if solid("".join(f.code for f in c.fences)) != solid(c.block.code):
            raise BlockError(f"{page}:{c.fences[0].start + 1}: this block is read differently by pytest-codeblocks")
    return chains
