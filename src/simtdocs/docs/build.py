"""Run the ```python fences of a page at build time and put their output under them.

Semantics follow pytest-codeblocks, so a block that passes ``pytest --codeblocks``
renders the same on the site:

- only fences whose info string is exactly ``python`` run; each in a fresh
  namespace, unless ``<!--pytest-codeblocks:cont-->`` precedes it (then it
  continues the previous python block);
- ``<!--pytest.mark.skip...-->`` / ``<!--pytest.mark.skipif(...)-->`` before a
  fence: not run here (the page says so in a visible admonition).

Results are cached by the expanded source (with its cont predecessors) and a
hash of the simulator, so the second language of a page is a cache hit and only
the rendering, which is language-dependent, is done twice.
"""

from __future__ import annotations

import hashlib
import linecache
import re
import traceback
from dataclasses import dataclass, field

from .display import Glued, Recorder, recording
from .snippets import expand_with_map, repo_root

MARK = re.compile(r"<!--[-\s]*(pytest\.mark\..*|pytest-codeblocks:.*)-->")
GLUE_REF = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")


class BlockError(Exception):
    """A block failed; the message names the page and line."""


@dataclass
class Fence:
    start: int  # 0-based index of the opening fence line
    end: int  # 0-based index of the closing fence line
    indent: str
    info: str
    code: str
    cont: bool = False
    skip: bool = False


def find_fences(lines: list[str]) -> list[Fence]:
    """Backtick fences as pytest-codeblocks sees them (at any indentation)."""
    out: list[Fence] = []
    marks: list[str] = []
    cont = False
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        m = MARK.fullmatch(stripped)
        if m:
            kw = m.group(1)
            if kw.startswith("pytest.mark.skip") or kw in ("pytest-codeblocks:skip",) or kw.startswith(
                "pytest-codeblocks:skipif"
            ):
                marks.append(kw)
            elif kw.strip("- ") == "pytest-codeblocks:cont":
                cont = True
            i += 1
            continue
        ls = lines[i].lstrip()
        if ls.startswith("```"):
            n = len(ls) - len(ls.lstrip("`"))
            indent = lines[i][: len(lines[i]) - len(ls)]
            info = ls[n:].strip()
            j = i + 1
            body = []
            while j < len(lines) and not lines[j].lstrip().startswith("`" * n):
                line = lines[j]
                cut = min(len(indent), len(line) - len(line.lstrip()))
                body.append(line[cut:])
                j += 1
            out.append(Fence(i, j, indent, info, "\n".join(body) + "\n", cont, bool(marks)))
            marks, cont = [], False
            i = j + 1
            continue
        i += 1
    return out


@dataclass
class Result:
    recorder: Recorder
    glue: dict[str, Glued] = field(default_factory=dict)


_cache: dict[str, Result] = {}


def simulator_hash() -> str:
    """Any change to the simulator invalidates every cached block."""
    h = hashlib.sha256()
    src = repo_root() / "src" / "simtdocs"
    for p in sorted(src.rglob("*.py")):
        h.update(str(p.relative_to(src)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _run(code: str, where: list[tuple[str, int]], name: str, ns: dict, rec: Recorder, page: str, line: int):
    # Register the source so tracebacks and inspect.getsource (kernels!) can read it.
    lines = [ln + "\n" for ln in code.split("\n")]
    linecache.cache[name] = (len(code), None, lines, name)
    try:
        compiled = compile(code, name, "exec")
        with recording(rec):
            exec(compiled, ns)
    except BaseException as exc:  # noqa: BLE001 - reported with its location, then re-raised
        raise BlockError(_describe(exc, name, where, page, line)) from exc


def _describe(exc: BaseException, name: str, where, page: str, line: int) -> str:
    def loc(n: int) -> str:
        path, ln = where[n - 1] if 0 < n <= len(where) else (page, line)
        return f"{path}:{ln}" if path == page else f"{path}:{ln} (included at {page}:{line})"

    frames = traceback.extract_tb(exc.__traceback__)
    trace = []
    here = f"{page}:{line}"
    for fr in frames:
        if fr.filename == name:
            trace.append(f"  {loc(fr.lineno)}: {fr.line}")
            here = loc(fr.lineno)
        elif "simtdocs/docs/build.py" not in fr.filename:
            trace.append(f"  {fr.filename}:{fr.lineno} in {fr.name}: {fr.line}")
    if isinstance(exc, SyntaxError) and exc.filename == name and exc.lineno:
        here = loc(exc.lineno)
    msg = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return f"{here}: code block failed: {msg}\nTraceback (page and snippet lines):\n" + "\n".join(trace)


def run_page(markdown: str, page: str, sim_hash: str = "") -> tuple[list[Fence], dict[int, Result], dict[str, Glued]]:
    """Execute the page's python fences; return them, their results and the page's glue."""
    lines = markdown.split("\n")
    fences = find_fences(lines)
    results: dict[int, Result] = {}
    glued: dict[str, Glued] = {}
    chain: list[tuple[str, list, str, int]] = []  # the cont chain so far
    ns: dict | None = None
    for f in fences:
        if f.info != "python":
            continue
        if f.skip:
            chain, ns = [], None
            continue
        code, where = expand_with_map(f.code.rstrip("\n"), (page, f.start + 2))
        name = f"<{page}:{f.start + 1}>"
        if not f.cont:
            chain, ns = [], None
        key = hashlib.sha256(
            "\0".join([sim_hash, *[c for c, *_ in chain], code]).encode()
        ).hexdigest()
        chain.append((code, where, name, f.start + 1))
        hit = _cache.get(key)
        if hit is None:
            if ns is None:
                ns = {"__MODULE__": "__main__"}  # like pytest-codeblocks
                # Predecessors were cache hits: rebuild their namespace quietly.
                for c, w, n, ln in chain[:-1]:
                    _run(c, w, n, ns, Recorder(), page, ln)
            rec = Recorder()
            _run(code, where, name, ns, rec, page, f.start + 1)
            hit = _cache[key] = Result(rec, dict(rec.glue))
        else:
            ns = None  # a later miss in this chain replays it
        results[f.start] = hit
        glued.update(hit.glue)
    return fences, results, glued


def _sub_glue(line: str, glued: dict[str, Glued], lang: str, page: str, lineno: int) -> str:
    if "{{" not in line:
        return line
    parts = re.split(r"(`+[^`]*`+)", line)  # leave inline code alone

    def repl(m):
        name = m.group(1)
        if name not in glued:
            raise BlockError(
                f"{page}:{lineno}: {{{{ {name} }}}} has no glued value "
                f"(known: {', '.join(sorted(glued)) or 'none'})"
            )
        return glued[name].render(lang)

    return "".join(p if p.startswith("`") else GLUE_REF.sub(repl, p) for p in parts)


def process(markdown: str, page: str, lang: str, sim_hash: str = "") -> str:
    """The page with outputs inserted after their fences and ``{{ name }}`` filled in."""
    fences, results, glued = run_page(markdown, page, sim_hash)
    lines = markdown.split("\n")
    in_fence = set()
    for f in fences:
        in_fence.update(range(f.start, f.end + 1))
    after = {f.end: f for f in fences if f.start in results}
    out = []
    for i, line in enumerate(lines):
        out.append(line if i in in_fence else _sub_glue(line, glued, lang, page, i + 1))
        if i in after:
            f = after[i]
            rendered = results[f.start].recorder.render(lang)
            if rendered.strip():
                out.append("")
                out.extend((f.indent + r) if r.strip() else "" for r in rendered.split("\n"))
                out.append("")
    return "\n".join(out)
