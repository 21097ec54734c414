"""One search index per language (issue 15).

mkdocs-static-i18n writes one index for both languages; :func:`write_search_indexes` splits
it into ``search/search_index.json`` for the default language at the root and
``<lang>/search/search_index.json`` for the others, so a reader searches only the pages of
the site they are reading (:func:`split_search_index` says how), and
:func:`point_search_at_language` makes a page of another language load its own index. Pages
built once for both languages (the executed notebooks) are indexed in both, with the other
language's title and text removed; the glossary's entries also carry the other language's
term, and the lecture sections a glossary entry names come first for its term.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from urllib.parse import urljoin

from .language_marks import CJK_RUN, HAS_CJK

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

