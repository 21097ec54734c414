/* Keyboard and screen-reader access to what Material leaves to the mouse
   (WCAG 2.1 AA, 2.1.1 keyboard and 4.1.2 name/role/value):

   - a table, notebook cell or output that scrolls sideways gets tabindex="0"
     (arrow keys then scroll it), role="region" and a name such as "Table 3:
     n, sectors, ..." ; Material already does the tabindex for code blocks, we
     add their name ("Code 2");
   - the first glossary term (abbr with a title) of each kind in each section
     becomes focusable, so its tooltip opens from the keyboard as on hover;
   - the copy-button bar of each code block is named "Code 2", so the page
     has no two unnamed navigation landmarks.

   Re-checked when the window is resized, because what scrolls depends on the width. */
(function () {
  "use strict";
  var zh = (document.documentElement.lang || "").toLowerCase().indexOf("zh") === 0;
  var WORDS = zh
    ? { table: "表格", code: "代码", output: "输出", region: "可横向滚动的内容", sep: "：" }
    : { table: "Table", code: "Code", output: "Output", region: "Scrollable content", sep: ": " };

  function text(el, max) {
    var t = (el.textContent || "").replace(/\s+/g, " ").trim();
    return t.length > max ? t.slice(0, max - 1) + "…" : t;
  }

  function tableName(table, n) {
    var caption = table.querySelector("caption");
    var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) {
      return text(th, 30);
    }).filter(Boolean);
    var what = caption ? text(caption, 80) : heads.join(zh ? "、" : ", ");
    what = what.length > 80 ? what.slice(0, 79) + "…" : what;
    return WORDS.table + " " + n + (what ? WORDS.sep + what : "");
  }

  function scrolls(el) {
    var x = getComputedStyle(el).overflowX;
    return (x === "auto" || x === "scroll") && el.scrollWidth > el.clientWidth + 1;
  }

  function focusable(el, name) {
    if (scrolls(el)) {
      el.setAttribute("tabindex", "0");
      if (!el.hasAttribute("role")) el.setAttribute("role", "region");
      el.setAttribute("aria-label", name);
      el.setAttribute("data-simt-scroll", "");
    } else if (el.hasAttribute("data-simt-scroll")) {
      el.removeAttribute("tabindex");
      el.removeAttribute("role");
      el.removeAttribute("aria-label");
      el.removeAttribute("data-simt-scroll");
    }
  }

  function scan() {
    var article = document.querySelector(".md-content article");
    if (!article) return;
    // Tables (Material wraps each in .md-typeset__scrollwrap) and notebook tables.
    var tables = article.querySelectorAll("table");
    for (var i = 0; i < tables.length; i++) {
      var wrap = tables[i].closest(".md-typeset__scrollwrap") || tables[i].parentElement;
      if (wrap && wrap !== article) focusable(wrap, tableName(tables[i], i + 1));
    }
    // Code blocks: Material makes the scrolling ones focusable; name all of them.
    var codes = article.querySelectorAll("pre > code");
    for (var c = 0; c < codes.length; c++) {
      var label = WORDS.code + " " + (c + 1);
      codes[c].setAttribute("role", "group");
      codes[c].setAttribute("aria-label", label);
      var bar = codes[c].parentElement.querySelector(".md-code__nav");
      if (bar) bar.setAttribute("aria-label", label);
    }
    // Notebook cells and outputs that scroll.
    var cells = article.querySelectorAll(".highlight-ipynb, .jp-OutputArea-output");
    var nIn = 0, nOut = 0;
    for (var k = 0; k < cells.length; k++) {
      var isIn = cells[k].classList.contains("highlight-ipynb");
      var name = isIn ? WORDS.code + " " + (++nIn) : WORDS.output + " " + (++nOut);
      focusable(cells[k], name);
      var pres = cells[k].querySelectorAll("pre");
      for (var p = 0; p < pres.length; p++) focusable(pres[p], name);
    }
  }

  function glossaryTerms() {
    // One tab stop per term and section: the first <abbr title> of each kind after each h2.
    var article = document.querySelector(".md-content article");
    if (!article) return;
    var seen = {};
    var nodes = article.querySelectorAll("h2, abbr[title]");
    for (var i = 0; i < nodes.length; i++) {
      var el = nodes[i];
      if (el.tagName === "H2") { seen = {}; continue; }
      var key = el.getAttribute("title");
      if (seen[key] || el.closest("a, button, [tabindex]")) continue;
      seen[key] = true;
      el.setAttribute("tabindex", "0");
    }
  }

  var timer = null;
  function later() {
    clearTimeout(timer);
    timer = setTimeout(scan, 150);
  }

  function start() {
    glossaryTerms();
    scan();
    // Material wraps tables and mounts code blocks on its own schedule (later still on a
    // busy machine): look again whenever the article's content changes.
    setTimeout(scan, 0);
    window.addEventListener("load", scan);
    window.addEventListener("resize", later);
    var article = document.querySelector(".md-content article");
    if (article && window.MutationObserver) {
      new MutationObserver(later).observe(article, { childList: true, subtree: true });
    }
  }

  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(function () { setTimeout(start, 0); });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
