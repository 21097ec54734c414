"""Numbered figures and tables, cross-references by label, marked output, reading time.

The numbering step of the MkDocs plugin (:mod:`simtdocs_site.plugin`) post-processes each lecture page's HTML:

- every figure (``<figure class="simt-figure">``) and every table is numbered by the
  section it sits in: "Figure 5.2" is the second figure of §5 (the number the ``## 5. …``
  heading starts with). A page whose sections carry no numbers (the home page, the
  glossary) numbers them through the page: "Table 1", "Table 2". Inserting a figure
  renumbers the rest, in both languages, because nothing is typed;
- a caption paragraph right after a block labels what the block showed and gives a table
  its caption, with the attribute list on a line of its own (as attr_list wants it)::

      Table: Sectors per warp access.          (表：… in Chinese)
      {: #tbl-patterns }

  A figure's caption comes from its code, so its paragraph is just ``Figure:`` (``图：``)
  with the ``{: #fig-name }`` line. Add ``.cited`` to a table's attributes when its
  numbers are quoted from a source, not computed;
- an empty link to a label, ``[](#tbl-name)`` or ``[](p2/memory.md#fig-name)``, becomes
  "Table 5.1" / "表 5.1";
- what a code block printed or showed is wrapped as output (see :func:`mark_output`);
- a lecture page gets its reading time under its title, computed from the English text.
"""

from __future__ import annotations

import html as htmlmod
import math
import re
from pathlib import Path

from .fences import GLUE_REF, find_fences

WORDS = {"zh": {"Figure": "图", "Table": "表", "cited": "（引用，非计算）", "output": "输出",
                "reading": "阅读时间：约 {} 分钟（含运行代码）"},
         "en": {"Figure": "Figure", "Table": "Table", "cited": " (cited, not computed)", "output": "Output",
                "reading": "Reading time: about {} minutes, including running the code"}}

H2 = re.compile(r"<h2\b[^>]*>(.*?)</h2>", re.S)
FIGURE = re.compile(r'<figure class="simt-figure"(?P<attrs>[^>]*)>(?P<body>.*?)</figure>', re.S)
TABLE = re.compile(r"<table\b(?P<attrs>[^>]*)>")
# A caption paragraph: <p id="tbl-x" class="cited">Table: text</p> (attr_list puts id/class on the <p>)
CAPTION_P = re.compile(
    r'<p\b(?P<attrs>[^>]*\bid="(?P<id>(?:fig|tbl)-[\w-]+)"[^>]*)>\s*(?P<kind>Figure|Table|图|表)\s*[:：]\s*(?P<text>.*?)</p>',
    re.S)
EMPTY_REF = re.compile(r'<a\b(?P<attrs>[^>]*\bhref="(?P<href>[^"]*#(?:fig|tbl)-[\w-]+)"[^>]*)></a>')
SECTION_NUMBER = re.compile(r"^\s*(?:<[^>]+>\s*)*(\d+)[.\s]")


def _section_numbers(content: str) -> list[tuple[int, str]]:
    """(offset in the HTML, section number) of every <h2>, in order; empty on a page whose
    sections carry no numbers (its figures and tables are numbered 1, 2, … through the page)."""
    found = [(m.start(), SECTION_NUMBER.match(m.group(1))) for m in H2.finditer(content)]
    if not any(num for _, num in found):
        return []
    return [(start, num.group(1) if num else str(k)) for k, (start, num) in enumerate(found, start=1)]


def _section_at(sections: list[tuple[int, str]], offset: int, default: str) -> str:
    current = default
    for start, num in sections:
        if start > offset:
            break
        current = num
    return current


def number(content: str, lang: str, default_section: str = "0") -> tuple[str, dict[str, str]]:
    """Number the figures and tables of one page; return the HTML and {label: "Figure 5.2"}."""
    words = WORDS["zh" if lang == "zh" else "en"]
    sections = _section_numbers(content)
    items = sorted([(m.start(), "Figure", m) for m in FIGURE.finditer(content)]
                   + [(m.start(), "Table", m) for m in TABLE.finditer(content)], key=lambda t: t[0])
    counters: dict[tuple[str, str], int] = {}
    names: dict[int, str] = {}  # offset of the item -> "Figure 5.2"
    for offset, kind, _ in items:
        sec = _section_at(sections, offset, default_section) if sections else ""
        counters[(kind, sec)] = counters.get((kind, sec), 0) + 1
        names[offset] = f"{words[kind]} {sec + '.' if sec else ''}{counters[(kind, sec)]}"

    labels: dict[str, str] = {}
    captions: dict[int, tuple[str, str, bool]] = {}  # item offset -> (label, caption html, cited)
    # Captions in a row (a block that showed two tables) go to the last items before them, in order.
    caps = list(CAPTION_P.finditer(content))
    groups: list[list[re.Match]] = []
    for cap in caps:
        if groups and not content[groups[-1][-1].end(): cap.start()].strip():
            groups[-1].append(cap)
        else:
            groups.append([cap])
    for group in groups:
        for kind in ("Figure", "Table"):
            mine = [c for c in group if ("Figure" if c.group("kind") in ("Figure", "图") else "Table") == kind]
            if not mine:
                continue
            before = [o for o, k, _ in items if k == kind and o < group[0].start() and o not in captions]
            if len(before) < len(mine):
                raise ValueError(f"caption {mine[0].group('id')!r} follows no {kind.lower()} of its own")
            for cap, target in zip(mine, before[-len(mine):]):
                classes = re.search(r'class="([^"]*)"', cap.group("attrs"))
                cited = bool(classes) and "cited" in classes.group(1).split()
                captions[target] = (cap.group("id"), cap.group("text").strip(), cited)
                labels[cap.group("id")] = names[target]

    # Rebuild the HTML: number every item, attach labels and captions, drop caption paragraphs.
    out, pos = [], 0
    edits = [(m.start(), m.end(), "item", (k, m)) for _, k, m in items]
    edits += [(c.start(), c.end(), "caption", None) for c in CAPTION_P.finditer(content)]
    for start, end, what, data in sorted(edits, key=lambda e: e[0]):
        out.append(content[pos:start])
        pos = end
        if what == "caption":
            continue
        kind, m = data
        name = names[start]
        label, text, cited = captions.get(start, (None, "", False))
        idattr = f' id="{label}"' if label else ""
        mark = f'<span class="simt-cited">{words["cited"]}</span>' if cited else ""
        num = f'<span class="simt-number">{name}</span>'
        if kind == "Figure":
            body = m.group("body")
            if "<figcaption>" in body:
                body = body.replace("<figcaption>", f"<figcaption>{num}{'：' if lang == 'zh' else ': '}", 1)
            else:
                body += f"<figcaption>{num}</figcaption>"
            out.append(f'<figure class="simt-figure"{m.group("attrs")}{idattr}>{body}</figure>')
        else:
            sep = "：" if lang == "zh" else ": "
            caption = f"{num}{sep}{text}{mark}" if text else f"{num}{mark}"
            cls = ' data-cited="true"' if cited else ""  # no class: Material styles only tables without one
            out.append(f'<table{m.group("attrs")}{idattr}{cls}><caption>{caption}</caption>')
    out.append(content[pos:])
    return "".join(out), labels


def fill_refs(content: str, resolve) -> str:
    """Empty links to a label get the label's name: ``resolve(href)`` -> "Table 5.1" or None."""
    def repl(m):
        name = resolve(htmlmod.unescape(m.group("href")))
        if name is None:
            raise ValueError(f"cross-reference to an unknown label: {m.group('href')}")
        return f"<a{m.group('attrs')}>{name}</a>"
    return EMPTY_REF.sub(repl, content)


def reading_minutes(markdown: str) -> int:
    """Minutes to read a page and run its code: 200 words a minute, one minute per python block,
    rounded up to five minutes."""
    lines = markdown.split("\n")
    fences = find_fences(lines)
    inside = set()
    for f in fences:
        inside.update(range(f.start, f.end + 1))
    prose = " ".join(GLUE_REF.sub("N", ln) for i, ln in enumerate(lines) if i not in inside)
    words = len(re.findall(r"[A-Za-z0-9]+(?:['’.-][A-Za-z0-9]+)*", prose))
    blocks = sum(1 for f in fences if f.info == "python")
    return max(5, 5 * math.ceil((words / 200 + blocks) / 5))


def reading_time_html(minutes: int, lang: str) -> str:
    return f'<p class="simt-reading-time"><em>{WORDS["zh" if lang == "zh" else "en"]["reading"].format(minutes)}</em></p>'


# Inline styles: the box needs no stylesheet of its own. The label keeps the text colour
# (full contrast) and is set apart by size, weight and capitals only.
OUTPUT_BOX = ("border-left: 4px solid var(--md-default-fg-color--lighter, #999); "
              "padding: .1rem 0 .1rem .8rem; margin: 0 0 1.2em")
OUTPUT_LABEL = "font-size: .7rem; font-weight: 700; letter-spacing: .05em; text-transform: uppercase; margin: 0"


def _pattern(line: str) -> re.Pattern:
    """A source line as the build may have changed it: every ``{{ name }}`` filled in."""
    parts = GLUE_REF.split(line)
    return re.compile(".*?".join(re.escape(p) for p in parts[::2]), re.S)


def mark_output(source: str, processed: str, lang: str = "en") -> str:
    """Wrap the lines the build inserted after each python fence in an output box.

    ``source`` is the page as written, ``processed`` the page with outputs inserted after
    their fences and glue filled in (which changes lines but not their number). Walking
    both in step, whatever ``processed`` has between a python fence's last line and the
    source's next lines is that fence's output.
    """
    src = source.split("\n")
    out = processed.split("\n")
    ends = {f.end: f for f in find_fences(src) if f.info == "python"}
    word = WORDS["zh" if lang == "zh" else "en"]["output"]
    result: list[str] = []
    j = 0
    for i, line in enumerate(src):
        if j >= len(out):  # mkdocs may hand over the page without its trailing blank lines
            break
        result.append(out[j])
        j += 1
        if i not in ends:
            continue
        follow = [_pattern(x) for x in src[i + 1: i + 5]]

        def matches_at(k):
            return all(k + n < len(out) and pat.fullmatch(out[k + n]) for n, pat in enumerate(follow))

        k = j
        while k < len(out) and not matches_at(k):
            k += 1
        inserted = out[j:k]
        j = k
        if not any(x.strip() for x in inserted):
            result += inserted
            continue
        indent = ends[i].indent
        label = f'<p class="simt-output-label" style="{OUTPUT_LABEL}">{word}</p>'
        result += ["", f'{indent}<div class="simt-output" markdown="1" style="{OUTPUT_BOX}">', "",
                   f"{indent}{label}", ""]
        result += inserted
        result += ["", f"{indent}</div>", ""]
    result += out[j:]
    return "\n".join(result)


def english_source(abs_src_path: str) -> str | None:
    """The English page of a page (``x.md`` -> ``x.en.md``), or the page itself if English."""
    p = Path(abs_src_path)
    en = p if p.name.endswith(".en.md") else p.with_name(p.name[: -len(".md")] + ".en.md")
    return en.read_text("utf-8") if en.exists() else None
