"""The comments of visible code in the page's language (issue 27): translated when shown,
the code itself unchanged, a comment without a translation an error."""

from __future__ import annotations

import pytest

from simtdocs_site import comments


def _code_only(code: str, marker: str = "#") -> list[str]:
    lines = code.split("\n")
    out = []
    for line, col in zip(lines, comments._comment_starts(lines, marker)):
        kept = (line if col is None else line[:col]).rstrip()
        if kept:
            out.append(kept)
    return out


def test_comments_are_found_outside_strings_and_grouped_by_block():
    code = ('x = "# not a comment"  # a trailing one\n'
            "# two lines\n"
            "# of one comment\n"
            "y = '''\n# inside a string\n'''\n"
            "    # indented alone\n"
            "# --8<-- [start:part]\n"
            "# 已是中文\n")
    found = [(c.text, c.first, c.last, c.trailing) for c in comments.find(code)]
    assert found == [("a trailing one", 0, 0, True), ("two lines of one comment", 1, 2, False),
                     ("indented alone", 6, 6, False)]


def test_localize_replaces_the_comments_and_nothing_else(monkeypatch):
    monkeypatch.setattr(comments, "catalog", lambda lang: {
        "a trailing one": "行尾注释", "two lines of one comment": "两行\n注释"})
    code = 'x = "# kept"  # a trailing one\n    # two lines\n    # of one comment\n    y = 1\n'
    assert comments.localize(code, "zh") == 'x = "# kept"  # 行尾注释\n    # 两行\n    # 注释\n    y = 1\n'
    assert comments.localize(code, "en") == code
    with pytest.raises(comments.MissingCommentTranslation, match="^page.md:3: the comment 'left out'"):
        comments.localize("z = 2  # left out\n", "zh", "page.md:3")


def test_every_visible_block_reads_in_chinese_and_runs_the_same_code():
    """Every comment a Chinese reader sees has its translation in the catalog, and the
    translated block is the same code: only what follows a ``#`` outside strings moved."""
    blocks = comments.visible_code()
    assert len(blocks) > 100  # the pages' python blocks and the notebooks' code cells
    translated = 0
    for where, code, marker in blocks:
        zh = comments.localize(code, "zh", where, marker)
        assert _code_only(zh, marker) == _code_only(code, marker), where
        translated += zh != code
        for c in comments.find(zh, marker):  # code quoted in a comment ("if (i < n)") is the same in Chinese
            assert comments.catalog("zh").get(c.text) == c.text, f"{where}: {c.text!r} is still English"
    assert translated > 50
    shown_c = [where for where, code, marker in blocks if marker == "//" and comments.find(code, "//")]
    assert len(shown_c) >= 8, shown_c  # the pages' C fences, every one with comments to translate


def test_c_comments_are_found_outside_strings_and_characters():
    code = ('int i = 0;  // a trailing one\n'
            'printf("// not a comment %c", \'/\');\n'
            '// two lines\n'
            '// of one comment\n'
            '    // indented alone\n'
            '// --8<-- [start:part]\n')
    found = [(c.text, c.first, c.last, c.trailing) for c in comments.find(code, "//")]
    assert found == [("a trailing one", 0, 0, True), ("two lines of one comment", 2, 3, False),
                     ("indented alone", 4, 4, False)]
    with pytest.raises(comments.MissingCommentTranslation, match="k.cu: a /\\* \\*/ comment"):
        comments.localize("int x; /* old style */\n", "zh", "k.cu", "//")
