"""A lean search index: prose and headings only.

Material's search plugin indexes a page's whole text. Code blocks, notebook code cells,
formulas, diagrams and tables of numbers make the index twice as heavy and match no query
a reader types, so they are marked ``data-search-exclude`` (which the plugin skips) when the
page's HTML is made (:func:`exclude_from_search`); :func:`unwrap` removes the wrapper
elements again from the finished page.
"""

from __future__ import annotations

import html
import re

# Code blocks of the pages, and the code cells (input and output) of the notebook pages.
CODE_BLOCK = re.compile(r'<div class="(?:highlight|language-\w+ highlight|jp-Cell jp-CodeCell[^"]*)"[^>]*>')
DIV = re.compile(r"<(/?)div\b[^>]*>")
# Material's search parser compares elements by tag name only, so an excluded <div> stops
# being skipped at the first nested </div>. Excluded blocks are wrapped in an element of
# their own instead, which only its own end tag closes; on_post_page removes the wrapper.
SKIP = "search-exclude"
SKIP_TAGS = re.compile(rf"</?{SKIP}\b[^>]*>")
TABLE = re.compile(r"<table\b[^>]*>.*?</table>", re.S)
CELL = re.compile(r"<td\b[^>]*>(.*?)</td>", re.S)
TAG = re.compile(r"<[^>]+>")
# A number as tables show it: 1,024  3.5  −12%  ×4  1.2e6  128 B  0.93 µs  1/3  (2, 8)
NUMBER = re.compile(r"[\s(]*[-−+~≈×x]?[\d.,/:%()\s]+(?:e[-+]?\d+)?\s*(?:[kKMGT]?i?B|[nµu]?s|ms|%|x|×|-way|way)?[\s)]*")


def numeric_table(table: str) -> bool:
    """True if most body cells of ``table`` are numbers (a computed table, not prose)."""
    cells = [html.unescape(TAG.sub("", c)).strip() for c in CELL.findall(table)]
    cells = [c for c in cells if c and c not in "—-–"]
    if not cells:
        return False
    numbers = sum(1 for c in cells if any(ch.isdigit() for ch in c) and NUMBER.fullmatch(c))
    return numbers * 2 >= len(cells)


def wrap_divs(content: str, start: re.Pattern) -> str:
    """Wrap each ``<div>`` that ``start`` matches, to its balanced ``</div>``, in the SKIP element."""
    out, pos = [], 0
    for m in start.finditer(content):
        if m.start() < pos:
            continue  # inside a block already wrapped
        depth = 0
        for d in DIV.finditer(content, m.start()):
            depth += -1 if d.group(1) else 1
            if depth == 0:
                out += [content[pos:m.start()], f"<{SKIP} data-search-exclude>", content[m.start():d.end()],
                        f"</{SKIP}>"]
                pos = d.end()
                break
    return "".join(out) + content[pos:]


def exclude_from_search(content: str) -> str:
    """Mark code blocks, diagrams and tables of numbers so Material's search index skips them."""
    content = wrap_divs(content, CODE_BLOCK)
    content = content.replace('<pre class="mermaid">', '<pre class="mermaid" data-search-exclude>')

    def table(m):
        t = m.group(0)
        return t.replace("<table", "<table data-search-exclude", 1) if numeric_table(t) else t

    return TABLE.sub(table, content)



def unwrap(output: str) -> str:
    """The finished page without the :data:`SKIP` wrappers (search has read the page by now)."""
    return SKIP_TAGS.sub("", output)
