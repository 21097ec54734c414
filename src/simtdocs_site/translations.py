"""Are the two languages of every page still one page? ``python -m simtdocs_site.translations``

(The labels in tables and figures are checked too, in the gettext catalogs: :mod:`simtdocs_site.catalogs`.)

A page and its translation must share what the reader cannot see differ: the heading
anchors as the site renders them (links and the language switch land on the same section), the code blocks (one
run feeds both languages), and the glued names the prose uses. The report also flags a
translation whose last commit is older than its source's, as a hint that it may be stale.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .fences import GLUE_REF, find_fences
from simtdocs.snippets import repo_root

ANCHOR = re.compile(r"\{\s*[^}]*#([\w-]+)[^}]*\}\s*$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def rendered_anchors(text: str) -> list[str]:
    """The anchors the headings get on the site: the explicit ``{ #id }``, else the slug
    Python-Markdown's toc extension makes of the heading text (empty for Chinese text,
    which is why every heading carries an explicit id)."""
    from markdown.extensions.toc import slugify

    lines = text.split("\n")
    in_code = {i for f in find_fences(lines) for i in range(f.start, f.end + 1)}
    out, seen = [], {}
    fence = None
    for i, line in enumerate(lines):
        m = re.match(r"^\s*(~{3,})", line)  # tilde fences: find_fences only knows backticks
        if m:
            fence = None if fence and m.group(1).startswith(fence) else (fence or m.group(1))
            continue
        if fence or i in in_code:
            continue
        h = HEADING.match(line)
        if not h:
            continue
        a = ANCHOR.search(h.group(2))
        anchor = a.group(1) if a else slugify(re.sub(r"<[^>]+>|[`*_]", "", h.group(2)), "-")
        n = seen.get(anchor, 0)
        seen[anchor] = n + 1
        out.append(anchor if n == 0 else f"{anchor}_{n}")
    return out


@dataclass
class PageReport:
    page: str  # the source (Chinese) file, relative to docs/
    problems: list[str] = field(default_factory=list)
    stale: bool = False


def _parts(text: str):
    lines = text.split("\n")
    code = [(f.info, f.code) for f in find_fences(lines) if f.info == "python"]
    return rendered_anchors(text), code, set(GLUE_REF.findall(text))


def _last_commit(path: Path) -> int:
    out = subprocess.run(["git", "log", "-1", "--format=%ct", "--", str(path)], cwd=repo_root(),
                         capture_output=True, text=True).stdout.strip()
    return int(out) if out else 0


def check(docs: Path | None = None) -> list[PageReport]:
    """One report per Chinese page of ``docs`` (default: the repository's docs/)."""
    docs = docs or repo_root() / "docs"
    reports = []
    for zh in sorted(p for p in docs.rglob("*.md") if not p.name.endswith(".en.md")):
        en = zh.with_name(zh.name[: -len(".md")] + ".en.md")
        r = PageReport(str(zh.relative_to(docs)))
        reports.append(r)
        if not en.exists():
            r.problems.append("no English page")
            continue
        (a_zh, c_zh, g_zh), (a_en, c_en, g_en) = _parts(zh.read_text("utf-8")), _parts(en.read_text("utf-8"))
        if a_zh != a_en:
            r.problems.append(f"heading anchors differ: only zh {sorted(set(a_zh) - set(a_en))}, "
                              f"only en {sorted(set(a_en) - set(a_zh))}" if set(a_zh) != set(a_en)
                              else "heading anchors are in a different order")
        if c_zh != c_en:
            n = next((i for i, (x, y) in enumerate(zip(c_zh, c_en)) if x != y), min(len(c_zh), len(c_en)))
            r.problems.append(f"python blocks differ ({len(c_zh)} zh, {len(c_en)} en; first difference at block {n + 1})")
        if g_zh != g_en:
            r.problems.append(f"glued names differ: only zh {sorted(g_zh - g_en)}, only en {sorted(g_en - g_zh)}")
        r.stale = _last_commit(zh) > _last_commit(en)
    return reports


def main() -> int:
    reports = check()
    bad = 0
    for r in reports:
        status = "ok" if not r.problems else "DIFFERS"
        hint = " (the English page was last committed before the Chinese one: check it is up to date)" if r.stale else ""
        print(f"{status:8} {r.page}{hint}")
        for p in r.problems:
            print(f"         - {p}")
        bad += bool(r.problems)
    # The labels of tables and figures are translated in the gettext catalogs: the same report.
    from .catalogs import problems as catalog_problems

    labels = catalog_problems()
    print(f"{'ok' if not labels else 'DIFFERS':8} labels (src/simtdocs/locale/zh/LC_MESSAGES/*.po)")
    for p in labels:
        print(f"         - {p}")
    return 1 if bad or labels else 0


if __name__ == "__main__":
    sys.exit(main())
