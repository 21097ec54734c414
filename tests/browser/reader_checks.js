// The reader's pass (issue 27): what a reader would find wrong on one page, gathered in one
// evaluate. Called by tests/browser/test_reader.py once per (page, language, width, scheme)
// with {lang, width, all}; returns a list of findings per class, each a short string. Without
// `all` (the second colour scheme) only what a scheme could change is checked: clipping,
// figures on a phone, typography. The figures' drawings are checked once per figure file by
// drawing_checks.js.
async ({lang, width, all}) => {
  const out = {language: [], clipped: [], phone: [], captions: [], typography: [],
               numbering: [], headings: [], title: "", words: [], figures: [], c_code: [],
               scheme: document.body.getAttribute("data-md-color-scheme")};
  const article = document.querySelector("article.md-content__inner") || document.querySelector("article");
  if (!article) return out;
  const HAN = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/;
  const CJK_SENTENCE = /[\u3400-\u9fff\uf900-\ufaff][^。！？]{8,}[。！？，]/;
  // An English sentence: six words or more in a row (names of things are shorter).
  const EN_SENTENCE = /[A-Za-z][A-Za-z'’.-]*(?:[\s\u00a0,;:()]+[A-Za-z][A-Za-z'’.-]*){5,}/;
  const NOT_PROSE = "pre, code, kbd, samp, script, style, svg, mjx-container, .arithmatex, .highlight, "
    + ".jp-InputArea, .jp-OutputArea, .md-clipboard, .md-code__button, .headerlink, .md-source-file, "
    + ".mermaid, textarea, [aria-hidden=true]";
  // Names and marked terms: titles (em, cite), quotations, glossary terms.
  const NAMES = "em, cite, q, blockquote, abbr, i, .simt-term";
  const short = (s, n = 80) => s.replace(/\s+/g, " ").trim().slice(0, n);
  const label = (el) => {
    const id = el.closest("[id]");
    const cls = typeof el.className === "string" && el.className.trim() ? "." + el.className.trim().split(/\s+/)[0] : "";
    return el.tagName.toLowerCase() + cls + (id && id !== el ? ` in #${id.id}` : el.id ? `#${el.id}` : "");
  };
  const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };

  // -- language of every paragraph ----------------------------------------------------------
  if (all) {
  const BLOCKS = "p, li, td, th, figcaption, caption, h1, h2, h3, h4, h5, h6, dt, dd, summary, .admonition-title, .jp-RenderedMarkdown > *";
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  const perBlock = new Map();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const parent = n.parentElement;
    if (!parent || parent.closest(NOT_PROSE)) continue;
    const block = parent.closest(BLOCKS);
    if (!block || !article.contains(block)) continue;
    const named = !!parent.closest(NAMES);
    const marked = parent.closest("[lang]");
    const entry = perBlock.get(block) || {prose: "", zh: []};
    if (lang === "zh") { if (!named) entry.prose += n.textContent; }
    else if (HAN.test(n.textContent)) {
      // Chinese on an English page: a term's name in a lang span, never a sentence
      const own = marked && marked !== document.documentElement && (marked.getAttribute("lang") || "").startsWith("zh");
      if (!own) entry.zh.push("unmarked: " + short(n.textContent, 40));
      else if (CJK_SENTENCE.test(n.textContent) || n.textContent.replace(/[^\u3400-\u9fff]/g, "").length > 12)
        entry.zh.push("a Chinese sentence: " + short(n.textContent, 40));
    }
    perBlock.set(block, entry);
  }
  for (const [block, e] of perBlock) {
    if (lang === "zh") {
      const m = EN_SENTENCE.exec(e.prose.replace(/https?:\/\/\S+/g, " ").replace(/“[^”]*”|《[^》]*》|「[^」]*」/g, " "));
      if (m) out.language.push(`${label(block)}: English sentence "${short(m[0], 70)}"`);
    } else {
      for (const z of e.zh) out.language.push(`${label(block)}: ${z}`);
    }
  }

  }

  // -- nothing clipped ------------------------------------------------------------------------
  const docW = document.documentElement.scrollWidth;
  if (docW > window.innerWidth + 1) out.clipped.push(`the page scrolls sideways: ${docW} px wide in a ${window.innerWidth} px window`);
  for (const el of article.querySelectorAll("*")) {
    const over = el.scrollWidth - el.clientWidth;  // cheap once laid out: most elements stop here
    if (over <= 1 || el.clientWidth === 0) continue;
    if (el.closest("svg, mjx-container, .mermaid") || !visible(el)) continue;
    const cs = getComputedStyle(el);
    if (cs.display === "inline" || cs.position === "absolute" || cs.position === "fixed") continue;
    if (cs.overflowX === "hidden" || cs.overflowX === "clip") {
      out.clipped.push(`${label(el)}: ${over} px of its content cut off (overflow ${cs.overflowX}): "${short(el.textContent, 50)}"`);
      continue;
    }
    if (cs.overflowX !== "visible") continue;  // it scrolls
    // it spills: cut by the first ancestor that does not let it out, or off the screen
    let cutter = null;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if (o === "auto" || o === "scroll") break;
      if (o === "hidden" || o === "clip") { cutter = a; break; }
    }
    const r = el.getBoundingClientRect();
    if (cutter && (el.scrollWidth + r.left > cutter.getBoundingClientRect().right + 1))
      out.clipped.push(`${label(el)}: ${over} px wider than its box, cut by ${label(cutter)}: "${short(el.textContent, 50)}"`);
  }
  // a caption stays readable without scrolling its table; at desktop width no table needs scrolling
  for (const wrap of article.querySelectorAll(".md-typeset__scrollwrap")) {
    const box = wrap.getBoundingClientRect();
    for (const cap of wrap.querySelectorAll("caption")) {
      const c = cap.getBoundingClientRect();
      if (c.right > box.right + 1 || c.left < box.left - 1)
        out.clipped.push(`${label(cap)}: the caption runs ${Math.round(c.right - box.right)} px past its table's box: "${short(cap.textContent, 50)}"`);
    }
    if (width >= 1200 && wrap.scrollWidth > wrap.clientWidth + 1)
      out.clipped.push(`${label(wrap.querySelector("table") || wrap)}: the table is ${wrap.scrollWidth - wrap.clientWidth} px wider than the column: "${short(wrap.textContent, 50)}"`);
  }
  // in a notebook, long code lines wrap (its cells have no room for a scrollbar)
  for (const code of article.querySelectorAll(".jupyter-wrapper .highlight-ipynb")) {
    if (code.scrollWidth > code.clientWidth + 1)
      out.clipped.push(`${label(code)}: a code line runs ${code.scrollWidth - code.clientWidth} px past the cell: "${short(code.textContent, 50)}"`);
  }
  // the C fences (issue 40): a copy button each, the host code's title shown, the block inside
  // the page's width (a long line scrolls inside its block)
  for (const block of article.querySelectorAll(".language-cuda.highlight")) {
    const box = block.getBoundingClientRect();
    const title = block.querySelector(".filename");
    out.c_code.push({copy: !!block.querySelector(".md-clipboard, .md-code__button"),
                     title: title && visible(title) ? title.textContent.trim() : "",
                     left: Math.round(box.left), right: Math.round(box.right),
                     text: short(block.querySelector("code").textContent, 40)});
  }
  // the copy button over the text of a code block
  for (const btn of article.querySelectorAll(".md-code__button, .md-clipboard")) {
    if (!visible(btn) || getComputedStyle(btn).opacity === "0") continue;
    const pre = btn.closest("pre") || btn.parentElement.querySelector("pre");
    const code = pre && pre.querySelector("code");
    if (!code) continue;
    const b = btn.getBoundingClientRect(), box = code.getBoundingClientRect();
    const range = document.createRange();
    range.selectNodeContents(code);
    for (const t of range.getClientRects()) {
      const left = Math.max(t.left, b.left, box.left), right = Math.min(t.right, b.right, box.right);
      const top = Math.max(t.top, b.top), bottom = Math.min(t.bottom, b.bottom);
      if (right - left > 1 && bottom - top > 1) {
        out.clipped.push(`the copy button covers code text: "${short(code.textContent, 50)}"`);
        break;
      }
    }
  }

  // -- figures: on a phone, and as drawings ------------------------------------------------------
  window.__simtSvg = window.__simtSvg || {};
  const svgText = async (src) => {
    if (!(src in window.__simtSvg)) {
      try { window.__simtSvg[src] = await (await fetch(src)).text(); } catch (e) { window.__simtSvg[src] = ""; }
    }
    return window.__simtSvg[src];
  };
  // matplotlib draws text as glyph paths scaled by fontsize / 100 (svg.fonttype "path")
  const fontSizes = (text) => [...text.matchAll(/scale\(([\d.]+) -\1\)/g)].map((m) => parseFloat(m[1]) * 100);
  const viewWidth = (text) => { const m = /viewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"/.exec(text); return m ? parseFloat(m[1]) : 0; };
  const figures = [...article.querySelectorAll("img")].filter((i) => /\.svg(\?|#|$)/.test(i.currentSrc || i.src));
  for (const img of figures) {
    const text = await svgText(img.currentSrc || img.src);
    const sizes = fontSizes(text), vw = viewWidth(text);
    if (!sizes.length || !vw) continue;
    const cs = getComputedStyle(img);
    const shown = img.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    const smallest = Math.min(...sizes) * shown / vw;
    const natural = Math.min(...sizes) * img.naturalWidth / vw;
    const name = short(img.getAttribute("alt") || img.src, 40);
    if (width <= 480 && smallest < 9) {
      const link = img.closest("a[href]");
      if (!link || !link.classList.contains("glightbox"))
        out.phone.push(`${name}: smallest text ${smallest.toFixed(1)} px at ${width} px and no tap to enlarge`);
      else if (natural < 9)
        out.phone.push(`${name}: smallest text ${natural.toFixed(1)} px even at full size`);
    }
    // its path, not its URL: another xdist worker serves the site on another port
    out.figures.push({src: new URL(img.currentSrc || img.src, location.href).pathname, name});
  }

  // -- CJK typography --------------------------------------------------------------------------
  const everything = [document.querySelector(".md-header__title"), ...article.querySelectorAll("*")].filter(Boolean);
  for (const el of everything) {
    if (el.closest("svg, mjx-container, pre, code")) continue;
    const own = [...el.childNodes].filter((c) => c.nodeType === 3).map((c) => c.textContent).join("");
    if (!HAN.test(own)) continue;
    const cs = getComputedStyle(el);
    if (cs.fontStyle !== "normal" && cs.fontSynthesisStyle !== "none")
      out.typography.push(`${label(el)}: Chinese in synthetic ${cs.fontStyle}: "${short(own, 30)}"`);
    if (parseInt(cs.fontWeight, 10) >= 600 && cs.fontSynthesisWeight !== "none")
      out.typography.push(`${label(el)}: Chinese in synthetic bold: "${short(own, 30)}"`);
  }
  for (const h of article.querySelectorAll("h1, h2, h3, h4, h5, h6")) {
    for (const el of [h, ...h.querySelectorAll("*:not(.headerlink):not(.headerlink *)")]) {
      const cs = getComputedStyle(el);
      if (cs.visibility === "hidden" || cs.display === "none") continue;
      if (cs.textDecorationLine !== "none" || ["dotted", "dashed"].includes(cs.borderBottomStyle))
        out.typography.push(`${h.tagName.toLowerCase()} "${short(h.textContent, 40)}": ${label(el)} underlined`);
    }
  }
  for (const mtext of article.querySelectorAll("mjx-container [data-mml-node=mtext]")) {
    const runs = [...mtext.querySelectorAll("text")].filter((t) => HAN.test(t.textContent));
    const single = runs.filter((t) => [...t.textContent].length === 1);
    if (runs.length > 1 && single.length === runs.length)
      out.typography.push(`formula: "${short(runs.map((t) => t.textContent).join(""), 20)}" set letter by letter`);
    for (const t of runs) {
      const family = getComputedStyle(t).fontFamily, body = getComputedStyle(document.body).fontFamily;
      if (family !== body) { out.typography.push(`formula: "${short(t.textContent, 20)}" in ${family}, not the page's font`); break; }
    }
  }
  if (lang === "en") {
    const w = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
    for (let n = w.nextNode(); n; n = w.nextNode()) {
      if (!n.parentElement || n.parentElement.closest(NOT_PROSE)) continue;
      const m = /.{0,25}["'].{0,25}/.exec(n.textContent);
      if (m) { out.typography.push(`straight quote in prose: "${short(m[0], 50)}"`); if (out.typography.length > 40) break; }
    }
  }

  // -- captions: one per thing -----------------------------------------------------------------
  if (!all) return out;
  const seen = new Map();
  for (const cap of article.querySelectorAll("figcaption, caption")) {
    const text = cap.textContent.replace(/^\s*(图|表|Figure|Table)\s*[\d.]+\s*[:：]\s*/, "").replace(/\s+/g, " ").trim();
    if (!text) continue;
    const number = (cap.querySelector(".simt-number") || {}).textContent || short(text, 20);
    if (seen.has(text)) out.captions.push(`${number} has the same caption as ${seen.get(text)}: "${short(text, 60)}"`);
    else seen.set(text, number);
  }

  // -- numbering and headings ---------------------------------------------------------------------
  const h2 = [...article.querySelectorAll("h2")].map((h) => h.textContent.replace(/¶/g, "").trim());
  const h3 = [...article.querySelectorAll("h3")].map((h) => h.textContent.replace(/¶/g, "").trim());
  const numberedH2 = h2.filter((t) => /^\d+\.\s/.test(t)).map((t) => t.split(".")[0]);
  const numberedH3 = h3.filter((t) => /^\d+\.\d+\s/.test(t));
  if (numberedH2.length && numberedH3.length !== h3.length)
    out.headings.push(`sections are numbered but ${h3.length - numberedH3.length} of ${h3.length} subsections are not: "${short(h3.find((t) => !/^\d+\.\d+\s/.test(t)), 40)}"`);
  if (!numberedH2.length && numberedH3.length)
    out.headings.push(`subsections numbered under unnumbered sections: "${short(numberedH3[0], 40)}"`);
  for (const num of article.querySelectorAll(".simt-number")) {
    const m = /(\d+)\.(\d+)/.exec(num.textContent);
    if (m && !numberedH2.includes(m[1]))
      out.numbering.push(`"${num.textContent.trim()}" on a page whose sections are not numbered ${m[1]}`);
    if (!m && numberedH2.length)
      out.numbering.push(`"${num.textContent.trim()}" unnumbered by section on a page of numbered sections`);
  }
  const h1 = article.querySelector("h1");
  out.title = h1 ? h1.textContent.replace(/¶/g, "").trim() : "";
  if (lang === "en") {  // the prose's -ise/-ize words (the terminology table lists the unused spellings)
    const w = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
    const all = new Set();
    for (let n = w.nextNode(); n; n = w.nextNode()) {
      if (!n.parentElement || n.parentElement.closest(NOT_PROSE + ", " + NAMES + ", #tbl-terminology")) continue;
      for (const m of n.textContent.matchAll(/\b[A-Za-z]+(?:is|iz)(?:e|es|ed|ing|ation|ations|er|ers)\b/g)) all.add(m[0].toLowerCase());
    }
    out.words = [...all];
  }
  return out;
}
