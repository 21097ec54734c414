"""The author's loop (issue 11): output fixed when the block runs, a persistent block
cache, a simulator change picked up, a reader API without the build tools."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from probe_site import build_probe_site
from simtdocs_site import executor

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
# Probe { #probe }

The box held {{ held }}.

```python
from simtdocs.display import _, glue, show

class Box:
    def __init__(self, v):
        self.v = v

    def _repr_markdown_(self):
        return f"value={self.v}"

box = Box(1)
show(box)
glue("held", box.v)
show(_("warps"))
show(f"`__name__` is `{__name__}`")
```

<!--pytest-codeblocks:cont-->

```python
box.v = 2
```
"""


def test_probe_page_shows_what_the_block_computed_in_both_languages(tmp_path):
    proc, site = build_probe_site(tmp_path, {"index": PROBE})
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    for page, label, other in ((site / "index.html", "warp 数", "warps"), (site / "en" / "index.html", "warps", "warp 数")):
        html = page.read_text(encoding="utf-8")
        assert "value=1" in html and "value=2" not in html
        assert "The box held 1." in html
        assert "<code>__name__</code> is <code>__main__</code>" in html
        assert f"<p>{label}</p>" in html and f"<p>{other}</p>" not in html
    # the results are on disk, as JSON, for the next build
    entries = list((tmp_path / ".cache" / "blocks").glob("*.json"))
    assert len(entries) == 2
    assert all(json.loads(p.read_text(encoding="utf-8"))["out"]["zh"] is not None for p in entries)


def page(md: str) -> str:
    return textwrap.dedent(md).lstrip("\n")


@pytest.fixture
def snippet_site(tmp_path):
    """A repository-like folder with one snippet file, and a Site on it."""
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "s.py").write_text(
        "# --8<-- [start:a]\nA = 1\n# --8<-- [end:a]\n# --8<-- [start:b]\nB = 10\n# --8<-- [end:b]\n",
        encoding="utf-8")
    md = page(
        """
        ```python
        --8<-- "snippets/s.py:a"
        print(A)
        ```

        <!--pytest-codeblocks:cont-->

        ```python
        print(A + 1)
        ```

        ```python
        --8<-- "snippets/s.py:b"
        print(B)
        ```
        """
    )

    def make(env="e1"):
        return executor.Site(tmp_path, cache_dir=tmp_path / ".cache" / "blocks", workers=0, env=env)

    return tmp_path, md, make


def test_second_build_runs_nothing_and_shows_the_same(snippet_site):
    root, md, make = snippet_site
    first = make()
    first.prepare({"docs/p.md": md})
    assert first.stats["ran"] == 3
    again = make()
    again.prepare({"docs/p.md": md})
    assert again.stats["ran"] == 0
    assert again.render("docs/p.md", "en") == first.render("docs/p.md", "en")
    assert "\n\n2\n" in again.render("docs/p.md", "zh")


def test_a_changed_snippet_reruns_only_the_blocks_that_include_it(snippet_site):
    root, md, make = snippet_site
    make().prepare({"docs/p.md": md})
    s = root / "snippets" / "s.py"
    s.write_text(s.read_text().replace("A = 1", "A = 5"), encoding="utf-8")
    site = make()
    site.prepare({"docs/p.md": md})
    assert site.stats["ran"] == 2  # the block including section a and its cont successor
    out = site.render("docs/p.md", "en")
    assert "\n\n5\n" in out and "\n\n6\n" in out and "\n\n10\n" in out


def test_a_changed_simulator_reruns_everything_and_stale_entries_are_pruned(snippet_site):
    root, md, make = snippet_site
    make("old").prepare({"docs/p.md": md})
    site = make("new")
    site.prepare({"docs/p.md": md}, prune=True)
    assert site.stats["ran"] == 3 and site.stats["pruned"] == 3
    assert len(list((root / ".cache" / "blocks").glob("*.json"))) == 3
    # the real key covers the simulator source and the drawing libraries
    a = executor.environment_key(ROOT)
    assert a == executor.environment_key(ROOT) and len(a) == 20


def test_a_corrupt_or_partial_entry_is_ignored(snippet_site):
    root, md, make = snippet_site
    make().prepare({"docs/p.md": md})
    files = sorted((root / ".cache" / "blocks").glob("*.json"))
    files[0].write_text('{"out": {"zh": [["print", "WRONG"]]', encoding="utf-8")  # cut short
    files[1].write_text(json.dumps({"key": "other", "out": {"zh": [], "en": []}, "glue": {}}), encoding="utf-8")
    site = make()
    site.prepare({"docs/p.md": md})
    assert site.stats["ran"] >= 2
    assert "WRONG" not in site.render("docs/p.md", "zh")


def test_the_reader_api_needs_no_build_tools():
    # Every build tool is made unimportable; the reader API and snippet expansion still work.
    code = textwrap.dedent(
        """
        import sys
        class NoBuildTools:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {"markdown", "mkdocs", "pymdownx", "pytest", "pytest_codeblocks",
                                          "jupytext", "mkdocs_jupyter", "jieba", "IPython"}:
                    raise ImportError("build tool: " + name)
        sys.meta_path.insert(0, NoBuildTools())
        from simtdocs.display import Figure, Table, _, expand_snippets, figure, glue, show
        show(Table([[_("warps"), 12345.6]], ["a", "b"]))
        glue("x", 3)
        print(expand_snippets('--8<-- "snippets/p2/01_cuda_programming_model.py:kernel"').split("(")[0])
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "| warps | 12,346 |" in proc.stdout
    assert "def vector_add" in proc.stdout


def test_name_is_main_under_pytest_codeblocks_too():
    probe = ROOT / "tests" / "site" / "probes" / "name_main.md"
    proc = subprocess.run([sys.executable, "-m", "pytest", "--codeblocks", "-q", "-p", "no:cacheprovider",
                           str(probe.relative_to(ROOT))], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "2 passed" in proc.stdout


def test_markers_mean_the_same_on_the_site_and_under_pytest():
    probe = ROOT / "tests" / "site" / "probes" / "markers.md"
    rel = probe.relative_to(ROOT).as_posix()
    proc = subprocess.run([sys.executable, "-m", "pytest", "--codeblocks", "-v", "-p", "no:cacheprovider", rel],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    pytest_says = {int(m[0]): m[1] for m in __import__("re").findall(r"::line (\d+) (PASSED|SKIPPED|FAILED)", proc.stdout)}
    site_says = {c.fences[0].start + 1: "PASSED" if c.run else "SKIPPED"
                 for c in executor.page_chains(probe.read_text(encoding="utf-8"), rel) if c.syntax == "python"}
    assert pytest_says == site_says, proc.stdout[-3000:]
    assert sorted(pytest_says.values()).count("PASSED") == 4


def test_an_edited_module_is_used_by_the_next_build_without_a_restart(tmp_path):
    # `mkdocs serve` keeps its process; the blocks run in fresh worker processes, and a
    # changed simulator changes the cache key, so the next build imports the new code.
    (tmp_path / "src" / "simtdocs").mkdir(parents=True)
    module = tmp_path / "src" / "simtdocs" / "probe_mod.py"
    module.write_text("VALUE = 1\n", encoding="utf-8")
    md = page(
        """
        ```python
        import sys
        sys.path.insert(0, "src/simtdocs")  # the working directory is the repository root
        import probe_mod
        print(f"value={probe_mod.VALUE}")
        ```
        """
    )

    def build_once():
        site = executor.Site(tmp_path, cache_dir=tmp_path / ".cache" / "blocks", workers=1)
        site.prepare({"docs/p.md": md})
        return site.render("docs/p.md", "en")

    assert "value=1" in build_once()
    module.write_text("VALUE = 2\n", encoding="utf-8")
    assert "value=2" in build_once()
