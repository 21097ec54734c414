"""Author mistakes (issue 17): each probe page either renders right or fails with a
message that names ``docs/<page>.md:<line>``; none builds with a wrong page.

The probes go through :class:`simtdocs_site.executor.Site`, the code path of the mkdocs
hook (``test_a_mistake_fails_the_real_strict_build`` shows the hook turns such an error
into a failed ``mkdocs build --strict``).
"""

from __future__ import annotations

import re
import textwrap

import pytest

from probe_site import build_probe_site
from simtdocs_site import executor


def page(md: str) -> str:
    return textwrap.dedent(md).lstrip("\n")


@pytest.fixture
def site(tmp_path):
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "bad.py").write_text(
        "# --8<-- [start:ok]\nA = 1\n# --8<-- [end:ok]\n# --8<-- [start:boom]\ndef boom():\n    return 1 / 0\n"
        "# --8<-- [end:boom]\n", encoding="utf-8")
    return executor.Site(tmp_path, cache_dir=tmp_path / ".cache" / "blocks", workers=0, env="test")


def render(site, md, lang="zh", name="docs/m.md"):
    site.prepare({name: page(md)})
    return site.render(name, lang)


def fails(site, md, where, *fragments, name="docs/m.md"):
    with pytest.raises(executor.BlockError) as err:
        render(site, md, name=name)
        render(site, md, "en", name=name)
    msg = str(err.value)
    assert msg.startswith(where) or f"\n{where}" in msg, msg
    for f in fragments:
        assert f in msg, msg
    return msg


# -- printed text cannot change the rest of the page ------------------------------------


def test_print_after_a_table_is_its_own_paragraph(site):
    out = render(site, """
        ```python
        from simtdocs.display import Table, show
        show(Table([[1, 2]], ["a", "b"]))
        print("after the table")
        ```
        """)
    assert "| 1 | 2 |\n\nafter the table\n" in out


def test_printed_unclosed_html_is_an_error(site):
    fails(site, """
        # Page { #page }

        ```python
        print("<div class='note'>")
        ```

        ## Next { #next }
        """, "docs/m.md:3", "<div> is never closed")


def test_printed_unclosed_fence_is_an_error(site):
    fails(site, """
        ```python
        print("```text")
        print("no end")
        ```
        """, "docs/m.md:1", "never closed")


# -- language ------------------------------------------------------------------------------


@pytest.mark.parametrize("line", ['print(_("warps"))', 'x = f"{_(\'warps\')}"', 'str(_("warps"))'])
def test_text_of_a_label_while_the_block_runs_is_an_error(site, line):
    fails(site, f"""
        ```python
        from simtdocs.display import _
        {line}
        ```
        """, "docs/m.md:3", "show(_(...))")


def test_show_and_glue_and_figure_labels_follow_the_language(site):
    md = """
        Word {{ w }}.

        ```python
        from simtdocs.display import _, glue, show
        show(_("shared wavefronts"))
        glue("w", _("warps"))
        ```
        """
    zh, en = render(site, md, "zh"), render(site, md, "en")
    assert "\n\n共享内存 wavefront\n" in zh and "\n\nshared wavefronts\n" not in zh and zh.startswith("Word warp 数.")
    assert "\n\nshared wavefronts\n" in en and "\n\n共享内存 wavefront\n" not in en and en.startswith("Word warps.")


# -- glue ----------------------------------------------------------------------------------


@pytest.mark.parametrize("second, words", [(2, "another value"), (1, "the same value")])
def test_the_same_name_glued_twice_names_both_lines(site, second, words):
    fails(site, f"""
        Value {{{{ n }}}}.

        ```python
        from simtdocs.display import glue
        glue("n", 1)
        ```

        ```python
        from simtdocs.display import glue
        glue("n", {second})
        ```
        """, "docs/m.md:10", f"again, with {words}: already glued at docs/m.md:5")


def test_glue_twice_in_one_block_is_an_error(site):
    fails(site, """
        ```python
        from simtdocs.display import glue
        glue("n", 1)
        glue("n", 2)
        ```
        """, "docs/m.md:4", "twice in one block")


MATH = """
    Inline $n = {{ big }}$, share $p = {{ share }}$, TeX $x_{{k}}$ and $$\\mathbf{{v}}$$ stay.

    $$
    N = {{ big }} \\quad y_{{i}}
    $$

    Text {{ big }}, code `{{ big }}`, comment <!-- {{ nope }} -->.

    ~~~console
    $ echo {{ nope }}
    ~~~

    ```text
    {{ nope }}
    ```

        {{ nope }} in indented code

    !!! note "n"
        In a note {{ big }}.

    | name | value |
    |:--|--:|
    | pipe | {{ pipe }} |

    ```python
    from simtdocs.display import glue
    glue("big", 2048)
    glue("share", 0.25, ".0%")
    glue("pipe", "a|b")
    ```
    """


def test_glue_in_math_code_comments_and_tables(site):
    out = render(site, MATH)
    assert r"Inline $n = 2{,}048$, share $p = 25\%$, TeX $x_{{k}}$ and $$\mathbf{{v}}$$ stay." in out
    assert r"N = 2{,}048 \quad y_{{i}}" in out
    assert "Text 2,048, code `{{ big }}`, comment <!-- {{ nope }} -->." in out
    assert "$ echo {{ nope }}" in out and "\n{{ nope }}\n" in out and "    {{ nope }} in indented code" in out
    assert "    In a note 2,048." in out
    assert r"| pipe | a\|b |" in out


def test_a_misspelt_glue_name_in_math_still_fails(site):
    fails(site, """
        Math $n = {{ bgi }}$.

        ```python
        from simtdocs.display import glue
        glue("big", 2048)
        ```
        """, "docs/m.md:1", "{{ bgi }} has no glued value", "known: big")


def test_glue_in_a_heading_needs_an_explicit_anchor(site):
    md = """
        ## Speed-up of {{ s }}ANCHOR

        ```python
        from simtdocs.display import glue
        glue("s", 3)
        ```
        """
    fails(site, md.replace("ANCHOR", ""), "docs/m.md:1", "explicit anchor")
    assert render(site, md.replace("ANCHOR", " { #speed-up }")).startswith("## Speed-up of 3 { #speed-up }")


def test_a_float_without_format_is_never_scientific(site):
    out = render(site, """
        {{ a }} {{ b }} {{ c }}

        ```python
        from simtdocs.display import glue
        glue("a", 12345.6)
        glue("b", 0.000123456)
        glue("c", 2.50)
        ```
        """)
    assert out.startswith("12,346 0.0001235 2.5\n")


# -- block semantics: the site does what pytest-codeblocks does --------------------------------


def test_cont_on_the_first_block_is_an_error(site):
    fails(site, """
        Text.

        <!--pytest-codeblocks:cont-->

        ```python
        x = 1
        ```
        """, "docs/m.md:3", "pytest-codeblocks")


def test_cont_after_a_skipped_block_is_skipped_and_skipif_false_runs(site):
    out = render(site, """
        <!--pytest.mark.skip(reason="GPU only")-->

        ```python
        raise SystemExit("must not run")
        ```

        <!--pytest-codeblocks:cont-->

        ```python
        raise SystemExit("must not run either")
        ```

        <!--pytest.mark.skipif(False, reason="always runs")-->

        ```python
        print("ran")
        ```

        <!--pytest-codeblocks:importorskip(no_such_module_here)-->

        ```python
        raise SystemExit("skipped: module missing")
        ```
        """)
    assert "\n\nran\n" in out


def test_xfail_is_refused(site):
    fails(site, """
        <!--pytest.mark.xfail-->

        ```python
        1 / 0
        ```
        """, "docs/m.md:3", "xfail")


# -- display objects refuse bad input ----------------------------------------------------------


@pytest.mark.parametrize("call, fragment", [
    ('Table([[1, 2], [3]], ["a", "b"])', "row 1 has 1 cells for 2 columns"),
    ('Table([[1, 2]], ["a", "b"], fmt=[","])', "fmt has 1 entries for 2 columns"),
    ('Table([[1, 2]], ["a", "b"], align="l")', "align must be one of l/r/c per column"),
    ('Figure(lambda: None)', "alt text"),
    ('Figure(lambda: None, alt="plot")', "alt text"),
    ('show(Figure(lambda: None, alt=_("sectors")))', "draw() must return a matplotlib figure, got None"),
    ('show(object())', "show() cannot put a object on the page"),
])
def test_bad_display_input_is_an_error_at_its_line(site, call, fragment):
    fails(site, f"""
        ```python
        from simtdocs.display import Figure, Table, _, show
        {call}
        ```
        """, "docs/m.md:3", fragment)


def test_html_objects_and_arrays_are_shown_faithfully(site):
    out = render(site, """
        ```python
        import numpy as np
        from simtdocs.display import show

        class Html:
            def _repr_html_(self):
                return "<b>bold</b>"

        show(Html())
        show(np.arange(4))
        ```
        """)
    assert "\n\n<b>bold</b>\n\n```text\n[0, 1, 2, 3]\n```\n" in out


# -- every error names the page (or snippet) and line ----------------------------------------


def test_a_failing_draw_names_the_line_in_the_block(site):
    fails(site, """
        ```python
        from simtdocs.display import Figure, _, figure, show

        def draw():
            if str(_("warps")) == "warps":
                raise ValueError("bad axis")
            return figure()[0]

        show(Figure(draw, alt=_("sectors")))
        ```
        """, "docs/m.md:6", "ValueError: bad axis", "docs/m.md:9: show(Figure",
          "while rendering the English version")


def test_an_error_inside_a_snippet_names_the_snippet_and_the_include(site):
    fails(site, """
        # T { #t }

        ```python
        --8<-- "snippets/bad.py:boom"
        boom()
        ```
        """, "snippets/bad.py:6 (included at docs/m.md:4)", "ZeroDivisionError", "docs/m.md:5: boom()")


def test_an_error_only_in_the_english_page_names_the_english_file(site):
    zh = page("""
        ```python
        x = 1
        ```
        """)
    en = page("""
        ```python
        x = 1 / 0
        ```
        """)
    with pytest.raises(executor.BlockError, match=r"^docs/m\.en\.md:2: code block failed: ZeroDivisionError"):
        site.prepare({"docs/m.md": zh, "docs/m.en.md": en})


def test_a_missing_snippet_names_the_page_line(site):
    fails(site, """
        ```python
        --8<-- "snippets/nope.py"
        ```
        """, "docs/m.md:1", "snippets/nope.py")


# -- guard rails ------------------------------------------------------------------------------


def test_a_block_past_its_time_limit_fails_with_its_line(tmp_path):
    slow = executor.Site(tmp_path, cache_dir=tmp_path / "c", workers=1, limit=1, env="t")
    with pytest.raises(executor.BlockError) as err:
        slow.prepare({"docs/m.md": page("""
            # T { #t }

            ```python
            import time
            time.sleep(30)
            ```
            """)})
    assert re.match(r"docs/m\.md:5: code block failed: the block ran longer than its time limit of 1 s", str(err.value))


def test_blocks_run_in_the_repository_root(site):
    (site.root / "data.txt").write_text("from the root\n", encoding="utf-8")
    out = render(site, """
        ```python
        print(open("data.txt").read().strip())
        ```
        """)
    assert "\n\nfrom the root\n" in out


def test_a_mistake_fails_the_real_strict_build(tmp_path):
    proc, _ = build_probe_site(tmp_path, {"index": "# T { #t }\n\nValue {{ missing }}.\n"})
    assert proc.returncode != 0
    assert "docs/index.md:3: {{ missing }} has no glued value" in proc.stdout + proc.stderr


def test_a_string_skipif_condition_is_refused_as_pytest_codeblocks_cannot_evaluate_it(site):
    fails(site, """
        <!--pytest.mark.skipif("sys.platform == 'win32'", reason="x")-->

        ```python
        x = 1
        ```
        """, "docs/m.md:3", "string condition")
