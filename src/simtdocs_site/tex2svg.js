// TeX to SVG at build time, so no math JavaScript reaches the reader.
// Called by simtdocs_site/math_svg.py: stdin is a JSON list of {"tex": "...", "display": bool},
// stdout the JSON list of the rendered <mjx-container> elements, in the same order.
// Each container holds the SVG (aria-hidden) and the formula as MathML for screen
// readers (MathJax's assistive-mml, visually hidden by the stylesheet). A TeX error
// becomes an "error" entry instead, with MathJax's message.
const fs = require("fs");

// MathJax has no glyphs for Chinese: it draws each character of \text{合并效率} as its own
// <text>, 1 em apart, in a serif font at 0.884 em, so the word reads letter-spaced
// ("合 并 效 率") in another typeface than the prose. A run of such characters becomes one
// <text> in the page's font at 1 em: the browser sets it as text, with its own spacing.
const CJK_CHAR = /^[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]$/;
const ONE_CHAR = /<text data-variant="([^"]*)" transform="(?:translate\(([-\d.]+),0\) )?scale\(1,-1\)" font-size="[\d.]+px" font-family="[^"]*">([^<]*)<\/text>/g;
function cjkAsText(html) {
  return html.replace(/(?:<text data-variant="[^"]*" transform="(?:translate\([-\d.]+,0\) )?scale\(1,-1\)" font-size="[\d.]+px" font-family="[^"]*">[^<]*<\/text>)+/g, (run) => {
    const out = [];
    for (const m of run.matchAll(ONE_CHAR)) {
      const [whole, variant, x, ch] = [m[0], m[1], parseFloat(m[2] || "0"), m[3]];
      const last = out[out.length - 1];
      if (!CJK_CHAR.test(ch)) out.push({whole});
      else if (last && last.chars && Math.abs(x - last.end) < 1) { last.chars += ch; last.end += 1000; }
      else out.push({variant, x, chars: ch, end: x + 1000});
    }
    return out.map((t) => t.whole || `<text data-variant="${t.variant}" data-simt-cjk="" transform="`
      + `${t.x ? `translate(${t.x},0) ` : ""}scale(1,-1)" font-size="1000px" font-family="inherit">${t.chars}</text>`).join("");
  });
}

require("mathjax").init({
  loader: {load: ["input/tex-full", "output/svg", "adaptors/liteDOM", "a11y/assistive-mml"]},
  // Each formula carries the glyphs it uses, so a cached formula is self-contained.
  svg: {fontCache: "local"},
  // An undefined macro is an error (not red text on the page).
  tex: {packages: {"[-]": ["noundefined"]}},
  startup: {typeset: false},
}).then((MathJax) => {
  const adaptor = MathJax.startup.adaptor;
  const items = JSON.parse(fs.readFileSync(0, "utf8"));
  const out = items.map(({tex, display}) => {
    let html;
    try {
      html = adaptor.outerHTML(MathJax.tex2svg(tex, {display}));
    } catch (e) {
      return {error: e.message || String(e)};
    }
    const m = /data-mjx-error="([^"]*)"/.exec(html);
    return m ? {error: m[1]} : {html: cjkAsText(html)};
  });
  const css = adaptor.textContent(MathJax.svgStylesheet());
  process.stdout.write(JSON.stringify({css, out}));
}).catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
