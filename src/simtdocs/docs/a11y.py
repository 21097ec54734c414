"""Accessibility and search-language glue of the course site (build time only).

Two jobs, both on the built HTML and index, so no page has to be edited by hand:

- :func:`mark_languages` gives the other language's words a ``lang`` attribute:
  English terms in Chinese prose (``<span lang="en">warp</span>``) and Chinese in
  English pages (``<span lang="zh">线程束</span>``), so a screen reader switches voice
  (WCAG 3.1.2, language of parts). Code, formulas, SVG and scripts are left alone.
- :func:`split_search_index` turns the one index mkdocs-static-i18n writes for both
  languages into one index per language (``search/search_index.json`` for the
  default language at the root, ``<lang>/search/search_index.json`` for the others):
  a reader searches only pages of the site they are reading. Pages built once for
  both languages (the executed notebooks) are indexed in both, with the title and
  text of the other language removed; the glossary's entries also carry the other
  language's term, so a query in either language finds the glossary of this site.
  :func:`point_search_at_language` makes a page of another language load its own index.

Pure functions of strings and dicts; ``hooks/a11y.py`` calls them from mkdocs.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from urllib.parse import urljoin

# Han characters, CJK punctuation and full-width forms.
_CJK = "\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
HAS_CJK = re.compile(f"[{_CJK}]")
# A Chinese phrase: CJK characters, possibly with digits, spaces and ASCII punctuation
# between them (never Latin letters: "线程、warp 与占用率" gives two phrases).
CJK_RUN = re.compile(f"[{_CJK}](?:[{_CJK}\\d\\s.,:;%×·\\-–—/()]*[{_CJK}])?")
# An English run: words of Latin letters (with digits, ' - _ . + # inside), joined by spaces.
_WORD = r"[A-Za-z][A-Za-z0-9'’_+#]*(?:[-./][A-Za-z0-9]+)*"
LATIN_RUN = re.compile(rf"{_WORD}(?:[ \u00a0]+(?:{_WORD}|\d+(?:\.\d+)?))*")
_ENTITY = re.compile(r"(&#?\w+;)")
_TOKEN = re.compile(r"<!--.*?-->|<[^>]*>|[^<]+", re.S)
_TAG = re.compile(r"<(/?)([A-Za-z][\w:-]*)([^>]*?)(/?)>", re.S)

# Elements whose text is not prose: left exactly as they are (with everything inside).
SKIP_TAGS = {"script", "style", "pre", "code", "kbd", "samp", "svg", "math", "textarea",
             "template", "mjx-container", "title", "head", "option", "select"}
SKIP_CLASSES = {"arithmatex", "highlight", "highlight-ipynb", "mermaid", "md-search"}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
             "source", "track", "wbr"}


def _skips(name: str, attrs: str) -> bool:
    if name in SKIP_TAGS:
        return True
    if re.search(r"\blang\s*=", attrs):  # an author's own lang wins
        return True
    m = re.search(r'\bclass\s*=\s*"([^"]*)"', attrs)
    return bool(m and SKIP_CLASSES.intersection(m.group(1).split()))


def _wrap_text(text: str, page_lang: str) -> str:
    if page_lang.startswith("zh"):
        run, other = LATIN_RUN, "en"

        def worth(s: str) -> bool:  # a single letter (a variable) is not a word; H100 is
            return sum(ch.isalnum() for ch in s) >= 2
    else:
        if not HAS_CJK.search(text):
            return text
        run, other = CJK_RUN, "zh"

        def worth(s: str) -> bool:
            return bool(re.search(r"[\u3400-\u9fff\uf900-\ufaff]", s))  # not punctuation alone

    def one(m: re.Match) -> str:
        s = m.group(0)
        return f'<span lang="{other}">{s}</span>' if worth(s) else s

    # Entities (&amp; &lt;) are never split: wrap only the text between them.
    parts = _ENTITY.split(text)
    return "".join(p if i % 2 else run.sub(one, p) for i, p in enumerate(parts))


_ABBR_TITLE = re.compile(r'(\btitle=")([^"]*)(")')


def one_language_title(title: str, page_lang: str) -> str:
    """A glossary tooltip written for both languages, ``"English — 中文"``, in the page's
    language: a title attribute cannot mark a part's language, so a screen reader would
    read the Chinese half with an English voice. On a Chinese page a short English
    expansion stays in parentheses: ``"图形处理器（Graphics Processing Unit）"``."""
    en, sep, zh = title.partition(" — ")
    if not sep or not HAS_CJK.search(zh) or HAS_CJK.search(en):
        return title
    if not page_lang.startswith("zh"):
        return en.strip()
    return f"{zh.strip()}（{en.strip()}）" if len(en.split()) <= 4 else zh.strip()


def page_language(html: str) -> str | None:
    m = re.search(r"<html\b[^>]*\blang\s*=\s*\"([^\"]+)\"", html)
    return m.group(1) if m else None


def mark_languages(html: str, page_lang: str | None = None) -> str:
    """``html`` with words of the other language (en in a zh page, zh in an en page) in
    ``<span lang=...>``; only the ``<body>``, never inside code, math, SVG or scripts."""
    page_lang = page_lang or page_language(html)
    if not page_lang:
        return html
    start = html.find("<body")
    if start < 0:
        return html
    out = [html[:start]]
    pos = start
    while True:
        m = _TOKEN.search(html, pos)
        if not m:
            break
        tok, pos = m.group(0), m.end()
        if not tok.startswith("<"):
            out.append(_wrap_text(tok, page_lang) if tok.strip() else tok)
            continue
        t = _TAG.match(tok)
        if not t or t.group(1) or t.group(4):
            out.append(tok)
            continue
        name = t.group(2).lower()
        if name == "abbr":
            tok = _ABBR_TITLE.sub(lambda a: a.group(1) + one_language_title(a.group(2), page_lang) + a.group(3), tok)
        out.append(tok)
        if name in VOID_TAGS or not _skips(name, t.group(3)):
            continue
        # Copy the skipped element whole: jump to its matching end tag.
        end = _skip_to_end(html, pos, name)
        out.append(html[pos:end])
        pos = end
    return "".join(out)


def _skip_to_end(html: str, pos: int, name: str) -> int:
    """The index just past the end tag closing an element ``name`` opened before ``pos``."""
    depth = 1
    tags = re.compile(rf"<(/?){re.escape(name)}(?=[\s>/])[^>]*?(/?)>", re.I)
    for m in tags.finditer(html, pos):
        if m.group(1):
            depth -= 1
            if depth == 0:
                return m.end()
        elif not m.group(2):
            depth += 1
    return len(html)


# -- search -----------------------------------------------------------------------

_SPACES = re.compile(r"[\s\u200b]+")


def _keep_language(text: str, lang: str, sep: str = " · ") -> str:
    """A bilingual title ``"存储空间 · Memory spaces"`` reduced to the parts in ``lang``
    (short neutral parts such as ``"P2"`` stay in both)."""
    parts = text.split(sep)
    if len(parts) < 2:
        return text

    def is_zh(p):
        return bool(HAS_CJK.search(p))

    def is_en(p):
        return not is_zh(p) and len(p.replace("\u200b", " ").split()) >= 2

    if lang.startswith("zh"):
        keep = [p for p in parts if not is_en(p)]
    else:
        keep = [p for p in parts if not is_zh(p)]
    return sep.join(keep) if keep else text


def _strip_cjk(text: str) -> str:
    return _SPACES.sub(" ", CJK_RUN.sub(" ", text)).strip()


def _page(location: str) -> str:
    return location.split("#", 1)[0]


TERMS_FIELD = {"boost": 1e4}  # above a title (1e3): the section that explains a term comes first


def glossary_links(html: str, glossary: str = "glossary/") -> dict[str, list[str]]:
    """``{anchor: [section, ...]}``: the lecture sections each glossary entry (an ``<h3 id>``)
    names in its last paragraph ("Explained in" / "详见"), as locations relative to the
    site of its language (``"p2/#coalescing"``)."""
    links = {}
    for m in re.finditer(r'<h3 id="([^"]+)".*?(?=<h[23][ >]|</article>)', html, re.S):
        paragraphs = re.findall(r"<p>(.*?)</p>", m.group(0), re.S)
        hrefs = re.findall(r'<a href="([^"#][^"]*#[^"]+)"', paragraphs[-1]) if paragraphs else []
        targets = []
        for href in hrefs:
            if href.startswith(("http:", "https:", "//")):
                continue
            target = urljoin("http://site/" + glossary, href)[len("http://site/"):]
            targets.append(target)
        if targets:
            links[m.group(1)] = targets
    return links


def split_search_index(index: dict, default_lang: str, other_langs: list[str], site_dir: Path,
                       glossary: str = "glossary/",
                       explained: dict[str, dict[str, list[str]]] | None = None) -> dict[str, dict]:
    """One search index per language from mkdocs-static-i18n's combined ``index``.

    Locations in the index of language ``xx`` are relative to ``xx/``. A page indexed
    only at its default-language location although ``xx/<page>/index.html`` exists was
    deduplicated by mkdocs-static-i18n (same content in both languages: the notebooks);
    it is indexed in both, titles reduced to the reader's language (and, for ``en``,
    the Chinese text removed), with half the weight of a lecture page. The glossary
    entries of each language also get the other language's title of the same anchor.
    ``explained[lang]`` (from :func:`glossary_links`) maps a glossary anchor to the lecture
    sections that explain the term: those sections get the term in a ``terms`` field
    weighted above titles, so searching a term lists first the section that explains it.
    """
    docs = index["docs"]
    per_lang: dict[str, list[dict]] = {default_lang: []}
    for lang in other_langs:
        per_lang[lang] = []
    for doc in docs:
        loc = doc["location"]
        for lang in other_langs:
            if loc.startswith(f"{lang}/") or loc == lang:
                per_lang[lang].append(dict(doc, location=loc[len(lang) + 1:]))
                break
        else:
            per_lang[default_lang].append(doc)

    # Pages built once for both languages (the notebooks): mkdocs-static-i18n drops an
    # entry of xx/<page> identical to the default one, so copy back what is missing.
    for lang in other_langs:
        have = {d["location"] for d in per_lang[lang]}
        missing = [d for d in per_lang[default_lang]
                   if d["location"] not in have
                   and (site_dir / lang / _page(d["location"]) / "index.html").is_file()]
        shared = {_page(d["location"]) for d in missing}
        per_lang[lang].extend(copy.deepcopy(d) for d in missing)
        for entries in (per_lang[lang], per_lang[default_lang]):
            for d in entries:
                if _page(d["location"]) in shared:
                    d["boost"] = 0.5  # a lecture section explains a term better than its script
        if not lang.startswith("zh"):
            for d in per_lang[lang]:
                if _page(d["location"]) in shared:
                    d["text"] = _strip_cjk(d["text"])
    # Bilingual titles ("存储空间 · Memory spaces") in the reader's language only.
    for lang, entries in per_lang.items():
        for d in entries:
            d["title"] = _keep_language(d["title"], lang)

    # The glossary answers queries in both languages: same anchors, other title.
    titles = {lang: {d["location"]: d["title"] for d in entries if _page(d["location"]) == glossary}
              for lang, entries in per_lang.items()}
    for lang, entries in per_lang.items():
        others = [t for other, t in titles.items() if other != lang]
        for d in entries:
            if _page(d["location"]) == glossary and "#" in d["location"]:
                extra = [t[d["location"]] for t in others if d["location"] in t]
                if extra:
                    d["text"] = (d["text"] + " " + " ".join(x.replace("¶", "") for x in extra)).strip()

    # The sections the glossary names for a term carry the term (as the index spells it).
    for lang, entries in per_lang.items():
        links = (explained or {}).get(lang, {})
        by_location = {d["location"]: d for d in entries}
        for anchor, sections in links.items():
            entry = by_location.get(f"{glossary}#{anchor}")
            if entry is None:
                continue
            term = entry["title"].replace("¶", "").strip()
            for section in sections:
                d = by_location.get(section)
                if d is not None:
                    d["terms"] = (d.get("terms", "") + " " + term).strip()

    out = {}
    for lang, entries in per_lang.items():
        config = copy.deepcopy(index.get("config", {}))
        if any("terms" in d for d in entries):
            config.setdefault("fields", {})["terms"] = TERMS_FIELD
        out[lang] = dict(index, config=config, docs=entries)
    return out


def write_search_indexes(site_dir: Path, default_lang: str, other_langs: list[str]) -> dict[str, int]:
    """Split ``site_dir/search/search_index.json`` in place; entries per language."""
    path = site_dir / "search" / "search_index.json"
    if not path.is_file():
        return {}
    index = json.loads(path.read_text(encoding="utf-8"))
    explained = {}
    for lang in [default_lang, *other_langs]:
        page = site_dir / ("" if lang == default_lang else lang) / "glossary" / "index.html"
        if page.is_file():
            explained[lang] = glossary_links(page.read_text(encoding="utf-8"))
    split = split_search_index(index, default_lang, other_langs, site_dir, explained=explained)
    counts = {}
    for lang, data in split.items():
        out = path if lang == default_lang else site_dir / lang / "search" / "search_index.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        # ASCII escapes, as Material writes it: with raw UTF-8 Chromium's search finds no Chinese
        out.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
        counts[lang] = len(data["docs"])
    return counts


_CONFIG = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.S)


def point_search_at_language(html: str, lang: str) -> str:
    """Material loads ``search/search_index.json`` relative to ``__config.base`` (the site
    root). For a page of the language built under ``<lang>/``, make ``base`` that folder,
    so the page loads its own language's index and search links resolve under it."""
    def fix(m: re.Match) -> str:
        cfg = json.loads(m.group(2))
        base = cfg.get("base", ".").rstrip("/")
        cfg["base"] = f"{base}/{lang}/"
        data = json.dumps(cfg, separators=(",", ":")).replace("<", "\\u003c")
        return m.group(1) + data + m.group(3)

    return _CONFIG.sub(fix, html, count=1)


# -- typography ---------------------------------------------------------------------

_BLOCK_TAGS = {"p", "li", "td", "th", "div", "h1", "h2", "h3", "h4", "h5", "h6", "caption", "figcaption",
               "dt", "dd", "summary", "blockquote", "br", "table", "tr", "ul", "ol", "section", "article",
               "details", "figure", "nav", "header", "footer", "main", "aside", "label", "button", "option"}
_OPENS_AFTER = set(" \t\n\u00a0([{<—–-/“‘")


def curly_quotes(html: str) -> str:
    """``html`` with the straight quotes of its prose made typographic: ``"a"`` → “a”,
    ``it's`` → it’s, ``'a'`` → ‘a’. Only text in the ``<body>``: never attributes, code,
    formulas, SVG or scripts (the elements :func:`mark_languages` skips). A quote opens after
    a space, a bracket or the start of a block, and closes otherwise."""
    start = html.find("<body")
    if start < 0:
        return html
    out = [html[:start]]
    pos, prev = start, " "
    while True:
        m = _TOKEN.search(html, pos)
        if not m:
            break
        tok, pos = m.group(0), m.end()
        if not tok.startswith("<"):
            text = tok.replace("&quot;", '"').replace("&#39;", "'").replace("&#x27;", "'")
            if '"' in text or "'" in text:
                chars = []
                for i, ch in enumerate(text):
                    before = chars[-1] if chars else prev
                    if ch == '"':
                        ch = "“" if before in _OPENS_AFTER else "”"
                    elif ch == "'":
                        after = text[i + 1] if i + 1 < len(text) else " "
                        ch = "‘" if before in _OPENS_AFTER and after.isalnum() else "’"
                    chars.append(ch)
                tok = "".join(chars)
            out.append(tok)
            if tok.strip():
                prev = tok[-1]
            continue
        t = _TAG.match(tok)
        out.append(tok)
        if not t:
            continue
        name = t.group(2).lower()
        if name in _BLOCK_TAGS:
            prev = " "
        if t.group(1) or t.group(4) or name in VOID_TAGS or not _skips(name, t.group(3)) or "lang=" in t.group(3):
            continue
        end = _skip_to_end(html, pos, name)
        out.append(html[pos:end])
        pos = end
        prev = "x"  # after code or a formula, a quote closes
    return "".join(out)
