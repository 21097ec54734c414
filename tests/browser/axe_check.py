"""axe-core, the accessibility engine, run inside a page the browser tests opened.

axe-core comes from npm (``node_modules/axe-core``, installed by ``make test``) and is
injected as an inline script: nothing is fetched from another host.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"
FAILING_IMPACTS = ("serious", "critical")

# A second colour scheme changes colours and the diagrams Mermaid redraws for it, nothing else
# of the page: there, every rule of axe's colour category runs on the whole page and every
# rule on the diagrams (the rest would repeat the first scheme's run, at a few seconds a page).
# axe's colour category (tag cat.color) but color-contrast-enhanced, a AAA rule axe leaves off.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
# Code blocks are coloured by one highlighter's classes on one background per kind of block:
# their contrast is the same on every page, and a long page's thousands of token spans were a
# third to a half of its colour rules' time. The colour rules leave them out of the pages
# (every other rule still reads them) and read them once per language and scheme, every token
# class the site uses in every kind of block, on one page (code_palette,
# test_a11y.test_code_colours_have_contrast_in_both_schemes). They are left out by each colour
# rule's own selector (axe.configure), not by a second run with code blocks excluded from its
# context: one run of every rule finds the same nodes (checked rule by rule on six pages) and
# builds axe's tree of the page once instead of twice (a seventh to a half of the time).
CODE_BLOCKS = [".highlight", ".highlight-ipynb"]
# A node's CSS selector is the costliest part of a result after the rules themselves (a fifth
# of a long page's run): a clean run reports none, so selectors are made only when a rule
# failed, by running the failing rules again.
RUN_JS = """async ([mode, COLOUR_RULES, CODE_BLOCKS]) => {
  const keep = r => r.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 160),
                              summary: (n.failureSummary || '').slice(0, 400)})),
  }));
  const run = async (context, options) => {
    const quick = await axe.run(context, {...options, resultTypes: ['violations'], selectors: false});
    if (!quick.violations.length) return [];
    return keep(await axe.run(context, {runOnly: {type: 'rule', values: quick.violations.map(v => v.id)},
                                        resultTypes: ['violations']}));
  };
  const colours = {runOnly: {type: 'rule', values: COLOUR_RULES}};
  const merge = lists => lists.flat().filter((v, i, all) => all.findIndex(w => w.id === v.id) === i);
  axe.reset();
  if (mode === 'code')  // the colour rules on the palette's blocks (code_palette)
    return {version: axe.version, violations: await run({include: [...document.querySelectorAll('[data-palette]')]}, colours)};
  const outsideCode = CODE_BLOCKS.map(c => `:not(${c}):not(${c} *)`).join('');
  axe.configure({rules: COLOUR_RULES.map(id => {
    const rule = axe._audit.rules.find(r => r.id === id);
    return {id, selector: (rule.selector || '*').split(',').map(s => s.trim() + outsideCode).join(', ')};
  })});
  if (mode === 'light')
    return {version: axe.version, violations: await run(document, {})};
  const colour = await run(document, colours);
  const diagrams = [...document.querySelectorAll('.mermaid')];
  const drawn = diagrams.length ? await run({include: diagrams}, {}) : [];
  return {version: axe.version, violations: merge([colour, drawn])};
}"""


def run_axe(tab, recoloured: bool = False, code: bool = False) -> dict:
    """``{"version", "violations": [...]}`` for the page as it is now, or ``{"error": ...}``:
    every rule, the colour rules outside code blocks. ``recoloured``: the page was checked
    already and only its colour scheme changed since (the colour rules on the page outside
    code blocks, every rule on its diagrams). ``code``: the colour rules on the code blocks
    only (the palette page, ``code_palette``)."""
    if not AXE_JS.is_file():
        return {"error": f"axe-core is not installed ({AXE_JS} missing): run `npm ci` (make test does)"}
    try:
        if not tab.evaluate("typeof window.axe !== 'undefined'"):
            tab.add_script_tag(content=AXE_JS.read_text(encoding="utf-8"))
        mode = "code" if code else "dark" if recoloured else "light"
        return tab.evaluate(RUN_JS, [mode, COLOUR_RULES, CODE_BLOCKS])
    except Exception as exc:  # reported by the test, the visit goes on
        return {"error": f"axe-core did not run: {type(exc).__name__}: {str(exc).splitlines()[0]}"}


def serious(result: dict) -> list[dict]:
    return [v for v in result.get("violations", []) if v["impact"] in FAILING_IMPACTS]


def describe(violations: list[dict], nodes_each: int = 3) -> list[str]:
    """One line per rule and a few of its nodes, enough to find and fix them."""
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}, {len(v['nodes'])} nodes): {v['help']}")
        for n in v["nodes"][:nodes_each]:
            summary = " ".join(n["summary"].split())
            lines.append(f"    {n['target']}  {n['html'][:100]!r}  {summary[:200]}")
    return lines


# The code blocks' kinds: a page's ```` ```lang ```` fence and a notebook's code cell.
_BLOCK = re.compile(r'<div class="((?:language-[\w-]+ )?highlight|highlight-ipynb[\w -]*)">(.*?)</pre>', re.S)
_TOKEN = re.compile(r'<span class="([\w-]+)">')


def code_palette(pages) -> dict[str, tuple[Path, str]]:
    """Per kind of code block the ``pages`` (``index.html`` files) hold: the smallest page
    with one, and the HTML of one block of that kind with a token of every highlighter class
    used in blocks of that kind anywhere in ``pages``, a title where such blocks have one, and
    plain text. Shown beside a block of its kind (its ancestors' background), it holds what
    the colour rules leave out of the pages (``CODE_BLOCKS``)."""
    from pygments.token import STANDARD_TYPES

    token_classes = set(STANDARD_TYPES.values()) - {""}
    kinds: dict[str, dict] = {}
    for page in sorted(pages, key=lambda p: Path(p).stat().st_size, reverse=True):
        for kind, body in _BLOCK.findall(Path(page).read_text(encoding="utf-8")):
            k = kinds.setdefault(kind, {"classes": set(), "titled": False})
            k["classes"].update(c for c in _TOKEN.findall(body) if c in token_classes)
            k["titled"] |= '<span class="filename">' in body
            k["page"] = Path(page)  # the last one seen: the smallest
    out = {}
    for kind, k in sorted(kinds.items()):
        title = '<span class="filename">a block title</span>' if k["titled"] else ""
        lines = "\n".join(f'<span class="{c}">token_{c} = 1</span>' for c in sorted(k["classes"]))
        out[kind] = (k["page"], f'<div class="{kind}" data-palette>{title}<pre><span></span><code>plain text\n'
                                f'{lines}</code></pre></div>')
    return out
