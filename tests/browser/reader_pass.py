"""The reader's checks (``reader_checks.js``) run in a page that is open already: by the
visit of every page at 1280 px (``conftest.Visitor``, which also runs axe-core there) and by
the reader's own pass at 390 px (``test_reader.ReaderVisits``)."""

from __future__ import annotations

from pathlib import Path

CHECKS_JS = Path(__file__).with_name("reader_checks.js").read_text(encoding="utf-8")
SCHEMES = (("light", "default"), ("dark", "slate"))  # (prefers-color-scheme, Material's scheme)


def run_reader_checks(tab, lang: str, scheme: str) -> dict:
    """What a reader would stumble on in the page as ``tab`` shows it now, in ``scheme``
    (every check in the light scheme; in the dark one those a scheme could change)."""
    material = dict(SCHEMES)[scheme]
    found = tab.evaluate(CHECKS_JS, {"lang": lang, "width": tab.viewport_size["width"], "all": scheme == "light"})
    if found["scheme"] != material:  # the checks ran in the scheme they claim
        found["clipped"].append(f"the page stayed in scheme {found['scheme']!r}, not {material!r}")
    return found
