"""A small two-language site for probe pages: the real plugin, none of the lectures.

``build_probe_site(tmp_path, {"index": md, ...})`` writes each page in Chinese and
English (the same text, or ``(zh, en)``), builds it strictly with the site's own plugin
(the executor and the notebooks; the post-processing steps off) and returns the finished
process and the site folder.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from site_build import run_mkdocs

ROOT = Path(__file__).resolve().parents[2]

CONFIG = """
site_name: probe
docs_dir: docs
strict: true
theme:
  name: material
  language: zh
plugins:
  - search
  - i18n:
      docs_structure: suffix
      fallback_to_default: false
      languages:
        - locale: zh
          default: true
          name: 中文
          build: true
        - locale: en
          name: English
          build: true
  - simtdocs:
      numbering: false
      page_weight: false
      language_marks: false
      search_per_language: false
markdown_extensions:
  - attr_list
  - md_in_html
  - tables
  - toc:
      permalink: true
  - admonition
  - pymdownx.arithmatex:
      generic: true
  - pymdownx.superfences
  - pymdownx.snippets:
      base_path: [!relative $config_dir]
      check_paths: true
"""


def build_probe_site(tmp_path: Path, pages: dict, extra_files: dict | None = None):
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    (tmp_path / "mkdocs.yml").write_text(CONFIG, encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, body in pages.items():
        zh, en = body if isinstance(body, tuple) else (body, body)
        (docs / f"{name}.md").write_text(textwrap.dedent(zh).lstrip("\n"), encoding="utf-8")
        (docs / f"{name}.en.md").write_text(textwrap.dedent(en).lstrip("\n"), encoding="utf-8")
    for rel, text in (extra_files or {}).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    site = tmp_path / "site"
    proc = run_mkdocs("build", "--strict", "-d", str(site), cwd=tmp_path, timeout=600)
    return proc, site
