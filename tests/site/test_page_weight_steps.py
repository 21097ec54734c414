"""The page-weight step without a build: search exclusion, tables of numbers, figure trimming."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from simtdocs_site import figure_files, math_svg, page_weight, search_exclusion

ROOT = Path(__file__).resolve().parents[2]


def test_numeric_tables_are_told_from_prose_tables():
    numbers = "<table><tr><th>n</th></tr><tr><td>1,024</td><td>93.5%</td><td>0.75 ms</td><td>stride 8</td></tr></table>"
    prose = "<table><tr><td>registers</td><td>on the SM</td><td>one thread</td><td>256 KB / SM</td></tr></table>"
    assert search_exclusion.numeric_table(numbers)
    assert not search_exclusion.numeric_table(prose)
    assert not search_exclusion.numeric_table("<table><tr><th>only a header</th></tr></table>")


def test_excluded_blocks_survive_nested_divs_in_materials_search_parser():
    """Material's parser ends a skipped <div> at the first nested </div>; the wrapper does not."""
    from material.plugins.search.plugin import Parser

    page = ('<h2 id="s">Section</h2><p>prose stays</p>'
            '<div class="highlight"><div class="inner">x = 1</div><pre>secret_code()</pre></div>'
            '<p>more prose</p>')
    parser = Parser()
    parser.feed(search_exclusion.exclude_from_search(page))
    parser.close()
    text = " ".join("".join(section.text) for section in parser.data)
    assert "prose stays" in text and "more prose" in text
    assert "secret_code" not in text and "x = 1" not in text
    # and without the wrapper the same markup leaks (the reason the wrapper exists)
    leaky = Parser()
    leaky.feed(page.replace('<div class="highlight">', '<div class="highlight" data-search-exclude>'))
    leaky.close()
    assert "secret_code" in " ".join("".join(s.text) for s in leaky.data)


def test_wrapper_is_balanced_and_removed_from_the_page():
    page = '<div class="highlight"><div><div>a</div></div><pre>b</pre></div><div>after</div>'
    wrapped = search_exclusion.wrap_divs(page, search_exclusion.CODE_BLOCK)
    assert wrapped == (f"<{search_exclusion.SKIP} data-search-exclude>" + page[: -len("<div>after</div>")]
                       + f"</{search_exclusion.SKIP}><div>after</div>")
    assert search_exclusion.SKIP_TAGS.sub("", wrapped) == page


def test_trim_svg_rounds_coordinates_and_keeps_ids():
    svg = ('<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "x">\n<svg width="408.347344pt" height="269.42875pt">'
           '<metadata><rdf>m</rdf></metadata>\n <path id="DejaVuSans-30" d="M 44.027344 -0.0001 L 1.5 2"/>'
           '<use xlink:href="#m8f0c3d2a1e" x="60.260071"/>'
           '<g transform="translate(60.260071 39.891406) scale(0.015625 -0.015625)"><use x="63.623047"/></g></svg>')
    out = figure_files.trim_svg(svg)
    # a glyph's scale (and any transform) keeps its digits: 0.02 would draw the letter 28% too large
    assert out == ('<svg width="408.35pt" height="269.43pt"><path id="DejaVuSans-30" d="M 44.03 0 L 1.5 2"/>'
                   '<use xlink:href="#m8f0c3d2a1e" x="60.26"/>'
                   '<g transform="translate(60.260071 39.891406) scale(0.015625 -0.015625)"><use x="63.62"/></g></svg>')
    assert figure_files.svg_size_px(out) == (544, 359)  # 1 pt = 4/3 px


def test_a_figure_is_shipped_larger_than_drawn():
    """Its natural size is FIGURE_ZOOM times the drawn one, the drawing (the viewBox) unchanged:
    the lightbox's full size has readable labels (issue 27)."""
    out = figure_files.trim_svg('<svg width="300pt" height="150pt" viewBox="0 0 300 150"><g/></svg>')
    assert out == '<svg width="450.00pt" height="225.00pt" viewBox="0 0 300 150"><g/></svg>'
    assert figure_files.svg_size_px(out) == (600, 300)


def test_figures_become_files_once_per_content(tmp_path):
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="30pt" height="15pt"><path d="M 0 0 L 1.123456 2"/></svg>'
    data = base64.b64encode(svg.encode()).decode()
    page = f'<p>a</p><img src="data:image/svg+xml;base64,{data}" alt="the plot"><img alt="again" src="data:image/svg+xml;base64,{data}">'
    out = figure_files.figures_as_files(page, "en/p2/", tmp_path, "docs/p2.en.md")
    files = list((tmp_path / "assets" / "figures").iterdir())
    assert len(files) == 1 and files[0].read_text() == svg.replace("1.123456", "1.12")
    rel = f"../../assets/figures/{files[0].name}"
    assert out == (f'<p>a</p><img src="{rel}" alt="the plot" loading="lazy" decoding="async" width="40" height="20">'
                   f'<img src="{rel}" alt="again" loading="lazy" decoding="async" width="40" height="20">')
    # the lightbox's link to the full-size figure points at the same file, not at a second copy inline
    linked = figure_files.figures_as_files(f'<a class="glightbox" href="data:image/svg+xml;base64,{data}">'
                                   f'<img src="data:image/svg+xml;base64,{data}" alt="x"></a>', "en/p2/", tmp_path, "x")
    assert linked.startswith(f'<a class="glightbox" href="{rel}"><img src="{rel}"') and "base64" not in linked


def test_a_tex_error_names_the_page_and_the_formula():
    if not (ROOT / "node_modules" / "mathjax").is_dir():
        pytest.skip("node_modules/mathjax missing (make setup)")
    with pytest.raises(Exception, match=r"(?s)docs/x.md: TeX error.*\$\\frac\{1\}\{\$: Missing close brace"):
        math_svg.typeset_page(r'<p><span class="arithmatex">\(\frac{1}{\)</span></p>', "docs/x.md")


def test_the_lightbox_script_waits_for_the_page():
    """mkdocs-glightbox's script blocks the first paint unless deferred; its start waits for it."""
    page = ('<head><script src="../assets/javascripts/glightbox.min.js"></script></head><body>'
            '<script id="init-glightbox">const lightbox = GLightbox({});\n</script></body>')
    out = page_weight.defer_glightbox(page)
    assert '<script src="../assets/javascripts/glightbox.min.js" defer></script>' in out
    assert ('<script id="init-glightbox">document.addEventListener("DOMContentLoaded", () => '
            '{const lightbox = GLightbox({});});</script>') in out
