"""One term per concept: the pages use the glossary's forms, and the check finds the others."""

from simtdocs.docs.terms import TERMS, check, check_page, terminology_table


def test_no_page_uses_a_variant_term():
    assert [str(f) for f in check()] == []


def test_the_check_finds_variants_but_not_glosses_code_or_links():
    zh = (
        "# 标题 · English subtitle { #t }\n\n"
        "按 Little 定律，尾部效应让 kernel 的最后一波不满；`kernel` 和 [链接](a.md#kernel) 不算。\n\n"
        "内核（kernel）第一次出现时可以附英文；sector（扇区）同理。\n\n"
        "```python\nkernel = 1  # 代码里的 kernel 不算\n```\n"
    )
    found = {(f.line, f.variant) for f in check_page(zh, "a.md")}
    assert found == {(1, "# 标题 · English subtitle { #t }"), (3, "Little 定律"), (3, "尾部效应"), (3, "kernel")}
    en = "Threads run in lockstep; SM utilization drops. The Chinese word 扇区 is fine here.\n"
    assert {f.variant for f in check_page(en, "a.en.md")} == {"lockstep", "utilization"}


def test_the_glossary_table_lists_every_term_and_its_variants():
    table = terminology_table()
    assert len(table.rows) == len(TERMS)
    rows = {row[1]: row for row in table.rows}
    assert rows["Little's law"][0] == "利特尔定律" and "Little 定律" in rows["Little's law"][2]
    assert rows["thread"][2] == "–"
