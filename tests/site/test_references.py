"""Sources are linked: every [text][key] of a page has a URL in includes/references.md, every URL
there is used and well formed, and each lecture has its own references section."""

import re

from simtdocs_site.fences import find_fences
from simtdocs.snippets import repo_root

ROOT = repo_root()
DEFINITION = re.compile(r"^\[([\w-]+)\]:\s+(\S+)\s*$", re.M)


def definitions() -> dict[str, str]:
    return dict(DEFINITION.findall((ROOT / "includes" / "references.md").read_text("utf-8")))


def used_keys() -> dict[str, set[str]]:
    """key -> pages that cite it as [text][key] (outside code)."""
    out: dict[str, set[str]] = {}
    for page in sorted((ROOT / "docs").rglob("*.md")):
        lines = page.read_text("utf-8").split("\n")
        code = set()
        for f in find_fences(lines):
            code.update(range(f.start, f.end + 1))
        prose = "\n".join(re.sub(r"`[^`]*`", "", ln) for i, ln in enumerate(lines) if i not in code)
        for key in re.findall(r"\]\[([\w-]+)\]", prose):
            out.setdefault(key, set()).add(page.name)
    return out


def test_every_cited_key_has_a_url_and_every_url_is_cited():
    defined, used = definitions(), used_keys()
    assert sorted(set(used) - set(defined)) == []  # an undefined key would print "[text][key]" as is
    assert sorted(set(defined) - set(used)) == []


def test_urls_are_https_and_pinned_where_the_text_pins_a_version():
    defined = definitions()
    assert all(url.startswith("https://") for url in defined.values()), defined
    assert all("/archive/12.9" in url for key, url in defined.items() if key.startswith("cg"))
    assert "/v0.26.0/" in defined["vllm-activation"] and defined["vllm-release"].endswith("/v0.26.0")


def test_each_lecture_has_a_references_section_in_both_languages():
    for page in ("p2/beyond.md", "p2/beyond.en.md", "exec-model.md", "exec-model.en.md"):
        text = (ROOT / "docs" / page).read_text("utf-8")
        section = re.search(r"^#{2,3} .*\{ #(?:further-reading|references) \}\n(.*?)(?=^#{1,3} |\Z)", text, re.M | re.S)
        assert section, page
        assert len(set(re.findall(r"\]\[([\w-]+)\]", section.group(1)))) >= 10, page
