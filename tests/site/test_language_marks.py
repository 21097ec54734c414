"""Language marks, glossary tooltips, typographic quotes and the per-language search index."""

from __future__ import annotations

import json

from simtdocs_site.language_marks import mark_languages, one_language_title
from simtdocs_site.search_languages import glossary_links, point_search_at_language, split_search_index


def body(html: str, lang: str) -> str:
    out = mark_languages(f'<html lang="{lang}"><head><title>warp</title></head><body>{html}</body></html>')
    return out.split("<body>", 1)[1].rsplit("</body>", 1)[0]


def test_english_terms_in_chinese_prose_get_lang_en():
    assert body("<p>一个 warp 有 32 个 lane，见 Nsight Compute 的 sectors/request。</p>", "zh") == (
        '<p>一个 <span lang="en">warp</span> 有 32 个 <span lang="en">lane</span>，见 '
        '<span lang="en">Nsight Compute</span> 的 <span lang="en">sectors/request</span>。</p>'
    )


def test_chinese_in_english_prose_gets_lang_zh():
    assert body("<p>流式多处理器. The SM, 线程、warp 与占用率</p>", "en") == (
        '<p><span lang="zh">流式多处理器</span>. The SM, <span lang="zh">线程、</span>warp '
        '<span lang="zh">与占用率</span></p>'
    )


def test_code_math_svg_scripts_and_the_head_are_left_alone():
    src = ('<pre><code>warp = 1</code></pre><code>lane</code><span class="arithmatex">\\(\\frac{a}{b}\\)</span>'
           '<svg><text>warp</text></svg><script>var warp;</script><div class="highlight"><div>x</div>warp</div>')
    assert body(src, "zh") == src
    assert "<title>warp</title>" in mark_languages('<html lang="zh"><head><title>warp</title></head><body></body></html>')


def test_single_letters_entities_and_an_authors_lang_are_kept():
    assert body("<p>n 个线程 &amp; M 行</p>", "zh") == "<p>n 个线程 &amp; M 行</p>"
    assert body('<p>见 <span lang="en">shared memory</span></p>', "zh") == '<p>见 <span lang="en">shared memory</span></p>'
    assert body("<p>H100 的</p>", "zh") == '<p><span lang="en">H100</span> 的</p>'


def test_glossary_tooltip_in_the_pages_language():
    title = "32 threads executed together, one instruction for all — 一起执行同一条指令的 32 个线程"
    assert one_language_title(title, "en") == "32 threads executed together, one instruction for all"
    assert one_language_title(title, "zh") == "一起执行同一条指令的 32 个线程"
    assert one_language_title("Graphics Processing Unit — 图形处理器", "zh") == "图形处理器（Graphics Processing Unit）"
    assert one_language_title("no Chinese half", "zh") == "no Chinese half"
    assert body('<abbr title="Streaming Multiprocessor — 流式多处理器">SM</abbr>', "en") == (
        '<abbr title="Streaming Multiprocessor">SM</abbr>')


def test_search_base_points_at_the_language_folder():
    page = '<script id="__config" type="application/json">{"base": "../..", "search": "x.js"}</script>'
    out = point_search_at_language(page, "en")
    cfg = json.loads(out.split(">", 1)[1].rsplit("<", 1)[0])
    assert cfg == {"base": "../../en/", "search": "x.js"}


def test_search_index_split_per_language(tmp_path):
    # en/notebooks/nb exists: the notebook is a page of both sites.
    (tmp_path / "en" / "notebooks" / "nb").mkdir(parents=True)
    (tmp_path / "en" / "notebooks" / "nb" / "index.html").write_text("x")
    docs = [
        {"location": "p2/#warps", "title": "warp（线程束）", "text": "中文"},
        {"location": "glossary/#warp", "title": "warp（线程束）", "text": "zh def"},
        {"location": "notebooks/nb/", "title": "线程 · Threads and warps", "text": "GPU 的 warp. The warp"},
        {"location": "en/p2/#warps", "title": "Warps", "text": "english"},
        {"location": "en/glossary/#warp", "title": "Warp", "text": "en def"},
    ]
    split = split_search_index({"config": {"lang": ["en", "zh"]}, "docs": docs}, "zh", ["en"], tmp_path)
    zh, en = split["zh"]["docs"], split["en"]["docs"]
    assert [d["location"] for d in zh] == ["p2/#warps", "glossary/#warp", "notebooks/nb/"]
    assert [d["location"] for d in en] == ["p2/#warps", "glossary/#warp", "notebooks/nb/"]
    assert split["en"]["config"] == {"lang": ["en", "zh"]}
    nb_zh, nb_en = zh[2], en[2]
    assert (nb_zh["title"], nb_zh["boost"]) == ("线程", 0.5)
    assert (nb_en["title"], nb_en["text"], nb_en["boost"]) == ("Threads and warps", "GPU warp. The warp", 0.5)
    assert en[1]["text"] == "en def warp（线程束）"  # a Chinese query finds the English glossary
    assert zh[1]["text"] == "zh def Warp"
    assert "boost" not in en[0] and en[0]["title"] == "Warps"


GLOSSARY = """<article>
<h2 id="memory">Memory</h2>
<h3 id="coalescing">Coalescing<a class="headerlink" href="#coalescing">&para;</a></h3>
<p>合并访存. When the 32 accesses of a warp ...</p>
<p>Explained in: <a href="../p2/#coalescing">P2 · coalescing</a>, <a href="../exec-model/#reading-vllm">x</a></p>
<h3 id="sector">Sector</h3>
<p>No links here, <a href="https://example.org/#x">outside</a></p>
</article>"""


def test_glossary_links_name_the_sections_that_explain_each_term():
    assert glossary_links(GLOSSARY) == {"coalescing": ["p2/#coalescing", "exec-model/#reading-vllm"]}


def test_sections_the_glossary_names_carry_the_term(tmp_path):
    docs = [
        {"location": "en/p2/#coalescing", "title": "5.2 Coalesced access", "text": "..."},
        {"location": "en/p2/#other", "title": "Other", "text": "coalescing coalescing"},
        {"location": "en/glossary/#coalescing", "title": "Coalescing¶", "text": "def"},
    ]
    split = split_search_index({"config": {"fields": {"title": {"boost": 1000.0}}}, "docs": docs}, "zh", ["en"],
                               tmp_path, explained={"en": glossary_links(GLOSSARY)})
    en = {d["location"]: d for d in split["en"]["docs"]}
    assert en["p2/#coalescing"]["terms"] == "Coalescing"
    assert "terms" not in en["p2/#other"]
    assert split["en"]["config"]["fields"] == {"title": {"boost": 1000.0}, "terms": {"boost": 1e4}}
    assert split["zh"]["config"]["fields"] == {"title": {"boost": 1000.0}}


def test_straight_quotes_in_prose_become_typographic_ones():
    """Issue 27: English prose used straight quotes; code, scripts and attributes keep theirs."""
    from simtdocs_site.typography import curly_quotes

    page = ('<html><head><title>"t"</title></head><body><p>Little\'s law, "sync left out" and '
            '<code>"x"</code>, then (\'a\') &quot;b&quot;</p><script>var a = "x";</script>'
            '<a title="it\'s">it\'s</a></body></html>')
    assert curly_quotes(page) == (
        '<html><head><title>"t"</title></head><body><p>Little’s law, “sync left out” and '
        '<code>"x"</code>, then (‘a’) “b”</p><script>var a = "x";</script>'
        '<a title="it\'s">it’s</a></body></html>')
