"""Typography of the prose: straight quotes made typographic (issue 27)."""

from __future__ import annotations

from .language_marks import TAG, TOKEN, VOID_TAGS, skip_to_end, skips

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
        m = TOKEN.search(html, pos)
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
        t = TAG.match(tok)
        out.append(tok)
        if not t:
            continue
        name = t.group(2).lower()
        if name in _BLOCK_TAGS:
            prev = " "
        if t.group(1) or t.group(4) or name in VOID_TAGS or not skips(name, t.group(3)) or "lang=" in t.group(3):
            continue
        end = skip_to_end(html, pos, name)
        out.append(html[pos:end])
        pos = end
        prev = "x"  # after code or a formula, a quote closes
    return "".join(out)
