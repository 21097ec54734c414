"""axe-core, the accessibility engine, run inside a page the browser tests opened.

axe-core comes from npm (``node_modules/axe-core``, installed by ``make test``) and is
injected as an inline script: nothing is fetched from another host.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"
FAILING_IMPACTS = ("serious", "critical")

RUN_JS = """async () => {
  const r = await axe.run(document, {resultTypes: ['violations']});
  return {version: axe.version, violations: r.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 160),
                              summary: (n.failureSummary || '').slice(0, 400)})),
  }))};
}"""


def run_axe(tab) -> dict:
    """``{"version", "violations": [...]}`` for the page as it is now, or ``{"error": ...}``."""
    if not AXE_JS.is_file():
        return {"error": f"axe-core is not installed ({AXE_JS} missing): run `npm ci` (make test does)"}
    try:
        if not tab.evaluate("typeof window.axe !== 'undefined'"):
            tab.add_script_tag(content=AXE_JS.read_text(encoding="utf-8"))
        return tab.evaluate(RUN_JS)
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
