"""Typed numbers: prose that states a number its own page's code uses. ``python -m simtdocs_site.numbers``

A page's inputs (``n = 1000``, ``M, N = 100, 70``, a block of 256 threads) are numbers too:
when a companion script changes one, every mention in the prose must change with it, in
both languages. So an input the prose states is glued (``glue("p2_n", n)``, then
``{{ p2_n }}``), like a result.

This check lists every number in a page's prose (text, inline code and math, not code
blocks) that equals a numeric literal of the code that page executes (its ```` ```python ````
fences with their ``--8<--`` includes expanded) and is not glued. A few numbers are
structural constants of the hardware or of the notation rather than inputs: they are in
:data:`ALLOWED`, each with the reason. Labels are not numbers either: section numbers
(§7.2), list markers, "exercise 3", "version 2", "code 05", years in citations.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .fences import GLUE_REF, find_fences
from simtdocs.snippets import expand_snippets, repo_root

#: Numbers that may be typed although the code has them as literals: constants of the
#: hardware or of arithmetic, never a demo's input. Keep this list short; an input that a
#: reader could change in a companion script does not belong here.
ALLOWED: dict[float, str] = {
    0: "zero: an index origin or an empty count",
    1: "one: 'one block', 'one request', the first lane",
    2: "two: 'two paths', halving, powers of two",
    4: "4 bytes in a float32 / int32; the 4 warp schedulers and 4 sub-partitions of an SM",
    8: "8 bytes in a float64",
    16: "16 bytes of a float4 vector load; the 16 lanes of a half warp",
    31: "the last lane of a warp (lanes 0-31)",
    32: "32 lanes per warp, 32 shared-memory banks, 32-byte sectors",
    1024: "1,024 threads per block, the CUDA limit on every current GPU",
}

# Labels: a number right after one of these words is a name, not a quantity.
LABEL = re.compile(
    r"(?:§\s?|[Ee]xercises?\s|练习\s?|[Vv]ersions?\s|版本\s?|[Cc]ode\s|代码\s?|[Dd]emo\s|演示\s?|[Pp]itfall\s|"
    r"误区\s?|[Ff]igure\s|[Tt]able\s|图\s?|表\s?|[Ss]tep\s|第\s?|[Cc]hapter\s|章\s?|compute capability\s|计算能力\s?|"
    r"arXiv:|Llama\s|Llama\s3\.\d\s|GTC\s|ISPASS\s|RTX\s|[Tt]esla\s[MK]|sm_|CC\s|v)$"
)
# "versions 3–5", "versions 2 and 3", "Version 2 → 3", "版本 4、5": the later numbers are labels too.
LABEL_SEQ = re.compile(r"(?:[Vv]ersions?|版本|[Ee]xercises?|练习|§)\s?(?:\d+\s?(?:–|-|、|和|与|and|or|,|→)\s?)+$")
#: Cited facts that happen to equal a literal of the page's code: (page, phrase, source).
#: The number is a published figure, named with its source in the prose, not an input.
CITED: list[tuple[str, str, str]] = [
    ("p2", r"64 FP64 operations, 64 INT32 operations", "CUDA C++ Programming Guide, throughput table, cc 9.0"),
    ("p2", r"64 次 FP64 运算、64 次 INT32 运算", "the same, in Chinese"),
    ("p2", r"256 KB of SRAM|256 KB 的 SRAM", "H100 whitepaper: 256 KB of combined L1 and shared memory per SM"),
    ("exec-model", r"64 threads on CDNA|64-thread wavefronts|64 个线程的 wavefront|CDNA（Instinct）上是 64", "AMD HIP documentation: wavefront size 64 on CDNA"),
]
NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\w])")
YEAR = re.compile(r"^(19|20)\d\d$")


@dataclass
class Finding:
    page: str  # relative to docs/
    line: int
    number: str
    context: str

    def __str__(self) -> str:
        return f"docs/{self.page}:{self.line}: {self.number} is typed, and the page's code has it as a literal: …{self.context}…"


def code_literals(markdown: str) -> set[float]:
    """Numeric literals of the code a page executes (its python fences, includes expanded)."""
    values: set[float] = set()
    for f in find_fences(markdown.split("\n")):
        if f.info != "python":
            continue
        code = expand_snippets(f.code)
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and type(node.value) in (int, float):
                values.add(node.value)
    return values


def _prose_lines(markdown: str):
    """(line number, text) of the prose: fences, HTML comments and link targets removed."""
    lines = markdown.split("\n")
    skip = set()
    for f in find_fences(lines):
        skip.update(range(f.start, f.end + 1))
    in_comment = in_script = False
    for i, line in enumerate(lines):
        if "<script" in line:
            in_script = True
        if in_script:  # a page's own script is code, not prose
            in_script = "</script>" not in line
            continue
        if i in skip:
            continue
        if in_comment or "<!--" in line:
            in_comment = "-->" not in line.split("<!--")[-1]
            line = re.sub(r"<!--.*?(-->|$)", "", line)
        if re.match(r"^\s*\[[^\]]+\]:\s", line):  # a link reference definition
            continue
        line = GLUE_REF.sub(" ", line)  # glued: computed, fine
        line = re.sub(r"\]\([^)]*\)", "]", line)  # link targets
        line = re.sub(r"\]\[[^\]]*\]", "]", line)  # reference-style link keys
        line = re.sub(r"\{\s*#[\w-]+\s*\}", "", line)  # heading anchors
        line = re.sub(r"^\s*(?:#{1,6}\s+)?(?:[-*]\s+)?\d+(?:\.\d+)*[.)]?\s", " ", line)  # list markers, heading numbers
        line = line.replace("{,}", ",")  # TeX thousands separator: 1{,}000
        yield i + 1, line


def check_page(markdown: str, page: str) -> list[Finding]:
    literals = code_literals(markdown)
    out = []
    for lineno, text in _prose_lines(markdown):
        for m in NUMBER.finditer(text):
            raw = m.group(0)
            before = text[max(0, m.start() - 24): m.start()]
            if any(page.split("/")[0].startswith(pg) and re.search(phrase, text[max(0, m.start() - 40): m.end() + 40])
                   for pg, phrase, _ in CITED):
                continue  # a cited figure (see CITED)
            if LABEL.search(before) or LABEL_SEQ.search(before) or re.search(r"(?:^|[^\w])\[$", before) or re.search(r"\*\*$", before):
                continue  # a label: §7.2, exercise 3, [03 notebook], **3. question
            if raw == "100" and text[m.end(): m.end() + 1] == "%":
                continue  # 100%: "all of it", not an input
            if YEAR.match(raw) and re.search(r"[(（,，]\s*$|\s$", before):
                continue
            value = float(raw.replace(",", ""))
            value = int(value) if value.is_integer() and "." not in raw else value
            if text[m.end(): m.end() + 1] == "%":
                value = value / 100  # "10%" states the literal 0.10
            if value in ALLOWED or value not in literals:
                continue
            ctx = text[max(0, m.start() - 40): m.end() + 30].strip()
            out.append(Finding(page, lineno, raw, ctx))
    return out


def check(docs: Path | None = None) -> list[Finding]:
    """Every typed number of every page (both languages) under ``docs`` (default: docs/)."""
    docs = docs or repo_root() / "docs"
    findings: list[Finding] = []
    for path in sorted(docs.rglob("*.md")):
        findings += check_page(path.read_text("utf-8"), str(path.relative_to(docs)))
    return findings


def main() -> int:
    findings = check()
    for f in findings:
        print(f)
    pages = len({f.page for f in findings})
    print(f"{len(findings)} typed number(s) on {pages} page(s)" if findings else "no typed numbers: every input the prose states is glued")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
