// TeX to SVG at build time, so no math JavaScript reaches the reader.
// Called by hooks/page_weight.py: stdin is a JSON list of {"tex": "...", "display": bool},
// stdout the JSON list of the rendered <mjx-container> elements, in the same order.
// Each container holds the SVG (aria-hidden) and the formula as MathML for screen
// readers (MathJax's assistive-mml, visually hidden by the stylesheet). A TeX error
// becomes an "error" entry instead, with MathJax's message.
const fs = require("fs");

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
    return m ? {error: m[1]} : {html};
  });
  const css = adaptor.textContent(MathJax.svgStylesheet());
  process.stdout.write(JSON.stringify({css, out}));
}).catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
