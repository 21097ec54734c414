"""axe-core, the accessibility engine, run inside a page the browser tests opened.

axe-core comes from npm (``node_modules/axe-core``, installed by ``make test``) and is
injected as an inline script: nothing is fetched from another host.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"
FAILING_IMPACTS = ("serious", "critical")

# A second colour scheme changes colours and the diagrams Mermaid redraws for it, nothing else
# of the page: there, every rule of axe's colour category runs on the whole page and every
# rule on the diagrams (the rest would repeat the first scheme's run, at a few seconds a page).
# axe's colour category (tag cat.color) but color-contrast-enhanced, a AAA rule axe leaves off.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
# A node's CSS selector is the costliest part of a result after the rules themselves (a fifth
# of a long page's run): a clean run reports none, so selectors are made only when a rule
# failed, by running the failing rules again.
RUN_JS = """async ([recoloured, COLOUR_RULES]) => {
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
  if (!recoloured)
    return {version: axe.version, violations: await run(document, {})};
  const colour = await run(document, {runOnly: {type: 'rule', values: COLOUR_RULES}});
  const diagrams = [...document.querySelectorAll('.mermaid')];
  const drawn = diagrams.length ? await run({include: diagrams}, {}) : [];
  return {version: axe.version, violations: colour.concat(drawn.filter(v => !colour.some(c => c.id === v.id)))};
}"""


def run_axe(tab, recoloured: bool = False) -> dict:
    """``{"version", "violations": [...]}`` for the page as it is now, or ``{"error": ...}``.
    ``recoloured``: the page was checked already and only its colour scheme changed since
    (the colour rules on the page, every rule on its diagrams)."""
    if not AXE_JS.is_file():
        return {"error": f"axe-core is not installed ({AXE_JS} missing): run `npm ci` (make test does)"}
    try:
        if not tab.evaluate("typeof window.axe !== 'undefined'"):
            tab.add_script_tag(content=AXE_JS.read_text(encoding="utf-8"))
        return tab.evaluate(RUN_JS, [recoloured, COLOUR_RULES])
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
