"""Every page and its translation share anchors, code blocks and glued names."""

from simtdocs_site.translations import check


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


def test_anchors_are_compared_as_the_site_renders_them(tmp_path):
    # No explicit id: the Chinese heading gets an empty slug, the English one "speed-up".
    (tmp_path / "c.md").write_text("# 页 { #page }\n\n## 加速比\n\n```python\n# ## not a heading\n```\n", encoding="utf-8")
    (tmp_path / "c.en.md").write_text("# Page { #page }\n\n## Speed-up\n\n```python\n# ## not a heading\n```\n",
                                      encoding="utf-8")
    (tmp_path / "d.md").write_text("# 页 { #page }\n\n## 加速比 { #speed-up }\n", encoding="utf-8")
    (tmp_path / "d.en.md").write_text("# Page { #page }\n\n## Speed-up\n", encoding="utf-8")
    reports = {r.page: r.problems for r in check(tmp_path)}
    assert reports["c.md"] and "only en ['speed-up']" in reports["c.md"][0]
    assert reports["d.md"] == []  # the slug of "Speed-up" is the explicit id of the Chinese heading


def test_the_report_covers_the_label_catalogs_too(capsys):
    from simtdocs_site.translations import main

    assert main() == 0
    assert "ok       labels (src/simtdocs/locale/zh/LC_MESSAGES/*.po)" in capsys.readouterr().out
