"""Numbered figures and tables, references by label, output boxes, and the P2 chapter on the site."""

import json
import re
from pathlib import Path

import pytest

from simtdocs_site import numbering
from simtdocs.snippets import repo_root


def test_items_are_numbered_by_section_and_labels_resolve():
    html = (
        '<h1>P</h1><p>before</p><table><tr></tr></table>'
        '<h2 id="a">5. Memory</h2><figure class="simt-figure"><img><figcaption>Sectors.</figcaption></figure>'
        '<p id="fig-sectors">Figure:</p><table></table><table></table>'
        '<p id="tbl-a">Table: First.</p>\n<p id="tbl-b" class="cited">Table: Second, from a paper.</p>'
        '<h2 id="b">6. Shared</h2><table></table>'
    )
    out, labels = numbering.number(html, "en")
    assert labels == {"fig-sectors": "Figure 5.1", "tbl-a": "Table 5.1", "tbl-b": "Table 5.2"}
    assert "Table 0.1" in out and "Table 6.1" in out  # before the first section; a new section restarts
    assert '<figure class="simt-figure" id="fig-sectors"><img><figcaption><span class="simt-number">Figure 5.1</span>: Sectors.' in out
    assert '<table id="tbl-b" data-cited="true"><caption><span class="simt-number">Table 5.2</span>: Second, from a paper.<span class="simt-cited"> (cited, not computed)</span>' in out
    assert "Table: First." not in out  # the caption paragraph moved into the table
    zh, _ = numbering.number(html.replace("Table:", "表：").replace("Figure:", "图："), "zh")
    assert "图 5.1</span>：Sectors." in zh and "表 5.2</span>：Second" in zh


def test_a_page_without_numbered_sections_numbers_through_the_page():
    """One rule (issue 27): "Table 3.1" only where a section is numbered 3."""
    html = '<h2>Intro</h2><table></table><h2>More</h2><table></table><figure class="simt-figure"><img></figure>'
    out, _ = numbering.number(html, "zh")
    assert re.findall(r'simt-number">([^<]*)<', out) == ["表 1", "表 2", "图 1"]


def test_inserting_a_figure_renumbers_the_rest():
    one = '<h2>3. X</h2><figure class="simt-figure"><img></figure><p id="fig-b">Figure:</p>'
    two = '<h2>3. X</h2><figure class="simt-figure"><img></figure>' + one.split("</h2>")[1]
    assert numbering.number(one, "en")[1] == {"fig-b": "Figure 3.1"}
    assert numbering.number(two, "en")[1] == {"fig-b": "Figure 3.2"}


def test_empty_links_get_the_label_and_an_unknown_label_is_an_error():
    names = {"memory/#tbl-x": "Table 5.3"}
    out = numbering.fill_refs('see <a href="../memory/#tbl-x"></a> and <a href="#y">y</a>',
                              lambda href: names.get(href.removeprefix("../")))
    assert out == 'see <a href="../memory/#tbl-x">Table 5.3</a> and <a href="#y">y</a>'
    with pytest.raises(ValueError, match="unknown label: #fig-nope"):
        numbering.fill_refs('<a href="#fig-nope"></a>', lambda href: None)


def test_a_caption_without_its_item_is_an_error():
    with pytest.raises(ValueError, match="tbl-lost"):
        numbering.number('<h2>1. A</h2><p id="tbl-lost">Table: nothing above me.</p>', "en")


def test_output_lines_are_boxed_and_prose_is_not():
    source = "Text {{ n }}.\n\n```python\nshow(x)\n```\n\nMore text.\n\n```python\ny = 1\n```\n\nEnd.\n"
    processed = "Text 3.\n\n```python\nshow(x)\n```\n\n| a |\n|--|\n| 1 |\n\nMore text.\n\n```python\ny = 1\n```\n\nEnd.\n"
    marked = numbering.mark_output(source, processed, "en")
    assert marked.count('class="simt-output"') == 1  # the second block printed nothing
    box = marked.split('class="simt-output"')[1].split("</div>")[0]
    assert "| 1 |" in box and "Output" in box and "More text" not in box
    assert marked.replace("\n", "").count("More text.") == 1 and "Text 3." in marked


def test_reading_time_counts_words_and_blocks():
    words = " ".join(["word"] * 1000)
    page = f"# T\n\n{words}\n\n```python\nx = 1\n```\n\n```python\ny = 2\n```\n"
    assert numbering.reading_minutes(page) == 10  # 1000 words / 200 + 2 blocks = 7, rounded up to 10


# -- the built site --------------------------------------------------------------------------

LECTURES = ("p2", "exec-model")


def lecture_pages(site: Path, lang: str) -> list[Path]:
    base = site / "en" if lang == "en" else site
    return sorted(p for name in LECTURES for p in (base / name).rglob("index.html"))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_p2_is_a_chapter_of_pages_with_reading_time_and_footer(site, lang):
    base = site / "en" if lang == "en" else site
    pages = sorted((base / "p2").rglob("index.html"))
    assert len(pages) >= 4
    for page in pages:
        html = page.read_text("utf-8")
        assert 'class="simt-reading-time"' in html, page
        assert "md-footer__link--prev" in html and "md-footer__link--next" in html, page


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_figure_and_table_of_a_lecture_is_numbered(site, lang):
    word = {"zh": ("图", "表"), "en": ("Figure", "Table")}[lang]
    for page in lecture_pages(site, lang):
        html = page.read_text("utf-8")
        figures = len(re.findall(r'<figure class="simt-figure"', html))
        tables = len(re.findall(r"<table\b", html))
        assert len(re.findall(rf'<figcaption><span class="simt-number">{word[0]} \d+\.\d+', html)) == figures, page
        assert len(re.findall(rf'<caption><span class="simt-number">{word[1]} \d+\.\d+', html)) == tables, page
        assert not re.search(r'<a [^>]*href="[^"]*#(?:fig|tbl)-[^"]*"[^>]*></a>', html), page  # all refs filled


def test_lecture_pages_link_at_least_15_external_sources(site):
    hrefs = set()
    for page in lecture_pages(site, "en"):
        hrefs |= set(re.findall(r'<a [^>]*href="(https?://[^"]+)"', page.read_text("utf-8")))
    sources = {h.split("#")[0] for h in hrefs}
    assert len(sources) >= 15, sorted(sources)


def test_old_p2_anchors_are_mapped_to_their_new_pages(site):
    html = (site / "p2" / "index.html").read_text("utf-8")
    moved = json.loads(re.search(r"var moved = (\{.*?\});", html).group(1))
    docs = repo_root() / "docs" / "p2"
    for anchor, target in moved.items():
        page = docs / (target.rstrip("/") + ".md")
        assert f"{{ #{anchor} }}" in page.read_text("utf-8"), (anchor, target)
        assert f'id="{anchor}"' in (site / "p2" / target / "index.html").read_text("utf-8")
    # every section anchor of the old one-page P2 (## and deeper) is on p2/ itself or in the map;
    # the puzzles and CUDA-way pages came after the split, so none of their anchors ever lived on the old page,
    # nor did the sections added to the other pages since
    section = re.compile(r"^##+ .*\{ #([\w-]+) \}", re.M)
    anchors = set(section.findall("".join(p.read_text("utf-8") for p in docs.glob("*.md")
                                          if not p.name.endswith(".en.md") and p.stem not in ("puzzles", "cuda-way"))))
    on_index = set(section.findall((docs / "index.md").read_text("utf-8")))
    after_the_split = {"triton-on-paper"}  # sections written since: no old address to keep
    assert anchors - on_index - after_the_split == set(moved)
