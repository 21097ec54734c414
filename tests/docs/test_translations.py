"""Every page and its translation share anchors, code blocks and glued names."""

from simtdocs.docs.translations import check


def test_every_page_matches_its_translation():
    problems = {r.page: r.problems for r in check() if r.problems}
    assert problems == {}


def test_a_drifted_translation_is_reported(tmp_path):
    (tmp_path / "a.md").write_text(
        "# 标题 { #top }\n\n```python\nx = 1\n```\n\n值 {{ x }}\n", encoding="utf-8")
    (tmp_path / "a.en.md").write_text(
        "# Title { #title }\n\n```python\nx = 2\n```\n\nvalue {{ y }}\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# 只有中文\n", encoding="utf-8")
    reports = {r.page: r.problems for r in check(tmp_path)}
    assert reports["b.md"] == ["no English page"]
    a = " | ".join(reports["a.md"])
    assert "heading anchors differ: only zh ['top'], only en ['title']" in a
    assert "python blocks differ" in a
    assert "glued names differ: only zh ['x'], only en ['y']" in a
