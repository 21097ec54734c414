"""Language of parts: words of the other language carry ``lang`` (WCAG 3.1.2).

:func:`mark_languages` gives English terms in Chinese prose ``<span lang="en">warp</span>``
and Chinese in English pages ``<span lang="zh">线程束</span>``, so a screen reader switches
voice; a glossary tooltip written for both languages is cut to the page's language
(:func:`one_language_title`). Code, formulas, SVG and scripts are left alone. Pure
functions of the page's HTML; :mod:`.typography` and :mod:`.search_languages` share the
tokenizer and the CJK patterns.
"""

from __future__ import annotations

import re

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
TOKEN = re.compile(r"<!--.*?-->|<[^>]*>|[^<]+", re.S)
TAG = re.compile(r"<(/?)([A-Za-z][\w:-]*)([^>]*?)(/?)>", re.S)

# Elements whose text is not prose: left exactly as they are (with everything inside).
SKIP_TAGS = {"script", "style", "pre", "code", "kbd", "samp", "svg", "math", "textarea",
             "template", "mjx-container", "title", "head", "option", "select"}
SKIP_CLASSES = {"arithmatex", "highlight", "highlight-ipynb", "mermaid", "md-search"}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
             "source", "track", "wbr"}


def skips(name: str, attrs: str) -> bool:
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
        m = TOKEN.search(html, pos)
        if not m:
            break
        tok, pos = m.group(0), m.end()
        if not tok.startswith("<"):
            out.append(_wrap_text(tok, page_lang) if tok.strip() else tok)
            continue
        t = TAG.match(tok)
        if not t or t.group(1) or t.group(4):
            out.append(tok)
            continue
        name = t.group(2).lower()
        if name == "abbr":
            tok = _ABBR_TITLE.sub(lambda a: a.group(1) + one_language_title(a.group(2), page_lang) + a.group(3), tok)
        out.append(tok)
        if name in VOID_TAGS or not skips(name, t.group(3)):
            continue
        # Copy the skipped element whole: jump to its matching end tag.
        end = skip_to_end(html, pos, name)
        out.append(html[pos:end])
        pos = end
    return "".join(out)


def skip_to_end(html: str, pos: int, name: str) -> int:
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

