// Figures as drawings (issue 27): each SVG figure file, drawn in the page, read for text that
// leaves the canvas or the cell it is drawn on, and for a legend that promises numbers in cells
// that show none. Called once per session by tests/browser/test_reader.py with the figures'
// addresses; returns {address: [finding, ...]}.
async (figures) => {
  const short = (s, n = 80) => s.replace(/\s+/g, " ").trim().slice(0, n);
  async function checkDrawing(text, name) {
    const found = [];
    const host = document.createElement("div");
    host.style.cssText = "position:absolute;left:-20000px;top:0;visibility:hidden";
    host.innerHTML = text.replace(/^<\?xml[^>]*>/, "").replace(/<!DOCTYPE[^>]*>/, "");
    document.body.appendChild(host);
    try {
      const svg = host.querySelector("svg");
      if (!svg) return found;
      const canvas = svg.getBoundingClientRect();
      // cells: filled rectangles (matplotlib paths "M x y L x y L x y L x y z")
      const cells = [];
      for (const p of svg.querySelectorAll("path")) {
        if (p.closest("defs, [id^=text_], [id^=legend_] [id^=text_]")) continue;
        const d = (p.getAttribute("d") || "").trim();
        const pts = [...d.matchAll(/[ML]\s*([-\d.]+)\s+([-\d.]+)/g)].map((m) => [+m[1], +m[2]]);
        if (pts.length < 4 || pts.length > 5 || !/z\s*$/i.test(d)) continue;
        const xs = new Set(pts.map((q) => q[0].toFixed(1))), ys = new Set(pts.map((q) => q[1].toFixed(1)));
        if (xs.size !== 2 || ys.size !== 2) continue;
        const style = p.getAttribute("style") || "";
        if (/fill:\s*none/.test(style) && !/stroke/.test(style)) continue;
        const r = p.getBoundingClientRect();
        if (r.width < 2 || r.height < 2) continue;
        if (r.width >= canvas.width - 1 && r.height >= canvas.height - 1) continue;  // the figure's background
        cells.push({r, id: (p.closest("g[id]") || {}).id || ""});
      }
      const texts = [...svg.querySelectorAll("g[id^=text_]")].filter((g) => !g.parentElement.closest("g[id^=text_]"));
      for (const g of texts) {
        const r = g.getBoundingClientRect();
        if (r.width === 0) continue;
        const what = (g.firstChild && g.firstChild.nodeType === 8 ? g.firstChild.textContent : g.id).trim();
        if (r.left < canvas.left - 0.5 || r.right > canvas.right + 0.5 || r.top < canvas.top - 0.5 || r.bottom > canvas.bottom + 0.5)
          found.push(`${name}: text "${short(what, 30)}" runs off the canvas`);
        const cx = (r.left + r.right) / 2, cy = (r.top + r.bottom) / 2;
        let best = null;
        for (const c of cells) {
          if (cx >= c.r.left && cx <= c.r.right && cy >= c.r.top && cy <= c.r.bottom
              && (!best || c.r.width * c.r.height < best.r.width * best.r.height)) best = c;
        }
        if (best && (r.left < best.r.left - 0.75 || r.right > best.r.right + 0.75))
          found.push(`${name}: text "${short(what, 30)}" spills out of its cell ${best.id} (${r.width.toFixed(1)} px in ${best.r.width.toFixed(1)} px)`);
      }
      // a legend that promises numbers in the cells: the cells carry them
      const legend = [...svg.querySelectorAll("[id^=legend_] [id^=text_]")].map((g) => (g.firstChild && g.firstChild.nodeType === 8 ? g.firstChild.textContent : ""));
      const promised = legend.filter((t) => /\bits number\b|numbers? in (the|each) cell|格中数字|数字是/.test(t));
      if (promised.length) {
        const numbered = cells.filter((c) => /^cell-/.test(c.id)).some((c) => texts.some((g) => {
          const r = g.getBoundingClientRect(), cx = (r.left + r.right) / 2, cy = (r.top + r.bottom) / 2;
          return cx >= c.r.left && cx <= c.r.right && cy >= c.r.top && cy <= c.r.bottom;
        }));
        if (!numbered) found.push(`${name}: the legend says "${short(promised[0], 40)}" but no cell shows a number`);
      }
    } finally {
      host.remove();
    }
    return found;
  }


  const out = {};
  for (const {src, name} of figures) {
    let text = "";
    try { text = await (await fetch(src)).text(); } catch (e) { out[src] = [`${name}: could not be fetched`]; continue; }
    out[src] = await checkDrawing(text, name);
  }
  return out;
}
