"""The build-time execution of ```python fences (simtdocs_site.executor)."""

from __future__ import annotations

from pathlib import Path

import textwrap

import pytest

from simtdocs.display import Figure, Table, _, figure, glue, show
from simtdocs_site import executor
from probe_site import build_probe_site
from simtdocs.display.recorder import svg_bytes

ROOT = Path(__file__).resolve().parents[2]


def page(md: str) -> str:
    return textwrap.dedent(md).lstrip("\n")


def test_output_goes_under_the_fence_at_its_indentation():
    md = page(
        """
        !!! note "n"
            ```python
            print("**hi**")
            ```

        after
        """
    )
    out = executor.process(md, "docs/t.md", "en")
    assert "    ```python\n    print(\"**hi**\")\n    ```\n\n    **hi**\n" in out


def test_fresh_namespace_unless_cont_and_skip_markers():
    md = page(
        """
        ```python
        x = 41
        ```

        <!--pytest-codeblocks:cont-->

        ```python
        print(x + 1)
        ```

        <!--pytest.mark.skip(reason="GPU only")-->

        ```python
        raise SystemExit("must not run")
        ```

        ```cuda
        __global__ void k() {}
        ```
        """
    )
    out = executor.process(md, "docs/t.md", "en")
    assert "\n42\n" in out
    fresh = page(
        """
        ```python
        y = 1
        ```

        ```python
        print(y)
        ```
        """
    )
    with pytest.raises(executor.BlockError, match=r"docs/t.md:6: code block failed: NameError"):
        executor.process(fresh, "docs/t.md", "en")


def test_error_names_page_and_line_also_inside_snippet():
    md = page(
        """
        # title

        text

        ```python
        a = 1
        b = a / 0
        ```
        """
    )
    with pytest.raises(executor.BlockError) as err:
        executor.process(md, "docs/p.md", "en")
    assert str(err.value).startswith("docs/p.md:7: code block failed: ZeroDivisionError")


def test_glue_renders_per_language_and_undefined_name_fails():
    md = page(
        """
        Ratio {{ r }}, word {{ w }}, code `{{ r }}` stays.

        ```python
        from simtdocs.display import _, glue
        glue("r", 0.875, ".1%")
        glue("w", _("warps"))
        ```
        """
    )
    assert executor.process(md, "docs/g.md", "zh").startswith("Ratio 87.5%, word warp 数, code `{{ r }}` stays.")
    assert executor.process(md, "docs/g.md", "en").startswith("Ratio 87.5%, word warps,")
    with pytest.raises(executor.BlockError, match=r"docs/g.md:1: \{\{ nope \}\} has no glued value"):
        executor.process("See {{ nope }}.\n", "docs/g.md", "en")


def test_each_block_runs_once_for_both_languages():
    md = page(
        """
        ```python
        import itertools, builtins
        builtins._simt_runs = getattr(builtins, "_simt_runs", 0) + 1
        from simtdocs.display import Table, _, show
        show(Table([[_("warps"), 1234]], [_("Counter"), _("Value")]))
        ```
        """
    )
    import builtins

    builtins._simt_runs = 0
    zh = executor.process(md, "docs/c.md", "zh")
    en = executor.process(md, "docs/c.md", "en")
    assert builtins._simt_runs == 1
    assert "| 计数器 | 值 |" in zh and "| warp 数 | 1,234 |" in zh
    assert "| Counter | Value |" in en and "| warps | 1,234 |" in en


def test_show_outside_the_build_prints_english(capsys):
    show(_("warps"))
    show(Table([[1, 2.5]], ["a", _("blocks")]))
    out = capsys.readouterr().out
    assert "warps" in out and "| a | blocks |" in out
    assert glue("x", 3) is None


def draw():
    fig, ax = figure(figsize=(3, 2))
    ax.plot([0, 1, 2], [0, 1, 4])
    ax.set_xlabel(str(_("warps")))
    return fig


def test_svg_is_byte_identical_and_per_language():
    a = Figure(draw, alt=_("sectors"))
    b = Figure(draw, alt=_("sectors"))
    assert a.svg("zh") == b.svg("zh")
    assert a.svg("en") == b.svg("en")
    assert a.svg("zh") != a.svg("en")
    svg = a.svg("zh").decode()
    assert "<dc:date>" not in svg and "<text" not in svg  # no date, text drawn as paths
    html = a.render("en")
    assert html.startswith('<figure class="simt-figure"><img src="data:image/svg+xml;base64,') and 'alt="sectors"' in html


def test_chinese_glyphs_are_not_boxes():
    # A missing glyph makes matplotlib warn "Glyph ... missing from font(s)".
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        svg_bytes(draw())
    assert not [w for w in caught if "missing from font" in str(w.message)]


def test_a_failing_block_fails_the_real_build(tmp_path):
    body = "# T\n\ntext\n\n```python\nx = [1, 2]\nprint(x[5])\n```\n"
    proc, _ = build_probe_site(tmp_path, {"index": body})
    assert proc.returncode != 0
    log = proc.stdout + proc.stderr
    assert "docs/index.md:7: code block failed: IndexError" in log, log[-3000:]


def test_execute_page_gives_each_language_and_the_glue(tmp_path):
    md = page(
        """
        ```python
        from simtdocs.display import _, glue, show
        glue("w", _("warps"))
        show(_("Counter"))
        ```

        Word: {{ w }}.
        """
    )
    result = executor.execute_page(md, "docs/e.md", root=ROOT, cache_dir=tmp_path, workers=0)
    assert result.glue == {"w": {"zh": "warp 数", "en": "warps"}}
    assert result.markdown["en"].endswith("```\n\nCounter\n\n\nWord: warps.\n")
    assert result.markdown["zh"].endswith("```\n\n计数器\n\n\nWord: warp 数.\n")
    assert list(tmp_path.glob("*.json")), "the result is cached"


def test_the_markdown_extension_runs_the_blocks_and_reports_page_and_line(tmp_path):
    import markdown

    from simtdocs_site.markdown_extension import ExecuteExtension

    def convert(text):
        ext = ExecuteExtension(page="docs/t.md", root=str(ROOT), cache_dir=str(tmp_path), workers=0)
        return markdown.markdown(text, extensions=[ext, "tables"])

    md = page(
        """
        # T

        ```python
        from simtdocs.display import Table, glue, show
        glue("n", 1234)
        show(Table([[1, 2]], ["a", "b"]))
        ```

        n = {{ n }}
        """
    )
    out = convert(md)
    assert ">1</td>" in out and "<p>n = 1,234</p>" in out
    with pytest.raises(executor.BlockError, match=r"^docs/t\.md:6: code block failed: ZeroDivisionError"):
        convert(md.replace('show(Table([[1, 2]], ["a", "b"]))', "print(1 / 0)"))


def test_check_pages_runs_a_page_and_its_translation_and_names_the_line(tmp_path):
    """``python -m simtdocs_site.executor docs/p.md`` (make check): both files of the page,
    each in its language, glue included; the first mistake with its file and line."""
    docs = tmp_path / "docs"
    docs.mkdir()
    block = page(
        """
        ```python
        from simtdocs.display import glue
        glue("n", 1234)
        ```
        """
    )
    (docs / "p.md").write_text(block + "\n数目 {{ n }}。\n", encoding="utf-8")
    (docs / "p.en.md").write_text(block + "\nCount {{ n }}.\n", encoding="utf-8")

    def check(name):
        return executor.check_pages([str(docs / name)], root=tmp_path, cache_dir=tmp_path / "c", workers=0)

    assert check("p.md") == [] and check("p.en.md") == []
    (docs / "p.en.md").write_text(block + "\nCount {{ m }}.\n", encoding="utf-8")
    (problem,) = check("p.md")  # the Chinese file named, its English twin checked too
    assert problem.startswith("docs/p.en.md:") and "m" in problem
    assert check("q.md") == [f"no page at {docs / 'q.md'}"]
