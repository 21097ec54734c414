"""One term per concept: ``python -m simtdocs_site.terms`` lists variant forms in the prose.

The glossary's terminology table (docs/glossary.md, "术语对照 / Terminology") names the one
form each page uses. This check looks for the other forms in the prose of every page: text
outside code blocks, inline code, links' targets and glued names. A variant may still appear
as the gloss of the chosen form, in parentheses right after it ("内核（kernel）").

Chinese headings also carry no English subtitle ("## 3. CUDA 编程模型 · The CUDA programming
model"): the English page has the English heading, and the anchor is shared.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .fences import GLUE_REF, find_fences
from simtdocs.snippets import repo_root

#: The course's terms: (Chinese form, English form, variants to avoid in Chinese, in English).
#: The Chinese pages keep some English words (warp, lane, bank, sector) because profilers
#: print them; the Chinese word then appears once, as a gloss in parentheses.
TERMS: list[tuple[str, str, list[str], list[str]]] = [
    ("内核", "kernel", ["kernel"], []),
    ("线程", "thread", [], []),
    ("线程块", "block (thread block)", [], []),
    ("网格", "grid", [], []),
    ("warp（线程束）", "warp", ["线程束"], []),
    ("lane", "lane", [], []),
    ("掩码", "mask", ["mask"], []),
    ("锁步", "lock step", ["齐步"], ["lockstep"]),
    ("发散", "divergence", [], []),
    ("合并访存", "coalescing", [], []),
    ("sector（扇区）", "sector", ["扇区"], []),
    ("bank 冲突", "bank conflict", [], []),
    ("屏障", "barrier", [], []),
    ("数据竞争", "race", [], []),
    ("占用率", "occupancy", [], []),
    ("延迟隐藏", "latency hiding", [], []),
    ("利特尔定律", "Little's law", ["Little 定律"], []),
    ("波", "wave", ["波次"], []),
    ("波量化", "wave quantisation", ["波次量化"], ["wave quantization"]),
    ("尾效应", "tail effect", ["尾部效应"], []),
    ("启动开销", "launch overhead", [], []),
    ("利用率", "utilisation", [], ["utilization"]),
]

#: (language, variant pattern, the form to use), from TERMS. Patterns are regular expressions.
VARIANTS: list[tuple[str, str, str]] = [
    (lang, (r"(?<![A-Za-z_])" + re.escape(v) + r"(?![A-Za-z_])") if v.isascii() else re.escape(v).replace(r"\ ", r"\s*"),
     form.split("（")[0])
    for zh, en, zh_vars, en_vars in TERMS
    for lang, form, variants in (("zh", zh, zh_vars), ("en", en, en_vars))
    for v in variants
]


def terminology_table():
    """The glossary's table: one row per term, with the forms each language's pages do not use
    (in a column of its own: "kernel" is not used on the Chinese pages, where the word is 内核,
    and is the word of the English pages)."""
    from simtdocs.i18n import _

    from simtdocs.display import Table

    rows = [(zh, en, "、".join(zv) or "–", ", ".join(ev) or "–") for zh, en, zv, ev in TERMS]
    return Table(rows, [_("Chinese"), "English", _("not used on the Chinese pages"),
                        _("not used on the English pages")], align="llll")


#: Chinese heading with an English subtitle after " · ".
SUBTITLE = re.compile(r"^#{1,6} .*[\u4e00-\u9fff].*\s·\s+[A-Za-z]")


@dataclass
class Finding:
    page: str
    line: int
    variant: str
    use: str

    def __str__(self) -> str:
        if self.use == "heading":
            return f"docs/{self.page}:{self.line}: a Chinese heading with an English subtitle: {self.variant}"
        return f"docs/{self.page}:{self.line}: '{self.variant}': use '{self.use}'"


def _prose(markdown: str):
    lines = markdown.split("\n")
    skip = set()
    for f in find_fences(lines):
        skip.update(range(f.start, f.end + 1))
    in_script = False
    for i, line in enumerate(lines):
        if "<script" in line:
            in_script = True
        if in_script:
            in_script = "</script>" not in line
            continue
        if i in skip or re.match(r"^\s*\[[^\]]+\]:\s", line) or "--8<--" in line:
            continue
        text = GLUE_REF.sub(" ", line)
        text = re.sub(r"`[^`]*`", " ", text)  # inline code
        text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
        text = re.sub(r"\]\[[^\]]*\]", "]", text)
        text = re.sub(r"<[^>]+>", " ", text)  # raw HTML tags (their attributes)
        text = re.sub(r"\{\s*[#:][^}]*\}", " ", text)  # attribute lists
        yield i + 1, line, text


def check_page(markdown: str, page: str) -> list[Finding]:
    lang = "en" if page.endswith(".en.md") else "zh"
    out = []
    for lineno, raw, text in _prose(markdown):
        if lang == "zh" and SUBTITLE.match(raw):
            out.append(Finding(page, lineno, raw.strip(), "heading"))
        for lang_, pattern, use in VARIANTS:
            # A Chinese page glosses a term in English ("波量化（wave quantisation）"): the
            # English variants are wrong there too.
            if lang_ != lang and not (lang == "zh" and lang_ == "en"):
                continue
            for m in re.finditer(pattern, text):
                before, after = text[: m.start()], text[m.end():]
                if before.endswith(use + "（") and after.startswith("）"):
                    continue  # the gloss of the chosen form: 内核（kernel）
                out.append(Finding(page, lineno, m.group(0), use))
    return out


def check(docs: Path | None = None) -> list[Finding]:
    docs = docs or repo_root() / "docs"
    found: list[Finding] = []
    for path in sorted(docs.rglob("*.md")):
        found += check_page(path.read_text("utf-8"), str(path.relative_to(docs)))
    return found


def main() -> int:
    found = check()
    for f in found:
        print(f)
    print(f"{len(found)} variant term(s)" if found else "one term per concept: no variant forms")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
