"""Rules that keep what a block prints and what the prose glues from breaking a page.

- :func:`check_printed`: printed Markdown must close what it opens (code fences,
  HTML elements, comments), or it would swallow the rest of the page.
- :func:`substitute_glue`: ``{{ name }}`` in the prose becomes the glued text, except
  in code (fenced with backticks or tildes, indented, inline) and HTML comments.
  In math (``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``) only ``{{ name }}``
  *with spaces* is glue, so TeX's own ``{{k}}`` stays TeX; a glued number there
  gets ``{,}`` for its thousands separator and ``\\%`` for a percent sign. In a table
  row a ``|`` in the value is escaped. A heading with glue must carry an explicit
  ``{ #id }`` (its anchor must not change with the number or the language).
"""

from __future__ import annotations

import re

FENCE_OPEN = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
GLUE_ANY = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")
GLUE_SPACED = re.compile(r"\{\{\s+([A-Za-z_]\w*)\s+\}\}")
INLINE = re.compile(
    r"(?P<code>(`+)(?:(?!\2).)+?\2)"
    r"|(?P<comment><!--.*?-->)"
    r"|(?P<math>\$\$.+?\$\$|(?<![\\$\w])\$(?=\S)[^$\n]+?(?<=\S)\$(?![\w$])|\\\(.+?\\\)|\\\[.+?\\\])"
)
HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
HEADING_ID = re.compile(r"\{\s*[^}]*#[\w-]+[^}]*\}\s*$")
CONTAINER = re.compile(r"^(\s*)(?:!!!|\?\?\?\+?|===|[-*+]|\d+\.)\s")
TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)\b[^<>]*?(/?)>")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class GlueError(ValueError):
    """A ``{{ name }}`` that cannot be filled in safely; the message names page and line."""


def _outside_code(text: str) -> tuple[str, str | None]:
    """The text with fenced and inline code removed, and a problem if a fence is left open."""
    kept, fence = [], None
    for line in text.split("\n"):
        m = FENCE_OPEN.match(line)
        if fence is None and m:
            fence = m.group(2)
            continue
        if fence is not None:
            s = line.strip()
            if s.startswith(fence[0] * len(fence)) and set(s) == {fence[0]}:
                fence = None
            continue
        kept.append(re.sub(r"(`+).+?\1", "", line))
    return "\n".join(kept), (f"a code fence {fence} is never closed" if fence else None)


def check_printed(text: str) -> str | None:
    """Why ``text`` (printed by a block) would change the rest of the page, or None."""
    rest, problem = _outside_code(text)
    if problem:
        return problem
    if rest.count("<!--") != rest.count("-->"):
        return "an HTML comment <!-- is never closed"
    rest = re.sub(r"<!--.*?-->", "", rest, flags=re.S)
    stack: list[str] = []
    for m in TAG.finditer(rest):
        closing, name, selfclose = m.group(1), m.group(2).lower(), m.group(3)
        if name in VOID or selfclose:
            continue
        if not closing:
            stack.append(name)
        elif stack and stack[-1] == name:
            stack.pop()
        else:
            return f"</{name}> closes an element that is not open"
    if stack:
        return f"<{stack[-1]}> is never closed (print balanced HTML, or escape it with html.escape)"
    return None


def tex(value: str) -> str:
    """A glued value as it must appear inside TeX math."""
    value = re.sub(r"(?<=\d),(?=\d{3})", "{,}", value)
    return re.sub(r"(?<!\\)%", r"\\%", value)


def substitute_glue(lines: list[str], glued: dict[str, tuple[str, str]], page: str) -> list[str]:
    """Fill ``{{ name }}`` in the prose; ``glued`` maps a name to (text, where it was glued)."""
    out: list[str] = []
    fence = None  # the opening run of an open fence
    comment = math = False
    containers: list[int] = []
    prev_blank, in_indented = True, False

    def value(name: str, lineno: int) -> str:
        if name not in glued:
            known = ", ".join(sorted(glued)) or "none"
            raise GlueError(f"{page}:{lineno}: {{{{ {name} }}}} has no glued value (known: {known})")
        return glued[name][0]

    def in_math(seg: str, lineno: int) -> str:
        return GLUE_SPACED.sub(lambda m: tex(value(m.group(1), lineno)), seg)

    def in_text(seg: str, lineno: int, table: bool) -> str:
        def repl(m):
            v = value(m.group(1), lineno)
            return v.replace("|", r"\|") if table else v

        return GLUE_ANY.sub(repl, seg)

    for i, line in enumerate(lines):
        n = i + 1
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if fence is not None:
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = None
            out.append(line)
            continue
        if comment:
            comment = "-->" not in line
            out.append(line)
            continue
        if math:
            math = not (stripped.endswith("$$") or stripped.endswith("\\]"))
            out.append(in_math(line, n))
            continue
        m = FENCE_OPEN.match(line)
        if m:
            fence = m.group(2)
            out.append(line)
            prev_blank = False
            continue
        if not stripped:
            out.append(line)
            prev_blank = True
            continue
        while containers and indent < containers[-1]:
            containers.pop()
        base = containers[-1] if containers else 0
        if indent >= base + 4 and (prev_blank or in_indented):
            in_indented = True  # an indented code block
            out.append(line)
            prev_blank = False
            continue
        in_indented = prev_blank = False
        c = CONTAINER.match(line)
        if c:
            containers.append(len(c.group(1)) + 4)
        if stripped in ("$$", "\\[") or (stripped.startswith("$$") and stripped.count("$$") == 1):
            math = True
            out.append(in_math(line, n))
            continue
        if line.lstrip().startswith("<!--") and "-->" not in line:
            comment = True
            out.append(line)
            continue
        table = line.lstrip().startswith("|")
        parts, pos = [], 0
        for tok in INLINE.finditer(line):
            parts.append(in_text(line[pos:tok.start()], n, table))
            seg = tok.group(0)
            parts.append(in_math(seg, n) if tok.group("math") else seg)
            pos = tok.end()
        parts.append(in_text(line[pos:], n, table))
        new = "".join(parts)
        if new != line and HEADING.match(line) and not HEADING_ID.search(line):
            raise GlueError(
                f"{page}:{n}: a heading with a glued value needs an explicit anchor, "
                "e.g. `## Speed-up of {{ x }} { #speed-up }`, so links and the language switch "
                "do not depend on the number"
            )
        out.append(new)
    return out
