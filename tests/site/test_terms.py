"""One term per concept: the pages use the glossary's forms, and the check finds the others."""

from simtdocs_site.terms import TERMS, check, check_page, terminology_table


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
    assert rows["thread"][2] == rows["thread"][3] == "–"
    # each language's variants in its own column: "kernel" is avoided on the Chinese pages only
    assert list(rows["kernel"][2:]) == ["kernel", "–"]
    assert rows["wave quantisation"][3] == "wave quantization"
    for zh, en, zh_variants, en_variants in TERMS:  # no form is its own language's variant
        assert zh.split("（")[0] not in zh_variants and en not in en_variants


def test_a_chinese_page_glosses_a_term_with_its_english_form():
    """Issue 27: the Chinese lectures glossed 波量化 as "wave quantization", a form the table lists as not used."""
    found = {f.variant for f in check_page("尾效应（tail effect，也叫 wave quantization）。\n", "a.md")}
    assert found == {"wave quantization"}
    assert check_page("也叫波量化（wave quantisation）。\n", "a.md") == []
