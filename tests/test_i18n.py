"""Labels written once in English and translated by the gettext catalogs (simtdocs.i18n)."""

import pytest

from simtdocs import LABELS
from simtdocs.display import Table, show
from simtdocs_site.catalogs import problems
from simtdocs.display.recorder import Recorder, recording
from simtdocs.i18n import Listing, MissingTranslation, _, _n, language, set_language, translate


def test_every_label_has_a_translation_and_every_entry_a_use():
    assert problems() == []


def test_a_label_reads_in_the_language_being_rendered():
    with language("zh"):
        assert str(LABELS["sectors"]) == "sector 数"
    with language("en"):
        assert str(LABELS["sectors"]) == "sectors"
    assert LABELS["blocks"].pick("zh") == "线程块数"


def test_fields_are_filled_after_translating_and_may_be_labels():
    msg = _("{what}: {k}", what=LABELS["sectors"], k=4)
    assert msg.pick("en") == "sectors: 4"
    assert msg.pick("zh") == "sector 数: 4"  # the pattern itself has no entry: English punctuation


def test_fields_must_match_the_pattern():
    with pytest.raises(TypeError, match=r"fields \['s'\] but was given \[\]"):
        _("stride {s}")
    with pytest.raises(TypeError, match="needs the count as n="):
        _n("{k} sector", "{k} sectors", k=1)


def test_plural_forms_follow_the_count_in_english():
    assert [_n("{n} sector", "{n} sectors", n=k).pick("en") for k in (1, 2)] == ["1 sector", "2 sectors"]


def test_a_list_is_joined_the_way_the_language_joins_it():
    items = Listing([LABELS["blocks"], LABELS["warps"]])
    assert items.pick("en") == "blocks, warps"
    assert items.pick("zh") == "线程块数、warp 数"


def test_a_translation_may_equal_its_english(monkeypatch):
    from simtdocs import i18n

    class Catalog:
        _catalog = {"GPU": "GPU"}

    monkeypatch.setattr(i18n, "catalogs", lambda lang: (Catalog(),))
    with language("zh", strict=True):
        assert str(_("GPU")) == "GPU"  # found, not missing, though gettext() could not tell


def test_outside_the_site_a_missing_translation_falls_back_to_english():
    assert translate("a label nobody translated", "zh") == "a label nobody translated"
    set_language("zh")
    try:
        assert str(LABELS["warps"]) == "warp 数"
    finally:
        set_language("en")


def test_on_the_site_a_missing_translation_fails_the_block():
    with pytest.raises(MissingTranslation, match="no zh translation of 'a label nobody translated'"):
        with recording(Recorder()):
            show(Table([(1,)], [_("a label nobody translated")]))


def test_on_the_site_str_of_a_label_is_an_error():
    with pytest.raises(TypeError, match="same text would appear on the Chinese and the English page"):
        with recording(Recorder()):
            print(f"{LABELS['warps']}")


def test_one_run_renders_both_languages():
    rec = Recorder()
    with recording(rec):
        show(Table([(LABELS["sectors"], 12)], [_("Counter"), _("Value")]))
    assert "| 计数器 | 值 |" in rec.output("zh")[0][1]
    assert "| sectors | 12 |" in rec.output("en")[0][1]
