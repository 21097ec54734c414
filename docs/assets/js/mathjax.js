// MathJax configuration for pymdownx.arithmatex (generic mode). MathJax itself is
// served from this site (assets/vendor/mathjax), never from a CDN.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex",
  },
};

if (typeof document$ !== "undefined") {
  document$.subscribe(() => {
    if (!window.MathJax || !MathJax.typesetPromise) return;
    // The SVG output has clearFontCache, the CHTML output clearCache: call what exists.
    const out = MathJax.startup.output;
    if (out.clearCache) out.clearCache();
    else if (out.clearFontCache) out.clearFontCache();
    MathJax.typesetClear();
    MathJax.texReset();
    MathJax.typesetPromise();
  });
}
