"""Highlighted code remembered between pages and builds (simtdocs_site.highlight_cache)."""

import markdown

from simtdocs_site import highlight_cache

PAGE = "```python\nx = blk.load(a, i)  # one load\n```\n\nText `inline` code.\n"


def render() -> str:
    return markdown.markdown(PAGE, extensions=["pymdownx.highlight", "pymdownx.superfences", "pymdownx.inlinehilite"])


def test_a_block_is_highlighted_once_and_served_the_same(tmp_path, monkeypatch):
    from pymdownx.highlight import Highlight

    monkeypatch.setattr(Highlight, "highlight", Highlight.highlight)  # put back whatever was there after
    before = render()  # whatever is installed already: the HTML must not change
    highlight_cache._memory.clear()
    highlight_cache.install(tmp_path)
    calls = []
    original = Highlight.highlight.simtdocs_original

    def counting(self, *args, **kwargs):
        calls.append(args[0])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Highlight.highlight, "simtdocs_original", counting)
    highlight_cache.install(tmp_path)  # idempotent: wraps the counting original
    first, second = render(), render()
    assert first == second == before
    assert [c for c in calls if "blk.load" in c] == ["x = blk.load(a, i)  # one load"]  # once, then from memory
    entries = list(tmp_path.glob("*/*.html"))
    assert len(entries) == 1 and "blk" in entries[0].read_text()

    highlight_cache._memory.clear()  # a later build: read from disk, not highlighted again
    assert render() == before and len([c for c in calls if "blk.load" in c]) == 1

    entries[0].write_bytes(b"\xff\xfe broken")  # a damaged entry is recomputed, never shown
    highlight_cache._memory.clear()
    assert render() == before and len([c for c in calls if "blk.load" in c]) == 2
