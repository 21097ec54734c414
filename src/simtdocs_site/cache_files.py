"""Where the page-weight steps keep what they rendered, and how they write it.

Typeset formulas, drawn diagrams and trimmed figures live under ``.cache/page-weight/``
of the site's root, each file named by a hash of everything it depends on, so a warm build
runs neither node nor Chromium. The MkDocs plugin sets the root from its configuration
(:func:`configure`); by default it is the repository that holds ``mkdocs.yml``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from simtdocs.snippets import repo_root

ROOT: Path = repo_root()
CACHE: Path = ROOT / ".cache" / "page-weight"


def configure(root: Path, cache: Path | None = None) -> None:
    """Use ``root``'s ``node_modules`` and keep the files under ``cache`` (``root/.cache/page-weight``)."""
    global ROOT, CACHE
    ROOT = Path(root)
    CACHE = Path(cache) if cache is not None else ROOT / ".cache" / "page-weight"


def node_package_version(name: str) -> str:
    """The version of an npm package in the root's ``node_modules`` ("missing" without it)."""
    return _node_package_version(ROOT, name)


@functools.lru_cache(maxsize=None)
def _node_package_version(root: Path, name: str) -> str:
    try:
        return json.loads((root / "node_modules" / name / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "missing"


def write(path: Path, text: str) -> None:
    """Write a cache file whole (builds may run side by side, e.g. tests and `mkdocs serve`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]
